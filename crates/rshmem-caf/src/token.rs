//! Coarray registration: tokens and the symmetric memory behind them.
//!
//! Static and allocatable coarrays are registered collectively, in the same order on
//! every image, so each is one block of the symmetric heap at the same address on every
//! image: the token holds that address, and a remote element is the local address of the
//! same element, sent to the owning image's PE.

use std::ffi::c_void;
use std::sync::Mutex;

use crate::desc::DescPtr;
use crate::stat_errmsg::{unsupported, CafError, CafResult, STAT_ERROR};

/// `CAF_REGTYPE_*` (libcaf.h).
pub(crate) mod kind {
    /// A SAVEd or main-program coarray.
    pub(crate) const COARRAY_STATIC: i32 = 0;
    /// `allocate(a(n)[*])`.
    pub(crate) const COARRAY_ALLOC: i32 = 1;
    /// A lock coarray (`size` locks).
    pub(crate) const LOCK_STATIC: i32 = 2;
    /// An allocatable lock coarray.
    pub(crate) const LOCK_ALLOC: i32 = 3;
    /// One CRITICAL construct.
    pub(crate) const CRITICAL: i32 = 4;
    /// An event coarray (`size` events).
    pub(crate) const EVENT_STATIC: i32 = 5;
    /// An allocatable event coarray.
    pub(crate) const EVENT_ALLOC: i32 = 6;
    /// The token of an allocatable component, without memory.
    pub(crate) const REGISTER_ONLY: i32 = 7;
    /// Memory for an allocatable component's token (not collective).
    pub(crate) const ALLOCATE_ONLY: i32 = 8;
}

/// Addresses of the live tokens. gfortran 12 leaves the token of an allocatable
/// component of a non-allocatable component uninitialized (it registers no kind 7 for
/// it), so kind 8 and deregistration must tell a token of ours from stack garbage.
static LIVE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<usize>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Leaks `t` into a `caf_token_t`, remembered as live.
pub(crate) fn new_token(t: Token) -> *mut c_void {
    let raw = Box::into_raw(Box::new(t));
    live().push(raw as usize);
    raw.cast()
}

/// Whether `raw` is a token [`new_token`] made and nothing has freed.
pub(crate) fn is_live(raw: *mut c_void) -> bool {
    live().contains(&(raw as usize))
}

/// Coarrays of at least this many bytes start [`PLACE_AT`] bytes past a page boundary.
///
/// glibc's `malloc` returns large blocks (its `mmap`ed ones) 16 bytes past a page, and a
/// `memmove` whose destination lies up to about 1 KiB *ahead* of its source modulo 4 KiB,
/// at other than a multiple of 64 bytes, runs at 0.6-0.8x on the CPUs measured (store to
/// load aliasing; docs/decisions/0041-caf-large-coarray-placement.md). Placed at the same page
/// offset, a put or get between a large allocatable and a coarray is the fast case both
/// ways; any other source is no worse off than at the heap's own alignment. The cost is
/// at most a page per coarray, so small coarrays keep the heap's 64-byte alignment.
pub(crate) const PLACE_FROM: usize = 32 << 10;
/// The page offset of a large coarray (see [`PLACE_FROM`]).
pub(crate) const PLACE_AT: usize = 0x10;
const PAGE: usize = 4096;

/// Bytes per lock and per event: one 64-bit word each.
pub(crate) const WORD: usize = 8;

/// What a `caf_token_t` points to.
#[derive(Debug)]
pub(crate) struct Token {
    /// Symmetric address of the coarray's first byte on every image (0: no memory).
    pub base: usize,
    /// Bytes registered (0: unknown or none).
    pub size: usize,
    /// Start of the symmetric block `base` lies in, to free (0: `base` itself); see
    /// [`PLACE_FROM`].
    pub block: usize,
    /// An allocatable coarray's descriptor (the variable's own, which gfortran fills in
    /// after registering): its bounds are every image's, since ALLOCATE is collective
    /// with equal bounds. 0 for other coarrays.
    pub desc: usize,
    /// An allocatable component's token (kinds 7 and 8): its memory, when allocated,
    /// comes from this image's component heap (`byref.rs`), not collectively.
    pub comp: bool,
}

