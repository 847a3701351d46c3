//! Non-blocking collectives (seed 004): every collective, on a team or an active set, as
//! an operation whose completion joins an explicit request (test, wait, merge with RMA
//! requests).
//!
//! A PE's non-blocking collectives are run, in the order they were issued, by one thread
//! of its own (the collective worker), with the same algorithms as the blocking calls.
//! Members issue them in the same order, so they run in the same order everywhere, and
//! several may be in flight on one team; they progress while the caller computes, and
//! complete in any order the caller likes to test or wait for them. A blocking
//! collective waits for the worker's queue to drain first, so it runs after every
//! earlier non-blocking one on every member alike. The worker moves data on a private
//! context of its own (`ctx::runtime_ctx`), so it never shares the default context with the
//! program's threads; it sleeps on a condition variable while it has nothing to do.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rshmem_util::Waiter;

use super::{Elem, ReduceOp};
use crate::ctx::request::{self, ReqHandle};
use crate::error::Result;
use crate::runtime::{rt, Runtime};
use crate::team::Team;

/// Whether this is the collective worker's thread (the one thread with a context of its
/// own for the runtime's traffic).
fn in_worker() -> bool {
    crate::ctx::has_own_runtime_ctx()
}

type Run = Box<dyn FnOnce() -> Result<()> + Send>;

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

    fn submit(&self, run: Run, req: ReqHandle) {
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
    let ctx = match crate::ctx::create(crate::ctx::PRIVATE) {
        Ok(c) => c,
        Err(e) => rt.fatal(&e),
    };
    // SAFETY: `ctx` lives until this thread destroys it below, after resetting this.
    unsafe { crate::ctx::set_runtime_ctx(Some(ctx)) };
    let w = &rt.nb;
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
    unsafe { crate::ctx::set_runtime_ctx(None) };
    // SAFETY: made above by `create`, used by this thread only, destroyed once.
    if let Err(e) = unsafe { crate::ctx::destroy(ctx) } {
        rt.fatal(&e);
    }
}

/// Raw pointers a job carries to the worker thread.
#[derive(Clone, Copy)]
struct Ptr(usize);

impl Ptr {
    fn of<T>(p: *const T) -> Ptr {
        Ptr(p as usize)
    }

    fn get<T>(self) -> *mut T {
        self.0 as *mut T
    }
}

/// Issues `run` (a collective) to this PE's worker; its completion joins the request in
/// `slot` (allocated if empty).
///
/// # Safety
/// A handle in `slot` is live; whatever `run` touches stays valid and untouched by the
/// caller until the request completes.
unsafe fn issue(
    routine: &'static str,
    slot: &mut Option<ReqHandle>,
    run: impl FnOnce() -> Result<()> + Send + 'static,
) -> Result<()> {
    let rt = rt(routine)?;
    request::check_slot(routine, slot)?;
    // SAFETY: checked just above.
    let req = unsafe { request::ensure(rt, slot) };
    req.completion().0.issue(1);
    let h = slot.expect("ensure filled the slot");
    rt.nb.submit(Box::new(run), h);
    Ok(())
}

/// Non-blocking [`super::broadcast`].
///
/// # Safety
/// As [`super::broadcast`], until the request completes; a handle in `slot` is live.
#[allow(clippy::too_many_arguments)]
pub unsafe fn broadcast(
    routine: &'static str,
    team: &Arc<Team>,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: i64,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    let (t, d, s) = (team.clone(), Ptr::of(dest), Ptr::of(src));
    // SAFETY: forwarded contract.
    unsafe {
        issue(routine, slot, move || {
            super::broadcast(routine, &t, d.get(), s.get(), nbytes, root)
        })
    }
}

/// Non-blocking [`super::reduce`].
///
/// # Safety
/// As [`super::reduce`], until the request completes; a handle in `slot` is live.
pub unsafe fn reduce<T: Elem>(
    routine: &'static str,
    team: &Arc<Team>,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    let (t, d, s) = (team.clone(), Ptr::of(dest), Ptr::of(src));
    // SAFETY: forwarded contract.
    unsafe {
        issue(routine, slot, move || {
            super::reduce::<T>(routine, &t, d.get(), s.get(), n, op)
        })
    }
}

/// Non-blocking [`super::fcollect`].
///
/// # Safety
/// As [`super::fcollect`], until the request completes; a handle in `slot` is live.
pub unsafe fn fcollect(
    routine: &'static str,
    team: &Arc<Team>,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    let (t, d, s) = (team.clone(), Ptr::of(dest), Ptr::of(src));
    // SAFETY: forwarded contract.
    unsafe {
        issue(routine, slot, move || {
            super::fcollect(routine, &t, d.get(), s.get(), nbytes)
        })
    }
}

/// Non-blocking [`super::collect`].
///
/// # Safety
/// As [`super::collect`], until the request completes; a handle in `slot` is live.
#[allow(clippy::too_many_arguments)]
pub unsafe fn collect(
    routine: &'static str,
    team: &Arc<Team>,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    dest_cap: usize,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    let (t, d, s) = (team.clone(), Ptr::of(dest), Ptr::of(src));
    // SAFETY: forwarded contract.
    unsafe {
        issue(routine, slot, move || {
            super::collect(routine, &t, d.get(), s.get(), nbytes, dest_cap)
        })
    }
}

/// Non-blocking [`super::alltoall`].
///
/// # Safety
/// As [`super::alltoall`], until the request completes; a handle in `slot` is live.
pub unsafe fn alltoall(
    routine: &'static str,
    team: &Arc<Team>,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    let (t, d, s) = (team.clone(), Ptr::of(dest), Ptr::of(src));
    // SAFETY: forwarded contract.
    unsafe {
        issue(routine, slot, move || {
            super::alltoall(routine, &t, d.get(), s.get(), nbytes)
        })
    }
}

/// Non-blocking [`super::alltoalls`].
///
/// # Safety
/// As [`super::alltoalls`], until the request completes; a handle in `slot` is live.
#[allow(clippy::too_many_arguments)]
pub unsafe fn alltoalls(
    routine: &'static str,
    team: &Arc<Team>,
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    let (t, d, s) = (team.clone(), Ptr::of(dest), Ptr::of(src));
    // SAFETY: forwarded contract.
    unsafe {
        issue(routine, slot, move || {
            super::alltoalls(routine, &t, d.get(), s.get(), dst, sst, nelems, size)
        })
    }
}

/// Non-blocking team sync (`barrier`: with a quiet of the default context first, taken
/// when the call is made, so the operations it covers are those issued before it).
///
/// # Safety
/// A handle in `slot` is live.
pub unsafe fn sync(
    routine: &'static str,
    team: &Arc<Team>,
    barrier: bool,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    if barrier {
        crate::order::quiet()?;
    }
    let t = team.clone();
    // SAFETY: forwarded contract; the job touches no caller memory.
    unsafe { issue(routine, slot, move || crate::team::sync_in(routine, &t)) }
}
