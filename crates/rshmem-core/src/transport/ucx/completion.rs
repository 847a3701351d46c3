//! Ordering and completion: fence, quiet and flushes, the peers known to have finalized
//! or left, and progress of the workers by waiting threads.

use std::sync::atomic::Ordering;

use rshmem_ucx::Driving;

use super::{peer_gone, status_of, Ucx};
use crate::error::{Error, Result, UNNAMED};
use crate::transport::CtxState;

/// How long finalize's flushes of a worker wait for peers' acknowledgements (after the
/// last sync, which every PE passed): a live peer answers within milliseconds, even on an
/// oversubscribed host; one that exited may never answer.
const TEARDOWN_FLUSH: std::time::Duration = std::time::Duration::from_secs(5);

impl Ucx {
    /// Orders the context's earlier operations before its later ones.
    pub(crate) fn fence(&self, ctx: &CtxState) {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if p.is_null() {
            return;
        }
        // SAFETY: as in `worker`.
        let w = unsafe { &*p };
        if self.maps_peer.load(Ordering::Acquire) {
            // A copy into a mapped heap lands at once: what went through UCX before it
            // must have landed first, so complete it (nothing, mostly: a flush only when
            // something was issued through UCX since the last one).
            // A failed flush means a failed peer, which the next operation to it reports.
            let _ = w.flush_if_issued();
            std::sync::atomic::fence(Ordering::SeqCst);
            return;
        }
        // A failed fence means a failed peer, which the next operation to it reports.
        let _ = w.worker.fence();
    }

    /// Sends what the context's worker still holds, ignoring peers that already closed
    /// (finalize, after its last sync: they need nothing more from this PE), for at most
    /// [`TEARDOWN_FLUSH`]: a peer that exited never answers when a process it started
    /// inherited its sockets and holds the connection open (seen: a PE that left a `sleep`
    /// behind; its peer's flush waited for an acknowledgement until the job timed out).
    /// The service worker's raises ([`Ucx::svc`]) too.
    pub(crate) fn flush_at_teardown(&self, ctx: &CtxState) {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: as in `worker`.
            let _ = unsafe { &*p }.worker.flush_within(TEARDOWN_FLUSH);
        }
        let _ = self
            .service
            .exclusive(|| self.svc.worker.flush_within(TEARDOWN_FLUSH));
    }

    /// Completes the context's operations (a flush of its worker).
    pub(crate) fn quiet(&self, ctx: &CtxState) -> Result<()> {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if p.is_null() {
            return Ok(());
        }
        // SAFETY: as in `worker`.
        let w = unsafe { &*p };
        // Copies into mapped heaps are complete once visible: `Fabric::quiet`'s closing
        // sequentially consistent fence sees to that (no second one here).
        let flushed = w.flush_if_issued().map_err(|e| Error::Transport {
            routine: UNNAMED,
            pe: None,
            what: "completing operations through UCX failed",
            status: status_of(&e),
        })?;
        if !flushed {
            return Ok(());
        }
        // A flush drops the operations of a failed endpoint and still succeeds: look
        // (but not at peers that left after finalize: nothing may be sent to them).
        for (pe, c) in w.conns.iter().enumerate() {
            if self.has_left(pe) {
                continue;
            }
            if let Some(c) = c.get() {
                let r = c.ep.status().map_err(Self::op_error(
                    pe,
                    "operations to the PE were lost: the connection failed",
                ));
                if let Err(e) = r {
                    // Reported once: a peer gone is gone for good. One known to have
                    // finalized left after finalize: nothing of the program's was lost.
                    if peer_gone(&e) {
                        self.mark_left(pe);
                        if self.known_finalized(pe) {
                            continue;
                        }
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Records that `pe` left the job after finalize (its state word can no longer be
    /// read: see `Runtime::state_of`).
    pub(crate) fn mark_left(&self, pe: usize) {
        if let Some(Some(p)) = self.peers.get(pe) {
            p.left.store(true, Ordering::Relaxed);
        }
    }

    /// Records that `pe` is known to have entered `shmem_finalize`.
    pub(crate) fn mark_finalized(&self, pe: usize) {
        if let Some(Some(p)) = self.peers.get(pe) {
            p.finalized.store(true, Ordering::Relaxed);
        }
    }

    /// Whether `pe` is known to have entered `shmem_finalize` ([`Ucx::mark_finalized`]).
    pub(crate) fn known_finalized(&self, pe: usize) -> bool {
        matches!(self.peers.get(pe), Some(Some(p)) if p.finalized.load(Ordering::Relaxed))
    }

    /// Whether `pe` is known to have left the job ([`Ucx::mark_left`]).
    pub(crate) fn has_left(&self, pe: usize) -> bool {
        matches!(self.peers.get(pe), Some(Some(p)) if p.left.load(Ordering::Relaxed))
    }

    /// Completes the operations of every context worker. Not the service worker's raises
    /// ([`Ucx::svc`]): they are complete once sent, and a flush of the whole service worker
    /// also waits on its endpoints back to the peers' context workers, which peers asleep
    /// in a wait do not drive (a thread's drain at the end of an `_nbe` scope hung so across
    /// simulated hosts). Teardown flushes it, bounded ([`Ucx::flush_at_teardown`]).
    pub(crate) fn flush_all(&self) -> Result<()> {
        let mut r = Ok(());
        for (_, w) in self.workers.iter() {
            if r.is_ok() {
                r = w.worker.flush().map_err(|e| Error::Transport {
                    routine: UNNAMED,
                    pe: None,
                    what: "completing operations through UCX failed",
                    status: status_of(&e),
                });
            }
        }
        r
    }

    /// Drives the service worker once when no other thread is driving it, then every
    /// context worker once ([`Ucx::serve`], [`Ucx::progress_contexts`]; a wait composes
    /// the two itself, `NetWait::pause`): a peer's get or fetching atomic is then served
    /// by the waiting thread at once, not after the progress thread wakes up. (Driving it
    /// under UCX's own spinning lock, contended by the progress thread, made collectives
    /// at 4 PEs on 2 cores take milliseconds; the driver's lock sleeps instead.)
    ///
    /// Returns whether anything happened (an operation of ours completed, or a peer's was
    /// served): the wait then stays hot, as more is likely to follow.
    pub(crate) fn progress(&self) -> bool {
        let served = self.serve();
        self.progress_contexts() || served
    }

    /// Drives the service worker once, unless another thread is driving it; whether it
    /// found work.
    #[inline]
    pub(crate) fn serve(&self) -> bool {
        self.service.try_progress()
    }

    /// Drives every context worker once; whether any found work.
    #[inline]
    pub(crate) fn progress_contexts(&self) -> bool {
        let mut any = false;
        for (_, w) in self.workers.iter() {
            any |= w.worker.progress();
        }
        any
    }

    /// A wait pauses and drives the service: see [`rshmem_ucx::Driver::touch`].
    #[inline]
    pub(crate) fn touch(&self) {
        self.service.touch();
    }

    /// Claims the service worker for a waiting thread (the progress thread stands aside
    /// until the claim drops): see [`rshmem_ucx::Driver::drive`].
    pub(crate) fn drive(&self) -> Driving<'_> {
        self.service.drive()
    }

    /// A driving waiter's nap: until the service worker has work or `nap` passes.
    pub(crate) fn sleep(&self, nap: std::time::Duration) {
        self.service.sleep(nap);
    }

    /// Takes the context's worker back (the context was quieted).
    pub(crate) fn release(&self, ctx: &CtxState) {
        let p = ctx.ucx.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            self.free.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        }
    }
}
