//! The deprecated active-set collectives (`shmem_barrier`, 4-argument `shmem_sync`,
//! `shmem_{broadcast,collect,fcollect,alltoall,alltoalls}{32,64}`,
//! `shmem_TYPENAME_OP_to_all`): thin calls into the core's collectives on the active set
//! (`PE_start`, `2^logPE_stride`, `PE_size`), which the core makes locally and remembers
//! across calls (`rshmem_core::team::strided_set`). Every algorithm and its
//! `SHMEM_<COLL>_ALGORITHM` selection applies. The user's pSync and pWrk are never read
//! or written.
#![allow(unreachable_pub)]

use core::ffi::{c_int, c_long, c_void};
use std::sync::Arc;

use rshmem_core::coll::{self, Elem, ReduceOp};
use rshmem_core::team::Team;
use rshmem_core::Error;

/// The validated active set, as seen by the calling PE (which must be in it).
fn set(routine: &'static str, start: c_int, logstride: c_int, size: c_int) -> Arc<Team> {
    let bad = |arg, reason| -> ! {
        crate::glue::fail(Error::InvalidArgument {
            routine,
            arg,
            reason,
        })
    };
    let npes = crate::glue::ok(rshmem_core::setup::n_pes());
    if !(0..31).contains(&logstride) {
        bad("logPE_stride", "must be 0 to 30");
    }
    if start < 0 || size < 1 {
        bad("PE_start/PE_size", "need PE_start >= 0 and PE_size >= 1");
    }
    let (start, stride, size) = (start as usize, 1usize << logstride, size as usize);
    let last = (size - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(start));
    if last.is_none_or(|l| l >= npes) {
        bad(
            "PE_size",
            "the active set does not fit in the PEs of the job",
        );
    }
    match crate::glue::ok(rshmem_core::team::strided_set(
        routine,
        start,
        stride as isize,
        size,
    )) {
        Some(t) => t,
        None => bad("PE_start", "the calling PE is not in the active set"),
    }
}

fn nbytes(routine: &'static str, n: usize, esize: usize) -> usize {
    n.checked_mul(esize).unwrap_or_else(|| {
        crate::glue::fail(Error::InvalidArgument {
            routine,
            arg: "nelems",
            reason: "nelems times the element size overflows",
        })
    })
}

/// `shmem_barrier`: quiet, then a barrier over the set.
pub(crate) fn barrier(
    routine: &'static str,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _psync: *mut c_long,
) {
    let s = set(routine, start, logstride, size);
    crate::glue::ok(rshmem_core::order::quiet());
    crate::glue::ok(rshmem_core::team::sync_in(routine, &s));
}

/// Deprecated 4-argument `shmem_sync`.
pub(crate) fn sync(
    routine: &'static str,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _psync: *mut c_long,
) {
    let s = set(routine, start, logstride, size);
    crate::glue::ok(rshmem_core::team::sync_in(routine, &s));
}

/// The data collectives of the set.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Data {
    /// From the set's rank `root`; the root's `dest` is not written.
    Broadcast(c_int),
    Collect,
    Fcollect,
    Alltoall,
    /// Element strides of dest and source, in elements.
    Alltoalls(isize, isize),
}

/// `shmem_{broadcast,collect,fcollect,alltoall,alltoalls}{32,64}`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn data(
    routine: &'static str,
    kind: Data,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _psync: *mut c_long,
) {
    let s = set(routine, start, logstride, size);
    let nb = nbytes(routine, nelems, esize);
    let (d, src) = (dest.cast::<u8>(), source.cast::<u8>());
    // SAFETY: in every arm, the buffers have the sizes the spec gives each routine, and are
    // symmetric (the core checks and names them otherwise).
    let r = unsafe {
        match kind {
            Data::Broadcast(root) => {
                coll::broadcast_keep_root(routine, &s, d, src, nb, root.into())
            }
            Data::Collect => coll::collect(routine, &s, d, src, nb, usize::MAX),
            Data::Fcollect => coll::fcollect(routine, &s, d, src, nb),
            Data::Alltoall => coll::alltoall(routine, &s, d, src, nb),
            Data::Alltoalls(dst, sst) => {
                coll::alltoalls(routine, &s, d, src, dst, sst, nelems, esize)
            }
        }
    };
    crate::glue::ok(r)
}

/// `shmem_TYPENAME_OP_to_all`: `pWrk` is not used.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn to_all<T: Elem>(
    routine: &'static str,
    dest: *mut T,
    source: *const T,
    nreduce: c_int,
    start: c_int,
    logstride: c_int,
    size: c_int,
    _pwrk: *mut T,
    _psync: *mut c_long,
    op: ReduceOp,
) {
    let s = set(routine, start, logstride, size);
    if nreduce < 0 {
        crate::glue::fail(Error::InvalidArgument {
            routine,
            arg: "nreduce",
            reason: "is negative",
        });
    }
    // SAFETY: `dest` and `source` hold `nreduce` elements (spec); the core checks them.
    crate::glue::ok(unsafe { coll::reduce(routine, &s, dest, source, nreduce as usize, op) })
}
