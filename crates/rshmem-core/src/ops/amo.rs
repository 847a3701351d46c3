//! Atomic memory operations. Typed faces restrict which operations each type gets (the
//! spec's standard, extended and bitwise classes); here every [`Word`] takes every
//! [`AmoOp`].

use crate::ctx::Ctx;
use crate::error::{At, Result};
use crate::profile::{Family, Pc};
use crate::request::{self, ReqHandle};
use crate::runtime::{rt, Runtime};
use crate::transport::SymAddr;
use crate::word::{AmoOp, Word};

/// The checks every AMO makes: the runtime, `pe` in the context's team, `dest` aligned
/// and symmetric.
#[inline(always)]
fn target<W: Word>(
    ctx: &Ctx,
    routine: &'static str,
    dest: *const W,
    pe: i64,
) -> Result<(&'static Runtime, usize, SymAddr)> {
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, pe)?;
    rt.aligned(routine, "dest", dest as usize, W::SIZE)?;
    let addr = rt.sym(routine, "dest", dest as usize, W::SIZE)?;
    Ok((rt, pe, addr))
}

/// `shmem_ctx_atomic_*`: applies `op` to the symmetric word `dest` on `pe` (a PE of the
/// context's team) and returns its previous value.
///
/// # Safety
/// None beyond the checks made here (`dest` symmetric and aligned, `pe` valid); the
/// function is `unsafe` because `dest` is a raw address.
// Always in line: callers name the operation as a constant (every C entry point does),
// so the dispatch on `op` folds away; out of line it costs a third of an AMO.
#[inline(always)]
pub unsafe fn ctx_atomic<W: Word>(
    ctx: &Ctx,
    routine: &'static str,
    dest: *const W,
    op: AmoOp<W>,
    pe: i64,
) -> Result<W> {
    let (rt, pe, addr) = target(ctx, routine, dest, pe)?;
    crate::profile::counted!(
        Family::Amo,
        W::SIZE,
        ctx,
        Pc::Read,
        rt.fabric.amo(ctx.state(), pe, addr, op).at(routine)
    )
}

/// `shmem_ctx_atomic_{set,inc,add,and,or,xor}`: a non-fetching atomic. Through UCX it is
/// posted (no round trip); delivered by the context's next quiet, and in order with later
/// operations after a fence.
///
/// # Safety
/// As [`ctx_atomic`].
#[inline(always)]
pub unsafe fn ctx_atomic_post<W: Word>(
    ctx: &Ctx,
    routine: &'static str,
    dest: *const W,
    op: AmoOp<W>,
    pe: i64,
) -> Result<()> {
    let (rt, pe, addr) = target(ctx, routine, dest, pe)?;
    crate::profile::counted!(
        Family::Amo,
        W::SIZE,
        ctx,
        Pc::Write,
        rt.fabric.amo_post(ctx.state(), pe, addr, op).at(routine)
    )
}

/// The fetching non-blocking form: the previous value lands in `*fetch` (at the latest at
/// the context's next quiet; on shared memory, at once).
///
/// # Safety
/// `fetch` is writable and aligned.
#[inline]
pub unsafe fn ctx_atomic_nbi<W: Word>(
    ctx: &Ctx,
    routine: &'static str,
    fetch: *mut W,
    dest: *const W,
    op: AmoOp<W>,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    let old = unsafe { ctx_atomic(ctx, routine, dest, op, pe)? };
    // SAFETY: the caller guarantees `fetch` is writable.
    unsafe { fetch.write(old) };
    Ok(())
}

/// `shmemx_ctx_*_nbe` fetching atomics: the previous value lands in `*fetch` by the time
/// the request in `slot` (allocated when `None`, joined when live) completes. On shared
/// memory the operation completes before the call returns.
///
/// # Safety
/// `fetch` is writable and aligned; a handle in `slot` is live.
#[inline]
pub unsafe fn atomic_nbe<W: Word>(
    ctx: &Ctx,
    routine: &'static str,
    fetch: *mut W,
    dest: *const W,
    op: AmoOp<W>,
    pe: i64,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    request::check_slot(routine, slot)?;
    // SAFETY: forwarded contract.
    let old = unsafe { ctx_atomic(ctx, routine, dest, op, pe)? };
    // SAFETY: the caller guarantees `fetch` is writable.
    unsafe { fetch.write(old) };
    request::settle(slot);
    Ok(())
}
