//! Driving an endpoint's progress from other threads: a progress thread, and waiting
//! threads that take its endpoint over.

use crate::bindings as sys;
use crate::endpoint::EpInner;
use crate::{OfiError, Result};
use rshmem_util::handoff::{self, Handoff};
use std::fmt;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Drives one endpoint's progress from any thread ([`crate::Endpoint::progress_handle`]):
/// on manual-progress providers a peer's operations on this process's memory move only
/// while some thread calls in. Keeps the endpoint open.
#[derive(Clone)]
pub struct Progress {
    inner: Arc<EpInner>,
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress")
    }
}

impl Progress {
    pub(crate) fn new(inner: Arc<EpInner>) -> Progress {
        Progress { inner }
    }

    /// One round of progress; true if a completion entry was read.
    pub fn progress(&self) -> bool {
        self.inner.poll()
    }

    /// Sleeps in the provider until something happens on the endpoint or `timeout` passes
    /// (`fi_cq_sread`, which drives progress while it waits). Returns false if the provider
    /// cannot sleep on this completion queue (then poll instead).
    fn sleep(&self, timeout: Duration) -> Result<bool> {
        // A message read here would escape its handler and the order of the others.
        if self.inner.receives() || !self.inner.waitable {
            return Ok(false);
        }
        let mut entry = sys::fi_cq_data_entry::EMPTY;
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        let cq = self.inner.cq;
        // SAFETY: fi_cq_sread of at most one entry into `entry`, no condition.
        let r = unsafe {
            ((*(*cq).ops).sread)(
                cq,
                (&mut entry as *mut sys::fi_cq_data_entry).cast(),
                1,
                std::ptr::null(),
                ms,
            )
        };
        match r {
            r if r >= 0 => Ok(true),
            r if r == -(sys::FI_EAGAIN as isize) || r == -(sys::FI_ETIMEDOUT as isize) => Ok(true),
            r if r == -(sys::FI_EAVAIL as isize) => {
                self.inner.read_error();
                Ok(true)
            }
            r if r == -(sys::FI_ENOSYS as isize) || r == -(sys::FI_EOPNOTSUPP as isize) => {
                Ok(false)
            }
            // Woken by fi_cq_signal (ProgressThread::stop) or a signal.
            r if r == -(libc::ECANCELED as isize) || r == -(libc::EINTR as isize) => Ok(true),
            r => Err(self.inner.ofi.lib.error("fi_cq_sread", r)),
        }
    }

    /// The completion queue's file descriptor (`FI_GETWAIT`), if it was opened with one
    /// ([`crate::Ofi::endpoint_with_wait_fd`]). Owned by the queue: do not close it.
    pub fn wait_fd(&self) -> Option<RawFd> {
        if !self.inner.waitable {
            return None;
        }
        let mut fd: libc::c_int = -1;
        let cq = self.inner.cq;
        // SAFETY: fi_control(FI_GETWAIT) on the live queue writes an int for FI_WAIT_FD
        // queues and fails for others.
        let r = unsafe {
            ((*(*cq).fid.ops).control)(
                &raw mut (*cq).fid,
                sys::FI_GETWAIT,
                (&mut fd as *mut libc::c_int).cast(),
            )
        };
        (r == 0 && fd >= 0).then_some(fd)
    }

    /// Whether a thread may now sleep on [`Progress::wait_fd`] (`fi_trywait`): false while
    /// completions or provider work are pending (progress, then try again).
    pub fn trywait(&self) -> bool {
        if !self.inner.waitable {
            return false;
        }
        let ofi = &self.inner.ofi;
        let mut cq = self.inner.cq_fid();
        // SAFETY: fi_trywait on the provider's fabric with one live queue.
        let r = unsafe { ((*(*ofi.fabric()).ops).trywait)(ofi.fabric(), &mut cq, 1) };
        r == 0
    }

    /// Wakes a thread sleeping in [`ProgressThread`] (`fi_cq_signal`).
    fn wake(&self) {
        if !self.inner.waitable {
            // The thread polls, and sees its stop flag within a pause.
            return;
        }
        let cq = self.inner.cq;
        // SAFETY: fi_cq_signal on the live completion queue.
        unsafe { ((*(*cq).ops).signal)(cq) };
    }
}

/// How long the thread sleeps in the provider before looking at its stop flag again (it is
/// also woken by [`ProgressThread::stop`]).
const SLEEP: Duration = Duration::from_millis(100);

/// Where the provider cannot sleep on a completion queue: the pause between polls.
const POLL_PAUSE: Duration = Duration::from_micros(100);

/// `fi_trywait` refusals in a row with no progress made after which the thread pauses
/// [`POLL_PAUSE`] (a provider that keeps refusing would make it spin).
const REFUSALS_BEFORE_PAUSE: u32 = 64;

/// Serves what is pending on `p` and arms its wait fd: true once `fi_trywait` allows a
/// sleep, false if it kept refusing.
fn arm(p: &Progress) -> bool {
    for _ in 0..REFUSALS_BEFORE_PAUSE {
        while p.progress() {}
        if p.trywait() {
            return true;
        }
    }
    false
}

/// Lets threads that wait anyway drive a [`ProgressThread`]'s endpoint and sleep on its
/// wait fd ([`Driver::drive`]), so a peer's operation that needs this process (every one,
/// on manual-progress providers) is served by the thread that waits for it, and the
/// progress thread is not woken for it. Made where the endpoint has a wait fd.
#[derive(Debug, Clone)]
pub struct Driver {
    progress: Progress,
    handoff: Arc<Handoff>,
}

