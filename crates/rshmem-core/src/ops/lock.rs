//! Distributed locks on a symmetric `long` (`shmem_set_lock` and friends): an MCS queue
//! lock, so waiters are served first come, first served and each spins on its own word.
//!
//! The one 64-bit lock word of every PE is split in two halves:
//! - low 32 bits, used on PE 0 only: the queue tail (PE number + 1, 0 = free);
//! - high 32 bits, on each PE: bit 63 = "granted" (this PE holds the lock), bit 62 =
//!   "queued" (this PE holds or waits for the lock), bits 32..61 = the successor (PE
//!   number + 1, set by the successor when it queues behind us).
//!
//! All updates are 64-bit atomics, so the halves never tear each other. Because a PE's own
//! word says whether it holds or waits for the lock, misuse (setting a lock the PE holds
//! or waits for, clearing one it does not hold) is found without any other shared state,
//! and reported instead of hanging.
//!
//! The protocol is written once over `LockWords`: the runtime implements it with its
//! AMOs on the lock word, and the loom model (`cfg(loom)`) with atomics of its own.

use rshmem_util::Waiter;

use crate::error::{Error, Result};
use crate::profile::{self, Family};
use crate::runtime::{rt, Runtime};
use crate::transport::SymAddr;
use crate::word::AmoOp;

const LOW: u64 = 0xffff_ffff;
const GRANTED: u64 = 1 << 63;
const QUEUED: u64 = 1 << 62;
const NEXT_MASK: u64 = 0x3fff_ffff << 32;
/// The PE whose copy of the lock word holds the tail.
const HOME: usize = 0;

/// The lock word of every PE, as the queue protocol sees it.
pub(crate) trait LockWords {
    /// This PE.
    fn me(&self) -> usize;
    /// An atomic operation on `pe`'s copy of the word.
    fn amo(&self, pe: usize, op: AmoOp<u64>) -> Result<u64>;
    /// Waits until this PE's own word satisfies `ready`; returns the word. `ahead` is the
    /// PE that must write it (the predecessor in the queue), when known: the wait fails
    /// if that PE finalized (or died) without writing it.
    fn wait_own(&self, ahead: Option<usize>, ready: impl Fn(u64) -> bool) -> Result<u64>;
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

/// What this PE's own word says: `Err` if it holds or waits for the lock.
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

/// Swaps the tail on the home PE for `new` when `expect(old_tail)` holds; returns the
/// old tail, or `None` when `expect` refused it.
fn swap_tail<L: LockWords>(l: &L, expect: impl Fn(u64) -> bool, new: u64) -> Result<Option<u64>> {
    let mut old = l.amo(HOME, AmoOp::Fetch)?;
    loop {
        if !expect(old & LOW) {
            return Ok(None);
        }
        let want = (old & !LOW) | new;
        let seen = l.amo(
            HOME,
            AmoOp::CompareSwap {
                cond: old,
                value: want,
            },
        )?;
        if seen == old {
            return Ok(Some(old & LOW));
        }
        old = seen;
    }
}

/// Marks this PE as queued (clearing stale successor/granted bits: nobody else writes
/// them while we are not in the queue), refusing if it already is.
fn enter<L: LockWords>(l: &L, routine: &'static str) -> Result<()> {
    let mut own = l.amo(l.me(), AmoOp::Fetch)?;
    loop {
        not_queued(routine, own)?;
        let seen = l.amo(
            l.me(),
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
    enter(l, routine)?;
    let me1 = l.me() as u64 + 1;
    let prev = if try_only {
        match swap_tail(l, |t| t == 0, me1)? {
            Some(prev) => prev,
            None => {
                // Taken by another PE: leave the queue we never joined.
                l.amo(l.me(), AmoOp::And(LOW))?;
                return Ok(false);
            }
        }
    } else {
        swap_tail(l, |_| true, me1)?.expect("unconditional swap")
    };
    if prev == 0 {
        l.amo(l.me(), AmoOp::Or(GRANTED))?;
        return Ok(true);
    }
    // Link behind the predecessor, then wait for it to hand the lock over.
    l.amo((prev - 1) as usize, AmoOp::Or(me1 << 32))?;
    l.wait_own(Some((prev - 1) as usize), |w| w & GRANTED != 0)?;
    Ok(true)
}

/// Releases the lock this PE holds to the next waiter.
pub(crate) fn release<L: LockWords>(l: &L, routine: &'static str) -> Result<()> {
    let own = l.amo(l.me(), AmoOp::Fetch)?;
    if own & (QUEUED | GRANTED) != QUEUED | GRANTED {
        return Err(misuse(routine, "this PE does not hold this lock"));
    }
    l.quiet();
    let me1 = l.me() as u64 + 1;
    let mut next = (own & NEXT_MASK) >> 32;
    if next == 0 {
        // No successor linked yet: free the lock if we are still the tail. The PE holds
        // the lock until its own word is cleared, after the tail.
        if swap_tail(l, |t| t == me1, 0)?.is_some() {
            l.amo(l.me(), AmoOp::And(LOW))?;
            return Ok(());
        }
        // A successor swapped the tail but has not linked yet.
        next = (l.wait_own(None, |w| w & NEXT_MASK != 0)? & NEXT_MASK) >> 32;
    }
    // The successor is linked, so nobody writes our word any more: leave the queue, then
    // hand over.
    l.amo(l.me(), AmoOp::And(LOW))?;
    l.amo((next - 1) as usize, AmoOp::Or(GRANTED)).map(drop)
}

/// The runtime's copy of a checked lock word.
struct RtLock<'r> {
    rt: &'r Runtime,
    a: SymAddr,
    routine: &'static str,
}

impl LockWords for RtLock<'_> {
    fn me(&self) -> usize {
        self.rt.me
    }

    fn amo(&self, pe: usize, op: AmoOp<u64>) -> Result<u64> {
        self.rt.amo(self.routine, pe, self.a, op)
    }

    fn wait_own(&self, ahead: Option<usize>, ready: impl Fn(u64) -> bool) -> Result<u64> {
        let mut w = Waiter::new();
        let mut net = self.rt.fabric.net_wait(crate::ctx::runtime_ctx());
        loop {
            let v = self.rt.load_local::<u64>(self.a);
            if ready(v) {
                return Ok(v);
            }
            if let Some(pe) = ahead.filter(|_| w.overdue()) {
                net.release();
                self.check_ahead(pe, &ready)?;
            }
            net.pause(&mut w);
        }
    }

    fn quiet(&self) {
        self.rt.quiet_all();
    }
}

impl RtLock<'_> {
    /// The overdue check of a wait for the lock: the predecessor `pe` in the queue holds
    /// the lock or waits for it. Once it has finalized it holds it for good (it cannot be
    /// in `shmem_set_lock` any more, and only `shmem_clear_lock` hands it over), so the
    /// wait fails naming it, unless the word (re-read after its state, with acquire)
    /// shows the hand-over after all. A dead predecessor fails the wait as well.
    #[cold]
    fn check_ahead(&self, pe: usize, ready: &impl Fn(u64) -> bool) -> Result<()> {
        let (rt, routine) = (self.rt, self.routine);
        let err = if rt.is_finalizing(pe) {
            Error::LockHolderFinalized {
                routine,
                pe,
                waiter: rt.me,
            }
        } else if rt.probe_failed(pe) {
            Error::PeFailed {
                routine,
                pe,
                waiter: rt.me,
            }
        } else {
            return Ok(());
        };
        if ready(rt.load_local::<u64>(self.a)) {
            return Ok(());
        }
        Err(err)
    }
}

