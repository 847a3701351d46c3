//! Image control and atomics: SYNC ALL / IMAGES / MEMORY, locks (MCS queue locks at the
//! image that holds the lock variable), CRITICAL, events, atomic subroutines.

use std::sync::atomic::Ordering;

use rshmem_core::ops::events;
use rshmem_core::{amo, p2p, AmoOp, Cmp, Ctx, Word};
use rshmem_util::config::CafLock;
use rshmem_util::Waiter;

use crate::image::{pe_of, state, State, QNODES};
use crate::stat_errmsg::{
    unsupported, CafError, CafResult, STAT_DUP_SYNC_IMAGES, STAT_ERROR, STAT_LOCKED,
    STAT_LOCKED_OTHER_IMAGE, STAT_NOT_LOCKED, STAT_STOPPED_IMAGE,
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

/// An acquire load of this image's symmetric word at `addr` (peers write it with atomics;
/// a load of one's own word needs no round trip, as the core's waits do).
fn own_word(addr: usize) -> u64 {
    // SAFETY: an 8-aligned word of this image's queue nodes, in symmetric memory that
    // lives to the end of the program.
    unsafe { &*(addr as *const std::sync::atomic::AtomicU64) }.load(Ordering::Acquire)
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
    if let Some(l) = images {
        for &i in l {
            pe_of(s, i)?;
        }
    }
    let partners = Partners {
        s,
        list: images,
        team: crate::team::current(),
        next: 0,
    };
    s.pairs
        .sync_with(routine, || partners)
        .map_err(|e| match e {
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

/// The world PEs of a SYNC IMAGES's partners, in order: the listed images (already
/// checked), or every image of the current team (`list` `None`).
#[derive(Clone, Copy)]
struct Partners<'a> {
    s: &'a State,
    list: Option<&'a [i32]>,
    team: Option<&'static crate::team::CafTeam>,
    next: usize,
}

impl Iterator for Partners<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let i = self.next;
        self.next += 1;
        match (self.list, self.team) {
            // A checked image: never out of range (`usize::MAX` would fail in the core).
            (Some(l), _) => l.get(i).map(|&im| pe_of(self.s, im).unwrap_or(usize::MAX)),
            (None, Some(t)) => (i < t.team.n_pes()).then(|| t.team.members().pe(i)),
            (None, None) => (i < self.s.n).then_some(i),
        }
    }
}

/// The image number of world PE `pe` in the current team.
fn image_of(pe: usize) -> usize {
    match crate::team::current() {
        Some(t) => t.team.members().rank_of(pe).unwrap_or(pe) + 1,
        None => pe + 1,
    }
}

/// Address of queue node `slot`'s `locked` word (its `next` word follows).
fn qnode(s: &State, slot: usize) -> usize {
    s.qnodes + slot * 16
}

/// A lock word's value naming (image, queue node): never 0, which means "unlocked".
fn encode(pe: usize, slot: usize) -> u64 {
    ((pe as u64 + 1) << 32) | slot as u64
}

fn decode(v: u64) -> (usize, usize) {
    ((v >> 32) as usize - 1, (v & 0xffff_ffff) as usize)
}

/// `steal` mode's lock word: the holder's image number in the high half (0: free), the
/// queue's tail in the low half ([`steal_tail`]).
const TAIL: u64 = 0xffff_ffff;
/// Bits of a queue node's index in a `steal` tail ([`QNODES`] is `1 << SLOT_BITS`).
const SLOT_BITS: u32 = 10;
const _: () = assert!(QNODES == 1 << SLOT_BITS);
/// Images up to which `steal` mode fits a tail into the low half.
const STEAL_MAX_IMAGES: usize = (1 << (32 - SLOT_BITS)) - 1;

/// A `steal` tail naming (image, queue node): never 0, which means "no queue".
fn steal_tail(pe: usize, slot: usize) -> u64 {
    ((pe as u64 + 1) << SLOT_BITS) | slot as u64
}

fn steal_decode(t: u64) -> (usize, usize) {
    (
        (t >> SLOT_BITS) as usize - 1,
        (t & ((1 << SLOT_BITS) - 1)) as usize,
    )
}

/// Chooses the lock protocol at start-up, the same on every image (collective; `scratch`
/// is the symmetric start-up buffer, not in use yet). `fifo`: the seed's MCS lock, handed
/// from each holder to the next image in the queue. `steal`: the queue is kept, but a
/// running image may take a free lock ahead of it, and the queue's head takes the lock
/// when it finds it free. `auto`: `steal` when some host runs more images than it has
/// cores (a FIFO hand-off then waits for a queued image to be scheduled, about one
/// context switch per LOCK), `fifo` otherwise.
pub(crate) fn agree_lock_mode(scratch: usize) -> rshmem_core::Result<bool> {
    const R: &str = "_gfortran_caf_init";
    let rt = rshmem_core::runtime::try_runtime()
        .ok_or(rshmem_core::Error::NotInitialized { routine: R })?;
    // `RSHMEM_CAF_LOCK`, a row of the environment table (checked at init).
    let want: i64 = match rt.config().caf_lock {
        _ if rt.world().n_pes() > STEAL_MAX_IMAGES => 0,
        CafLock::Auto => rt.oversubscribed().into(),
        CafLock::Fifo => 0,
        CafLock::Steal => 1,
    };
    let p = scratch as *mut i64;
    // SAFETY: the start-up scratch buffer is symmetric, holds 4096 bytes and is not in use
    // yet; every image makes this call at start-up.
    unsafe {
        p.write(want);
        rshmem_core::coll::reduce::<i64>(R, rt.world(), p, p, 1, rshmem_core::coll::ReduceOp::Max)?;
        Ok(p.read() != 0)
    }
}

/// `lock(l[image])` (`acquired` non-null: `acquired_lock=`): joins the lock's MCS queue
/// (one swap at the lock's image, then a local wait for the predecessor's hand-off), or
/// in `steal` mode ([`agree_lock_mode`]) takes the lock at once when it is free.
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
    let l = LockAt { addr, pe, slot };
    let got = if s.lock_steal {
        lock_steal(routine, s, l, acquired)
    } else {
        lock_fifo(routine, s, l, acquired)
    };
    match got {
        Ok(true) => s.locks.hold(slot),
        Ok(false) => s.locks.give_back(slot),
        Err(e) => {
            s.locks.give_back(slot);
            return Err(e);
        }
    }
    Ok(())
}

