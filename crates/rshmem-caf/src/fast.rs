//! The short path of `caf_send` and `caf_get`: a contiguous section on both sides, of the
//! same type, kind and length, in the initial team, no vector subscript. That is what a
//! scalar or `a(i:j)[k] = b(i:j)` compiles to, and at 8 bytes the general path (building
//! two 250-byte shapes, normalizing, checking conversions) cost more than the copy. Here
//! the descriptors are read in place and the transfer is one `rma::ctx_put_complete`/`ctx_get`:
//! no allocation, no lock, no system call. Anything else returns `false` and takes the
//! general path, which decides everything (errors included) as before.

use rshmem_core::{rma, Ctx};

use crate::desc::{Dim, Header, MAX_DIMS};
use crate::image::State;

/// Bytes of the array descriptor `d` describes when its elements lie one after another in
/// element order (a scalar is one element); `None` otherwise.
///
/// # Safety
/// `d` points at a descriptor with `rank` dimensions.
#[inline(always)]
pub(crate) unsafe fn dense_bytes(d: *const Header) -> Option<usize> {
    // SAFETY: the header is always present (contract).
    let h = unsafe { &*d };
    let elem = h.elem_len;
    let rank = h.rank;
    if rank == 0 {
        return Some(elem);
    }
    if rank < 0 || rank as usize > MAX_DIMS {
        return None;
    }
    let span = if h.span != 0 { h.span } else { elem as isize };
    let dims = (d as *const u8).wrapping_add(std::mem::size_of::<Header>()) as *const Dim;
    let mut want = elem as isize;
    for k in 0..rank as usize {
        // SAFETY: the compiler allocated `rank` triplets after the header (contract).
        let dim = unsafe { dims.add(k).read_unaligned() };
        let extent = dim.ubound - dim.lbound + 1;
        if extent <= 0 {
            return None; // Empty: the general path returns at once.
        }
        if extent > 1 && dim.stride * span != want {
            return None;
        }
        want = want.checked_mul(extent)?;
    }
    Some(want as usize)
}

/// The PE of `image` in the initial team when the short path applies to a transfer
/// between local `local` and the coarray element described by `remote` (same type, kind,
/// length; both dense and of equal size): `(pe, bytes)`.
///
/// The sides may overlap when the image is this one (gfortran's `may_require_tmp`, as in
/// `c[me] = c[me] + 1` or `a(2:9)[me] = a(1:8)`): a transfer with this PE is a `memmove`
/// (`Fabric::copy_mapped`: this PE always reaches itself through its own mapping), which
/// for two dense sections of one type and size is the assignment through a temporary.
///
/// # Safety
/// Both descriptors are valid.
#[inline(always)]
unsafe fn applies(
    s: &State,
    image: i32,
    remote: *const Header,
    local: *const Header,
    remote_kind: i32,
    local_kind: i32,
) -> Option<(usize, usize)> {
    if remote_kind != local_kind || image < 1 || image as usize > s.n {
        return None;
    }
    if crate::team::current().is_some() {
        return None;
    }
    // SAFETY: contract.
    let (rh, lh) = unsafe { (&*remote, &*local) };
    if rh.ty != lh.ty || rh.elem_len != lh.elem_len {
        return None;
    }
    let pe = image as usize - 1;
    // SAFETY: contract.
    let (rb, lb) = unsafe { (dense_bytes(remote)?, dense_bytes(local)?) };
    (rb == lb && rb > 0).then_some((pe, rb))
}

/// `caf_send`'s short path: `Some(result)` when it applied.
///
/// # Safety
/// As `_gfortran_caf_send` with no vector and no team.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub(crate) unsafe fn send(
    routine: &'static str,
    s: &State,
    remote: usize,
    image: i32,
    dest: *const Header,
    src: *const Header,
    dst_kind: i32,
    src_kind: i32,
) -> Option<rshmem_core::Result<()>> {
    // SAFETY: forwarded contract.
    let (pe, bytes) = unsafe { applies(s, image, dest, src, dst_kind, src_kind)? };
    // SAFETY: `src` is dense for `bytes` (checked); the remote section lies in the
    // registered coarray (the compiler computed it; the core checks it is symmetric).
    // Complete at the target on return, as the statement's semantics ask.
    Some(unsafe {
        rma::ctx_put_complete(
            Ctx::default_ctx(),
            routine,
            remote as *mut u8,
            (*src).base_addr,
            bytes,
            pe as i64,
        )
    })
}

/// `caf_get`'s short path: `Some(result)` when it applied.
///
/// # Safety
/// As `_gfortran_caf_get` with no vector and no STAT=.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub(crate) unsafe fn get(
    routine: &'static str,
    s: &State,
    remote: usize,
    image: i32,
    src: *const Header,
    dest: *const Header,
    src_kind: i32,
    dst_kind: i32,
) -> Option<rshmem_core::Result<()>> {
    // SAFETY: forwarded contract.
    let (pe, bytes) = unsafe { applies(s, image, src, dest, src_kind, dst_kind)? };
    // SAFETY: `dest` is dense and writable for `bytes` (checked; contract); the remote
    // section lies in the registered coarray.
    Some(unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            routine,
            (*dest).base_addr,
            remote as *const u8,
            bytes,
            pe as i64,
        )
    })
}
