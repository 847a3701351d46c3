//! Communication contexts: the `shmem_ctx_t` handles this face hands out (checked on
//! every use), their creation, destruction and team, context sessions, and the thread
//! identity (`shmemx_register_gettid`) a private context belongs to.

use core::ffi::{c_int, c_long, c_void};
use std::collections::BTreeMap;
use std::mem::align_of;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use rshmem_core::{Ctx, Error, Result};

use super::checks::debug;
use super::errors::{invalid, ok};
use super::teams::{team, TeamHandle, H_WORLD};

/// `shmem_ctx_session_config_t` (OpenSHMEM 1.6).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct SessionConfigC {
    /// Expected RMA calls in the session (a hint).
    pub total_ops: usize,
}

/// `SHMEM_CTX_SESSION_BATCH`.
const SESSION_BATCH: c_long = 1;
/// `SHMEM_CTX_SESSION_TOTAL_OPS`.
const SESSION_TOTAL_OPS: c_long = 1;

/// `shmem_ctx_t`: null (`SHMEM_CTX_INVALID`), [`H_CTX_DEFAULT`] (`SHMEM_CTX_DEFAULT`),
/// or the address of a context made by `shmem_ctx_create`/`shmem_team_create_ctx`.
pub type CtxH = *mut c_void;

/// The value of `SHMEM_CTX_DEFAULT`: a sentinel, since the core's default context is a
/// static whose address is not a constant this crate can export.
pub(crate) const H_CTX_DEFAULT: usize = 1;

// shmem.h writes the option values as literals: they must be the core's.
const _: () = assert!(
    rshmem_core::ctx::SERIALIZED == 1
        && rshmem_core::ctx::PRIVATE == 2
        && rshmem_core::ctx::NOSTORE == 4
);

/// `shmemx_register_gettid`'s function: the program's name for the calling thread.
pub type GettidFn = Option<unsafe extern "C" fn() -> u64>;

/// The registered [`GettidFn`] as an address (0: none).
static GETTID: AtomicUsize = AtomicUsize::new(0);

/// `shmemx_register_gettid` (Sandia OpenSHMEM): from now on threads are told apart by
/// `f` (NULL: by the runtime's own thread ids again). May be called before `shmem_init`.
pub(crate) fn register_gettid(f: GettidFn) {
    GETTID.store(f.map_or(0, |f| f as usize), Ordering::Release);
}

/// A thread, as the library tells threads apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tid {
    /// The runtime's own id.
    Own(ThreadId),
    /// The value of the program's registered function.
    Program(u64),
}

/// The calling thread's [`Tid`]: the registered function's value if there is one.
fn current_tid() -> Tid {
    match GETTID.load(Ordering::Acquire) {
        0 => Tid::Own(std::thread::current().id()),
        f => {
            // SAFETY: a non-zero value was stored from a `unsafe extern "C" fn() -> u64`
            // by `register_gettid`.
            let f: unsafe extern "C" fn() -> u64 = unsafe { std::mem::transmute(f) };
            // SAFETY: the program registered it to be called from any of its threads.
            Tid::Program(unsafe { f() })
        }
    }
}

/// What the C face remembers of a context it made.
struct CtxInfo {
    /// The `shmem_team_t` it was made from (for `shmem_ctx_get_team`).
    team: usize,
    /// The creating thread of a `SHMEM_CTX_PRIVATE` context (checked under
    /// `SHMEM_DEBUG`).
    owner: Option<Tid>,
}

/// Every context address this face has handed out. The core pools context objects and
/// never frees them, so an address stays a context object (live or not) for good, and
/// the map stays as small as the largest number of contexts alive at once.
static CTXS: Mutex<BTreeMap<usize, CtxInfo>> = Mutex::new(BTreeMap::new());

fn ctxs() -> MutexGuard<'static, BTreeMap<usize, CtxInfo>> {
    CTXS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The context behind a handle of an RMA, AMO or signal routine. `SHMEM_CTX_INVALID`, a
