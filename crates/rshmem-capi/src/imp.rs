//! The glue every generated entry point shares: panics and core errors become job
//! aborts naming the routine, `SHMEM_DEBUG=1` argument checks on local buffers, C
//! constants to core types, and team, context and request handles. No routine logic lives here: each helper
//! makes one call into `rshmem-core`.
// The C-facing types are `pub` because the exported entry points name them.
#![allow(unreachable_pub)]

use core::ffi::{c_char, c_int, c_long, c_void, CStr};
use std::collections::BTreeMap;
use std::mem::{align_of, size_of, MaybeUninit};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::thread::ThreadId;
use std::time::Instant;

use rshmem_core::coll::{self, Elem, ReduceOp};
use rshmem_core::runtime::try_runtime;
use rshmem_core::team::{Team, TeamConfig};
use rshmem_core::{
    fatal, request, rma, AmoOp, Cmp, Ctx, Error, ReqHandle, RequestParams, Result, SignalOp,
    ThreadLevel, Word,
};

/// C `long double` on x86-64 (80-bit x87 value in 16 bytes): moved as bytes, combined
/// by reductions in C (`csrc/longdouble.c`). All-zero bytes are 0.0, hence `Default`.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
pub struct LongDouble([u8; 16]);

unsafe extern "C" {
    /// `acc[i] = acc[i] op src[i]` for `i < n`; op 0 min, 1 max, 2 sum, 3 prod.
    fn rshmem_longdouble_fold(op: c_int, acc: *mut LongDouble, src: *const LongDouble, n: usize);
}

impl Elem for LongDouble {
    fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
        let code = match op {
            ReduceOp::Min => 0,
            ReduceOp::Max => 1,
            ReduceOp::Sum => 2,
            ReduceOp::Prod => 3,
            _ => return Err("bitwise operators do not apply to long double"),
        };
        // SAFETY: both slices are valid for the shorter length, which is what is passed;
        // the C function touches nothing else.
        unsafe {
            rshmem_longdouble_fold(
                code,
                acc.as_mut_ptr(),
                src.as_ptr(),
                acc.len().min(src.len()),
            )
        };
        Ok(())
    }
}

/// `shmem_team_t`: null (`SHMEM_TEAM_INVALID`), one of the predefined handles below, or
/// a number standing for a team made by a split (see `Teams`; never dereferenced).
pub type TeamHandle = *mut c_void;
/// `shmem_team_config_t`.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct TeamConfigC {
    /// Contexts the team should support.
    pub num_contexts: c_int,
}

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

pub(crate) const H_WORLD: usize = 1;
pub(crate) const H_SHARED: usize = 2;
pub(crate) const H_HOST: usize = 3;
pub(crate) const H_LEADERS: usize = 4;

/// Runs an entry point's body; a panic ends the job cleanly, naming the routine.
#[inline(always)]
pub(crate) fn guard<R>(routine: &'static str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) if p.is::<Returned>() => std::panic::resume_unwind(p),
        Err(p) => panicked(routine, p),
    }
}

// ------------------------------------------------------- error-returning variants

/// An error on its way back to the `shmemx_try_` entry point that asked for it: the
/// payload of the unwind [`fail`] starts (through `resume_unwind`, which runs no panic
/// hook and prints nothing).
struct Returned(Error);

thread_local! {
    /// How many `shmemx_try_` calls this thread is inside (a nonzero count makes
    /// [`fail`] return the error instead of ending the job).
    static RETURNING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The text of this thread's last returned error (`shmemx_error_message`).
    static LAST_ERROR: std::cell::RefCell<std::ffi::CString> =
        std::cell::RefCell::new(std::ffi::CString::default());
}

/// Reports `e` the way the calling entry point asked: back to a `shmemx_try_` routine as
/// its error code, or, from every other routine, by ending the job with the message.
/// Sound to unwind from: every caller holds the core's `Err`, so the core is between
/// operations, and only the C face's own frames are left.
#[cold]
#[inline(never)]
pub(crate) fn fail(e: Error) -> ! {
    if RETURNING.with(|r| r.get()) > 0 {
        std::panic::resume_unwind(Box::new(Returned(e)));
    }
    fatal(&e)
}

include!(concat!(env!("OUT_DIR"), "/error_codes.rs"));

/// `SHMEMX_ERR_*`: the code of an error (the values of `shmemx.h`).
pub(crate) fn error_code(e: &Error) -> c_int {
    match e {
        Error::NotInitialized { .. } => ERR_NOT_INITIALIZED,
        Error::PeOutOfRange { .. } => ERR_PE,
        Error::NotSymmetric { .. } => ERR_NOT_SYMMETRIC,
        Error::Misaligned { .. } => ERR_MISALIGNED,
        Error::HeapExhausted { .. } => ERR_NO_MEMORY,
        Error::NotAllocated { .. } => ERR_NOT_ALLOCATED,
        Error::CollectiveMismatch { .. }
        | Error::CollectiveMismatchNamed { .. }
        | Error::CollectiveOrder { .. } => ERR_COLLECTIVE_MISMATCH,
        Error::InvalidArgument { .. } => ERR_INVALID_ARGUMENT,
        Error::PeerFinalized { .. }
        | Error::WaitAfterFinalize { .. }
        | Error::LockHolderFinalized { .. } => ERR_PE_FINALIZED,
        Error::PeFailed { .. } => ERR_PE_FAILED,
        Error::Transport { .. } => ERR_TRANSPORT,
        _ => ERR_OTHER,
    }
}