/// A lock variable (its word's symmetric address at `pe`) and the queue node this image
/// uses for it.
#[derive(Clone, Copy)]
struct LockAt {
    addr: usize,
    pe: usize,
    slot: usize,
}

/// Readies queue node `q` (ours, in no queue yet) for publication: posted writes (one
/// atomicity domain with the peers'), complete before the atomic that publishes it (one
/// flush through UCX, a fence on shared memory).
fn ready_node(routine: &'static str, s: &State, q: usize) -> CafResult {
    post(routine, q, 1, s.me)?;
    post(routine, q + 8, 0, s.me)?;
    rshmem_core::order::quiet()?;
    Ok(())
}

/// The seed's MCS lock: the lock word holds the queue's tail; the holder hands the lock
/// to its successor at UNLOCK.
fn lock_fifo(
    routine: &'static str,
    s: &State,
    l: LockAt,
    acquired: Option<&mut i32>,
) -> CafResult<bool> {
    let q = qnode(s, l.slot);
    let me = encode(s.me, l.slot);
    ready_node(routine, s, q)?;
    if let Some(acq) = acquired {
        let cas = AmoOp::CompareSwap { cond: 0, value: me };
        let old = atomic::<u64>(routine, l.addr, cas, l.pe)?;
        *acq = (old == 0) as i32;
        return Ok(old == 0);
    }
    let pred = atomic::<u64>(routine, l.addr, AmoOp::Swap(me), l.pe)?;
    if pred != 0 {
        let (ppe, pslot) = decode(pred);
        follow(routine, s, q, me, ppe, pslot)?;
    }
    Ok(true)
}

/// Links our queue node `q` (named `me`) behind queue node `pslot` of image `ppe` and
/// waits until that predecessor hands over.
fn follow(
    routine: &'static str,
    s: &State,
    q: usize,
    me: u64,
    ppe: usize,
    pslot: usize,
) -> CafResult {
    atomic::<u64>(routine, qnode(s, pslot) + 8, AmoOp::Set(me), ppe)?;
    // SAFETY: our own queue node's word, in symmetric memory.
    unsafe { p2p::wait_until_from(routine, q as *const u64, Cmp::Eq, 0, ppe)? };
    Ok(())
}

