//! Vector subscripts on coindexed objects (`a(idx)[img] = ...`, `x = b(idx, 2:5)[img]`),
//! and the element lists the `_by_ref` forms build the same way.
//!
//! gfortran 12 passes one `caf_vector_t` per dimension of the remote descriptor: a vector
//! of Fortran indices (`nvec > 0`) or a triplet. The descriptor gives the lower bound and
//! stride of each dimension of the whole array (its extents are not the section's). A
//! [`Section`] holds the byte offsets of each dimension's selected elements; the transfer
//! splits the first dimension into runs of equal spacing (contiguous runs become one
//! put/get, equally spaced ones one strided put/get) and repeats them for every index of
//! the other dimensions. The local side is always a dense temporary, packed or unpacked
//! with type and kind conversion, so overlap on the same image is safe.

use std::ffi::c_void;

use rshmem_core::{rma, Ctx};

use crate::convert::{check, convert};
use crate::desc::{DescPtr, Dim, Header, Shape, Ty, MAX_DIMS};
use crate::image::{pe_of, state};
use crate::stat_errmsg::{unsupported, CafError, CafResult, STAT_ERROR};
use crate::token::Token;
use crate::xfer::{self, View};

/// `caf_vector_t.u.v`.
#[repr(C)]
#[derive(Clone, Copy)]
struct VecPart {
    vector: *const u8,
    kind: i32,
}

/// `caf_vector_t.u.triplet`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Triplet {
    lower: isize,
    upper: isize,
    stride: isize,
}

/// `caf_vector_t.u`.
#[repr(C)]
#[derive(Clone, Copy)]
union VecUnion {
    v: VecPart,
    t: Triplet,
}

/// `caf_vector_t` (32 bytes): one per dimension of the remote descriptor.
#[repr(C)]
#[derive(Clone, Copy)]
struct CafVector {
    nvec: usize,
    u: VecUnion,
}

/// Reads `nvec` indices of integer kind `kind` from `p`.
///
/// # Safety
/// `p` is readable for `nvec` integers of kind `kind`.
pub(crate) unsafe fn indices(
    routine: &str,
    p: *const u8,
    nvec: usize,
    kind: i32,
) -> CafResult<Vec<isize>> {
    if p.is_null() && nvec > 0 {
        return Err(CafError::new(
            STAT_ERROR,
            format!("{routine}: vector subscript with no data"),
        ));
    }
    let mut v = Vec::with_capacity(nvec);
    for i in 0..nvec {
        // SAFETY: contract; unaligned reads because nothing promises alignment.
        let x = unsafe {
            match kind {
                1 => p.add(i).cast::<i8>().read_unaligned() as isize,
                2 => p.add(2 * i).cast::<i16>().read_unaligned() as isize,
                4 => p.add(4 * i).cast::<i32>().read_unaligned() as isize,
                8 => p.add(8 * i).cast::<i64>().read_unaligned() as isize,
                16 => p.add(16 * i).cast::<i128>().read_unaligned() as isize,
                _ => {
                    return Err(CafError::new(
                        STAT_ERROR,
                        format!("{routine}: vector subscript of integer kind {kind}"),
                    ))
                }
            }
        };
        v.push(x);
    }
    Ok(v)
}

/// The values `lower, lower+stride, ...` not past `upper`.
pub(crate) fn triplet(
    routine: &str,
    lower: isize,
    upper: isize,
    stride: isize,
) -> CafResult<Vec<isize>> {
    if stride == 0 {
        return Err(CafError::new(
            STAT_ERROR,
            format!("{routine}: section stride of zero"),
        ));
    }
    let n = (upper - lower) / stride + 1;
    Ok((0..n.max(0)).map(|i| lower + i * stride).collect())
}

/// The elements of a remote section, dimension by dimension: element `(i0, i1, ...)` lies
/// `dims[0][i0] + dims[1][i1] + ...` bytes from the section's base address.
#[derive(Debug, Clone, Default)]
pub(crate) struct Section {
    /// Byte offsets of each dimension's elements (no dimension: one element).
    pub dims: Vec<Vec<isize>>,
}

