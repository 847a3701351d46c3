//! Symmetric heap management: `shmem_malloc` and friends. Every routine is collective
//! over all PEs, takes the same arguments on each, and synchronizes like a barrier when
//! it does anything. With `SHMEM_DEBUG=1` the arguments are compared across PEs first.

use crate::error::{Error, Result};
use crate::profile::{self, Family};
use crate::runtime::{rt, Runtime};

/// Routine ids for the collective check.
#[derive(Debug, Clone, Copy)]
enum Op {
    Malloc = 1,
    Align,
    Calloc,
    Realloc,
    Free,
}

/// `shmem_malloc_with_hints` hint bits this runtime recognizes (all accepted; on shared
/// memory every placement is already right for remote atomics and signals).
pub const HINT_ATOMICS_REMOTE: i64 = 1;
/// See [`HINT_ATOMICS_REMOTE`].
pub const HINT_SIGNAL_REMOTE: i64 = 2;
/// `SHMEMX_MALLOC_NO_BARRIER` (Sandia OpenSHMEM's extension): `shmem_malloc_with_hints`
/// returns without its barrier. Every PE must still make the call, with the same
/// arguments, so the block is symmetric; the program synchronizes before another PE
/// accesses it (a `shmem_free` of an earlier block barriers before the space can be
/// reused, so skipping this barrier never hands out memory a peer still uses).
pub const HINT_NO_BARRIER: i64 = 4;

