//! The runtime's only raw OS calls: shared-memory files and mappings. Each is a safe
//! function over `rustix` that returns `io::Result`.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;

use rustix::fs::{ftruncate, memfd_create, MemfdFlags};
use rustix::mm::{mmap, mmap_anonymous, munmap, MapFlags, ProtFlags};

/// Creates an anonymous shared-memory file of `len` bytes. Pages are allocated on first
/// touch, so a large `len` costs nothing until used; the file vanishes with its last
/// mapping, so a killed job leaves nothing behind.
pub(crate) fn shared_file(name: &str, len: usize) -> io::Result<OwnedFd> {
    let fd = memfd_create(name, MemfdFlags::CLOEXEC)?;
    ftruncate(&fd, len as u64)?;
    Ok(fd)
}

/// Opens another process's shared-memory file through `/proc` (same user required).
pub(crate) fn open_peer_file(pid: u32, fd: i32) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{pid}/fd/{fd}"))
}

/// A reserved, inaccessible range of address space, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Reservation {
    /// Start of the usable, aligned range.
    base: NonNull<u8>,
    len: usize,
    /// The whole mapping (alignment slack included), for `munmap`.
    raw: NonNull<u8>,
    raw_len: usize,
}

// SAFETY: the reservation is plain address space; sharing its address between threads
// is harmless, and all access to the memory behind it goes through atomics or the
// OpenSHMEM model's rules.
unsafe impl Send for Reservation {}
// SAFETY: as above; `&Reservation` only exposes the base address and length.
unsafe impl Sync for Reservation {}

impl Reservation {
    /// Reserves `len` bytes of address space starting at a multiple of `align` (a power
    /// of two); no memory is committed.
    pub(crate) fn new(len: usize, align: usize) -> io::Result<Reservation> {
        debug_assert!(align.is_power_of_two());
        let raw_len = len
            .checked_add(align)
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing cannot
        // alias any existing Rust object.
        let p = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                raw_len,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )?
        };
        let raw = NonNull::new(p.cast::<u8>()).expect("mmap never returns null on success");
        let skip = (raw.as_ptr() as usize).next_multiple_of(align) - raw.as_ptr() as usize;
        // SAFETY: `skip < align`, so the aligned start and `len` bytes after it lie inside
        // the `len + align` bytes just mapped.
        let base = unsafe { raw.add(skip) };
        Ok(Reservation {
            base,
            len,
            raw,
            raw_len,
        })
    }

    /// Start of the range.
    pub(crate) fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }

    /// Maps `len` bytes of `file` (from offset 0) read-write and shared at `offset` into
    /// the reservation, replacing the reserved pages there.
    pub(crate) fn map_shared(&self, offset: usize, len: usize, file: impl AsFd) -> io::Result<()> {
        assert!(
            offset.checked_add(len).is_some_and(|e| e <= self.len),
            "mapping [{offset}, +{len}) outside a reservation of {} bytes",
            self.len
        );
        // SAFETY: the target range lies inside our own reservation (checked above), which
        // holds no Rust objects; MAP_FIXED only replaces those reserved pages.
        unsafe {
            mmap(
                self.base.as_ptr().add(offset).cast(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED | MapFlags::FIXED,
                file,
                0,
            )?;
        }
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        // SAFETY: the range is ours from `new`; the runtime drops the reservation only at
        // finalize, after the last use of symmetric memory.
        unsafe {
            let _ = munmap(self.raw.as_ptr().cast(), self.raw_len);
        }
    }
}

/// This host's name, for topology.
pub(crate) fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// What decides whether two PEs can share memory, as one string: the host name, the
/// kernel's boot id (two machines, or containers on two machines, may share a name) and
/// the PID namespace (a PE maps a peer's memory through `/proc/<pid>/fd`, which only a
/// PE of the same PID namespace can open). None contains `#` or whitespace.
pub(crate) fn host_key() -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let pidns = std::fs::read_link("/proc/self/ns/pid")
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_graphic() && *c != '#' && *c != '=')
            .collect()
    };
    format!("{}#{}#{}", clean(&hostname()), clean(&boot), clean(&pidns))
}

/// The machine part of a [`host_key`]: the kernel's boot id, shared by every PE on the
/// machine's cores whatever its host name or namespaces.
pub(crate) fn machine_of(key: &str) -> &str {
    key.split('#').nth(1).unwrap_or(key)
}

