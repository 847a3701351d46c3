//! The one module that calls rshmem-core's address-based routines and touches symmetric
//! memory through pointers. Every function here is safe: it checks bounds and lengths
//! itself, so the rest of the crate is plain safe code. PE numbers are checked by the
//! callers (and again by the runtime).
#![allow(unsafe_code)]

use std::cell::{RefCell, UnsafeCell};
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of, size_of_val, MaybeUninit};
use std::ptr::NonNull;
use std::sync::Arc;

use rshmem_core::coll::{self, nonblocking, Elem, ReduceOp};
use rshmem_core::ctx::{self as core_ctx, CtxHandle};
use rshmem_core::request::{self, ReqHandle};
use rshmem_core::team::Team as CoreTeam;
use rshmem_core::Ctx as CoreCtx;
use rshmem_core::{amo, memory, order, p2p, rma, signal, AmoOp, Cmp, SignalOp, Word};

use crate::atomic::{AmoExtended, SymAtomic, SymAtomicVec};
use crate::error::{Error, Result};
use crate::remote::Remote;
use crate::shmem::ok;
use crate::sym::SymVec;

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

// ---------------------------------------------------------------- memory management

/// Collective: a block of `len` elements, each `init` (zero bytes for `None`). Every PE
/// leaves only when every PE's copy is initialized, so remote writes that follow cannot
/// be overwritten by a late initialization.
pub(crate) fn alloc<T: Remote>(
    routine: &'static str,
    len: usize,
    init: Option<T>,
) -> Result<Region<T>> {
    let size = len
        .checked_mul(size_of::<T>())
        .ok_or(Error::InvalidArgument {
            routine,
            arg: "len",
            reason: "len * size_of::<T>() overflows",
        })?;
    if size == 0 {
        return Ok(Region {
            ptr: NonNull::dangling(),
            len,
        });
    }
    let over_aligned = align_of::<T>() > rshmem_core::MIN_ALIGN;
    let raw = if init.is_none() && !over_aligned {
        // calloc zero-fills before its barrier.
        memory::calloc(routine, len, size_of::<T>())?
    } else {
        memory::align(routine, align_of::<T>(), size)?
    };
    let ptr =
        NonNull::new(raw.cast::<T>()).expect("the runtime returned null for a non-empty block");
    let r = Region { ptr, len };
    if init.is_some() || over_aligned {
        match init {
            // SAFETY: a fresh block of `len` aligned elements that no PE touches before
            // the barrier below.
            Some(v) => (0..len).for_each(|i| unsafe { r.at(i).write(v) }),
            // SAFETY: as above; all-zero bytes are a valid `T` (`Remote`).
            None => unsafe { r.ptr.as_ptr().cast::<u8>().write_bytes(0, size) },
        }
        rshmem_core::sync::barrier_all()?;
    }
    Ok(r)
}

/// Collective: releases a block.
pub(crate) fn free<T>(routine: &'static str, r: Region<T>) -> Result<()> {
    if r.bytes() == 0 {
        return Ok(());
    }
    Ok(memory::free(routine, r.ptr.as_ptr().cast())?)
}

/// Frees a block from a `Drop` impl: collectively, except while panicking (the other PEs
/// would wait for this one forever; the launcher ends the failed job, so leak instead).
pub(crate) fn drop_region<T>(r: Region<T>) {
    if r.bytes() == 0 || std::thread::panicking() {
        return;
    }
    if let Err(e) = free("shmem_free", r) {
        rshmem_core::fatal(&e);
    }
}