impl Runtime {
    /// `SHMEM_DEBUG` check that every PE passed the same arguments to a collective call.
    /// The caller must synchronize again before the next collective call.
    fn check_collective(
        &self,
        routine: &'static str,
        op: Op,
        args: [(&'static str, u64); 2],
    ) -> Result<()> {
        use crate::team::call_check::{Kind, Show};
        let kind = match op {
            Op::Malloc => Kind::Malloc,
            Op::Align => Kind::Align,
            Op::Calloc => Kind::Calloc,
            Op::Realloc => Kind::Realloc,
            Op::Free => Kind::Free,
        };
        // The same check as every collective's (on WORLD), so an allocation on one PE
        // and another collective on the next are reported too.
        let a = [
            (args[0].0, args[0].1, Show::Num),
            (args[1].0, args[1].1, Show::Num),
        ];
        self.check_coll(routine, &self.teams().world, kind, &a)
    }

    fn addr_of(&self, off: usize) -> *mut u8 {
        (self.my_base + self.heap_off + off) as *mut u8
    }

    fn offset_of_ptr(&self, routine: &'static str, arg: &'static str, p: *mut u8) -> Result<usize> {
        let (s, e) = self.heap_range();
        let a = p as usize;
        if a < s || a >= e {
            return Err(Error::NotAllocated {
                routine,
                arg,
                addr: a,
            });
        }
        Ok(a - s)
    }

    fn alloc(&self, routine: &'static str, size: usize, align: usize) -> Result<*mut u8> {
        let r = self
            .heap
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .alloc(size, align);
        r.map(|off| self.addr_of(off))
            .map_err(|e| Error::HeapExhausted {
                routine,
                requested: e.requested,
                free: e.free,
                largest: e.largest,
                heap_size: self.heap_len,
            })
    }
}

/// `shmem_malloc`: `size` bytes of symmetric memory (null for 0, without synchronizing).
pub fn malloc(routine: &'static str, size: usize) -> Result<*mut u8> {
    allocate(routine, 0, size, true)
}

/// `shmem_malloc_with_hints`. With [`HINT_NO_BARRIER`] the allocation skips its closing
/// barrier; it is still collective (same arguments on every PE, so the same offset).
pub fn malloc_with_hints(routine: &'static str, size: usize, hints: i64) -> Result<*mut u8> {
    allocate(routine, 0, size, hints & HINT_NO_BARRIER == 0)
}

/// `shmem_align`: like malloc, aligned to `alignment`, a power of two of at most
/// [`SLOT_ALIGN`](crate::runtime::SLOT_ALIGN) (64 MiB): every PE's heap starts on such a
/// boundary, so only up to there does one offset give an aligned address on every PE.
pub fn align(routine: &'static str, alignment: usize, size: usize) -> Result<*mut u8> {
    if alignment == 0 {
        return Err(Error::InvalidArgument {
            routine,
            arg: "alignment",
            reason: "must be a power of two (0 is not)",
        });
    }
    allocate(routine, alignment, size, true)
}

/// `shmem_align` (`alignment` 0: the default), ending with a barrier or not.
fn allocate(
    routine: &'static str,
    alignment: usize,
    size: usize,
    barrier: bool,
) -> Result<*mut u8> {
    let _p = profile::span(Family::Alloc, size);
    let rt = rt(routine)?;
    if alignment != 0 && !alignment.is_power_of_two() {
        return Err(Error::InvalidArgument {
            routine,
            arg: "alignment",
            reason: "must be a power of two",
        });
    }
    if alignment > crate::runtime::SLOT_ALIGN {
        return Err(Error::InvalidArgument {
            routine,
            arg: "alignment",
            reason: "must be at most 64 MiB: each PE's symmetric heap starts on a 64 MiB boundary, so a larger alignment cannot be given at the same offset on every PE",
        });
    }
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    let op = if alignment == 0 {
        Op::Malloc
    } else {
        Op::Align
    };
    // The SHMEM_DEBUG check synchronizes: a call that promises no barrier skips it.
    if barrier {
        rt.check_collective(
            routine,
            op,
            [("size", size as u64), ("alignment", alignment as u64)],
        )?;
    }
    let r = rt.alloc(routine, size, alignment.max(1));
    if barrier {
        rt.barrier_all();
    }
    r
}

/// `shmem_calloc`: `count * size` zeroed bytes. A product that overflows cannot be
/// allocated, like any size larger than the heap: [`Error::HeapExhausted`] on every PE
/// (the same arguments everywhere give the same verdict), after the usual barrier.
pub fn calloc(routine: &'static str, count: usize, size: usize) -> Result<*mut u8> {
    let _p = profile::span(Family::Alloc, count.saturating_mul(size));
    let rt = rt(routine)?;
    if count == 0 || size == 0 {
        return Ok(std::ptr::null_mut());
    }
    rt.check_collective(
        routine,
        Op::Calloc,
        [("count", count as u64), ("size", size as u64)],
    )?;
    // An overflowing product asks for more than any heap holds.
    let total = count.saturating_mul(size);
    let r = rt.alloc(routine, total, 1);
    if let Ok(p) = r {
        // SAFETY: `p` is a fresh block of `total` bytes in our own mapped segment, not yet
        // visible to anyone (the barrier below publishes it).
        unsafe { std::ptr::write_bytes(p, 0, total) };
    }
    rt.barrier_all();
    r
}

/// `shmem_free`: releases a block (null: nothing, no synchronization).
pub fn free(routine: &'static str, ptr: *mut u8) -> Result<()> {
    let _p = profile::span(Family::Alloc, 0);
    let rt = rt(routine)?;
    if ptr.is_null() {
        return Ok(());
    }
    let off = rt.offset_of_ptr(routine, "ptr", ptr)?;
    rt.check_collective(routine, Op::Free, [("ptr offset", off as u64), ("", 0)])?;
    // Nobody may still be writing into the block when it is reused.
    rt.barrier_all();
    let freed = rt.heap.lock().unwrap_or_else(|e| e.into_inner()).free(off);
    freed.ok_or(Error::NotAllocated {
        routine,
        arg: "ptr",
        addr: ptr as usize,
    })
}

/// `shmem_realloc`: resizes a block, keeping its contents up to the smaller size.
/// Null `ptr` allocates; size 0 frees. On failure the block is unchanged.
pub fn realloc(routine: &'static str, ptr: *mut u8, size: usize) -> Result<*mut u8> {
    let rt = rt(routine)?;
    if ptr.is_null() {
        return malloc(routine, size);
    }
    if size == 0 {
        free(routine, ptr)?;
        return Ok(std::ptr::null_mut());
    }
    // Counted here, after the cases that malloc or free count.
    let _p = profile::span(Family::Alloc, size);
    let off = rt.offset_of_ptr(routine, "ptr", ptr)?;
    rt.check_collective(
        routine,
        Op::Realloc,
        [("ptr offset", off as u64), ("size", size as u64)],
    )?;
    rt.barrier_all();
    let r = {
        let mut heap = rt.heap.lock().unwrap_or_else(|e| e.into_inner());
        let old = heap.usable_size(off).ok_or(Error::NotAllocated {
            routine,
            arg: "ptr",
            addr: ptr as usize,
        })?;
        if heap.resize_in_place(off, size) {
            Ok(ptr)
        } else {
            match heap.alloc(size, 1) {
                Ok(noff) => {
                    let np = rt.addr_of(noff);
                    // SAFETY: both blocks lie in our own mapped segment and do not overlap
                    // (the old one is still allocated while the new one is carved out).
                    unsafe { std::ptr::copy_nonoverlapping(rt.addr_of(off), np, old.min(size)) };
                    heap.free(off);
                    Ok(np)
                }
                Err(e) => Err(Error::HeapExhausted {
                    routine,
                    requested: e.requested,
                    free: e.free,
                    largest: e.largest,
                    heap_size: rt.heap_len,
                }),
            }
        }
    };
    rt.barrier_all();
    r
}

/// Bytes of the symmetric heap not allocated (`shmemx_heap_free`-style query).
pub fn heap_free() -> Result<usize> {
    let rt = rt("shmemx_heap_free")?;
    let free = rt
        .heap
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .free_bytes();
    Ok(free)
}

/// Size of the symmetric heap (`SHMEM_SYMMETRIC_SIZE`, rounded to pages).
pub fn heap_size() -> Result<usize> {
    let rt = rt("shmemx_heap_size")?;
    let size = rt.heap.lock().unwrap_or_else(|e| e.into_inner()).size();
    Ok(size)
}
