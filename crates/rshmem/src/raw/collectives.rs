//! Collectives on a team: broadcast, collect, fcollect, alltoall(s), reductions, scans and
//! syncs, blocking or non-blocking (`_nbe`).

use std::mem::size_of;
use std::sync::Arc;

use rshmem_core::coll::{self, nonblocking, Elem, ReduceOp};
use rshmem_core::request::ReqHandle;
use rshmem_core::team::Team as CoreTeam;

use super::{bounds, span, Region};
use crate::error::{Error, Result};
use crate::remote::Remote;

/// Nonzero element counts of a collective's buffers must not be one object.
fn distinct<T>(routine: &'static str, dst: &Region<T>, src: &Region<T>) -> Result<()> {
    if dst.len > 0 && dst.ptr == src.ptr {
        return Err(Error::InvalidArgument {
            routine,
            arg: "dest",
            reason: "dest and source must be different objects",
        });
    }
    Ok(())
}

/// `a * b` elements, saturating (the bounds check then fails).
fn times(a: usize, b: usize) -> usize {
    a.saturating_mul(b)
}

/// Broadcast of `nelems` from team rank `root` into `dst` on every member.
pub(crate) fn broadcast<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    root: usize,
    nb: Nb<'_>,
) -> Result<()> {
    if root >= team.n_pes() {
        return Err(Error::PeOutOfRange {
            routine,
            pe: root,
            npes: team.n_pes(),
        });
    }
    bounds(routine, "source", src.len, 0, nelems)?;
    bounds(routine, "dest", dst.len, 0, nelems)?;
    if nelems == 0 {
        return Ok(());
    }
    // SAFETY: both regions are symmetric and hold `nelems` elements (checked); they stay
    // allocated while borrowed. This PE's other threads reach them only through RMA on
    // a `SharedSlice` (a `SymVec` is not `Sync`, and its unsafe `local` forbids
    // writes while it is held): raw copies like other PEs' accesses, which a conflicting
    // program makes unspecified but not unsound. In place (one object) is allowed.
    // A non-blocking call's regions are borrowed until its scope's drain.
    unsafe {
        let (d, s, n) = (
            dst.as_ptr().cast(),
            src.as_ptr().cast(),
            nelems * size_of::<T>(),
        );
        match nb {
            None => coll::broadcast(routine, team, d, s, n, root as i64)?,
            Some(r) => nonblocking::broadcast(routine, team, d, s, n, root as i64, r)?,
        }
    };
    Ok(())
}

/// A collective's request slot when it is non-blocking (`_nbe`), `None` when blocking.
pub(crate) type Nb<'a> = Option<&'a mut Option<ReqHandle>>;

/// A team sync, blocking or non-blocking (`barrier`: a quiet first).
pub(crate) fn sync(routine: &'static str, team: &Arc<CoreTeam>, nb: Nb<'_>) -> Result<()> {
    match nb {
        None => rshmem_core::team::sync_in(routine, team)?,
        // SAFETY: the handle in the slot is owned by its `Req` (see `Req::test`).
        Some(r) => unsafe { nonblocking::sync(routine, team, false, r)? },
    }
    Ok(())
}

/// A non-blocking barrier on `team`: a quiet of the default context now, then its sync.
pub(crate) fn barrier_nbe(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    r: &mut Option<ReqHandle>,
) -> Result<()> {
    // SAFETY: the handle in the slot is owned by its `Req` (see `Req::test`).
    unsafe { nonblocking::sync(routine, team, true, r)? };
    Ok(())
}

/// Fcollect (`collect = false`: `dst` holds `nelems * n_pes`) or alltoall (`src` too).
pub(crate) fn fcollect_or_alltoall<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    alltoall: bool,
    nb: Nb<'_>,
) -> Result<()> {
    distinct(routine, dst, src)?;
    let all = times(nelems, team.n_pes());
    bounds(
        routine,
        "source",
        src.len,
        0,
        if alltoall { all } else { nelems },
    )?;
    bounds(routine, "dest", dst.len, 0, all)?;
    if nelems == 0 {
        return Ok(());
    }
    let (d, s, nbytes) = (
        dst.as_ptr().cast(),
        src.as_ptr().cast(),
        nelems * size_of::<T>(),
    );
    // SAFETY: as in `broadcast`; the regions are distinct objects (so disjoint) and hold
    // the extents checked above.
    unsafe {
        match (alltoall, nb) {
            (true, None) => coll::alltoall(routine, team, d, s, nbytes)?,
            (false, None) => coll::fcollect(routine, team, d, s, nbytes)?,
            (true, Some(r)) => nonblocking::alltoall(routine, team, d, s, nbytes, r)?,
            (false, Some(r)) => nonblocking::fcollect(routine, team, d, s, nbytes, r)?,
        }
    };
    Ok(())
}

