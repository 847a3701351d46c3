//! The one module that calls rshmem-core's address-based routines and touches symmetric
//! memory through pointers. Every function here is safe: it checks bounds and lengths
//! itself, so the rest of the crate is plain safe code. PE numbers are checked by the
//! callers (and again by the runtime).
#![allow(unsafe_code)]

mod atomics;
mod collectives;
mod contexts;
mod memory;
mod p2p;
mod threads;
mod zero_copy;

use std::cell::{RefCell, UnsafeCell};
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of, size_of_val, MaybeUninit};
use std::ptr::NonNull;

use rshmem_core::request::{self, ReqHandle};
use rshmem_core::{amo, rma, signal, AmoOp, SignalOp, Word};

use crate::atomic::AmoExtended;
use crate::error::{Error, Result};
use crate::remote::Remote;
use crate::shmem::ok;

pub(crate) use atomics::{amo, amo_post, fence, put_signal, quiet, signal_op, signal_wait_until};
pub(crate) use collectives::{
    alltoalls, barrier_nbe, broadcast, collect, fcollect_or_alltoall, reduce, sum_scan, sync,
};
pub(crate) use contexts::RawCtx;
pub(crate) use memory::{alloc, drop_region, free, resize};
pub(crate) use p2p::{wait_one, wait_set, SetOp, SetResult, Values};

/// A block of `len` elements of `T` in this PE's symmetric heap.
///
/// Invariant: `ptr` is aligned for `T` and addresses `len` elements of symmetric memory
/// handed out by [`alloc`], which stays allocated until [`free`] consumes the region.
/// Blocks of zero bytes are not allocated and hold a dangling pointer.
#[derive(Debug)]
pub(crate) struct Region<T> {
    ptr: NonNull<T>,
    len: usize,
}

fn pe_arg(pe: usize) -> i64 {
    i64::try_from(pe).unwrap_or(i64::MAX)
}

fn out_of_bounds(
    routine: &'static str,
    arg: &'static str,
    len: usize,
    start: usize,
    count: usize,
) -> Error {
    Error::OutOfBounds {
        routine,
        arg,
        len,
        range: start..start.saturating_add(count),
    }
}

/// Checks that elements `start..start + count` lie inside `len` elements.
fn bounds(
    routine: &'static str,
    arg: &'static str,
    len: usize,
    start: usize,
    count: usize,
) -> Result<()> {
    match start.checked_add(count) {
        Some(end) if end <= len => Ok(()),
        _ => Err(out_of_bounds(routine, arg, len, start, count)),
    }
}

/// Checks that the `n` elements `start`, `start + stride`, ... lie inside `len` elements.
fn span(
    routine: &'static str,
    arg: &'static str,
    len: usize,
    start: usize,
    stride: usize,
    n: usize,
) -> Result<()> {
    let last = (n - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(start))
        .ok_or_else(|| out_of_bounds(routine, arg, len, start, usize::MAX))?;
    if last < len {
        Ok(())
    } else {
        Err(out_of_bounds(routine, arg, len, start, last - start + 1))
    }
}

impl<T> Region<T> {
    /// Moves the block out, leaving an empty region (whose free is a no-op).
    pub(crate) fn take(&mut self) -> Region<T> {
        std::mem::replace(
            self,
            Region {
                ptr: NonNull::dangling(),
                len: 0,
            },
        )
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The symmetric address of the first element (for routines taking raw addresses).
    pub(crate) fn as_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// Address of element `i`, which the caller has bounds-checked (`i <= len`).
    fn at(&self, i: usize) -> *mut T {
        debug_assert!(i <= self.len);
        // SAFETY: `i <= len`, so the result is inside the block or one past its end.
        unsafe { self.ptr.as_ptr().add(i) }
    }

    #[track_caller]
    fn index(&self, i: usize) -> *mut T {
        assert!(
            i < self.len,
            "index {i} is out of bounds for a symmetric object of length {}",
            self.len
        );
        self.at(i)
    }
}

impl<T: Remote> Region<T> {
    /// Reads element `i` of the local copy.
    #[track_caller]
    pub(crate) fn load(&self, i: usize) -> T {
        let p = self.index(i);
        // SAFETY: in bounds and aligned; any bit pattern is a `T` (`Remote`). Volatile,
        // because other PEs change the memory behind the compiler's back.
        unsafe { p.read_volatile() }
    }