/// The executable's writable data (`.data`, `.bss`) as `(start, len, offset from the
/// executable's first mapping)`, read from `/proc/self/maps`.
///
/// The executable's mappings are recognized by device and inode, not by path: a binary
/// replaced or deleted while it runs shows as "<path> (deleted)", which no path
/// comparison matches (PEs of one job then disagreed on whether they share globals).
pub(crate) fn executable_data() -> Option<(usize, usize, usize)> {
    use std::os::unix::fs::MetadataExt;
    let exe = std::fs::metadata("/proc/self/exe").ok()?;
    let (dev, ino) = (
        (rustix::fs::major(exe.dev()), rustix::fs::minor(exe.dev())),
        exe.ino(),
    );
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut base = None;
    let (mut start, mut end) = (0usize, 0usize);
    for line in maps.lines() {
        let m = MapsLine::parse(line)?;
        if m.dev == dev && m.inode == ino {
            base.get_or_insert(m.start);
            if m.perms == "rw-p" {
                if end == 0 {
                    start = m.start;
                }
                if end == 0 || m.start == end {
                    end = m.end;
                }
            }
        } else if end != 0 && m.start == end && m.inode == 0 && m.anonymous && m.perms == "rw-p" {
            end = m.end; // anonymous tail of .bss
        } else if end != 0 {
            break;
        }
    }
    (end > start).then(|| (start, end - start, start - base.unwrap_or(start)))
}

/// Maps now the read-only pages (code, constants) of the object this library's code lies in
/// (the C library, or the program the Rust API is linked into), unless they exceed `max`
/// bytes; returns how many bytes were mapped. Left to the first call of each routine,
/// each page of code costs a fault (2-5 us here): the first `shmem_quiet` of a job took
/// 16 us, against 3 once mapped. The pages are the file's, shared with every process
/// mapping it, so this costs page-table entries and, the first time on a node, a read.
pub(crate) fn prefault_own_code(max: usize) -> usize {
    let here = prefault_own_code as *const () as usize;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return 0;
    };
    let lines: Vec<MapsLine> = maps.lines().filter_map(MapsLine::parse).collect();
    let Some(own) = lines
        .iter()
        .find(|m| m.start <= here && here < m.end && m.inode != 0)
    else {
        return 0;
    };
    let readonly: Vec<(usize, usize)> = lines
        .iter()
        .filter(|m| m.dev == own.dev && m.inode == own.inode)
        .filter(|m| m.perms.starts_with('r') && m.perms.as_bytes().get(1) != Some(&b'w'))
        .map(|m| (m.start, m.end - m.start))
        .collect();
    let total: usize = readonly.iter().map(|r| r.1).sum();
    if total > max {
        return 0;
    }
    let mut mapped = 0;
    for (start, len) in readonly {
        // SAFETY: a whole mapping of this process as listed in /proc/self/maps, readable
        // and not writable; populating it changes no contents, only which pages are
        // present. Kernels before 5.14 refuse the advice, which leaves things as they were.
        let done = unsafe {
            rustix::mm::madvise(
                start as *mut std::ffi::c_void,
                len,
                rustix::mm::Advice::LinuxPopulateRead,
            )
        };
        if done.is_ok() {
            mapped += len;
        }
    }
    mapped
}

/// One line of `/proc/self/maps`: `start-end perms offset major:minor inode [path]`.
struct MapsLine<'a> {
    start: usize,
    end: usize,
    perms: &'a str,
    dev: (u32, u32),
    inode: u64,
    /// No path at all (not `[heap]`, `[stack]`...).
    anonymous: bool,
}

