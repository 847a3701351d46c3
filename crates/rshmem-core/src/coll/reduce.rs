//! Reductions and scans: the single-copy reduce-scatter (each PE folds one block of every
//! member's source and stores it into every destination), recursive doubling and ring
//! for small and large messages (`allreduce`), low-latency buffers (`ll`) and the network
//! forms (`net`), chosen by `algo::reduce_for`.

use crate::algo::DataAlg;
use crate::error::{Error, Result};
use crate::runtime::rt;
use crate::team::call_check::{self as check, Kind, Show};
use crate::team::frame::Frame;
use crate::team::Team;
use crate::transport::Dir;

use super::{
    allreduce, disjoint_or_same, fold_block, ll, net, with_acc, Elem, ReduceOp, FOLD_BLOCK,
};

/// `shmem_TYPENAME_OP_reduce`: element-wise `op` over every member's `src` into `dest` on
/// every member. `dest` and `src` are identical (in place) or disjoint.
///
/// # Safety
/// As [`broadcast`], with both buffers of `n` elements of `T`.
pub unsafe fn reduce<T: Elem>(
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
) -> Result<()> {
    let f = reduce_frame::<T>(routine, team, n, op)?;
    let rt = f.rt();
    let alg = rt
        .algs()
        .reduce_for(n * std::mem::size_of::<T>(), team.n_pes(), rt.span(team));
    // SAFETY: forwarded contract.
    unsafe { reduce_with(routine, team, dest, src, n, op, alg) }
}

/// The frame of a reduction: the debug check compares the count, operator and type.
fn reduce_frame<T: Elem>(
    routine: &'static str,
    team: &Team,
    n: usize,
    op: ReduceOp,
) -> Result<Frame> {
    Frame::begin(
        routine,
        team,
        Kind::Reduce,
        &[
            ("nreduce", n as u64, Show::Num),
            ("op", op as u64, Show::Op),
            ("type", check::type_code(T::TYPE), Show::Type),
        ],
        n.wrapping_mul(std::mem::size_of::<T>()),
    )
}

