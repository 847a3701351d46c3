//! Distributed locks: MCS queue locks on a symmetric word at one PE, with two protocols
//! ([`queue`]): FIFO hand-off from holder to waiter, and stealing (a running PE may take
//! a free lock ahead of the queue), chosen by every PE alike at init (`SHMEM_LOCK_PROTOCOL`
//! for `shmem_set_lock`, `RSHMEM_CAF_LOCK` for [`lock_at`]; `auto` steals when a host runs
//! more PEs than it has cores, where a hand-off waits for a descheduled PE).
//!
//! Two placements of the queue nodes:
//! - `shmem_set_lock` on a symmetric `long`: PE 0's copy is the home word (its low half);
//!   each PE's copy of the same `long` is its node (high half). Because a PE's own word
//!   says whether it holds or waits for the lock, misuse (setting a lock the PE holds or
//!   waits for, clearing one it does not hold) is found without any other shared state,
//!   and reported instead of hanging.
//! - [`lock_at`] on a word at any PE (Coarray Fortran's `lock(l[image])`, where each
//!   image's copy is a lock of its own): the caller lends a node of a symmetric pool for
//!   each lock it holds or waits for, and keeps the account of the locks it holds.
//!
//! A waiter whose wait is overdue checks the PE it waits for (its predecessor, or a
//! stealing lock's holder): one that finalized or died holding the lock fails the wait
//! naming it (`LockHolderFinalized`, `PeFailed`).

mod queue;

use rshmem_util::Waiter;

use crate::ctx::runtime_ctx;
use crate::error::{At, Error, Result};
use crate::profile::{self, Family};
use crate::runtime::{rt, Runtime};
use crate::transport::{CtxState, SymAddr};
use crate::word::AmoOp;

pub(crate) use queue::{acquire, release, Fields, LockWords};

/// The PE whose copy of a `shmem_set_lock` word is the home word.
const HOME: usize = 0;
/// `shmem_set_lock`'s home fields: FIFO, the tail in the low half.
const WORD_FIFO: Fields = Fields {
    tail: 0xffff_ffff,
    holder_shift: 0,
};
/// Stealing: tail and holder share the low half (PE numbers + 1 up to `0xffff`).
const WORD_STEAL: Fields = Fields {
    tail: 0xffff,
    holder_shift: 16,
};
/// [`lock_at`]'s home fields: FIFO, the tail is the whole word.
const POOL_FIFO: Fields = Fields {
    tail: u64::MAX,
    holder_shift: 0,
};
/// Stealing: the holder in the high half, the tail in the low half.
const POOL_STEAL: Fields = Fields {
    tail: 0xffff_ffff,
    holder_shift: 32,
};
/// Bits of a pool node's slot in its id (the PE number + 1 above them).
const SLOT_BITS: u32 = 10;
/// Queue nodes in a [`LockAt::nodes`] pool: locks a PE may hold or wait for at once.
pub const POOL_NODES: usize = 1 << SLOT_BITS;
/// PEs up to which [`lock_at`] names every pool node in a successor field.
pub const POOL_MAX_PES: usize = (queue::MAX_NODE >> SLOT_BITS) as usize;

/// The runtime's view of one lock.
pub(crate) struct RtLock<'r> {
    rt: &'r Runtime,
    /// The runtime's context, looked up once for the 4-6 AMOs of a lock and unlock (a
    /// lookup each: 46 more instructions per pair on one image, 821 -> 867).
    ctx: &'static CtxState,
    routine: &'static str,
    /// The PE of the home word, and its address there.
    home_pe: usize,
    word: SymAddr,
    /// The node pool (`None`: each PE's copy of `word` is its node).
    pool: Option<SymAddr>,
    /// This PE's node id, and its address.
    own: u64,
    own_addr: SymAddr,
    fields: Fields,
}

impl LockWords for RtLock<'_> {
    #[inline]
    fn me(&self) -> usize {
        self.rt.me
    }

    #[inline]
    fn own(&self) -> u64 {
        self.own
    }

    #[inline]
    fn pe_of(&self, id: u64) -> usize {
        match self.pool {
            None => id as usize - 1,
            Some(_) => (id >> SLOT_BITS) as usize - 1,
        }
    }

    #[inline]
    fn fields(&self) -> Fields {
        self.fields
    }

    #[inline]
    fn tracks_holder(&self) -> bool {
        self.pool.is_none()
    }

    #[inline]
    fn home(&self, op: AmoOp<u64>) -> Result<u64> {
        self.rt
            .fabric
            .amo(self.ctx, self.home_pe, self.word, op)
            .at(self.routine)
    }

    #[inline]
    fn node(&self, id: u64, op: AmoOp<u64>) -> Result<u64> {
        let addr = match self.pool {
            None => self.word,
            Some(base) => slot_addr(base, (id & ((1 << SLOT_BITS) - 1)) as usize),
        };
        self.rt
            .fabric
            .amo(self.ctx, self.pe_of(id), addr, op)
            .at(self.routine)
    }

    #[inline]
    fn load_own(&self) -> u64 {
        self.rt.load_local(self.own_addr)
    }

    fn wait_own(&self, ahead: Option<usize>, ready: impl Fn(u64) -> bool) -> Result<u64> {
        let mut w = Waiter::new();
        let mut net = self.rt.fabric.net_wait(self.ctx);
        loop {
            let v = self.load_own();
            if ready(v) {
                return Ok(v);
            }
            if let Some(pe) = ahead.filter(|_| w.overdue()) {
                net.release();
                self.check_gone(pe, || Ok(ready(self.load_own())))?;
            }
            net.pause(&mut w);
        }
    }

    fn wait_home(&self, free: impl Fn(u64) -> bool, holder: impl Fn(u64) -> usize) -> Result<u64> {
        let mut w = Waiter::new();
        loop {
            let v = self.home(AmoOp::Fetch)?;
            if free(v) {
                return Ok(v);
            }
            if w.overdue() {
                self.check_gone(holder(v), || Ok(free(self.home(AmoOp::Fetch)?)))?;
            }
            w.snooze();
        }
    }

    fn quiet(&self) {
        self.rt.quiet_all();
    }
}