/// Strided alltoall: strides in elements, at least 1.
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoalls<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    dst_stride: usize,
    src_stride: usize,
    nelems: usize,
    nb: Nb<'_>,
) -> Result<()> {
    if dst_stride == 0 || src_stride == 0 {
        return Err(Error::InvalidArgument {
            routine,
            arg: if dst_stride == 0 { "dst" } else { "sst" },
            reason: "strides must be at least 1",
        });
    }
    distinct(routine, dst, src)?;
    if nelems == 0 {
        return Ok(());
    }
    let count = times(nelems, team.n_pes());
    span(routine, "source", src.len, 0, src_stride, count)?;
    span(routine, "dest", dst.len, 0, dst_stride, count)?;
    // With one element the stride is never applied; otherwise it is below the length.
    let stride = |s: usize| if count == 1 { 1 } else { s as isize };
    let (d, s) = (dst.as_ptr().cast(), src.as_ptr().cast());
    let (ds, ss, size) = (stride(dst_stride), stride(src_stride), size_of::<T>());
    // SAFETY: as in `fcollect_or_alltoall`, for the strided extents checked above.
    unsafe {
        match nb {
            None => coll::alltoalls(routine, team, d, s, ds, ss, nelems, size)?,
            Some(r) => nonblocking::alltoalls(routine, team, d, s, ds, ss, nelems, size, r)?,
        }
    };
    Ok(())
}

/// Collect: members contribute different counts; `dst` must hold their total. Core agrees
/// on the total before writing, so every member reports the same error when `dst` is too
/// small and nothing overflows it.
pub(crate) fn collect<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    nb: Nb<'_>,
) -> Result<()> {
    distinct(routine, dst, src)?;
    bounds(routine, "source", src.len, 0, nelems)?;
    let sz = size_of::<T>();
    let p = dst.as_ptr().cast::<u8>();
    // An empty source is never read; any symmetric address will do.
    let s = if src.len > 0 { src.as_ptr().cast() } else { p };
    // SAFETY: `src` holds `nelems` elements (checked); core checks the agreed total
    // against `dst`'s capacity on every member before writing; the regions are distinct
    // objects (so disjoint).
    unsafe {
        match nb {
            None => coll::collect(routine, team, p, s, nelems * sz, dst.bytes())?,
            Some(r) => nonblocking::collect(routine, team, p, s, nelems * sz, dst.bytes(), r)?,
        }
    };
    Ok(())
}

/// Reduction of `nelems` elements; `dst` and `src` may be one object (in place).
pub(crate) fn reduce<T: Remote + Elem>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    op: ReduceOp,
    nb: Nb<'_>,
) -> Result<()> {
    bounds(routine, "source", src.len, 0, nelems)?;
    bounds(routine, "dest", dst.len, 0, nelems)?;
    if nelems == 0 {
        return Ok(());
    }
    // SAFETY: as in `broadcast`; two objects are disjoint, one object is identical.
    unsafe {
        let (d, s) = (dst.as_ptr(), src.as_ptr());
        match nb {
            None => coll::reduce(routine, team, d, s, nelems, op)?,
            Some(r) => nonblocking::reduce(routine, team, d, s, nelems, op, r)?,
        }
    };
    Ok(())
}

/// Inclusive or exclusive sum scan; `dst` and `src` must be different objects.
pub(crate) fn sum_scan<T: Remote + Elem + Default>(
    routine: &'static str,
    team: &CoreTeam,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    inclusive: bool,
) -> Result<()> {
    distinct(routine, dst, src)?;
    bounds(routine, "source", src.len, 0, nelems)?;
    bounds(routine, "dest", dst.len, 0, nelems)?;
    if nelems == 0 {
        return Ok(());
    }
    // SAFETY: as in `fcollect_or_alltoall`.
    unsafe { coll::sum_scan(routine, team, dst.as_ptr(), src.as_ptr(), nelems, inclusive)? };
    Ok(())
}