impl Section {
    /// The section descriptor `d` and vector subscripts `v` (one per dimension) select.
    ///
    /// # Safety
    /// `d` is a descriptor of `rank` dimensions; `v` holds `rank` `caf_vector_t`s.
    unsafe fn of(routine: &str, d: DescPtr, v: *const c_void) -> CafResult<Section> {
        // SAFETY: contract.
        let h = unsafe { &*d };
        let rank = (h.rank.max(0) as usize).min(MAX_DIMS);
        let span = if h.span != 0 {
            h.span
        } else {
            h.elem_len as isize
        };
        let dims = (d as *const u8).wrapping_add(std::mem::size_of::<Header>()) as *const Dim;
        let mut s = Section::default();
        for k in 0..rank {
            // SAFETY: contract: `rank` triplets and `rank` vectors.
            let (dim, cv) = unsafe {
                (
                    dims.add(k).read_unaligned(),
                    (v as *const CafVector).add(k).read_unaligned(),
                )
            };
            let idx = if cv.nvec == 0 {
                // SAFETY: nvec == 0 selects the triplet.
                let t = unsafe { cv.u.t };
                triplet(routine, t.lower, t.upper, t.stride)?
            } else {
                // SAFETY: nvec > 0 selects the vector, of `nvec` integers (contract).
                unsafe {
                    let p = cv.u.v;
                    indices(routine, p.vector, cv.nvec, p.kind)?
                }
            };
            s.dims.push(
                idx.iter()
                    .map(|&i| (i - dim.lbound) * dim.stride * span)
                    .collect(),
            );
        }
        Ok(s)
    }

    /// Number of elements.
    pub(crate) fn count(&self) -> usize {
        self.dims.iter().map(Vec::len).product()
    }

    /// Lowest and highest element offsets (an empty section: `(0, 0)`).
    pub(crate) fn range(&self) -> (isize, isize) {
        if self.count() == 0 {
            return (0, 0);
        }
        self.dims.iter().fold((0, 0), |(lo, hi), d| {
            (
                lo + d.iter().copied().min().unwrap_or(0),
                hi + d.iter().copied().max().unwrap_or(0),
            )
        })
    }

    /// Moves every element between the remote array whose base is the symmetric address
    /// `base` on `pe` and the dense local buffer `local` (element order, `elem` bytes each).
    ///
    /// # Safety
    /// `local` is valid for `count() * elem` bytes; every element lies in symmetric memory.
    pub(crate) unsafe fn transfer(
        &self,
        routine: &'static str,
        put: bool,
        pe: usize,
        base: usize,
        elem: usize,
        local: *mut u8,
    ) -> CafResult {
        let n = self.count();
        if n == 0 {
            return Ok(());
        }
        let ctx = Ctx::default_ctx();
        let pe = pe as i64;
        let zero = vec![0isize];
        let first = self.dims.first().unwrap_or(&zero);
        let runs = runs(first, elem);
        let outer = &self.dims[self.dims.len().min(1)..];
        let n_outer: usize = outer.iter().map(Vec::len).product();
        let mut idx = [0usize; MAX_DIMS];
        for o in 0..n_outer {
            let off: isize = outer.iter().zip(&idx).map(|(d, &i)| d[i]).sum();
            for &(start, len, step) in &runs {
                let r = (base as isize + off + first[start]) as *mut u8;
                let l = local.wrapping_add((o * first.len() + start) * elem);
                // SAFETY: `r` is an element of the remote array (contract) and `l` lies
                // in `local`, which holds all `n` elements.
                unsafe {
                    if len == 1 || step == elem as isize {
                        if put {
                            rma::ctx_put(ctx, routine, r, l, len * elem, pe)?;
                        } else {
                            rma::ctx_get(ctx, routine, l, r, len * elem, pe)?;
                        }
                    } else if step % elem as isize == 0 {
                        let rs = step / elem as isize;
                        let (dest, src, dst, sst) = if put { (r, l, rs, 1) } else { (l, r, 1, rs) };
                        let b = rma::Blocks {
                            dest,
                            src,
                            dst,
                            sst,
                            block: 1,
                            count: len,
                            size: elem,
                        };
                        rma::ctx_strided(ctx, routine, put, b, pe)?;
                    } else {
                        for e in 0..len {
                            let (rr, ll) = (r.wrapping_offset(e as isize * step), l.add(e * elem));
                            if put {
                                rma::ctx_put(ctx, routine, rr, ll, elem, pe)?;
                            } else {
                                rma::ctx_get(ctx, routine, ll, rr, elem, pe)?;
                            }
                        }
                    }
                }
            }
            for (k, d) in outer.iter().enumerate() {
                idx[k] += 1;
                if idx[k] < d.len() {
                    break;
                }
                idx[k] = 0;
            }
        }
        Ok(())
    }
}

