//! The shared-memory transport: every PE of the host has every other PE's segment mapped,
//! PE `p` at `base + p * stride`, so an operation is a `memcpy` or a CPU atomic on the
//! peer's mapping. No locks, no allocation, no system call.
#![allow(unsafe_code)]

use std::sync::atomic::{fence, Ordering};

use super::{SymAddr, Transport};
use crate::word::{AmoOp, Word};

/// Where one segment of every local PE is mapped: PE `p`'s at `base + p * stride`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SegMap {
    /// Address of PE 0's slot.
    pub(crate) base: *mut u8,
    /// Distance between consecutive PEs' slots.
    pub(crate) stride: usize,
    /// Mapped bytes per slot (offsets must stay below it).
    pub(crate) len: usize,
}

impl SegMap {
    /// No segment (`len` 0).
    pub(crate) const NONE: SegMap = SegMap {
        base: std::ptr::null_mut(),
        stride: 0,
        len: 0,
    };
}

/// The shm transport over reservations holding every local PE's segments, indexed by
/// [`Seg`](super::Seg).
#[derive(Debug)]
pub(crate) struct Shm {
    segs: [SegMap; 2],
}

// SAFETY: `Shm` holds addresses of shared mappings that live as long as the runtime; the
// memory is accessed only with copies and atomics under the OpenSHMEM memory model.
unsafe impl Send for Shm {}
// SAFETY: as above; the struct itself is immutable after init.
unsafe impl Sync for Shm {}

impl Shm {
    pub(crate) fn new(heap: SegMap, data: SegMap) -> Shm {
        Shm { segs: [heap, data] }
    }

    /// Address of `addr` in `pe`'s mapping.
    #[inline(always)]
    pub(crate) fn addr(&self, pe: usize, addr: SymAddr) -> *mut u8 {
        let s = &self.segs[addr.seg as usize];
        debug_assert!(addr.off < s.len);
        s.base.wrapping_add(pe * s.stride).wrapping_add(addr.off)
    }
}

/// `memmove`, with the word sizes done in line: a put or get of one `long` whose size is
/// known only at run time (`shmem_putmem(.., 8, ..)` from C) would otherwise pay a call
/// into libc, a third of its cost.
///
/// # Safety
/// As `std::ptr::copy`.
#[inline(always)]
unsafe fn copy(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: the caller's contract; each case reads the whole source before writing, so
    // overlapping ranges behave as with memmove.
    unsafe {
        match len {
            8 => dst
                .cast::<u64>()
                .write_unaligned(src.cast::<u64>().read_unaligned()),
            4 => dst
                .cast::<u32>()
                .write_unaligned(src.cast::<u32>().read_unaligned()),
            _ => std::ptr::copy(src, dst, len),
        }
    }
}

impl Transport for Shm {
    #[inline(always)]
    unsafe fn put(&self, pe: usize, dst: SymAddr, src: *const u8, len: usize) {
        debug_assert!(dst.off + len <= self.segs[dst.seg as usize].len);
        // SAFETY: the runtime checked that [dst, dst+len) is inside the peer's mapping;
        // the caller guarantees `src` is readable. `copy` (memmove) keeps a put to oneself
        // with overlapping buffers well defined.
        unsafe { copy(src, self.addr(pe, dst), len) }
    }

    #[inline(always)]
    unsafe fn get(&self, pe: usize, dst: *mut u8, src: SymAddr, len: usize) {
        debug_assert!(src.off + len <= self.segs[src.seg as usize].len);
        // SAFETY: as in `put`, with the roles of local and remote swapped.
        unsafe { copy(self.addr(pe, src), dst, len) }
    }

    #[inline(always)]
    unsafe fn atomic<W: Word>(&self, pe: usize, addr: SymAddr, op: AmoOp<W>) -> W {
        let p = self.addr(pe, addr).cast::<W>();
        debug_assert!(p.is_aligned());
        // SAFETY: the runtime checked range and alignment; the word lives in a shared
        // mapping that outlives the call.
        unsafe { W::rmw(p, op) }
    }

    #[inline(always)]
    fn fence(&self) {
        // Copies are done when `put` returns; a release fence keeps later stores (a flag,
        // an AMO) from passing earlier ones.
        fence(Ordering::Release);
    }

    #[inline(always)]
    fn quiet(&self) {
        fence(Ordering::SeqCst);
    }

    #[inline(always)]
    fn ptr(&self, pe: usize, addr: SymAddr) -> Option<*mut u8> {
        Some(self.addr(pe, addr))
    }
}
