//! The one module that calls rshmem-core's address-based routines and touches symmetric
//! memory through pointers. Every function here is safe: it checks bounds and lengths
//! itself, so the rest of the crate is plain safe code. PE numbers are checked by the
//! callers (and again by the runtime).
//!
//! One file a routine family: `memory` (alloc, free, resize), `contexts` (`RawCtx`),
//! `rma` (blocking puts and gets), `atomics` (AMOs, signals, `fence`, `quiet`), `p2p`
//! (waits and tests), `nbi_scope` (implicit non-blocking), `nbe` (explicit non-blocking:
//! drains, requests), `zero_copy` (`SymVec::local`), `threads` (`Send`/`Sync` impls) and
//! `collectives`. This file holds the block type [`Region`] and the bounds checks.

// `unsafe` is allowed for the whole folder: every file in it works through pointers.
#![allow(unsafe_code)]

mod atomics;
mod collectives;
mod contexts;
mod memory;
mod nbe;
mod nbi_scope;
mod p2p;
mod rma;
mod threads;
mod zero_copy;

use std::mem::size_of;
use std::ptr::NonNull;

use rshmem_core::Word;

use crate::error::{Error, Result};
use crate::remote::Remote;

pub use nbe::{Fetch, ReqOutput};

pub(crate) use atomics::{amo, amo_post, fence, put_signal, quiet, signal_op, signal_wait_until};
pub(crate) use collectives::{
    alltoalls, barrier_nbe, broadcast, collect, fcollect_or_alltoall, reduce, sum_scan, sync,
};
pub(crate) use contexts::RawCtx;
pub(crate) use memory::{alloc, drop_region, free, resize};
pub(crate) use nbe::{amo_nbe, get_nbe, get_nbe_join, put_nbe, req_empty, with_drain, Drain, Req};
pub(crate) use nbi_scope::{amo_nbi, get_nbi, put_nbi, put_signal_nbi, with_quiet, Pending, Quiet};
pub(crate) use p2p::{wait_one, wait_set, SetOp, SetResult, Values};
pub(crate) use rma::{g, get, ibget, ibput, iget, iput, put, Strided};

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
