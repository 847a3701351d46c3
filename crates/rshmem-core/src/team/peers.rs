//! The runtime's waits on peers (a collective's flags and counts, a channel's messages,
//! finalize's barrier): they end with an error naming the peer once it has finalized or
//! failed instead of hanging, and a PE that gives up over a finalized peer announces it
//! before that error ends the job, so that the peer, in finalize's barrier, does not wait
//! for it either.

use std::mem::offset_of;
use std::sync::atomic::{AtomicBool, Ordering};

use rshmem_util::Waiter;

use super::Team;
use crate::error::{Error, Result};
use crate::runtime::{Internal, PeState, Runtime};

/// How long a PE that found a finalized peer waits before it reports (see
/// `announce_failing`): the peer must see the announcement in finalize's barrier (its
/// checks of it come some tens of milliseconds apart, a read through the network each over
/// libfabric), leave, and print its own error. With 0.4 s that error was lost once (tests/api.rs
/// over libfabric while two other test suites ran); an error path only, so a second costs
/// nothing else.
const FAIL_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Set once a wait of this process gave up over a peer that finalized
/// ([`Runtime::give_up`]): if the error then ends the job, the PE announces it first
/// ([`Runtime::announce_if_gave_up`]); a `shmemx_try_` form or a STAT= that gets the error
/// instead goes on, so its finalized peers must keep waiting for it in finalize's barrier.
static GAVE_UP_OVER_FINALIZED: AtomicBool = AtomicBool::new(false);

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

/// Records that a wait gave up over a finalized peer ([`GAVE_UP_OVER_FINALIZED`]).
pub(crate) fn note_gave_up_over_finalized() {
    GAVE_UP_OVER_FINALIZED.store(true, Ordering::Relaxed);
}

impl Runtime {
    /// The [`PeState`] word of `pe`'s segment.
    fn state_word() -> crate::transport::SymAddr {
        Runtime::internal_addr(offset_of!(Internal, state))
    }

    /// The [`PeState`] of `pe` as a number: `Left` once it is known gone through UCX
    /// after finalize, `Running` when it cannot be read for another reason. An acquire
    /// load.
    fn state_of(&self, pe: usize) -> u64 {
        match self.peer_word(pe, Self::state_word()) {
            Some(v) => {
                if v == PeState::Finalizing as u64 {
                    self.fabric.note_finalized(pe);
                }
                v
            }
            // Gone through UCX: it left after finalize if it is known to have finalized;
            // else it vanished (died, or its launcher killed it), which `probe_failed`
            // reports. Never inferred finalized: that would blame the wrong PE.
            None if self.fabric.known_finalized(pe) => PeState::Left as u64,
            None => PeState::Running as u64,
        }
    }

