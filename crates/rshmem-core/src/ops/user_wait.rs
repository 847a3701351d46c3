//! The program's waits on its own memory (`shmem_wait_until`, `shmem_signal_wait_until`
//! and their families): while one is overdue it checks whether any PE can still write (the
//! others finalized, failed, or wait as well) and ends with an error when none can.

use std::mem::offset_of;
use std::sync::atomic::Ordering;

use rshmem_util::Waiter;

use crate::error::{Error, Result};
use crate::runtime::{rt, Internal, Runtime};

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
                Some(rt) => self.net = Some(rt.fabric.net_wait(crate::ctx::runtime_ctx())),
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
            && self.worker().idle()
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
                    crate::team::peers::note_gave_up_over_finalized();
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
