//! Teams: the `shmem_team_t` handles (predefined, and the registry of split teams and
//! active sets), the splits, queries, `shmem_team_destroy` and `shmem_team_sync`.

use core::ffi::{c_int, c_long, c_void};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use rshmem_core::runtime::try_runtime;
use rshmem_core::team::{Team, TeamConfig};
use rshmem_core::{fatal, Error, Result};

use super::checks::debug;
use super::errors::{fail, invalid, ok};

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

pub(crate) const H_WORLD: usize = 1;
pub(crate) const H_SHARED: usize = 2;
pub(crate) const H_HOST: usize = 3;
pub(crate) const H_LEADERS: usize = 4;

/// Handles of the teams made by splits: never dereferenced, never reused. Each is
/// `TEAM_BASE + 16 * n` for the n-th team made (plus [`ASET_TAG`] for an active set), so
/// a handle below the next one that is not live names a destroyed team (or deleted
/// set), and anything else is not a team handle at all.
pub(super) struct Teams {
    live: BTreeMap<usize, Arc<Team>>,
    /// The live handles that are active sets (deleted locally).
    pub(super) asets: std::collections::BTreeSet<usize>,
    next: usize,
}

/// The first split team's handle (above the predefined ones, 16-aligned like a pointer).
const TEAM_BASE: usize = 0x1000;
const _: () = assert!(H_LEADERS < TEAM_BASE);
const TEAM_STEP: usize = 16;
/// Added to an active set's handle, so that a use after `shmemx_delete_aset` names it.
pub(super) const ASET_TAG: usize = 8;

// An RwLock: every team routine looks its handle up, threads running collectives on
// their own teams must not serialize on it; only split and destroy write.
static TEAMS: RwLock<Teams> = RwLock::new(Teams {
    live: BTreeMap::new(),
    asets: std::collections::BTreeSet::new(),
    next: TEAM_BASE,
});

pub(super) fn teams() -> std::sync::RwLockReadGuard<'static, Teams> {
    TEAMS.read().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn teams_mut() -> std::sync::RwLockWriteGuard<'static, Teams> {
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
pub(super) fn team_arg(
    routine: &'static str,
    arg: &'static str,
    h: TeamHandle,
) -> Option<Arc<Team>> {
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
pub(super) fn team(routine: &'static str, h: TeamHandle) -> Option<Arc<Team>> {
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
        Some(t) => ok(rshmem_core::team::team_ptr(&t, dest as usize, pe.into())).cast(),
        None => std::ptr::null_mut(),
    }
}

fn new_handle(t: Option<Arc<Team>>) -> TeamHandle {
    new_handle_tagged(t, 0)
}

pub(super) fn new_handle_tagged(t: Option<Arc<Team>>, tag: usize) -> TeamHandle {
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
pub(super) fn need_out(routine: &'static str, arg: &'static str, out: *mut TeamHandle) {
    if out.is_null() {
        invalid(
            routine,
            arg,
            "is NULL (it must point at a shmem_team_t that receives the new team)",
        );
    }
}

/// Writes a split's result; returns the C status (0 or -1).
pub(super) unsafe fn set_team(
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

pub(crate) fn team_sync(routine: &'static str, h: TeamHandle) -> c_int {
    match team(routine, h) {
        Some(t) => {
            ok(rshmem_core::team::sync(&t));
            0
        }
        None => -1,
    }
}
