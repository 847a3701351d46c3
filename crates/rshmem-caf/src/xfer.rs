//! Coindexed reads and writes (`caf_get`, `caf_send`, `caf_sendget`) of array sections
//! of any rank, over the core's contiguous, strided and blocked put/get.
//!
//! The remote section is normalized first (unit dimensions dropped, dimensions that
//! continue each other merged). Then, as in seed 003: when its first dimension is
//! contiguous, one transfer per run (the runs of the next dimension as one blocked
//! transfer); otherwise one strided transfer along a *base dimension*, the larger of the
//! first two, for every index of the others. The local side is always one contiguous
//! buffer: the program's own array when it is contiguous and of the same type and kind,
//! else a temporary packed with conversion (which also makes overlapping source and
//! destination on the same image safe).

use rshmem_core::{rma, Ctx};

use crate::convert::{check, convert, same_repr};
use crate::desc::{Shape, Ty, MAX_DIMS};
use crate::stat_errmsg::{unsupported, CafError, CafResult, STAT_ERROR};

/// A local array: first element, shape, element type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View {
    /// Address of the first element.
    pub base: *mut u8,
    /// Shape (byte strides).
    pub shape: Shape,
    /// Element type.
    pub ty: Ty,
}

/// Moves the elements of the remote section `shape` at `remote` (a symmetric address) on
/// `pe` to (`put`: from) the contiguous local buffer `local`, elements of `elem` bytes in
/// element order.
///
/// # Safety
/// `local` is valid for `shape.count() * elem` bytes.
#[allow(clippy::needless_range_loop)] // parallel arrays indexed by dimension
unsafe fn remote_xfer(
    routine: &'static str,
    put: bool,
    pe: usize,
    remote: usize,
    shape: &Shape,
    elem: usize,
    local: *mut u8,
) -> CafResult {
    let ctx = Ctx::default_ctx();
    let pe = pe as i64;
    let s = shape.normalized();
    if s.count() == 0 {
        return Ok(());
    }
    let r = remote as *mut u8;
    // SAFETY: every remote address below lies in the registered coarray (the compiler
    // computed the section inside it; the core checks it is symmetric) and every local one
    // inside `local`, which covers `count * elem` bytes (contract).
    unsafe {
        if s.rank == 0 {
            return Ok(xfer(ctx, routine, put, r, local, elem, pe)?);
        }
        // Local element strides of each dimension (the buffer is dense).
        let mut lstride = [0isize; MAX_DIMS];
        let mut acc = 1isize;
        for k in 0..s.rank {
            lstride[k] = acc;
            acc *= s.extent[k] as isize;
        }
        if s.stride[0] == elem as isize {
            // Contiguous runs of the first dimension.
            let run = s.extent[0] * elem;
            if s.rank == 1 {
                return Ok(xfer(ctx, routine, put, r, local, run, pe)?);
            }
            let outer = outer_dims(&s, &lstride, &[0, 1], elem);
            outer.for_each(|_, roff, loff| {
                let (rr, ll) = (r.wrapping_offset(roff), local.wrapping_offset(loff));
                let (dest, src, dst, sst) = if put {
                    (rr, ll, s.stride[1], run as isize)
                } else {
                    (ll, rr, run as isize, s.stride[1])
                };
                let b = rma::Blocks {
                    dest,
                    src,
                    dst,
                    sst,
                    block: run,
                    count: s.extent[1],
                    size: 1,
                };
                rma::ctx_strided(ctx, routine, put, b, pe)
            })?;
            return Ok(());
        }
        // Strided first dimension: strided transfers along the longer of the first two.
        let b = if s.rank >= 2 && s.extent[1] > s.extent[0] {
            1
        } else {
            0
        };
        if s.stride[b] % elem as isize != 0 {
            // A stride that is no multiple of the element (a component of an array of
            // derived type): one element at a time.
            let outer = outer_dims(&s, &lstride, &[], elem);
            outer.for_each(|_, roff, loff| {
                xfer(
                    ctx,
                    routine,
                    put,
                    r.wrapping_offset(roff),
                    local.wrapping_offset(loff),
                    elem,
                    pe,
                )
            })?;
            return Ok(());
        }
        let rs = s.stride[b] / elem as isize;
        let ls = lstride[b];
        let outer = outer_dims(&s, &lstride, &[b], elem);
        outer.for_each(|_, roff, loff| {
            let (rr, ll) = (r.wrapping_offset(roff), local.wrapping_offset(loff));
            let (dest, src, dst, sst) = if put {
                (rr, ll, rs, ls)
            } else {
                (ll, rr, ls, rs)
            };
            let blocks = rma::Blocks {
                dest,
                src,
                dst,
                sst,
                block: 1,
                count: s.extent[b],
                size: elem,
            };
            rma::ctx_strided(ctx, routine, put, blocks, pe)
        })?;
    }
    Ok(())
}

