//! STAT= and ERRMSG=: how an error reaches the program, or ends it.

use std::ffi::c_char;

use rshmem_core::Departure;

/// `STAT_LOCKED` (iso_fortran_env, gfortran 12).
pub(crate) const STAT_LOCKED: i32 = 1;
/// `STAT_LOCKED_OTHER_IMAGE`.
pub(crate) const STAT_LOCKED_OTHER_IMAGE: i32 = 2;
/// A duplicate image in SYNC IMAGES (libcaf.h's `STAT_DUP_SYNC_IMAGES`).
pub(crate) const STAT_DUP_SYNC_IMAGES: i32 = 3;
/// Unlocking a lock nobody holds (gfortran's STAT_UNLOCKED is 0, so it cannot be told
/// from success; OpenCoarrays uses 99 as well).
pub(crate) const STAT_NOT_LOCKED: i32 = 99;
/// `STAT_STOPPED_IMAGE`.
pub(crate) const STAT_STOPPED_IMAGE: i32 = 6000;
/// `STAT_FAILED_IMAGE`.
pub(crate) const STAT_FAILED_IMAGE: i32 = 6001;
/// Any other error.
pub(crate) const STAT_ERROR: i32 = 1;

/// An error condition of a CAF statement: its STAT= value and its ERRMSG= text.
#[derive(Debug, Clone)]
pub(crate) struct CafError {
    /// Value for STAT=.
    pub code: i32,
    /// Text for ERRMSG= (and the message when the program has no STAT=).
    pub msg: String,
}

impl CafError {
    /// An error with `code` and `msg`.
    pub(crate) fn new(code: i32, msg: impl Into<String>) -> CafError {
        CafError {
            code,
            msg: msg.into(),
        }
    }
}

impl From<rshmem_core::Error> for CafError {
    fn from(e: rshmem_core::Error) -> CafError {
        let code = match e {
            rshmem_core::Error::PeerFinalized { .. }
            | rshmem_core::Error::WaitAfterFinalize { .. } => STAT_STOPPED_IMAGE,
            rshmem_core::Error::PeFailed { .. }
            | rshmem_core::Error::PeGone {
                how: Departure::Failed,
                ..
            } => STAT_FAILED_IMAGE,
            rshmem_core::Error::PeGone { .. } => STAT_STOPPED_IMAGE,
            rshmem_core::Error::RepeatedPe { .. } => STAT_DUP_SYNC_IMAGES,
            _ => STAT_ERROR,
        };
        CafError::new(code, e.to_string())
    }
}

/// IMAGE_STATUS's value for a departure: 0 (running), `STAT_STOPPED_IMAGE` or
/// `STAT_FAILED_IMAGE`.
pub(crate) fn status_code(d: Option<Departure>) -> i32 {
    match d {
        None => 0,
        Some(Departure::Finalized) => STAT_STOPPED_IMAGE,
        Some(Departure::Failed) => STAT_FAILED_IMAGE,
    }
}

/// The result of a CAF operation.
pub(crate) type CafResult<T = ()> = Result<T, CafError>;

/// Delivers `r` the Fortran way: with `stat` present, sets it (0 on success) and fills
/// `errmsg` (blank-padded to `errmsg_len`) on error; without it, an error ends the job
/// with the message, naming `routine`.
///
/// # Safety
/// `stat` is null or writable; `errmsg` is null or writable for `errmsg_len` bytes.
pub(crate) unsafe fn report(
    routine: &str,
    r: CafResult,
    stat: *mut i32,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    match r {
        Ok(()) => {
            if !stat.is_null() {
                // SAFETY: contract.
                unsafe { stat.write(0) };
            }
        }
        Err(e) => {
            if stat.is_null() {
                fatal(routine, &e.msg);
            }
            // SAFETY: contract.
            unsafe {
                stat.write(e.code);
                fill_errmsg(errmsg, errmsg_len, &e.msg);
            }
        }
    }
}

/// Copies `msg` into a Fortran character variable, blank-padded or truncated.
///
/// # Safety
/// `errmsg` is null or writable for `len` bytes.
pub(crate) unsafe fn fill_errmsg(errmsg: *mut c_char, len: usize, msg: &str) {
    if errmsg.is_null() {
        return;
    }
    let b = msg.as_bytes();
    for i in 0..len {
        // SAFETY: `i < len` (contract).
        unsafe { *errmsg.add(i) = *b.get(i).unwrap_or(&b' ') as c_char };
    }
}

/// Ends the job with an error message naming `routine` (error termination), once: a
/// runtime error's text already starts with it.
#[cold]
pub(crate) fn fatal(routine: &str, msg: &str) -> ! {
    crate::image::flush_fortran();
    let named = msg
        .strip_prefix(routine)
        .is_some_and(|rest| rest.starts_with(": "));
    if named {
        rshmem_core::fatal(&msg)
    }
    rshmem_core::fatal(&format!("{routine}: {msg}"))
}

/// Ends the job because the program used a feature this runtime does not have yet: never
/// a silent wrong answer.
#[cold]
pub(crate) fn unsupported(routine: &str, feature: &str) -> ! {
    fatal(
        routine,
        &format!("not supported yet by libcaf_rshmem: {feature}"),
    )
}
