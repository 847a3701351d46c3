//! Explicit non-blocking operations' request handles (seed 002's merged requests,
//! `shmemx_request_*`).
//!
//! A request counts the operations handed to the copy engine on its behalf (small ones
//! complete before the call returns and count nothing) and is bound to one engine lane,
//! its independent resource. Operations may keep joining a live request; merging links
//! requests into one whose completion is that of all of them. Merged requests are kept
//! flat (one list under the merged head), so testing and releasing never recurse.
//! `quiet` and `fence` ignore requests: only test and wait complete them.
//!
//! An operation that completes before its call returns (every small one) leaves no state
//! behind: its handle is the shared, always-complete [`done`] request, and only a
//! transfer handed to the copy engine takes a request object of its own. Those objects
//! are recycled through a small per-thread cache backed by a lock-free pool, so a thread
//! issuing requests takes no lock and shares no cache line with other threads.

use std::cell::RefCell;
use std::ptr::NonNull;

use rshmem_util::wait::Waiter;

use crate::conc::ArrayQueue;
use crate::engine::Completion;
use crate::error::{Error, Result};
use crate::runtime::{rt, Runtime};

/// Request objects kept for reuse per PE.
pub(crate) const POOL_SIZE: usize = 4096;
/// Request objects a thread keeps for itself before returning them to the pool.
#[cfg(not(loom))]
const CACHE_SIZE: usize = 64;
/// The loom model keeps one, so that releases reach the shared pool.
#[cfg(loom)]
const CACHE_SIZE: usize = 1;

/// Parameters of `request_alloc` (`shmemx_request_params_t`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct RequestParams {
    /// Hints (none defined yet; 0 = defaults).
    pub hints: i64,
}

/// The state behind a request handle.
#[derive(Debug)]
#[repr(align(128))]
pub struct Request {
    comp: Completion,
    lane: usize,
    /// Requests merged into this one (flat list through `next`).
    merged: Option<ReqHandle>,
    next: Option<ReqHandle>,
    /// Set once merged into another request (its handle is consumed).
    consumed: bool,
    /// Why an operation of it failed (a non-blocking collective run by the collective
    /// worker), reported by the test or wait that completes it.
    failed: std::sync::OnceLock<Error>,
}

/// The request of operations that completed before their call returned: complete
/// forever, never written, released by nobody.
struct Done(Request);

// SAFETY: never written (every path that writes a request skips it), so sharing it
// between threads is sharing an immutable value.
unsafe impl Sync for Done {}

static DONE: Done = Done(Request::empty());

/// The handle of the always-complete request (see the module notes).
#[inline(always)]
pub fn done() -> ReqHandle {
    ReqHandle(NonNull::from(&DONE.0))
}

/// A request handle (`shmemx_request_h`): a non-null pointer, so `Option<ReqHandle>` has
/// the C handle's layout, with `None` for `NULL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct ReqHandle(NonNull<Request>);

// SAFETY: a handle may be passed between threads (the C API allows it); its state is
// atomics, and the list links are touched only by the thread completing or merging it.
unsafe impl Send for ReqHandle {}

impl ReqHandle {
    /// The request.
    ///
    /// # Safety
    /// The handle is live (not released).
    #[inline(always)]
    pub(crate) unsafe fn get<'a>(self) -> &'a Request {
        // SAFETY: the caller's contract.
        unsafe { self.0.as_ref() }
    }

    /// # Safety
    /// As [`ReqHandle::get`], and no other reference to it is in use.
    #[inline(always)]
    unsafe fn get_mut<'a>(self) -> &'a mut Request {
        // SAFETY: the caller's contract.
        unsafe { &mut *self.0.as_ptr() }
    }
}

impl Request {
    /// Nothing issued, nothing merged.
    const fn empty() -> Request {
        Request {
            comp: Completion::new(),
            lane: 0,
            merged: None,
            next: None,
            consumed: false,
            failed: std::sync::OnceLock::new(),
        }
    }

    /// Where engine transfers of this request are counted.
    #[inline(always)]
    pub(crate) fn completion(&self) -> (&Completion, usize) {
        (&self.comp, self.lane)
    }