/// One contiguous put or get.
///
/// # Safety
/// As [`remote_xfer`].
unsafe fn xfer(
    ctx: &Ctx,
    routine: &'static str,
    put: bool,
    remote: *mut u8,
    local: *mut u8,
    n: usize,
    pe: i64,
) -> rshmem_core::Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        if put {
            rma::ctx_put(ctx, routine, remote, local, n, pe)
        } else {
            rma::ctx_get(ctx, routine, local, remote, n, pe)
        }
    }
}

/// The dimensions of `s` other than `skip`, with remote and local byte strides.
struct Outer {
    rank: usize,
    extent: [usize; MAX_DIMS],
    rstride: [isize; MAX_DIMS],
    lstride: [isize; MAX_DIMS],
}

fn outer_dims(s: &Shape, lstride: &[isize; MAX_DIMS], skip: &[usize], elem: usize) -> Outer {
    let mut o = Outer {
        rank: 0,
        extent: [1; MAX_DIMS],
        rstride: [0; MAX_DIMS],
        lstride: [0; MAX_DIMS],
    };
    for k in (0..s.rank).filter(|k| !skip.contains(k)) {
        o.extent[o.rank] = s.extent[k];
        o.rstride[o.rank] = s.stride[k];
        o.lstride[o.rank] = lstride[k] * elem as isize;
        o.rank += 1;
    }
    o
}

impl Outer {
    /// Calls `f(i, remote offset, local offset)` for every index, stopping at an error.
    #[allow(clippy::needless_range_loop)] // parallel arrays indexed by dimension
    fn for_each(
        &self,
        mut f: impl FnMut(usize, isize, isize) -> rshmem_core::Result<()>,
    ) -> rshmem_core::Result<()> {
        let n: usize = self.extent[..self.rank].iter().product();
        let mut idx = [0usize; MAX_DIMS];
        let (mut r, mut l) = (0isize, 0isize);
        for i in 0..n {
            f(i, r, l)?;
            for k in 0..self.rank {
                idx[k] += 1;
                r += self.rstride[k];
                l += self.lstride[k];
                if idx[k] < self.extent[k] {
                    break;
                }
                r -= self.rstride[k] * self.extent[k] as isize;
                l -= self.lstride[k] * self.extent[k] as isize;
                idx[k] = 0;
            }
        }
        Ok(())
    }
}

fn shapes_differ(routine: &str, dst: usize, src: usize) -> CafError {
    CafError::new(
        STAT_ERROR,
        format!("{routine}: destination has {dst} elements but source has {src}"),
    )
}

/// Writes local `src` into the remote section `dshape` (type `dty`) at symmetric address
/// `remote` on `pe`, converting each element; a one-element source fills every element.
///
/// # Safety
/// `src` describes valid local memory.
pub(crate) unsafe fn put_from(
    routine: &'static str,
    pe: usize,
    remote: usize,
    dshape: &Shape,
    dty: Ty,
    src: &View,
    same_image_overlap: bool,
) -> CafResult {
    let n = dshape.count();
    if n == 0 {
        return Ok(());
    }
    let ns = src.shape.count();
    if ns != n && ns != 1 {
        return Err(shapes_differ(routine, n, ns));
    }
    if let Err(what) = check(dty, src.ty) {
        unsupported(routine, &what);
    }
    if same_repr(dty, src.ty) && ns == n && src.shape.is_dense(dty.len) && !same_image_overlap {
        // SAFETY: a dense source of `n` elements (contract).
        unsafe { remote_xfer(routine, true, pe, remote, dshape, dty.len, src.base)? };
    } else {
        let mut buf = vec![0u8; n * dty.len];
        let p = buf.as_mut_ptr();
        // SAFETY: each element of the source is valid (contract); `buf` holds `n`.
        unsafe {
            src.shape.for_each(|i, off| {
                convert(p.add(i * dty.len), dty, src.base.offset(off), src.ty);
            });
            if ns == 1 {
                for i in 1..n {
                    std::ptr::copy_nonoverlapping(p, p.add(i * dty.len), dty.len);
                }
            }
            remote_xfer(routine, true, pe, remote, dshape, dty.len, p)?;
        }
    }
    // Blocking semantics: the value is at the target when the statement ends. The core
    // completes the puts to that image at the cost of its route: nothing through shared
    // memory, where a blocking put is a finished copy (CAF-ABI.md §4.3: the image control
    // statements still quiet, for their release ordering), a quiet through the network.
    rshmem_core::order::ctx_complete_puts(Ctx::default_ctx(), routine, pe as i64)?;
    Ok(())
}