/// `steal` mode: the lock word names its holder and the tail of a queue of waiters
/// ([`TAIL`]). A free lock goes to whoever writes its name first; the queue's head polls
/// the word and takes the lock when free, then makes its successor the head. Waiters
/// behind the head wait on their own node, as in the MCS lock.
fn lock_steal(
    routine: &'static str,
    s: &State,
    l: LockAt,
    acquired: Option<&mut i32>,
) -> CafResult<bool> {
    let LockAt { addr, pe, slot } = l;
    let cas = |cond: u64, value: u64| {
        atomic::<u64>(routine, addr, AmoOp::CompareSwap { cond, value }, pe)
    };
    let mine = (s.me as u64 + 1) << 32;
    // Free (with or without a queue): take it.
    let mut v = cas(0, mine)?;
    if v == 0 {
        return Ok(set_acquired(acquired, true));
    }
    while v & !TAIL == 0 {
        let old = cas(v, mine | v)?;
        if old == v {
            return Ok(set_acquired(acquired, true));
        }
        v = old;
    }
    if acquired.is_some() {
        return Ok(set_acquired(acquired, false));
    }
    // Held: join the queue, keeping the holder.
    let q = qnode(s, slot);
    let me = steal_tail(s.me, slot);
    ready_node(routine, s, q)?;
    loop {
        let old = if v & !TAIL == 0 {
            let old = cas(v, mine | v)?;
            if old == v {
                return Ok(true); // taken before our node was published
            }
            old
        } else {
            let old = cas(v, (v & !TAIL) | me)?;
            if old == v {
                break;
            }
            old
        };
        v = old;
    }
    let pred = v & TAIL;
    if pred != 0 {
        let (ppe, pslot) = steal_decode(pred);
        follow(routine, s, q, me, ppe, pslot)?;
    }
    // The queue's head: take the lock when it is free (clearing the tail if it is us).
    let mut waiter = Waiter::new();
    let mut v = atomic::<u64>(routine, addr, AmoOp::Fetch, pe)?;
    loop {
        if v & !TAIL == 0 {
            let old = cas(v, mine | if v == me { 0 } else { v })?;
            if old == v {
                break;
            }
            v = old;
            continue;
        }
        if waiter.overdue() {
            // A holder that stopped or failed never unlocks.
            let holder = (v >> 32) as usize - 1;
            let code = crate::tolerant_sync::probe(holder)?;
            if code != 0 {
                crate::tolerant_sync::mark_gone(holder, code);
                return Err(CafError::new(
                    code,
                    format!(
                        "image {} holds the lock and has stopped or failed",
                        holder + 1
                    ),
                ));
            }
        }
        waiter.snooze();
        v = atomic::<u64>(routine, addr, AmoOp::Fetch, pe)?;
    }
    if v != me {
        // Images queued behind us: the next one, linking to us now, becomes the head.
        // SAFETY: our own queue node's `next` word, in symmetric memory.
        unsafe { p2p::wait_until(routine, (q + 8) as *const u64, Cmp::Ne, 0)? };
        let (npe, nslot) = steal_decode(own_word(q + 8));
        atomic::<u64>(routine, qnode(s, nslot), AmoOp::Set(0), npe)?;
    }
    Ok(true)
}

/// Stores ACQUIRED_LOCK='s answer where asked; returns `got`.
fn set_acquired(acquired: Option<&mut i32>, got: bool) -> bool {
    if let Some(acq) = acquired {
        *acq = got as i32;
    }
    got
}

/// `unlock(l[image])`: hands the lock to the next image in the queue, or frees it.
pub(crate) fn unlock(routine: &'static str, t: &Token, index: usize, image: i32) -> CafResult {
    let s = state(routine);
    let pe = target(s, image)?;
    let addr = t.base + index * WORD;
    let Some(slot) = s.locks.find_held(addr, pe).map(|i| s.locks.unhold(i)) else {
        let v = atomic::<u64>(routine, addr, AmoOp::Fetch, pe)?;
        let locked = if s.lock_steal { v & !TAIL != 0 } else { v != 0 };
        return Err(if !locked {
            CafError::new(STAT_NOT_LOCKED, "the lock variable is not locked")
        } else {
            CafError::new(
                STAT_LOCKED_OTHER_IMAGE,
                "the lock variable is locked by another image",
            )
        });
    };
    // Release: what this image wrote under the lock is visible to the next holder.
    rshmem_core::order::quiet()?;
    if s.lock_steal {
        atomic::<u64>(routine, addr, AmoOp::And(TAIL), pe)?;
        s.locks.give_back(slot);
        return Ok(());
    }
    let q = qnode(s, slot);
    let mut next = own_word(q + 8);
    if next == 0 {
        let old = atomic::<u64>(
            routine,
            addr,
            AmoOp::CompareSwap {
                cond: encode(s.me, slot),
                value: 0,
            },
            pe,
        )?;
        if old != encode(s.me, slot) {
            // A successor swapped itself in and is about to link to us.
            // SAFETY: our own queue node's `next` word, in symmetric memory.
            unsafe { p2p::wait_until(routine, (q + 8) as *const u64, Cmp::Ne, 0)? };
            next = own_word(q + 8);
        }
    }
    if next != 0 {
        let (npe, nslot) = decode(next);
        atomic::<u64>(routine, qnode(s, nslot), AmoOp::Set(0), npe)?;
    }
    s.locks.give_back(slot);
    Ok(())
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
