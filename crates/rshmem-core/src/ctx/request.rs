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
//!
//! A handle is never a pointer: it is a tagged slot index and generation in the process's
//! table of request objects (as team and context handles are checked), so every routine
//! taking a handle from the user tells a live request from a copy of one already
//! released, one merged away, or garbage, and fails naming the argument.

use std::cell::RefCell;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

use rshmem_util::wait::Waiter;

use crate::conc::ArrayQueue;
use crate::engine::Completion;
use crate::error::{At, Error, Result};
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
    /// The slot's generation: odd while a handle to it is live, raised on allocation and
    /// on release (std atomics even under loom: the table outlives loom's executions).
    gen: AtomicU32,
}

/// The request of operations that completed before their call returned: complete
/// forever, never written, released by nobody.
struct Done(Request);

// SAFETY: never written (every path that writes a request skips it), so sharing it
// between threads is sharing an immutable value.
unsafe impl Sync for Done {}

static DONE: Done = Done(Request::empty());

/// The tag in a handle's top 16 bits (a non-canonical address: no pointer looks like it).
const TAG: u64 = 0x5251;
/// Bits of a handle's slot index and generation.
const IDX_BITS: u32 = 24;
const GEN_MASK: u32 = (1 << 24) - 1;
/// Request objects per chunk of the table, and chunks (2^24 slots in all).
const CHUNK: usize = 1024;
const CHUNKS: usize = (1 << IDX_BITS) / CHUNK;

/// The process's request objects, by slot index (0 is [`DONE`]): chunks allocated as
/// slots are first needed, never freed, so a slot index always names the same memory.
struct Table {
    chunks: [AtomicPtr<Request>; CHUNKS],
    /// Slots handed out so far (the next new one).
    next: AtomicUsize,
    /// Serializes growth (rare: once per [`CHUNK`] new slots).
    grow: Mutex<()>,
    /// Free slots beyond what the pools hold.
    spare: Mutex<Vec<u32>>,
}

static TABLE: Table = Table {
    chunks: [const { AtomicPtr::new(std::ptr::null_mut()) }; CHUNKS],
    next: AtomicUsize::new(1),
    grow: Mutex::new(()),
    spare: Mutex::new(Vec::new()),
};

/// The handle of the always-complete request (see the module notes).
#[inline(always)]
pub fn done() -> ReqHandle {
    ReqHandle(DONE_H)
}

const DONE_H: NonZeroU64 = match NonZeroU64::new(TAG << 48) {
    Some(h) => h,
    None => unreachable!(),
};

/// A request handle (`shmemx_request_h`): a tagged slot index and generation, never zero,
/// so `Option<ReqHandle>` has the C handle's layout, with `None` for `NULL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct ReqHandle(NonZeroU64);

impl ReqHandle {
    fn new(idx: usize, gen: u32) -> ReqHandle {
        let v = TAG << 48 | u64::from(gen & GEN_MASK) << IDX_BITS | idx as u64;
        ReqHandle(NonZeroU64::new(v).expect("tagged"))
    }

    #[inline(always)]
    fn idx(self) -> usize {
        (self.0.get() & ((1 << IDX_BITS) - 1)) as usize
    }

    /// The object of slot `idx`, if its chunk exists.
    #[inline(always)]
    fn slot_ptr(idx: usize) -> Option<*mut Request> {
        if idx == 0 {
            return Some(std::ptr::from_ref(&DONE.0).cast_mut());
        }
        let c = TABLE.chunks.get(idx / CHUNK)?.load(Ordering::Acquire);
        // SAFETY: a chunk holds CHUNK objects.
        (!c.is_null()).then(|| unsafe { c.add(idx % CHUNK) })
    }

    /// The request.
    ///
    /// # Safety
    /// The handle is live (not released).
    #[inline(always)]
    pub(crate) unsafe fn get<'a>(self) -> &'a Request {
        // SAFETY: the caller's contract: a live handle's slot exists and is initialized.
        unsafe { &*Self::slot_ptr(self.idx()).unwrap_unchecked() }
    }

