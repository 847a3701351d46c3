//! The queue protocol of every lock, written once over [`LockWords`]: the runtime runs it
//! on its AMOs, the loom model (`cfg(loom)`) on atomics of its own.
//!
//! A lock is a *home word* at one PE and one *queue node* per PE that holds or waits for
//! it. The home word keeps the queue's tail (the last node's id, 0: no queue) and, when
//! the lock steals, its holder (PE number + 1, 0: free) in a field as wide as the tail
//! ([`Fields`]). A node is one word:
//! - bit 63 "granted": this PE holds the lock (FIFO: set by the predecessor's hand-over);
//! - bit 62 "queued": this PE holds or waits for the lock (nodes that belong to the lock
//!   only, [`LockWords::tracks_holder`]);
//! - bit 61 "head": (stealing) the predecessor made this node the queue's head;
//! - bits 32..61: the successor's id, written by the successor when it queues behind;
//! - bits 0..32: untouched (the in-word layout keeps the home word's fields there).
//!
//! FIFO: the holder hands the lock to its successor. Stealing (for oversubscribed jobs,
//! where the successor is often not running): a PE that finds no holder writes its number
//! into the holder field, queue or no queue; otherwise it queues, waits on its own node
//! until it is the head, then polls the home word and takes the lock once it is free, and
//! makes its successor the head. The queue keeps all but the head off the home word.

use crate::error::{Error, Result};
use crate::word::AmoOp;

/// Node bit: this PE holds the lock.
pub(crate) const GRANTED: u64 = 1 << 63;
/// Node bit: this PE holds or waits for the lock.
pub(crate) const QUEUED: u64 = 1 << 62;
/// Node bit: this node is the head of a stealing lock's queue.
const HEAD: u64 = 1 << 61;
/// Largest node id (the successor field's width).
pub(crate) const MAX_NODE: u64 = (1 << 29) - 1;
const NEXT_MASK: u64 = MAX_NODE << 32;
/// A node's bits that are not its own (the in-word layout's home fields).
const LOW: u64 = 0xffff_ffff;

/// Where a lock's home word keeps its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    /// Mask of the tail, from bit 0; all ones: the tail is the whole word.
    pub tail: u64,
    /// Position of the holder field (as wide as the tail); 0: FIFO, no holder field.
    pub holder_shift: u32,
}

impl Fields {
    fn holder_mask(self) -> u64 {
        self.tail << self.holder_shift
    }

    /// Whether a home word shows the lock held (FIFO: queued, stealing: a holder).
    pub(crate) fn held(self, home: u64) -> bool {
        if self.holder_shift == 0 {
            home & self.tail != 0
        } else {
            home & self.holder_mask() != 0
        }
    }

    /// The PE a stealing lock's home word names as holder.
    fn holder(self, home: u64) -> usize {
        ((home >> self.holder_shift) & self.tail) as usize - 1
    }
}

/// A lock's words, as one PE sees them.
pub(crate) trait LockWords {
    /// This PE.
    fn me(&self) -> usize;
    /// This PE's queue node, as the tail and successor fields name it (1..=[`MAX_NODE`]).
    fn own(&self) -> u64;
    /// The PE of node `id`.
    fn pe_of(&self, id: u64) -> usize;
    /// The home word's layout.
    fn fields(&self) -> Fields;
    /// Whether this PE's node serves this lock only, so that its "queued" and "granted"
    /// bits tell whether this PE holds or waits for it (misuse is then refused here);
    /// otherwise the node is lent for one acquisition and the caller keeps that account.
    fn tracks_holder(&self) -> bool;
    /// An atomic on the home word.
    fn home(&self, op: AmoOp<u64>) -> Result<u64>;
    /// An atomic on node `id`.
    fn node(&self, id: u64, op: AmoOp<u64>) -> Result<u64>;
    /// This PE's node, read with acquire.
    fn load_own(&self) -> u64;
    /// Waits until this PE's node satisfies `ready`; returns it. `ahead` is the PE that
    /// must write it, when known: the wait fails if that PE finalized or died first.
    fn wait_own(&self, ahead: Option<usize>, ready: impl Fn(u64) -> bool) -> Result<u64>;
    /// Polls the home word until `free` holds; returns it. The wait fails if the PE that
    /// `holder` names in the word finalized or died holding the lock.
    fn wait_home(&self, free: impl Fn(u64) -> bool, holder: impl Fn(u64) -> usize) -> Result<u64>;
    /// Completes this PE's outstanding operations (before a release).
    fn quiet(&self);
}