    /// Reads word `w` of `pe`'s runtime area (a word only `pe` stores); `None` once `pe`
    /// is known to have left the job (through UCX, its memory goes with its process; on
    /// shared memory it stays).
    pub(crate) fn peer_word(&self, pe: usize, w: crate::transport::SymAddr) -> Option<u64> {
        // Words only their owner stores: a mapped peer's is read with a load, even in a
        // job whose atomics go through UCX (and after its process is gone).
        if let Some(v) = self.fabric.load_mapped(pe, w) {
            return Some(v);
        }
        if self.fabric.has_left(pe) {
            return None;
        }
        match self.fabric.probe_word(crate::ctx::runtime_ctx(), pe, w) {
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
        let mut net = self.fabric.net_wait(crate::ctx::runtime_ctx());
        while !ready() {
            if w.overdue() {
                net.release();
                // A finalized peer that did not do its part skipped the collective.
                let mut culprit = self.finalized_among(quorum, peers()).map(|pe| (pe, false));
                // A peer that gave up on this team's collective over a member will not do
                // its part either (the chain of waits ends at the member).
                if let (None, Some(t)) = (culprit, team) {
                    culprit = self.blamed_by(t, peers());
                }
                // A dead peer fails the collective whatever the quorum: it may have
                // done its part, but its team can run no further collective anyway.
                if culprit.is_none() {
                    culprit = match team {
                        Some(t) => self.failed_among((0..t.n_pes()).map(|r| t.members().pe(r))),
                        None => self.failed_among(peers()),
                    }
                    .map(|pe| (pe, true));
                }
                if let Some((pe, dead)) = culprit {
                    self.fabric.serve_arrived();
                    if ready() {
                        break;
                    }
                    return Err(self.give_up(routine, pe, dead));
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
            net.pause(&mut w);
        }
        Ok(())
    }

    /// Records that this PE leaves a collective over `pe` (finalized, or `dead`), so the
    /// members waiting for it fail too, and returns the error naming `pe`.
    #[cold]
    fn give_up(&self, routine: &'static str, pe: usize, dead: bool) -> Error {
        let w = Runtime::internal_addr(offset_of!(Internal, gave_up));
        self.set_own(w, ((pe as u64 + 1) << 1) | dead as u64);
        let waiter = self.me;
        if dead {
            return Error::PeFailed {
                routine,
                pe,
                waiter,
            };
        }
        GAVE_UP_OVER_FINALIZED.store(true, Ordering::Relaxed);
        Error::PeerFinalized {
            routine,
            pe,
            waiter,
        }
    }

    /// Whether some PE's give-up record says that `pe` finalized: through UCX, a PE that
    /// left the job after a peer gave up over it may never have been seen finalizing by
    /// this one. Reads every PE's record (for the overdue path only).
    #[cold]
    pub(crate) fn recorded_finalized(&self, pe: usize) -> bool {
        let w = Runtime::internal_addr(offset_of!(Internal, gave_up));
        let found = (0..self.npes)
            .filter(|&p| p != pe)
            .any(|p| self.peer_word(p, w) == Some((pe as u64 + 1) << 1));
        if found {
            self.fabric.note_finalized(pe);
        }
        found
    }

    /// Whether some PE (this one included) gave up on a collective ([`Runtime::give_up`]):
    /// its team's flags are out of step from then on. Read in finalize, once every PE is
    /// in it, so every PE finds the same answer (the records were written before the
    /// states it saw).
    #[cold]
    pub(crate) fn any_gave_up(&self) -> bool {
        let w = Runtime::internal_addr(offset_of!(Internal, gave_up));
        (0..self.npes).any(|p| self.peer_word(p, w).unwrap_or(0) != 0)
    }

    /// The member of `team` (finalized, or dead) over which one of `peers` gave up on a
    /// collective ([`Runtime::give_up`]). Sound because a member that finalized or died
    /// while a collective of its team was still waiting for it leaves the team unable to
    /// complete any collective (a member that finished this one and then finalized gives
    /// no live peer a reason to give up).
    #[cold]
    fn blamed_by(&self, team: &Team, peers: impl Iterator<Item = usize>) -> Option<(usize, bool)> {
        let w = Runtime::internal_addr(offset_of!(Internal, gave_up));
        peers.filter(|&p| p != self.me).find_map(|p| {
            let v = self.peer_word(p, w).unwrap_or(0);
            let pe = (v >> 1).checked_sub(1)? as usize;
            let dead = v & 1 == 1;
            // The runtime's copies of HOST and LEADERS run parts of WORLD's collectives.
            let world_part = std::ptr::eq(team, &*self.teams().inner_host)
                || self
                    .teams()
                    .inner_leaders
                    .as_deref()
                    .is_some_and(|l| std::ptr::eq(team, l));
            let member = world_part || team.members().rank_of(pe).is_some();
            if pe == self.me || pe >= self.npes || !member {
                return None;
            }
            if !dead {
                // Through UCX it may leave the job now: known finalized, not dead.
                self.fabric.note_finalized(pe);
            }
            Some((pe, dead))
        })
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

    /// Before this PE ends the job ([`Runtime::fatal`], a failing exit): announces it, if
    /// one of its waits gave up over a peer that finalized (that peer may be in finalize's
    /// barrier, waiting for this PE).
    #[cold]
    pub(crate) fn announce_if_gave_up(&self, grace: bool) {
        if GAVE_UP_OVER_FINALIZED.load(Ordering::Relaxed) {
            self.announce_failing(grace);
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
}
