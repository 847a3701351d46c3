//! Explicit non-blocking operations (`_nbe`): the scope's drain, requests and their
//! outputs.

use std::cell::{RefCell, UnsafeCell};
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of, size_of_val};
use std::ptr::NonNull;

use rshmem_core::request::{self, ReqHandle};
use rshmem_core::{amo, rma, AmoOp};

use super::{bounds, pe_arg, RawCtx, Region};
use crate::atomic::AmoExtended;
use crate::error::Result;
use crate::remote::Remote;
use crate::shmem::ok;

/// Proof that every transfer issued before `'env` ends is complete by then: only
/// [`with_drain`] makes one, and it never escapes the closure. On exit (also on unwind)
/// it waits for every transfer handed to the copy engine, which covers requests that
/// were forgotten instead of waited for. It also owns the slots fetching operations
/// write into, freed only after that wait.
#[derive(Debug)]
pub(crate) struct Drain<'env> {
    slots: FetchSlots,
    _env: PhantomData<&'env mut &'env ()>,
}

impl Drop for Drain<'_> {
    fn drop(&mut self) {
        // Cannot fail while a guard is live.
        let _ = request::wait_all_issued();
    }
}

/// Runs `f` with a [`Drain`] token and drains when `f` returns or unwinds.
pub(crate) fn with_drain<'env, R>(f: impl for<'d> FnOnce(&'d Drain<'env>) -> R) -> R {
    let d = Drain {
        slots: FetchSlots::default(),
        _env: PhantomData,
    };
    f(&d)
}

/// Words that fetching `_nbe` atomics write their old values into: stable addresses
/// (chunks that never move), recycled once the value has been read.
#[derive(Debug, Default)]
struct FetchSlots {
    chunks: RefCell<Vec<Box<[UnsafeCell<u64>]>>>,
    free: RefCell<Vec<NonNull<u64>>>,
}

const SLOTS_PER_CHUNK: usize = 32;

impl FetchSlots {
    fn take(&self) -> NonNull<u64> {
        let mut free = self.free.borrow_mut();
        if let Some(p) = free.pop() {
            return p;
        }
        let chunk: Box<[UnsafeCell<u64>]> =
            (0..SLOTS_PER_CHUNK).map(|_| UnsafeCell::new(0)).collect();
        free.extend(chunk[1..].iter().map(|c| NonNull::from(c).cast::<u64>()));
        let first = NonNull::from(&chunk[0]).cast::<u64>();
        self.chunks.borrow_mut().push(chunk);
        first
    }

    fn give(&self, p: NonNull<u64>) {
        self.free.borrow_mut().push(p);
    }
}

/// The fetched value of an `_nbe` atomic, available once its request completes: the
/// output of a fetching request (see [`Request`](crate::Request)), read by `wait`.
pub struct Fetch<'sc, T> {
    slots: &'sc FetchSlots,
    slot: NonNull<u64>,
    _t: PhantomData<T>,
}

impl<T> fmt::Debug for Fetch<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fetch").field("slot", &self.slot).finish()
    }
}

mod sealed {
    /// Only this crate implements [`ReqOutput`](super::ReqOutput).
    #[allow(unreachable_pub)]
    pub trait Sealed {}
    /// A capability only this crate can make: outputs are produced only after completion.
    #[allow(unreachable_pub, missing_debug_implementations)]
    pub struct Token(pub(super) ());
}

/// What completing a [`Request`](crate::Request) hands back: nothing for puts
/// (`()`), the filled destination for gets (`&mut [T]`), the old value for fetching
/// atomics ([`Fetch`]), and pairs of these for merged requests.
pub trait ReqOutput: sealed::Sealed {
    /// The value `wait` returns.
    type Value;
    /// Produces the value; called only once the request is complete.
    #[doc(hidden)]
    fn finish(self, token: sealed::Token) -> Self::Value;
}

impl sealed::Sealed for () {}
impl ReqOutput for () {
    type Value = ();
    fn finish(self, _: sealed::Token) {}
}

impl<T> sealed::Sealed for &mut [T] {}
impl<'a, T> ReqOutput for &'a mut [T] {
    type Value = &'a mut [T];
    fn finish(self, _: sealed::Token) -> &'a mut [T] {
        self
    }
}

