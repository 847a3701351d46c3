//! World synchronization: `shmem_sync_all` (and, with a quiet first, `shmem_barrier_all`),
//! and the runtime's waits on peers, which end with an error when the peer has finalized.

use std::mem::offset_of;
use std::sync::atomic::{AtomicBool, Ordering};

use rshmem_util::Waiter;

use crate::coll::check::Kind;
use crate::error::{Error, Result};
use crate::runtime::{rt, Internal, PeState, Runtime};
use crate::team::Team;

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
    fn peer_word(&self, pe: usize, w: crate::transport::SymAddr) -> Option<u64> {
        // Words only their owner stores: a mapped peer's is read with a load, even in a
        // job whose atomics go through UCX (and after its process is gone).
        if let Some(v) = self.fabric.load_mapped(pe, w) {
            return Some(v);
        }
        if self.fabric.has_left(pe) {
            return None;
        }
        match self
            .fabric
            .probe_word("", crate::coll::nonblocking::coll_ctx(), pe, w)
        {
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
        let mut net = self.fabric.net_wait(super::nonblocking::coll_ctx());
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
            let world_part = std::ptr::eq(team, &*self.inner_host)
                || self
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

/// A user wait (`shmem_wait_until`, `shmem_signal_wait_until`...): its [`Waiter`], and
/// what its overdue checks saw of the peers (nothing on the fast path).
#[derive(Debug)]
pub(crate) struct UserWait {
    w: Waiter,
    /// The wait's hold on the network (made at its first pause, with the runtime).
    net: Option<crate::transport::NetWait<'static>>,
    /// Set once this wait published itself as stuck (`Internal::waiting`).
    stuck: Option<Box<Stuck>>,
}

/// What the overdue checks of one user wait saw.
#[derive(Debug)]
struct Stuck {
    /// Each peer's `waiting` count at the last check at which they had all advanced.
    seen: Vec<u64>,
    /// Checks in a row at which every running peer was stuck and had advanced.
    rounds: u32,
}

/// Checks in a row at which every running peer must be seen stuck (in an overdue user
/// wait, its own transfers complete) with its count advanced, before a wait fails for
/// want of a writer: the first is a baseline; after two more, any write one of them
/// issued before its wait has landed and been seen by its target, and none can issue
/// another.
const STUCK_ROUNDS: u32 = 3;

impl UserWait {
    #[inline]
    pub(crate) fn new() -> UserWait {
        UserWait {
            w: Waiter::new(),
            net: None,
            stuck: None,
        }
    }

    /// Pauses between two checks; operations this PE posted through UCX may need the
    /// library's attention to leave, and peers' operations on this PE to be served.
    #[inline]
    pub(crate) fn snooze(&mut self) {
        if self.net.is_none() {
            match crate::runtime::try_runtime() {
                Some(rt) => self.net = Some(rt.fabric.net_wait(super::nonblocking::coll_ctx())),
                None => return self.w.snooze(),
            }
        }
        if let Some(net) = &mut self.net {
            net.pause(&mut self.w);
        }
    }
}

impl Drop for UserWait {
    #[inline]
    fn drop(&mut self) {
        if self.stuck.is_some() {
            if let Some(rt) = crate::runtime::try_runtime() {
                rt.set_own(Runtime::internal_addr(offset_of!(Internal, waiting)), 0);
            }
        }
    }
}

/// The `waiting` count of this PE's overdue user waits (one per PE: published only by a
/// PE on which a single thread calls OpenSHMEM).
static BEATS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Runtime {
    /// A user wait's overdue check for a wait nobody can end: this PE publishes that it is
    /// stuck (after completing its own transfers), then looks at the others. Returns the
    /// first finalized or failed PE, the number of them and of stuck PEs, once every other
    /// PE has finalized, failed or stayed stuck for [`STUCK_ROUNDS`] checks in a row (and
    /// at least one finalized or failed): no PE can write any more. Only PEs on which a
    /// single thread calls OpenSHMEM publish (another thread of theirs could still write).
    #[cold]
    fn nobody_writes(&self, u: &mut UserWait) -> Option<(usize, usize, usize)> {
        let waiting = Runtime::internal_addr(offset_of!(Internal, waiting));
        let stuck = u.stuck.get_or_insert_with(|| {
            Box::new(Stuck {
                seen: vec![0; self.npes],
                rounds: 0,
            })
        });
        // Stuck only when nothing of this PE can write: one thread calls OpenSHMEM, no
        // non-blocking collective runs, the default context's transfers have completed.
        if self.thread_level <= crate::runtime::ThreadLevel::Funneled
            && self.nb.idle()
            && crate::ctx::Ctx::default_ctx().quiet(self).is_ok()
        {
            self.set_own(waiting, BEATS.fetch_add(1, Ordering::Relaxed) + 1);
        }
        let (mut first, mut gone, mut stalled, mut advanced) = (None, 0, 0, true);
        let mut now = vec![0; self.npes];
        for pe in (0..self.npes).filter(|&pe| pe != self.me) {
            if self.is_finalizing(pe) || self.probe_failed(pe) {
                first = first.or(Some(pe));
                gone += 1;
                continue;
            }
            now[pe] = self.peer_word(pe, waiting).unwrap_or(0);
            if now[pe] == 0 {
                stuck.rounds = 0;
                return None;
            }
            stalled += 1;
            advanced &= now[pe] > stuck.seen[pe];
        }
        if advanced {
            stuck.rounds += 1;
            stuck.seen = now;
        }
        (stalled == 0 || stuck.rounds >= STUCK_ROUNDS).then_some((first?, gone, stalled))
    }
}

/// A user wait loop's check, made only when its [`Waiter`] is overdue: fails with
/// `WaitAfterFinalize` once no PE can write any more (every other PE has finalized or
/// failed, or is stuck in a user wait of its own: `Runtime::nobody_writes`) and `ready()`
/// (re-read after the states, with acquire) still does not hold, and with `PeFailed` while
/// a PE has failed that this PE has not acknowledged (`ft::failed_pes`): any PE might have
/// been the writer it waits for.
#[inline]
pub(crate) fn user_wait_check(
    routine: &'static str,
    u: &mut UserWait,
    ready: impl Fn() -> bool,
) -> Result<()> {
    if u.w.overdue() {
        if let Some(net) = &mut u.net {
            net.release();
        }
        if let Ok(rt) = rt(routine) {
            let nobody = (rt.npes > 1 && !rt.is_finalizing(rt.me))
                .then(|| rt.nobody_writes(u))
                .flatten();
            if let Some((first, finalized, waiting)) = nobody {
                if !ready() {
                    // Announced only if the error then ends the job: a try form that gets
                    // it goes on to finalize, and a peer already in finalize's barrier
                    // that saw the announcement left the job without the launcher's
                    // barrier while this PE went on into it (2 PEs over mixed routes, one
                    // finalizing early: seen once in CI's mixed pass).
                    GAVE_UP_OVER_FINALIZED.store(true, Ordering::Relaxed);
                    return Err(Error::WaitAfterFinalize {
                        routine,
                        waiter: rt.me,
                        first,
                        finalized,
                        waiting,
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
