//! SYNC ALL that survives stopped and failed images, without a hang and without putting
//! later statements out of step: once a member is known to have stopped (entered normal
//! termination) the statement reports `STAT_STOPPED_IMAGE` with the effect of SYNC
//! MEMORY, as the standard says; a failed member is skipped, the others synchronize, and
//! the statement reports `STAT_FAILED_IMAGE` (what failed-image recovery needs, and what
//! OpenCoarrays' failed-image tests expect).
//!
//! Each team (the initial team included) has, on every member, one 64-byte *arrival word*
//! per member (team rank order) in symmetric memory, and each image counts the SYNC ALLs
//! it has entered in that team (its *generation*). SYNC ALL number `g`: complete this
//! image's transfers, set the word of this image to `g` at every other member (posted
//! atomics, then one quiet), then wait until every member's word here reaches `g`. The
//! words only grow, so consecutive statements never mix, and a member that entered a
//! later statement already counts as arrived. A member that never arrives is looked at
//! once the wait is overdue: when it has stopped (its state word, which stays readable)
//! or failed (`ft`), and its word is still short of `g`, it is marked gone for good
//! ([`mark_gone`]; the status queries mark what they find too); a stopped one makes the
//! statement return at once. A statement that starts with a member known to have
//! stopped still posts its arrival (the running members' waits end as before) and
//! returns without waiting: waiting for the running members would be a stronger
//! synchronization than the standard gives, and a conforming program can deadlock on it
//! (gfortran's `sync_memory_stopped_1`). Nothing
//! here announces a failure to the core, so a stopped image waits in finalize's barrier
//! for the others as normal termination says, and its memory stays reachable through UCX
//! too.
//!
//! One round of n-1 posted writes per image instead of the core's log(n) rounds: images
//! may leave at different statements (none waits on a relay through a stopped one), and
//! at the image counts Coarray programs run on one host it costs no more (measured with
//! `caf_sync`, see docs/decisions/0039-caf-image-control.md).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use rshmem_core::{amo, AmoOp, Ctx};
use rshmem_util::Waiter;

use crate::stat_errmsg::{CafError, CafResult, STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE};

/// Bytes between two members' arrival words (one cache line each: no false sharing
/// between writers).
pub(crate) const STRIDE: usize = 64;

/// The arrival words of one team on this image and the count of its SYNC ALLs so far.
#[derive(Debug)]
pub(crate) struct SyncWords {
    /// Symmetric address of member 0's word (`n * STRIDE` bytes, zeroed before use).
    pub base: usize,
    /// SYNC ALLs this image has entered in the team.
    gen: AtomicU64,
}

impl SyncWords {
    /// Words at `base` (zeroed on every member before any of them syncs).
    pub(crate) fn new(base: usize) -> SyncWords {
        SyncWords {
            base,
            gen: AtomicU64::new(0),
        }
    }
}

/// Per world PE: 0 running, else the status it was seen gone with (never cleared).
fn gone() -> &'static [AtomicU8] {
    &crate::image::state("_gfortran_caf_sync_all").gone
}

