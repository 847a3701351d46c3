//! World synchronization: `shmem_sync_all` (and, with a quiet first, `shmem_barrier_all`),
//! and the runtime's waits on peers, which end with an error when the peer has finalized.

use std::mem::offset_of;

use rshmem_util::Waiter;

use crate::coll::check::Kind;
use crate::error::{Error, Result};
use crate::runtime::{rt, Internal, PeState, Runtime};
use crate::team::Team;
use crate::word::AmoOp;

/// How long a PE that found a finalized peer waits before it reports (see
/// `announce_failing`).
const FAIL_GRACE: std::time::Duration = std::time::Duration::from_millis(400);

/// Which finalized peers make a wait fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quorum {
    /// Any: each peer's part of the condition is written before that peer can leave the
    /// collective (a flag it raises for us, or a count it cannot outrun: it waits for us
    /// afterwards), so a finalizing peer with the condition still false skipped the call.
    Any,
    /// All: a count several peers raise and each may leave after its own part, so only
    /// when every one of them has finalized is the condition known to stay false.
    All,
}

/// `shmem_barrier_all`: completes this PE's outstanding operations, then waits for all PEs.
pub fn barrier_all() -> Result<()> {
    const R: &str = "shmem_barrier_all";
    let rt = rt(R)?;
    rt.check_coll(R, &rt.world, Kind::BarrierAll, &[])?;
    rt.try_barrier_all(R)
}

/// `shmem_sync_all`: waits for all PEs (does not complete outstanding operations).
pub fn sync_all() -> Result<()> {
    const R: &str = "shmem_sync_all";
    let rt = rt(R)?;
    rt.check_coll(R, &rt.world, Kind::SyncAll, &[])?;
    rt.try_sync_in(R, &rt.world)
}

impl Runtime {
    /// The [`PeState`] word of `pe`'s segment.
    fn state_word() -> crate::transport::SymAddr {
        Runtime::internal_addr(offset_of!(Internal, state))
    }

    /// The [`PeState`] of `pe` as a number: `Left` once it is known gone through UCX,
    /// `Running` when it cannot be read for another reason (the launcher reports dead
    /// PEs on its own). An acquire load.
    fn state_of(&self, pe: usize) -> u64 {
        self.peer_word(pe, Self::state_word())
            .unwrap_or(PeState::Left as u64)
    }

    /// Reads word `w` of `pe`'s runtime area; `None` once `pe` is known to have left the
    /// job (through UCX, its memory goes with its process; on shared memory it stays).
    fn peer_word(&self, pe: usize, w: crate::transport::SymAddr) -> Option<u64> {
        if self.fabric.has_left(pe) {
            return None;
        }
        match self.amo::<u64>("", pe, w, AmoOp::Fetch) {
            Ok(v) => Some(v),
            Err(e) if self.fabric.note_left(pe, &e) => None,
            Err(_) => Some(0),
        }
    }

    /// Whether `pe` has entered `shmem_finalize`.
    pub(crate) fn is_finalizing(&self, pe: usize) -> bool {
        self.state_of(pe) != PeState::Running as u64
    }

    /// Waits until `ready()` holds, inside collective `routine`, for PEs produced by
    /// `peers()` (world numbers). Once the wait is overdue ([`Waiter::overdue`]) it looks
    /// at those PEs' states at low frequency; when one is further on than this PE (it
    /// entered finalize while this PE runs, or left finalize's barrier while this PE is
    /// in it) it re-reads the condition (the state is read with acquire, so whatever that
    /// PE wrote before is visible now) and fails if it still does not hold: a PE that has
    /// gone on made every write of the calls it matched. Peers in finalize's barrier
    /// together are all `Finalizing`, so they never fail one another.
    #[inline]
    pub(crate) fn wait_peers<I: Iterator<Item = usize>>(
        &self,
        routine: &'static str,
        quorum: Quorum,
        peers: impl Fn() -> I,
        ready: impl FnMut() -> bool,
    ) -> Result<()> {
        self.wait_in(routine, None, quorum, peers, ready)
    }

    /// [`Runtime::wait_peers`] inside a collective of `team`: a failed member of the team
    /// fails the wait, even one this PE does not wait for directly (a live peer it waits
    /// for may have left the collective over that failure, and will never come).
    #[inline]
    pub(crate) fn wait_in<I: Iterator<Item = usize>>(
        &self,
        routine: &'static str,
        team: Option<&Team>,
        quorum: Quorum,
        peers: impl Fn() -> I,
        mut ready: impl FnMut() -> bool,
    ) -> Result<()> {
        let mut w = Waiter::new();
        while !ready() {
            if w.overdue() {
                if let Some(pe) = self.finalized_among(quorum, peers()) {
                    if ready() {
                        break;
                    }
                    self.announce_failing(true);
                    return Err(Error::PeerFinalized {
                        routine,
                        pe,
                        waiter: self.me,
                    });
                }
                // A dead peer fails the collective whatever the quorum: it may have
                // done its part, but its team can run no further collective anyway.
                let failed = match team {
                    Some(t) => self.failed_among((0..t.n_pes()).map(|r| t.members().pe(r))),
                    None => self.failed_among(peers()),
                };
                if let Some(pe) = failed {
                    if ready() {
                        break;
                    }
                    return Err(Error::PeFailed {
                        routine,
                        pe,
                        waiter: self.me,
                    });
                }
                // A peer in another collective call than this one never comes.
                if team.is_some() {
                    if let Some(e) = self.call_mismatch(peers(), &w) {
                        if ready() {
                            break;
                        }
                        return Err(e);
                    }
                }
            }
            self.fabric.progress();
            w.snooze();
        }
        Ok(())
    }