/// Reads the remote section `sshape` (type `sty`) at `remote` on `pe` into local `dst`,
/// converting each element; a one-element source fills every element of `dst`.
///
/// # Safety
/// `dst` describes valid, writable local memory.
pub(crate) unsafe fn get_into(
    routine: &'static str,
    pe: usize,
    remote: usize,
    sshape: &Shape,
    sty: Ty,
    dst: &View,
    same_image_overlap: bool,
) -> CafResult {
    let nd = dst.shape.count();
    if nd == 0 {
        return Ok(());
    }
    let ns = sshape.count();
    if ns != nd && ns != 1 {
        return Err(shapes_differ(routine, nd, ns));
    }
    if let Err(what) = check(dst.ty, sty) {
        unsupported(routine, &what);
    }
    if same_repr(dst.ty, sty) && ns == nd && dst.shape.is_dense(sty.len) && !same_image_overlap {
        // SAFETY: a dense destination of `nd` elements (contract).
        unsafe { remote_xfer(routine, false, pe, remote, sshape, sty.len, dst.base)? };
        return Ok(());
    }
    let mut buf = vec![0u8; ns * sty.len];
    let p = buf.as_mut_ptr();
    // SAFETY: `buf` holds `ns` elements; each element of `dst` is valid (contract).
    unsafe {
        remote_xfer(routine, false, pe, remote, sshape, sty.len, p)?;
        dst.shape.for_each(|i, off| {
            let s = if ns == 1 { p } else { p.add(i * sty.len) };
            convert(dst.base.offset(off), dst.ty, s, sty);
        });
    }
    Ok(())
}

/// `caf_sendget`: when one side is this image (a halo copied into one's own coarray, as
/// stencil codes do), a get straight into it or a put straight from it; otherwise reads
/// the source section into a temporary, then writes it.
///
/// # Safety
/// The addresses are symmetric addresses of registered coarrays.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send_get(
    routine: &'static str,
    dst_pe: usize,
    dst_remote: usize,
    dshape: &Shape,
    dty: Ty,
    src_pe: usize,
    src_remote: usize,
    sshape: &Shape,
    sty: Ty,
) -> CafResult {
    let me = crate::image::state(routine).me;
    // A symmetric address of this image is its own address of the coarray.
    if dst_pe == me && src_pe != me {
        let dst = View {
            base: dst_remote as *mut u8,
            shape: *dshape,
            ty: dty,
        };
        // SAFETY: this image's part of a registered coarray, `dshape` inside it.
        return unsafe { get_into(routine, src_pe, src_remote, sshape, sty, &dst, false) };
    }
    if src_pe == me && dst_pe != me {
        let src = View {
            base: src_remote as *mut u8,
            shape: *sshape,
            ty: sty,
        };
        // SAFETY: as above, for the source.
        return unsafe { put_from(routine, dst_pe, dst_remote, dshape, dty, &src, false) };
    }
    let ns = sshape.count();
    let mut buf = vec![0u8; ns * sty.len];
    let tmp = View {
        base: buf.as_mut_ptr(),
        shape: Shape::dense(ns, sty.len),
        ty: sty,
    };
    // SAFETY: `tmp` is our buffer of `ns` elements.
    unsafe {
        get_into(routine, src_pe, src_remote, sshape, sty, &tmp, false)?;
        put_from(routine, dst_pe, dst_remote, dshape, dty, &tmp, false)
    }
}
