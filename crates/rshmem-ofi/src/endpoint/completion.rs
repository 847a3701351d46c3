//! Issuing against a full queue, and waiting for the endpoint's writes and reads.

use crate::bindings as sys;
use crate::{OfiError, Result};
use std::time::{Duration, Instant};

use super::{Count, Endpoint, Unflushed};

const EAGAIN: isize = -(sys::FI_EAGAIN as isize);

impl Endpoint {
    /// Makes operations that the provider keeps refusing with `-FI_EAGAIN` for longer than
    /// `patience` fail with [`OfiError::Unreachable`] (`None`, the default: retry forever).
    /// Over `tcp;ofi_rxm` an operation towards a process that exited is refused that way
    /// for ever, as the provider tries to reconnect.
    pub fn set_issue_patience(&mut self, patience: Option<Duration>) {
        self.patience = patience;
    }

    /// Issues with `f` until it does not return `-FI_EAGAIN` (queue full: progress, retry;
    /// at most the endpoint's patience), then counts it in `count`.
    pub(super) fn issue(
        &self,
        routine: &'static str,
        count: &Count,
        mut f: impl FnMut() -> isize,
    ) -> Result<()> {
        let mut refused_since = None;
        loop {
            match f() {
                0 => {
                    count.issued.set(count.issued.get() + 1);
                    return Ok(());
                }
                EAGAIN => {
                    if let Some(p) = self.patience {
                        let since = *refused_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > p {
                            return Err(OfiError::Unreachable {
                                routine,
                                provider: self.inner.ofi.provider().to_string(),
                            });
                        }
                    }
                    if !self.inner.poll() && !rshmem_util::handoff::serve_claimed() {
                        std::thread::yield_now();
                    }
                }
                r => return Err(self.lib().error(routine, r)),
            }
        }
    }

    /// Waits until everything issued on `count` completed; reports a failure among them.
    pub(super) fn wait(&self, routine: &'static str, count: &Count) -> Result<()> {
        let r = self.wait_within(routine, count, None);
        if std::ptr::eq(count, &self.writes) {
            // Every write completed (or failed): none reads the arena any more.
            self.bounce_used.set(0);
        }
        r
    }

    /// [`Endpoint::wait`]; with `patience`, fails with [`OfiError::Unreachable`] once
    /// nothing completed for that long.
    fn wait_within(
        &self,
        routine: &'static str,
        count: &Count,
        patience: Option<Duration>,
    ) -> Result<()> {
        let target = count.issued.get();
        let mut round = 0u32;
        // (completions seen, when that number last moved), checked every 64 rounds.
        let mut stall: Option<(u64, Instant)> = None;
        let mut waiter = rshmem_util::wait::Waiter::new();
        loop {
            // Reading a counter drives progress where the provider needs it (util counters
            // progress their endpoints), so nothing else is polled here.
            // Each operation counts once, as done or as an error; errors already reported
            // are known, so only a new one needs a look at the error counter.
            let done = count.done();
            if done + count.errors_seen.get() >= target {
                return Ok(());
            }
            round += 1;
            if round.is_multiple_of(8) {
                let errors = count.errors();
                if done + errors >= target {
                    count.errors_seen.set(errors);
                    return Err(OfiError::Failed {
                        routine,
                        provider: self.inner.ofi.provider().to_string(),
                        message: self.inner.take_error(),
                    });
                }
            }
            if let Some(p) = patience.filter(|_| round.is_multiple_of(64)) {
                let seen = done + count.errors();
                match stall {
                    Some((n, since)) if n == seen => {
                        if since.elapsed() > p {
                            return Err(OfiError::Unreachable {
                                routine,
                                provider: self.inner.ofi.provider().to_string(),
                            });
                        }
                    }
                    _ => stall = Some((seen, Instant::now())),
                }
            }
            // A thread that claimed the endpoint peers' operations arrive on serves them
            // while it waits (they may be what its own operations wait for).
            if rshmem_util::handoff::serve_claimed() {
                waiter.keep_hot();
            } else {
                // The waiting policy's spin, then yields (never its naps: nothing here
                // ends one early).
                waiter.snooze_with(|_| std::thread::yield_now());
            }
        }
    }

    /// Waits for every write (put, posted atomic) issued so far on this endpoint.
    pub fn wait_writes(&self) -> Result<()> {
        self.wait("Endpoint::wait_writes", &self.writes)
    }

