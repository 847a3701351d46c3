//! Argument checks on what the core cannot see: local buffers that must not be null
//! (under `SHMEM_DEBUG=1`), `SHMEM_CMP_*` values and element counts whose byte size
//! overflows.

use core::ffi::c_int;

use rshmem_core::runtime::try_runtime;
use rshmem_core::Cmp;

use super::errors::invalid;

/// Whether `SHMEM_DEBUG=1` asked for argument checks.
#[inline]
pub(super) fn debug() -> bool {
    try_runtime().is_some_and(|rt| rt.config().debug)
}

/// Under `SHMEM_DEBUG`, a null local buffer of `n > 0` elements ends the job.
#[inline(always)]
pub(crate) fn nonnull<T>(
    routine: &'static str,
    arg: &'static str,
    p: *const T,
    n: usize,
) -> *const T {
    if n > 0 && p.is_null() && debug() {
        invalid(routine, arg, "is a null pointer");
    }
    p
}

/// [`nonnull`] for a buffer written by the routine.
#[inline(always)]
pub(crate) fn nonnull_mut<T>(
    routine: &'static str,
    arg: &'static str,
    p: *mut T,
    n: usize,
) -> *mut T {
    nonnull(routine, arg, p, n);
    p
}

/// `SHMEM_CMP_*` to the core's comparison (always checked: a bad value cannot be run).
#[inline(always)]
pub(crate) fn cmp(routine: &'static str, c: c_int) -> Cmp {
    Cmp::from_c(c)
        .unwrap_or_else(|| invalid(routine, "cmp", "is not one of the SHMEM_CMP_* constants"))
}

pub(super) fn nbytes(routine: &'static str, n: usize, esize: usize) -> usize {
    n.checked_mul(esize)
        .unwrap_or_else(|| invalid(routine, "nelems", "nelems times the element size overflows"))
}
