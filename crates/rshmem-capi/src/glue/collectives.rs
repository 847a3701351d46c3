//! Team-based collectives, blocking or (seed 004) completed by a request: broadcast,
//! collect, fcollect, alltoall[s], reductions, scans and the non-blocking syncs.

use core::ffi::{c_int, c_void};
use std::mem::size_of;
use std::sync::Arc;

use rshmem_core::coll::{self, Elem, ReduceOp};
use rshmem_core::team::Team;
use rshmem_core::ReqHandle;

use super::checks::nbytes;
use super::errors::ok;
use super::requests::slot;
use super::teams::{team, TeamHandle};

/// A non-blocking collective's request slot (`shmemx_*_nbe`), `None` for a blocking call
/// (a null `req`: the generated blocking routines pass one).
///
/// # Safety
/// A non-null `req` points at a `shmemx_request_h` whose handle, if any, is live.
unsafe fn nb_slot<'a>(
    routine: &'static str,
    req: *mut Option<ReqHandle>,
) -> Option<&'a mut Option<ReqHandle>> {
    (!req.is_null()).then(|| slot(routine, "req", req))
}

/// `shmemx_team_sync_nbe`, `shmemx_barrier_all_nbe` (quiet first) and
/// `shmemx_sync_all_nbe`: a sync completed by a request.
pub(crate) unsafe fn sync_nbe(
    routine: &'static str,
    h: TeamHandle,
    barrier: bool,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let s = slot(routine, "req", req);
    // SAFETY: a handle in `*req` is live (seed 002).
    ok(unsafe { coll::nonblocking::sync(routine, &t, barrier, s) });
    0
}

/// The team of a collective; `None` (the routine returns nonzero) for
/// `SHMEM_TEAM_INVALID`.
fn coll_team(routine: &'static str, h: TeamHandle) -> Option<Arc<Team>> {
    team(routine, h)
}

/// `shmem_{TYPENAME_,}broadcast[mem]`: `nelems` elements of `esize` bytes.
pub(crate) unsafe fn broadcast(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    root: c_int,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: the core checks that both buffers are symmetric and large enough; a
    // non-blocking call's buffers stay untouched until its request completes (seed 004).
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::broadcast(routine, &t, d, s, nb, root.into()),
            Some(r) => coll::nonblocking::broadcast(routine, &t, d, s, nb, root.into(), r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}collect[mem]` (per-PE `nelems`).
pub(crate) unsafe fn collect(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`; C does not pass the size of `dest`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::collect(routine, &t, d, s, nb, usize::MAX),
            Some(r) => coll::nonblocking::collect(routine, &t, d, s, nb, usize::MAX, r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}fcollect[mem]`.
pub(crate) unsafe fn fcollect(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::fcollect(routine, &t, d, s, nb),
            Some(r) => coll::nonblocking::fcollect(routine, &t, d, s, nb, r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}alltoall[mem]`.
pub(crate) unsafe fn alltoall(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::alltoall(routine, &t, d, s, nb),
            Some(r) => coll::nonblocking::alltoall(routine, &t, d, s, nb, r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}alltoalls[mem]`: strides in elements.
pub(crate) unsafe fn alltoalls(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`; the core checks the strided extents.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::alltoalls(routine, &t, d, s, dst, sst, nelems, esize),
            Some(r) => coll::nonblocking::alltoalls(routine, &t, d, s, dst, sst, nelems, esize, r),
        }
    });
    0
}

/// `shmem_TYPENAME_OP_reduce`.
pub(crate) unsafe fn reduce<T: Elem>(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
    op: ReduceOp,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    nbytes(routine, nreduce, size_of::<T>());
    // SAFETY: as `broadcast`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::reduce(routine, &t, dest, source, nreduce, op),
            Some(r) => coll::nonblocking::reduce(routine, &t, dest, source, nreduce, op, r),
        }
    });
    0
}

/// `shmem_TYPENAME_sum_{inscan,exscan}` (OpenSHMEM 1.6).
pub(crate) unsafe fn sum_scan<T: Elem + Default>(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    inclusive: bool,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    nbytes(routine, nelems, size_of::<T>());
    // SAFETY: as `broadcast`.
    ok(unsafe { coll::sum_scan(routine, &t, dest, source, nelems, inclusive) });
    0
}