/// A `shmemx_try_` entry point: runs `f` (the plain routine's body) with errors returned
/// instead of fatal; writes its value to `out` when `out` is not null; returns 0 or the
/// `SHMEMX_ERR_*` code, and keeps the error's text for `shmemx_error_message`.
///
/// # Safety
/// `out` is null or writable.
pub(crate) unsafe fn returning<T>(
    routine: &'static str,
    out: *mut T,
    f: impl FnOnce() -> T,
) -> c_int {
    RETURNING.with(|r| r.set(r.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    RETURNING.with(|r| r.set(r.get() - 1));
    match r {
        Ok(v) => {
            if !out.is_null() {
                // SAFETY: `out` is writable (contract).
                unsafe { out.write(v) };
            }
            0
        }
        Err(p) => match p.downcast::<Returned>() {
            Ok(ret) => {
                let text = std::ffi::CString::new(ret.0.to_string()).unwrap_or_default();
                LAST_ERROR.with(|l| *l.borrow_mut() = text);
                error_code(&ret.0)
            }
            Err(p) => panicked(routine, p),
        },
    }
}

/// `shmemx_strerror`: the fixed text of an error code.
pub(crate) fn strerror(code: c_int) -> *const c_char {
    usize::try_from(code)
        .ok()
        .and_then(|i| ERROR_TEXTS.get(i))
        .map_or(c"unknown error code".as_ptr(), |t| t.as_ptr())
}

/// `shmemx_error_message`: the full text of this thread's last returned error (naming
/// the routine and argument), empty before the first; valid until this thread's next.
pub(crate) fn error_message() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

#[cold]
fn panicked(routine: &'static str, p: Box<dyn std::any::Any + Send>) -> ! {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    fatal(&format!("{routine}: internal error: {msg}"))
}

/// `shmemx_pcntr_*`: writes `pick` of `ctx`'s counters to `out` (checked non-null).
///
/// # Safety
/// `out` is null or writable.
pub(crate) unsafe fn pcntr<T>(
    routine: &'static str,
    h: CtxH,
    out: *mut T,
    pick: impl FnOnce(rshmem_core::profile::Pcntr) -> T,
) {
    ok(rshmem_core::runtime::try_runtime()
        .map(drop)
        .ok_or(rshmem_core::Error::NotInitialized { routine }));
    if out.is_null() {
        ok::<()>(Err(rshmem_core::Error::InvalidArgument {
            routine,
            arg: if routine.ends_with("_all") {
                "pcntr"
            } else {
                "cntr_value"
            },
            reason: "must not be NULL",
        }));
    }
    let c = ctx(routine, h);
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { out.write(pick(rshmem_core::profile::pcntr(c))) };
}

/// Runs a collective entry point's body, counted in the profile as `fam` with `bytes`.
#[inline(always)]
pub(crate) fn coll_counted<R>(
    fam: rshmem_core::profile::Family,
    bytes: usize,
    f: impl FnOnce() -> R,
) -> R {
    let t = rshmem_core::profile::now();
    let r = f();
    rshmem_core::profile::coll(fam, bytes, t);
    r
}

/// The size of what `p` points to (1 for `void`): a collective's element size for the
/// profiling counts.
#[inline]
pub(crate) fn elem_size<T>(_p: *const T) -> usize {
    core::mem::size_of::<T>()
}

/// The value, or a job abort with the core's message (which names routine and argument).
#[inline(always)]
pub(crate) fn ok<T>(r: Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fail(e),
    }
}

#[cold]
fn invalid(routine: &'static str, arg: &'static str, reason: &'static str) -> ! {
    fail(Error::InvalidArgument {
        routine,
        arg,
        reason,
    })
}

/// Whether `SHMEM_DEBUG=1` asked for argument checks.
#[inline]
fn debug() -> bool {
    try_runtime().is_some_and(|rt| rt.config().debug)
}

/// Under `SHMEM_DEBUG`, a null local buffer of `n > 0` elements ends the job.
#[inline(always)]
pub(crate) fn nonnull<T>(
    routine: &'static str,
    arg: &'static str,
    p: *const T,
    n: usize,
) -> *const T {
    if n > 0 && p.is_null() && debug() {
        invalid(routine, arg, "is a null pointer");
    }
    p
}

/// [`nonnull`] for a buffer written by the routine.
#[inline(always)]
pub(crate) fn nonnull_mut<T>(
    routine: &'static str,
    arg: &'static str,
    p: *mut T,
    n: usize,
) -> *mut T {
    nonnull(routine, arg, p, n);
    p
}

/// `SHMEM_CMP_*` to the core's comparison (always checked: a bad value cannot be run).
#[inline(always)]
pub(crate) fn cmp(routine: &'static str, c: c_int) -> Cmp {
    Cmp::from_c(c)
        .unwrap_or_else(|| invalid(routine, "cmp", "is not one of the SHMEM_CMP_* constants"))
}

fn nbytes(routine: &'static str, n: usize, esize: usize) -> usize {
    n.checked_mul(esize)
        .unwrap_or_else(|| invalid(routine, "nelems", "nelems times the element size overflows"))
}

// ---------------------------------------------------------------- setup

pub(crate) fn init(routine: &'static str) {
    // C's globals and statics are symmetric (OpenSHMEM memory model).
    rshmem_core::runtime::enable_symmetric_data();
    if let Err(e) = rshmem_core::init(ThreadLevel::Single) {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        eprintln!("{}", init_message(routine, &e));
        std::process::exit(1);
    }
}

/// `start_pes`: `shmem_init`, and finalization at exit without a warning (its programs
/// never call `shmem_finalize`).
pub(crate) fn start_pes(routine: &'static str) {
    init(routine);
    rshmem_core::runtime::finalize_at_exit_silently();
}

/// An init error naming the PE (when known) and `routine` once (the core's message
/// starts with `shmem_init:`, which `routine` replaces).
fn init_message(routine: &'static str, e: &rshmem_core::InitError) -> String {
    let msg = e.to_string();
    let body = msg.strip_prefix("shmem_init: ").unwrap_or(&msg);
    match rshmem_core::runtime::init_pe() {
        Some(pe) => format!("rshmem: PE {pe}: {routine}: {body}"),
        None => format!("rshmem: {routine}: {body}"),
    }
}

pub(crate) unsafe fn init_thread(
    routine: &'static str,
    requested: c_int,
    provided: *mut c_int,
) -> c_int {
    let level = match requested {
        0 => ThreadLevel::Single,
        1 => ThreadLevel::Funneled,
        2 => ThreadLevel::Serialized,
        3 => ThreadLevel::Multiple,
        _ => return -1,
    };
    rshmem_core::runtime::enable_symmetric_data();
    match rshmem_core::init(level) {
        Ok(got) => {
            if !provided.is_null() {
                // SAFETY: a non-null `provided` points at an int (spec).
                unsafe { provided.write(got as c_int) };
            }
            0
        }
        Err(e) => {
            eprintln!("{}", init_message(routine, &e));
            -1
        }
    }
}

pub(crate) unsafe fn info_get_version(routine: &'static str, major: *mut c_int, minor: *mut c_int) {
    let (a, b) = rshmem_core::setup::info_get_version();
    nonnull_mut(routine, "major", major, 1);
    nonnull_mut(routine, "minor", minor, 1);
    // SAFETY: the caller passes two ints (spec).
    unsafe {
        major.write(a);
        minor.write(b);
    }
}

pub(crate) unsafe fn info_get_name(routine: &'static str, name: *mut c_char) {
    nonnull_mut(routine, "name", name, 1);
    let s = rshmem_core::setup::info_get_name().as_bytes();
    // SHMEM_MAX_NAME_LEN (256) bytes at most, NUL included.
    let n = s.len().min(255);
    // SAFETY: the caller passes SHMEM_MAX_NAME_LEN bytes (spec).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast(), name, n);
        name.add(n).write(0);
    }
}