/// The token behind a `caf_token_t`.
///
/// # Safety
/// `t` was returned by [`register`] and not deregistered.
pub(crate) unsafe fn token<'a>(routine: &'static str, t: *mut c_void) -> &'a Token {
    if t.is_null() {
        crate::stat_errmsg::fatal(routine, "null coarray token (coarray not allocated?)");
    }
    // SAFETY: contract.
    let t = unsafe { &*(t as *const Token) };
    if t.base == 0 {
        crate::stat_errmsg::fatal(
            routine,
            "the allocatable component behind this coarray token is not allocated",
        );
    }
    t
}

/// `_gfortran_caf_register`: allocates `size` bytes (locks, events: `size` elements),
/// stores the token and the local address (`desc->base_addr`).
///
/// # Safety
/// `token` is writable; `desc` points at a descriptor header.
pub(crate) unsafe fn register(
    routine: &'static str,
    size: usize,
    ty: i32,
    token: *mut *mut c_void,
    desc: DescPtr,
) -> CafResult {
    let bytes = match ty {
        kind::COARRAY_STATIC | kind::COARRAY_ALLOC => size,
        kind::LOCK_STATIC
        | kind::LOCK_ALLOC
        | kind::CRITICAL
        | kind::EVENT_STATIC
        | kind::EVENT_ALLOC => size
            .checked_mul(WORD)
            .ok_or_else(|| CafError::new(STAT_ERROR, format!("{size} locks or events overflow")))?,
        kind::REGISTER_ONLY => {
            let t = new_token(Token {
                base: 0,
                size: 0,
                block: 0,
                desc: 0,
                comp: true,
            });
            // SAFETY: contract.
            unsafe { token.write(t) };
            return Ok(());
        }
        kind::ALLOCATE_ONLY => {
            // SAFETY: forwarded contract.
            return unsafe { crate::byref::allocate(routine, size, token, desc) };
        }
        _ => unsupported(routine, &format!("coarray registration of kind {ty}")),
    };
    // Zero-sized coarrays still need an address that is not null (ALLOCATED() reads it).
    // Over the current team (symmetric within it).
    let (p, block) = if bytes >= PLACE_FROM {
        let block = crate::team::sym_calloc(routine, bytes + PAGE)?;
        // The same shift on every image: the block's address is symmetric.
        let shift = (PAGE + PLACE_AT - block as usize % PAGE) % PAGE;
        (block.wrapping_add(shift), block as usize)
    } else {
        (crate::team::sym_calloc(routine, bytes.max(1))?, 0)
    };
    let t = new_token(Token {
        base: p as usize,
        size: bytes,
        block,
        desc: if ty == kind::COARRAY_ALLOC {
            desc as usize
        } else {
            0
        },
        comp: false,
    });
    // SAFETY: contract.
    unsafe {
        (*desc).base_addr = p;
        token.write(t);
    }
    Ok(())
}

/// `_gfortran_caf_deregister`: frees the coarray (collective) and clears the token.
///
/// # Safety
/// `token` points at a token from [`register`] (or null).
pub(crate) unsafe fn deregister(
    routine: &'static str,
    token: *mut *mut c_void,
    ty: i32,
) -> CafResult {
    // SAFETY: contract.
    let raw = unsafe { token.read() };
    if raw.is_null() || !is_live(raw) {
        // Never registered (see [`LIVE`]): nothing to free.
        // SAFETY: contract.
        unsafe { token.write(std::ptr::null_mut()) };
        return Ok(());
    }
    // SAFETY: `raw` came from `Box::into_raw` in `register`.
    let t = unsafe { &mut *(raw as *mut Token) };
    if t.comp {
        // Not collective: the component's memory goes back to this image's heap.
        crate::byref::free(t);
        if ty != 0 {
            // CAF_DEREGTYPE_COARRAY_DEALLOCATE_ONLY: the token stays for the next ALLOCATE.
            return Ok(());
        }
    } else if ty != 0 {
        unsupported(
            routine,
            "deallocating only the memory of a coarray that is not a component",
        );
    } else if t.base != 0 {
        let block = if t.block != 0 { t.block } else { t.base };
        crate::team::sym_free(routine, block as *mut u8)?;
    }
    // SAFETY: as above; nothing uses the token after this (the compiler clears it).
    unsafe {
        live().retain(|&x| x != raw as usize);
        drop(Box::from_raw(raw as *mut Token));
        token.write(std::ptr::null_mut());
    }
    Ok(())
}
