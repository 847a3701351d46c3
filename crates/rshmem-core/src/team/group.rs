//! The scratch a group's collectives signal through: a team's agreed slot, or, for active
//! sets, counters kept per pair of PEs.
//!
//! Every collective algorithm runs on a [`Team`]; an active set is a team whose creation
//! is local (no slot can be agreed on without a collective over a parent). Its signals go
//! to per-sender counters shared by every active set: PE `s` raises the counter `s` of PE
//! `r`, and `r` counts how many signals from `s` it has consumed. Two PEs run the active-set
//! collectives they share in the same order (blocking collectives could not do otherwise
//! without deadlock; non-blocking ones are issued in the same order and run in that order
//! by the collective worker), and both compute the same schedule, so the k-th signal `r`
//! waits for from `s` is the k-th one `s` sends it, whatever set either is in meanwhile.
//! Message channels (`coll::msg`) likewise become one channel per ordered pair of PEs.
//! The cost: one PE runs its active-set collectives one at a time (`Runtime::set_turn`).

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};

use super::{Members, Team, TeamConfig};
use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::team::peers::Quorum;
use crate::transport::SymAddr;
use crate::word::AmoOp;

/// Where a team's collectives keep their flags and published words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scratch {
    /// A slot agreed on by the members at creation (teams).
    Slot(usize),
    /// The pair-counted scratch every active set shares.
    Pairs,
}

/// A flag of a slot, named by what it is for; [`Scratch::Pairs`] maps them all to the
/// sender's counter.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Flag {
    /// Dissemination round `k`.
    Round(usize),
    /// Word `w` of the slot's collective line, used as a counter.
    Word(usize),
}

/// This PE's counts of the pair-counted scratch, indexed by world PE.
#[derive(Debug)]
pub(crate) struct PairCounts {
    /// Signals consumed from each PE.
    pub(crate) sig: Box<[AtomicU64]>,
    /// Messages sent to / received from each PE.
    pub(crate) sent: Box<[AtomicU64]>,
    pub(crate) recvd: Box<[AtomicU64]>,
}

impl PairCounts {
    pub(crate) fn new(npes: usize) -> PairCounts {
        let zeros = || (0..npes).map(|_| AtomicU64::new(0)).collect();
        PairCounts {
            sig: zeros(),
            sent: zeros(),
            recvd: zeros(),
        }
    }
}

impl Runtime {
    /// The address of `flag` of `team` on every member (slot teams only).
    fn slot_flag(&self, slot: usize, flag: Flag) -> SymAddr {
        match flag {
            Flag::Round(k) => self.layout.sync_flag(slot, k),
            Flag::Word(w) => self.layout.coll_word(slot, w),
        }
    }

    /// Word `w` that this PE publishes to the other members during a collective on
    /// `team` (read by them between two syncs); `check` selects the `SHMEM_DEBUG` line.
    pub(crate) fn team_word(&self, team: &Team, check: bool, w: usize) -> SymAddr {
        match (team.scratch, check) {
            (Scratch::Slot(s), false) => self.layout.coll_word(s, w),
            (Scratch::Slot(s), true) => self.layout.check_word(s, w),
            (Scratch::Pairs, _) => self.layout.set_word(check, w),
        }
    }

    /// Raises `flag` of team rank `to` once. `many` says the slot's flag has several
    /// writers (it then goes through the job's atomicity domain); pair counters have one.
    pub(crate) fn signal(
        &self,
        routine: &'static str,
        team: &Team,
        flag: Flag,
        to: usize,
        many: bool,
    ) -> Result<()> {
        let pe = team.members().pe(to);
        match team.scratch {
            Scratch::Slot(s) if many => {
                self.amo_post::<u64>(routine, pe, self.slot_flag(s, flag), AmoOp::Add(1))
            }
            Scratch::Slot(s) => self.raise(routine, pe, self.slot_flag(s, flag)),
            Scratch::Pairs => self.raise(routine, pe, self.layout.pair_sig(self.me)),
        }
    }