/// Collective: resizes a block in place or by moving it, keeping the common prefix and
/// filling new elements with `fill`. On failure the block is unchanged.
pub(crate) fn resize<T: Remote>(
    routine: &'static str,
    r: &mut Region<T>,
    len: usize,
    fill: T,
) -> Result<()> {
    if align_of::<T>() > rshmem_core::MIN_ALIGN {
        return Err(Error::InvalidArgument {
            routine,
            arg: "T",
            reason: "symmetric objects of types aligned above 64 bytes cannot be resized",
        });
    }
    let size = len
        .checked_mul(size_of::<T>())
        .ok_or(Error::InvalidArgument {
            routine,
            arg: "len",
            reason: "len * size_of::<T>() overflows",
        })?;
    let old = if r.bytes() == 0 {
        std::ptr::null_mut()
    } else {
        r.ptr.as_ptr().cast()
    };
    let raw = memory::realloc(routine, old, size)?;
    let old_len = r.len;
    r.ptr = NonNull::new(raw.cast::<T>()).unwrap_or(NonNull::dangling());
    r.len = len;
    if len > old_len && size > 0 {
        // SAFETY: elements `old_len..len` are fresh; no PE writes them before the barrier.
        (old_len..len).for_each(|i| unsafe { r.at(i).write(fill) });
        rshmem_core::sync::barrier_all()?;
    }
    Ok(())
}

// ---------------------------------------------------------------- contexts

/// A runtime context, owned: the default context (never destroyed) or one made by
/// [`RawCtx::create`] and destroyed when dropped.
///
/// Invariant: the handle is the static default context, or a live context from
/// `rshmem_core::ctx::create`/`team_create` that nothing but this value destroys. (A
/// team's destruction also ends its shareable contexts; the safe `Ctx` borrows its team,
/// so a team cannot be destroyed while one of its contexts lives.)
#[derive(Debug)]
pub(crate) struct RawCtx(CtxHandle);

// SAFETY: a runtime context is a thread-safe object (its state is atomics, and every
// operation on it is thread-safe at every thread level). Which threads may use a context
// is decided by the safe `Ctx`'s mode marker, not by this handle.
unsafe impl Send for RawCtx {}
// SAFETY: as for `Send`.
unsafe impl Sync for RawCtx {}

impl RawCtx {
    /// The default context (`SHMEM_CTX_DEFAULT`).
    pub(crate) fn default_ctx() -> RawCtx {
        RawCtx(NonNull::from(CoreCtx::default_ctx()))
    }

    /// A new context with `options`, on `team` (`None`: the world).
    pub(crate) fn create(team: Option<&Arc<CoreTeam>>, options: i64) -> Result<RawCtx> {
        let h = match team {
            None => core_ctx::create(options)?,
            Some(t) => core_ctx::team_create(t, options)?,
        };
        Ok(RawCtx(h))
    }

