//! Symmetric globals at the edges: `statics_hard <mode>` with mode
//! - `threads [all|pe0] [nouse]`: a thread writes a global while `init` would move the
//!   globals (on every PE, or on PE 0 only): none of its writes may be lost, and the job
//!   agrees to go without symmetric globals (a global in RMA is then refused, naming the
//!   routine; with `nouse` no global is used, so nothing is said);
//! - `fork`: after init, a forked child's writes to a global must not reach the parent;
//! - `deleted <dir>`: every PE's executable is deleted before init (as when a binary is
//!   rebuilt while a job starts); the globals are symmetric all the same.
//!
//! Prints `ok statics_hard <mode> pe=<me>`.
#![allow(unsafe_code)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rshmem_core::Ctx;
use rshmem_core::{amo, setup, sync, AmoOp, ThreadLevel};

static COUNTER: AtomicU64 = AtomicU64::new(0);
static VALUE: AtomicU64 = AtomicU64::new(1);

fn init() {
    rshmem_core::world::enable_symmetric_data();
    rshmem_core::init(ThreadLevel::Multiple).unwrap_or_else(|e| rshmem_core::fatal(&e));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("", String::as_str);
    match mode {
        "threads" => threads(
            args.get(2).is_some_and(|a| a == "pe0"),
            args.get(3).is_some_and(|a| a == "nouse"),
        ),
        "fork" => fork(),
        "deleted" => deleted(Path::new(&args[2])),
        _ => panic!("usage: statics_hard threads|fork|deleted <dir>"),
    }
    let me = setup::my_pe().unwrap();
    println!("ok statics_hard {mode} pe={me}");
    rshmem_core::finalize();
}

fn threads(only_pe0: bool, nouse: bool) {
    static STOP: AtomicBool = AtomicBool::new(false);
    let rank = std::env::var("PMI_RANK").unwrap_or_else(|_| "0".into());
    let spawn = !only_pe0 || rank == "0";
    let t = spawn.then(|| {
        std::thread::spawn(|| {
            let mut done = 0u64;
            while !STOP.load(Ordering::Relaxed) {
                COUNTER.fetch_add(1, Ordering::Relaxed);
                done += 1;
            }
            done
        })
    });
    if spawn {
        // Writing before init, so init sees the thread.
        while COUNTER.load(Ordering::Relaxed) == 0 {
            std::hint::spin_loop();
        }
    }
    init();
    STOP.store(true, Ordering::Relaxed);
    if let Some(t) = t {
        let done = t.join().unwrap();
        assert_eq!(
            COUNTER.load(Ordering::Relaxed),
            done,
            "writes made while shmem_init ran were lost"
        );
    }
    if nouse {
        sync::barrier_all().unwrap();
        return;
    }
    // Every PE agrees that globals are not symmetric: RMA on one is refused.
    // SAFETY: the call only validates the address, which is refused.
    let e = unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_fetch",
            VALUE.as_ptr(),
            AmoOp::Fetch,
            0,
        )
    };
    let e = e.expect_err("globals must not be symmetric after a thread ran at init");
    assert!(e.to_string().contains("shmem_atomic_fetch"), "{e}");
    sync::barrier_all().unwrap();
}

fn fork() {
    init();
    VALUE.store(7, Ordering::SeqCst);
    // SAFETY: the child only stores to an atomic and calls `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        VALUE.store(99, Ordering::SeqCst);
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert_eq!(
        VALUE.load(Ordering::SeqCst),
        7,
        "a forked child's write reached the parent's global"
    );
    // The parent's global is still symmetric.
    let me = setup::my_pe().unwrap();
    sync::barrier_all().unwrap();
    // SAFETY: VALUE is a symmetric, aligned u64 on PE 0.
    let seen = unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_fetch",
            VALUE.as_ptr(),
            AmoOp::Fetch,
            0,
        )
    };
    assert_eq!(seen.unwrap(), 7, "PE {me} reads PE 0's global");
    sync::barrier_all().unwrap();
}

/// Waits (bounded) until every PE of the job has created its file `tag.<rank>` in `dir`.
fn file_barrier(dir: &Path, tag: &str, rank: &str, size: usize) {
    std::fs::write(dir.join(format!("{tag}.{rank}")), b"").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let n = std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(tag))
            })
            .count();
        if n == size {
            return;
        }
        assert!(Instant::now() < deadline, "file barrier {tag} timed out");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn deleted(dir: &Path) {
    // Before init: the launcher's variables say who we are.
    let rank = std::env::var("PMI_RANK").unwrap_or_else(|_| "0".into());
    let size: usize = std::env::var("PMI_SIZE").map_or(1, |s| s.parse().unwrap());
    file_barrier(dir, "started", &rank, size);
    if rank == "0" {
        std::fs::remove_file(std::env::current_exe().unwrap()).unwrap();
    }
    file_barrier(dir, "deleted", &rank, size);
    init();
    let (me, n) = (setup::my_pe().unwrap(), setup::n_pes().unwrap());
    // SAFETY: COUNTER is a symmetric, aligned u64 (a global).
    unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_add",
            COUNTER.as_ptr(),
            AmoOp::Add(me as u64 + 1),
            0,
        )
        .unwrap();
    }
    sync::barrier_all().unwrap();
    if me == 0 {
        assert_eq!(COUNTER.load(Ordering::SeqCst), (n * (n + 1) / 2) as u64);
    }
}
