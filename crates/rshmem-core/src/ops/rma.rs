//! Remote memory access: put, get, strided and non-blocking forms, on a context (pass
//! [`Ctx::default_ctx`] for the default one).
//! Sizes are in bytes; typed faces multiply by the element size.

use crate::ctx::Ctx;
use crate::error::{At, Error, Result};
use crate::profile::{self, Family, Pc};
use crate::request::{self, ReqHandle};
use crate::runtime::rt;
pub(crate) use crate::transport::Dir;
use crate::transport::{SymAddr, Xfer};

/// How a contiguous transfer completes.
#[derive(Clone, Copy)]
enum Mode {
    Blocking,
    /// Blocking, and complete at the target on return.
    Complete,
    /// At the context's quiet.
    Nbi,
}

/// A contiguous transfer as a routine states it: the peer's symmetric address and PE
/// (numbered in the context's team), unchecked, and this PE's side.
#[derive(Clone, Copy)]
struct Access {
    routine: &'static str,
    dir: Dir,
    /// The symmetric side (the destination of a put, the source of a get).
    sym: *const u8,
    /// This PE's side: readable (put) or writable (get) for `nbytes` bytes.
    local: *mut u8,
    nbytes: usize,
    pe: i64,
}

impl Access {
    /// A put of `nbytes` from `src` to symmetric `dest` on `pe`.
    fn put(routine: &'static str, dest: *mut u8, src: *const u8, nbytes: usize, pe: i64) -> Self {
        Access {
            routine,
            dir: Dir::Put,
            sym: dest,
            local: src.cast_mut(),
            nbytes,
            pe,
        }
    }

    /// A get of `nbytes` from symmetric `src` on `pe` into `dest`.
    fn get(routine: &'static str, dest: *mut u8, src: *const u8, nbytes: usize, pe: i64) -> Self {
        Access {
            routine,
            dir: Dir::Get,
            sym: src,
            local: dest,
            nbytes,
            pe,
        }
    }

    /// The transfer, once its PE and symmetric side are checked.
    fn checked(self, ctx: &Ctx, pe: usize, remote: SymAddr) -> Xfer<'_> {
        Xfer {
            ctx: ctx.state(),
            dir: self.dir,
            pe,
            remote,
            local: self.local,
            len: self.nbytes,
        }
    }

    /// The argument naming the symmetric side, for errors.
    fn sym_arg(&self, explicit: bool) -> &'static str {
        match (self.dir, explicit) {
            (Dir::Put, false) => "dest",
            (Dir::Put, true) => "target",
            (Dir::Get, _) => "source",
        }
    }
}

/// A contiguous transfer, counted in its family when profiling is on.
#[inline(always)]
unsafe fn contiguous(ctx: &Ctx, a: Access, mode: Mode) -> Result<()> {
    let (fam, pc) = match (a.dir, mode) {
        (Dir::Put, Mode::Blocking | Mode::Complete) => (Family::Put, Pc::Write),
        (Dir::Get, Mode::Blocking | Mode::Complete) => (Family::Get, Pc::Read),
        (Dir::Put, Mode::Nbi) => (Family::PutNbi, Pc::Write),
        (Dir::Get, Mode::Nbi) => (Family::GetNbi, Pc::Read),
    };
    crate::profile::counted!(
        fam,
        a.nbytes,
        ctx,
        pc,
        // SAFETY: forwarded contract.
        unsafe { transfer(ctx, a, mode) }
    )
}

#[inline(always)]
unsafe fn transfer(ctx: &Ctx, a: Access, mode: Mode) -> Result<()> {
    if a.nbytes == 0 {
        return Ok(());
    }
    let routine = a.routine;
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, a.pe)?;
    let remote = rt.sym(routine, a.sym_arg(false), a.sym as usize, a.nbytes)?;
    // SAFETY: forwarded caller contract on `local`.
    unsafe {
        match mode {
            Mode::Blocking | Mode::Complete => {
                // A copy into a mapped segment is complete on return; before the Xfer is
                // built (see `copy_mapped`).
                if rt.fabric.copy_mapped(a.dir, pe, remote, a.local, a.nbytes) {
                    return Ok(());
                }
                rt.fabric.xfer(a.checked(ctx, pe, remote)).at(routine)?;
                match mode {
                    Mode::Complete => ctx.quiet(rt),
                    _ => Ok(()),
                }
            }
            Mode::Nbi => {
                let counter = || ctx.completion();
                if rt
                    .fabric
                    .submit_mapped(a.dir, pe, remote, a.local, a.nbytes, counter)
                {
                    return Ok(());
                }
                rt.fabric
                    .xfer_nbi(a.checked(ctx, pe, remote), counter, None)
                    .at(routine)
            }
        }
    }
}