    /// The runtime's context object.
    #[inline(always)]
    pub(crate) fn get(&self) -> &CoreCtx {
        // SAFETY: the static default context, or a live context that only our `Drop`
        // destroys (the type's invariant).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for RawCtx {
    fn drop(&mut self) {
        if self.get().is_default() {
            return;
        }
        // SAFETY: a live context from `create`, not the default one, destroyed once, here;
        // no other thread uses it (the safe `Ctx` is being dropped, so it is not borrowed).
        // It fails only for the default context, excluded above.
        let _ = unsafe { core_ctx::destroy(self.0) };
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

// ---------------------------------------------------------------- atomics and signals

/// `op` on element `i` of `dst` on `pe`; returns the previous value.
pub(crate) fn amo<T: AmoExtended>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<T> {
    bounds(routine, "dest", dst.len, i, 1)?;
    // SAFETY: element `i` is inside a symmetric block aligned for `T`.
    Ok(unsafe { amo::ctx_atomic(ctx.get(), routine, dst.at(i), op, pe_arg(pe))? })
}

/// `op` on element `i` of `dst` on `pe`, not fetching (a write, as C's non-fetching
/// atomics: through UCX posted, complete at the context's next quiet).
pub(crate) fn amo_post<T: AmoExtended>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    i: usize,
    op: AmoOp<T>,
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, i, 1)?;
    // SAFETY: element `i` is inside a symmetric block aligned for `T`.
    unsafe { amo::ctx_atomic_post(ctx.get(), routine, dst.at(i), op, pe_arg(pe)) }
        .map_err(Into::into)
}

/// Put-with-signal: `src` to `dst[start..]` on `pe`, then `op` on `sig` there.
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_signal<T: Remote>(
    ctx: &RawCtx,
    routine: &'static str,
    dst: &Region<T>,
    start: usize,
    src: &[T],
    sig: &Region<u64>,
    value: u64,
    op: SignalOp,
    pe: usize,
) -> Result<()> {
    bounds(routine, "dest", dst.len, start, src.len())?;
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: `src` is readable for its length; both destinations were checked.
    unsafe {
        signal::ctx_put_signal(
            ctx.get(),
            routine,
            false,
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

/// `signal_set`/`signal_add` on `sig` at `pe`.
pub(crate) fn signal_op(
    ctx: &RawCtx,
    routine: &'static str,
    sig: &Region<u64>,
    value: u64,
    op: SignalOp,
    pe: usize,
) -> Result<()> {
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: a symmetric, aligned `u64`.
    unsafe { signal::ctx_signal_op(ctx.get(), routine, sig.as_ptr(), value, op, pe_arg(pe))? };
    Ok(())
}

/// `fence` on a context.
pub(crate) fn fence(ctx: &RawCtx) -> Result<()> {
    Ok(order::ctx_fence(ctx.get())?)
}

/// `quiet` on a context.
pub(crate) fn quiet(ctx: &RawCtx) -> Result<()> {
    Ok(order::ctx_quiet(ctx.get())?)
}

/// Waits until the local signal satisfies `cmp value`; returns the value that did.
pub(crate) fn signal_wait_until(
    routine: &'static str,
    sig: &Region<u64>,
    cmp: Cmp,
    value: u64,
) -> Result<u64> {
    bounds(routine, "sig_addr", sig.len, 0, 1)?;
    // SAFETY: a symmetric, aligned `u64`.
    Ok(unsafe { signal::signal_wait_until(routine, sig.as_ptr(), cmp, value)? })
}

// ---------------------------------------------------------------- point-to-point

/// The value(s) words are compared against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Values<'a, T> {
    One(T),
    Each(&'a [T]),
}

/// What a set wait or test reports.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SetOp {
    WaitAll,
    WaitAny,
    WaitSome,
    TestAll,
    TestAny,
    TestSome,
}

/// Result of a set wait or test.
#[derive(Debug)]
pub(crate) enum SetResult {
    All(bool),
    Any(Option<usize>),
    Some(Vec<usize>),
}

/// Waits for or tests element `i` of `ivars` (`wait` = block until it holds).
pub(crate) fn wait_one<T: AmoExtended>(
    routine: &'static str,
    ivars: &Region<T>,
    i: usize,
    cmp: Cmp,
    value: T,
    wait: bool,
) -> Result<bool> {
    bounds(routine, "ivar", ivars.len, i, 1)?;
    let p = ivars.at(i).cast_const();
    // SAFETY: a symmetric, aligned word.
    unsafe {
        if wait {
            p2p::wait_until(routine, p, cmp, value)?;
            Ok(true)
        } else {
            Ok(p2p::test(routine, p, cmp, value)?)
        }
    }
}

/// The `_all`/`_any`/`_some` waits and tests over every element of `ivars`. `status`
/// is the C mask (0 = take part), `values` one value or one per element.
pub(crate) fn wait_set<T: AmoExtended>(
    routine: &'static str,
    ivars: &Region<T>,
    status: Option<&[i32]>,
    cmp: Cmp,
    values: Values<'_, T>,
    op: SetOp,
) -> Result<SetResult> {
    let n = ivars.len;
    let check = |arg, got: usize| {
        if got == n {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                routine,
                arg,
                expected: n,
                got,
            })
        }
    };
    if let Some(s) = status {
        check("status", s.len())?;
    }
    let vals = match values {
        Values::One(v) => p2p::Values::One(v),
        Values::Each(v) => {
            check("cmp_values", v.len())?;
            p2p::Values::Each(v.as_ptr())
        }
    };
    let st = status.map_or(std::ptr::null(), <[i32]>::as_ptr);
    let iv = ivars.as_ptr().cast_const();
    // SAFETY: `status`, the values and the index buffer hold `n` elements (checked or
    // sized above); `ivars` is a symmetric block of `n` aligned words.
    unsafe {
        Ok(match op {
            SetOp::WaitAll => {
                p2p::wait_until_all(routine, iv, n, st, cmp, vals)?;
                SetResult::All(true)
            }
            SetOp::TestAll => SetResult::All(p2p::test_all(routine, iv, n, st, cmp, vals)?),
            SetOp::WaitAny => SetResult::Any(p2p::wait_until_any(routine, iv, n, st, cmp, vals)?),
            SetOp::TestAny => SetResult::Any(p2p::test_any(routine, iv, n, st, cmp, vals)?),
            SetOp::WaitSome | SetOp::TestSome => {
                let mut idx = vec![0usize; n];
                let k = if matches!(op, SetOp::WaitSome) {
                    p2p::wait_until_some(routine, iv, n, idx.as_mut_ptr(), st, cmp, vals)?
                } else {
                    p2p::test_some(routine, iv, n, idx.as_mut_ptr(), st, cmp, vals)?
                };
                idx.truncate(k);
                SetResult::Some(idx)
            }
        })
    }
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

// ---------------------------------------------------------------- zero-copy access

impl<T: Remote> SymVec<'_, T> {
    /// This PE's copy as a slice, without copying.
    ///
    /// # Safety
    /// While the slice lives, no PE — this one included, from any thread, through
    /// [`store`](Self::store) or RMA to itself — may write this object's memory on this
    /// PE. A barrier after the
    /// last remote write and before the next one is the usual way to ensure it.
    pub unsafe fn local(&self) -> &[T] {
        // SAFETY: forwarded contract.
        unsafe { self.slice.region.slice() }
    }

    /// This PE's copy as a mutable slice, without copying.
    ///
    /// # Safety
    /// While the slice lives, no other PE may read or write this object's memory on
    /// this PE.
    pub unsafe fn local_mut(&mut self) -> &mut [T] {
        // SAFETY: forwarded contract.
        unsafe { self.slice.region.slice_mut() }
    }
}

// ---------------------------------------------------------------- thread safety

// SAFETY: every access a `SymAtomic` makes to its word is atomic (local loads through
// `Word::load`, everything else through the runtime's AMOs and waits), and the runtime is
// thread-safe; the `&Shmem` it holds is `Sync`.
unsafe impl<T: AmoExtended> Sync for SymAtomic<'_, T> {}
// SAFETY: as for `SymAtomic`, element by element.
unsafe impl<T: AmoExtended> Sync for SymAtomicVec<'_, T> {}
// SAFETY: a `SharedSlice` hands only its array's address and length to RMA routines,
// which copy through the runtime exactly as other PEs' accesses do (each a byte copy of
// `Remote` values, for which every bit pattern is valid), and the runtime is
// thread-safe. Conflicting transfers from two threads give unspecified values, as from
// two PEs. It holds its `SymVec` mutably borrowed, so no local `load`/`store`/copy of that
// vector (plain volatile accesses) can run while another thread puts into it; the unsafe
// `local` accessors forbid such writes in their contract.
unsafe impl<T: Remote> Sync for crate::sym::SharedSlice<'_, T> {}
// SAFETY: as for `Sync`: the handle is a shared reference to the `SymSlice`.
unsafe impl<T: Remote> Send for crate::sym::SharedSlice<'_, T> {}

// ---------------------------------------------------------------- collectives

/// Nonzero element counts of a collective's buffers must not be one object.
fn distinct<T>(routine: &'static str, dst: &Region<T>, src: &Region<T>) -> Result<()> {
    if dst.len > 0 && dst.ptr == src.ptr {
        return Err(Error::InvalidArgument {
            routine,
            arg: "dest",
            reason: "dest and source must be different objects",
        });
    }
    Ok(())
}

/// `a * b` elements, saturating (the bounds check then fails).
fn times(a: usize, b: usize) -> usize {
    a.saturating_mul(b)
}

/// Broadcast of `nelems` from team rank `root` into `dst` on every member.
pub(crate) fn broadcast<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    root: usize,
    nb: Nb<'_>,
) -> Result<()> {
    if root >= team.n_pes() {
        return Err(Error::PeOutOfRange {
            routine,
            pe: root,
            npes: team.n_pes(),
        });
    }
    bounds(routine, "source", src.len, 0, nelems)?;
    bounds(routine, "dest", dst.len, 0, nelems)?;
    if nelems == 0 {
        return Ok(());
    }
    // SAFETY: both regions are symmetric and hold `nelems` elements (checked); they stay
    // allocated while borrowed. This PE's other threads reach them only through RMA on
    // a `SharedSlice` (a `SymVec` is not `Sync`, and its unsafe `local` forbids
    // writes while it is held): raw copies like other PEs' accesses, which a conflicting
    // program makes unspecified but not unsound. In place (one object) is allowed.
    // A non-blocking call's regions are borrowed until its scope's drain.
    unsafe {
        let (d, s, n) = (
            dst.as_ptr().cast(),
            src.as_ptr().cast(),
            nelems * size_of::<T>(),
        );
        match nb {
            None => coll::broadcast(routine, team, d, s, n, root as i64)?,
            Some(r) => nonblocking::broadcast(routine, team, d, s, n, root as i64, r)?,
        }
    };
    Ok(())
}