impl<T> sealed::Sealed for Fetch<'_, T> {}
impl<T: AmoExtended> ReqOutput for Fetch<'_, T> {
    type Value = T;
    fn finish(self, _: sealed::Token) -> T {
        // SAFETY: the request is complete (only `Req` calls `finish`, after completion),
        // so the atomic wrote a whole `T` into the slot, which fits and is aligned for it
        // (checked when the slot was taken); any bytes form a valid `T` (`Remote`).
        let v = unsafe { self.slot.cast::<T>().as_ptr().read() };
        self.slots.give(self.slot);
        v
    }
}

impl<A: ReqOutput, B: ReqOutput> sealed::Sealed for (A, B) {}
impl<A: ReqOutput, B: ReqOutput> ReqOutput for (A, B) {
    type Value = (A::Value, B::Value);
    fn finish(self, _: sealed::Token) -> Self::Value {
        (
            self.0.finish(sealed::Token(())),
            self.1.finish(sealed::Token(())),
        )
    }
}

/// A request and what its completion hands back.
///
/// Invariant: `out` is produced ([`ReqOutput::finish`]) only once `slot` is complete,
/// and the buffers `out` borrows are untouched until then; every operation counted in
/// `slot` wrote only into buffers borrowed by `out` or by a request merged into this one
/// with [`Req::absorb`] (whose buffers stay borrowed until the scope's drain).
#[derive(Debug)]
pub(crate) struct Req<O: ReqOutput> {
    slot: Option<ReqHandle>,
    /// `None` only while being taken apart.
    out: Option<O>,
}

impl<O: ReqOutput> Req<O> {
    fn new(slot: Option<ReqHandle>, out: O) -> Self {
        Req {
            slot,
            out: Some(out),
        }
    }

    /// Whether everything counted in the request is complete; a complete request is
    /// released (and the next operation joining it allocates a fresh one).
    pub(crate) fn test(&mut self) -> bool {
        // SAFETY: the handle is owned by this value alone (handles never leave a `Req`
        // except into the runtime's test/wait/free/merge), and `&mut self` excludes
        // concurrent use.
        ok(unsafe { request::test(&mut self.slot) })
    }

    /// [`Req::test`] reporting a failed operation (a non-blocking collective's).
    pub(crate) fn try_test(&mut self) -> Result<bool> {
        // SAFETY: as in `test`.
        Ok(unsafe { request::test(&mut self.slot)? })
    }

    /// [`Req::complete`] reporting a failed operation (a non-blocking collective's).
    pub(crate) fn try_complete(&mut self) -> Result<()> {
        // SAFETY: as in `test`.
        unsafe { request::wait(&mut self.slot)? };
        Ok(())
    }

    /// The runtime's request slot, for an operation joining this request.
    pub(crate) fn slot(&mut self) -> &mut Option<ReqHandle> {
        &mut self.slot
    }

    /// Waits until the request is complete, then releases it.
    pub(crate) fn complete(&mut self) {
        // SAFETY: as in `test`.
        ok(unsafe { request::wait(&mut self.slot) })
    }

    /// Waits, then hands the output back.
    pub(crate) fn wait(mut self) -> O::Value {
        self.complete();
        let out = self.out.take().expect("output present until taken");
        out.finish(sealed::Token(()))
    }

    /// One request completing when both do, handing both outputs back.
    pub(crate) fn merge<P: ReqOutput>(mut self, mut other: Req<P>) -> Req<(O, P)> {
        let slot = merge_slots(self.slot.take(), other.slot.take());
        let a = self.out.take().expect("output present until taken");
        let b = other.out.take().expect("output present until taken");
        Req::new(slot, (a, b))
    }

    /// Merges `other` in; its output is dropped without being produced, and its buffers
    /// stay borrowed until the scope's drain.
    pub(crate) fn absorb<P: ReqOutput>(&mut self, mut other: Req<P>) {
        self.slot = merge_slots(self.slot.take(), other.slot.take());
        // Never produced: a fetch slot is then reclaimed with the scope's drain.
        std::mem::forget(other.out.take());
    }
}

fn merge_slots(into: Option<ReqHandle>, from: Option<ReqHandle>) -> Option<ReqHandle> {
    match (into, from) {
        (None, f) => f,
        (i, None) => i,
        (mut i, mut f) => {
            // SAFETY: both handles are owned by the `Req`s they were taken from (see
            // `test`), live, and used by this thread only.
            ok(unsafe { request::merge(&mut i, &mut f) });
            i
        }
    }
}

