//! Memory management: collective allocation, freeing and resizing of symmetric blocks.

use std::mem::{align_of, size_of};
use std::ptr::NonNull;

use rshmem_core::memory;

use super::Region;
use crate::error::{Error, Result};
use crate::remote::Remote;

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
        rshmem_core::sync::barrier_all_uncounted()?;
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
        rshmem_core::sync::barrier_all_uncounted()?;
    }
    Ok(())
}