/// A collective's request slot when it is non-blocking (`_nbe`), `None` when blocking.
pub(crate) type Nb<'a> = Option<&'a mut Option<ReqHandle>>;

/// A team sync, blocking or non-blocking (`barrier`: a quiet first).
pub(crate) fn sync(routine: &'static str, team: &Arc<CoreTeam>, nb: Nb<'_>) -> Result<()> {
    match nb {
        None => rshmem_core::team::sync_in(routine, team)?,
        // SAFETY: the handle in the slot is owned by its `Req` (see `Req::test`).
        Some(r) => unsafe { nonblocking::sync(routine, team, false, r)? },
    }
    Ok(())
}

/// A non-blocking barrier on `team`: a quiet of the default context now, then its sync.
pub(crate) fn barrier_nbe(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    r: &mut Option<ReqHandle>,
) -> Result<()> {
    // SAFETY: the handle in the slot is owned by its `Req` (see `Req::test`).
    unsafe { nonblocking::sync(routine, team, true, r)? };
    Ok(())
}

/// Fcollect (`collect = false`: `dst` holds `nelems * n_pes`) or alltoall (`src` too).
pub(crate) fn fcollect_or_alltoall<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    alltoall: bool,
    nb: Nb<'_>,
) -> Result<()> {
    distinct(routine, dst, src)?;
    let all = times(nelems, team.n_pes());
    bounds(
        routine,
        "source",
        src.len,
        0,
        if alltoall { all } else { nelems },
    )?;
    bounds(routine, "dest", dst.len, 0, all)?;
    if nelems == 0 {
        return Ok(());
    }
    let (d, s, nbytes) = (
        dst.as_ptr().cast(),
        src.as_ptr().cast(),
        nelems * size_of::<T>(),
    );
    // SAFETY: as in `broadcast`; the regions are distinct objects (so disjoint) and hold
    // the extents checked above.
    unsafe {
        match (alltoall, nb) {
            (true, None) => coll::alltoall(routine, team, d, s, nbytes)?,
            (false, None) => coll::fcollect(routine, team, d, s, nbytes)?,
            (true, Some(r)) => nonblocking::alltoall(routine, team, d, s, nbytes, r)?,
            (false, Some(r)) => nonblocking::fcollect(routine, team, d, s, nbytes, r)?,
        }
    };
    Ok(())
}

