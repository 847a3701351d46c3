//! The [`Shmem`] guard: initialization, finalization, queries, ordering and barriers.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use rshmem_core::ThreadLevel;

use crate::{ProfileCounts, ProfileFamily};

use crate::ctx::{Ctx, Shared};
use crate::error::{Error, Result};

/// Set while a guard is live in this process.
static LIVE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set on the thread that holds the live guard (the one that initialized).
    static INIT_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is the one that initialized the live guard.
#[inline]
pub(crate) fn on_init_thread() -> bool {
    INIT_THREAD.get()
}

/// The OpenSHMEM library, initialized: the handle every operation goes through.
///
/// Create it once per program with [`Shmem::init`] (collective: every PE calls it).
/// Everything it hands out — symmetric memory, locks, non-blocking scopes — borrows it,
/// so nothing can outlive finalization. Dropping it finalizes (collective, with an
/// implicit barrier); [`finalize`](Self::finalize) does the same and reports errors.
/// `std::process::exit(0)` with a live guard (which skips destructors) finalizes at
/// exit instead, with a warning; a non-zero status or a panic does not wait for the
/// other PEs.
///
/// Operations on it use the *default context*: issued in program order from this PE,
/// ordered by [`fence`](Self::fence), completed by [`quiet`](Self::quiet).
///
/// PE numbers are plain `usize` indices `0..n_pes()` of the world team.
///
/// # Threads
///
/// `Shmem` is `Sync` but not `Send`: threads may share `&Shmem` (for instance with
/// `std::thread::scope`), but finalization happens on the thread that initialized, as
/// OpenSHMEM requires. What threads may do is the thread level's business, checked at
/// run time (the level is a runtime argument, so the type cannot carry it):
///
/// * [`ThreadLevel::Single`] ([`init`](Self::init)) and [`ThreadLevel::Funneled`]: only
///   the initializing thread communicates. Operations that take a PE (RMA, atomics,
///   signals, their non-blocking forms, on any context) and context creation, called
///   from any other thread, return [`Error::ThreadLevel`] having done nothing. (The
///   check is one predictable branch, and none at the higher levels. Other calls —
///   collectives, `quiet`, `fence`, waits, local reads — are not checked.)
/// * [`ThreadLevel::Serialized`]: any thread, one call at a time; serializing is the
///   program's part (the runtime is thread-safe at every level, so a violation costs no
///   memory safety).
/// * [`ThreadLevel::Multiple`]: any thread, any time; the only level that allows
///   [`Shared`] contexts.
///
/// A generic `Shmem<Level>` would move the check to compile time, at the price of a
/// level parameter on every type that borrows the guard; contexts, which need no such
/// parameter, carry their threading rules in their type ([`Ctx`]).
///
/// ```
/// use rshmem::{Error, Shmem};
/// let shmem = Shmem::init()?; // ThreadLevel::Single
/// let mut v = shmem.alloc(1, 0u8)?;
/// let remote = &v.share();
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         let e = shmem.p(remote, 0, 1, 0).unwrap_err();
///         assert!(matches!(e, Error::ThreadLevel { .. }));
///     });
/// });
/// shmem.p(remote, 0, 1, 0)?; // the initializing thread: fine
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// println!("Hello from PE {} of {}", shmem.my_pe(), shmem.n_pes());
/// shmem.finalize()?;
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Symmetric objects cannot outlive it:
///
/// ```compile_fail,E0505
/// let shmem = rshmem::Shmem::init()?;
/// let v = shmem.alloc(4, 0u8)?;
/// shmem.finalize()?; // error: cannot move out of `shmem` because it is borrowed
/// v.store(0, 1);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Nor can the guard move to another thread:
///
/// ```compile_fail,E0277
/// let shmem = rshmem::Shmem::init()?;
/// std::thread::spawn(move || drop(shmem)); // error: `Shmem` cannot be sent between threads
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct Shmem {
    me: usize,
    npes: usize,
    /// The thread level provided.
    level: ThreadLevel,
    /// Set once finalized (by `finalize`), so `Drop` does nothing more.
    done: bool,
    /// The default context (it borrows nothing: `'static` only inside the guard, which
    /// hands it out re-borrowed for its own lifetime).
    pub(crate) default: Ctx<'static, Shared>,
    /// `!Send` but `Sync`.
    _thread: PhantomData<std::sync::MutexGuard<'static, ()>>,
}

/// Version and name of the library (`shmem_info_get_version`, `shmem_info_get_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Info {
    /// Major version of the OpenSHMEM specification implemented.
    pub major: i32,
    /// Minor version of the OpenSHMEM specification implemented.
    pub minor: i32,
    /// The vendor string (`SHMEM_VENDOR_STRING`).
    pub name: &'static str,
}

impl Shmem {
    /// `shmem_init`: starts OpenSHMEM on this PE. Collective: every PE calls it.
    ///
    /// A program started without a launcher runs as a single PE; under
    /// `oshrun -np N`, as one of N.
    ///
    /// # Errors
    /// [`Error::AlreadyInitialized`] while another guard is live in this process;
    /// [`Error::Init`] when the runtime cannot start (bad `SHMEM_*` variable, launcher
    /// failure, no shared memory).
    pub fn init() -> Result<Shmem> {
        Self::start("shmem_init", ThreadLevel::Single)
    }

