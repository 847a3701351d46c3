//! Image control and atomics: SYNC ALL / IMAGES / MEMORY, locks (MCS queue locks at the
//! image that holds the lock variable), CRITICAL, events, atomic subroutines.

use std::sync::atomic::Ordering;

use rshmem_core::{amo, p2p, AmoOp, Cmp, Ctx, Word};

use crate::image::{pe_of, state, State, QNODES};
use crate::stat_errmsg::{
    unsupported, CafError, CafResult, STAT_DUP_SYNC_IMAGES, STAT_ERROR, STAT_FAILED_IMAGE,
    STAT_LOCKED, STAT_LOCKED_OTHER_IMAGE, STAT_NOT_LOCKED, STAT_STOPPED_IMAGE,
};
use crate::token::{Token, WORD};

/// An atomic on the word at symmetric address `addr` of `pe`.
fn atomic<W: Word>(routine: &'static str, addr: usize, op: AmoOp<W>, pe: usize) -> CafResult<W> {
    // SAFETY: `addr` is a symmetric address inside a registered coarray or the runtime's
    // own words; the core checks it is symmetric and aligned.
    Ok(unsafe { amo::ctx_atomic(Ctx::default_ctx(), routine, addr as *const W, op, pe as i64)? })
}

/// A posted atomic write of `v` to the word at symmetric address `addr` of `pe`.
fn post(routine: &'static str, addr: usize, v: u64, pe: usize) -> CafResult {
    // SAFETY: as for `atomic`.
    unsafe {
        amo::ctx_atomic_post(
            Ctx::default_ctx(),
            routine,
            addr as *const u64,
            AmoOp::Set(v),
            pe as i64,
        )?
    };
    Ok(())
}

/// The PE of a lock, event or atomic's `image_index` (0: this image).
fn target(s: &State, image: i32) -> CafResult<usize> {
    if image == 0 {
        Ok(s.me)
    } else {
        pe_of(s, image)
    }
}

/// `sync all`: completes this image's transfers and waits for every image of the
/// current team.
pub(crate) fn sync_all() -> CafResult {
    crate::team::sync_all("_gfortran_caf_sync_all")
}

/// `sync memory`: completes this image's transfers (puts visible at their targets).
pub(crate) fn sync_memory() -> CafResult {
    rshmem_core::order::quiet()?;
    Ok(())
}

/// Bytes between two partners' SYNC IMAGES counters on one image: a cache line each, so
/// the images that notify one image do not contend for one line.
pub(crate) const COUNT_STRIDE: usize = 64;

/// `sync images(list)` (`images` `None`: `sync images(*)`): each image keeps, at each
/// partner, a counter of the notifications it sent there, which only it writes; so a
/// notification is one posted write of the new count (no round trip), and consecutive
/// statements never mix. Allocates nothing for lists of up to [`SMALL_LIST`] images.
pub(crate) fn sync_images(routine: &'static str, images: Option<&[i32]>) -> CafResult {
    let s = state(routine);
    if let Some(l) = images {
        check_distinct(l)?;
    }
    // Release: this image's earlier puts are complete before the partners go on; it also
    // orders this statement's notifications after the previous statement's.
    rshmem_core::order::quiet()?;
    let mine = s.sync_counts + s.me * COUNT_STRIDE;
    for_each_partner(s, images, |p| {
        let count = s.sync_sent[p].fetch_add(1, Ordering::Relaxed) + 1;
        post(routine, mine, count as u64, p).map_err(|e| stopped_partner(p).err().unwrap_or(e))
    })?;
    // Through the network the posted counts leave now (one flush for all of them).
    if !crate::xfer::all_load_store(routine, s.sync_counts) {
        rshmem_core::order::quiet()?;
    }
    for_each_partner(s, images, |p| {
        let want = s.sync_seen[p].fetch_add(1, Ordering::Relaxed) + 1;
        // SAFETY: our own symmetric counter word of image `p+1`.
        unsafe {
            p2p::wait_until_from(
                routine,
                (s.sync_counts + p * COUNT_STRIDE) as *const i64,
                Cmp::Ge,
                want,
                p,
            )
        }
        .map_err(|e| stopped_partner(p).err().unwrap_or(e.into()))
    })
}

/// Image lists up to this long are checked for repeats without allocating.
const SMALL_LIST: usize = 64;

/// `Err(STAT_DUP_SYNC_IMAGES)` when an image appears twice in a SYNC IMAGES list.
fn check_distinct(l: &[i32]) -> CafResult {
    let dup = if l.len() <= SMALL_LIST {
        (1..l.len()).find_map(|k| l[..k].contains(&l[k]).then_some(l[k]))
    } else {
        let mut sorted = l.to_vec();
        sorted.sort_unstable();
        sorted
            .windows(2)
            .find_map(|w| (w[0] == w[1]).then_some(w[0]))
    };
    match dup {
        Some(i) => Err(CafError::new(
            STAT_DUP_SYNC_IMAGES,
            format!("image {i} appears twice in the image list"),
        )),
        None => Ok(()),
    }
}