fn check(routine: &'static str, lock: *const i64) -> Result<RtLock<'static>> {
    let rt = rt(routine)?;
    rt.aligned(routine, "lock", lock as usize, 8)?;
    let a = rt.sym(routine, "lock", lock as usize, 8)?;
    Ok(RtLock { rt, a, routine })
}

/// `shmem_set_lock`: waits until this PE holds the lock.
///
/// # Errors
/// `InvalidArgument` naming `lock` if this PE already holds or waits for it (waiting
/// would never end).
pub fn set_lock(routine: &'static str, lock: *const i64) -> Result<()> {
    let _p = profile::span(Family::Lock, 0);
    acquire(&check(routine, lock)?, routine, false).map(drop)
}

/// `shmem_test_lock`: takes the lock if it is free. Returns `true` if it was taken here
/// (C: returns 0), `false` if another PE holds it (C: 1).
///
/// # Errors
/// `InvalidArgument` naming `lock` if this PE already holds or waits for it.
pub fn test_lock(routine: &'static str, lock: *const i64) -> Result<bool> {
    let _p = profile::span(Family::Lock, 0);
    acquire(&check(routine, lock)?, routine, true)
}

/// `shmem_clear_lock`: completes outstanding operations, then releases the lock to the
/// next waiter.
///
/// # Errors
/// `InvalidArgument` naming `lock` if this PE does not hold it. The PE holds the lock
/// until `clear_lock` returns: another thread's `set_lock` that races with it may still
/// find it held.
pub fn clear_lock(routine: &'static str, lock: *const i64) -> Result<()> {
    let _p = profile::span(Family::Lock, 0);
    release(&check(routine, lock)?, routine)
}