    /// `shmem_init_thread`: like [`init`](Self::init), requesting a thread level; see
    /// [`query_thread`](Self::query_thread) for the level provided.
    ///
    /// ```
    /// use rshmem::{Shmem, ThreadLevel};
    /// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
    /// assert_eq!(shmem.query_thread(), ThreadLevel::Multiple);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn init_thread(requested: ThreadLevel) -> Result<Shmem> {
        Self::start("shmem_init_thread", requested)
    }

    fn start(routine: &'static str, level: ThreadLevel) -> Result<Shmem> {
        if LIVE.swap(true, Ordering::AcqRel) {
            return Err(Error::AlreadyInitialized { routine });
        }
        let started = rshmem_core::init(level)
            .map_err(Error::from)
            .and_then(|level| {
                Ok((
                    rshmem_core::setup::my_pe()?,
                    rshmem_core::setup::n_pes()?,
                    level,
                ))
            });
        match started {
            Ok((me, npes, level)) => {
                INIT_THREAD.set(true);
                Ok(Shmem {
                    me,
                    npes,
                    level,
                    done: false,
                    default: Ctx::default_for(me, npes, level),
                    _thread: PhantomData,
                })
            }
            Err(e) => {
                LIVE.store(false, Ordering::Release);
                Err(e)
            }
        }
    }

    /// `shmem_finalize`: ends OpenSHMEM on this PE. Collective, with an implicit
    /// barrier. Dropping the guard does the same.
    pub fn finalize(mut self) -> Result<()> {
        self.done = true;
        rshmem_core::finalize();
        INIT_THREAD.set(false);
        LIVE.store(false, Ordering::Release);
        Ok(())
    }

    /// `shmem_global_exit`: ends every PE of the job, which exits with `status`.
    ///
    /// Buffered standard output of this PE is flushed first; destructors do not run.
    pub fn global_exit(&self, status: i32) -> ! {
        rshmem_core::setup::global_exit(status)
    }

    /// `shmem_my_pe`: this PE's number, in `0..n_pes()`.
    pub fn my_pe(&self) -> usize {
        self.me
    }

    /// `shmem_n_pes`: the number of PEs in the job.
    pub fn n_pes(&self) -> usize {
        self.npes
    }

    /// `shmem_pe_accessible`: whether `pe` is a PE of this job that this PE can reach.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// assert!(shmem.pe_accessible(0));
    /// assert!(!shmem.pe_accessible(shmem.n_pes()));
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn pe_accessible(&self, pe: usize) -> bool {
        pe < self.npes && rshmem_core::setup::pe_accessible(pe as i64).unwrap_or(false)
    }

    /// `shmem_query_thread`: the thread level provided (see [Threads](#threads)).
    pub fn query_thread(&self) -> ThreadLevel {
        self.level
    }

    /// `shmem_info_get_version` and `shmem_info_get_name`; callable without a guard.
    ///
    /// ```
    /// let info = rshmem::Shmem::info();
    /// assert_eq!((info.major, info.minor), (1, 5));
    /// assert_eq!(info.name, "rshmem");
    /// ```
    pub fn info() -> Info {
        let (major, minor) = rshmem_core::setup::info_get_version();
        Info {
            major,
            minor,
            name: rshmem_core::setup::info_get_name(),
        }
    }

    /// `shmem_pcontrol`: this PE's profiling level: 0 stops counting (counts so far
    /// are kept), 1 counts calls, bytes and time sampled 1 call in 128, 2 and above time
    /// every call. Off unless `SHMEM_PROFILE` sets a level at init.
    pub fn pcontrol(&self, level: i32) {
        rshmem_core::profile::set_level(level);
    }

    /// This PE's profiling counts so far, per routine family (every thread's), as
    /// `(family, counts)` for the families with at least one call.
    pub fn profile(&self) -> Vec<(ProfileFamily, ProfileCounts)> {
        let s = rshmem_core::profile::snapshot();
        ProfileFamily::ALL
            .into_iter()
            .map(|f| (f, s[f as usize]))
            .filter(|(_, c)| c.calls > 0)
            .collect()
    }

    /// `shmem_barrier_all`: completes this PE's outstanding operations
    /// ([`quiet`](Self::quiet)), then waits until every PE has called it. Collective.
    pub fn barrier_all(&self) {
        ok(rshmem_core::sync::barrier_all());
    }

    /// `shmem_sync_all`: waits until every PE has called it, without completing
    /// outstanding operations. Collective.
    pub fn sync_all(&self) {
        ok(rshmem_core::sync::sync_all());
    }

    /// `shmem_fence`: puts, atomics and signals to each PE issued on the default
    /// context before it are delivered before those issued after it
    /// ([`Ctx::fence`] on [`default_ctx`](Self::default_ctx)).
    pub fn fence(&self) {
        self.default.fence()
    }

    /// `shmem_quiet`: every put, atomic, signal and non-blocking operation issued on the
    /// default context before it is complete and visible ([`Ctx::quiet`] on
    /// [`default_ctx`](Self::default_ctx)). Created contexts are completed by their own
    /// quiet.
    pub fn quiet(&self) {
        self.default.quiet()
    }

    /// Bytes of the symmetric heap (`SHMEM_SYMMETRIC_SIZE`) not in use on this PE.
    pub fn heap_free(&self) -> usize {
        ok(rshmem_core::memory::heap_free())
    }
}

impl Drop for Shmem {
    fn drop(&mut self) {
        // While panicking the other PEs may never reach the finalize barrier: leave, and
        // let the launcher end the failed job.
        if self.done || std::thread::panicking() {
            return;
        }
        rshmem_core::finalize();
        INIT_THREAD.set(false);
        LIVE.store(false, Ordering::Release);
    }
}

/// Unwraps a result that cannot fail while a guard is live.
#[track_caller]
pub(crate) fn ok<T, E: std::fmt::Display>(r: std::result::Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("rshmem: internal error: {e}"))
}