    /// [`Runtime::wait_peers`] on one PE.
    #[inline]
    pub(crate) fn wait_peer(
        &self,
        routine: &'static str,
        pe: usize,
        ready: impl FnMut() -> bool,
    ) -> Result<()> {
        self.wait_peers(routine, Quorum::Any, || std::iter::once(pe), ready)
    }

    /// [`Runtime::wait_in`] on one PE.
    #[inline]
    pub(crate) fn wait_peer_in(
        &self,
        routine: &'static str,
        team: &Team,
        pe: usize,
        ready: impl FnMut() -> bool,
    ) -> Result<()> {
        self.wait_in(
            routine,
            Some(team),
            Quorum::Any,
            || std::iter::once(pe),
            ready,
        )
    }

    /// The first of `peers` further on than this PE (all of them for [`Quorum::All`]).
    /// A failed peer is not further on (its state stays `Running`).
    #[cold]
    fn finalized_among(&self, quorum: Quorum, peers: impl Iterator<Item = usize>) -> Option<usize> {
        let mine = self.state_of(self.me);
        let mut peers = peers.filter(|&pe| pe != self.me);
        match quorum {
            Quorum::Any => peers.find(|&pe| self.state_of(pe) > mine),
            Quorum::All => {
                let first = peers.next()?;
                (self.state_of(first) > mine && peers.all(|pe| self.state_of(pe) > mine))
                    .then_some(first)
            }
        }
    }

    /// Marks this PE as about to end the job over a peer that finalized while it waited
    /// for it, so that PEs in finalize's barrier stop waiting for it. With `grace`, gives
    /// them a moment first: a PE that finalized on its way out of a failed `main` can then
    /// report its own error, which says more than ours (the first report ends the job).
    #[cold]
    fn announce_failing(&self, grace: bool) {
        let w = Runtime::internal_addr(offset_of!(Internal, failing));
        self.set_own(w, 1);
        if grace {
            std::thread::sleep(FAIL_GRACE);
        }
    }

    /// Whether some peer announced that it is ending the job.
    #[cold]
    fn any_failing(&self) -> bool {
        let w = Runtime::internal_addr(offset_of!(Internal, failing));
        (0..self.npes).any(|pe| pe != self.me && self.peer_word(pe, w).unwrap_or(0) != 0)
    }

    /// Finalize's barrier: waits until every PE has set its state to `Finalizing` (this
    /// PE's is already). It never fails: a peer that does not come is stuck in a wait of
    /// its own that will fail (collectives, user waits once all others finalized) and end
    /// the job, or dead, which the launcher reports. Once a peer announces that it ends the
    /// job (it waited for this PE in a collective), the barrier is left at once, so this
    /// PE's program goes on to exit (and to report its own error, if it has one). Peers
    /// reached through UCX are read through it; they keep serving until every PE has left
    /// this barrier (finalize's bootstrap barrier), so the reads never outlive them.
    /// A failed peer (`ft`) never comes: it is skipped. Returns whether every PE came
    /// (false: a peer is ending the job, or failed).
    pub(crate) fn finalize_barrier(&self) -> bool {
        let mut everyone = true;
        for pe in (0..self.npes).filter(|&pe| pe != self.me) {
            let mut w = Waiter::new();
            while !self.is_finalizing(pe) {
                if w.overdue() {
                    if self.any_failing() {
                        return false;
                    }
                    if self.probe_failed(pe) {
                        everyone = false;
                        break;
                    }
                }
                w.snooze();
            }
            // Through UCX a PE that left before this one came (it ended the job over a
            // failed collective, or its peers' try forms went on) cannot take part in
            // finalize's last sync.
            if self.fabric.has_left(pe) {
                everyone = false;
            }
        }
        everyone
    }

    /// For user waits (`shmem_wait_until`, `shmem_signal_wait_until`...): whether no PE
    /// can change this PE's memory any more, because every other PE has entered finalize
    /// (or failed).
    /// Only then is failing sound: any running peer might still write, whenever it likes.
    /// (A thread of this PE could still write; a program that waits on its own threads
    /// through a symmetric variable while every other PE has finalized is not supported.)
    #[cold]
    pub(crate) fn all_others_finalizing(&self) -> bool {
        self.npes > 1
            && !self.is_finalizing(self.me)
            && (0..self.npes)
                .all(|pe| pe == self.me || self.is_finalizing(pe) || self.probe_failed(pe))
    }
}

/// A user wait loop's check, made only when its [`Waiter`] is overdue: fails with
/// `WaitAfterFinalize` once every other PE has finalized and `ready()` (re-read after the
/// states, with acquire) still does not hold, and with `PeFailed` while a PE has failed
/// that this PE has not acknowledged (`ft::failed_pes`): any PE might have been the
/// writer it waits for.
#[inline]
pub(crate) fn user_wait_check(
    routine: &'static str,
    w: &mut Waiter,
    ready: impl FnOnce() -> bool,
) -> Result<()> {
    // Operations this PE posted through UCX may need the library's attention to leave.
    if let Some(rt) = crate::runtime::try_runtime() {
        rt.fabric.progress();
    }
    if w.overdue() {
        if let Ok(rt) = rt(routine) {
            if rt.all_others_finalizing() {
                if !ready() {
                    rt.announce_failing(false);
                    return Err(Error::WaitAfterFinalize {
                        routine,
                        waiter: rt.me,
                    });
                }
            } else if let Some(pe) = rt.unacked_failure() {
                if !ready() {
                    return Err(Error::PeFailed {
                        routine,
                        pe,
                        waiter: rt.me,
                    });
                }
            }
        }
    }
    Ok(())
}
