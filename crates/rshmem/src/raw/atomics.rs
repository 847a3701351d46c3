//! Atomics and signals: AMOs, put-with-signal, signal operations and waits, and the
//! ordering routines (`fence`, `quiet`).

use std::mem::size_of_val;

use rshmem_core::{amo, order, signal, AmoOp, Cmp, SignalOp};

use super::{bounds, pe_arg, RawCtx, Region};
use crate::atomic::AmoExtended;
use crate::error::Result;
use crate::remote::Remote;

/// `op` on element `i` of `dst` on `pe`; returns the previous value.
pub(crate) fn amo<T: AmoExtended>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<T> {
    bounds(routine, "dest", dst.len, i, 1)?;
    // SAFETY: element `i` is inside a symmetric block aligned for `T`.
    Ok(unsafe { amo::ctx_atomic(ctx.get(), routine, dst.at(i), op, pe_arg(pe))? })
}

/// `op` on element `i` of `dst` on `pe`, not fetching (a write, as C's non-fetching
/// atomics: through UCX posted, complete at the context's next quiet).
pub(crate) fn amo_post<T: AmoExtended>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, i, 1)?;
    // SAFETY: element `i` is inside a symmetric block aligned for `T`.
    unsafe { amo::ctx_atomic_post(ctx.get(), routine, dst.at(i), op, pe_arg(pe)) }
        .map_err(Into::into)
}

/// Put-with-signal: `src` to `dst[start..]` on `pe`, then `op` on `sig` there.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &[T],
    sig: &Region<u64>,
    value: u64,
    op: SignalOp,
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: `src` is readable for its length; both destinations were checked.
    unsafe {
        signal::ctx_put_signal(
            ctx.get(),
            routine,
            false,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            sig.as_ptr(),
            value,
            op,
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// `signal_set`/`signal_add` on `sig` at `pe`.
pub(crate) fn signal_op(
    ctx: &RawCtx,
    routine: &'static str,
    sig: &Region<u64>,
    value: u64,
    op: SignalOp,
    pe: usize,
) -> Result<()> {
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: a symmetric, aligned `u64`.
    unsafe { signal::ctx_signal_op(ctx.get(), routine, sig.as_ptr(), value, op, pe_arg(pe))? };
    Ok(())
}

/// `fence` on a context.
pub(crate) fn fence(ctx: &RawCtx) -> Result<()> {
    Ok(order::ctx_fence(ctx.get())?)
}

/// `quiet` on a context.
pub(crate) fn quiet(ctx: &RawCtx) -> Result<()> {
    Ok(order::ctx_quiet(ctx.get())?)
}

/// Waits until the local signal satisfies `cmp value`; returns the value that did.
pub(crate) fn signal_wait_until(
    routine: &'static str,
    sig: &Region<u64>,
    cmp: Cmp,
    value: u64,
) -> Result<u64> {
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: a symmetric, aligned `u64`.
    Ok(unsafe { signal::signal_wait_until(routine, sig.as_ptr(), cmp, value)? })
}
