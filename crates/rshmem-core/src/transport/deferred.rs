//! Raises through the network that may wait until this PE next waits for a peer: a message
//! channel's acknowledgements (`coll::msg`). Over TCP each raise is a system call of about
//! 8 us on the receiver's way out of a collective (a broadcast's leaves paid it in every
//! call); deferred, it goes out while the PE waits anyway (its next collective, a
//! `wait_until`, a lock), or at the latest in `team_destroy` or finalize.
//!
//! No deadlock: a PE that blocks waiting for a peer flushes first ([`NetWait`]'s first
//! pause), so a sender short of credit is never held up by a PE that waits for it. A PE that
//! computes delays only the sender that runs two messages ahead of it on one channel, which
//! must then wait for the PE's next collective in any case. The list is the process's, not a
//! thread's: any thread's wait flushes what any other deferred (a non-blocking collective's
//! worker, a thread that then ended).
//!
//! [`NetWait`]: super::NetWait

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::{CtxState, Network, Seg, SymAddr};
use crate::error::Result;

/// Distinct (PE, word) pairs held at once; one more flushes the list first. A PE owes at
/// most one acknowledgement per channel it received on since its last wait: a tree's parent,
/// the ring's neighbour, an active set's pairs.
const CAP: usize = 16;

/// How many owed raises one message may carry ([`Deferred::take_for`]).
pub(crate) const RIDE_MAX: usize = 4;

/// Raises owed to one PE, taken off the list to ride on a message to it.
#[derive(Clone, Copy)]
pub(crate) struct Riders {
    owed: [(SymAddr, u64); RIDE_MAX],
    len: usize,
}

impl Default for Riders {
    fn default() -> Self {
        let none = SymAddr {
            seg: Seg::Heap,
            off: 0,
        };
        Riders {
            owed: [(none, 0); RIDE_MAX],
            len: 0,
        }
    }
}

impl Riders {
    /// The raises: (where, by how much).
    pub(crate) fn as_slice(&self) -> &[(SymAddr, u64)] {
        &self.owed[..self.len]
    }

    /// Adds one if there is room; whether it did.
    fn push(&mut self, addr: SymAddr, by: u64) -> bool {
        if self.len == RIDE_MAX {
            return false;
        }
        self.owed[self.len] = (addr, by);
        self.len += 1;
        true
    }
}

/// A pending raise: add `by` to `addr` on `pe`.
#[derive(Clone, Copy)]
struct Owed {
    pe: usize,
    addr: SymAddr,
    by: u64,
}