/// Calls `f` with the world PE of each partner of a SYNC IMAGES other than this image:
/// the listed images, or every image of the current team (`None`), in order.
fn for_each_partner(
    s: &State,
    images: Option<&[i32]>,
    mut f: impl FnMut(usize) -> CafResult,
) -> CafResult {
    match images {
        Some(l) => {
            for &i in l {
                let pe = pe_of(s, i)?;
                if pe != s.me {
                    f(pe)?;
                }
            }
        }
        None => match crate::team::current() {
            Some(t) => {
                for r in 0..t.team.n_pes() {
                    let pe = t.team.members().pe(r);
                    if pe != s.me {
                        f(pe)?;
                    }
                }
            }
            None => {
                for pe in (0..s.n).filter(|&p| p != s.me) {
                    f(pe)?;
                }
            }
        },
    }
    Ok(())
}

/// `Err(STAT_STOPPED_IMAGE)` when image `pe + 1` has stopped (entered finalize, or left
/// the job through UCX). Asked only after an add or a wait failed: through UCX the state
/// read is a round trip, which every SYNC IMAGES would pay.
fn stopped_partner(pe: usize) -> CafResult {
    if rshmem_core::ft::pe_finalized(pe)? {
        crate::tolerant_sync::mark_gone(pe, STAT_STOPPED_IMAGE);
        return Err(CafError::new(
            STAT_STOPPED_IMAGE,
            format!("image {} has stopped", pe + 1),
        ));
    }
    Ok(())
}

/// `lock(l[image])` (`acquired` non-null: `acquired_lock=`): the core's queue lock on
/// the lock variable at its image ([`rshmem_core::lock::lock_at`]), with one of this
/// image's queue nodes.
pub(crate) fn lock(
    routine: &'static str,
    t: &Token,
    index: usize,
    image: i32,
    acquired: Option<&mut i32>,
) -> CafResult {
    let s = state(routine);
    let pe = target(s, image)?;
    let addr = t.base + index * WORD;
    if s.locks.find_held(addr, pe).is_some() {
        return Err(CafError::new(
            STAT_LOCKED,
            "the lock variable is already locked by this image",
        ));
    }
    let slot = s.locks.take(addr, pe).ok_or_else(|| {
        CafError::new(
            STAT_ERROR,
            format!("this image holds or waits for {QNODES} locks already"),
        )
    })?;
    let l = lock_at(s, addr, pe, slot);
    match rshmem_core::lock::lock_at(routine, &l, acquired.is_some()) {
        Ok(got) => {
            if let Some(acq) = acquired {
                *acq = got as i32;
            }
            if got {
                s.locks.hold(slot);
            } else {
                s.locks.give_back(slot);
            }
            Ok(())
        }
        Err(e) => {
            s.locks.give_back(slot);
            Err(holder_gone(e))
        }
    }
}

/// The core's name for lock variable `word` at `pe`, taken with queue node `slot`.
fn lock_at(s: &State, word: usize, pe: usize, slot: usize) -> rshmem_core::lock::LockAt {
    rshmem_core::lock::LockAt {
        word,
        pe,
        nodes: s.qnodes,
        slot,
    }
}

/// STAT_STOPPED_IMAGE or STAT_FAILED_IMAGE when the image a LOCK waited for stopped or
/// failed holding the lock (recorded for later statements).
fn holder_gone(e: rshmem_core::Error) -> CafError {
    let (pe, code) = match e {
        rshmem_core::Error::LockHolderFinalized { pe, .. } => (pe, STAT_STOPPED_IMAGE),
        rshmem_core::Error::PeFailed { pe, .. } => (pe, STAT_FAILED_IMAGE),
        _ => return e.into(),
    };
    crate::tolerant_sync::mark_gone(pe, code);
    CafError::new(
        code,
        format!("image {} holds the lock and has stopped or failed", pe + 1),
    )
}

/// `unlock(l[image])`: releases a lock this image holds.
pub(crate) fn unlock(routine: &'static str, t: &Token, index: usize, image: i32) -> CafResult {
    let s = state(routine);
    let pe = target(s, image)?;
    let addr = t.base + index * WORD;
    let Some(slot) = s.locks.find_held(addr, pe).map(|i| s.locks.unhold(i)) else {
        return Err(if !rshmem_core::lock::locked_at(routine, addr, pe)? {
            CafError::new(STAT_NOT_LOCKED, "the lock variable is not locked")
        } else {
            CafError::new(
                STAT_LOCKED_OTHER_IMAGE,
                "the lock variable is locked by another image",
            )
        });
    };
    let r = rshmem_core::lock::unlock_at(routine, &lock_at(s, addr, pe, slot));
    s.locks.give_back(slot);
    Ok(r?)
}