    /// Waits for every read (get, fetching atomic) issued so far on this endpoint.
    pub fn wait_reads(&self) -> Result<()> {
        self.wait("Endpoint::wait_reads", &self.reads)
    }

    /// [`Endpoint::wait_reads`], bounded: fails with [`OfiError::Unreachable`] once no read
    /// completed (or failed) for `patience` while some are outstanding. Over `tcp;ofi_rxm`
    /// a read from a process that exited after its connection was made neither completes
    /// nor fails. After that error the reads stay in flight and may still complete: keep
    /// the endpoint and their buffers alive, and use the endpoint no more.
    pub fn wait_reads_within(&self, patience: Duration) -> Result<()> {
        self.wait_within("Endpoint::wait_reads_within", &self.reads, Some(patience))
    }

    /// Completes every operation issued so far on this endpoint (remotely, where the
    /// provider has delivery completion: [`Ofi::delivery_complete`]; puts that completed
    /// once sent are read back first: [`Ofi::flushes_by_read`]).
    ///
    /// [`Ofi::delivery_complete`]: crate::Ofi::delivery_complete
    /// [`Ofi::flushes_by_read`]: crate::Ofi::flushes_by_read
    pub fn quiet(&self) -> Result<()> {
        self.flush("Endpoint::quiet")?;
        self.wait("Endpoint::quiet", &self.writes)?;
        self.wait("Endpoint::quiet", &self.reads)
    }

    /// Orders this endpoint's earlier writes before its later ones: nothing where the
    /// provider orders writes ([`Ofi::ordered_writes`]), else a wait for the earlier writes
    /// to be delivered.
    ///
    /// [`Ofi::ordered_writes`]: crate::Ofi::ordered_writes
    pub fn fence(&self) -> Result<()> {
        if self.inner.ofi.ordered_writes {
            return Ok(());
        }
        if self.flush("Endpoint::fence")? {
            self.wait("Endpoint::fence", &self.reads)?;
        }
        self.wait("Endpoint::fence", &self.writes)
    }

    /// Where puts may complete once sent ([`Ofi::flushes_by_read`]): reads a byte from each
    /// peer put to more than once since the last flush; once those reads complete, the
    /// puts before them were delivered. Whether it issued any.
    ///
    /// [`Ofi::flushes_by_read`]: crate::Ofi::flushes_by_read
    fn flush(&self, routine: &'static str) -> Result<bool> {
        // Taken out (its capacity put back below): issuing drives progress, which runs
        // message handlers.
        let mut list = {
            let mut u = self.unflushed.borrow_mut();
            if u.list.is_empty() {
                return Ok(false);
            }
            let Unflushed { state, list } = &mut *u;
            // Only peers put to more than once need a read (the first put completes at
            // delivery).
            list.retain(|&(peer, _, _)| {
                std::mem::replace(&mut state[peer.0 as usize], Unflushed::CLEAN) == Unflushed::SENT
            });
            std::mem::take(list)
        };
        let sink = self.inner.flush_sink.get().cast::<std::ffi::c_void>();
        let any = !list.is_empty();
        let r = list.drain(..).try_for_each(|(peer, off, key)| {
            // SAFETY: fi_read of one byte at a place this endpoint wrote (registered for
            // remote access) into the endpoint's sink, which lives as long as the
            // endpoint and which nothing reads.
            self.issue(routine, &self.reads, || unsafe {
                let rma = &*(*self.ep()).rma;
                (rma.read)(
                    self.ep(),
                    sink,
                    1,
                    std::ptr::null_mut(),
                    peer.0,
                    off,
                    key,
                    std::ptr::null_mut(),
                )
            })
        });
        list.clear();
        let mut u = self.unflushed.borrow_mut();
        if u.list.is_empty() {
            u.list = list;
        }
        r.map(|()| any)
    }

    /// Issued writes and reads not completed yet (a diagnostic; reads the counters).
    pub fn outstanding(&self) -> (u64, u64) {
        (self.writes.outstanding(), self.reads.outstanding())
    }

    /// Writes and reads issued on this endpoint since it was made.
    pub fn issued(&self) -> (u64, u64) {
        (self.writes.issued.get(), self.reads.issued.get())
    }
}
