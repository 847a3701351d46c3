//! SYNC ALL that tolerates stopped and failed images: the statement completes among the
//! images still running and reports `STAT_STOPPED_IMAGE` (or `STAT_FAILED_IMAGE`) every
//! time a member has stopped (failed), without a hang and without putting later
//! statements out of step.
//!
//! Each team (the initial team included) has, on every member, one 64-byte *arrival word*
//! per member (team rank order) in symmetric memory, and each image counts the SYNC ALLs
//! it has entered in that team (its *generation*). SYNC ALL number `g`: complete this
//! image's transfers, set the word of this image to `g` at every other member (posted
//! atomics, then one quiet), then wait until every member's word here reaches `g`. The
//! words only grow, so consecutive statements never mix, and a member that entered a
//! later statement already counts as arrived. A member that never arrives is looked at
//! once the wait is overdue: when it has stopped (entered normal termination: its state
//! word, which stays readable) or failed (`ft`), and its word is still short of `g`, it is
//! marked gone (for good: a stopped image never runs again) and skipped by every later
//! SYNC ALL, which still reports it. Nothing here announces a failure to the core, so a
//! stopped image waits in finalize's barrier for the others as normal termination says,
//! and its memory stays reachable through UCX too.
//!
//! One round of n-1 posted writes per image instead of the core's log(n) rounds: images
//! may leave at different statements (none waits on a relay through a stopped one), and
//! at the image counts Coarray programs run on one host it costs no more (measured with
//! `caf_sync`, see architecture.md).

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

use rshmem_core::{amo, AmoOp, Ctx};
use rshmem_util::Waiter;

use crate::stat::{CafError, CafResult, STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE};

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

/// The status of world PE `pe` (0, `STAT_STOPPED_IMAGE` or `STAT_FAILED_IMAGE`), probed
/// now: a read of its state word and, for failure, a system call. Not for hot paths.
fn probe(pe: usize) -> CafResult<i32> {
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

    fn result(&self, team: &str) -> CafResult {
        let (code, rank, what) = match (self.stopped, self.failed) {
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
                "SYNC ALL: image {} of {team} has {what}{others}; the other images synchronized",
                rank + 1
            ),
        ))
    }
}

/// SYNC ALL over a team of `n` members whose rank `me` is this image, `pe(r)` giving
/// member `r`'s world PE; `team` names it in messages.
pub(crate) fn sync_all(
    routine: &'static str,
    words: &SyncWords,
    n: usize,
    me: usize,
    pe: impl Fn(usize) -> usize,
    team: &str,
) -> CafResult {
    // Release: this image's transfers are complete before any member goes on.
    rshmem_core::order::quiet()?;
    if n <= 1 {
        return Ok(());
    }
    let gone = gone();
    let g = words.gen.fetch_add(1, Ordering::Relaxed) + 1;
    let mine = words.base + me * STRIDE;
    let mut missing = Missing::default();
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
                code => gone[p].store(mark(code), Ordering::Relaxed),
            }
        }
    }
    // Through UCX the posted words leave now (one flush for all of them).
    rshmem_core::order::quiet()?;
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
                    gone[p].store(mark(code), Ordering::Relaxed);
                    break;
                }
            }
            waiter.snooze();
        }
        if w.load(Ordering::Acquire) < g {
            missing.note(r, status_of_mark(gone[p].load(Ordering::Relaxed)));
        }
    }
    missing.result(team)
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