    /// Writes element `i` of the local copy.
    #[track_caller]
    pub(crate) fn store(&self, i: usize, v: T) {
        let p = self.index(i);
        // SAFETY: in bounds and aligned; symmetric memory is never borrowed as `&T`
        // except through the `unsafe` `local` accessors, whose callers rule this out.
        unsafe { p.write_volatile(v) }
    }

    #[track_caller]
    pub(crate) fn copy_to(&self, dst: &mut [T]) {
        assert_eq!(
            dst.len(),
            self.len,
            "copy_to_local: destination length differs from the symmetric object's"
        );
        // SAFETY: both ranges hold `len` valid elements; `copy` tolerates overlap.
        unsafe { std::ptr::copy(self.ptr.as_ptr(), dst.as_mut_ptr(), self.len) }
    }

    #[track_caller]
    pub(crate) fn copy_from(&self, src: &[T]) {
        assert_eq!(
            src.len(),
            self.len,
            "copy_from_local: source length differs from the symmetric object's"
        );
        // SAFETY: as in `copy_to`.
        unsafe { std::ptr::copy(src.as_ptr(), self.ptr.as_ptr(), self.len) }
    }

    /// The local copy as a slice.
    ///
    /// # Safety
    /// No PE (this one included) writes the block while the slice lives.
    pub(crate) unsafe fn slice(&self) -> &[T] {
        // SAFETY: `len` valid, aligned elements; the caller excludes writers.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The local copy as a mutable slice.
    ///
    /// # Safety
    /// No other PE reads or writes the block while the slice lives.
    pub(crate) unsafe fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `slice`, and `&mut self` excludes local aliases.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Word> Region<T> {
    /// Atomically reads element `i` of the local copy.
    #[track_caller]
    pub(crate) fn atomic_load(&self, i: usize) -> T {
        let p = self.index(i);
        // SAFETY: in bounds, aligned, and every access to atomic regions is atomic.
        unsafe { T::load(p) }
    }
}

// ---------------------------------------------------------------- RMA

/// Blocking put of `src` to elements `start..` of `dst` on `pe`.
pub(crate) fn put<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &[T],
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    // SAFETY: `src` is readable for its length; the destination range was checked.
    unsafe {
        rma::ctx_put(
            ctx.get(),
            routine,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Blocking get of elements `start..` of `src` on `pe` into `dst`.
pub(crate) fn get<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
) -> Result<()> {
    bounds(routine, "source", src.len, start, dst.len())?;
    // SAFETY: `dst` is writable for its length; any bytes form valid `T`s (`Remote`).
    unsafe {
        rma::ctx_get(
            ctx.get(),
            routine,
            dst.as_mut_ptr().cast(),
            src.at(start).cast(),
            size_of_val(dst),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Blocking read of element `i` of `src` on `pe`.
pub(crate) fn g<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    src: &Region<T>,
    i: usize,
    pe: usize,
) -> Result<T> {
    bounds(routine, "source", src.len, i, 1)?;
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` is writable for one `T`.
    unsafe {
        rma::ctx_get(
            ctx.get(),
            routine,
            v.as_mut_ptr().cast(),
            src.at(i).cast(),
            size_of::<T>(),
            pe_arg(pe),
        )?
    };
    // SAFETY: the get filled every byte; any bytes form a valid `T` (`Remote`).
    Ok(unsafe { v.assume_init() })
}

/// One side of a strided transfer: a start element and a stride, both in elements.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strided {
    pub(crate) start: usize,
    pub(crate) stride: usize,
}

fn stride_arg(stride: usize, n: usize) -> isize {
    // A single element ignores the stride; otherwise `span` proved it small.
    if n <= 1 {
        1
    } else {
        stride as isize
    }
}

/// `n` elements from `src` (local) to `dst` on `pe`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn iput<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    d: Strided,
    src: &[T],
    s: Strided,
    n: usize,
    pe: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    span(routine, "dest", dst.len, d.start, d.stride, n)?;
    span(routine, "source", src.len(), s.start, s.stride, n)?;
    // SAFETY: both sides' elements lie inside their objects (checked above).
    unsafe {
        rma::ctx_strided(
            ctx.get(),
            routine,
            true,
            dst.at(d.start).cast(),
            src.as_ptr().add(s.start).cast(),
            stride_arg(d.stride, n),
            stride_arg(s.stride, n),
            n,
            size_of::<T>(),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// `n` elements from `src` on `pe` to `dst` (local).
#[allow(clippy::too_many_arguments)]
pub(crate) fn iget<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &mut [T],
    d: Strided,
    src: &Region<T>,
    s: Strided,
    n: usize,
    pe: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    span(routine, "dest", dst.len(), d.start, d.stride, n)?;
    span(routine, "source", src.len, s.start, s.stride, n)?;
    // SAFETY: both sides' elements lie inside their objects (checked above).
    unsafe {
        rma::ctx_strided(
            ctx.get(),
            routine,
            false,
            dst.as_mut_ptr().add(d.start).cast(),
            src.at(s.start).cast(),
            stride_arg(d.stride, n),
            stride_arg(s.stride, n),
            n,
            size_of::<T>(),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Checks that `nblocks` blocks of `bsize` elements, starting every `stride` elements
/// from `start`, lie inside `len` elements.
fn blocks(
    routine: &'static str,
    arg: &'static str,
    len: usize,
    side: Strided,
    bsize: usize,
    nblocks: usize,
) -> Result<()> {
    let end = (nblocks - 1)
        .checked_mul(side.stride)
        .and_then(|x| x.checked_add(side.start))
        .and_then(|x| x.checked_add(bsize));
    match end {
        Some(end) if end <= len => Ok(()),
        _ => Err(Error::OutOfBounds {
            routine,
            arg,
            len,
            range: side.start..end.unwrap_or(usize::MAX),
        }),
    }
}

/// Blocked transfer (`ibput`/`ibget`): `nblocks` blocks of `bsize` elements between the
/// local `local` and the symmetric `sym` on `pe`, in the direction `is_put`.
#[allow(clippy::too_many_arguments)]
fn blocked<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    is_put: bool,
    sym: (&Region<T>, Strided),
    local: (*mut T, usize, Strided),
    bsize: usize,
    nblocks: usize,
    pe: usize,
) -> Result<()> {
    if nblocks == 0 || bsize == 0 || size_of::<T>() == 0 {
        return Ok(());
    }
    let (region, s) = sym;
    let (lptr, llen, l) = local;
    let (sym_arg, local_arg) = if is_put {
        ("dest", "source")
    } else {
        ("source", "dest")
    };
    blocks(routine, sym_arg, region.len, s, bsize, nblocks)?;
    blocks(routine, local_arg, llen, l, bsize, nblocks)?;
    // Both extents fit in an object, so the strides fit in an `isize` of bytes.
    let (ss, ls) = (s.stride as isize, l.stride as isize);
    // SAFETY: `l.start` is inside the local object (checked).
    let lp = unsafe { lptr.add(l.start) };
    let sp = region.at(s.start);
    let (dest, src, dst_stride, src_stride) = if is_put {
        (sp, lp.cast_const(), ss, ls)
    } else {
        (lp, sp.cast_const(), ls, ss)
    };
    // SAFETY: every block of both sides lies inside its object (checked above); the local
    // side is readable (put) or writable (get) through the caller's borrow.
    unsafe {
        rma::ctx_blocked(
            ctx.get(),
            routine,
            is_put,
            dest.cast(),
            src.cast(),
            dst_stride,
            src_stride,
            bsize,
            nblocks,
            size_of::<T>(),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// `ibput`: blocks from `src` (local) to `dst` on `pe`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ibput<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    d: Strided,
    src: &[T],
    s: Strided,
    bsize: usize,
    nblocks: usize,
    pe: usize,
) -> Result<()> {
    blocked(
        ctx,
        routine,
        true,
        (dst, d),
        (src.as_ptr().cast_mut(), src.len(), s),
        bsize,
        nblocks,
        pe,
    )
}

/// `ibget`: blocks from `src` on `pe` to `dst` (local).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ibget<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &mut [T],
    d: Strided,
    src: &Region<T>,
    s: Strided,
    bsize: usize,
    nblocks: usize,
    pe: usize,
) -> Result<()> {
    blocked(
        ctx,
        routine,
        false,
        (src, s),
        (dst.as_mut_ptr(), dst.len(), d),
        bsize,
        nblocks,
        pe,
    )
}

// ---------------------------------------------------------------- non-blocking scope

/// Proof that a context is quieted before `'env` ends: only [`with_quiet`] makes one, and
/// it never escapes the closure. Invariant in `'env`, so buffers borrowed for `'env`
/// outlive that quiet.
#[derive(Debug)]
pub(crate) struct Quiet<'env> {
    ctx: &'env RawCtx,
    _env: PhantomData<&'env mut &'env ()>,
}

impl Drop for Quiet<'_> {
    fn drop(&mut self) {
        // Cannot fail while a guard is live; on an error there is nothing to complete.
        let _ = quiet(self.ctx);
    }
}

/// Runs `f` with a [`Quiet`] token for `ctx`, and quiets `ctx` when `f` returns or
/// unwinds.
pub(crate) fn with_quiet<'env, R>(
    ctx: &'env RawCtx,
    f: impl for<'q> FnOnce(&'q Quiet<'env>) -> R,
) -> R {
    let q = Quiet {
        ctx,
        _env: PhantomData,
    };
    f(&q)
}

/// A buffer that a non-blocking operation may still write; handed back after a quiet of
/// the context the operation was issued on. Not `Send`: it is completed on the thread
/// that issued it.
#[derive(Debug)]
pub(crate) struct Pending<'env, B: ?Sized> {
    buf: &'env mut B,
    ctx: &'env RawCtx,
    _thread: PhantomData<*const ()>,
}

impl<'env, B: ?Sized> Pending<'env, B> {
    pub(crate) fn complete(self) -> &'env mut B {
        let _ = quiet(self.ctx);
        self.buf
    }
}

/// Non-blocking put; `src` stays borrowed until the scope's quiet.
pub(crate) fn put_nbi<'env, T: Remote>(
    q: &Quiet<'env>,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &'env [T],
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    // SAFETY: `src` is borrowed for `'env`, which outlives the quiet that completes the
    // put (the `Quiet` token, of this context); the destination range was checked.
    unsafe {
        rma::ctx_put_nbi(
            q.ctx.get(),
            routine,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            pe_arg(pe),
        )?
    };
    Ok(())
}

/// Non-blocking get into `dst`, which is handed back by [`Pending::complete`].
pub(crate) fn get_nbi<'env, T: Remote>(
    q: &Quiet<'env>,
    routine: &'static str,
    dst: &'env mut [T],
    src: &Region<T>,
    start: usize,
    pe: usize,
) -> Result<Pending<'env, [T]>> {
    bounds(routine, "source", src.len, start, dst.len())?;
    // SAFETY: `dst` is exclusively borrowed for `'env`, past the completing quiet, and
    // only handed back after a quiet of the same context; the source range was checked.
    unsafe {
        rma::ctx_get_nbi(
            q.ctx.get(),
            routine,
            dst.as_mut_ptr().cast(),
            src.at(start).cast(),
            size_of_val(dst),
            pe_arg(pe),
        )?
    };
    Ok(Pending {
        buf: dst,
        ctx: q.ctx,
        _thread: PhantomData,
    })
}

