//! Coarray registration: tokens and the symmetric memory behind them.
//!
//! Static and allocatable coarrays are registered collectively, in the same order on
//! every image, so each is one block of the symmetric heap at the same address on every
//! image: the token holds that address, and a remote element is the local address of the
//! same element, sent to the owning image's PE.

use std::ffi::c_void;

use crate::desc::DescPtr;
use crate::stat::{unsupported, CafError, CafResult, STAT_ERROR};

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

/// Bytes per lock and per event: one 64-bit word each.
pub(crate) const WORD: usize = 8;

/// What a `caf_token_t` points to.
#[derive(Debug)]
pub(crate) struct Token {
    /// Symmetric address of the coarray's first byte on every image (0: no memory).
    pub base: usize,
}

/// The token behind a `caf_token_t`.
///
/// # Safety
/// `t` was returned by [`register`] and not deregistered.
pub(crate) unsafe fn token<'a>(routine: &'static str, t: *mut c_void) -> &'a Token {
    if t.is_null() {
        crate::stat::fatal(routine, "null coarray token (coarray not allocated?)");
    }
    // SAFETY: contract.
    let t = unsafe { &*(t as *const Token) };
    if t.base == 0 {
        unsupported(
            routine,
            "access to an allocatable component of a derived-type coarray",
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
            let t = Box::new(Token { base: 0 });
            // SAFETY: contract.
            unsafe { token.write(Box::into_raw(t).cast()) };
            return Ok(());
        }
        kind::ALLOCATE_ONLY => unsupported(
            routine,
            "allocating an allocatable component of a derived-type coarray",
        ),
        _ => unsupported(routine, &format!("coarray registration of kind {ty}")),
    };
    // Zero-sized coarrays still need an address that is not null (ALLOCATED() reads it).
    // Over the current team (symmetric within it).
    let p = crate::team::sym_calloc(routine, bytes.max(1))?;
    let t = Box::new(Token { base: p as usize });
    // SAFETY: contract.
    unsafe {
        (*desc).base_addr = p;
        token.write(Box::into_raw(t).cast());
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
    if raw.is_null() {
        return Ok(());
    }
    // SAFETY: `raw` came from `Box::into_raw` in `register`.
    let t = unsafe { &*(raw as *const Token) };
    if ty != 0 && t.base != 0 {
        unsupported(
            routine,
            "deallocating an allocatable component of a derived-type coarray",
        );
    }
    if t.base != 0 {
        crate::team::sym_free(routine, t.base as *mut u8)?;
    }
    // SAFETY: as above; nothing uses the token after this (the compiler clears it).
    unsafe {
        drop(Box::from_raw(raw as *mut Token));
        token.write(std::ptr::null_mut());
    }
    Ok(())
}