/// Strided alltoall: strides in elements, at least 1.
#[allow(clippy::too_many_arguments)]
pub(crate) fn alltoalls<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    dst_stride: usize,
    src_stride: usize,
    nelems: usize,
    nb: Nb<'_>,
) -> Result<()> {
    if dst_stride == 0 || src_stride == 0 {
        return Err(Error::InvalidArgument {
            routine,
            arg: if dst_stride == 0 { "dst" } else { "sst" },
            reason: "strides must be at least 1",
        });
    }
    distinct(routine, dst, src)?;
    if nelems == 0 {
        return Ok(());
    }
    let count = times(nelems, team.n_pes());
    span(routine, "source", src.len, 0, src_stride, count)?;
    span(routine, "dest", dst.len, 0, dst_stride, count)?;
    // With one element the stride is never applied; otherwise it is below the length.
    let stride = |s: usize| if count == 1 { 1 } else { s as isize };
    let (d, s) = (dst.as_ptr().cast(), src.as_ptr().cast());
    let (ds, ss, size) = (stride(dst_stride), stride(src_stride), size_of::<T>());
    // SAFETY: as in `fcollect_or_alltoall`, for the strided extents checked above.
    unsafe {
        match nb {
            None => coll::alltoalls(routine, team, d, s, ds, ss, nelems, size)?,
            Some(r) => nonblocking::alltoalls(routine, team, d, s, ds, ss, nelems, size, r)?,
        }
    };
    Ok(())
}

