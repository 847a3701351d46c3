//! Seed 004's explicit active sets (`shmemx_create_*_aset`, `shmemx_aset_*`): team
//! handles made locally, without a collective. The deprecated active-set collectives
//! (`PE_start, logPE_stride, PE_size`) are `crate::active`.

use core::ffi::{c_int, c_void};
use std::sync::Arc;

use rshmem_core::team::Team;

use super::errors::{invalid, ok};
use super::teams::{
    new_handle_tagged, team_arg, team_destroy, teams, teams_mut, TeamHandle, ASET_TAG,
};

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