    /// # Safety
    /// As [`ReqHandle::get`], and no other reference to it is in use.
    #[inline(always)]
    unsafe fn get_mut<'a>(self) -> &'a mut Request {
        // SAFETY: the caller's contract.
        unsafe { &mut *Self::slot_ptr(self.idx()).unwrap_unchecked() }
    }

    /// Checks a handle a user passed to `routine` (as argument `arg`): the always-complete
    /// request, or a live one not merged into another.
    #[inline(always)]
    pub(crate) fn check(self, routine: &'static str, arg: &'static str) -> Result<ReqHandle> {
        if self == done() {
            return Ok(self);
        }
        self.check_object(routine, arg)
    }

    /// [`ReqHandle::check`] of a handle other than [`done`].
    #[inline(never)]
    fn check_object(self, routine: &'static str, arg: &'static str) -> Result<ReqHandle> {
        let bad = |reason| {
            Err(Error::InvalidArgument {
                routine,
                arg,
                reason,
            })
        };
        let v = self.0.get();
        let idx = self.idx();
        if v >> 48 != TAG || idx == 0 || idx >= TABLE.next.load(Ordering::Acquire) {
            return bad("is not a request handle (not NULL and not a handle an _nbe routine or shmemx_request_alloc returned)");
        }
        let Some(p) = Self::slot_ptr(idx) else {
            return bad("is not a request handle");
        };
        // SAFETY: slots below `next` are initialized (growth publishes `next` after).
        let r = unsafe { &*p };
        let gen = r.gen.load(Ordering::Acquire);
        if gen & 1 == 0 || gen & GEN_MASK != (v >> IDX_BITS) as u32 & GEN_MASK {
            return bad("was already completed and released (a copy of a handle that a test, wait or free emptied)");
        }
        if r.consumed {
            return bad("was merged into another request (handles are consumed by a merge)");
        }
        Ok(self)
    }

    /// The handle's value (the unreported-failure list keys on it).
    fn raw(self) -> u64 {
        self.0.get()
    }
}

/// Checks the handle in `slot`, if any (see [`ReqHandle::check`]): on the issue path,
/// a compare for an empty slot or the always-complete request.
#[inline(always)]
pub(crate) fn check_slot(routine: &'static str, slot: &Option<ReqHandle>) -> Result<()> {
    match *slot {
        Some(h) if h != done() => h.check_object(routine, "req").map(drop),
        _ => Ok(()),
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
            gen: AtomicU32::new(0),
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
        let _ = self.failed.set(e);
    }
}

/// Records that the request of `h` failed (after [`Request::fail`]): reported at
/// finalize unless a test or wait reports it first.
pub(crate) fn note_failed(h: ReqHandle) {
    unreported().push(h);
}

