//! Put-with-signal and signal operations. A signal is a symmetric `u64`; data is
//! delivered before the signal is visible.

use crate::ops::user_wait::UserWait;

use crate::ops::user_wait::user_wait_check;

use crate::ctx::Ctx;
use crate::error::{At, Error, Result};
use crate::profile::{self, Family, Pc};
use crate::rma::Dir;
use crate::runtime::{rt, Runtime};
use crate::transport::{SymAddr, Xfer};
use crate::word::{AmoOp, Cmp, Word};

/// How a signal is updated (`SHMEM_SIGNAL_SET` = 0, `SHMEM_SIGNAL_ADD` = 1 in C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum SignalOp {
    /// Overwrite the signal.
    Set = 0,
    /// Add to the signal.
    Add = 1,
}

impl SignalOp {
    /// Parses the C constant.
    pub fn from_c(routine: &'static str, v: i32) -> Result<SignalOp> {
        match v {
            0 => Ok(SignalOp::Set),
            1 => Ok(SignalOp::Add),
            _ => Err(Error::InvalidArgument {
                routine,
                arg: "sig_op",
                reason: "must be SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD",
            }),
        }
    }
}

/// Checks a signal address (aligned, symmetric), naming it `sig_addr` in errors.
fn check_sig(rt: &Runtime, routine: &'static str, sig_addr: *const u64) -> Result<SymAddr> {
    rt.aligned(routine, "sig_addr", sig_addr as usize, 8)?;
    rt.sym(routine, "sig_addr", sig_addr as usize, 8)
}

/// `shmem_ctx_signal_set`/`shmem_ctx_signal_add`: updates the signal on `pe` (a PE of the
/// context's team).
///
/// # Safety
/// None beyond the checks made here; `sig_addr` is a raw address.
#[inline]
pub unsafe fn ctx_signal_op(
    ctx: &Ctx,
    routine: &'static str,
    sig_addr: *const u64,
    signal: u64,
    op: SignalOp,
    pe: i64,
) -> Result<()> {
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, pe)?;
    let addr = check_sig(rt, routine, sig_addr)?;
    crate::profile::counted!(
        Family::Signal,
        8,
        ctx,
        Pc::Write,
        rt.fabric
            .amo_post(ctx.state(), pe, addr, amo_of(op, signal))
            .at(routine)
    )
}

fn amo_of(op: SignalOp, signal: u64) -> AmoOp<u64> {
    match op {
        SignalOp::Set => AmoOp::Set(signal),
        SignalOp::Add => AmoOp::Add(signal),
    }
}

/// `shmem_ctx_putmem_signal` (`nbi` false) and `shmem_ctx_putmem_signal_nbi` (`nbi`
/// true): puts `nbytes` to `dest` on `pe`, then updates `sig_addr` there. The
/// non-blocking form may leave both to the copy engine until the context's quiet; the
/// signal is still never visible before the data.
///
/// # Safety
/// `src` is readable for `nbytes` bytes (and, with `nbi`, unmodified until the quiet).
#[allow(clippy::too_many_arguments)]
#[inline]
pub unsafe fn ctx_put_signal(
    ctx: &Ctx,
    routine: &'static str,
    nbi: bool,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    sig_addr: *const u64,
    signal: u64,
    op: SignalOp,
    pe: i64,
) -> Result<()> {
    crate::profile::counted!(
        Family::Signal,
        nbytes,
        ctx,
        Pc::Write,
        // SAFETY: forwarded contract.
        unsafe {
            put_signal_in(
                ctx, routine, nbi, dest, src, nbytes, sig_addr, signal, op, pe,
            )
        }
    )
}

/// [`ctx_put_signal`] uncounted.
///
/// # Safety
/// As [`ctx_put_signal`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn put_signal_in(
    ctx: &Ctx,
    routine: &'static str,
    nbi: bool,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    sig_addr: *const u64,
    signal: u64,
    op: SignalOp,
    pe: i64,
) -> Result<()> {
    // Validate everything first: a rejected call must deliver nothing.
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, pe)?;
    let sig = check_sig(rt, routine, sig_addr)?;
    let op = amo_of(op, signal);
    if nbytes == 0 {
        return rt.fabric.amo_post(ctx.state(), pe, sig, op).at(routine);
    }
    let x = Xfer {
        ctx: ctx.state(),
        dir: Dir::Put,
        pe,
        remote: rt.sym(routine, "dest", dest as usize, nbytes)?,
        local: src as *mut u8,
        len: nbytes,
    };
    // SAFETY: the destination and `sig` are checked; the caller vouches for `src` (until
    // the context's quiet for `nbi`).
    unsafe {
        if nbi {
            rt.fabric.xfer_nbi(x, || ctx.completion(), Some((sig, op)))
        } else {
            rt.fabric.put_signal(x, sig, op)
        }
    }
    .at(routine)
}

/// `shmem_signal_fetch`: reads the local signal atomically.
///
/// # Safety
/// None beyond the checks made here.
#[inline]
pub unsafe fn signal_fetch(routine: &'static str, sig_addr: *const u64) -> Result<u64> {
    let _timed = profile::span(Family::Signal, 8);
    check_sig(rt(routine)?, routine, sig_addr)?;
    // SAFETY: checked symmetric (hence mapped) and aligned.
    Ok(unsafe { u64::load(sig_addr) })
}

/// `shmem_signal_wait_until`: waits until the local signal satisfies `cmp value` and
/// returns the value that did.
///
/// # Safety
/// None beyond the checks made here.
pub unsafe fn signal_wait_until(
    routine: &'static str,
    sig_addr: *const u64,
    cmp: Cmp,
    value: u64,
) -> Result<u64> {
    let _timed = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    unsafe { signal_wait_in(routine, sig_addr, cmp, value) }
}

/// [`signal_wait_until`] uncounted.
///
/// # Safety
/// None beyond the checks made here.
unsafe fn signal_wait_in(
    routine: &'static str,
    sig_addr: *const u64,
    cmp: Cmp,
    value: u64,
) -> Result<u64> {
    check_sig(rt(routine)?, routine, sig_addr)?;
    // SAFETY: validated above.
    let mut v = unsafe { u64::load(sig_addr) };
    let mut w = UserWait::new();
    while !cmp.holds(v, value) {
        user_wait_check(routine, &mut w, || {
            // SAFETY: validated above.
            let now = unsafe { u64::load(sig_addr) };
            cmp.holds(now, value)
        })?;
        w.snooze();
        // SAFETY: validated above.
        v = unsafe { u64::load(sig_addr) };
    }
    Ok(v)
}
