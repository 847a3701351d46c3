//! How a failure leaves an entry point: a panic ends the job naming the routine
//! ([`guard`]); a core error ends it with the core's message ([`ok`], [`fail`]), or, inside a
//! `shmemx_try_` form ([`returning`]), comes back as its `SHMEMX_ERR_*` code, with the text
//! kept for `shmemx_error_message`.

use core::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use rshmem_core::{fatal, Error, Result};

/// Runs an entry point's body; a panic ends the job cleanly, naming the routine.
#[inline(always)]
pub(crate) fn guard<R>(routine: &'static str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) if p.is::<Returned>() => std::panic::resume_unwind(p),
        Err(p) => panicked(routine, p),
    }
}

/// An error on its way back to the `shmemx_try_` entry point that asked for it: the
/// payload of the unwind [`fail`] starts (through `resume_unwind`, which runs no panic
/// hook and prints nothing).
struct Returned(Error);

thread_local! {
    /// How many `shmemx_try_` calls this thread is inside (a nonzero count makes
    /// [`fail`] return the error instead of ending the job).
    static RETURNING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The text of this thread's last returned error (`shmemx_error_message`).
    static LAST_ERROR: std::cell::RefCell<std::ffi::CString> =
        std::cell::RefCell::new(std::ffi::CString::default());
}

/// Reports `e` the way the calling entry point asked: back to a `shmemx_try_` routine as
/// its error code, or, from every other routine, by ending the job with the message.
/// Sound to unwind from: every caller holds the core's `Err`, so the core is between
/// operations, and only the C face's own frames are left.
#[cold]
#[inline(never)]
pub(crate) fn fail(e: Error) -> ! {
    if RETURNING.with(|r| r.get()) > 0 {
        std::panic::resume_unwind(Box::new(Returned(e)));
    }
    fatal(&e)
}

include!(concat!(env!("OUT_DIR"), "/error_codes.rs"));

/// `SHMEMX_ERR_*`: the code of an error (the values of `shmemx.h`).
pub(crate) fn error_code(e: &Error) -> c_int {
    match e {
        Error::NotInitialized { .. } => ERR_NOT_INITIALIZED,
        Error::PeOutOfRange { .. } => ERR_PE,
        Error::NotSymmetric { .. } => ERR_NOT_SYMMETRIC,
        Error::Misaligned { .. } => ERR_MISALIGNED,
        Error::HeapExhausted { .. } => ERR_NO_MEMORY,
        Error::NotAllocated { .. } => ERR_NOT_ALLOCATED,
        Error::CollectiveMismatch { .. }
        | Error::CollectiveMismatchNamed { .. }
        | Error::CollectiveOrder { .. } => ERR_COLLECTIVE_MISMATCH,
        Error::InvalidArgument { .. } => ERR_INVALID_ARGUMENT,
        Error::PeerFinalized { .. }
        | Error::WaitAfterFinalize { .. }
        | Error::LockHolderFinalized { .. } => ERR_PE_FINALIZED,
        Error::PeFailed { .. } => ERR_PE_FAILED,
        Error::Transport { .. } => ERR_TRANSPORT,
        _ => ERR_OTHER,
    }
}

/// A `shmemx_try_` entry point: runs `f` (the plain routine's body) with errors returned
/// instead of fatal; writes its value to `out` when `out` is not null; returns 0 or the
/// `SHMEMX_ERR_*` code, and keeps the error's text for `shmemx_error_message`.
///
/// # Safety
/// `out` is null or writable.
pub(crate) unsafe fn returning<T>(
    routine: &'static str,
    out: *mut T,
    f: impl FnOnce() -> T,
) -> c_int {
    RETURNING.with(|r| r.set(r.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    RETURNING.with(|r| r.set(r.get() - 1));
    match r {
        Ok(v) => {
            if !out.is_null() {
                // SAFETY: `out` is writable (contract).
                unsafe { out.write(v) };
            }
            0
        }
        Err(p) => match p.downcast::<Returned>() {
            Ok(ret) => {
                let text = std::ffi::CString::new(ret.0.to_string()).unwrap_or_default();
                LAST_ERROR.with(|l| *l.borrow_mut() = text);
                error_code(&ret.0)
            }
            Err(p) => panicked(routine, p),
        },
    }
}

/// `shmemx_strerror`: the fixed text of an error code.
pub(crate) fn strerror(code: c_int) -> *const c_char {
    usize::try_from(code)
        .ok()
        .and_then(|i| ERROR_TEXTS.get(i))
        .map_or(c"unknown error code".as_ptr(), |t| t.as_ptr())
}

/// `shmemx_error_message`: the full text of this thread's last returned error (naming
/// the routine and argument), empty before the first; valid until this thread's next.
pub(crate) fn error_message() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

#[cold]
fn panicked(routine: &'static str, p: Box<dyn std::any::Any + Send>) -> ! {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    fatal(&format!("{routine}: internal error: {msg}"))
}

/// The value, or a job abort with the core's message (which names routine and argument).
#[inline(always)]
pub(crate) fn ok<T>(r: Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fail(e),
    }
}

#[cold]
pub(super) fn invalid(routine: &'static str, arg: &'static str, reason: &'static str) -> ! {
    fail(Error::InvalidArgument {
        routine,
        arg,
        reason,
    })
}
