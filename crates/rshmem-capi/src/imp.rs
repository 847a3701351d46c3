//! The glue every generated entry point shares: panics and core errors become job
//! aborts naming the routine, `SHMEM_DEBUG=1` argument checks on local buffers, C
//! constants to core types, and team handles. No routine logic lives here: each helper
//! makes one call into `rshmem-core`.
// The C-facing types are `pub` because the exported entry points name them.
#![allow(unreachable_pub)]

use core::ffi::{c_char, c_int, c_long, c_void};
use std::mem::{size_of, MaybeUninit};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rshmem_core::coll::{self, Elem, ReduceOp};
use rshmem_core::runtime::try_runtime;
use rshmem_core::team::{Team, TeamConfig};
use rshmem_core::{fatal, rma, AmoOp, Cmp, Error, Result, SignalOp, ThreadLevel, Word};

/// C `long double` on x86-64 (80-bit x87 value in 16 bytes); moved as bytes only.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(16))]
pub struct LongDouble([u8; 16]);

/// `shmem_team_t`: null (`SHMEM_TEAM_INVALID`), one of the predefined handles below, or
/// a leaked `Box<Arc<Team>>` made by a split.
pub type TeamHandle = *mut c_void;
/// `shmem_team_config_t`.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct TeamConfigC {
    /// Contexts the team should support.
    pub num_contexts: c_int,
}

pub(crate) const H_WORLD: usize = 1;
pub(crate) const H_SHARED: usize = 2;
pub(crate) const H_HOST: usize = 3;
pub(crate) const H_LEADERS: usize = 4;
/// Handles below this are predefined (never freed).
const H_PREDEFINED_END: usize = 16;

/// Runs an entry point's body; a panic ends the job cleanly, naming the routine.
#[inline(always)]
pub(crate) fn guard<R>(routine: &'static str, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => panicked(routine, p),
    }
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

/// The value, or a job abort with the core's message (which names routine and argument).
#[inline(always)]
pub(crate) fn ok<T>(r: Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => fatal(&e),
    }
}

#[cold]
fn invalid(routine: &'static str, arg: &'static str, reason: &'static str) -> ! {
    fatal(&Error::InvalidArgument {
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
        fatal(&format!("{routine}: {e}"));
    }
    ok(crate::active::setup(routine));
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
            ok(crate::active::setup(routine));
            if !provided.is_null() {
                // SAFETY: a non-null `provided` points at an int (spec).
                unsafe { provided.write(got as c_int) };
            }
            0
        }
        Err(e) => {
            eprintln!("rshmem: {routine}: {e}");
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
        Err(e) => fatal(&e),
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
            Dir::Put => rma::put(routine, d, nonnull(routine, "source", s, nb), nb, pe),
            Dir::PutNbi => rma::put_nbi(routine, d, nonnull(routine, "source", s, nb), nb, pe),
            Dir::Get => rma::get(routine, nonnull_mut(routine, "dest", d, nb), s, nb, pe),
            Dir::GetNbi => rma::get_nbi(routine, nonnull_mut(routine, "dest", d, nb), s, nb, pe),
        }
    };
    ok(r)
}

