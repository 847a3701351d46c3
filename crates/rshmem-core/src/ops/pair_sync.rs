//! Pairwise synchronization with a list of partners, as Coarray Fortran's SYNC IMAGES:
//! each PE keeps, at each partner, a counter of the notifications it sent there, which
//! only it writes; so a notification is one posted write of the new count (no round trip),
//! a wait is a local wait for the partner's count, and consecutive synchronizations never
//! mix. A partner found finalized instead of taking part is reported ([`Error::PeGone`])
//! and recorded (`ft::note_departed`) for the synchronizations that go on without it.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::amo;
use crate::ctx::Ctx;
use crate::error::{Departure, Error, Result};
use crate::p2p;
use crate::runtime::{rt, Runtime};
use crate::word::{AmoOp, Cmp};

/// Partner lists up to this long are checked for repeats without allocating.
const SMALL_LIST: usize = 64;

/// One PE's notification counters: one symmetric word per PE of the job (counting what
/// that PE sent here), and what this PE sent to and consumed from each.
#[derive(Debug)]
pub struct PairCounters {
    /// Symmetric address of PE 0's counter ([`PairCounters::bytes`] long).
    base: usize,
    /// Notifications this PE has sent each PE so far.
    sent: Box<[AtomicI64]>,
    /// Notifications of each PE this PE has consumed so far (only this PE's thread
    /// touches them: atomics so a synchronization takes no lock).
    seen: Box<[AtomicI64]>,
}

impl PairCounters {
    /// Bytes between two PEs' counters: a cache line each, so the PEs that notify one PE
    /// do not contend for one line.
    pub const STRIDE: usize = 64;

    /// Bytes of symmetric memory the counters of a job of `n_pes` take.
    pub const fn bytes(n_pes: usize) -> usize {
        n_pes * Self::STRIDE
    }

    /// Counters at symmetric address `base` ([`PairCounters::bytes`] long, zeroed on every
    /// PE before any of them synchronizes), for a job of `n_pes`.
    pub fn new(base: usize, n_pes: usize) -> PairCounters {
        let zeros = || (0..n_pes).map(|_| AtomicI64::new(0)).collect();
        PairCounters {
            base,
            sent: zeros(),
            seen: zeros(),
        }
    }

    /// Completes this PE's transfers (a release for the partners), notifies every partner
    /// (world PE numbers; this PE is skipped), then waits for each partner's notification.
    /// A PE named twice ([`Error::RepeatedPe`]) or out of range is an error raised before
    /// anything is sent. A partner that finalized instead of taking part ends it with
    /// [`Error::PeGone`].
    pub fn sync_with(&self, routine: &'static str, partners: &[usize]) -> Result<()> {
        let npes = self.sent.len();
        if let Some(&pe) = partners.iter().find(|&&p| p >= npes) {
            return Err(Error::PeOutOfRange {
                routine,
                arg: "partners",
                pe: pe as i64,
                npes,
            });
        }
        check_distinct(routine, partners)?;
        self.exchange(routine, partners.iter().copied())
    }

    /// [`PairCounters::sync_with`] every PE `members` yields: a team's members, in rank
    /// order (distinct and in range by construction, so unchecked: `SYNC IMAGES (*)`).
    pub fn sync_with_every(
        &self,
        routine: &'static str,
        members: impl Iterator<Item = usize> + Clone,
    ) -> Result<()> {
        self.exchange(routine, members)
    }

    fn exchange(
        &self,
        routine: &'static str,
        partners: impl Iterator<Item = usize> + Clone,
    ) -> Result<()> {
        let rt = rt(routine)?;
        // Release: this PE's earlier puts are complete before the partners go on; it also
        // orders these notifications after the previous synchronization's.
        crate::order::quiet()?;
        let mine = (self.base + rt.me * Self::STRIDE) as *const u64;
        for p in partners.clone().filter(|&p| p != rt.me) {
            let count = self.sent[p].fetch_add(1, Ordering::Relaxed) + 1;
            // SAFETY: this PE's counter in the symmetric counters, aligned.
            let posted = unsafe {
                amo::ctx_atomic_post(
                    Ctx::default_ctx(),
                    routine,
                    mine,
                    AmoOp::Set(count as u64),
                    p as i64,
                )
            };
            posted.map_err(|e| finalized(rt, routine, p).unwrap_or(e))?;
        }
        // Through the network the posted counts leave now (one flush for all of them).
        if rt.fabric.has_network() {
            crate::order::quiet()?;
        }
        for p in partners.filter(|&p| p != rt.me) {
            let want = self.seen[p].fetch_add(1, Ordering::Relaxed) + 1;
            let counter = (self.base + p * Self::STRIDE) as *const i64;
            // SAFETY: this PE's copy of partner `p`'s counter, symmetric and aligned.
            let waited = unsafe { p2p::wait_until_from(routine, counter, Cmp::Ge, want, p) };
            waited.map_err(|e| finalized(rt, routine, p).unwrap_or(e))?;
        }
        Ok(())
    }
}

/// [`Error::RepeatedPe`] for the first PE named twice in `partners` (short lists, the
/// usual case, are compared in place; longer ones sorted in a copy).
fn check_distinct(routine: &'static str, partners: &[usize]) -> Result<()> {
    if partners.len() <= SMALL_LIST {
        for (i, p) in partners.iter().enumerate() {
            if partners[..i].contains(p) {
                return Err(repeated(routine, *p));
            }
        }
        return Ok(());
    }
    let mut sorted = partners.to_vec();
    sorted.sort_unstable();
    match sorted.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(repeated(routine, w[0])),
        None => Ok(()),
    }
}

fn repeated(routine: &'static str, pe: usize) -> Error {
    Error::RepeatedPe {
        routine,
        arg: "partners",
        pe,
    }
}

/// [`Error::PeGone`] when partner `pe` has finalized (recorded for good). Asked only after
/// a notification or a wait failed: through the network the state read is a round trip,
/// which every synchronization would pay.
#[cold]
fn finalized(rt: &Runtime, routine: &'static str, pe: usize) -> Option<Error> {
    if !rt.is_finalizing(pe) {
        return None;
    }
    rt.note_departed(pe, Departure::Finalized);
    Some(Error::PeGone {
        routine,
        pe,
        rank: pe,
        how: Departure::Finalized,
        missing: 1,
    })
}
