//! RMA: blocking puts and gets, contiguous, strided (`iput`/`iget`) and blocked
//! (`ibput`/`ibget`).

use std::mem::{size_of, size_of_val, MaybeUninit};

use rshmem_core::rma;

use super::{bounds, pe_arg, span, RawCtx, Region};
use crate::error::{Error, Result};
use crate::remote::Remote;

/// Blocking put of `src` to elements `start..` of `dst` on `pe`.
pub(crate) fn put<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &[T],
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    // SAFETY: `src` is readable for its length; the destination range was checked.
    unsafe {
        rma::ctx_put(
            ctx.get(),
            routine,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Blocking get of elements `start..` of `src` on `pe` into `dst`.
pub(crate) fn get<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
) -> Result<()> {
    bounds(routine, "source", src.len, start, dst.len())?;
    // SAFETY: `dst` is writable for its length; any bytes form valid `T`s (`Remote`).
    unsafe {
        rma::ctx_get(
            ctx.get(),
            routine,
            dst.as_mut_ptr().cast(),
            src.at(start).cast(),
            size_of_val(dst),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Blocking read of element `i` of `src` on `pe`.
pub(crate) fn g<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    src: &Region<T>,
    i: usize,
    pe: usize,
) -> Result<T> {
    bounds(routine, "source", src.len, i, 1)?;
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` is writable for one `T`.
    unsafe {
        rma::ctx_get(
            ctx.get(),
            routine,
            v.as_mut_ptr().cast(),
            src.at(i).cast(),
            size_of::<T>(),
            pe_arg(pe),
        )?
    };
    // SAFETY: the get filled every byte; any bytes form a valid `T` (`Remote`).
    Ok(unsafe { v.assume_init() })
}

/// One side of a strided transfer: a start element and a stride, both in elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strided {
    pub(crate) start: usize,
    pub(crate) stride: usize,
}

fn stride_arg(stride: usize, n: usize) -> isize {
    // A single element ignores the stride; otherwise `span` proved it small.
    if n <= 1 {
        1
    } else {
        stride as isize
    }
}

/// `n` elements from `src` (local) to `dst` on `pe`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn iput<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    d: Strided,
    src: &[T],
    s: Strided,
    n: usize,
    pe: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    span(routine, "dest", dst.len, d.start, d.stride, n)?;
    span(routine, "source", src.len(), s.start, s.stride, n)?;
    // SAFETY: both sides' elements lie inside their objects (checked above).
    unsafe {
        let b = rma::Blocks {
            dest: dst.at(d.start).cast(),
            src: src.as_ptr().add(s.start).cast(),
            dst: stride_arg(d.stride, n),
            sst: stride_arg(s.stride, n),
            block: 1,
            count: n,
            size: size_of::<T>(),
        };
        rma::ctx_strided(ctx.get(), routine, true, b, pe_arg(pe))?
    };
    Ok(())
}

/// `n` elements from `src` on `pe` to `dst` (local).
#[allow(clippy::too_many_arguments)]
pub(crate) fn iget<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &mut [T],
    d: Strided,
    src: &Region<T>,
    s: Strided,
    n: usize,
    pe: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    span(routine, "dest", dst.len(), d.start, d.stride, n)?;
    span(routine, "source", src.len, s.start, s.stride, n)?;
    // SAFETY: both sides' elements lie inside their objects (checked above).
    unsafe {
        let b = rma::Blocks {
            dest: dst.as_mut_ptr().add(d.start).cast(),
            src: src.at(s.start).cast(),
            dst: stride_arg(d.stride, n),
            sst: stride_arg(s.stride, n),
            block: 1,
            count: n,
            size: size_of::<T>(),
        };
        rma::ctx_strided(ctx.get(), routine, false, b, pe_arg(pe))?
    };
    Ok(())
}

/// Checks that `nblocks` blocks of `bsize` elements, starting every `stride` elements
/// from `start`, lie inside `len` elements.
fn blocks(
    routine: &'static str,
    arg: &'static str,
    len: usize,
    side: Strided,
    bsize: usize,
    nblocks: usize,
) -> Result<()> {
    let end = (nblocks - 1)
        .checked_mul(side.stride)
        .and_then(|x| x.checked_add(side.start))
        .and_then(|x| x.checked_add(bsize));
    match end {
        Some(end) if end <= len => Ok(()),
        _ => Err(Error::OutOfBounds {
            routine,
            arg,
            len,
            range: side.start..end.unwrap_or(usize::MAX),
        }),
    }
}

/// Blocked transfer (`ibput`/`ibget`): `nblocks` blocks of `bsize` elements between the
/// local `local` and the symmetric `sym` on `pe`, in the direction `is_put`.
#[allow(clippy::too_many_arguments)]
fn blocked<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    is_put: bool,
    sym: (&Region<T>, Strided),
    local: (*mut T, usize, Strided),
    bsize: usize,
    nblocks: usize,
    pe: usize,
) -> Result<()> {
    if nblocks == 0 || bsize == 0 || size_of::<T>() == 0 {
        return Ok(());
    }
    let (region, s) = sym;
    let (lptr, llen, l) = local;
    let (sym_arg, local_arg) = if is_put {
        ("dest", "source")
    } else {
        ("source", "dest")
    };
    blocks(routine, sym_arg, region.len, s, bsize, nblocks)?;
    blocks(routine, local_arg, llen, l, bsize, nblocks)?;
    // Both extents fit in an object, so the strides fit in an `isize` of bytes.
    let (ss, ls) = (s.stride as isize, l.stride as isize);
    // SAFETY: `l.start` is inside the local object (checked).
    let lp = unsafe { lptr.add(l.start) };
    let sp = region.at(s.start);
    let (dest, src, dst_stride, src_stride) = if is_put {
        (sp, lp.cast_const(), ss, ls)
    } else {
        (lp, sp.cast_const(), ls, ss)
    };
    // SAFETY: every block of both sides lies inside its object (checked above); the local
    // side is readable (put) or writable (get) through the caller's borrow.
    unsafe {
        let b = rma::Blocks {
            dest: dest.cast(),
            src: src.cast(),
            dst: dst_stride,
            sst: src_stride,
            block: bsize,
            count: nblocks,
            size: size_of::<T>(),
        };
        rma::ctx_strided(ctx.get(), routine, is_put, b, pe_arg(pe))?
    };
    Ok(())
}

/// `ibput`: blocks from `src` (local) to `dst` on `pe`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ibput<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    d: Strided,
    src: &[T],
    s: Strided,
    bsize: usize,
    nblocks: usize,
    pe: usize,
) -> Result<()> {
    blocked(
        ctx,
        routine,
        true,
        (dst, d),
        (src.as_ptr().cast_mut(), src.len(), s),
        bsize,
        nblocks,
        pe,
    )
}

/// `ibget`: blocks from `src` on `pe` to `dst` (local).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ibget<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &mut [T],
    d: Strided,
    src: &Region<T>,
    s: Strided,
    bsize: usize,
    nblocks: usize,
    pe: usize,
) -> Result<()> {
    blocked(
        ctx,
        routine,
        false,
        (src, s),
        (dst.as_mut_ptr(), dst.len(), d),
        bsize,
        nblocks,
        pe,
    )
}