/// `shmem_ctx_putmem`: copies `nbytes` from local `src` to symmetric `dest` on `pe` (a PE
/// of the context's team); returns when `src` may be reused.
///
/// # Safety
/// `src` is readable for `nbytes` bytes.
#[inline(always)]
pub unsafe fn ctx_put(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        contiguous(
            ctx,
            Access::put(routine, dest, src, nbytes, pe),
            Mode::Blocking,
        )
    }
}

/// A blocking put that is complete at `pe` when it returns (visible to its loads), as
/// Coarray Fortran's coindexed assignment is: [`ctx_put`], then what
/// [`ctx_complete_puts`](crate::order::ctx_complete_puts) does, which costs nothing more
/// when `pe` is reached by load and store.
///
/// # Safety
/// As [`ctx_put`].
#[inline(always)]
pub unsafe fn ctx_put_complete(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        contiguous(
            ctx,
            Access::put(routine, dest, src, nbytes, pe),
            Mode::Complete,
        )
    }
}

/// `shmem_ctx_getmem`: copies `nbytes` from symmetric `src` on `pe` to local `dest`.
///
/// # Safety
/// `dest` is writable for `nbytes` bytes.
#[inline(always)]
pub unsafe fn ctx_get(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        contiguous(
            ctx,
            Access::get(routine, dest, src, nbytes, pe),
            Mode::Blocking,
        )
    }
}

/// `shmem_ctx_putmem_nbi`: like [`ctx_put`], but `src` may be reused only after the
/// context's quiet.
///
/// # Safety
/// `src` is readable for `nbytes` bytes and unmodified until the context's next quiet.
#[inline(always)]
pub unsafe fn ctx_put_nbi(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { contiguous(ctx, Access::put(routine, dest, src, nbytes, pe), Mode::Nbi) }
}

/// `shmem_ctx_getmem_nbi`: like [`ctx_get`], but the data is in `dest` only after the
/// context's quiet.
///
/// # Safety
/// `dest` is writable for `nbytes` bytes, and neither read nor written, until the
/// context's next quiet.
#[inline(always)]
pub unsafe fn ctx_get_nbi(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe { contiguous(ctx, Access::get(routine, dest, src, nbytes, pe), Mode::Nbi) }
}

/// An explicit non-blocking transfer: counted in the request in `slot` (a request
/// object is allocated only for an engine transfer), completed only by its test or wait.
#[inline]
unsafe fn nbe(ctx: &Ctx, a: Access, slot: &mut Option<ReqHandle>) -> Result<()> {
    let routine = a.routine;
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, a.pe)?;
    request::check_slot(routine, slot)?;
    if a.nbytes == 0 {
        request::settle(slot);
        return Ok(());
    }
    let remote = rt.sym(routine, a.sym_arg(true), a.sym as usize, a.nbytes)?;
    // SAFETY: a handle in the slot is live (the caller's contract).
    let counter = || unsafe { request::ensure(rt, slot) }.completion();
    // SAFETY: forwarded contract; a request object is taken only for an engine transfer,
    // and it is released only once complete, so it outlives its transfers.
    unsafe {
        rt.fabric
            .xfer_nbi(a.checked(ctx, pe, remote), counter, None)
            .at(routine)?
    };
    // Completed at once (or joined a live request): an empty slot gets the
    // always-complete request.
    request::settle(slot);
    Ok(())
}

/// `shmemx_ctx_putmem_nbe`: a put completed by the request in `slot` (allocated when
/// `None`; joined when live).
///
/// # Safety
/// `src` is readable for `nbytes` bytes and unmodified until the request completes; a
/// handle in `slot` is live.
#[inline]
pub unsafe fn put_nbe(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    crate::profile::counted!(
        Family::PutNbi,
        nbytes,
        ctx,
        Pc::Write,
        // SAFETY: forwarded contract.
        unsafe { nbe(ctx, Access::put(routine, dest, src, nbytes, pe), slot) }
    )
}

/// `shmemx_ctx_getmem_nbe`: a get completed by the request in `slot`.
///
/// # Safety
/// `dest` is writable for `nbytes` bytes and untouched until the request completes; a
/// handle in `slot` is live.
#[inline]
pub unsafe fn get_nbe(
    ctx: &Ctx,
    routine: &'static str,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    pe: i64,
    slot: &mut Option<ReqHandle>,
) -> Result<()> {
    crate::profile::counted!(
        Family::GetNbi,
        nbytes,
        ctx,
        Pc::Read,
        // SAFETY: forwarded contract.
        unsafe { nbe(ctx, Access::get(routine, dest, src, nbytes, pe), slot) }
    )
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

/// The shape of a strided transfer (`iput`/`ibput` and their gets): `count` blocks of
/// `block` elements of `size` bytes; the destination's blocks start every `dst` elements
/// and the source's every `sst` elements. The element-wise routines have blocks of one.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    /// The destination (symmetric for a put, local for a get).
    pub dest: *mut u8,
    /// The source (local for a put, symmetric for a get).
    pub src: *const u8,
    /// Elements from one destination block to the next.
    pub dst: isize,
    /// Elements from one source block to the next.
    pub sst: isize,
    /// Elements per block.
    pub block: usize,
    /// Blocks.
    pub count: usize,
    /// Bytes per element.
    pub size: usize,
}

