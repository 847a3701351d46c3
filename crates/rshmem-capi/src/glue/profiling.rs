//! Profiling at the C face: Sandia OpenSHMEM's `shmemx_pcntr_*` queries and the counts
//! of the collective entry points (the core counts the one-sided routines itself).

use super::contexts::{ctx, CtxH};
use super::errors::ok;

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
