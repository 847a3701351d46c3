//! Profiling at the C face: Sandia OpenSHMEM's `shmemx_pcntr_*` queries (the core
//! counts every routine family itself).

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
