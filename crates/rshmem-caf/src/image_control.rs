//! Image control and atomics: SYNC ALL / IMAGES / MEMORY, locks (MCS queue locks at the
//! image that holds the lock variable), CRITICAL, events, atomic subroutines.

use rshmem_core::ops::events;
use rshmem_core::{amo, AmoOp, Ctx, Word};
use smallvec::SmallVec;

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

/// `sync images(list)` (`images` `None`: `sync images(*)`): the core's pairwise
/// synchronization with the listed images (their numbers checked first), or with every
/// image of the current team.
pub(crate) fn sync_images(routine: &'static str, images: Option<&[i32]>) -> CafResult {
    let s = state(routine);
    let synced = match (images, crate::team::current()) {
        (Some(l), _) => {
            // The partners' world PEs, translated once; on the stack (not zeroed) for the
            // usual short lists.
            let mut partners = SmallVec::<[usize; SMALL_LIST]>::new();
            for &i in l {
                partners.push(pe_of(s, i)?);
            }
            s.pairs.sync_with(routine, &partners)
        }
        (None, Some(t)) => {
            let m = t.team.members();
            s.pairs
                .sync_with_every(routine, (0..t.team.n_pes()).map(|r| m.pe(r)))
        }
        (None, None) => s.pairs.sync_with_every(routine, 0..s.n),
    };
    synced.map_err(|e| match e {
        rshmem_core::Error::RepeatedPe { pe, .. } => CafError::new(
            STAT_DUP_SYNC_IMAGES,
            format!("image {} appears twice in the image list", image_of(pe)),
        ),
        rshmem_core::Error::PeGone { pe, .. } => {
            CafError::new(STAT_STOPPED_IMAGE, format!("image {} has stopped", pe + 1))
        }
        e => e.into(),
    })
}

/// Image lists up to this long are translated without allocating.
const SMALL_LIST: usize = 64;

/// The image number of world PE `pe` in the current team.
fn image_of(pe: usize) -> usize {
    match crate::team::current() {
        Some(t) => t.team.members().rank_of(pe).unwrap_or(pe) + 1,
        None => pe + 1,
    }
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
    crate::image_status::mark_gone("_gfortran_caf_lock", pe, code);
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
    let pe = target(state(routine), image)?;
    // SAFETY: the event's word in a registered coarray; the core checks it is symmetric.
    unsafe { events::post(routine, (t.base + index * WORD) as *const i64, pe)? };
    Ok(())
}

/// `event wait(ev, until_count=)`: waits for the local count, then consumes it.
pub(crate) fn event_wait(routine: &'static str, t: &Token, index: usize, until: i32) -> CafResult {
    // SAFETY: the event's word of this image, in symmetric memory.
    unsafe { events::wait(routine, (t.base + index * WORD) as *const i64, until.into())? };
    Ok(())
}

/// `event_query(ev, count)`.
pub(crate) fn event_query(
    routine: &'static str,
    t: &Token,
    index: usize,
    image: i32,
) -> CafResult<i64> {
    let pe = target(state(routine), image)?;
    // SAFETY: as for `event_post`.
    Ok(unsafe { events::query(routine, (t.base + index * WORD) as *const i64, pe)? })
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