    /// Records why one of its operations failed (the first reason is kept); the failure
    /// is reported at finalize if no test or wait reports it first.
    pub(crate) fn fail(&self, e: Error) {
        if self.failed.set(e).is_ok() {
            unreported().push(NonNull::from(self).as_ptr() as usize);
        }
    }
}

/// Failed requests (addresses) not yet released by the test or wait that reports them.
fn unreported() -> std::sync::MutexGuard<'static, Vec<usize>> {
    static UNREPORTED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
    UNREPORTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The failure of a request that no test or wait has reported (an argument error of a
/// non-blocking collective never waited for), for finalize to report. Call once every
/// operation has completed.
pub(crate) fn unreported_failure() -> Option<Error> {
    let list = unreported();
    let first = *list.first()?;
    // SAFETY: listed requests are not released (release unlists them), so still live.
    unsafe { (*(first as *const Request)).failed.get().copied() }
}

/// The first failure recorded in a complete request or anything merged into it.
///
/// # Safety
/// `h` is live.
unsafe fn failure(h: ReqHandle) -> Option<Error> {
    let mut cur = Some(h);
    while let Some(c) = cur {
        // SAFETY: the caller's contract; merged requests live as long as their head.
        let r = unsafe { c.get() };
        if let Some(e) = r.failed.get() {
            return Some(*e);
        }
        cur = if c == h { r.merged } else { r.next };
    }
    None
}

/// Whether the request in `slot` (and everything merged into it) is complete, without
/// releasing it (an empty slot is complete).
///
/// # Safety
/// A handle in `slot` is live.
pub unsafe fn is_complete(slot: &Option<ReqHandle>) -> bool {
    // SAFETY: the caller's contract.
    slot.is_none_or(|h| unsafe { complete(h) })
}

/// A PE's recycled request objects (lock-free; a loom stand-in under `cfg(loom)`).
pub(crate) type Pool = ArrayQueue<Box<Request>>;

/// Recycled request objects.
pub(crate) fn new_pool() -> Pool {
    ArrayQueue::new(POOL_SIZE)
}

#[cfg(not(loom))]
thread_local! {
    /// The calling thread's recycled request objects (boxed: handles point into them).
    #[allow(clippy::vec_box)]
    static CACHE: RefCell<Vec<Box<Request>>> = const { RefCell::new(Vec::new()) };
}

#[cfg(loom)]
loom::thread_local! {
    /// As above, per modelled thread.
    #[allow(clippy::vec_box)]
    static CACHE: RefCell<Vec<Box<Request>>> = RefCell::new(Vec::new());
}

/// A recycled request object (this thread's, else the PE's `pool`), or a new one.
fn take(pool: &Pool) -> Box<Request> {
    CACHE
        .try_with(|c| c.borrow_mut().pop())
        .ok()
        .flatten()
        .or_else(|| pool.pop())
        .unwrap_or_else(|| Box::new(Request::empty()))
}

/// Keeps a released request object for reuse (this thread's cache, else the PE's pool;
/// beyond both it is freed).
fn give(pool: &Pool, b: Box<Request>) {
    let mut b = Some(b);
    let _ = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        if c.len() < CACHE_SIZE {
            if c.capacity() == 0 {
                c.reserve_exact(CACHE_SIZE);
            }
            c.extend(b.take());
        }
    });
    if let Some(b) = b {
        let _ = pool.push(b);
    }
}

fn alloc_in(rt: &Runtime) -> ReqHandle {
    alloc_from(&rt.requests, rt.fabric.engine.thread_lane())
}

/// A request object from `pool` (or the thread's cache), reset, bound to `lane`.
pub(crate) fn alloc_from(pool: &Pool, lane: usize) -> ReqHandle {
    let mut r = take(pool);
    r.comp.reset();
    r.lane = lane;
    r.merged = None;
    r.next = None;
    r.consumed = false;
    r.failed = std::sync::OnceLock::new();
    ReqHandle(NonNull::from(Box::leak(r)))
}