/// Splits offsets into runs of equal spacing: (first index, length, spacing in bytes); a
/// lone element has spacing `elem`.
fn runs(offs: &[isize], elem: usize) -> Vec<(usize, usize, isize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < offs.len() {
        let step = if i + 1 < offs.len() {
            offs[i + 1] - offs[i]
        } else {
            elem as isize
        };
        let mut j = i;
        while j + 1 < offs.len() && offs[j + 1] - offs[j] == step {
            j += 1;
        }
        runs.push((i, j - i + 1, step));
        i = j + 1;
    }
    runs
}

/// A remote section as a transfer sees it: a strided shape or an element list.
#[derive(Debug)]
pub(crate) enum Remote {
    /// Sections without vector subscripts (the `xfer.rs` paths).
    Shape(Box<Shape>),
    /// Sections with vector subscripts or from a reference chain.
    List(Section),
}

impl Remote {
    fn count(&self) -> usize {
        match self {
            Remote::Shape(s) => s.count(),
            Remote::List(s) => s.count(),
        }
    }
}

fn count_mismatch(routine: &str, remote: usize, local: usize) -> CafError {
    CafError::new(
        STAT_ERROR,
        format!(
            "{routine}: the coindexed section has {remote} elements but the other side has \
             {local}: the two sides must have the same shape (with gfortran 12 this also \
             comes from a vector subscript that is itself a strided section: use a \
             contiguous index array)"
        ),
    )
}

/// Reads the remote elements `sec` (type `sty`) of the array at `base` on `pe` into `dst`.
///
/// # Safety
/// `dst` describes valid, writable local memory; the elements are symmetric.
pub(crate) unsafe fn get_list(
    routine: &'static str,
    pe: usize,
    base: usize,
    sec: &Section,
    sty: Ty,
    dst: &View,
) -> CafResult {
    let (n, nd) = (sec.count(), dst.shape.count());
    if nd == 0 {
        return Ok(());
    }
    // Only a scalar fills an array: a one-element list of a vector subscript does not.
    let scalar = sec.dims.is_empty();
    if n != nd && !scalar {
        return Err(count_mismatch(routine, n, nd));
    }
    if let Err(what) = check(dst.ty, sty) {
        unsupported(routine, &what);
    }
    let mut buf = vec![0u8; n * sty.len];
    let p = buf.as_mut_ptr();
    // SAFETY: `buf` holds `n` elements; each element of `dst` is valid (contract).
    unsafe {
        sec.transfer(routine, false, pe, base, sty.len, p)?;
        dst.shape.for_each(|i, off| {
            let s = if scalar { p } else { p.add(i * sty.len) };
            convert(dst.base.offset(off), dst.ty, s, sty);
        });
    }
    Ok(())
}

