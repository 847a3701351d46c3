//! Distributed locks on a symmetric `long` (`shmem_set_lock` and friends): an MCS queue
//! lock, so waiters are served first come, first served and each spins on its own word.
//!
//! The one 64-bit lock word of every PE is split in two halves:
//! - low 32 bits, used on PE 0 only: the queue tail (PE number + 1, 0 = free);
//! - high 32 bits, on each PE: bit 63 = "granted" (set by the predecessor), bits 32..62 =
//!   the successor (PE number + 1, set by the successor when it queues behind us).
//!
//! All updates are 64-bit atomics, so the halves never tear each other.

use rshmem_util::Waiter;

use crate::error::Result;
use crate::runtime::{rt, Runtime};
use crate::transport::SymAddr;
use crate::word::AmoOp;

const LOW: u64 = 0xffff_ffff;
const GRANTED: u64 = 1 << 63;
const NEXT_MASK: u64 = 0x7fff_ffff << 32;
/// The PE whose copy of the lock word holds the tail.
const HOME: usize = 0;

fn check(routine: &'static str, lock: *const i64) -> Result<(&'static Runtime, SymAddr)> {
    let rt = rt(routine)?;
    rt.aligned(routine, "lock", lock as usize, 8)?;
    let a = rt.sym(routine, "lock", lock as usize, 8)?;
    Ok((rt, a))
}

impl Runtime {
    fn lock_amo(
        &self,
        routine: &'static str,
        pe: usize,
        a: SymAddr,
        op: AmoOp<u64>,
    ) -> Result<u64> {
        self.amo(routine, pe, a, op)
    }

    /// Swaps the tail on the home PE for `new` when `expect(old_tail)` holds; returns the
    /// old tail, or `None` when `expect` refused it.
    fn swap_tail(
        &self,
        routine: &'static str,
        a: SymAddr,
        expect: impl Fn(u64) -> bool,
        new: u64,
    ) -> Result<Option<u64>> {
        let mut old = self.lock_amo(routine, HOME, a, AmoOp::Fetch)?;
        loop {
            if !expect(old & LOW) {
                return Ok(None);
            }
            let want = (old & !LOW) | new;
            let seen = self.lock_amo(
                routine,
                HOME,
                a,
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

    /// Clears our own successor/granted bits before queueing (nobody else writes them
    /// while we are not in the queue).
    fn reset_own(&self, routine: &'static str, a: SymAddr) -> Result<()> {
        self.lock_amo(routine, self.me, a, AmoOp::And(LOW))
            .map(drop)
    }
}

/// `shmem_set_lock`: waits until this PE holds the lock.
pub fn set_lock(routine: &'static str, lock: *const i64) -> Result<()> {
    let (rt, a) = check(routine, lock)?;
    rt.reset_own(routine, a)?;
    let me1 = rt.me as u64 + 1;
    let prev = rt
        .swap_tail(routine, a, |_| true, me1)?
        .expect("unconditional swap");
    if prev == 0 {
        return Ok(());
    }
    // Link behind the predecessor, then wait for it to hand the lock over.
    rt.lock_amo(routine, (prev - 1) as usize, a, AmoOp::Or(me1 << 32))?;
    let mut w = Waiter::new();
    while rt.load_local::<u64>(a) & GRANTED == 0 {
        w.snooze();
    }
    Ok(())
}

/// `shmem_test_lock`: takes the lock if it is free. Returns `true` if it was taken here
/// (C: returns 0), `false` if another PE holds it (C: 1).
pub fn test_lock(routine: &'static str, lock: *const i64) -> Result<bool> {
    let (rt, a) = check(routine, lock)?;
    rt.reset_own(routine, a)?;
    let me1 = rt.me as u64 + 1;
    Ok(rt.swap_tail(routine, a, |t| t == 0, me1)?.is_some())
}

/// `shmem_clear_lock`: completes outstanding operations, then releases the lock to the
/// next waiter.
///
/// This PE must hold the lock.
pub fn clear_lock(routine: &'static str, lock: *const i64) -> Result<()> {
    let (rt, a) = check(routine, lock)?;
    rt.quiet_all();
    let me1 = rt.me as u64 + 1;
    let mut next = (rt.load_local::<u64>(a) & NEXT_MASK) >> 32;
    if next == 0 {
        // No successor linked yet: free the lock if we are still the tail.
        if rt.swap_tail(routine, a, |t| t == me1, 0)?.is_some() {
            return Ok(());
        }
        // A successor swapped the tail but has not linked yet.
        let mut w = Waiter::new();
        loop {
            next = (rt.load_local::<u64>(a) & NEXT_MASK) >> 32;
            if next != 0 {
                break;
            }
            w.snooze();
        }
    }
    rt.lock_amo(routine, (next - 1) as usize, a, AmoOp::Or(GRANTED))
        .map(drop)
}