/// misaligned value and a destroyed context end the job naming `ctx` (always checked: a
/// compare and a load of a word the operation reads anyway); under `SHMEM_DEBUG` the
/// handle must also be one this face made, and a private context's creating thread
/// must be the caller.
#[inline(always)]
pub(crate) fn ctx(routine: &'static str, h: CtxH) -> &'static Ctx {
    if h as usize == H_CTX_DEFAULT {
        Ctx::default_ctx()
    } else {
        created(routine, h)
    }
}

/// [`ctx`] for the routines on which `SHMEM_CTX_INVALID` is a no-op (fence, quiet):
/// `None` for it.
#[inline(always)]
pub(crate) fn ctx_opt(routine: &'static str, h: CtxH) -> Option<&'static Ctx> {
    if h.is_null() {
        None
    } else {
        Some(ctx(routine, h))
    }
}

/// A handle other than `SHMEM_CTX_DEFAULT`, checked as [`ctx`] says.
#[inline]
fn created(routine: &'static str, h: CtxH) -> &'static Ctx {
    if h.is_null() {
        invalid(routine, "ctx", "is SHMEM_CTX_INVALID");
    }
    if !(h as usize).is_multiple_of(align_of::<Ctx>()) {
        invalid(routine, "ctx", "is not a context handle");
    }
    if debug() {
        check_created(routine, h as usize);
    }
    // SAFETY: a non-null, aligned handle is a context object made by `shmem_ctx_create`
    // or `shmem_team_create_ctx` (the registry says so under SHMEM_DEBUG; anything else
    // is undefined behaviour in the spec); the core never frees context objects, so
    // even a destroyed one may be read.
    let c = unsafe { &*h.cast::<Ctx>() };
    if !c.is_live() {
        invalid(
            routine,
            "ctx",
            "was destroyed (by shmem_ctx_destroy, or with its team)",
        );
    }
    c
}

#[cold]
fn check_created(routine: &'static str, a: usize) {
    let owner = ctxs().get(&a).map(|i| i.owner);
    match owner {
        None => invalid(
            routine,
            "ctx",
            "is not a context handle (no context was created at this address)",
        ),
        Some(Some(t)) if t != current_tid() => invalid(
            routine,
            "ctx",
            "is a SHMEM_CTX_PRIVATE context of another thread",
        ),
        Some(_) => {}
    }
}

/// Stores a new context's handle in `*out`; returns the C status (0, or nonzero with
/// `*out = SHMEM_CTX_INVALID`). Creation failures are not errors (spec): they are
/// reported on stderr under `SHMEM_DEBUG` only.
unsafe fn make_ctx(
    routine: &'static str,
    out: *mut CtxH,
    team: usize,
    options: c_long,
    make: impl FnOnce() -> Result<rshmem_core::CtxHandle>,
) -> c_int {
    if out.is_null() {
        // Nowhere to return a handle: create nothing.
        if debug() {
            eprintln!("rshmem: {routine}: argument ctx: is a null pointer");
        }
        return -1;
    }
    let (h, rc) = match make() {
        Ok(c) => {
            let owner = (options & rshmem_core::ctx::PRIVATE != 0).then(current_tid);
            ctxs().insert(c.as_ptr() as usize, CtxInfo { team, owner });
            (c.as_ptr().cast::<c_void>(), 0)
        }
        Err(e) => {
            if debug() {
                eprintln!("rshmem: {e}");
            }
            (std::ptr::null_mut(), -1)
        }
    };
    // SAFETY: `out` points at a shmem_ctx_t (spec).
    unsafe { out.write(h) };
    rc
}

/// `shmem_ctx_create`.
pub(crate) unsafe fn ctx_create(routine: &'static str, options: c_long, out: *mut CtxH) -> c_int {
    // SAFETY: forwarded contract on `out`.
    unsafe {
        make_ctx(routine, out, H_WORLD, options, || {
            rshmem_core::ctx::create(options)
        })
    }
}

/// `shmem_team_create_ctx`: fails (nonzero, `SHMEM_CTX_INVALID`) for
/// `SHMEM_TEAM_INVALID`.
pub(crate) unsafe fn team_create_ctx(
    routine: &'static str,
    h: TeamHandle,
    options: c_long,
    out: *mut CtxH,
) -> c_int {
    let t = team(routine, h);
    // SAFETY: forwarded contract on `out`.
    unsafe {
        make_ctx(routine, out, h as usize, options, || match t {
            Some(t) => rshmem_core::team::create_ctx(&t, options),
            None => Err(Error::InvalidArgument {
                routine,
                arg: "team",
                reason: "is SHMEM_TEAM_INVALID",
            }),
        })
    }
}

/// `shmem_ctx_destroy`: a no-op for `SHMEM_CTX_INVALID` (spec); `SHMEM_CTX_DEFAULT` and
/// destroyed contexts end the job.
pub(crate) fn ctx_destroy(routine: &'static str, h: CtxH) {
    match h as usize {
        0 => {}
        H_CTX_DEFAULT => invalid(
            routine,
            "ctx",
            "is SHMEM_CTX_DEFAULT, which cannot be destroyed",
        ),
        _ => {
            created(routine, h);
            let c = NonNull::new(h.cast::<Ctx>()).expect("checked non-null");
            // SAFETY: a live context made by this face (checked by `created`); the
            // caller uses it no more (spec).
            ok(unsafe { rshmem_core::ctx::destroy(c) })
        }
    }
}

/// `shmem_ctx_get_team`: nonzero and `SHMEM_TEAM_INVALID` for `SHMEM_CTX_INVALID`.
pub(crate) unsafe fn ctx_get_team(routine: &'static str, h: CtxH, out: *mut TeamHandle) -> c_int {
    let (t, rc) = match h as usize {
        0 => (0, -1),
        H_CTX_DEFAULT => (H_WORLD, 0),
        a => {
            created(routine, h);
            match ctxs().get(&a) {
                Some(i) => (i.team, 0),
                None => (0, -1),
            }
        }
    };
    if out.is_null() {
        invalid(routine, "team", "is a null pointer");
    }
    // SAFETY: `out` points at a shmem_team_t (spec).
    unsafe { out.write(t as TeamHandle) };
    rc
}

/// `shmem_ctx_session_start` (OpenSHMEM 1.6). Sessions are hints: on the node every
/// small operation already completes at once, so there is nothing to batch; the
/// arguments are still checked.
pub(crate) fn session_start(
    routine: &'static str,
    h: CtxH,
    options: c_long,
    config: *const SessionConfigC,
    mask: c_long,
) {
    if ctx_opt(routine, h).is_none() {
        return;
    }
    if options & !SESSION_BATCH != 0 {
        invalid(
            routine,
            "options",
            "unknown option bits (valid: SHMEM_CTX_SESSION_BATCH)",
        );
    }
    if mask & !SESSION_TOTAL_OPS != 0 {
        invalid(
            routine,
            "config_mask",
            "unknown bits (valid: SHMEM_CTX_SESSION_TOTAL_OPS)",
        );
    }
    if mask != 0 && config.is_null() {
        invalid(routine, "config", "is NULL but config_mask selects fields");
    }
}

/// `shmem_ctx_session_stop` (OpenSHMEM 1.6): ends the hint; completes nothing.
pub(crate) fn session_stop(routine: &'static str, h: CtxH) {
    let _ = ctx_opt(routine, h);
}
