//! The collective worker: one thread per PE that runs its non-blocking collectives, in
//! the order they were issued, on a private context of its own ([`super::runtime_ctx`]).
//! It lives in the context layer because every layer that completes requests or starts
//! a blocking collective waits for its queue to drain; what it runs is `coll`'s.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use rshmem_util::Waiter;

use super::request::{self, ReqHandle};
use crate::error::Result;
use crate::runtime::Runtime;

/// Whether this is the collective worker's thread (the one thread with a context of its
/// own for the runtime's traffic).
fn in_worker() -> bool {
    super::has_own_runtime_ctx()
}

/// A job: one non-blocking collective.
pub(crate) type Run = Box<dyn FnOnce() -> Result<()> + Send>;

struct Job {
    run: Run,
    req: ReqHandle,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    stop: bool,
    started: bool,
}

/// A PE's collective worker: its queue and its counts of issued and finished jobs.
#[derive(Default)]
pub(crate) struct Worker {
    queue: Mutex<Queue>,
    ready: Condvar,
    issued: AtomicU64,
    done: AtomicU64,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("issued", &self.issued)
            .field("done", &self.done)
            .finish()
    }
}

impl Worker {
    /// Waits until every non-blocking collective issued so far has finished, unless
    /// called by the worker itself (whose collectives are the ones running).
    #[inline(always)]
    /// Whether every collective issued to the worker has completed (it writes to no peer).
    pub(crate) fn idle(&self) -> bool {
        self.issued.load(Ordering::Relaxed) == self.done.load(Ordering::Acquire)
    }

    pub(crate) fn drain(&self, rt: &Runtime) {
        if self.issued.load(Ordering::Relaxed) != self.done.load(Ordering::Acquire) {
            self.drain_slow(rt);
        }
    }

    #[cold]
    fn drain_slow(&self, rt: &Runtime) {
        if in_worker() {
            return;
        }
        let want = self.issued.load(Ordering::Relaxed);
        let mut w = Waiter::new();
        let mut net = rt.fabric.net_wait_for_own();
        while self.done.load(Ordering::Acquire) < want {
            net.pause(&mut w);
        }
    }

    /// Queues `run`, whose completion joins `req` (starts the thread on first use).
    pub(crate) fn submit(&self, run: Run, req: ReqHandle) {
        self.issued.fetch_add(1, Ordering::Relaxed);
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if !q.started {
            q.started = true;
            let t = std::thread::Builder::new()
                .name("rshmem-coll".into())
                .spawn(worker_main)
                .expect("spawn the collective worker thread");
            *self.thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
        }
        q.jobs.push_back(Job { run, req });
        drop(q);
        self.ready.notify_one();
    }

    /// Finishes every issued collective and ends the thread (finalize).
    pub(crate) fn stop(&self, rt: &Runtime) {
        self.drain(rt);
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        self.ready.notify_one();
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}

fn worker_main() {
    let Some(rt) = crate::runtime::try_runtime() else {
        return;
    };
    let ctx = match super::create(super::PRIVATE) {
        Ok(c) => c,
        Err(e) => rt.fatal(&e),
    };
    // SAFETY: `ctx` lives until this thread destroys it below, after resetting this.
    unsafe { super::set_runtime_ctx(Some(ctx)) };
    let w = rt.worker();
    loop {
        let job = {
            let mut q = w.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(j) = q.jobs.pop_front() {
                    break Some(j);
                }
                if q.stop {
                    break None;
                }
                q = w.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let Some(job) = job else { break };
        let r = (job.run)();
        // SAFETY: a request counting an unfinished job stays live (release needs it
        // complete); nothing else writes its failure.
        let req = unsafe { job.req.get() };
        if let Err(e) = r {
            req.fail(e);
            request::note_failed(job.req);
        }
        req.completion().0.finish(1);
        w.done.fetch_add(1, Ordering::Release);
    }
    // SAFETY: resets this thread's context before `ctx` is destroyed.
    unsafe { super::set_runtime_ctx(None) };
    // SAFETY: made above by `create`, used by this thread only, destroyed once.
    if let Err(e) = unsafe { super::destroy(ctx) } {
        rt.fatal(&e);
    }
}