impl<'a> MapsLine<'a> {
    fn parse(line: &'a str) -> Option<Self> {
        let mut f = line.split_whitespace();
        let (range, perms, _offset, dev, inode) =
            (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
        let (a, b) = range.split_once('-')?;
        let (maj, min) = dev.split_once(':')?;
        Some(MapsLine {
            start: usize::from_str_radix(a, 16).ok()?,
            end: usize::from_str_radix(b, 16).ok()?,
            perms,
            dev: (
                u32::from_str_radix(maj, 16).ok()?,
                u32::from_str_radix(min, 16).ok()?,
            ),
            inode: inode.parse().ok()?,
            anonymous: f.next().is_none(),
        })
    }
}

/// Number of threads of this process (from `/proc/self/task`), if readable.
pub(crate) fn thread_count() -> Option<usize> {
    Some(std::fs::read_dir("/proc/self/task").ok()?.count())
}

/// Moves `[start, start + len)` of this process onto a new shared file with the same
/// contents, mapped at the same address, and returns the file.
///
/// Writes made by other threads between the copy and the remap would be lost, so this
/// must run while the process has one thread (the C face calls it from `shmem_init`).
pub(crate) fn share_in_place(name: &str, start: usize, len: usize) -> io::Result<OwnedFd> {
    use std::io::Write;
    let fd = shared_file(name, len)?;
    let mut f = File::from(fd.try_clone()?);
    // SAFETY: the range is our own readable, writable data mapping (from
    // `executable_data`), valid for `len` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(start as *const u8, len) };
    f.write_all(bytes)?;
    // SAFETY: MAP_FIXED replaces exactly the pages we just copied, with a shared view of
    // a file that holds the same bytes; every Rust object there keeps its value.
    unsafe {
        mmap(
            start as *mut _,
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED | MapFlags::FIXED,
            &fd,
            0,
        )?;
    }
    private_data_on_fork(start, len);
    Ok(fd)
}

/// The shared data range a forked child must get a private copy of (start, len).
static FORK_DATA: [std::sync::atomic::AtomicUsize; 2] = [
    std::sync::atomic::AtomicUsize::new(0),
    std::sync::atomic::AtomicUsize::new(0),
];

/// After `fork()` the child would share the globals with its parent (a `MAP_SHARED`
/// mapping survives fork): an atfork handler gives the child a private copy, as a plain
/// process has.
fn private_data_on_fork(start: usize, len: usize) {
    use std::sync::atomic::Ordering;
    static REGISTER: std::sync::Once = std::sync::Once::new();
    FORK_DATA[0].store(start, Ordering::Relaxed);
    FORK_DATA[1].store(len, Ordering::Relaxed);
    REGISTER.call_once(|| {
        // SAFETY: registers a handler that runs in the child only, where it touches just
        // the range recorded above (see `privatize_data_in_child`).
        let rc = unsafe { libc::pthread_atfork(None, None, Some(privatize_data_in_child)) };
        assert_eq!(rc, 0, "pthread_atfork failed");
    });
}

/// Runs in a forked child (one thread, async-signal-safe calls only): copies the shared
/// globals into fresh private memory and moves that over them in one `mremap`, so at no
/// moment do they read as anything but their values.
extern "C" fn privatize_data_in_child() {
    use std::sync::atomic::Ordering;
    let (start, len) = (
        FORK_DATA[0].load(Ordering::Relaxed),
        FORK_DATA[1].load(Ordering::Relaxed),
    );
    if len == 0 {
        return;
    }
    // SAFETY: `[start, start + len)` is the readable, writable data mapping that
    // `share_in_place` made; the child has one thread, so nothing writes it while it is
    // copied; `tmp` is a fresh mapping of `len` bytes, moved over the range (MREMAP_FIXED
    // unmaps the shared view atomically) and not used afterwards.
    unsafe {
        // Raw system calls: UCX, when loaded, patches libc's mmap/mremap with hooks of its
        // own, which must not run in a child forked from a PE with UCX threads.
        let tmp = libc::syscall(
            libc::SYS_mmap,
            std::ptr::null_mut::<libc::c_void>(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        ) as *mut libc::c_void;
        let moved = tmp != libc::MAP_FAILED && {
            std::ptr::copy_nonoverlapping(start as *const u8, tmp.cast::<u8>(), len);
            libc::syscall(
                libc::SYS_mremap,
                tmp,
                len,
                len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                start as *mut libc::c_void,
            ) as *mut libc::c_void
                != libc::MAP_FAILED
        };
        if !moved {
            // Writes would reach the parent's globals: end the child instead.
            const MSG: &[u8] =
                b"rshmem: fork: cannot give the child private global variables; exiting\n";
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(1);
        }
    }
}

/// Whether the dynamic loader finds and loads `library` (the library stays loaded: the
/// transport that asked loads it next).
pub(crate) fn library_loads(library: &str) -> bool {
    let Ok(name) = std::ffi::CString::new(library) else {
        return false;
    };
    // SAFETY: dlopen of a NUL-terminated name; the handle is kept (never closed), so the
    // library's constructors run once and nothing is unloaded under a later user.
    !unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) }.is_null()
}

/// The file descriptors open in this process, sorted (none if `/proc/self/fd` cannot be
/// read).
pub(crate) fn open_fds() -> Vec<i32> {
    let mut fds: Vec<i32> = listed_fds()
        .into_iter()
        .filter(|&fd| fd_flags(fd).is_some())
        .collect();
    fds.sort_unstable();
    fds
}

/// The entries of `/proc/self/fd`: the open descriptors and the listing's own, which is
/// closed once it returns (its number is then free for the next descriptor opened).
fn listed_fds() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// A descriptor's flags (`F_GETFD`), or `None` if it is not open.
fn fd_flags(fd: i32) -> Option<i32> {
    // SAFETY: F_GETFD only reads the flags of a descriptor number; one not open fails with
    // EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    (flags >= 0).then_some(flags)
}

