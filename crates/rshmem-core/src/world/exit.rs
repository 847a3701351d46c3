//! The exit hook: a PE that exits with the runtime still up is finalized (status 0) or
//! reported to the launcher (any other status).

use std::io::Write as _;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{finalize, EXIT_QUIET, INIT_DEPTH};
use crate::runtime::{tearing_down, try_runtime};

/// The process that initialized (the exit hook ignores forked children).
static INIT_PID: AtomicU32 = AtomicU32::new(0);

/// Registers [`at_exit`] once per process (glibc's `on_exit`, which passes the exit
/// status: a failing process must not wait in a collective finalize). Elsewhere there is
/// no hook, and a program must finalize.
pub(super) fn register_at_exit() {
    INIT_PID.store(std::process::id(), Ordering::Relaxed);
    EXIT_QUIET.store(false, Ordering::Relaxed);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    static ONCE: std::sync::Once = std::sync::Once::new();
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    ONCE.call_once(|| {
        unsafe extern "C" {
            // glibc: `int on_exit(void (*)(int, void *), void *)` (not in the libc crate).
            fn on_exit(
                f: extern "C" fn(libc::c_int, *mut libc::c_void),
                arg: *mut libc::c_void,
            ) -> libc::c_int;
        }
        // SAFETY: registers a handler with the C signature glibc calls it with; the
        // argument is unused.
        unsafe { on_exit(at_exit, std::ptr::null_mut()) };
    });
}

/// The exit hook: a process that exits with status 0 while the runtime is up (a
/// `start_pes` program; `shmem_init` without `shmem_finalize`; a Rust program that calls
/// `std::process::exit` with a live guard; fewer finalizes than inits) is finalized here,
/// collectively, as if `shmem_finalize` had been called last. Nothing happens for a
/// non-zero status or while the job is torn down: the other PEs may never come to the
/// finalize barrier, and the launcher ends the job anyway; a non-zero status after init
/// goes to the launcher first (`Bootstrap::exiting`), so it is the failure reported.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" fn at_exit(status: libc::c_int, _arg: *mut libc::c_void) {
    if tearing_down() {
        return;
    }
    // A forked child inherits the hook and the mappings, but it is not the PE.
    if INIT_PID.load(Ordering::Relaxed) != std::process::id() {
        return;
    }
    let Some(rt) = try_runtime() else { return };
    if status != 0 {
        // The first failure must be the one reported: the launcher hears of this exit
        // before the peers it leaves stuck can blame another PE.
        rt.announce_if_gave_up(false);
        let _ = std::io::stdout().flush();
        let msg = format!(
            "rshmem: PE {}: exited with status {status} without calling shmem_finalize",
            rt.me
        );
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.boot.exiting(status, &msg)
        }));
        return;
    }
    if !EXIT_QUIET.load(Ordering::Relaxed) {
        let _ = std::io::stdout().flush();
        eprintln!(
            "rshmem: PE {}: warning: exiting without shmem_finalize; finalizing at exit (waits for every PE)",
            rt.me
        );
    }
    // A panic must not unwind into C's exit().
    let _ = std::panic::catch_unwind(|| {
        INIT_DEPTH.store(1, Ordering::Relaxed);
        finalize();
    });
}