/// `shmemx_request_alloc`: a fresh, empty (complete) request. It is the shared
/// [`done`] request until an operation handed to the copy engine joins it.
pub fn alloc(params: RequestParams) -> Result<ReqHandle> {
    let _ = params;
    rt("shmemx_request_alloc")?;
    Ok(done())
}

/// The request in `slot`, for an operation handed to the copy engine: allocated when the
/// slot is empty (an operation given a `NULL` handle) or holds [`done`].
///
/// # Safety
/// A handle in `slot` is live.
#[inline]
pub(crate) unsafe fn ensure<'a>(rt: &Runtime, slot: &mut Option<ReqHandle>) -> &'a Request {
    let h = match *slot {
        Some(h) if h != done() => h,
        _ => *slot.insert(alloc_in(rt)),
    };
    // SAFETY: the caller's contract, or freshly allocated.
    unsafe { h.get() }
}

/// The request in `slot` for an operation that completes before its call returns: the
/// slot's live request if it has one, else [`done`] (nothing is allocated).
#[inline]
pub(crate) fn settle(slot: &mut Option<ReqHandle>) {
    slot.get_or_insert_with(done);
}

/// Whether the request and everything merged into it are complete.
///
/// # Safety
/// `h` is live.
unsafe fn complete(h: ReqHandle) -> bool {
    // SAFETY: the caller's contract; merged requests live as long as their head.
    let r = unsafe { h.get() };
    if !r.comp.is_complete() {
        return false;
    }
    let mut cur = r.merged;
    while let Some(c) = cur {
        // SAFETY: listed requests are live until their head is released.
        let cr = unsafe { c.get() };
        if !cr.comp.is_complete() {
            return false;
        }
        cur = cr.next;
    }
    true
}

/// Returns a complete request and everything merged into it to the pool.
///
/// # Safety
/// `h` is live and complete; the caller drops every copy of the handle.
pub(crate) unsafe fn release(pool: &Pool, h: ReqHandle) {
    if h == done() {
        return;
    }
    let mut cur = Some(h);
    while let Some(c) = cur {
        // SAFETY: live, complete, listed once; handed back exactly once.
        let b = unsafe { Box::from_raw(c.0.as_ptr()) };
        if b.failed.get().is_some() {
            // Reported by the test or wait releasing it.
            unreported().retain(|&p| p != c.0.as_ptr() as usize);
        }
        cur = if c == h { b.merged } else { b.next };
        give(pool, b);
    }
}

/// `shmemx_request_test`: whether the request's operations are complete; if so the
/// handle is released and `slot` set to `None`. An empty slot tests complete.
///
/// # Safety
/// A handle in `slot` is live and no other thread completes it concurrently.
pub unsafe fn test(slot: &mut Option<ReqHandle>) -> Result<bool> {
    let rt = rt("shmemx_request_test")?;
    let Some(h) = *slot else { return Ok(true) };
    // SAFETY: the caller's contract.
    if unsafe { complete(h) } {
        // SAFETY: live until released just below.
        let failed = unsafe { failure(h) };
        // SAFETY: complete, and the slot is the handle's only copy the caller keeps.
        unsafe { release(&rt.requests, h) };
        *slot = None;
        return failed.map_or(Ok(true), Err);
    }
    // SAFETY: live.
    if !rt.fabric.engine.help(unsafe { h.get() }.lane) {
        rt.fabric.progress();
    }
    Ok(false)
}

/// `shmemx_request_wait`: blocks the calling thread until the request completes, then
/// releases it and sets `slot` to `None`.
///
/// # Safety
/// As [`test`].
pub unsafe fn wait(slot: &mut Option<ReqHandle>) -> Result<()> {
    let rt = rt("shmemx_request_wait")?;
    let Some(h) = *slot else { return Ok(()) };
    let mut w = Waiter::new();
    // SAFETY: the caller's contract.
    let lane = unsafe { h.get() }.lane;
    // SAFETY: as above.
    while !unsafe { complete(h) } {
        if !rt.fabric.engine.help(lane) {
            // Network transfers complete in UCX callbacks, run by progress.
            rt.fabric.progress();
            w.snooze();
        }
    }
    // SAFETY: live until released just below.
    let failed = unsafe { failure(h) };
    // SAFETY: complete; the slot is emptied below.
    unsafe { release(&rt.requests, h) };
    *slot = None;
    failed.map_or(Ok(()), Err)
}