/// [`reduce`] with an explicit algorithm (for compositions such as the hierarchical one).
///
/// # Safety
/// As [`reduce`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn reduce_with<T: Elem>(
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
    alg: DataAlg,
) -> Result<()> {
    let rt = rt(routine)?;
    T::fold(op, &mut [], &[]).map_err(|reason| Error::InvalidArgument {
        routine,
        arg: "op",
        reason,
    })?;
    if n == 0 {
        return Ok(());
    }
    let sz = std::mem::size_of::<T>();
    let bytes = n * sz;
    let disjoint = disjoint_or_same(routine, dest as usize, src as usize, bytes)?;
    let s = rt.coll_buf(routine, "source", src.cast(), bytes)?;
    let d = rt.coll_buf(routine, "dest", dest.cast(), bytes)?;
    let npes = team.n_pes();
    if npes == 1 {
        // SAFETY: both buffers hold `n` elements (checked).
        unsafe { std::ptr::copy(src, dest, n) };
        return Ok(());
    }
    match alg {
        DataAlg::Ll | DataAlg::LlRd
            if ll::eligible(rt, team, bytes) && std::mem::align_of::<T>() <= ll::ALIGN =>
        {
            let rd = alg == DataAlg::LlRd;
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { ll::reduce(rt, routine, team, dest, src, n, op, rd) };
        }
        DataAlg::Ll | DataAlg::LlRd => {
            // An active set (no slot for LL buffers): messages serve small vectors too.
            let rd = DataAlg::RecursiveDoubling;
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { allreduce::reduce_msg(rt, routine, team, dest, src, n, op, rd) };
        }
        DataAlg::Direct => {
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { net::reduce(rt, routine, team, dest, src, &s, &d, n, op) };
        }
        DataAlg::Shm | DataAlg::Linear | DataAlg::Tree | DataAlg::Binomial | DataAlg::Staged => {}
        DataAlg::RecursiveDoubling | DataAlg::Ring | DataAlg::Rabenseifner => {
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { allreduce::reduce_msg(rt, routine, team, dest, src, n, op, alg) };
        }
        DataAlg::Hierarchical => {
            // SAFETY: forwarded; both buffers are checked for `n` elements.
            return unsafe { allreduce::reduce_hierarchical(rt, routine, team, dest, src, n, op) };
        }
    }
    rt.try_sync_in(routine, team)?;
    // Reduce-scatter then all-gather, one block at a time: rank r folds chunk r of every
    // source in rank order (every member gets the same bits) and writes the block to every
    // destination. Chunk r of any buffer is read and written by rank r alone, so in place
    // needs no sync in between, only a cache-sized accumulator (disjoint: our own dest).
    let me = team.my_pe();
    let (lo, hi) = match alg {
        DataAlg::Shm => (n * me / npes, n * (me + 1) / npes),
        DataAlg::Linear if me == 0 => (0, n),
        _ => (0, 0),
    };
    if hi > lo {
        let block = (FOLD_BLOCK / sz).max(1).min(hi - lo);
        with_acc::<T, _>(if disjoint { 0 } else { block }, |buf| -> Result<()> {
            let mut at = lo;
            while at < hi {
                let len = block.min(hi - at);
                let acc = if disjoint {
                    // SAFETY: chunk `lo..hi` of our dest is checked and ours alone.
                    unsafe { std::slice::from_raw_parts_mut(dest.add(at), len) }
                } else {
                    &mut buf[..len]
                };
                // SAFETY: the block lies inside every rank's checked source; only this
                // rank reads or writes chunk `lo..hi` during the collective.
                unsafe { fold_block(rt, routine, team, &s, at, acc, op, None)? };
                for r in (0..npes).filter(|&r| !disjoint || r != me) {
                    // SAFETY: as above, for rank r's checked destination.
                    unsafe {
                        rt.coll_xfer(
                            routine,
                            team,
                            Dir::Put,
                            r,
                            &d,
                            at * sz,
                            acc.as_ptr().cast(),
                            len * sz,
                        )?
                    };
                }
                at += len;
            }
            Ok(())
        })?;
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// A reduction of a private vector `a` (a language's own array, not symmetric) through
/// `stage`, a symmetric buffer of as many elements: afterwards `a` holds the reduction of
/// every member's `a` where `write_back`, and is untouched elsewhere (Fortran's
/// RESULT_IMAGE=). Among members that map each other, each one folds its chunk straight
/// from its own `a` and the others' stages and the chunks are gathered into `a`, so `a`
/// is copied in and out once in all (not twice whole around [`reduce`]). A vector small
/// enough for the LL exchange is reduced from `a` directly (into `stage` on a member that
/// does not write back).
///
/// # Safety
/// `a` holds `n` elements of `T`, readable and (where `write_back`) writable, not inside
/// `stage`; `stage` is symmetric and holds `n` elements on every member.
pub unsafe fn reduce_staged<T: Elem>(
    routine: &'static str,
    team: &Team,
    a: *mut T,
    stage: *mut T,
    n: usize,
    op: ReduceOp,
    write_back: bool,
) -> Result<()> {
    let f = reduce_frame::<T>(routine, team, n, op)?;
    let rt = f.rt();
    let sz = std::mem::size_of::<T>();
    let npes = team.n_pes();
    let alg = rt.algs().reduce_for(n * sz, npes, rt.span(team));
    T::fold(op, &mut [], &[]).map_err(|reason| Error::InvalidArgument {
        routine,
        arg: "op",
        reason,
    })?;
    let ll = matches!(alg, DataAlg::Ll | DataAlg::LlRd)
        && npes > 1
        && n > 0
        && ll::eligible(rt, team, n * sz)
        && std::mem::align_of::<T>() <= ll::ALIGN;
    if ll {
        // The LL exchange goes through the team's own buffers and touches the source and
        // destination only locally: the private vector serves as it is.
        let dest = if write_back { a } else { stage };
        // SAFETY: both hold `n` elements, identical or disjoint (contract).
        return unsafe { ll::reduce(rt, routine, team, dest, a, n, op, alg == DataAlg::LlRd) };
    }
    if alg != DataAlg::Shm || npes == 1 || n == 0 {
        // SAFETY: both hold `n` elements and do not overlap (contract).
        unsafe {
            std::ptr::copy_nonoverlapping(a, stage, n);
            reduce_with(routine, team, stage, stage, n, op, alg)?;
            if write_back {
                std::ptr::copy_nonoverlapping(stage, a, n);
            }
        }
        return Ok(());
    }
    let st = rt.coll_buf(routine, "stage", stage.cast(), n * sz)?;
    let me = team.my_pe();
    let chunk = |r: usize| (n * r / npes, n * (r + 1) / npes);
    let (lo, hi) = chunk(me);
    // The others read only their own chunks of our stage; ours is our result.
    // SAFETY: both hold `n` elements and do not overlap (contract).
    unsafe {
        std::ptr::copy_nonoverlapping(a, stage, lo);
        std::ptr::copy_nonoverlapping(a.add(hi), stage.add(hi), n - hi);
    }
    rt.try_sync_in(routine, team)?;
    let block = (FOLD_BLOCK / sz).max(1).min(hi - lo);
    with_acc::<T, _>(block, |buf| -> Result<()> {
        let mut at = lo;
        while at < hi {
            let len = block.min(hi - at);
            let acc = &mut buf[..len];
            // SAFETY: the block lies in every rank's checked stage, in our chunk, which only
            // we read, and each rank wrote before the sync; our `a` holds it (contract).
            unsafe { fold_block(rt, routine, team, &st, at, acc, op, Some(a.add(at)))? };
            // SAFETY: the block lies in our chunk of both (contract).
            unsafe {
                std::ptr::copy_nonoverlapping(acc.as_ptr(), stage.add(at), len);
                if write_back {
                    std::ptr::copy_nonoverlapping(acc.as_ptr(), a.add(at), len);
                }
            }
            at += len;
        }
        Ok(())
    })?;
    rt.try_sync_in(routine, team)?;
    if write_back {
        for r in (0..npes).filter(|&r| r != me) {
            let (lo, hi) = chunk(r);
            // SAFETY: rank r's chunk of its stage holds its result until the last sync;
            // our `a` holds the chunk (contract).
            unsafe {
                rt.coll_xfer(
                    routine,
                    team,
                    Dir::Get,
                    r,
                    &st,
                    lo * sz,
                    a.add(lo).cast(),
                    (hi - lo) * sz,
                )?
            };
        }
    }
    // The stage is the caller's to reuse once nobody reads it.
    rt.try_sync_in(routine, team)?;
    Ok(())
}

/// `shmem_sum_inscan` / `shmem_sum_exscan` (OpenSHMEM 1.6): `dest` on rank r gets the sum
/// of `src` over ranks `0..=r` (inclusive) or `0..r` (exclusive; zero on rank 0).
/// `dest` and `src` are identical (in place) or disjoint.
///
/// # Safety
/// As [`reduce`].
pub unsafe fn sum_scan<T: Elem + Default>(
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    inclusive: bool,
) -> Result<()> {
    let f = Frame::begin(
        routine,
        team,
        Kind::Scan,
        &[
            ("nelems", n as u64, Show::Num),
            (
                "inclusive (inscan=1, exscan=0)",
                inclusive as u64,
                Show::Num,
            ),
            ("type", check::type_code(T::TYPE), Show::Type),
        ],
        n.wrapping_mul(std::mem::size_of::<T>()),
    )?;
    let rt = f.rt();
    if n == 0 {
        return Ok(());
    }
    let sz = std::mem::size_of::<T>();
    let bytes = n * sz;
    let disjoint = disjoint_or_same(routine, dest as usize, src as usize, bytes)?;
    let s = rt.coll_buf(routine, "source", src.cast(), bytes)?;
    rt.coll_buf(routine, "dest", dest.cast(), bytes)?;
    rt.try_sync_in(routine, team)?;
    let upto = if inclusive {
        team.my_pe() + 1
    } else {
        team.my_pe()
    };
    let fold_into = |acc: &mut [T]| -> Result<()> {
        acc.fill(T::default());
        for r in 0..upto {
            // SAFETY: rank r's source is checked and not written until every member has
            // folded it (the sync after the fold, in place).
            unsafe {
                rt.coll_view(routine, team, r, &s, 0, n, |part: &[T]| {
                    T::fold(ReduceOp::Sum, acc, part).expect("every element type sums")
                })?
            };
        }
        Ok(())
    };
    if disjoint {
        // SAFETY: our dest holds `n` elements (checked) and is ours alone.
        fold_into(unsafe { std::slice::from_raw_parts_mut(dest, n) })?;
    } else {
        // In place: our source is other ranks' input until they have all folded it, so
        // fold into scratch and write only after a sync.
        with_acc::<T, _>(n, |acc| -> Result<()> {
            fold_into(acc)?;
            rt.try_sync_in(routine, team)?;
            // SAFETY: our dest holds `n` elements (checked); nobody reads it any more.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dest, n) };
            Ok(())
        })?;
    }
    rt.try_sync_in(routine, team)?;
    Ok(())
}