/// `shmem_TYPENAME_p`.
#[inline(always)]
pub(crate) unsafe fn p<T: Copy>(routine: &'static str, dest: *mut T, value: T, pe: c_int) {
    // SAFETY: `value` is a local of the right size.
    unsafe {
        xfer(
            routine,
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
pub(crate) unsafe fn g<T: Copy>(routine: &'static str, source: *const T, pe: c_int) -> T {
    let mut v = MaybeUninit::<T>::uninit();
    // SAFETY: `v` has room for one T; a successful get fills it (errors end the job).
    unsafe {
        xfer(
            routine,
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
        rma::strided(
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
        rma::blocked(
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

/// `put_signal[_nbi]` (the nbi form completes at once, which the spec allows).
pub(crate) unsafe fn put_signal(
    routine: &'static str,
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
        rshmem_core::signal::put_signal(
            routine,
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
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) -> W {
    // SAFETY: the core checks alignment and symmetry of `dest`.
    ok(unsafe { rshmem_core::amo::atomic(routine, dest, op, pe.into()) })
}

/// A fetching nonblocking atomic: the old value lands in `fetch`.
#[inline(always)]
pub(crate) unsafe fn amo_nbi<W: Word>(
    routine: &'static str,
    fetch: *mut W,
    dest: *const W,
    op: AmoOp<W>,
    pe: c_int,
) {
    nonnull_mut(routine, "fetch", fetch, 1);
    // SAFETY: `fetch` is the caller's local (spec); the core checks `dest`.
    ok(unsafe { rshmem_core::amo::atomic_nbi(routine, fetch, dest, op, pe.into()) })
}

// ---------------------------------------------------------------- teams

/// The team behind a handle; `None` for `SHMEM_TEAM_INVALID` (and LEADERS on PEs that
/// lead no host).
fn team(routine: &'static str, h: TeamHandle) -> Option<&'static Arc<Team>> {
    let rt = match try_runtime() {
        Some(rt) => rt,
        None => fatal(&Error::NotInitialized { routine }),
    };
    match h as usize {
        0 => None,
        H_WORLD => Some(rt.world()),
        H_SHARED => Some(rt.shared()),
        H_HOST => Some(rt.host()),
        H_LEADERS => rt.leaders(),
        x if x < H_PREDEFINED_END => invalid(routine, "team", "is not a team handle"),
        // SAFETY: other handles are leaked `Box<Arc<Team>>`s made by `new_handle` and
        // alive until `team_destroy` (spec: no use after destroy).
        _ => Some(unsafe { &*(h as *const Arc<Team>) }),
    }
}

fn new_handle(t: Option<Arc<Team>>) -> TeamHandle {
    t.map_or(std::ptr::null_mut(), |t| Box::into_raw(Box::new(t)).cast())
}

fn config(c: *const TeamConfigC, mask: c_long) -> TeamConfig {
    let mut cfg = TeamConfig::default();
    if !c.is_null() && mask & 1 != 0 {
        // SAFETY: a non-null config points at a shmem_team_config_t (spec).
        cfg.num_contexts = unsafe { (*c).num_contexts };
    }
    cfg
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
    match (team(routine, src), team(routine, dest)) {
        (Some(s), Some(d)) if src_pe >= 0 => {
            s.translate(src_pe as usize, d).map_or(-1, |r| r as c_int)
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
    let r = match team(routine, parent) {
        Some(p) => rshmem_core::team::split_strided(
            p,
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
    let r = match team(routine, parent) {
        Some(p) => {
            rshmem_core::team::split_2d(p, xrange.into(), config(xcfg, xmask), config(ycfg, ymask))
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
    let r = match team(routine, parent) {
        Some(p) => rshmem_core::team::split_color(p, color, key, config(cfg, mask)),
        None => Err(Error::InvalidArgument {
            routine,
            arg: "parent_team",
            reason: "is SHMEM_TEAM_INVALID",
        }),
    };
    // SAFETY: as `set_team`.
    unsafe { set_team(routine, out, r) }
}

pub(crate) fn team_destroy(routine: &'static str, h: TeamHandle) {
    let Some(t) = team(routine, h) else { return };
    if (h as usize) < H_PREDEFINED_END {
        if debug() {
            invalid(routine, "team", "a predefined team cannot be destroyed");
        }
        return;
    }
    ok(rshmem_core::team::destroy(t));
    // SAFETY: `h` came from `new_handle` (checked above) and is dead after destroy.
    drop(unsafe { Box::from_raw(h as *mut Arc<Team>) });
}

pub(crate) fn team_sync(routine: &'static str, h: TeamHandle) -> c_int {
    match team(routine, h) {
        Some(t) => {
            ok(rshmem_core::team::sync(t));
            0
        }
        None => -1,
    }
}

// ---------------------------------------------------------------- collectives

/// The team of a collective; `None` (the routine returns nonzero) for
/// `SHMEM_TEAM_INVALID`.
fn coll_team(routine: &'static str, h: TeamHandle) -> Option<&'static Arc<Team>> {
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
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    // SAFETY: the core checks that both buffers are symmetric and large enough.
    ok(unsafe { coll::broadcast(routine, t, dest.cast(), source.cast(), nb, root.into()) });
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
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    // SAFETY: as `broadcast`; C does not pass the size of `dest`.
    ok(unsafe { coll::collect(routine, t, dest.cast(), source.cast(), nb, usize::MAX) });
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
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    // SAFETY: as `broadcast`.
    ok(unsafe { coll::fcollect(routine, t, dest.cast(), source.cast(), nb) });
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
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    let nb = nbytes(routine, nelems, esize);
    // SAFETY: as `broadcast`.
    ok(unsafe { coll::alltoall(routine, t, dest.cast(), source.cast(), nb) });
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
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    // SAFETY: as `broadcast`; the core checks the strided extents.
    ok(unsafe {
        coll::alltoalls(
            routine,
            t,
            dest.cast(),
            source.cast(),
            dst,
            sst,
            nelems,
            esize,
        )
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
) -> c_int {
    let Some(t) = coll_team(routine, h) else {
        return -1;
    };
    nbytes(routine, nreduce, size_of::<T>());
    // SAFETY: as `broadcast`.
    ok(unsafe { coll::reduce(routine, t, dest, source, nreduce, op) });
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
    ok(unsafe { coll::sum_scan(routine, t, dest, source, nelems, inclusive) });
    0
}
