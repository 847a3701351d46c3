//! Driving a service worker: [`Driver`] and [`Driving`] (threads that wait anyway progress
//! the worker, through `rshmem_util::handoff`) and the [`ProgressThread`] that serves it the
//! rest of the time.

use crate::status::{Result, UcxError};
use crate::worker::{Multi, Worker};
use rshmem_util::handoff::{self, Handoff};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Lets threads that wait anyway drive a [`ProgressThread`]'s worker, so a request that
/// needs the target (a get or fetching atomic over TCP) is served at once instead of after
/// the thread wakes up. One driver at a time: UCX's own worker lock spins, which on an
/// oversubscribed host costs whole time slices, so drivers take a sleeping lock first,
/// and a waiter only tries it.
#[derive(Debug, Clone)]
pub struct Driver {
    worker: Arc<Worker<Multi>>,
    lock: Arc<Mutex<()>>,
    /// Who sleeps on the worker's event fd: the thread, or the threads that wait anyway
    /// (an arrival wakes the one thread that needs it; see [`rshmem_util::handoff`]).
    handoff: Arc<Handoff>,
}

/// A waiting thread's claim on a [`Driver`]'s worker ([`Driver::drive`],
/// [`rshmem_util::handoff::Claim`]); dropping it hands the worker back to the progress
/// thread once no other thread waits. While it lives, the thread's blocking operations on
/// any worker drive the claimed worker too.
pub type Driving<'d> = handoff::Claim<'d, Driver>;

impl handoff::Service for Driver {
    fn serve(&self) -> bool {
        self.try_progress()
    }

    /// The last waiter arms the worker (so that its fd signals the next event) before the
    /// fd goes back to the progress thread, which then wakes only if an event is pending.
    fn rearm(&self) -> bool {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Arming fails while events are pending: serve them first. An error is the
        // progress thread's to meet (and end on): it is woken for it.
        for _ in 0..64 {
            while self.worker.progress() {}
            match self.worker.arm() {
                Ok(true) => return true,
                Ok(false) => {}
                Err(_) => return false,
            }
        }
        false
    }

    fn handoff(&self) -> &Handoff {
        &self.handoff
    }
}

impl Driver {
    /// Progresses the worker once unless another thread is driving it; true if this call
    /// found work (a peer's operation was served, or one of ours completed). Once, not
    /// until idle: a waiter checks its condition as soon as something came, where one more
    /// round (over TCP an `epoll_wait`) cost every 2-PE barrier 0.4 us between the
    /// message's handler and the wait's end (TSC stamps, issue 27).
    pub fn try_progress(&self) -> bool {
        match self.lock.try_lock() {
            Ok(_g) => self.worker.progress(),
            Err(_) => false,
        }
    }

    /// Runs `f` with the worker to this thread alone: the progress thread and other
    /// drivers stand aside until it returns (they take or try the same sleeping lock), so a
    /// send from the service worker never spins on UCX's own lock against the thread. Not
    /// to be nested in a progress call of this worker (an active-message handler).
    pub fn exclusive<T>(&self, f: impl FnOnce() -> T) -> T {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        f()
    }

    /// Claims the worker for a waiting thread: until the claim drops, the progress thread
    /// stands aside, and the waiter must drive the worker ([`Driver::try_progress`] between
    /// checks, [`Driver::sleep`] rather than a timed sleep).
    pub fn drive(&self) -> Driving<'_> {
        handoff::claim(self)
    }

    /// A wait pauses and drives the worker ([`Handoff::touch`]): the worker stays the
    /// waiters' while they keep driving it, even in waits too short to claim it.
    #[inline]
    pub fn touch(&self) {
        self.handoff.touch();
    }

    /// [`Driver::drive`] only if a waiter left the worker out of the thread's set
    /// ([`handoff::claim_if_out`]), for a thread about to block on its own operations.
    #[inline]
    pub fn drive_if_out(&self) -> Option<Driving<'_>> {
        handoff::claim_if_out(self)
    }

    /// Sleeps until the worker has work or `timeout` passes (a driving waiter's nap);
    /// returns at once if work is pending or another thread is driving the worker.
    pub fn sleep(&self, timeout: std::time::Duration) {
        {
            let Ok(_g) = self.lock.try_lock() else {
                return;
            };
            while self.worker.progress() {}
            if !matches!(self.worker.arm(), Ok(true)) {
                return;
            }
        }
        self.handoff.nap(timeout);
    }
}

/// A thread that progresses a [`Worker<Multi>`] whenever it has work and sleeps on its event fd
/// otherwise (never spins), so the worker's peers are served while its owner computes; it
/// stands aside while threads of the process drive the worker themselves ([`Driver::drive`]).
/// Stopped and joined by [`ProgressThread::stop`] or on drop.
#[derive(Debug)]
pub struct ProgressThread {
    driver: Driver,
    stopping: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl ProgressThread {
    /// Starts the thread.
    pub fn start(worker: Arc<Worker<Multi>>) -> Result<ProgressThread> {
        let handoff = Handoff::new(worker.efd()?).map_err(|e| UcxError::InvalidArgument {
            routine: "ProgressThread::start",
            message: format!("cannot make the thread's epoll set: {e}"),
        })?;
        let stopping = Arc::new(AtomicBool::new(false));
        let flag = stopping.clone();
        let rounds = Arc::new(AtomicU64::new(0));
        let counter = rounds.clone();
        let driver = Driver {
            worker: worker.clone(),
            lock: Arc::new(Mutex::new(())),
            handoff: Arc::new(handoff),
        };
        let lock = driver.lock.clone();
        let handoff = driver.handoff.clone();
        let handle = std::thread::Builder::new()
            .name("ucx-progress".into())
            .spawn(move || -> Result<()> {
                while !flag.load(Ordering::Acquire) {
                    // While a waiting thread holds the worker's fd (or did within
                    // handoff::LINGER) the worker is its to drive: the thread only sleeps.
                    if !handoff.claimed() {
                        counter.fetch_add(1, Ordering::Relaxed);
                        // Sleeps (never spins) while a waiting thread drives the worker.
                        let _g = lock.lock().unwrap_or_else(|e| e.into_inner());
                        while worker.progress() {}
                        if !worker.arm()? {
                            continue;
                        }
                    }
                    // Wakes on the stop fd, or on the worker's while no thread drives it.
                    handoff.sleep().map_err(|e| UcxError::InvalidArgument {
                        routine: "ProgressThread",
                        message: format!("epoll_wait: {e}"),
                    })?;
                }
                Ok(())
            })
            .map_err(|e| UcxError::InvalidArgument {
                routine: "ProgressThread::start",
                message: format!("cannot spawn the thread: {e}"),
            })?;
        Ok(ProgressThread {
            driver,
            stopping,
            rounds,
            handle: Some(handle),
        })
    }

    /// A handle with which other threads drive the worker too, without contending: while
    /// one drives, the thread and the others do not (see [`Driver::try_progress`]).
    pub fn driver(&self) -> Driver {
        self.driver.clone()
    }

    /// How many times the thread has woken up and progressed the worker (a diagnostic: it
    /// stays still while the worker is idle, or while a waiting thread drives it).
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
        self.driver.handoff.stop();
        h.join().unwrap_or_else(|_| {
            Err(UcxError::InvalidArgument {
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
