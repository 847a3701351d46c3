//! Remote memory access: put, get, strided and non-blocking forms, on the default context.
//! Sizes are in bytes; typed faces multiply by the element size.
#![allow(unsafe_code)]

use crate::error::{Error, Result};
use crate::runtime::{rt, Runtime};
use crate::transport::{Route, SymAddr, Transport};

#[derive(Clone, Copy)]
pub(crate) enum Dir {
    Put,
    Get,
    PutNbi,
    GetNbi,
}

impl Runtime {
    /// Moves `len` bytes between local `local` and `remote` on `pe` in direction `dir`.
    ///
    /// # Safety
    /// `local` is readable (puts) or writable (gets) for `len` bytes.
    #[inline(always)]
    pub(crate) unsafe fn xfer(
        &self,
        routine: &'static str,
        dir: Dir,
        pe: usize,
        remote: SymAddr,
        local: *mut u8,
        len: usize,
    ) -> Result<()> {
        match self.route(routine, pe)? {
            // SAFETY: `remote` was range-checked by `sym`; the caller vouches for `local`.
            Route::Shm => unsafe {
                match dir {
                    Dir::Put => self.shm.put(pe, remote, local, len),
                    Dir::Get => self.shm.get(pe, local, remote, len),
                    Dir::PutNbi => self.shm.put_nbi(pe, remote, local, len),
                    Dir::GetNbi => self.shm.get_nbi(pe, local, remote, len),
                }
            },
            Route::None => unreachable!("route() rejects unreachable PEs"),
        }
        Ok(())
    }
}

#[inline(always)]
unsafe fn contiguous(
    routine: &'static str,
    dir: Dir,
    sym: *const u8,
    local: *mut u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    if nbytes == 0 {
        return Ok(());
    }
    let rt = rt(routine)?;
    let pe = rt.pe(routine, pe)?;
    let arg = if matches!(dir, Dir::Put | Dir::PutNbi) {
        "dest"
    } else {
        "source"
    };
    let remote = rt.sym(routine, arg, sym as usize, nbytes)?;
    // SAFETY: forwarded caller contract on `local`.
    unsafe { rt.xfer(routine, dir, pe, remote, local, nbytes) }
}

/// `shmem_putmem`: copies `nbytes` from local `src` to symmetric `dest` on `pe`; returns
/// when `src` may be reused.
///
/// # Safety
/// `src` is readable for `nbytes` bytes.
#[inline]
pub unsafe fn put(
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { contiguous(routine, Dir::Put, dest, src as *mut u8, nbytes, pe) }
}

/// `shmem_getmem`: copies `nbytes` from symmetric `src` on `pe` to local `dest`.
///
/// # Safety
/// `dest` is writable for `nbytes` bytes.
#[inline]
pub unsafe fn get(
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { contiguous(routine, Dir::Get, src, dest, nbytes, pe) }
}

/// `shmem_putmem_nbi`: like [`put`], but `src` may be reused only after `quiet`.
///
/// # Safety
/// `src` is readable for `nbytes` bytes and unmodified until the next quiet.
#[inline]
pub unsafe fn put_nbi(
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { contiguous(routine, Dir::PutNbi, dest, src as *mut u8, nbytes, pe) }
}

/// `shmem_getmem_nbi`: like [`get`], but the data is in `dest` only after `quiet`.
///
/// # Safety
/// `dest` is writable for `nbytes` bytes until the next quiet.
#[inline]
pub unsafe fn get_nbi(
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { contiguous(routine, Dir::GetNbi, src, dest, nbytes, pe) }
}

/// Byte extent `[lo, hi)` relative to the first element of `n` elements of `size` bytes
/// at a stride of `stride` elements.
fn extent(
    routine: &'static str,
    arg: &'static str,
    stride: isize,
    n: usize,
    size: usize,
) -> Result<(isize, isize)> {
    let bad = Error::InvalidArgument {
        routine,
        arg,
        reason: "stride times element count overflows",
    };
    let last = (n as isize - 1)
        .checked_mul(stride)
        .and_then(|e| e.checked_mul(size as isize))
        .ok_or(bad)?;
    Ok((last.min(0), last.max(0) + size as isize))
}

/// `shmem_iput`/`shmem_iget`: `nelems` elements of `size` bytes, every `dst`-th element of
/// the destination from every `sst`-th of the source (strides in elements).
///
/// # Safety
/// The local side's elements (source for puts, destination for gets) are valid.
#[allow(clippy::too_many_arguments)]
pub unsafe fn strided(
    routine: &'static str,
    is_put: bool,
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    pe: i64,
) -> Result<()> {
    if nelems == 0 || size == 0 {
        return Ok(());
    }
    let rt = rt(routine)?;
    let pe = rt.pe(routine, pe)?;
    let (sym, sym_stride, arg) = if is_put {
        (dest as usize, dst, "dest")
    } else {
        (src as usize, sst, "source")
    };
    let (lo, hi) = extent(
        routine,
        if is_put { "dst" } else { "sst" },
        sym_stride,
        nelems,
        size,
    )?;
    let remote = rt.sym(
        routine,
        arg,
        sym.wrapping_add_signed(lo),
        (hi - lo) as usize,
    )?;
    let base = remote.off as isize - lo;
    for i in 0..nelems as isize {
        let r = SymAddr {
            seg: remote.seg,
            off: (base + i * sym_stride * size as isize) as usize,
        };
        // SAFETY: every element lies inside the range checked above; the local element
        // is valid by the caller's contract.
        unsafe {
            if is_put {
                rt.xfer(
                    routine,
                    Dir::Put,
                    pe,
                    r,
                    src.offset(i * sst * size as isize) as *mut u8,
                    size,
                )?;
            } else {
                rt.xfer(
                    routine,
                    Dir::Get,
                    pe,
                    r,
                    dest.offset(i * dst * size as isize),
                    size,
                )?;
            }
        }
    }
    Ok(())
}

/// `shmem_ibput`/`shmem_ibget` (OpenSHMEM 1.6): `nblocks` blocks of `bsize` elements,
/// destination blocks every `dst` elements, source blocks every `sst` elements.
///
/// # Safety
/// As [`strided`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn blocked(
    routine: &'static str,
    is_put: bool,
    dest: *mut u8,
    src: *const u8,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    size: usize,
    pe: i64,
) -> Result<()> {
    let bytes = bsize.checked_mul(size).ok_or(Error::InvalidArgument {
        routine,
        arg: "bsize",
        reason: "block size overflows",
    })?;
    for b in 0..nblocks as isize {
        let d = dest.wrapping_offset(b * dst * size as isize);
        let s = src.wrapping_offset(b * sst * size as isize);
        // SAFETY: forwarded contract; each block is range-checked by put/get.
        unsafe {
            if is_put {
                put(routine, d, s, bytes, pe)?;
            } else {
                get(routine, d, s, bytes, pe)?;
            }
        }
    }
    Ok(())
}
