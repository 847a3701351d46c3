//! Driving an endpoint's progress from other threads.

use crate::bindings as sys;
use crate::endpoint::EpInner;
use crate::{OfiError, Result};
use std::fmt;
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
        let mut entry = sys::fi_cq_entry {
            op_context: std::ptr::null_mut(),
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        let cq = self.inner.cq;
        // SAFETY: fi_cq_sread of at most one entry into `entry`, no condition.
        let r = unsafe {
            ((*(*cq).ops).sread)(
                cq,
                (&mut entry as *mut sys::fi_cq_entry).cast(),
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

    /// Wakes a thread sleeping in [`ProgressThread`] (`fi_cq_signal`).
    fn wake(&self) {
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

/// A thread that drives an endpoint's progress, sleeping in the provider (`fi_cq_sread`)
/// while nothing happens, so that peers' operations on this process's memory complete while
/// its owner computes. Stopped and joined by [`ProgressThread::stop`] or on drop.
#[derive(Debug)]
pub struct ProgressThread {
    progress: Progress,
    stopping: Arc<AtomicBool>,
    rounds: Arc<AtomicU64>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl ProgressThread {
    /// Starts the thread.
    pub fn start(progress: Progress) -> Result<ProgressThread> {
        let stopping = Arc::new(AtomicBool::new(false));
        let rounds = Arc::new(AtomicU64::new(0));
        let (flag, counter, p) = (stopping.clone(), rounds.clone(), progress.clone());
        let handle = std::thread::Builder::new()
            .name("ofi-progress".into())
            .spawn(move || -> Result<()> {
                let mut can_sleep = true;
                while !flag.load(Ordering::Acquire) {
                    counter.fetch_add(1, Ordering::Relaxed);
                    if can_sleep {
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
            stopping,
            rounds,
            handle: Some(handle),
        })
    }

    /// How many times the thread went round its loop (a diagnostic).
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
        self.progress.wake();
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
