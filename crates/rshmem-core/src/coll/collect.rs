//! Collect, fcollect and alltoall(s): every member's blocks gathered or exchanged in
//! rank order, single-copy (each PE reads its peers' sources or writes into their
//! destinations directly).

use crate::algo::DataAlg;
use crate::error::{Error, Result};
use crate::team::call_check::{Kind, Show};
use crate::team::frame::Frame;
use crate::team::Team;
use crate::transport::Dir;
use crate::transport::SymAddr;
use crate::word::AmoOp;

use super::{ll, Buf};

/// `shmem_fcollectmem`: concatenates every member's `nbytes` of `src` in rank order into
/// `dest` (`nbytes * n_pes` bytes) on every member.
///
/// # Safety
/// As [`broadcast`], with `dest` of `nbytes * n_pes` bytes.
pub unsafe fn fcollect(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Fcollect,
        &[("size in bytes", nbytes as u64, Show::Num)],
        nbytes,
    )?;
    let rt = f.rt();
    let n = team.n_pes();
    if nbytes == 0 {
        return Ok(());
    }
    let s = rt.coll_buf(routine, "source", src, nbytes)?;
    let d = rt.coll_buf(routine, "dest", dest, nbytes * n)?;
    let alg = rt.algs().fcollect_for(nbytes, n, rt.span(team));
    if alg == DataAlg::Ll && n > 1 && ll::eligible(rt, team, nbytes) {
        // SAFETY: both buffers were checked above.
        return unsafe { ll::fcollect(rt, routine, team, dest, src, nbytes) };
    }
    rt.try_sync_in(routine, team)?;
    let me = team.my_pe();
    for r in 0..n {
        if alg != DataAlg::Linear {
            // SAFETY: peer sources are stable during the collective; our dest holds
            // `nbytes * n` bytes.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &s,
                    0,
                    dest.add(r * nbytes),
                    nbytes,
                )?
            };
        } else {
            // SAFETY: block `me` of every dest is written only by this PE.
            unsafe { rt.coll_xfer(routine, team, Dir::Put, r, &d, me * nbytes, src, nbytes)? };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_collectmem`: like [`fcollect`], but each member contributes its own `nbytes`.
/// `dest_cap` is the size of `dest` in bytes where the caller knows it (`usize::MAX`
/// otherwise); a total above it fails on every member.
///
/// # Safety
/// As [`broadcast`], with `dest` large enough for the sum of all contributions.
pub unsafe fn collect(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    dest_cap: usize,
) -> Result<()> {
    // Contributions may differ in size: only the routine is compared.
    let f = Frame::begin(routine, team, Kind::Collect, &[], nbytes)?;
    let rt = f.rt();
    let n = team.n_pes();
    // A member contributing nothing may pass any pointer (NULL from C): its source is
    // never read, and peers find each source through the location its owner publishes.
    let s = if nbytes == 0 {
        None
    } else {
        Some(rt.coll_buf(routine, "source", src, nbytes)?)
    };
    // Publish our size and source in the team's scratch line, then read everyone's.
    let size_word = rt.team_word(team, false, 0);
    let src_word = rt.team_word(team, false, 5);
    let src_loc = s.as_ref().map_or(u64::MAX, |b| b.addr.to_word());
    rt.set_own(size_word, nbytes as u64);
    rt.set_own(src_word, src_loc);
    rt.try_sync_in(routine, team)?;
    let mut off = 0usize;
    let mut sizes = Vec::with_capacity(n);
    for r in 0..n {
        let len = rt.amo::<u64>(routine, team.members().pe(r), size_word, AmoOp::Fetch)? as usize;
        sizes.push((off, len));
        off += len;
    }
    if off > dest_cap {
        // Every member computed the same total, so every member fails alike; the sync
        // keeps the size words stable until all have read them.
        rt.try_sync_in(routine, team)?;
        return Err(Error::InvalidArgument {
            routine,
            arg: "dest",
            reason: "smaller than the sum of all members' contributions",
        });
    }
    if off == 0 {
        rt.try_sync_in(routine, team)?;
        return Ok(());
    }
    let d = rt.coll_buf(routine, "dest", dest, off)?;
    let (my_at, my_len) = sizes[team.my_pe()];
    for (r, &(at, len)) in sizes.iter().enumerate() {
        match rt.algs().collect {
            DataAlg::Linear if my_len > 0 => {
                // SAFETY: our block of every dest is written only by this PE.
                unsafe { rt.coll_xfer(routine, team, Dir::Put, r, &d, my_at, src, my_len)? };
            }
            DataAlg::Linear => {}
            _ if len > 0 => {
                let pe = team.members().pe(r);
                let loc = rt.amo::<u64>(routine, pe, src_word, AmoOp::Fetch)?;
                let from = Buf {
                    addr: SymAddr::from_word(loc),
                };
                // SAFETY: rank r checked its source for `len` bytes and published it; it
                // is stable during the collective; `dest` holds the total, checked above.
                unsafe { rt.coll_xfer(routine, team, Dir::Get, r, &from, 0, dest.add(at), len)? };
            }
            _ => {}
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_alltoallmem`: block `j` of `src` on rank `i` goes to block `i` of `dest` on rank
/// `j`; blocks are `nbytes`.
///
/// # Safety
/// As [`broadcast`], with both buffers of `nbytes * n_pes` bytes.
pub unsafe fn alltoall(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Alltoall,
        &[("size in bytes", nbytes as u64, Show::Num)],
        nbytes,
    )?;
    let rt = f.rt();
    let n = team.n_pes();
    if nbytes == 0 {
        return Ok(());
    }
    let s = rt.coll_buf(routine, "source", src, nbytes * n)?;
    let d = rt.coll_buf(routine, "dest", dest, nbytes * n)?;
    rt.try_sync_in(routine, team)?;
    let me = team.my_pe();
    for r in 0..n {
        if rt.algs().alltoall != DataAlg::Linear {
            // SAFETY: peer sources are stable; our dest block `r` is inside the
            // checked range.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &s,
                    me * nbytes,
                    dest.add(r * nbytes),
                    nbytes,
                )?
            };
        } else {
            // SAFETY: block `me` of rank r's dest is written only by this PE; our
            // source block `r` is inside the checked range.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Put,
                    r,
                    &d,
                    me * nbytes,
                    src.add(r * nbytes),
                    nbytes,
                )?
            };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_alltoalls`: [`alltoall`] of `nelems` elements of `size` bytes per block, with
/// element strides `dst` and `sst` (≥ 1).
///
/// # Safety
/// As [`alltoall`], with buffers covering the strided extents.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoalls(
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Alltoalls,
        &[
            ("nelems", nelems as u64, Show::Num),
            ("element size", size as u64, Show::Num),
            ("dst", dst as u64, Show::Num),
            ("sst", sst as u64, Show::Num),
        ],
        nelems.wrapping_mul(size),
    )?;
    let rt = f.rt();
    if dst < 1 || sst < 1 {
        return Err(Error::InvalidArgument {
            routine,
            arg: "dst/sst",
            reason: "strides must be at least 1",
        });
    }
    let n = team.n_pes();
    if nelems == 0 || size == 0 {
        return Ok(());
    }
    let (dst, sst) = (dst as usize, sst as usize);
    let span = |stride: usize| ((n * nelems - 1) * stride + 1) * size;
    let s = rt.coll_buf(routine, "source", src, span(sst))?;
    rt.coll_buf(routine, "dest", dest, span(dst))?;
    rt.try_sync_in(routine, team)?;
    let me = team.my_pe();
    for r in 0..n {
        for k in 0..nelems {
            // SAFETY: both element addresses lie in the checked strided extents.
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &s,
                    (me * nelems + k) * sst * size,
                    dest.add((r * nelems + k) * dst * size),
                    size,
                )?
            };
        }
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}