/// `shmem_ctx_iput`/`shmem_ctx_iget` (one-element blocks) and `shmem_ctx_ibput`/
/// `shmem_ctx_ibget` (OpenSHMEM 1.6), `is_put` choosing: the blocks of `b` between this PE
/// and `pe`.
///
/// # Safety
/// The local side's elements (source for puts, destination for gets) are valid.
pub unsafe fn ctx_strided(
    ctx: &Ctx,
    routine: &'static str,
    is_put: bool,
    b: Blocks,
    pe: i64,
) -> Result<()> {
    // SAFETY: forwarded contract.
    unsafe {
        if b.block == 1 {
            elements(ctx, routine, is_put, b, pe)
        } else {
            blocks(ctx, routine, is_put, b, pe)
        }
    }
}

/// The profile family and counter of a blocking put or get.
fn blocking_family(is_put: bool) -> (Family, Pc) {
    if is_put {
        (Family::Put, Pc::Write)
    } else {
        (Family::Get, Pc::Read)
    }
}

/// [`ctx_strided`] of one-element blocks: one range check for all of them.
unsafe fn elements(
    ctx: &Ctx,
    routine: &'static str,
    is_put: bool,
    b: Blocks,
    pe: i64,
) -> Result<()> {
    let Blocks {
        dest,
        src,
        dst,
        sst,
        count: nelems,
        size,
        ..
    } = b;
    let (fam, pc) = blocking_family(is_put);
    let _timed = profile::scope(fam, nelems.saturating_mul(size), ctx, pc);
    if nelems == 0 || size == 0 {
        return Ok(());
    }
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, pe)?;
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
    let (dir, local, local_stride) = if is_put {
        (Dir::Put, src.cast_mut(), sst)
    } else {
        (Dir::Get, dest, dst)
    };
    let (rstep, lstep) = (sym_stride * size as isize, local_stride * size as isize);
    if let Some(p) = rt.fabric.ptr(pe, remote) {
        // Mapped: one loop of copies in a direction known at compile time.
        let first = p.wrapping_offset(-lo);
        // SAFETY: every element lies inside the range checked above; the local elements
        // are valid by the caller's contract.
        unsafe {
            match dir {
                Dir::Put => copy_each(Dir::Put, first, rstep, local, lstep, nelems, size),
                Dir::Get => copy_each(Dir::Get, first, rstep, local, lstep, nelems, size),
            }
        }
        return Ok(());
    }
    let first = remote.off as isize - lo;
    for i in 0..nelems as isize {
        let x = Xfer {
            ctx: ctx.state(),
            dir,
            pe,
            remote: SymAddr {
                seg: remote.seg,
                off: (first + i * rstep) as usize,
            },
            local: local.wrapping_offset(i * lstep),
            len: size,
        };
        // SAFETY: as above.
        unsafe { rt.fabric.xfer(x).at(routine)? };
    }
    Ok(())
}

/// Moves `n` elements of `size` bytes between a mapped peer's memory, one every `rstep`
/// bytes from `remote`, and this PE's, one every `lstep` bytes from `local`.
///
/// # Safety
/// Every element of both sides is valid for the move.
#[inline(always)]
unsafe fn copy_each(
    dir: Dir,
    remote: *mut u8,
    rstep: isize,
    local: *mut u8,
    lstep: isize,
    n: usize,
    size: usize,
) {
    for i in 0..n as isize {
        let (dst, src) = dir.sides(
            remote.wrapping_offset(i * rstep),
            local.wrapping_offset(i * lstep),
        );
        // SAFETY: the caller's contract.
        unsafe { crate::transport::shm::copy(src, dst, size) };
    }
}

/// [`ctx_strided`] of larger blocks: a contiguous transfer each.
unsafe fn blocks(ctx: &Ctx, routine: &'static str, is_put: bool, b: Blocks, pe: i64) -> Result<()> {
    let bytes = b.block.checked_mul(b.size).ok_or(Error::InvalidArgument {
        routine,
        arg: "bsize",
        reason: "block size overflows",
    })?;
    let (fam, pc) = blocking_family(is_put);
    // One call, counted once (not once per block).
    let _timed = profile::scope(fam, bytes.saturating_mul(b.count), ctx, pc);
    for k in 0..b.count as isize {
        let d = b.dest.wrapping_offset(k * b.dst * b.size as isize);
        let s = b.src.wrapping_offset(k * b.sst * b.size as isize);
        // SAFETY: forwarded contract; each block is range-checked by `transfer`.
        unsafe {
            let a = if is_put {
                Access::put(routine, d, s, bytes, pe)
            } else {
                Access::get(routine, d, s, bytes, pe)
            };
            transfer(ctx, a, Mode::Blocking)?;
        }
    }
    Ok(())
}