fn misuse(routine: &'static str, reason: &'static str) -> Error {
    Error::InvalidArgument {
        routine,
        arg: "lock",
        reason,
    }
}

/// What this PE's own node says: `Err` if it holds or waits for the lock.
fn not_queued(routine: &'static str, own: u64) -> Result<()> {
    match (own & QUEUED != 0, own & GRANTED != 0) {
        (false, _) => Ok(()),
        (true, true) => Err(misuse(
            routine,
            "this PE already holds this lock (locks are not reentrant)",
        )),
        (true, false) => Err(misuse(
            routine,
            "this PE is already waiting for this lock (in another thread)",
        )),
    }
}

/// Compare-and-swaps the home word until `update` is written over a word that `expect`
/// accepts, starting from the guess `old` (which it accepts): `Ok` with the word
/// replaced, or `Err` with the word `expect` refused.
fn update_home<L: LockWords>(
    l: &L,
    mut old: u64,
    expect: impl Fn(u64) -> bool,
    update: impl Fn(u64) -> u64,
) -> Result<std::result::Result<u64, u64>> {
    loop {
        let seen = l.home(AmoOp::CompareSwap {
            cond: old,
            value: update(old),
        })?;
        if seen == old {
            return Ok(Ok(old));
        }
        old = seen;
        if !expect(old) {
            return Ok(Err(old));
        }
    }
}

/// Readies this PE's node to be published: a node lent for this acquisition loses what
/// its last one left (one that tracks its holder was cleared by `enter`).
fn ready_node<L: LockWords>(l: &L) -> Result<()> {
    if !l.tracks_holder() {
        l.node(l.own(), AmoOp::Set(0))?;
    }
    Ok(())
}

/// Rewrites this PE's own node with `f` (peers may write its other bits meanwhile).
fn update_own<L: LockWords>(l: &L, f: impl Fn(u64) -> u64) -> Result<u64> {
    let mut own = l.load_own();
    loop {
        let seen = l.node(
            l.own(),
            AmoOp::CompareSwap {
                cond: own,
                value: f(own),
            },
        )?;
        if seen == own {
            return Ok(own);
        }
        own = seen;
    }
}

/// Marks this PE's node queued (clearing stale bits: nobody else writes them while this
/// PE is not in the queue), refusing if it already is.
fn enter<L: LockWords>(l: &L, routine: &'static str) -> Result<()> {
    let mut own = l.load_own();
    loop {
        not_queued(routine, own)?;
        let seen = l.node(
            l.own(),
            AmoOp::CompareSwap {
                cond: own,
                value: (own & LOW) | QUEUED,
            },
        )?;
        if seen == own {
            return Ok(());
        }
        own = seen;
    }
}

/// Takes the lock, waiting unless `try_only`; returns whether it was taken.
pub(crate) fn acquire<L: LockWords>(l: &L, routine: &'static str, try_only: bool) -> Result<bool> {
    let f = l.fields();
    if l.tracks_holder() {
        enter(l, routine)?;
    }
    let took = if f.holder_shift == 0 {
        acquire_fifo(l, f, try_only)?
    } else {
        acquire_steal(l, f, try_only)?
    };
    if !took && l.tracks_holder() {
        // Refused: leave the queue we never joined.
        l.node(l.own(), AmoOp::And(LOW))?;
    }
    Ok(took)
}