pub(crate) unsafe fn query_thread(routine: &'static str, provided: *mut c_int) {
    let level = ok(rshmem_core::setup::query_thread());
    nonnull_mut(routine, "provided", provided, 1);
    // SAFETY: the caller passes an int (spec).
    unsafe { provided.write(level as c_int) };
}

pub(crate) unsafe fn query_initialized(routine: &'static str, initialized: *mut c_int) {
    nonnull_mut(routine, "initialized", initialized, 1);
    // SAFETY: the caller passes an int (spec).
    unsafe { initialized.write(rshmem_core::initialized() as c_int) };
}

pub(crate) fn wtime() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// An allocation's result: an exhausted heap gives NULL (as the spec asks), any other
/// error ends the job.
pub(crate) fn alloc(r: Result<*mut u8>) -> *mut c_void {
    match r {
        Ok(p) => p.cast(),
        Err(e @ Error::HeapExhausted { .. }) => {
            if debug() {
                eprintln!("rshmem: {e}");
            }
            std::ptr::null_mut()
        }
        Err(e) => fail(e),
    }
}

// ---------------------------------------------------------------- RMA

/// Direction of a contiguous transfer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Dir {
    Put,
    Get,
    PutNbi,
    GetNbi,
}

/// Contiguous put/get of `n` elements of `esize` bytes.
#[inline(always)]
pub(crate) unsafe fn xfer(
    routine: &'static str,
    c: &Ctx,
    dir: Dir,
    dest: *mut c_void,
    source: *const c_void,
    n: usize,
    esize: usize,
    pe: c_int,
) {
    let nb = nbytes(routine, n, esize);
    let (d, s) = (dest.cast::<u8>(), source.cast::<u8>());
    let pe = pe.into();
    // SAFETY: local buffers are the caller's (spec); symmetric ones are checked by core.
    let r = unsafe {
        match dir {
            Dir::Put => rma::ctx_put(c, routine, d, nonnull(routine, "source", s, nb), nb, pe),
            Dir::PutNbi => {
                rma::ctx_put_nbi(c, routine, d, nonnull(routine, "source", s, nb), nb, pe)
            }
            Dir::Get => rma::ctx_get(c, routine, nonnull_mut(routine, "dest", d, nb), s, nb, pe),
            Dir::GetNbi => {
                rma::ctx_get_nbi(c, routine, nonnull_mut(routine, "dest", d, nb), s, nb, pe)
            }
        }
    };
    ok(r)
}

/// `shmem_TYPENAME_p`.
#[inline(always)]
pub(crate) unsafe fn p<T: Copy>(routine: &'static str, c: &Ctx, dest: *mut T, value: T, pe: c_int) {
    // SAFETY: `value` is a local of the right size.
    unsafe {
        xfer(
            routine,
            c,
            Dir::Put,
            dest.cast(),
            (&value as *const T).cast(),
            1,
            size_of::<T>(),
            pe,
        )
    }
}