/// `shmemx_request_free`: releases a request. Operations still in flight are completed
/// first, so no transfer is ever left counting into a recycled object.
///
/// # Safety
/// As [`test`].
pub unsafe fn free(slot: &mut Option<ReqHandle>) -> Result<()> {
    rt("shmemx_request_free")?;
    // SAFETY: forwarded contract.
    unsafe { wait(slot) }
}

/// `shmemx_merge_request`, one input at a time: moves `from` (and everything merged into
/// it) into `into`, which becomes `from` when it holds no object of its own; `from` is
/// consumed (set to `None`).
///
/// # Safety
/// Handles in both slots are live, and no other thread uses them during the call.
pub unsafe fn merge(into: &mut Option<ReqHandle>, from: &mut Option<ReqHandle>) -> Result<()> {
    rt("shmemx_merge_request")?;
    // SAFETY: forwarded contract.
    unsafe { merge_lists(into, from) }
}

/// [`merge`] without the initialization check.
///
/// # Safety
/// As [`merge`].
unsafe fn merge_lists(into: &mut Option<ReqHandle>, from: &mut Option<ReqHandle>) -> Result<()> {
    let Some(f) = *from else { return Ok(()) };
    // A copy of a handle merged before would link the list into a cycle.
    // SAFETY: the caller's contract (a consumed request stays allocated until its head is
    // released).
    if unsafe { f.get() }.consumed {
        return Err(Error::InvalidArgument {
            routine: "shmemx_merge_request",
            arg: "requests",
            reason: "a request handle that was already merged (handles are consumed by a merge)",
        });
    }
    *from = None;
    if f == done() {
        // Nothing in flight: the merged request is `into` as it is.
        settle(into);
        return Ok(());
    }
    let head_h = match *into {
        // `into` holds no object of its own: `f` becomes the merged request.
        Some(h) if h != done() => h,
        _ => {
            *into = Some(f);
            return Ok(());
        }
    };
    if head_h == f {
        return Ok(());
    }
    // SAFETY: live, and used by this thread only for the call.
    let fr = unsafe { f.get_mut() };
    // Splice `f`'s own merged list after `f`, then `f` at the front of the head's list.
    let mut tail = f;
    let mut cur = fr.merged.take();
    let mut first = None;
    while let Some(c) = cur {
        first.get_or_insert(c);
        // SAFETY: listed under `f`, hence live.
        let cr = unsafe { c.get_mut() };
        cr.consumed = true;
        if cr.next.is_none() {
            tail = c;
        }
        cur = cr.next;
    }
    if let Some(fst) = first {
        fr.next = Some(fst);
    }
    fr.consumed = true;
    // SAFETY: `head` is live; the list links are ours during the call.
    let hm = unsafe { head_h.get_mut() };
    // SAFETY: `tail` is `f` or the last of its spliced list.
    unsafe { tail.get_mut() }.next = hm.merged;
    hm.merged = Some(f);
    Ok(())
}

/// Waits until every transfer handed to the copy engine before the call, by any context
/// or request of this PE, has completed (the exit of a scope that must not leave
/// transfers behind, even of requests it lost track of).
pub fn wait_all_issued() -> Result<()> {
    let rt = rt("shmemx_request_wait")?;
    // Non-blocking collectives too (`coll::nonblocking`).
    rt.nb.drain(rt);
    rt.fabric.drain("shmemx_request_wait")
}

/// An error for a routine given an invalid request pointer.
pub fn null_slot(routine: &'static str) -> Error {
    Error::InvalidArgument {
        routine,
        arg: "req",
        reason: "the request handle pointer is NULL",
    }
}