fn acquire_fifo<L: LockWords>(l: &L, f: Fields, try_only: bool) -> Result<bool> {
    let me = l.own();
    ready_node(l)?;
    let queue = |w: u64| (w & !f.tail) | me;
    let prev = if try_only {
        match update_home(l, 0, |w| w & f.tail == 0, queue)? {
            Ok(w) => w & f.tail,
            Err(_) => return Ok(false),
        }
    } else if f.tail == u64::MAX {
        l.home(AmoOp::Swap(me))?
    } else {
        match update_home(l, 0, |_| true, queue)? {
            Ok(w) | Err(w) => w & f.tail,
        }
    };
    if prev == 0 {
        if l.tracks_holder() {
            l.node(me, AmoOp::Or(GRANTED))?;
        }
        return Ok(true);
    }
    // Link behind the predecessor, then wait for it to hand the lock over.
    l.node(prev, AmoOp::Or(me << 32))?;
    l.wait_own(Some(l.pe_of(prev)), |w| w & GRANTED != 0)?;
    Ok(true)
}

fn acquire_steal<L: LockWords>(l: &L, f: Fields, try_only: bool) -> Result<bool> {
    let me = l.own();
    let mine = (l.me() as u64 + 1) << f.holder_shift;
    let free = |w: u64| w & f.holder_mask() == 0;
    // No holder (queue or no queue): take it.
    let mut w = match update_home(l, 0, free, |w| w | mine)? {
        Ok(_) => return took_steal(l),
        Err(held) => held,
    };
    if try_only {
        return Ok(false);
    }
    // Held: queue behind the tail, keeping the holder; or take it if it came free.
    ready_node(l)?;
    loop {
        let want = if free(w) {
            w | mine
        } else {
            (w & !f.tail) | me
        };
        let seen = l.home(AmoOp::CompareSwap {
            cond: w,
            value: want,
        })?;
        if seen == w {
            if free(w) {
                return took_steal(l);
            }
            break;
        }
        w = seen;
    }
    let pred = w & f.tail;
    if pred != 0 {
        l.node(pred, AmoOp::Or(me << 32))?;
        l.wait_own(Some(l.pe_of(pred)), |w| w & HEAD != 0)?;
    }
    // The queue's head: take the lock once it is free, clearing the tail if it is ours.
    let taken = loop {
        let w = l.wait_home(free, |w| f.holder(w))?;
        let tail_after = if w & f.tail == me { 0 } else { w & f.tail };
        let want = (w & !f.tail) | mine | tail_after;
        if l.home(AmoOp::CompareSwap {
            cond: w,
            value: want,
        })? == w
        {
            break w;
        }
    };
    if taken & f.tail != me {
        // A successor queued: once it has linked, it becomes the head.
        let next = (l.wait_own(None, |w| w & NEXT_MASK != 0)? & NEXT_MASK) >> 32;
        l.node(next, AmoOp::Or(HEAD))?;
    }
    took_steal(l)
}

/// A stealing lock taken: out of the queue, this PE's node says it holds the lock.
fn took_steal<L: LockWords>(l: &L) -> Result<bool> {
    if l.tracks_holder() {
        update_own(l, |w| (w & !(HEAD | NEXT_MASK)) | GRANTED)?;
    }
    Ok(true)
}

/// Releases the lock this PE holds: hands it to the next waiter (FIFO) or frees it.
pub(crate) fn release<L: LockWords>(l: &L, routine: &'static str) -> Result<()> {
    let own = l.load_own();
    if l.tracks_holder() && own & (QUEUED | GRANTED) != QUEUED | GRANTED {
        return Err(misuse(routine, "this PE does not hold this lock"));
    }
    l.quiet();
    let f = l.fields();
    let me = l.own();
    // The PE holds the lock until its own node is cleared, after the home word.
    let leave = || {
        if l.tracks_holder() {
            l.node(me, AmoOp::And(LOW))?;
        }
        Ok(())
    };
    if f.holder_shift != 0 {
        l.home(AmoOp::And(!f.holder_mask()))?;
        return leave();
    }
    let mut next = (own & NEXT_MASK) >> 32;
    if next == 0 {
        // No successor linked yet: free the lock if we are still the tail.
        let mine = |w: u64| w & f.tail == me;
        if update_home(l, me, mine, |w| w & !f.tail)?.is_ok() {
            return leave();
        }
        // A successor swapped the tail but has not linked yet.
        next = (l.wait_own(None, |w| w & NEXT_MASK != 0)? & NEXT_MASK) >> 32;
    }
    // The successor is linked, so nobody writes our node any more: leave, then hand over.
    leave()?;
    l.node(next, AmoOp::Or(GRANTED)).map(drop)
}