/// Fetching non-blocking AMO: the old value of `dst[i]` on `pe` lands in `fetch`.
pub(crate) fn amo_nbi<'env, T: AmoExtended>(
    q: &Quiet<'env>,
    routine: &'static str,
    fetch: &'env mut T,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<Pending<'env, T>> {
    bounds(routine, "dest", dst.len, i, 1)?;
    // SAFETY: `fetch` is exclusively borrowed past the completing quiet; `dst[i]` is a
    // symmetric, aligned word.
    unsafe {
        amo::ctx_atomic_nbi(
            q.ctx.get(),
            routine,
            std::ptr::from_mut(fetch),
            dst.at(i),
            op,
            pe_arg(pe),
        )?
    };
    Ok(Pending {
        buf: fetch,
        ctx: q.ctx,
        _thread: PhantomData,
    })
}

/// Non-blocking put-with-signal; `src` stays borrowed until the scope's quiet.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal_nbi<'env, T: Remote>(
    q: &Quiet<'env>,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &'env [T],
    sig: &Region<u64>,
    value: u64,
    op: SignalOp,
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: `src` is borrowed for `'env`, past the completing quiet of this context;
    // both destinations were checked.
    unsafe {
        signal::ctx_put_signal(
            q.ctx.get(),
            routine,
            true,
            dst.at(start).cast(),
            src.as_ptr().cast(),
            size_of_val(src),
            sig.as_ptr(),
            value,
            op,
            pe_arg(pe),
        )?
    };
    Ok(())
}

// ---------------------------------------------------------------- explicit non-blocking

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
