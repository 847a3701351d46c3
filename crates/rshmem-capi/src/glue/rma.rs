//! RMA: contiguous, strided and block-strided puts and gets, single elements (`p`/`g`)
//! and put-with-signal.

use core::ffi::{c_int, c_void};
use std::mem::{size_of, MaybeUninit};

use rshmem_core::{rma, Ctx, SignalOp};

use super::checks::{nbytes, nonnull, nonnull_mut};
use super::errors::ok;

/// Direction of a contiguous transfer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Dir {
    Put,
    Get,
    PutNbi,
    GetNbi,
}

/// Contiguous put/get of `n` elements of `esize` bytes.
#[inline(always)]
pub(crate) unsafe fn xfer(
    routine: &'static str,
    c: &Ctx,
    dir: Dir,
    dest: *mut c_void,
    source: *const c_void,
    n: usize,
    esize: usize,
    pe: c_int,
) {
    let nb = nbytes(routine, n, esize);
    let (d, s) = (dest.cast::<u8>(), source.cast::<u8>());
    let pe = pe.into();
    // SAFETY: local buffers are the caller's (spec); symmetric ones are checked by core.
    let r = unsafe {
        match dir {
            Dir::Put => rma::ctx_put(c, routine, d, nonnull(routine, "source", s, nb), nb, pe),
            Dir::PutNbi => {
                rma::ctx_put_nbi(c, routine, d, nonnull(routine, "source", s, nb), nb, pe)
            }
            Dir::Get => rma::ctx_get(c, routine, nonnull_mut(routine, "dest", d, nb), s, nb, pe),
            Dir::GetNbi => {
                rma::ctx_get_nbi(c, routine, nonnull_mut(routine, "dest", d, nb), s, nb, pe)
            }
        }
    };
    ok(r)
}

/// `shmem_TYPENAME_p`.
#[inline(always)]
pub(crate) unsafe fn p<T: Copy>(routine: &'static str, c: &Ctx, dest: *mut T, value: T, pe: c_int) {
    // SAFETY: `value` is a local of the right size.
    unsafe {
        xfer(
            routine,
            c,
            Dir::Put,
            dest.cast(),
            (&value as *const T).cast(),
            1,
            size_of::<T>(),
            pe,
        )
    }
}

/// `shmem_TYPENAME_g`.
#[inline(always)]
pub(crate) unsafe fn g<T: Copy>(routine: &'static str, c: &Ctx, source: *const T, pe: c_int) -> T {
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` has room for one T; a successful get fills it (errors end the job).
    unsafe {
        xfer(
            routine,
            c,
            Dir::Get,
            v.as_mut_ptr().cast(),
            source.cast(),
            1,
            size_of::<T>(),
            pe,
        );
        v.assume_init()
    }
}

/// `iput`/`iget`: strides in elements.
pub(crate) unsafe fn strided(
    routine: &'static str,
    c: &Ctx,
    is_put: bool,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    esize: usize,
    pe: c_int,
) {
    if is_put {
        nonnull(routine, "source", source, nelems);
    } else {
        nonnull_mut(routine, "dest", dest, nelems);
    }
    // SAFETY: as `xfer`; the core checks the symmetric extent.
    ok(unsafe {
        let b = rma::Blocks {
            dest: dest.cast(),
            src: source.cast(),
            dst,
            sst,
            block: 1,
            count: nelems,
            size: esize,
        };
        rma::ctx_strided(c, routine, is_put, b, pe.into())
    })
}

/// `ibput`/`ibget` (OpenSHMEM 1.6): `nblocks` blocks of `bsize` elements.
pub(crate) unsafe fn blocked(
    routine: &'static str,
    c: &Ctx,
    is_put: bool,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    esize: usize,
    pe: c_int,
) {
    // SAFETY: as `xfer`.
    ok(unsafe {
        let b = rma::Blocks {
            dest: dest.cast(),
            src: source.cast(),
            dst,
            sst,
            block: bsize,
            count: nblocks,
            size: esize,
        };
        rma::ctx_strided(c, routine, is_put, b, pe.into())
    })
}

/// `put_signal[_nbi]` (large nbi ones may go to the copy engine until the quiet).
pub(crate) unsafe fn put_signal(
    routine: &'static str,
    c: &Ctx,
    nbi: bool,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
) {
    let nb = nbytes(routine, nelems, esize);
    let op = ok(SignalOp::from_c(routine, sig_op));
    // SAFETY: as `xfer`; the core checks `dest` and `sig_addr`.
    ok(unsafe {
        rshmem_core::signal::ctx_put_signal(
            c,
            routine,
            nbi,
            dest.cast(),
            nonnull(routine, "source", source.cast::<u8>(), nb),
            nb,
            sig_addr,
            signal,
            op,
            pe.into(),
        )
    })
}