/// Writes local `src` into the remote elements `sec` (type `dty`) of the array at `base`
/// on `pe`; a one-element source fills every element.
///
/// # Safety
/// `src` describes valid local memory; the elements are symmetric.
pub(crate) unsafe fn put_list(
    routine: &'static str,
    pe: usize,
    base: usize,
    sec: &Section,
    dty: Ty,
    src: &View,
) -> CafResult {
    let (n, ns) = (sec.count(), src.shape.count());
    if n == 0 {
        return Ok(());
    }
    if ns != n && ns != 1 {
        return Err(count_mismatch(routine, n, ns));
    }
    if let Err(what) = check(dty, src.ty) {
        unsupported(routine, &what);
    }
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
        sec.transfer(routine, true, pe, base, dty.len, p)?;
    }
    rshmem_core::order::quiet()?;
    Ok(())
}

/// Reads `src` on `pe` into a dense local view.
///
/// # Safety
/// As [`get_list`] and `xfer::get_into`.
pub(crate) unsafe fn get_remote(
    routine: &'static str,
    pe: usize,
    base: usize,
    src: &Remote,
    sty: Ty,
    dst: &View,
) -> CafResult {
    // SAFETY: forwarded contract.
    unsafe {
        match src {
            Remote::Shape(s) => xfer::get_into(routine, pe, base, s, sty, dst, false),
            Remote::List(s) => get_list(routine, pe, base, s, sty, dst),
        }
    }
}

/// Writes a local view into `dst` on `pe`.
///
/// # Safety
/// As [`put_list`] and `xfer::put_from`.
pub(crate) unsafe fn put_remote(
    routine: &'static str,
    pe: usize,
    base: usize,
    dst: &Remote,
    dty: Ty,
    src: &View,
) -> CafResult {
    // SAFETY: forwarded contract.
    unsafe {
        match dst {
            Remote::Shape(s) => xfer::put_from(routine, pe, base, s, dty, src, false),
            Remote::List(s) => put_list(routine, pe, base, s, dty, src),
        }
    }
}

/// Copies remote `src` (on `src_pe`) to remote `dst` (on `dst_pe`) through a temporary.
///
/// # Safety
/// Both sides are symmetric.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn copy_remote(
    routine: &'static str,
    dst_pe: usize,
    dst_base: usize,
    dst: &Remote,
    dty: Ty,
    src_pe: usize,
    src_base: usize,
    src: &Remote,
    sty: Ty,
) -> CafResult {
    let ns = src.count();
    let mut buf = vec![0u8; ns * sty.len];
    let tmp = View {
        base: buf.as_mut_ptr(),
        shape: Shape::dense(ns, sty.len),
        ty: sty,
    };
    // SAFETY: `tmp` is our buffer of `ns` elements; the rest is forwarded.
    unsafe {
        get_remote(routine, src_pe, src_base, src, sty, &tmp)?;
        put_remote(routine, dst_pe, dst_base, dst, dty, &tmp)
    }
}

/// The remote side of a descriptor-based call: with vector subscripts an element list,
/// checked against the registered coarray's bounds.
///
/// # Safety
/// `d` is a descriptor; `v` is null or holds one `caf_vector_t` per dimension.
unsafe fn remote_of(
    routine: &'static str,
    t: &Token,
    offset: usize,
    d: DescPtr,
    v: *const c_void,
) -> CafResult<Remote> {
    if v.is_null() {
        // SAFETY: contract.
        return Ok(Remote::Shape(Box::new(unsafe { Shape::of(d) })));
    }
    // SAFETY: contract.
    let sec = unsafe { Section::of(routine, d, v)? };
    // SAFETY: contract.
    let elem = unsafe { (*d).elem_len } as isize;
    let (lo, hi) = sec.range();
    let (lo, hi) = (offset as isize + lo, offset as isize + hi + elem);
    if sec.count() > 0 && t.size > 0 && (lo < 0 || hi > t.size as isize) {
        return Err(CafError::new(
            STAT_ERROR,
            format!(
                "{routine}: a vector subscript selects an element outside the coarray \
                 (bytes {lo}..{hi} of {})",
                t.size
            ),
        ));
    }
    Ok(Remote::List(sec))
}

