//! Requests of non-blocking operations: what an operation did ([`Issued`]), and how UCX's
//! requests are released and their completions counted.

use crate::status::{ptr_is_err, ptr_status, Result, UcxError};
use crate::sys;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

// `ucp_request_free`, for the completion callback (which has no other way to reach the library).
// The library is never unloaded (RTLD_NODELETE), so the pointer stays valid.
pub(crate) static REQUEST_FREE: OnceLock<unsafe extern "C" fn(*mut c_void)> = OnceLock::new();

/// What a non-blocking operation did (see the crate doc's completion contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// Completed at once; the `done` counter was not touched.
    Done,
    /// Outstanding; the `done` counter, if given, gets +1 on completion.
    Pending,
}

/// Turns an `_nbx` return value into [`Issued`]; a request without a counting callback is
/// released at once (UCX then completes it internally).
pub(crate) fn issued(
    lib: &sys::UcpLib,
    routine: &'static str,
    req: sys::ucs_status_ptr_t,
    counted: bool,
) -> Result<Issued> {
    if req.is_null() {
        Ok(Issued::Done)
    } else if ptr_is_err(req) {
        Err(UcxError::Status {
            routine,
            status: ptr_status(req),
        })
    } else {
        if !counted {
            // SAFETY: a live request nobody else references.
            unsafe { lib.ucp_request_free(req) };
        }
        Ok(Issued::Pending)
    }
}

// Completion callback of pending operations with a `done` counter: release, then count (the
// caller may tear everything down as soon as it sees the count).
pub(crate) extern "C" fn send_done_cb(
    request: *mut c_void,
    _status: sys::ucs_status_t,
    user_data: *mut c_void,
) {
    if let Some(free) = REQUEST_FREE.get() {
        // SAFETY: request is this completed request, not referenced elsewhere (the issuer did
        // not keep it); releasing inside the callback is allowed by UCX.
        unsafe { free(request) };
    }
    // SAFETY: user_data is the caller's counter, which the caller keeps alive until this runs.
    unsafe { &*(user_data as *const AtomicU64) }.fetch_add(1, Ordering::Release);
}