/// The deferred raises of this PE (see the module doc).
pub(crate) struct Deferred {
    /// Whether `list` may hold something: the check every wait makes, without the lock.
    any: AtomicBool,
    list: Mutex<([Option<Owed>; CAP], usize)>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred")
            .field("any", &self.any.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Deferred {
    pub(crate) fn new() -> Deferred {
        Deferred {
            any: AtomicBool::new(false),
            list: Mutex::new(([None; CAP], 0)),
        }
    }

    /// Whether some raise waits to go out.
    #[inline(always)]
    pub(crate) fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// Records `by` more for `addr` on `pe` (merged with what is owed there already);
    /// with the list full, flushes it first on `ctx`.
    pub(crate) fn add(
        &self,
        net: &Network,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        by: u64,
    ) -> Result<()> {
        loop {
            {
                let mut guard = self.list.lock().unwrap_or_else(|e| e.into_inner());
                let (list, len) = &mut *guard;
                if let Some(o) = list[..*len]
                    .iter_mut()
                    .flatten()
                    .find(|o| o.pe == pe && o.addr == addr)
                {
                    o.by += by;
                    return Ok(());
                }
                if *len < CAP {
                    list[*len] = Some(Owed { pe, addr, by });
                    *len += 1;
                    self.any.store(true, Ordering::Release);
                    return Ok(());
                }
            }
            self.flush(net, ctx)?;
        }
    }

    /// Takes up to [`RIDE_MAX`] of the raises owed to `pe` off the list, for a message to
    /// `pe` to carry (`Raise` through UCX): over TCP a message each costs a system call on
    /// both sides, and a PE that owes a peer an acknowledgement usually raises something
    /// there next (the sync after a broadcast, the next round of a reduction).
    pub(crate) fn take_for(&self, pe: usize) -> Riders {
        if !self.any() {
            return Riders::default();
        }
        let mut guard = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let (list, len) = &mut *guard;
        let riders = gather(&mut list[..*len], pe);
        // Close the gaps the taken raises left.
        let mut kept = 0;
        for i in 0..*len {
            if let Some(o) = list[i].take() {
                list[kept] = Some(o);
                kept += 1;
            }
        }
        *len = kept;
        self.any.store(kept > 0, Ordering::Release);
        riders
    }

    /// Sends everything owed, on `ctx`. The list is emptied under the lock and sent
    /// outside it: a raise may wait for the network, and that wait may flush again.
    pub(crate) fn flush(&self, net: &Network, ctx: &CtxState) -> Result<()> {
        if !self.any() {
            return Ok(());
        }
        let (mut owed, len) = {
            let mut guard = self.list.lock().unwrap_or_else(|e| e.into_inner());
            let taken = std::mem::replace(&mut *guard, ([None; CAP], 0));
            self.any.store(false, Ordering::Release);
            taken
        };
        let mut first_err = Ok(());
        for i in 0..len {
            let Some(o) = owed[i].take() else { continue };
            let r = match net {
                // What else is owed to the same PE rides on the same message.
                Network::Ucx(u) => {
                    let riders = gather(&mut owed[i + 1..len], o.pe);
                    u.raise(ctx, o.pe, o.addr, o.by, riders)
                }
                Network::Ofi(f) => f.raise(ctx, o.pe, o.addr, o.by),
            };
            // Every other raise still goes out; the first failure is reported.
            if first_err.is_ok() {
                first_err = r;
            }
        }
        first_err
    }
}

/// Takes up to [`RIDE_MAX`] of the raises owed to `pe` out of `slots` (leaving `None`), in
/// their order: what one message to `pe` carries ([`Deferred::take_for`], and a flush's
/// first raise to each PE).
fn gather(slots: &mut [Option<Owed>], pe: usize) -> Riders {
    let mut riders = Riders::default();
    for slot in slots {
        if let Some(o) = *slot {
            if o.pe == pe && riders.push(o.addr, o.by) {
                *slot = None;
            }
        }
    }
    riders
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owe(d: &Deferred, pe: usize, off: usize, by: u64) {
        let mut g = d.list.lock().unwrap();
        let (list, len) = &mut *g;
        list[*len] = Some(Owed {
            pe,
            addr: SymAddr {
                seg: Seg::Heap,
                off,
            },
            by,
        });
        *len += 1;
        d.any.store(true, Ordering::Release);
    }

    #[test]
    fn a_message_takes_what_is_owed_to_its_pe_and_leaves_the_rest() {
        let d = Deferred::new();
        assert!(d.take_for(1).as_slice().is_empty());
        owe(&d, 1, 8, 1);
        owe(&d, 2, 16, 2);
        owe(&d, 1, 24, 3);
        let r = d.take_for(1);
        let offs: Vec<(usize, u64)> = r.as_slice().iter().map(|(a, n)| (a.off, *n)).collect();
        assert_eq!(offs, [(8, 1), (24, 3)]);
        assert!(d.any(), "PE 2's is still owed");
        assert!(d.take_for(1).as_slice().is_empty());
        let r = d.take_for(2);
        assert_eq!(r.as_slice().len(), 1);
        assert!(!d.any());
    }

    #[test]
    fn a_message_carries_at_most_ride_max() {
        let d = Deferred::new();
        for i in 0..RIDE_MAX + 2 {
            owe(&d, 3, 8 * i, 1);
        }
        assert_eq!(d.take_for(3).as_slice().len(), RIDE_MAX);
        assert_eq!(d.take_for(3).as_slice().len(), 2);
        assert!(!d.any());
    }
}
