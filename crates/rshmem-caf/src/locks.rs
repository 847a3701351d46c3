//! This image's lock bookkeeping without a lock: which queue nodes (lent to the core's
//! `lock_at`) are free and which locks this image holds (to answer `STAT_LOCKED` and to
//! find a held lock's node at UNLOCK). Fixed arrays of atomics made at start-up: LOCK and
//! UNLOCK take no mutex and allocate nothing.
//!
//! The runtime is started with `ThreadLevel::Single` (one thread of the image makes the
//! CAF calls, as gfortran's coarray code assumes), so the arrays have one writer and
//! relaxed atomics suffice; they are atomics so that the state is `Sync` without a lock.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};

/// Free queue nodes and the locks held, for [`crate::image::QNODES`] queue nodes.
#[derive(Debug)]
pub(crate) struct LockBook {
    /// Per queue node: the lock word's address it is used for (0: free).
    addr: Box<[AtomicUsize]>,
    /// Per queue node: the PE holding that lock word.
    pe: Box<[AtomicUsize]>,
    /// Free queue nodes: a stack, its first `nfree` entries.
    free: Box<[AtomicU32]>,
    nfree: AtomicUsize,
    /// Queue nodes of the locks held: its first `nheld` entries.
    held: Box<[AtomicU32]>,
    nheld: AtomicUsize,
}

impl LockBook {
    /// `n` queue nodes, all free.
    pub(crate) fn new(n: usize) -> LockBook {
        let zeros = || (0..n).map(|_| AtomicUsize::new(0)).collect();
        LockBook {
            addr: zeros(),
            pe: zeros(),
            free: (0..n as u32).rev().map(AtomicU32::new).collect(),
            nfree: AtomicUsize::new(n),
            held: (0..n).map(|_| AtomicU32::new(0)).collect(),
            nheld: AtomicUsize::new(0),
        }
    }

    /// Position in the held list of lock (`addr`, `pe`), if this image holds it.
    #[inline]
    pub(crate) fn find_held(&self, addr: usize, pe: usize) -> Option<usize> {
        (0..self.nheld.load(Relaxed)).find(|&i| {
            let s = self.held[i].load(Relaxed) as usize;
            self.addr[s].load(Relaxed) == addr && self.pe[s].load(Relaxed) == pe
        })
    }

    /// A free queue node for lock (`addr`, `pe`); `None` when all are in use.
    #[inline]
    pub(crate) fn take(&self, addr: usize, pe: usize) -> Option<usize> {
        let n = self.nfree.load(Relaxed);
        let top = n.checked_sub(1)?;
        let s = self.free[top].load(Relaxed) as usize;
        self.nfree.store(top, Relaxed);
        self.addr[s].store(addr, Relaxed);
        self.pe[s].store(pe, Relaxed);
        Some(s)
    }

    /// Queue node `slot` (from [`LockBook::take`]) now holds its lock.
    #[inline]
    pub(crate) fn hold(&self, slot: usize) {
        let n = self.nheld.load(Relaxed);
        self.held[n].store(slot as u32, Relaxed);
        self.nheld.store(n + 1, Relaxed);
    }

    /// Removes entry `pos` of the held list; returns its queue node.
    #[inline]
    pub(crate) fn unhold(&self, pos: usize) -> usize {
        let last = self.nheld.load(Relaxed) - 1;
        let s = self.held[pos].load(Relaxed);
        self.held[pos].store(self.held[last].load(Relaxed), Relaxed);
        self.nheld.store(last, Relaxed);
        s as usize
    }

    /// Returns queue node `slot` to the free stack.
    #[inline]
    pub(crate) fn give_back(&self, slot: usize) {
        self.addr[slot].store(0, Relaxed);
        let n = self.nfree.load(Relaxed);
        self.free[n].store(slot as u32, Relaxed);
        self.nfree.store(n + 1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::LockBook;

    #[test]
    fn take_hold_release_and_exhaustion() {
        let b = LockBook::new(3);
        let a = b.take(0x1000, 1).unwrap();
        b.hold(a);
        let c = b.take(0x1000, 2).unwrap();
        b.hold(c);
        assert_ne!(a, c);
        assert_eq!(b.find_held(0x1000, 2), Some(1));
        assert_eq!(b.find_held(0x1000, 3), None);
        let d = b.take(0x2000, 0).unwrap();
        assert!(b.take(0x3000, 0).is_none());
        b.give_back(d);
        let pos = b.find_held(0x1000, 1).unwrap();
        assert_eq!(b.unhold(pos), a);
        b.give_back(a);
        assert_eq!(b.find_held(0x1000, 1), None);
        assert_eq!(b.find_held(0x1000, 2), Some(0));
        assert!(b.take(0x3000, 0).is_some() && b.take(0x4000, 0).is_some());
    }
}