/// `_gfortran_caf_send` with vector subscripts on the destination.
///
/// # Safety
/// As gfortran calls `_gfortran_caf_send`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn send(
    routine: &'static str,
    t: &Token,
    offset: usize,
    image_index: i32,
    dest: DescPtr,
    dst_vector: *const c_void,
    src: DescPtr,
    dst_kind: i32,
    src_kind: i32,
) -> CafResult {
    let pe = pe_of(state(routine), image_index)?;
    // SAFETY: forwarded contract.
    unsafe {
        let r = remote_of(routine, t, offset, dest, dst_vector)?;
        let src = View {
            base: (*src).base_addr,
            shape: Shape::of(src),
            ty: Ty::of(src, src_kind),
        };
        put_remote(
            routine,
            pe,
            t.base + offset,
            &r,
            Ty::of(dest, dst_kind),
            &src,
        )
    }
}

/// `_gfortran_caf_get` with vector subscripts on the source.
///
/// # Safety
/// As gfortran calls `_gfortran_caf_get`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn get(
    routine: &'static str,
    t: &Token,
    offset: usize,
    image_index: i32,
    src: DescPtr,
    src_vector: *const c_void,
    dest: DescPtr,
    src_kind: i32,
    dst_kind: i32,
) -> CafResult {
    let pe = pe_of(state(routine), image_index)?;
    // SAFETY: forwarded contract.
    unsafe {
        let r = remote_of(routine, t, offset, src, src_vector)?;
        let dst = View {
            base: (*dest).base_addr,
            shape: Shape::of(dest),
            ty: Ty::of(dest, dst_kind),
        };
        get_remote(
            routine,
            pe,
            t.base + offset,
            &r,
            Ty::of(src, src_kind),
            &dst,
        )
    }
}

/// `_gfortran_caf_sendget` with vector subscripts on either side.
///
/// # Safety
/// As gfortran calls `_gfortran_caf_sendget`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn sendget(
    routine: &'static str,
    (dt, dst_offset, dst_image, dest, dst_vector): (&Token, usize, i32, DescPtr, *const c_void),
    (st, src_offset, src_image, src, src_vector): (&Token, usize, i32, DescPtr, *const c_void),
    dst_kind: i32,
    src_kind: i32,
) -> CafResult {
    let s = state(routine);
    let (dpe, spe) = (pe_of(s, dst_image)?, pe_of(s, src_image)?);
    // SAFETY: forwarded contract.
    unsafe {
        let dr = remote_of(routine, dt, dst_offset, dest, dst_vector)?;
        let sr = remote_of(routine, st, src_offset, src, src_vector)?;
        copy_remote(
            routine,
            dpe,
            dt.base + dst_offset,
            &dr,
            Ty::of(dest, dst_kind),
            spe,
            st.base + src_offset,
            &sr,
            Ty::of(src, src_kind),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_at_changes_of_spacing() {
        // Indices 1,2,3 then 7,9,11 then 4, of 4-byte elements.
        let offs: Vec<isize> = [1, 2, 3, 7, 9, 11, 4].iter().map(|i| i * 4).collect();
        assert_eq!(runs(&offs, 4), vec![(0, 3, 4), (3, 3, 8), (6, 1, 4)]);
        // Reversed and repeated indices.
        assert_eq!(runs(&[8, 4, 0, 0], 4), vec![(0, 3, -4), (3, 1, 4)]);
        assert!(runs(&[], 4).is_empty());
    }

    #[test]
    fn triplets_and_ranges() {
        assert_eq!(triplet("t", 2, 9, 3).unwrap(), vec![2, 5, 8]);
        assert_eq!(triplet("t", 5, 1, -2).unwrap(), vec![5, 3, 1]);
        assert!(triplet("t", 3, 2, 1).unwrap().is_empty());
        assert!(triplet("t", 1, 2, 0).is_err());
        let s = Section {
            dims: vec![vec![8, 0, 4], vec![0, 40]],
        };
        assert_eq!((s.count(), s.range()), (6, (0, 48)));
    }
}
