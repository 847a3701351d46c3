//! A team barrier that goes on without departed members, for Coarray Fortran's SYNC ALL
//! (Fortran 2018 stopped and failed images): once a member is known to have finalized
//! (normal termination) the barrier reports it at once ([`Error::PeGone`]) with the effect
//! of a quiet; a failed member is skipped, the others synchronize, and the barrier reports
//! the failure. The core's own barriers instead fail over any departed member, since an
//! OpenSHMEM program has no way to go on without it.
//!
//! Each team has, on every member, one 64-byte *arrival word* per member (team rank
//! order) in symmetric memory ([`ArrivalWords`]), and each PE counts the barriers it has
//! entered on them (its *generation*). Barrier number `g`: complete this PE's transfers,
//! set this PE's word to `g` at every other member (posted atomics, then one quiet), then
//! wait until every member's word here reaches `g`. The words only grow, so consecutive
//! barriers never mix, and a member that entered a later one already counts as arrived. A
//! member that never arrives is looked at once the wait is overdue: when it finalized or
//! failed and its word is still short of `g`, its departure is recorded for good
//! (`ft::note_departed`; status queries record what they find too); a finalized one ends
//! the barrier at once. A barrier that starts with a member known to have finalized still
//! posts its arrival (the running members' waits end as before) and returns without
//! waiting: waiting for the running members would be a stronger synchronization than
//! Fortran gives, and a conforming program can deadlock on it (gfortran's
//! `sync_memory_stopped_1`). Nothing here announces a failure, so a finalized PE waits in
//! finalize's barrier for the others as normal termination says.
//!
//! One round of n-1 posted writes per PE instead of the dissemination's log(n) rounds:
//! members may leave at different barriers (none waits on a relay through a departed
//! one), and at the PE counts Coarray programs run on one host it costs no more (measured
//! with `caf_sync`, see architecture.md).

use std::sync::atomic::{AtomicU64, Ordering};

use rshmem_util::Waiter;

use crate::amo;
use crate::ctx::Ctx;
use crate::error::{Departure, Error, Result};
use crate::runtime::{rt, Runtime};
use crate::team::Team;
use crate::word::AmoOp;

/// The arrival words of one team on this PE and the count of its barriers on them.
#[derive(Debug)]
pub struct ArrivalWords {
    /// Symmetric address of member 0's word.
    base: usize,
    /// Barriers this PE has entered on these words.
    gen: AtomicU64,
}

impl ArrivalWords {
    /// Bytes between two members' words: a cache line each, so writers never share one.
    pub const STRIDE: usize = 64;

    /// Bytes of symmetric memory the words of a team of `n` members take.
    pub const fn bytes(n: usize) -> usize {
        n * Self::STRIDE
    }

    /// The words at symmetric address `base` ([`ArrivalWords::bytes`] long, zeroed on
    /// every member before any of them synchronizes on them).
    pub fn new(base: usize) -> ArrivalWords {
        ArrivalWords {
            base,
            gen: AtomicU64::new(0),
        }
    }

    /// This PE's copy of member `rank`'s word.
    fn word(&self, rank: usize) -> &AtomicU64 {
        // SAFETY: the team's words are symmetric memory that lives as long as `self`
        // (contract of `new`), 64-aligned, written by other PEs only through atomics.
        unsafe { &*((self.base + rank * Self::STRIDE) as *const AtomicU64) }
    }
}

/// What one barrier found departed: finalized members take precedence (Fortran's order).
#[derive(Default)]
struct Missing {
    finalized: Option<(usize, usize)>,
    failed: Option<(usize, usize)>,
    count: usize,
}

impl Missing {
    fn note(&mut self, rank: usize, pe: usize, how: Departure) {
        self.count += 1;
        let slot = match how {
            Departure::Finalized => &mut self.finalized,
            Departure::Failed => &mut self.failed,
        };
        slot.get_or_insert((rank, pe));
    }