/// Collect: members contribute different counts; `dst` must hold their total. Core agrees
/// on the total before writing, so every member reports the same error when `dst` is too
/// small and nothing overflows it.
pub(crate) fn collect<T: Remote>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    nb: Nb<'_>,
) -> Result<()> {
    distinct(routine, dst, src)?;
    bounds(routine, "source", src.len, 0, nelems)?;
    let sz = size_of::<T>();
    let p = dst.as_ptr().cast::<u8>();
    // An empty source is never read; any symmetric address will do.
    let s = if src.len > 0 { src.as_ptr().cast() } else { p };
    // SAFETY: `src` holds `nelems` elements (checked); core checks the agreed total
    // against `dst`'s capacity on every member before writing; the regions are distinct
    // objects (so disjoint).
    unsafe {
        match nb {
            None => coll::collect(routine, team, p, s, nelems * sz, dst.bytes())?,
            Some(r) => nonblocking::collect(routine, team, p, s, nelems * sz, dst.bytes(), r)?,
        }
    };
    Ok(())
}

/// Reduction of `nelems` elements; `dst` and `src` may be one object (in place).
pub(crate) fn reduce<T: Remote + Elem>(
    routine: &'static str,
    team: &Arc<CoreTeam>,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    op: ReduceOp,
    nb: Nb<'_>,
) -> Result<()> {
    bounds(routine, "source", src.len, 0, nelems)?;
    bounds(routine, "dest", dst.len, 0, nelems)?;
    if nelems == 0 {
        return Ok(());
    }
    // SAFETY: as in `broadcast`; two objects are disjoint, one object is identical.
    unsafe {
        let (d, s) = (dst.as_ptr(), src.as_ptr());
        match nb {
            None => coll::reduce(routine, team, d, s, nelems, op)?,
            Some(r) => nonblocking::reduce(routine, team, d, s, nelems, op, r)?,
        }
    };
    Ok(())
}

/// Inclusive or exclusive sum scan; `dst` and `src` must be different objects.
pub(crate) fn sum_scan<T: Remote + Elem + Default>(
    routine: &'static str,
    team: &CoreTeam,
    dst: &Region<T>,
    src: &Region<T>,
    nelems: usize,
    inclusive: bool,
) -> Result<()> {
    distinct(routine, dst, src)?;
    bounds(routine, "source", src.len, 0, nelems)?;
    bounds(routine, "dest", dst.len, 0, nelems)?;
    if nelems == 0 {
        return Ok(());
    }
    // SAFETY: as in `fcollect_or_alltoall`.
    unsafe { coll::sum_scan(routine, team, dst.as_ptr(), src.as_ptr(), nelems, inclusive)? };
    Ok(())
}