/// Failed requests not yet released by the test or wait that reports them.
fn unreported() -> std::sync::MutexGuard<'static, Vec<ReqHandle>> {
    static UNREPORTED: Mutex<Vec<ReqHandle>> = Mutex::new(Vec::new());
    UNREPORTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The failure of a request that no test or wait has reported (an argument error of a
/// non-blocking collective never waited for), for finalize to report. Call once every
/// operation has completed.
pub(crate) fn unreported_failure() -> Option<Error> {
    let first = *unreported().first()?;
    // SAFETY: listed requests are not released (release unlists them), so still live.
    unsafe { first.get() }.failed.get().copied()
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

/// A PE's free request slots (lock-free; a loom stand-in under `cfg(loom)`).
pub(crate) type Pool = ArrayQueue<u32>;

/// Recycled request objects.
pub(crate) fn new_pool() -> Pool {
    ArrayQueue::new(POOL_SIZE)
}

#[cfg(not(loom))]
thread_local! {
    /// The calling thread's free request slots.
    static CACHE: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

#[cfg(loom)]
loom::thread_local! {
    /// As above, per modelled thread.
    static CACHE: RefCell<Vec<u32>> = RefCell::new(Vec::new());
}

/// A free request slot (this thread's, else the PE's `pool`, else a spare one), or a
/// new one.
fn take(pool: &Pool) -> usize {
    CACHE
        .try_with(|c| c.borrow_mut().pop())
        .ok()
        .flatten()
        .or_else(|| pool.pop())
        .map_or_else(take_cold, |i| i as usize)
}

/// A spare slot, or a new one (its chunk allocated when it is the chunk's first).
#[cold]
fn take_cold() -> usize {
    let spare = TABLE.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
    if let Some(i) = spare {
        return i as usize;
    }
    let _g = TABLE.grow.lock().unwrap_or_else(|e| e.into_inner());
    let idx = TABLE.next.load(Ordering::Relaxed);
    let Some(chunk) = TABLE.chunks.get(idx / CHUNK) else {
        crate::runtime::fatal(&"rshmemx requests: more than 16 million requests live at once");
    };
    if chunk.load(Ordering::Relaxed).is_null() {
        let objs: Box<[Request]> = (0..CHUNK).map(|_| Request::empty()).collect();
        chunk.store(Box::leak(objs).as_mut_ptr(), Ordering::Release);
    }
    // SAFETY: the chunk exists; the slot is new, so nobody else refers to it. Under loom
    // the object is made afresh, its atomics belonging to the current execution.
    #[cfg(loom)]
    unsafe {
        let p = ReqHandle::slot_ptr(idx).expect("chunk");
        let gen = (*p).gen.load(Ordering::Relaxed);
        p.write(Request::empty());
        (*p).gen.store(gen, Ordering::Relaxed);
    }
    TABLE.next.store(idx + 1, Ordering::Release);
    idx
}

/// Keeps a released request slot for reuse (this thread's cache, else the PE's pool,
/// else the table's spares).
fn give(pool: &Pool, idx: usize) {
    let idx = idx as u32;
    let mut i = Some(idx);
    let _ = CACHE.try_with(|c| {
        let mut c = c.borrow_mut();
        if c.len() < CACHE_SIZE {
            if c.capacity() == 0 {
                c.reserve_exact(CACHE_SIZE);
            }
            c.extend(i.take());
        }
    });
    if let Some(i) = i {
        if pool.push(i).is_err() {
            give_spare(idx);
        }
    }
}

#[cold]
fn give_spare(idx: u32) {
    TABLE
        .spare
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(idx);
}

fn alloc_in(rt: &Runtime) -> ReqHandle {
    alloc_from(rt.requests(), rt.fabric.engine.thread_lane())
}

/// A request object from `pool` (or the thread's cache), reset, bound to `lane`.
pub(crate) fn alloc_from(pool: &Pool, lane: usize) -> ReqHandle {
    let idx = take(pool);
    // SAFETY: a free slot is this thread's alone until its handle is returned.
    let r = unsafe { &mut *ReqHandle::slot_ptr(idx).expect("a taken slot exists") };
    r.comp.reset();
    r.lane = lane;
    r.merged = None;
    r.next = None;
    r.consumed = false;
    r.failed = std::sync::OnceLock::new();
    let gen = r.gen.load(Ordering::Relaxed).wrapping_add(1);
    r.gen.store(gen, Ordering::Release);
    ReqHandle::new(idx, gen)
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
/// A handle in `slot` is live ([`check_slot`] said so).
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
        let r = unsafe { c.get() };
        if r.failed.get().is_some() {
            // Reported by the test or wait releasing it.
            unreported().retain(|&p| p.raw() != c.raw());
        }
        cur = if c == h { r.merged } else { r.next };
        // Every copy of the handle is stale from here on.
        r.gen.store(
            r.gen.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Release,
        );
        give(pool, c.idx());
    }
}

/// `shmemx_request_test`: whether the request's operations are complete; if so the
/// handle is released and `slot` set to `None`. An empty slot tests complete.
///
/// # Safety
/// A handle in `slot` is live and no other thread completes it concurrently.
pub unsafe fn test(slot: &mut Option<ReqHandle>) -> Result<bool> {
    const R: &str = "shmemx_request_test";
    let rt = rt(R)?;
    let Some(h) = *slot else { return Ok(true) };
    h.check(R, "req")?;
    // SAFETY: the caller's contract.
    if unsafe { complete(h) } {
        // SAFETY: live until released just below.
        let failed = unsafe { failure(h) };
        // SAFETY: complete, and the slot is the handle's only copy the caller keeps.
        unsafe { release(rt.requests(), h) };
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
    // SAFETY: forwarded contract.
    unsafe { wait_in("shmemx_request_wait", slot) }
}

/// [`wait`] as `routine`.
///
/// # Safety
/// As [`test`].
unsafe fn wait_in(routine: &'static str, slot: &mut Option<ReqHandle>) -> Result<()> {
    let rt = rt(routine)?;
    let Some(h) = *slot else { return Ok(()) };
    h.check(routine, "req")?;
    let mut w = Waiter::new();
    let mut net = rt.fabric.net_wait_for_own();
    // SAFETY: the caller's contract.
    let lane = unsafe { h.get() }.lane;
    // SAFETY: as above.
    while !unsafe { complete(h) } {
        if !rt.fabric.engine.help(lane) {
            // Network transfers complete in UCX callbacks, run by progress.
            net.pause(&mut w);
        }
    }
    // SAFETY: live until released just below.
    let failed = unsafe { failure(h) };
    // SAFETY: complete; the slot is emptied below.
    unsafe { release(rt.requests(), h) };
    *slot = None;
    failed.map_or(Ok(()), Err)
}

/// `shmemx_request_free`: releases a request. Operations still in flight are completed
/// first, so no transfer is ever left counting into a recycled object.
///
/// # Safety
/// As [`test`].
pub unsafe fn free(slot: &mut Option<ReqHandle>) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { wait_in("shmemx_request_free", slot) }
}

/// `shmemx_merge_request`, one input at a time: moves `from` (and everything merged into
/// it) into `into`, which becomes `from` when it holds no object of its own; `from` is
/// consumed (set to `None`).
///
/// # Safety
/// Handles in both slots are live, and no other thread uses them during the call.
pub unsafe fn merge(into: &mut Option<ReqHandle>, from: &mut Option<ReqHandle>) -> Result<()> {
    const R: &str = "shmemx_merge_request";
    rt(R)?;
    if let Some(h) = *into {
        h.check(R, "merged")?;
    }
    if let Some(h) = *from {
        h.check(R, "requests")?;
    }
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
    rt.worker().drain(rt);
    rt.fabric.drain().at("shmemx_request_wait")
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
            // The same slots, under new generations: the old handles are stale.
            assert!([ha, hb, hc, hd].iter().any(|o| o.idx() == h.idx()));
            assert!(![ha, hb, hc, hd].contains(h));
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
    fn stale_and_garbage_handles_are_refused() {
        let pool = new_pool();
        let h = alloc_from(&pool, 0);
        assert!(h.check("r", "req").is_ok());
        assert!(done().check("r", "req").is_ok());
        // SAFETY: complete (nothing issued); `h` is used below only to be checked.
        unsafe { release(&pool, h) };
        let e = h.check("r", "req").unwrap_err().to_string();
        assert!(e.contains("r: argument req: was already completed"), "{e}");
        let again = alloc_from(&pool, 0);
        assert_eq!(again.idx(), h.idx(), "the slot is reused");
        assert!(
            h.check("r", "req").is_err(),
            "a copy of the old handle stays stale"
        );
        for v in [0x1234u64, 1, u64::MAX, (TAG << 48) | ((1 << IDX_BITS) - 1)] {
            let g = ReqHandle(NonZeroU64::new(v).unwrap());
            let e = g.check("r", "req").unwrap_err().to_string();
            assert!(e.contains("is not a request handle"), "{v:#x}: {e}");
        }
        // SAFETY: complete.
        unsafe { release(&pool, again) };
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