/// Records that world PE `pe` stopped or failed (`code`: `STAT_STOPPED_IMAGE` or
/// `STAT_FAILED_IMAGE`); the first record counts.
pub(crate) fn mark_gone(pe: usize, code: i32) {
    let s = crate::image::state("_gfortran_caf_sync_all");
    if s.gone[pe]
        .compare_exchange(0, mark(code), Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
    {
        s.gone_count.fetch_add(1, Ordering::Relaxed);
    }
}

/// `Err(STAT_STOPPED_IMAGE)` (or `STAT_FAILED_IMAGE`) naming the first member of a team
/// of `n` (`pe(r)` its world PEs) already known to be gone, for a statement that must
/// report it before doing anything; one load when no image is known gone.
pub(crate) fn known_gone(
    what: &str,
    n: usize,
    me: usize,
    pe: impl Fn(usize) -> usize,
    team: i32,
) -> CafResult {
    known(what, n, me, pe, team, false)
}

/// [`known_gone`], for stopped members only (`stopped_only`) or for both kinds.
fn known(
    what: &str,
    n: usize,
    me: usize,
    pe: impl Fn(usize) -> usize,
    team: i32,
    stopped_only: bool,
) -> CafResult {
    let s = crate::image::state("_gfortran_caf_sync_all");
    if s.gone_count.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    let mut missing = Missing::default();
    for r in (0..n).filter(|&r| r != me) {
        let m = s.gone[pe(r)].load(Ordering::Relaxed);
        if m != 0 && !(stopped_only && status_of_mark(m) != STAT_STOPPED_IMAGE) {
            missing.note(r, status_of_mark(m));
        }
    }
    missing.result(what, team)
}

/// The status of world PE `pe` (0, `STAT_STOPPED_IMAGE` or `STAT_FAILED_IMAGE`), probed
/// now: a read of its state word and, for failure, a system call. Not for hot paths.
pub(crate) fn probe(pe: usize) -> CafResult<i32> {
    Ok(if rshmem_core::ft::pe_finalized(pe)? {
        STAT_STOPPED_IMAGE
    } else if rshmem_core::ft::pe_failed(pe)? {
        STAT_FAILED_IMAGE
    } else {
        0
    })
}

/// What one SYNC ALL found gone: stopped images take precedence (the standard's order).
#[derive(Default)]
struct Missing {
    stopped: Option<usize>,
    failed: Option<usize>,
    count: usize,
}

impl Missing {
    fn note(&mut self, rank: usize, code: i32) {
        self.count += 1;
        let slot = if code == STAT_FAILED_IMAGE {
            &mut self.failed
        } else {
            &mut self.stopped
        };
        slot.get_or_insert(rank);
    }

    /// The error naming the first missing member of team number `team` (-1: the initial
    /// team), whose name is only formatted here, off the statements' paths.
    fn result(&self, what: &str, team: i32) -> CafResult {
        let (code, rank, how) = match (self.stopped, self.failed) {
            (Some(r), _) => (STAT_STOPPED_IMAGE, r, "stopped"),
            (None, Some(r)) => (STAT_FAILED_IMAGE, r, "failed"),
            (None, None) => return Ok(()),
        };
        let others = match self.count {
            1 => String::new(),
            c => format!(" ({} images are missing)", c),
        };
        Err(CafError::new(
            code,
            format!(
                "{what}: image {} of {} has {how}{others}",
                rank + 1,
                team_name(team)
            ),
        ))
    }
}

/// How messages name team number `team` (-1: the initial team).
fn team_name(team: i32) -> String {
    if team < 0 {
        "the initial team".to_string()
    } else {
        format!("team {team}")
    }
}

/// SYNC ALL over a team of `n` members whose rank `me` is this image, `pe(r)` giving
/// member `r`'s world PE; `team` is its TEAM_NUMBER (-1: the initial team), for messages.
pub(crate) fn sync_all(
    routine: &'static str,
    words: &SyncWords,
    n: usize,
    me: usize,
    pe: impl Fn(usize) -> usize,
    team: i32,
) -> CafResult {
    // Release: this image's transfers are complete before any member goes on.
    rshmem_core::order::quiet()?;
    if n <= 1 {
        return Ok(());
    }
    let gone = gone();
    let g = words.gen.fetch_add(1, Ordering::Relaxed) + 1;
    let mine = words.base + me * STRIDE;
    for r in (0..n).filter(|&r| r != me) {
        let p = pe(r);
        if gone[p].load(Ordering::Relaxed) != 0 {
            continue;
        }
        // SAFETY: this image's arrival word in the team's symmetric words, aligned.
        let posted = unsafe {
            amo::ctx_atomic_post::<u64>(
                Ctx::default_ctx(),
                routine,
                mine as *const u64,
                AmoOp::Set(g),
                p as i64,
            )
        };
        if let Err(e) = posted {
            match probe(p)? {
                0 => return Err(e.into()),
                code => mark_gone(p, code),
            }
        }
    }
    // Through UCX the posted words leave now (one flush for all of them).
    rshmem_core::order::quiet()?;
    // A member known to have stopped: the error, with SYNC MEMORY's effect (the quiets
    // above). Failed members are skipped: the others still synchronize.
    known("SYNC ALL", n, me, &pe, team, true)?;
    let mut failed = false;
    for r in (0..n).filter(|&r| r != me) {
        let p = pe(r);
        // SAFETY: member r's arrival word on this image: symmetric memory of the team,
        // 8-aligned, written by other images only through atomics.
        let w = unsafe { &*((words.base + r * STRIDE) as *const AtomicU64) };
        let mut waiter = Waiter::new();
        while w.load(Ordering::Acquire) < g {
            if gone[p].load(Ordering::Relaxed) != 0 {
                break;
            }
            if waiter.overdue() {
                let code = probe(p)?;
                // The state is read with acquire: re-read the word after it.
                if code != 0 && w.load(Ordering::Acquire) < g {
                    mark_gone(p, code);
                    if code == STAT_STOPPED_IMAGE {
                        // No waiting for the other members either.
                        return known("SYNC ALL", n, me, &pe, team, true);
                    }
                    break;
                }
            }
            waiter.snooze();
        }
        failed |= w.load(Ordering::Acquire) < g;
    }
    if failed {
        return known("SYNC ALL", n, me, &pe, team, false);
    }
    Ok(())
}

/// The gone mark of a non-zero status: 1 stopped, 2 failed.
fn mark(code: i32) -> u8 {
    if code == STAT_FAILED_IMAGE {
        2
    } else {
        1
    }
}

/// The status a gone mark stands for.
fn status_of_mark(m: u8) -> i32 {
    if m == 2 {
        STAT_FAILED_IMAGE
    } else {
        STAT_STOPPED_IMAGE
    }
}
