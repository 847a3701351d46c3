//! Atomic memory operations: fetching, posted (non-fetching) and `_nbi`.

use core::ffi::c_int;

use rshmem_core::{AmoOp, Ctx, Word};

use super::checks::nonnull_mut;
use super::errors::ok;

/// One atomic on `dest` at `pe`; returns the old value.
#[inline(always)]
pub(crate) unsafe fn amo<W: Word>(
    routine: &'static str,
    c: &Ctx,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) -> W {
    // SAFETY: the core checks alignment and symmetry of `dest`.
    ok(unsafe { rshmem_core::amo::ctx_atomic(c, routine, dest, op, pe.into()) })
}

/// One non-fetching atomic on `dest` at `pe` (posted where the transport can).
#[inline(always)]
pub(crate) unsafe fn amo_post<W: Word>(
    routine: &'static str,
    c: &Ctx,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) {
    // SAFETY: the core checks alignment and symmetry of `dest`.
    ok(unsafe { rshmem_core::amo::ctx_atomic_post(c, routine, dest, op, pe.into()) })
}

/// A fetching nonblocking atomic: the old value lands in `fetch`.
#[inline(always)]
pub(crate) unsafe fn amo_nbi<W: Word>(
    routine: &'static str,
    c: &Ctx,
    fetch: *mut W,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) {
    nonnull_mut(routine, "fetch", fetch, 1);
    // SAFETY: `fetch` is the caller's local (spec); the core checks `dest`.
    ok(unsafe { rshmem_core::amo::ctx_atomic_nbi(c, routine, fetch, dest, op, pe.into()) })
}
