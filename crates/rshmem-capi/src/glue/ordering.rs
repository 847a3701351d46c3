//! Memory ordering on a context: `shmem_[ctx_]fence`, `quiet` and `pe_quiet`.

use core::ffi::c_int;

use rshmem_core::runtime::try_runtime;
use rshmem_core::{Ctx, Error};

use super::checks::{debug, nonnull};
use super::errors::{fail, ok};

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