/// `event post(ev[image])`.
pub(crate) fn event_post(routine: &'static str, t: &Token, index: usize, image: i32) -> CafResult {
    let s = state(routine);
    let pe = target(s, image)?;
    rshmem_core::order::quiet()?;
    atomic::<i64>(routine, t.base + index * WORD, AmoOp::Add(1), pe)?;
    Ok(())
}

/// `event wait(ev, until_count=)`: waits for the local count, then consumes it.
pub(crate) fn event_wait(routine: &'static str, t: &Token, index: usize, until: i32) -> CafResult {
    let s = state(routine);
    let until = i64::from(until.max(1));
    let addr = t.base + index * WORD;
    // SAFETY: the event's word of this image, in symmetric memory.
    unsafe { p2p::wait_until(routine, addr as *const i64, Cmp::Ge, until)? };
    atomic::<i64>(routine, addr, AmoOp::Add(-until), s.me)?;
    Ok(())
}

/// `event_query(ev, count)`.
pub(crate) fn event_query(
    routine: &'static str,
    t: &Token,
    index: usize,
    image: i32,
) -> CafResult<i64> {
    let s = state(routine);
    let pe = target(s, image)?;
    atomic::<i64>(routine, t.base + index * WORD, AmoOp::Fetch, pe)
}

/// `GFC_CAF_ATOMIC_*` and the definition/reference/compare-and-swap of atomic subroutines.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AtomicKind {
    /// `atomic_define`.
    Define,
    /// `atomic_ref`.
    Ref,
    /// `atomic_cas` (compare value, new value).
    Cas,
    /// `atomic_add` / `atomic_fetch_add` and the bitwise ones: `GFC_CAF_ATOMIC_*` code.
    Op(i32),
}

/// An atomic subroutine on the integer or logical word at `offset` in coarray `t` of
/// `image` (0: this image). `value` is the operand (for CAS, the new value), `compare`
/// CAS's compare value; returns the previous value.
///
/// # Safety
/// `value` and `compare` point at values of the kind's size when the operation reads them.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn atomic_sub(
    routine: &'static str,
    what: AtomicKind,
    t: &Token,
    offset: usize,
    image: i32,
    value: *const u8,
    compare: *const u8,
    ty: i32,
    kind: i32,
) -> CafResult<i64> {
    let s = state(routine);
    let pe = target(s, image)?;
    let addr = t.base + offset;
    if !matches!(ty, 1 | 2) {
        unsupported(routine, &format!("atomic subroutines on type code {ty}"));
    }
    // SAFETY: forwarded contract.
    unsafe {
        match kind {
            4 => Ok(i64::from(atomic_word::<i32>(
                routine, what, addr, pe, value, compare,
            )?)),
            8 => atomic_word::<i64>(routine, what, addr, pe, value, compare),
            _ => unsupported(routine, &format!("atomic subroutines of kind {kind}")),
        }
    }
}

/// [`atomic_sub`] for one word type.
///
/// # Safety
/// As [`atomic_sub`].
unsafe fn atomic_word<W: Word>(
    routine: &'static str,
    what: AtomicKind,
    addr: usize,
    pe: usize,
    value: *const u8,
    compare: *const u8,
) -> CafResult<W> {
    // SAFETY: contract: the operands are W-sized values (unaligned reads: Fortran
    // temporaries are aligned, but nothing promises it).
    let v = || unsafe { value.cast::<W>().read_unaligned() };
    let op = match what {
        AtomicKind::Define => AmoOp::Set(v()),
        AtomicKind::Ref => AmoOp::Fetch,
        AtomicKind::Cas => AmoOp::CompareSwap {
            // SAFETY: as above.
            cond: unsafe { compare.cast::<W>().read_unaligned() },
            value: v(),
        },
        AtomicKind::Op(1) => AmoOp::Add(v()),
        AtomicKind::Op(2) => AmoOp::And(v()),
        AtomicKind::Op(3) => AmoOp::Or(v()),
        AtomicKind::Op(4) => AmoOp::Xor(v()),
        AtomicKind::Op(o) => unsupported(routine, &format!("atomic operation code {o}")),
    };
    if matches!(what, AtomicKind::Define) {
        // ATOMIC_DEFINE orders after this image's earlier writes, like a release.
        rshmem_core::order::quiet()?;
    }
    atomic::<W>(routine, addr, op, pe)
}