    /// The error naming the first departed member, if any.
    fn result(&self, routine: &'static str) -> Result<()> {
        let ((rank, pe), how) = match (self.finalized, self.failed) {
            (Some(m), _) => (m, Departure::Finalized),
            (None, Some(m)) => (m, Departure::Failed),
            (None, None) => return Ok(()),
        };
        Err(Error::PeGone {
            routine,
            pe,
            rank,
            how,
            missing: self.count,
        })
    }
}

/// The members of `team` other than this PE recorded as departed (only finalized ones
/// when `finalized_only`), as the error [`tolerant_sync_all`] and [`check_departed`]
/// report; one load when no departure is recorded.
fn recorded(rt: &Runtime, routine: &'static str, team: &Team, finalized_only: bool) -> Result<()> {
    if !rt.any_departed() {
        return Ok(());
    }
    let mut missing = Missing::default();
    for r in (0..team.n_pes()).filter(|&r| r != team.my_pe()) {
        let pe = team.members().pe(r);
        match rt.recorded_departure(pe) {
            Some(Departure::Failed) if finalized_only => {}
            Some(how) => missing.note(r, pe, how),
            None => {}
        }
    }
    missing.result(routine)
}

/// [`Error::PeGone`] naming the first member of `team` already recorded as departed
/// (finalized before failed): what a collective that cannot go on without a member
/// reports instead of starting. One load when no departure is recorded.
pub fn check_departed(routine: &'static str, team: &Team) -> Result<()> {
    recorded(rt(routine)?, routine, team, false)
}

/// Completes this PE's transfers and waits for every member of `team` that is still
/// running, on the team's arrival `words`. [`Error::PeGone`] names a member that
/// finalized (returned as soon as one is known: the barrier then has only a quiet's
/// effect) or failed (returned after the others synchronized).
pub fn tolerant_sync_all(routine: &'static str, words: &ArrivalWords, team: &Team) -> Result<()> {
    let rt = rt(routine)?;
    // Release: this PE's transfers are complete before any member goes on.
    crate::order::quiet()?;
    let (n, me) = (team.n_pes(), team.my_pe());
    if n <= 1 {
        return Ok(());
    }
    let g = words.gen.fetch_add(1, Ordering::Relaxed) + 1;
    let mine = (words.base + me * ArrivalWords::STRIDE) as *const u64;
    for r in (0..n).filter(|&r| r != me) {
        let pe = team.members().pe(r);
        if rt.recorded_departure(pe).is_some() {
            continue;
        }
        // SAFETY: this PE's arrival word in the team's symmetric words, aligned.
        let posted = unsafe {
            amo::ctx_atomic_post::<u64>(Ctx::default_ctx(), routine, mine, AmoOp::Set(g), pe as i64)
        };
        if let Err(e) = posted {
            match rt.probe_departure(pe) {
                Some(how) => rt.note_departed(pe, how),
                None => return Err(e),
            }
        }
    }
    // Through the network the posted words leave now (one flush for all of them).
    crate::order::quiet()?;
    // A member known to have finalized: the error, with a quiet's effect (the quiets
    // above). Failed members are skipped: the others still synchronize.
    recorded(rt, routine, team, true)?;
    let mut short = false;
    for r in (0..n).filter(|&r| r != me) {
        let pe = team.members().pe(r);
        let w = words.word(r);
        let mut waiter = Waiter::new();
        while w.load(Ordering::Acquire) < g {
            if rt.recorded_departure(pe).is_some() {
                break;
            }
            if waiter.overdue() {
                let how = rt.probe_departure(pe);
                // The state is read with acquire: re-read the word after it.
                if let (Some(how), true) = (how, w.load(Ordering::Acquire) < g) {
                    rt.note_departed(pe, how);
                    if how == Departure::Finalized {
                        // No waiting for the other members either.
                        return recorded(rt, routine, team, true);
                    }
                    break;
                }
            }
            waiter.snooze();
        }
        short |= w.load(Ordering::Acquire) < g;
    }
    if short {
        return recorded(rt, routine, team, false);
    }
    Ok(())
}
