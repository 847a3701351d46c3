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

use std::sync::Arc;

use super::{Elem, ReduceOp};
use crate::ctx::request::{self, ReqHandle};
use crate::error::Result;
use crate::runtime::rt;
use crate::team::Team;

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
    rt.worker().submit(Box::new(run), h);
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