/// Marks close-on-exec every descriptor open now that was not in `before` ([`open_fds`]): those
/// a network library opened during init without the flag (UCX's and libfabric's sockets).
/// A program a PE starts would otherwise hold the job's connections and listening sockets
/// open after the PE exits, and its peers would wait for answers from a process that is
/// gone.
pub(crate) fn close_on_exec_since(before: &[i32]) {
    for fd in listed_fds() {
        // The listing's own descriptor is closed by now: no flags.
        match fd_flags(fd) {
            Some(flags) if flags & libc::FD_CLOEXEC == 0 && before.binary_search(&fd).is_err() => {
                // SAFETY: F_SETFD only sets the descriptor's flags; one closed meanwhile
                // fails with EBADF, ignored.
                unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
            }
            _ => {}
        }
    }
}

/// Moves the calling thread onto the `index`-th of the CPUs it may run on (modulo their
/// count), then gives it back all of them: a start, not a binding. Returns the CPU, or None
/// when the thread may run on one CPU only (bound by a launcher) or its CPUs cannot be read.
///
/// Unbound PEs woken by one launcher process tend to start on that process's CPU, and PEs
/// that wait by spinning briefly and yielding are not busy enough for the scheduler to
/// separate them soon: two such PEs shared one CPU in 1 of 10 two-PE jobs under
/// `mpiexec.hydra` for their first 10-20 ms, a barrier then taking 8 us instead of 0.3.
pub(crate) fn start_on_cpu(index: usize) -> Option<usize> {
    use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};
    let all = sched_getaffinity(None).ok()?;
    let cpus: Vec<usize> = (0..CpuSet::MAX_CPU).filter(|&c| all.is_set(c)).collect();
    if cpus.len() < 2 {
        return None;
    }
    let cpu = cpus[index % cpus.len()];
    let mut one = CpuSet::new();
    one.set(cpu);
    // Setting the one CPU moves the thread there at once; the full set then leaves it there
    // until the scheduler has a reason to move it.
    sched_setaffinity(None, &one).ok()?;
    sched_setaffinity(None, &all).ok()?;
    Some(cpu)
}

#[cfg(test)]
mod tests {
    /// The thread ends on the CPU of its index among its CPUs, modulo their count, and may
    /// still run on all of them.
    #[test]
    #[cfg_attr(miri, ignore = "system calls")]
    fn start_on_cpu_places_without_binding() {
        use rustix::thread::{sched_getaffinity, CpuSet};
        let cpus_of = |set: &CpuSet| -> Vec<usize> {
            (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect()
        };
        // A thread of its own: affinity is per thread.
        std::thread::spawn(move || {
            let cpus = cpus_of(&sched_getaffinity(None).unwrap());
            if cpus.len() < 2 {
                assert_eq!(super::start_on_cpu(0), None);
                return;
            }
            for i in 0..=cpus.len() {
                assert_eq!(super::start_on_cpu(i), Some(cpus[i % cpus.len()]));
                assert_eq!(cpus_of(&sched_getaffinity(None).unwrap()), cpus);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn own_code_is_prefaulted_within_the_limit_only() {
        // Size and Rss (kB) of the mapping holding this function, from /proc/self/smaps.
        let sizes = || {
            let code = prefault_own_code as *const () as usize;
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let mut lines = smaps.lines();
            while let Some(l) = lines.next() {
                let m = match MapsLine::parse(l) {
                    Some(m) if m.start <= code && code < m.end => m,
                    _ => continue,
                };
                let field = |name: &str, ls: &mut std::str::Lines| -> u64 {
                    ls.find(|l| l.starts_with(name)).unwrap()[name.len()..]
                        .trim()
                        .trim_end_matches(" kB")
                        .parse()
                        .unwrap()
                };
                let size = field("Size:", &mut lines);
                let rss = field("Rss:", &mut lines);
                assert_eq!(size, ((m.end - m.start) / 1024) as u64);
                return (size, rss);
            }
            panic!("no mapping holds this code");
        };
        assert_eq!(prefault_own_code(0), 0, "a limit of 0 maps nothing");
        let mapped = prefault_own_code(usize::MAX);
        assert!(mapped > 0, "nothing mapped");
        let (size, rss) = sizes();
        assert_eq!(rss, size, "every page of the code's mapping is present");
    }

    use super::*;

    fn cloexec(fd: i32) -> bool {
        fd_flags(fd).expect("open") & libc::FD_CLOEXEC != 0
    }

    #[test]
    fn descriptors_opened_since_become_close_on_exec_and_older_ones_stay() {
        // SAFETY: creates an eventfd without the flag, as a network library does.
        let old = unsafe { libc::eventfd(0, 0) };
        let before = open_fds();
        // SAFETY: as above.
        let new = unsafe { libc::eventfd(0, 0) };
        assert!(old >= 0 && new >= 0 && !cloexec(new));
        close_on_exec_since(&before);
        assert!(cloexec(new), "opened since: close-on-exec");
        assert!(!cloexec(old), "opened before: untouched");
        // SAFETY: closes the two descriptors this test opened.
        unsafe {
            libc::close(old);
            libc::close(new);
        }
    }
}