#[cfg(test)]
mod tests {
    //! The merge lists and the recycling of request objects, without a runtime (these
    //! run under Miri too: use after free, double release or a leaked object fail it).
    use super::*;

    fn issue(pool: &Pool, pending: u64) -> Option<ReqHandle> {
        let h = alloc_from(pool, 0);
        // SAFETY: just allocated.
        unsafe { h.get() }.comp.count_for_tests(pending, false);
        Some(h)
    }

    fn finish(h: ReqHandle, n: u64) {
        // SAFETY: live in every caller.
        unsafe { h.get() }.comp.count_for_tests(n, true);
    }

    /// Releases a complete request in `slot` as `test` does; returns whether it was.
    fn test_in(pool: &Pool, slot: &mut Option<ReqHandle>) -> bool {
        let Some(h) = *slot else { return true };
        // SAFETY: live (the slot holds the only copy).
        if !unsafe { complete(h) } {
            return false;
        }
        // SAFETY: complete; the slot is emptied.
        unsafe { release(pool, h) };
        *slot = None;
        true
    }

    #[test]
    fn merged_requests_complete_together_and_are_all_recycled() {
        let pool = new_pool();
        let (mut a, mut b, mut c, mut d) = (
            issue(&pool, 1),
            issue(&pool, 2),
            issue(&pool, 1),
            issue(&pool, 1),
        );
        let (hb, hc, hd) = (b.unwrap(), c.unwrap(), d.unwrap());
        // SAFETY: live handles, used by this thread only.
        unsafe {
            // c and d into b (b's own list), then b into a: one flat list under a.
            merge_lists(&mut b, &mut c).unwrap();
            merge_lists(&mut b, &mut d).unwrap();
            merge_lists(&mut a, &mut b).unwrap();
        }
        assert_eq!(
            (b, c, d),
            (None, None, None),
            "merged-in handles are consumed"
        );
        let ha = a.unwrap();
        finish(ha, 1);
        finish(hb, 2);
        finish(hd, 1);
        assert!(!test_in(&pool, &mut a), "c is still in flight");
        finish(hc, 1);
        assert!(test_in(&pool, &mut a));
        assert_eq!(a, None);
        // All four objects went back (to this thread's cache first): the next four
        // allocations reuse them, reset.
        let again: Vec<_> = (0..4).map(|_| alloc_from(&pool, 1)).collect();
        for h in &again {
            assert!([ha, hb, hc, hd].contains(h));
            // SAFETY: live.
            let r = unsafe { h.get() };
            assert!(r.comp.is_complete() && r.merged.is_none() && r.next.is_none());
        }
        for h in again {
            // SAFETY: complete, dropped here.
            unsafe { release(&pool, h) };
        }
    }

    #[test]
    fn merge_corner_cases() {
        let pool = new_pool();
        // Into an empty slot: the merged-in request becomes the head.
        let (mut into, mut from) = (None, issue(&pool, 0));
        let f = from.unwrap();
        // SAFETY: live handles, used by this thread only.
        unsafe { merge_lists(&mut into, &mut from).unwrap() };
        assert_eq!((into, from), (Some(f), None));
        // The always-complete request merged in: nothing changes.
        let mut done_slot = Some(done());
        // SAFETY: live handles, used by this thread only.
        unsafe { merge_lists(&mut into, &mut done_slot).unwrap() };
        assert_eq!((into, done_slot), (Some(f), None));
        // A copy of a handle that was merged before is refused (it would make a cycle).
        let mut other = issue(&pool, 0);
        let copy = other;
        // SAFETY: live handles, used by this thread only.
        unsafe { merge_lists(&mut into, &mut other).unwrap() };
        let mut stale = copy;
        // SAFETY: live handles, used by this thread only.
        let err = unsafe { merge_lists(&mut into, &mut stale) }.unwrap_err();
        assert!(err.to_string().contains("already merged"), "{err}");
        // Merging a request into itself leaves it as it was.
        let mut same = into;
        // SAFETY: live handles, used by this thread only.
        unsafe { merge_lists(&mut into, &mut same).unwrap() };
        assert!(test_in(&pool, &mut into));
    }
}
