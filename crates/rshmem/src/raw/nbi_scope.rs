//! Implicit non-blocking operations (`_nbi`): the scope whose quiet completes them.

use std::marker::PhantomData;
use std::mem::size_of_val;

use rshmem_core::{amo, rma, signal, AmoOp, SignalOp};

use super::{bounds, pe_arg, quiet, RawCtx, Region};
use crate::atomic::AmoExtended;
use crate::error::Result;
use crate::remote::Remote;

/// Proof that a context is quieted before `'env` ends: only [`with_quiet`] makes one, and
/// it never escapes the closure. Invariant in `'env`, so buffers borrowed for `'env`
/// outlive that quiet.
#[derive(Debug)]
pub(crate) struct Quiet<'env> {
    ctx: &'env RawCtx,
    _env: PhantomData<&'env mut &'env ()>,
}

impl Drop for Quiet<'_> {
    fn drop(&mut self) {
        // Cannot fail while a guard is live; on an error there is nothing to complete.
        let _ = quiet(self.ctx);
    }
}

/// Runs `f` with a [`Quiet`] token for `ctx`, and quiets `ctx` when `f` returns or
/// unwinds.
pub(crate) fn with_quiet<'env, R>(
    ctx: &'env RawCtx,
    f: impl for<'q> FnOnce(&'q Quiet<'env>) -> R,
) -> R {
    let q = Quiet {
        ctx,
        _env: PhantomData,
    };
    f(&q)
}

/// A buffer that a non-blocking operation may still write; handed back after a quiet of
/// the context the operation was issued on. Not `Send`: it is completed on the thread
/// that issued it.
#[derive(Debug)]
pub(crate) struct Pending<'env, B: ?Sized> {
    buf: &'env mut B,
    ctx: &'env RawCtx,
    _thread: PhantomData<*const ()>,
}

impl<'env, B: ?Sized> Pending<'env, B> {
    pub(crate) fn complete(self) -> &'env mut B {
        let _ = quiet(self.ctx);
        self.buf
    }
}

/// Non-blocking put; `src` stays borrowed until the scope's quiet.
pub(crate) fn put_nbi<'env, T: Remote>(
    q: &Quiet<'env>,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &'env [T],
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    // SAFETY: `src` is borrowed for `'env`, which outlives the quiet that completes the
    // put (the `Quiet` token, of this context); the destination range was checked.
    unsafe {
        rma::ctx_put_nbi(
            q.ctx.get(),
            routine,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Non-blocking get into `dst`, which is handed back by [`Pending::complete`].
pub(crate) fn get_nbi<'env, T: Remote>(
    q: &Quiet<'env>,
    routine: &'static str,
    dst: &'env mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
) -> Result<Pending<'env, [T]>> {
    bounds(routine, "source", src.len, start, dst.len())?;
    // SAFETY: `dst` is exclusively borrowed for `'env`, past the completing quiet, and
    // only handed back after a quiet of the same context; the source range was checked.
    unsafe {
        rma::ctx_get_nbi(
            q.ctx.get(),
            routine,
            dst.as_mut_ptr().cast(),
            src.at(start).cast(),
            size_of_val(dst),
            pe_arg(pe),
        )?
    };
    Ok(Pending {
        buf: dst,
        ctx: q.ctx,
        _thread: PhantomData,
    })
}

/// Fetching non-blocking AMO: the old value of `dst[i]` on `pe` lands in `fetch`.
pub(crate) fn amo_nbi<'env, T: AmoExtended>(
    q: &Quiet<'env>,
    routine: &'static str,
    fetch: &'env mut T,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<Pending<'env, T>> {
    bounds(routine, "dest", dst.len, i, 1)?;
    // SAFETY: `fetch` is exclusively borrowed past the completing quiet; `dst[i]` is a
    // symmetric, aligned word.
    unsafe {
        amo::ctx_atomic_nbi(
            q.ctx.get(),
            routine,
            std::ptr::from_mut(fetch),
            dst.at(i),
            op,
            pe_arg(pe),
        )?
    };
    Ok(Pending {
        buf: fetch,
        ctx: q.ctx,
        _thread: PhantomData,
    })
}

/// Non-blocking put-with-signal; `src` stays borrowed until the scope's quiet.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal_nbi<'env, T: Remote>(
    q: &Quiet<'env>,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &'env [T],
    sig: &Region<u64>,
    value: u64,
    op: SignalOp,
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: `src` is borrowed for `'env`, past the completing quiet of this context;
    // both destinations were checked.
    unsafe {
        signal::ctx_put_signal(
            q.ctx.get(),
            routine,
            true,
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