    /// Waits for the signals of the team ranks `from()`: on a slot until `flag` reaches
    /// `want` (the algorithm knows its count), on pairs until each sender's counter has
    /// grown by `each` since the last wait. `quorum` as in [`Runtime::wait_peers`].
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn await_signals<I: Iterator<Item = usize>>(
        &self,
        routine: &'static str,
        team: &Team,
        flag: Flag,
        from: impl Fn() -> I,
        want: u64,
        each: u64,
        quorum: Quorum,
    ) -> Result<()> {
        let pes = || from().map(|r| team.members().pe(r));
        match team.scratch {
            Scratch::Slot(s) => {
                let f = self.slot_flag(s, flag);
                self.wait_in(routine, Some(team), quorum, pes, || {
                    self.load_local::<u64>(f) >= want
                })
            }
            Scratch::Pairs => {
                for pe in pes() {
                    let want = self.teams().pairs.sig[pe].load(Relaxed) + each;
                    let f = self.layout.pair_sig(pe);
                    self.wait_peer_in(routine, team, pe, || self.load_local::<u64>(f) >= want)?;
                    self.teams().pairs.sig[pe].store(want, Relaxed);
                }
                Ok(())
            }
        }
    }

    /// [`Runtime::await_signals`] from one rank.
    pub(crate) fn await_signal(
        &self,
        routine: &'static str,
        team: &Team,
        flag: Flag,
        from: usize,
        want: u64,
    ) -> Result<()> {
        self.await_signals(
            routine,
            team,
            flag,
            || std::iter::once(from),
            want,
            1,
            Quorum::Any,
        )
    }

    /// Held through a collective on `team` if it is an active set (see the module doc).
    /// Earlier non-blocking collectives run first (`coll::nonblocking`): the worker may
    /// need the turn for them.
    pub(crate) fn turn(&self, team: &Team) -> Option<std::sync::MutexGuard<'_, ()>> {
        self.worker().drain(self);
        (team.scratch == Scratch::Pairs).then(|| {
            self.teams()
                .set_turn
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        })
    }

    /// An active set of `members` as seen by this PE (`None` if it is not one): local,
    /// no communication. A set with WORLD's members is WORLD itself (every PE calls its
    /// collectives, in one order), which gives it WORLD's algorithms across hosts.
    pub fn active_set(&self, routine: &'static str, members: Members) -> Result<Option<Arc<Team>>> {
        let n = members.size();
        if n == 0 {
            return Err(Error::InvalidArgument {
                routine,
                arg: "PE_size",
                reason: "an active set needs at least one PE",
            });
        }
        let mut seen = vec![false; self.npes];
        for r in 0..n {
            let pe = members.pe_checked(r);
            match pe {
                Some(pe) if pe < self.npes => {
                    if std::mem::replace(&mut seen[pe], true) {
                        return Err(Error::InvalidArgument {
                            routine,
                            arg: "PE list",
                            reason: "names a PE twice",
                        });
                    }
                }
                _ => {
                    return Err(Error::PeOutOfRange {
                        routine,
                        arg: "PE list",
                        pe: pe.map_or(-1, |p| p as i64),
                        npes: self.npes,
                    })
                }
            }
        }
        let Some(rank) = members.rank_of(self.me) else {
            return Ok(None);
        };
        if n == self.npes && (0..n).all(|r| members.pe(r) == r) {
            return Ok(Some(self.teams().world.clone()));
        }
        Ok(Some(Arc::new(Team::with_scratch(
            members,
            rank,
            Scratch::Pairs,
            TeamConfig::default(),
            false,
        ))))
    }
}

/// Active sets of recent deprecated calls, so a loop of them builds its set once.
static RECENT: Mutex<Vec<Recent>> = Mutex::new(Vec::new());
/// (start, stride, size) and the set.
type Recent = (usize, isize, usize, Arc<Team>);
const RECENT_MAX: usize = 8;

/// The active set `start, start + stride, ...` (`size` PEs) for a call of the deprecated
/// active-set routines: local, remembered across calls. `None` when this PE is not in it.
pub fn strided_set(
    routine: &'static str,
    start: usize,
    stride: isize,
    size: usize,
) -> Result<Option<Arc<Team>>> {
    let rt = crate::runtime::rt(routine)?;
    {
        let recent = RECENT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((.., t)) = recent
            .iter()
            .find(|(a, d, n, _)| (*a, *d, *n) == (start, stride, size))
        {
            return Ok(Some(t.clone()));
        }
    }
    let members = Members::Strided {
        start,
        stride,
        size,
    };
    let set = rt.active_set(routine, members)?;
    if let Some(t) = &set {
        let mut recent = RECENT.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() == RECENT_MAX {
            recent.remove(0);
        }
        recent.push((start, stride, size, t.clone()));
    }
    Ok(set)
}

/// Forgets the remembered sets (the runtime they belong to is ending).
pub(crate) fn forget_sets() {
    RECENT.lock().unwrap_or_else(|e| e.into_inner()).clear();
}