/// A waiting thread's claim on a [`Driver`]'s endpoint ([`Driver::drive`],
/// [`rshmem_util::handoff::Claim`]); dropping it hands the endpoint back to the progress
/// thread once no other thread waits. While it lives, the thread's waits for its own
/// operations drive the claimed endpoint too (its peers may wait for it).
pub type Driving<'d> = handoff::Claim<'d, Driver>;

impl handoff::Service for Driver {
    fn serve(&self) -> bool {
        self.progress.progress()
    }
    fn rearm(&self) -> bool {
        arm(&self.progress)
    }
    fn handoff(&self) -> &Handoff {
        &self.handoff
    }
}

impl Driver {
    /// One round of progress of the endpoint; true if a completion entry was read.
    pub fn progress(&self) -> bool {
        self.progress.progress()
    }

    /// Claims the endpoint for a waiting thread: until the claim drops, the progress thread
    /// does not wake for its events, and the waiter must drive it ([`Driver::progress`]
    /// between checks, [`Driver::sleep`] rather than a timed sleep).
    pub fn drive(&self) -> Driving<'_> {
        handoff::claim(self)
    }

    /// A wait pauses and drives the endpoint ([`Handoff::touch`]): the endpoint stays the
    /// waiters' while they keep driving it, even in waits too short to claim it.
    #[inline]
    pub fn touch(&self) {
        self.handoff.touch();
    }

    /// [`Driver::drive`] only if a waiter left the endpoint out of the thread's set
    /// ([`handoff::claim_if_out`]), for a thread about to block on its own operations.
    pub fn drive_if_out(&self) -> Option<Driving<'_>> {
        handoff::claim_if_out(self)
    }

    /// A claimant's nap: serves what is pending and sleeps on the wait fd until an event
    /// or `timeout`. True if it found work: the provider had some pending, or an event
    /// ended the nap (a peer's operation served writes no completion entry, so
    /// [`Driver::progress`] cannot tell; a wait that learns of it stays hot).
    pub fn sleep(&self, timeout: Duration) -> bool {
        if self.progress.trywait() {
            return self.handoff.nap(timeout);
        }
        arm(&self.progress);
        true
    }
}

/// A thread that drives an endpoint's progress, sleeping while nothing happens, so that
/// peers' operations on this process's memory complete while its owner computes. It sleeps
/// on the completion queue's wait fd where it has one (beside a stop fd, through a
/// [`Handoff`]: threads that wait anyway take the fd over, [`ProgressThread::driver`]),
/// else in the provider (`fi_cq_sread`), else it polls. Stopped and joined by
/// [`ProgressThread::stop`] or on drop.
#[derive(Debug)]
pub struct ProgressThread {
    progress: Progress,
    driver: Option<Driver>,
    stopping: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl ProgressThread {
    /// Starts the thread.
    pub fn start(progress: Progress) -> Result<ProgressThread> {
        let driver = match progress.wait_fd() {
            Some(fd) => Some(Driver {
                progress: progress.clone(),
                handoff: Arc::new(Handoff::new(fd).map_err(|e| OfiError::InvalidArgument {
                    routine: "ProgressThread::start",
                    message: format!("cannot make the thread's epoll set: {e}"),
                })?),
            }),
            None => None,
        };
        let stopping = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let (flag, counter, p) = (stopping.clone(), rounds.clone(), progress.clone());
        let handoff = driver.as_ref().map(|d| d.handoff.clone());
        let handle = std::thread::Builder::new()
            .name("ofi-progress".into())
            .spawn(move || -> Result<()> {
                let mut can_sleep = true;
                while !flag.load(Ordering::Acquire) {
                    // Rounds in which the thread may drive the endpoint: its timed sleeps
                    // while a waiter holds the fd do not count.
                    let claimed = handoff.as_ref().is_some_and(|h| h.claimed());
                    if !claimed {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Some(h) = &handoff {
                        // Woken just before a waiter claimed the fd, the thread leaves the
                        // endpoint to the waiter and sleeps until the fd comes back: two
                        // threads driving it met at the provider's lock at every operation
                        // (a futex hand-over per put served, seen under strace).
                        if claimed || arm(&p) {
                            h.sleep().map_err(|e| OfiError::InvalidArgument {
                                routine: "ProgressThread",
                                message: format!("epoll_wait: {e}"),
                            })?;
                        } else {
                            std::thread::sleep(POLL_PAUSE);
                        }
                    } else if can_sleep {
                        can_sleep = p.sleep(SLEEP)?;
                    } else {
                        while p.progress() {}
                        std::thread::sleep(POLL_PAUSE);
                    }
                }
                Ok(())
            })
            .map_err(|e| OfiError::InvalidArgument {
                routine: "ProgressThread::start",
                message: format!("cannot spawn the thread: {e}"),
            })?;
        Ok(ProgressThread {
            progress,
            driver,
            stopping,
            rounds,
            handle: Some(handle),
        })
    }

    /// A handle with which waiting threads take the endpoint over ([`Driver::drive`]),
    /// where its completion queue has a wait fd.
    pub fn driver(&self) -> Option<Driver> {
        self.driver.clone()
    }

    /// How many times the thread went round its loop to drive the endpoint (a diagnostic:
    /// its sleeps while a waiting thread holds the endpoint's fd do not count).
    pub fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::Relaxed)
    }

    /// Stops and joins the thread; returns the error that ended it early, if any.
    pub fn stop(mut self) -> Result<()> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<()> {
        let Some(h) = self.handle.take() else {
            return Ok(());
        };
        self.stopping.store(true, Ordering::Release);
        match &self.driver {
            Some(d) => d.handoff.stop(),
            None => self.progress.wake(),
        }
        h.join().unwrap_or_else(|_| {
            Err(OfiError::InvalidArgument {
                routine: "ProgressThread",
                message: "the progress thread panicked".into(),
            })
        })
    }
}

impl Drop for ProgressThread {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}
