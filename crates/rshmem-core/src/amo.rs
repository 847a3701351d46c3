//! Atomic memory operations on the default context. Typed faces restrict which operations
//! each type gets (the spec's standard, extended and bitwise classes); here every
//! [`Word`] takes every [`AmoOp`].
#![allow(unsafe_code)]

use crate::error::Result;
use crate::runtime::rt;
use crate::word::{AmoOp, Word};

/// Applies `op` to the symmetric word `dest` on `pe` and returns its previous value.
///
/// # Safety
/// None beyond the checks made here (`dest` symmetric and aligned, `pe` valid); the
/// function is `unsafe` because `dest` is a raw address.
#[inline]
pub unsafe fn atomic<W: Word>(
    routine: &'static str,
    dest: *const W,
    op: AmoOp<W>,
    pe: i64,
) -> Result<W> {
    let rt = rt(routine)?;
    let pe = rt.pe(routine, pe)?;
    rt.aligned(routine, "dest", dest as usize, W::SIZE)?;
    let addr = rt.sym(routine, "dest", dest as usize, W::SIZE)?;
    rt.amo(routine, pe, addr, op)
}

/// The fetching non-blocking form: the previous value lands in `*fetch` (at the latest at
/// the next quiet; on shared memory, at once).
///
/// # Safety
/// `fetch` is writable and aligned.
#[inline]
pub unsafe fn atomic_nbi<W: Word>(
    routine: &'static str,
    fetch: *mut W,
    dest: *const W,
    op: AmoOp<W>,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let old = unsafe { atomic(routine, dest, op, pe)? };
    // SAFETY: the caller guarantees `fetch` is writable.
    unsafe { fetch.write(old) };
    Ok(())
}