/// `shmem_TYPENAME_g`.
#[inline(always)]
pub(crate) unsafe fn g<T: Copy>(routine: &'static str, c: &Ctx, source: *const T, pe: c_int) -> T {
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` has room for one T; a successful get fills it (errors end the job).
    unsafe {
        xfer(
            routine,
            c,
            Dir::Get,
            v.as_mut_ptr().cast(),
            source.cast(),
            1,
            size_of::<T>(),
            pe,
        );
        v.assume_init()
    }
}

/// `iput`/`iget`: strides in elements.
pub(crate) unsafe fn strided(
    routine: &'static str,
    c: &Ctx,
    is_put: bool,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    esize: usize,
    pe: c_int,
) {
    if is_put {
        nonnull(routine, "source", source, nelems);
    } else {
        nonnull_mut(routine, "dest", dest, nelems);
    }
    // SAFETY: as `xfer`; the core checks the symmetric extent.
    ok(unsafe {
        rma::ctx_strided(
            c,
            routine,
            is_put,
            dest.cast(),
            source.cast(),
            dst,
            sst,
            nelems,
            esize,
            pe.into(),
        )
    })
}

/// `ibput`/`ibget` (OpenSHMEM 1.6): `nblocks` blocks of `bsize` elements.
pub(crate) unsafe fn blocked(
    routine: &'static str,
    c: &Ctx,
    is_put: bool,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    bsize: usize,
    nblocks: usize,
    esize: usize,
    pe: c_int,
) {
    // SAFETY: as `xfer`.
    ok(unsafe {
        rma::ctx_blocked(
            c,
            routine,
            is_put,
            dest.cast(),
            source.cast(),
            dst,
            sst,
            bsize,
            nblocks,
            esize,
            pe.into(),
        )
    })
}

/// `put_signal[_nbi]` (large nbi ones may go to the copy engine until the quiet).
pub(crate) unsafe fn put_signal(
    routine: &'static str,
    c: &Ctx,
    nbi: bool,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
) {
    let nb = nbytes(routine, nelems, esize);
    let op = ok(SignalOp::from_c(routine, sig_op));
    // SAFETY: as `xfer`; the core checks `dest` and `sig_addr`.
    ok(unsafe {
        rshmem_core::signal::ctx_put_signal(
            c,
            routine,
            nbi,
            dest.cast(),
            nonnull(routine, "source", source.cast::<u8>(), nb),
            nb,
            sig_addr,
            signal,
            op,
            pe.into(),
        )
    })
}

// ---------------------------------------------------------------- AMO

/// One atomic on `dest` at `pe`; returns the old value.
#[inline(always)]
pub(crate) unsafe fn amo<W: Word>(
    routine: &'static str,
    c: &Ctx,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) -> W {
    // SAFETY: the core checks alignment and symmetry of `dest`.
    ok(unsafe { rshmem_core::amo::ctx_atomic(c, routine, dest, op, pe.into()) })
}

/// One non-fetching atomic on `dest` at `pe` (posted where the transport can).
#[inline(always)]
pub(crate) unsafe fn amo_post<W: Word>(
    routine: &'static str,
    c: &Ctx,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) {
    // SAFETY: the core checks alignment and symmetry of `dest`.
    ok(unsafe { rshmem_core::amo::ctx_atomic_post(c, routine, dest, op, pe.into()) })
}

/// A fetching nonblocking atomic: the old value lands in `fetch`.
#[inline(always)]
pub(crate) unsafe fn amo_nbi<W: Word>(
    routine: &'static str,
    c: &Ctx,
    fetch: *mut W,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) {
    nonnull_mut(routine, "fetch", fetch, 1);
    // SAFETY: `fetch` is the caller's local (spec); the core checks `dest`.
    ok(unsafe { rshmem_core::amo::ctx_atomic_nbi(c, routine, fetch, dest, op, pe.into()) })
}

// ---------------------------------------------------------------- contexts

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
            Some(t) => rshmem_core::ctx::team_create(&t, options),
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

/// `shmem_[ctx_]fence` (a no-op on `SHMEM_CTX_INVALID`).
pub(crate) fn fence(routine: &'static str, c: Option<&Ctx>) {
    let _ = routine;
    match c {
        Some(c) if c.is_default() => ok(rshmem_core::order::fence()),
        Some(c) => ok(rshmem_core::order::ctx_fence(c)),
        None => {}
    }
}

/// `shmem_[ctx_]quiet` (a no-op on `SHMEM_CTX_INVALID`).
pub(crate) fn quiet(routine: &'static str, c: Option<&Ctx>) {
    let _ = routine;
    match c {
        Some(c) if c.is_default() => ok(rshmem_core::order::quiet()),
        Some(c) => ok(rshmem_core::order::ctx_quiet(c)),
        None => {}
    }
}

/// `shmem_[ctx_]pe_quiet` (OpenSHMEM 1.6): a quiet of the whole context, which completes
/// what went to the given PEs too. Under `SHMEM_DEBUG` the PE numbers are checked
/// against the context's team.
pub(crate) unsafe fn pe_quiet(
    routine: &'static str,
    c: Option<&Ctx>,
    pes: *const c_int,
    npes: usize,
) {
    let Some(c) = c else { return };
    if npes > 0 && debug() {
        nonnull(routine, "target_pes", pes, npes);
        if let Some(rt) = try_runtime() {
            let n = c.n_pes(rt);
            for i in 0..npes {
                // SAFETY: the caller passes `npes` ints (spec); non-null checked above.
                let pe = unsafe { pes.add(i).read() };
                if pe < 0 || pe as usize >= n {
                    fail(Error::PeOutOfRange {
                        routine,
                        arg: "target_pes",
                        pe: pe.into(),
                        npes: n,
                    });
                }
            }
        }
    }
    quiet(routine, Some(c));
}

// ---------------------------------------------------------------- requests (seed 002)

/// `shmemx_request_h *` as the core takes it; a null pointer ends the job naming `arg`.
#[inline(always)]
fn slot<'a>(
    routine: &'static str,
    arg: &'static str,
    p: *mut Option<ReqHandle>,
) -> &'a mut Option<ReqHandle> {
    if p.is_null() {
        if arg == "req" {
            fail(request::null_slot(routine));
        }
        invalid(routine, arg, "is a null pointer");
    }
    // SAFETY: a non-null pointer to the caller's shmemx_request_h, which has the layout
    // of `Option<ReqHandle>` (NULL is `None`); the caller does not use it concurrently.
    unsafe { &mut *p }
}

/// `shmemx_[ctx_]{TYPENAME_,}{put,get}{SIZE,mem,}_nbe`.
pub(crate) unsafe fn nbe(
    routine: &'static str,
    c: &Ctx,
    is_put: bool,
    target: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    pe: c_int,
    req: *mut Option<ReqHandle>,
) {
    let nb = nbytes(routine, nelems, esize);
    let s = slot(routine, "req", req);
    let (t, src) = (target.cast::<u8>(), source.cast::<u8>());
    // SAFETY: local buffers are the caller's, untouched until the request completes
    // (seed 002); the core checks the symmetric side; a handle in `*req` is live.
    ok(unsafe {
        if is_put {
            rma::put_nbe(
                c,
                routine,
                t,
                nonnull(routine, "source", src, nb),
                nb,
                pe.into(),
                s,
            )
        } else {
            rma::get_nbe(
                c,
                routine,
                nonnull_mut(routine, "target", t, nb),
                src,
                nb,
                pe.into(),
                s,
            )
        }
    })
}

/// `shmemx_[ctx_]TYPENAME_*_nbe`: a fetching atomic completed by the request.
pub(crate) unsafe fn amo_nbe<W: Word>(
    routine: &'static str,
    c: &Ctx,
    fetch: *mut W,
    target: *const W,
    op: AmoOp<W>,
    pe: c_int,
    req: *mut Option<ReqHandle>,
) {
    nonnull_mut(routine, "fetch", fetch, 1);
    let s = slot(routine, "req", req);
    // SAFETY: `fetch` is the caller's local (spec); the core checks `target`.
    ok(unsafe { rshmem_core::amo::atomic_nbe(c, routine, fetch, target, op, pe.into(), s) })
}

/// `shmemx_request_test`: `*flag` = 1 (and `*req` = NULL, the request released) once
/// complete, else 0.
pub(crate) unsafe fn request_test(
    routine: &'static str,
    req: *mut Option<ReqHandle>,
    flag: *mut c_int,
) -> c_int {
    let s = slot(routine, "req", req);
    if flag.is_null() {
        invalid(routine, "flag", "is a null pointer");
    }
    // SAFETY: a handle in the slot is live (seed 002: no use after completion).
    let done = ok(unsafe { request::test(s) });
    // SAFETY: `flag` is a non-null int pointer (spec).
    unsafe { flag.write(done as c_int) };
    0
}

/// `shmemx_request_wait`.
pub(crate) unsafe fn request_wait(routine: &'static str, req: *mut Option<ReqHandle>) -> c_int {
    let s = slot(routine, "req", req);
    // SAFETY: as `request_test`.
    ok(unsafe { request::wait(s) });
    0
}

/// `shmemx_request_alloc`: a new, empty request in `*req`.
pub(crate) unsafe fn request_alloc(
    routine: &'static str,
    params: RequestParams,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let s = slot(routine, "req", req);
    *s = Some(ok(request::alloc(params)));
    0
}

/// `shmemx_request_free`: completes, then releases the request (`*req` = NULL).
pub(crate) unsafe fn request_free(routine: &'static str, req: *mut Option<ReqHandle>) -> c_int {
    let s = slot(routine, "req", req);
    // SAFETY: as `request_test`.
    ok(unsafe { request::free(s) });
    0
}

/// `shmemx_merge_request`: moves each `*requests[i]` into `*merged` (allocated when
/// NULL) and sets it to NULL; `*merged` completes when all of them have.
pub(crate) unsafe fn merge_request(
    routine: &'static str,
    count: usize,
    requests: *mut *mut Option<ReqHandle>,
    merged: *mut Option<ReqHandle>,
) -> c_int {
    slot(routine, "merged", merged);
    if count > 0 && requests.is_null() {
        invalid(routine, "requests", "is a null pointer");
    }
    for i in 0..count {
        // SAFETY: the caller passes `count` handle pointers.
        let p = unsafe { requests.add(i).read() };
        slot(routine, "requests", p);
        if p == merged {
            continue;
        }
        // SAFETY: two distinct slots of the caller's, holding live handles or NULL.
        ok(unsafe { request::merge(&mut *merged, &mut *p) });
    }
    0
}

// ---------------------------------------------------------------- teams

/// Handles of the teams made by splits: never dereferenced, never reused. Each is
/// `TEAM_BASE + 16 * n` for the n-th team made (plus [`ASET_TAG`] for an active set), so
/// a handle below the next one that is not live names a destroyed team (or deleted
/// set), and anything else is not a team handle at all.
struct Teams {
    live: BTreeMap<usize, Arc<Team>>,
    /// The live handles that are active sets (deleted locally).
    asets: std::collections::BTreeSet<usize>,
    next: usize,
}

/// The first split team's handle (above the predefined ones, 16-aligned like a pointer).
const TEAM_BASE: usize = 0x1000;
const _: () = assert!(H_LEADERS < TEAM_BASE);
const TEAM_STEP: usize = 16;
/// Added to an active set's handle, so that a use after `shmemx_delete_aset` names it.
const ASET_TAG: usize = 8;

// An RwLock: every team routine looks its handle up, threads running collectives on
// their own teams must not serialize on it; only split and destroy write.
static TEAMS: RwLock<Teams> = RwLock::new(Teams {
    live: BTreeMap::new(),
    asets: std::collections::BTreeSet::new(),
    next: TEAM_BASE,
});

fn teams() -> std::sync::RwLockReadGuard<'static, Teams> {
    TEAMS.read().unwrap_or_else(|e| e.into_inner())
}

fn teams_mut() -> std::sync::RwLockWriteGuard<'static, Teams> {
    TEAMS.write().unwrap_or_else(|e| e.into_inner())
}

/// The C name of a predefined team handle.
fn predefined_name(h: usize) -> Option<&'static str> {
    match h {
        H_WORLD => Some("SHMEM_TEAM_WORLD"),
        H_SHARED => Some("SHMEM_TEAM_SHARED (SHMEMX_TEAM_NODE)"),
        H_HOST => Some("SHMEMX_TEAM_HOST"),
        H_LEADERS => Some("SHMEMX_TEAM_LEADERS"),
        _ => None,
    }
}

/// The team behind a handle; `None` for `SHMEM_TEAM_INVALID` (and LEADERS on PEs that
/// lead no host). A destroyed team or a value that is no team handle ends the job
/// naming `arg` (always checked: team routines are not on a hot path, and the handle is
/// looked up, never dereferenced).
fn team_arg(routine: &'static str, arg: &'static str, h: TeamHandle) -> Option<Arc<Team>> {
    let rt = match try_runtime() {
        Some(rt) => rt,
        None => fail(Error::NotInitialized { routine }),
    };
    match h as usize {
        0 => None,
        H_WORLD => Some(rt.world().clone()),
        H_SHARED => Some(rt.shared().clone()),
        H_HOST => Some(rt.host().clone()),
        H_LEADERS => rt.leaders().cloned(),
        x => {
            let reg = teams();
            if let Some(t) = reg.live.get(&x) {
                return Some(t.clone());
            }
            let issued =
                x >= TEAM_BASE && x < reg.next && ((x - TEAM_BASE) % TEAM_STEP) & !ASET_TAG == 0;
            drop(reg);
            if issued && x & ASET_TAG != 0 {
                invalid(routine, arg, "was deleted (by shmemx_delete_aset)")
            }
            if issued {
                invalid(routine, arg, "was destroyed (by shmem_team_destroy)")
            }
            invalid(routine, arg, "is not a team handle")
        }
    }
}

/// [`team_arg`] for an argument named `team`.
fn team(routine: &'static str, h: TeamHandle) -> Option<Arc<Team>> {
    team_arg(routine, "team", h)
}

/// `shmem_team_ptr` (OpenSHMEM 1.6): NULL for `SHMEM_TEAM_INVALID`, a rank outside the
/// team, or memory this PE cannot load from and store to.
pub(crate) fn team_ptr(
    routine: &'static str,
    h: TeamHandle,
    dest: *const c_void,
    pe: c_int,
) -> *mut c_void {
    match team(routine, h) {
        Some(t) => ok(rshmem_core::setup::team_ptr(&t, dest as usize, pe.into())).cast(),
        None => std::ptr::null_mut(),
    }
}

fn new_handle(t: Option<Arc<Team>>) -> TeamHandle {
    new_handle_tagged(t, 0)
}

fn new_handle_tagged(t: Option<Arc<Team>>, tag: usize) -> TeamHandle {
    let Some(t) = t else {
        return std::ptr::null_mut();
    };
    let mut reg = teams_mut();
    let h = reg.next + tag;
    reg.next += TEAM_STEP;
    reg.live.insert(h, t);
    h as TeamHandle
}

fn config(c: *const TeamConfigC, mask: c_long) -> TeamConfig {
    let mut cfg = TeamConfig::default();
    if !c.is_null() && mask & 1 != 0 {
        // SAFETY: a non-null config points at a shmem_team_config_t (spec).
        cfg.num_contexts = unsafe { (*c).num_contexts };
    }
    cfg
}

/// A split's output argument must be writable: a null one would leak the new team (the
/// split is collective, so the job ends rather than making it on the other PEs alone).
fn need_out(routine: &'static str, arg: &'static str, out: *mut TeamHandle) {
    if out.is_null() {
        invalid(
            routine,
            arg,
            "is NULL (it must point at a shmem_team_t that receives the new team)",
        );
    }
}

/// Writes a split's result; returns the C status (0 or -1).
unsafe fn set_team(
    routine: &'static str,
    out: *mut TeamHandle,
    r: Result<Option<Arc<Team>>>,
) -> c_int {
    let (h, rc) = match r {
        Ok(t) => (new_handle(t), 0),
        Err(e) => {
            if debug() {
                eprintln!("rshmem: {e}");
            }
            let _ = routine;
            (std::ptr::null_mut(), -1)
        }
    };
    if !out.is_null() {
        // SAFETY: `out` points at a shmem_team_t (spec).
        unsafe { out.write(h) };
    }
    rc
}

pub(crate) fn team_my_pe(routine: &'static str, h: TeamHandle) -> c_int {
    team(routine, h).map_or(-1, |t| t.my_pe() as c_int)
}

pub(crate) fn team_n_pes(routine: &'static str, h: TeamHandle) -> c_int {
    team(routine, h).map_or(-1, |t| t.n_pes() as c_int)
}

pub(crate) unsafe fn team_get_config(
    routine: &'static str,
    h: TeamHandle,
    mask: c_long,
    out: *mut TeamConfigC,
) -> c_int {
    let Some(t) = team(routine, h) else { return -1 };
    if mask & 1 != 0 && !out.is_null() {
        // SAFETY: `out` points at a shmem_team_config_t (spec).
        unsafe { (*out).num_contexts = t.config().num_contexts };
    }
    0
}

pub(crate) fn team_translate_pe(
    routine: &'static str,
    src: TeamHandle,
    src_pe: c_int,
    dest: TeamHandle,
) -> c_int {
    match (
        team_arg(routine, "src_team", src),
        team_arg(routine, "dest_team", dest),
    ) {
        (Some(s), Some(d)) if src_pe >= 0 => {
            s.translate(src_pe as usize, &d).map_or(-1, |r| r as c_int)
        }
        _ => -1,
    }
}

pub(crate) unsafe fn team_split_strided(
    routine: &'static str,
    parent: TeamHandle,
    start: c_int,
    stride: c_int,
    size: c_int,
    cfg: *const TeamConfigC,
    mask: c_long,
    out: *mut TeamHandle,
) -> c_int {
    need_out(routine, "new_team", out);
    let r = match team_arg(routine, "parent_team", parent) {
        Some(p) => rshmem_core::team::split_strided(
            &p,
            start.into(),
            stride.into(),
            size.into(),
            config(cfg, mask),
        ),
        None => Err(Error::InvalidArgument {
            routine,
            arg: "parent_team",
            reason: "is SHMEM_TEAM_INVALID",
        }),
    };
    // SAFETY: as `set_team`.
    unsafe { set_team(routine, out, r) }
}

pub(crate) unsafe fn team_split_2d(
    routine: &'static str,
    parent: TeamHandle,
    xrange: c_int,
    xcfg: *const TeamConfigC,
    xmask: c_long,
    xout: *mut TeamHandle,
    ycfg: *const TeamConfigC,
    ymask: c_long,
    yout: *mut TeamHandle,
) -> c_int {
    need_out(routine, "xaxis_team", xout);
    need_out(routine, "yaxis_team", yout);
    let r = match team_arg(routine, "parent_team", parent) {
        Some(p) => {
            rshmem_core::team::split_2d(&p, xrange.into(), config(xcfg, xmask), config(ycfg, ymask))
        }
        None => Err(Error::InvalidArgument {
            routine,
            arg: "parent_team",
            reason: "is SHMEM_TEAM_INVALID",
        }),
    };
    match r {
        Ok((x, y)) => {
            // SAFETY: as `set_team`.
            unsafe {
                set_team(routine, xout, Ok(x));
                set_team(routine, yout, Ok(y));
            }
            0
        }
        Err(e) => {
            // SAFETY: as `set_team`.
            unsafe {
                set_team(routine, xout, Err(e));
                set_team(routine, yout, Err(e))
            }
        }
    }
}

pub(crate) unsafe fn team_split_color(
    routine: &'static str,
    parent: TeamHandle,
    color: c_int,
    key: c_int,
    cfg: *const TeamConfigC,
    mask: c_long,
    out: *mut TeamHandle,
) -> c_int {
    need_out(routine, "new_team", out);
    let r = match team_arg(routine, "parent_team", parent) {
        Some(p) => rshmem_core::team::split_color(&p, color, key, config(cfg, mask)),
        None => Err(Error::InvalidArgument {
            routine,
            arg: "parent_team",
            reason: "is SHMEM_TEAM_INVALID",
        }),
    };
    // SAFETY: as `set_team`.
    unsafe { set_team(routine, out, r) }
}

/// `shmemx_failed_pes`: writes up to `max` failed PEs (world numbers, in order) to `pes`
/// and returns how many have failed (possibly more than `max`); acknowledges them.
///
/// # Safety
/// `pes` is null (with `max` <= 0) or has room for `max` ints.
pub(crate) unsafe fn failed_pes(routine: &'static str, pes: *mut c_int, max: c_int) -> c_int {
    if try_runtime().is_none() {
        fail(Error::NotInitialized { routine });
    }
    let v = ok(rshmem_core::ft::failed_pes());
    if !pes.is_null() {
        for (i, &pe) in v.iter().take(max.max(0) as usize).enumerate() {
            // SAFETY: `pes` has room for `max` ints (contract), and `i < max`.
            unsafe { pes.add(i).write(pe as c_int) };
        }
    }
    v.len() as c_int
}

/// `shmemx_pe_failed`: 1 if world PE `pe` has failed, else 0 (also for a bad number).
pub(crate) fn pe_failed(routine: &'static str, pe: c_int) -> c_int {
    if try_runtime().is_none() {
        fail(Error::NotInitialized { routine });
    }
    match usize::try_from(pe) {
        Ok(pe) => ok(rshmem_core::ft::pe_failed(pe)) as c_int,
        Err(_) => 0,
    }
}

/// `shmemx_team_survivors`: the surviving members of `team` as a new team in `out`;
/// returns 0, or the `SHMEMX_ERR_*` code with `out` set to `SHMEM_TEAM_INVALID`.
///
/// # Safety
/// `out` is null (an error that ends the job) or points at a `shmem_team_t`.
pub(crate) unsafe fn team_survivors(
    routine: &'static str,
    h: TeamHandle,
    out: *mut TeamHandle,
) -> c_int {
    need_out(routine, "new_team", out);
    let r = match team(routine, h) {
        Some(t) => rshmem_core::team::survivors(&t),
        None => Err(Error::InvalidArgument {
            routine,
            arg: "team",
            reason: "is SHMEM_TEAM_INVALID",
        }),
    };
    let code = r.as_ref().err().map_or(0, error_code);
    // SAFETY: as `set_team`.
    unsafe { set_team(routine, out, r.map(Some)) };
    code
}

pub(crate) fn team_destroy(routine: &'static str, h: TeamHandle) {
    if let Some(name) = predefined_name(h as usize) {
        fatal(&format!(
            "{routine}: argument team: is {name}, a predefined team, which cannot be destroyed"
        ));
    }
    let Some(t) = team(routine, h) else { return };
    // Unregistered first: a second destroy, or a use after this one, is reported.
    let mut reg = teams_mut();
    reg.live.remove(&(h as usize));
    let aset = reg.asets.remove(&(h as usize));
    drop(reg);
    // An active set with WORLD's members is WORLD itself: only the handle goes.
    if !(aset && t.is_predefined()) {
        ok(rshmem_core::team::destroy(&t));
    }
}

// ---------------------------------------------------------------- active sets (seed 004)

/// A C active-set index function: the world PE of member `PE_index`.
pub type AsetIndexFn = Option<unsafe extern "C" fn(c_int, c_int, c_int, *mut c_void) -> c_int>;

/// Registers the active set `members` as a team handle; `SHMEM_TEAM_INVALID` where this PE
/// is not a member. Bad members end the job naming the routine and argument.
fn new_aset(routine: &'static str, members: rshmem_core::team::Members) -> TeamHandle {
    match ok(rshmem_core::team::active_set(routine, members)) {
        None => std::ptr::null_mut(),
        Some(t) => {
            let h = new_handle_tagged(Some(t), ASET_TAG);
            teams_mut().asets.insert(h as usize);
            h
        }
    }
}

fn need_size(routine: &'static str, size: c_int) -> usize {
    if size < 1 {
        invalid(routine, "PE_size", "must be at least 1");
    }
    size as usize
}

/// `shmemx_create_strided_aset`: PEs `PE_start + i * PE_stride`.
pub(crate) fn aset_strided(
    routine: &'static str,
    start: c_int,
    stride: c_int,
    size: c_int,
) -> TeamHandle {
    let size = need_size(routine, size);
    if start < 0 {
        invalid(routine, "PE_start", "is negative");
    }
    new_aset(
        routine,
        rshmem_core::team::Members::Strided {
            start: start as usize,
            stride: if size == 1 { 1 } else { stride as isize },
            size,
        },
    )
}

/// `shmemx_create_log_strided_aset`: stride `stride_base ^ PE_log_stride`.
pub(crate) fn aset_log_strided(
    routine: &'static str,
    start: c_int,
    log_stride: c_int,
    size: c_int,
    base: c_int,
) -> TeamHandle {
    if base < 1 {
        invalid(routine, "stride_base", "must be at least 1");
    }
    if log_stride < 0 {
        invalid(routine, "PE_log_stride", "is negative");
    }
    let stride = (base as i64)
        .checked_pow(log_stride as u32)
        .filter(|&s| s <= c_int::MAX as i64)
        .unwrap_or_else(|| invalid(routine, "PE_log_stride", "the stride overflows"));
    aset_strided(routine, start, stride as c_int, size)
}

/// `shmemx_create_custom_aset`: member `i` is PE `index(i, PE_start, PE_size, params)`.
pub(crate) unsafe fn aset_custom(
    routine: &'static str,
    start: c_int,
    index: AsetIndexFn,
    size: c_int,
    params: *mut c_void,
) -> TeamHandle {
    let n = need_size(routine, size);
    let Some(f) = index else {
        invalid(routine, "offset", "is a null function pointer")
    };
    let list: Vec<usize> = (0..n)
        .map(|i| {
            // SAFETY: the caller's index function, called as the seed defines it.
            let pe = unsafe { f(i as c_int, start, size, params) };
            usize::try_from(pe)
                .unwrap_or_else(|_| invalid(routine, "offset", "returned a negative PE"))
        })
        .collect();
    new_aset(routine, rshmem_core::team::Members::List(list.into()))
}

/// `shmemx_create_generic_aset`: the PEs of `PE_list`, in that order.
pub(crate) unsafe fn aset_list(
    routine: &'static str,
    list: *const c_int,
    size: c_int,
) -> TeamHandle {
    let n = need_size(routine, size);
    if list.is_null() {
        invalid(routine, "PE_list", "is a null pointer");
    }
    // SAFETY: `PE_list` holds `PE_size` ints (the routine's contract).
    let pes = unsafe { std::slice::from_raw_parts(list, n) };
    let list: Vec<usize> = pes
        .iter()
        .map(|&pe| {
            usize::try_from(pe)
                .unwrap_or_else(|_| invalid(routine, "PE_list", "holds a negative PE"))
        })
        .collect();
    new_aset(routine, rshmem_core::team::Members::List(list.into()))
}

/// An active-set handle's set (`None` for `SHMEM_TEAM_INVALID`); a team that is not an
/// active set is refused naming `aset`.
fn aset(routine: &'static str, h: TeamHandle) -> Option<Arc<Team>> {
    let t = team_arg(routine, "aset", h)?;
    if !teams().asets.contains(&(h as usize)) {
        invalid(routine, "aset", "is a team, not an active set");
    }
    Some(t)
}

/// `shmemx_in_aset`: whether this PE is a member (non-members hold SHMEM_TEAM_INVALID).
pub(crate) fn in_aset(routine: &'static str, h: TeamHandle) -> c_int {
    aset(routine, h).is_some() as c_int
}

/// `shmemx_aset_size`: the number of members; -1 for SHMEM_TEAM_INVALID.
pub(crate) fn aset_size(routine: &'static str, h: TeamHandle) -> c_int {
    aset(routine, h).map_or(-1, |t| t.n_pes() as c_int)
}

/// `shmemx_aset_pe`: the world PE of member `rank`; -1 outside the set.
pub(crate) fn aset_pe(routine: &'static str, h: TeamHandle, rank: c_int) -> c_int {
    match aset(routine, h) {
        Some(t) if rank >= 0 && (rank as usize) < t.n_pes() => {
            t.members().pe(rank as usize) as c_int
        }
        _ => -1,
    }
}

/// `shmemx_aset_rank`: the rank of world PE `pe` in the set; -1 if it is no member.
pub(crate) fn aset_rank(routine: &'static str, h: TeamHandle, pe: c_int) -> c_int {
    match aset(routine, h) {
        Some(t) if pe >= 0 => t.members().rank_of(pe as usize).map_or(-1, |r| r as c_int),
        _ => -1,
    }
}

/// `shmemx_delete_aset`: local; SHMEM_TEAM_INVALID is ignored.
pub(crate) fn delete_aset(routine: &'static str, h: TeamHandle) {
    if aset(routine, h).is_some() {
        team_destroy(routine, h);
    }
}

/// `shmemx_barrier_aset` (quiet first) and `shmemx_sync_aset`.
pub(crate) fn barrier_aset(routine: &'static str, h: TeamHandle, quiet: bool) {
    let Some(t) = aset(routine, h) else {
        invalid(
            routine,
            "aset",
            "is SHMEM_TEAM_INVALID (this PE is not in the set)",
        )
    };
    if quiet {
        ok(rshmem_core::order::quiet());
    }
    ok(rshmem_core::team::sync_in(routine, &t));
}

pub(crate) fn team_sync(routine: &'static str, h: TeamHandle) -> c_int {
    match team(routine, h) {
        Some(t) => {
            ok(rshmem_core::team::sync(&t));
            0
        }
        None => -1,
    }
}

// ---------------------------------------------------------------- collectives

/// A non-blocking collective's request slot (`shmemx_*_nbe`), `None` for a blocking call
/// (a null `req`: the generated blocking routines pass one).
///
/// # Safety
/// A non-null `req` points at a `shmemx_request_h` whose handle, if any, is live.
unsafe fn nb_slot<'a>(
    routine: &'static str,
    req: *mut Option<ReqHandle>,
) -> Option<&'a mut Option<ReqHandle>> {
    (!req.is_null()).then(|| slot(routine, "req", req))
}

/// `shmemx_team_sync_nbe`, `shmemx_barrier_all_nbe` (quiet first) and
/// `shmemx_sync_all_nbe`: a sync completed by a request.
pub(crate) unsafe fn sync_nbe(
    routine: &'static str,
    h: TeamHandle,
    barrier: bool,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let s = slot(routine, "req", req);
    // SAFETY: a handle in `*req` is live (seed 002).
    ok(unsafe { coll::nonblocking::sync(routine, &t, barrier, s) });
    0
}

/// The team of a collective; `None` (the routine returns nonzero) for
/// `SHMEM_TEAM_INVALID`.
fn coll_team(routine: &'static str, h: TeamHandle) -> Option<Arc<Team>> {
    team(routine, h)
}

/// `shmem_{TYPENAME_,}broadcast[mem]`: `nelems` elements of `esize` bytes.
pub(crate) unsafe fn broadcast(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    root: c_int,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: the core checks that both buffers are symmetric and large enough; a
    // non-blocking call's buffers stay untouched until its request completes (seed 004).
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::broadcast(routine, &t, d, s, nb, root.into()),
            Some(r) => coll::nonblocking::broadcast(routine, &t, d, s, nb, root.into(), r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}collect[mem]` (per-PE `nelems`).
pub(crate) unsafe fn collect(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`; C does not pass the size of `dest`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::collect(routine, &t, d, s, nb, usize::MAX),
            Some(r) => coll::nonblocking::collect(routine, &t, d, s, nb, usize::MAX, r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}fcollect[mem]`.
pub(crate) unsafe fn fcollect(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::fcollect(routine, &t, d, s, nb),
            Some(r) => coll::nonblocking::fcollect(routine, &t, d, s, nb, r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}alltoall[mem]`.
pub(crate) unsafe fn alltoall(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::alltoall(routine, &t, d, s, nb),
            Some(r) => coll::nonblocking::alltoall(routine, &t, d, s, nb, r),
        }
    });
    0
}

/// `shmem_{TYPENAME_,}alltoalls[mem]`: strides in elements.
pub(crate) unsafe fn alltoalls(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    esize: usize,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let (d, s) = (dest.cast(), source.cast());
    // SAFETY: as `broadcast`; the core checks the strided extents.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::alltoalls(routine, &t, d, s, dst, sst, nelems, esize),
            Some(r) => coll::nonblocking::alltoalls(routine, &t, d, s, dst, sst, nelems, esize, r),
        }
    });
    0
}

/// `shmem_TYPENAME_OP_reduce`.
pub(crate) unsafe fn reduce<T: Elem>(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
    op: ReduceOp,
    req: *mut Option<ReqHandle>,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    nbytes(routine, nreduce, size_of::<T>());
    // SAFETY: as `broadcast`.
    ok(unsafe {
        match nb_slot(routine, req) {
            None => coll::reduce(routine, &t, dest, source, nreduce, op),
            Some(r) => coll::nonblocking::reduce(routine, &t, dest, source, nreduce, op, r),
        }
    });
    0
}

/// `shmem_TYPENAME_sum_{inscan,exscan}` (OpenSHMEM 1.6).
pub(crate) unsafe fn sum_scan<T: Elem + Default>(
    routine: &'static str,
    h: TeamHandle,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    inclusive: bool,
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    nbytes(routine, nelems, size_of::<T>());
    // SAFETY: as `broadcast`.
    ok(unsafe { coll::sum_scan(routine, &t, dest, source, nelems, inclusive) });
    0
}