impl<O: ReqOutput> Drop for Req<O> {
    fn drop(&mut self) {
        if self.slot.is_some() {
            // SAFETY: as in `test`. `free` waits for completion before releasing.
            let _ = unsafe { request::free(&mut self.slot) };
        }
        if let Some(out) = self.out.take() {
            // Complete now: produce and drop the output (a fetch slot is recycled).
            drop(out.finish(sealed::Token(())));
        }
    }
}

/// An empty (complete) request.
pub(crate) fn req_empty() -> Req<()> {
    Req::new(None, ())
}

/// Explicit non-blocking put into `req`; `src` stays borrowed until the scope's drain.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_nbe<'env, T: Remote, O: ReqOutput>(
    _d: &Drain<'env>,
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &'env [T],
    pe: usize,
    req: &mut Req<O>,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    // SAFETY: `src` is borrowed for `'env`, past the drain that completes every transfer
    // (the `Drain` token); the destination range was checked; the handle in the slot is
    // owned by `req` (see `Req::test`).
    unsafe {
        rma::put_nbe(
            ctx.get(),
            routine,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            pe_arg(pe),
            &mut req.slot,
        )?
    };
    Ok(())
}

/// Explicit non-blocking get into `dst`, joining `req` (whose output then does not hand
/// `dst` back: it stays borrowed until the scope's drain).
#[allow(clippy::too_many_arguments)]
fn get_nbe_in<'env, T: Remote, O: ReqOutput>(
    _d: &Drain<'env>,
    ctx: &RawCtx,
    routine: &'static str,
    dst: &'env mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
    req: &mut Req<O>,
) -> Result<&'env mut [T]> {
    bounds(routine, "source", src.len, start, dst.len())?;
    // SAFETY: `dst` is exclusively borrowed for `'env`, past the drain; callers hand it
    // back only as the output of the request the get is counted in (produced after its
    // completion) or never; the source range was checked; the handle is owned by `req`.
    unsafe {
        rma::get_nbe(
            ctx.get(),
            routine,
            dst.as_mut_ptr().cast(),
            src.at(start).cast(),
            size_of_val(dst),
            pe_arg(pe),
            &mut req.slot,
        )?
    };
    Ok(dst)
}

/// Explicit non-blocking get into `dst`: a new request that hands `dst` back.
pub(crate) fn get_nbe<'env, T: Remote>(
    d: &Drain<'env>,
    ctx: &RawCtx,
    routine: &'static str,
    dst: &'env mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
) -> Result<Req<&'env mut [T]>> {
    let mut req = req_empty();
    let dst = get_nbe_in(d, ctx, routine, dst, src, start, pe, &mut req)?;
    let slot = req.slot.take();
    Ok(Req::new(slot, dst))
}

/// Explicit non-blocking get into `dst`, joining `req`; `dst` stays borrowed until the
/// scope's drain.
#[allow(clippy::too_many_arguments)]
pub(crate) fn get_nbe_join<'env, T: Remote, O: ReqOutput>(
    d: &Drain<'env>,
    ctx: &RawCtx,
    routine: &'static str,
    dst: &'env mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
    req: &mut Req<O>,
) -> Result<()> {
    get_nbe_in(d, ctx, routine, dst, src, start, pe, req).map(drop)
}

/// Explicit non-blocking fetching atomic: a new request whose output is the old value.
pub(crate) fn amo_nbe<'d, T: AmoExtended>(
    d: &'d Drain<'_>,
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<Req<Fetch<'d, T>>> {
    const { assert!(size_of::<T>() <= 8 && align_of::<T>() <= 8) };
    bounds(routine, "dest", dst.len, i, 1)?;
    let slot = d.slots.take();
    // On an error the request is dropped: nothing was issued, and the slot is recycled.
    let mut req = Req::new(
        None,
        Fetch {
            slots: &d.slots,
            slot,
            _t: PhantomData,
        },
    );
    // SAFETY: the slot is a word of the drain's chunks, which live until after the drain
    // (so past every write), large and aligned enough for `T` (asserted above), and
    // handed out to this operation alone until its `Fetch` is finished; `dst[i]` is a
    // symmetric, aligned word; the request's fresh slot holds no handle.
    unsafe {
        amo::atomic_nbe(
            ctx.get(),
            routine,
            slot.cast::<T>().as_ptr(),
            dst.at(i),
            op,
            pe_arg(pe),
            &mut req.slot,
        )?
    };
    Ok(req)
}