/// The address of node `slot` of the pool at `base`.
fn slot_addr(base: SymAddr, slot: usize) -> SymAddr {
    SymAddr {
        off: base.off + slot * 8,
        ..base
    }
}

impl RtLock<'_> {
    /// The overdue check of a wait for the lock on `pe` (the predecessor in the queue, or
    /// the holder). Once it has finalized it holds the lock for good (it cannot be in a
    /// lock call any more, and only a release hands it over), so the wait fails naming
    /// it, unless `arrived` (asked after its state) shows the wait over after all. A dead
    /// PE fails the wait as well.
    #[cold]
    fn check_gone(&self, pe: usize, arrived: impl Fn() -> Result<bool>) -> Result<()> {
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
        if arrived()? {
            return Ok(());
        }
        Err(err)
    }
}

// Inlined: a `Result<RtLock>` returned through memory costs a store-forwarding stall per call.
#[inline(always)]
fn check(routine: &'static str, lock: *const i64) -> Result<RtLock<'static>> {
    let rt = rt(routine)?;
    rt.aligned(routine, "lock", lock as usize, 8)?;
    let a = rt.sym(routine, "lock", lock as usize, 8)?;
    let steal = rt.lock_modes.shmem && rt.npes < WORD_STEAL.tail as usize;
    Ok(RtLock {
        rt,
        ctx: runtime_ctx(),
        routine,
        home_pe: HOME,
        word: a,
        pool: None,
        own: rt.me as u64 + 1,
        own_addr: a,
        fields: if steal { WORD_STEAL } else { WORD_FIFO },
    })
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

/// A lock that is one word at one PE, with this PE's queue node lent from a pool
/// (Coarray Fortran's LOCK; protocol `RSHMEM_CAF_LOCK`).
#[derive(Debug, Clone, Copy)]
pub struct LockAt {
    /// The lock word's symmetric address (zero: free).
    pub word: usize,
    /// The PE whose copy of `word` is the lock.
    pub pe: usize,
    /// A symmetric array of [`POOL_NODES`] 8-byte words, the same on every PE.
    pub nodes: usize,
    /// This PE's node for this lock: no other lock of this PE may use it until the lock
    /// is released (or an acquisition failed).
    pub slot: usize,
}

#[inline(always)]
fn check_at(routine: &'static str, l: &LockAt) -> Result<RtLock<'static>> {
    let rt = rt(routine)?;
    let pe = rt.pe(routine, l.pe as i64)?;
    if rt.npes > POOL_MAX_PES || l.slot >= POOL_NODES {
        return Err(Error::InvalidArgument {
            routine,
            arg: "lock",
            reason: "locks at a PE take at most 1024 queue nodes and 524287 PEs",
        });
    }
    rt.aligned(routine, "lock", l.word, 8)?;
    let word = rt.sym(routine, "lock", l.word, 8)?;
    let base = rt.sym(routine, "lock", l.nodes, POOL_NODES * 8)?;
    Ok(RtLock {
        rt,
        ctx: runtime_ctx(),
        routine,
        home_pe: pe,
        word,
        pool: Some(base),
        own: ((rt.me as u64 + 1) << SLOT_BITS) | l.slot as u64,
        own_addr: slot_addr(base, l.slot),
        fields: if rt.lock_modes.caf {
            POOL_STEAL
        } else {
            POOL_FIFO
        },
    })
}

/// Takes the lock `l`, waiting unless `try_only`; returns whether it was taken. The
/// caller must not hold or wait for it already (the pool's node does not say).
///
/// # Errors
/// `LockHolderFinalized` or `PeFailed` naming the PE this one waited for, when it
/// finalized or died holding the lock (or waiting before this PE).
pub fn lock_at(routine: &'static str, l: &LockAt, try_only: bool) -> Result<bool> {
    let _p = profile::span(Family::Lock, 0);
    acquire(&check_at(routine, l)?, routine, try_only)
}

/// Releases the lock `l`, which this PE holds (with the node it took it with).
///
/// # Errors
/// As the AMOs on the lock's words.
pub fn unlock_at(routine: &'static str, l: &LockAt) -> Result<()> {
    let _p = profile::span(Family::Lock, 0);
    release(&check_at(routine, l)?, routine)
}

/// Whether some PE holds (or, FIFO, waits for) the lock at `word` of `pe`.
///
/// # Errors
/// As the AMO that reads the word.
pub fn locked_at(routine: &'static str, word: usize, pe: usize) -> Result<bool> {
    let rt = rt(routine)?;
    let pe = rt.pe(routine, pe as i64)?;
    rt.aligned(routine, "lock", word, 8)?;
    let a = rt.sym(routine, "lock", word, 8)?;
    let fields = if rt.lock_modes.caf {
        POOL_STEAL
    } else {
        POOL_FIFO
    };
    Ok(fields.held(rt.amo(routine, pe, a, AmoOp::<u64>::Fetch)?))
}
