//! Fault tolerance: the failed PEs (`shmemx_failed_pes`, `shmemx_pe_failed`) and a team
//! of the survivors (`shmemx_team_survivors`).

use core::ffi::c_int;

use rshmem_core::runtime::try_runtime;
use rshmem_core::Error;

use super::errors::{error_code, fail, ok};
use super::teams::{need_out, set_team, team, TeamHandle};

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
