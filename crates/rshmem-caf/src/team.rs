//! Teams: FORM TEAM, CHANGE TEAM, END TEAM, SYNC TEAM, TEAM_NUMBER over the core's teams,
//! and what the current team changes everywhere else: image numbers (`this_image`,
//! `num_images`, the image index of every coindexed access, lock, event and atomic), the
//! images of SYNC ALL, SYNC IMAGES(*) and the collectives, and where coarrays allocated
//! inside the team live.
//!
//! A team value (`type(team_type)`, a `void *` to gfortran 12) is a *handle*, a number
//! never reused (`0x1000 + 16 n`), that a registry maps to a live [`CafTeam`]; so a stale
//! copy of a released team fails naming it instead of reaching another team. A team is
//! released when FORM TEAM defines its variable again in the team the old value was formed
//! from (gfortran 12 never says when a team value dies otherwise): the old team can never
//! become current again (CHANGE TEAM needs its parent current and its variable holds
//! another team), so its descendants, core teams and arena are returned, collectively, as
//! every image of the parent executes the same FORM TEAM. The current team is one atomic
//! pointer (null: the initial team), read without a lock by every image-index translation.
//!
//! FORM TEAM is a color split of the current team (`split_color`, color = team number,
//! key = NEW_INDEX - 1 or the rank in the parent). It also reserves, collectively over the
//! parent, one *arena* of symmetric memory for the teams it forms: from the world heap when
//! the parent is the initial team, else from the parent's arena. The new teams are
//! disjoint, so they all use the same address range, each on its own members. Inside a
//! team, coarray allocation and the collectives' scratch buffer come from its arena with
//! the core's allocator ([`Heap`]), whose offsets are the same on every member because
//! every member makes the same calls; the team's sync is the synchronization ALLOCATE and
//! DEALLOCATE imply.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rshmem_core::coll::tolerant_sync::{check_departed, tolerant_sync_all, ArrivalWords};
use rshmem_core::team::{Team, TeamConfig};
use rshmem_core::{memory, Departure, Heap};

use crate::stat_errmsg::{fatal, unsupported, CafError, CafResult, STAT_ERROR};

/// The variable that sets the arena FORM TEAM reserves (for messages).
const TEAM_HEAP_VAR: &str = "RSHMEM_CAF_TEAM_HEAP";

/// The symmetric memory of a team: `[base, base + size)` on each member.
#[derive(Debug)]
struct Arena {
    base: usize,
    heap: Mutex<Heap>,
}

/// A team as this image sees it.
#[derive(Debug)]
pub(crate) struct CafTeam {
    /// TEAM_NUMBER (-1: the initial team).
    pub number: i32,
    /// The core team: members in team-image order (world PEs), sync, collectives.
    pub team: Arc<Team>,
    /// The parent team (`None`: the initial team is the parent, or this is it).
    parent: Option<&'static CafTeam>,
    /// The team's symmetric memory (`None`: the initial team, which uses the world heap).
    arena: Option<Arena>,
    /// The collectives' scratch buffer in the arena (address, bytes).
    scratch: Mutex<(usize, usize)>,
    /// SYNC ALL's arrival words, the first block of the arena.
    words: ArrivalWords,
    /// The team value gfortran holds for it.
    handle: usize,
    /// Live teams formed from this one (addresses of their `CafTeam`s), in formation order.
    children: Mutex<Vec<usize>>,
}

/// The current team; null while the initial team is current.
static CURRENT: AtomicPtr<CafTeam> = AtomicPtr::new(std::ptr::null_mut());

/// The live teams of this image: (handle, `CafTeam` address from `Box::into_raw`), and
/// the number of the next handle. Team statements are not hot: a lock costs nothing.
static FORMED: Mutex<(Vec<(usize, usize)>, usize)> = Mutex::new((Vec::new(), 0));

/// The first handle; handles step by 16 (never a small integer or a plausible pointer).
const HANDLE0: usize = 0x1000;

/// The live team of handle `h`.
fn lookup(h: usize) -> Option<&'static CafTeam> {
    let f = FORMED.lock().unwrap_or_else(|e| e.into_inner());
    let &(_, p) = f.0.iter().find(|&&(k, _)| k == h)?;
    // SAFETY: registered teams are live (`release` unregisters before it frees).
    Some(unsafe { &*(p as *const CafTeam) })
}

/// The current team, `None` for the initial team. One atomic load: for hot paths.
#[inline]
pub(crate) fn current() -> Option<&'static CafTeam> {
    let p = CURRENT.load(Ordering::Acquire);
    // SAFETY: CURRENT holds null or a live CafTeam (a team is released only while it is
    // neither current nor an ancestor of the current team).
    unsafe { p.as_ref() }
}

impl CafTeam {
    /// World PE of 1-based image `image` of this team, checked.
    #[inline]
    pub(crate) fn pe_of(&self, image: i32) -> CafResult<usize> {
        let n = self.team.n_pes();
        if image < 1 || image as usize > n {
            return Err(CafError::new(
                STAT_ERROR,
                format!(
                    "image index {image} is out of range (valid images of team {} are 1..{n})",
                    self.number
                ),
            ));
        }
        Ok(self.team.members().pe(image as usize - 1))
    }

    /// Allocates `bytes` in the arena (same offset on every member making the same calls).
    fn alloc(&self, routine: &'static str, bytes: usize) -> CafResult<usize> {
        let Some(a) = &self.arena else {
            fatal(routine, "the initial team has no arena");
        };
        let mut h = a.heap.lock().unwrap_or_else(|e| e.into_inner());
        match h.alloc(bytes, 64) {
            Ok(off) => Ok(a.base + off),
            Err(e) => Err(CafError::new(
                STAT_ERROR,
                format!(
                    "the symmetric memory of team {} is exhausted: {} bytes requested, {} free, largest free block {} (raise {TEAM_HEAP_VAR})",
                    self.number, e.requested, e.free, e.largest
                ),
            )),
        }
    }

    /// Frees a block [`CafTeam::alloc`] returned; an error if `addr` is not one.
    fn free(&self, addr: usize) -> CafResult {
        let Some(a) = &self.arena else {
            return Err(CafError::new(STAT_ERROR, "not in a team's memory"));
        };
        let mut h = a.heap.lock().unwrap_or_else(|e| e.into_inner());
        addr.checked_sub(a.base)
            .and_then(|off| h.free(off))
            .ok_or_else(|| {
                CafError::new(
                    STAT_ERROR,
                    format!(
                        "the coarray was not allocated in the current team (team {})",
                        self.number
                    ),
                )
            })
    }

    /// Completes this image's transfers, then waits for every image of the team still
    /// running (an error names a stopped or failed one: the core's `tolerant_sync`).
    fn sync(&self, routine: &'static str) -> CafResult {
        tolerant_sync_all(routine, &self.words, &self.team)
            .map_err(|e| gone_error("SYNC ALL", self.number, e))
    }

    /// The collectives' symmetric scratch buffer of this team, at least `bytes` long
    /// (grown collectively over the team: every member passes the same shape).
    pub(crate) fn scratch(&self, routine: &'static str, bytes: usize) -> CafResult<*mut u8> {
        let mut s = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        if s.1 >= bytes {
            return Ok(s.0 as *mut u8);
        }
        // Nobody may still be reading the old buffer, nor write the new one before its
        // owner is in the collective.
        self.sync(routine)?;
        if s.0 != 0 {
            self.free(s.0)?;
            *s = (0, 0);
        }
        let size = bytes.max(2 * s.1).max(4096);
        let p = self.alloc(routine, size)?;
        *s = (p, size);
        self.sync(routine)?;
        Ok(p as *mut u8)
    }
}

/// The core team of the current team (WORLD for the initial team).
pub(crate) fn core_team(routine: &'static str) -> CafResult<&'static Team> {
    if let Some(t) = current() {
        return Ok(&t.team);
    }
    match rshmem_core::runtime::try_runtime() {
        Some(rt) => Ok(rt.world()),
        None => Err(rshmem_core::Error::NotInitialized { routine }.into()),
    }
}

/// `this_image()` in the current team (from 1).
pub(crate) fn this_image(routine: &'static str) -> i32 {
    match current() {
        Some(t) => t.team.my_pe() as i32 + 1,
        None => crate::image::state(routine).me as i32 + 1,
    }
}

/// `num_images()` of the current team.
pub(crate) fn num_images(routine: &'static str) -> usize {
    match current() {
        Some(t) => t.team.n_pes(),
        None => crate::image::state(routine).n,
    }
}

/// World PEs of the current team's images, in image order.
pub(crate) fn members(routine: &'static str) -> Vec<usize> {
    match current() {
        Some(t) => (0..t.team.n_pes())
            .map(|r| t.team.members().pe(r))
            .collect(),
        None => (0..crate::image::state(routine).n).collect(),
    }
}

/// `Err(STAT_STOPPED_IMAGE)` (or `STAT_FAILED_IMAGE`) when a member of the current team
/// is already known to be gone: what a collective reports instead of starting (it would
/// otherwise complete, or hang, without the member). One load when no image is.
pub(crate) fn known_gone(what: &'static str) -> CafResult {
    let (team, number) = match current() {
        Some(t) => (&*t.team, t.number),
        None => (core_team(what)?, -1),
    };
    check_departed(what, team).map_err(|e| gone_error(what, number, e))
}

/// The STAT= and ERRMSG= of `what` (a statement or routine) from the core's error `e`,
/// raised on team number `number` (-1: the initial team): a stopped or failed member is
/// named by its image number in the team.
fn gone_error(what: &str, number: i32, e: rshmem_core::Error) -> CafError {
    let rshmem_core::Error::PeGone {
        rank, how, missing, ..
    } = e
    else {
        return e.into();
    };
    let others = match missing {
        0 | 1 => String::new(),
        c => format!(" ({c} images are missing)"),
    };
    let team = if number < 0 {
        "the initial team".to_string()
    } else {
        format!("team {number}")
    };
    let how = match how {
        Departure::Finalized => "stopped",
        Departure::Failed => "failed",
    };
    CafError::new(
        CafError::from(e).code,
        format!("{what}: image {} of {team} has {how}{others}", rank + 1),
    )
}

/// SYNC ALL: completes this image's transfers and waits for every image of the current
/// team.
pub(crate) fn sync_all(routine: &'static str) -> CafResult {
    match current() {
        Some(t) => t.sync(routine),
        None => {
            let s = crate::image::state(routine);
            tolerant_sync_all(routine, &s.all_words, core_team(routine)?)
                .map_err(|e| gone_error("SYNC ALL", -1, e))
        }
    }
}

/// Zeroed symmetric memory for a coarray registered in the current team (collective
/// over it, synchronizing like ALLOCATE).
pub(crate) fn sym_calloc(routine: &'static str, bytes: usize) -> CafResult<*mut u8> {
    let Some(t) = current() else {
        return Ok(memory::calloc(routine, bytes, 1)?);
    };
    let p = t.alloc(routine, bytes)?;
    // SAFETY: a fresh block of `bytes` in this image's part of the team's arena, which no
    // member writes before the sync below.
    unsafe { std::ptr::write_bytes(p as *mut u8, 0, bytes) };
    t.sync(routine)?;
    Ok(p as *mut u8)
}

/// Frees a coarray's memory (collective over the current team, synchronizing like
/// DEALLOCATE).
pub(crate) fn sym_free(routine: &'static str, p: *mut u8) -> CafResult {
    let Some(t) = current() else {
        return Ok(memory::free(routine, p)?);
    };
    t.sync(routine)?;
    t.free(p as usize)
}

/// The team value gfortran passes (`caf_team_t`, our pointer), checked.
fn team_value(routine: &'static str, v: *mut c_void) -> &'static CafTeam {
    lookup(v as usize).unwrap_or_else(|| {
        fatal(
            routine,
            "the team value is not a team formed by FORM TEAM on this image, or its team was released (its team variable, or that of an ancestor, was formed again)",
        )
    })
}

/// Whether `a` and `b` are the same team (`None`: the initial team).
fn same(a: Option<&CafTeam>, b: Option<&CafTeam>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        _ => false,
    }
}

/// Releases team `t` (not current, nor an ancestor of the current team) and its
/// descendants: collective over `t`'s members, who all execute the same FORM TEAM. Each
/// core team is destroyed (its slot returned; a sync over it, so no member still uses the
/// arena), then `t`'s arena goes back to its parent (the world heap: `shmem_free`,
/// collective over the initial team, which is the current one then).
fn release(routine: &'static str, t: &'static CafTeam, top: bool) -> CafResult {
    let kids = std::mem::take(&mut *t.children.lock().unwrap_or_else(|e| e.into_inner()));
    // Latest first: members of two descendants formed them in the same order.
    for &k in kids.iter().rev() {
        // SAFETY: `children` holds live teams (each is removed from it before it is freed).
        release(routine, unsafe { &*(k as *const CafTeam) }, false)?;
    }
    rshmem_core::team::destroy(&t.team)?;
    {
        let mut f = FORMED.lock().unwrap_or_else(|e| e.into_inner());
        f.0.retain(|&(h, _)| h != t.handle);
    }
    if top {
        if let Some(a) = &t.arena {
            match t.parent {
                None => memory::free(routine, a.base as *mut u8)?,
                Some(p) => {
                    p.free(a.base)?;
                    let me = t as *const CafTeam as usize;
                    p.children
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .retain(|&k| k != me);
                }
            }
        }
    }
    // SAFETY: made by `Box::into_raw` in FORM TEAM; unregistered above and neither current
    // nor anyone's parent any more (descendants released first), so nothing reaches it.
    drop(unsafe { Box::from_raw((t as *const CafTeam).cast_mut()) });
    Ok(())
}

/// The team value a `caf_team_t *` points at.
///
/// # Safety
/// `p` is null or readable.
unsafe fn team_at(routine: &'static str, p: *mut *mut c_void) -> &'static CafTeam {
    if p.is_null() {
        fatal(routine, "no team value");
    }
    // SAFETY: contract.
    team_value(routine, unsafe { p.read() })
}

/// World PE of image `image` of the team `*team` (the `team=` selector of a coindexed
/// object), or of the current team when `team` is null.
///
/// # Safety
/// `team` is null or points at a team value.
pub(crate) unsafe fn pe_in(
    routine: &'static str,
    team: *mut c_void,
    image: i32,
) -> CafResult<usize> {
    if team.is_null() {
        return crate::image::pe_of(crate::image::state(routine), image);
    }
    // SAFETY: contract.
    unsafe { team_at(routine, team.cast()) }.pe_of(image)
}

/// Bytes of the arena FORM TEAM reserves under `parent` (`None`: the initial team).
fn arena_size(parent: Option<&CafTeam>) -> usize {
    static WANT: OnceLock<usize> = OnceLock::new();
    let want = *WANT.get_or_init(|| {
        // `RSHMEM_CAF_TEAM_HEAP` (a row of the environment table), else 1/16 of the heap.
        rshmem_core::runtime::try_runtime().map_or(64 << 20, |rt| {
            let cfg = rt.config();
            cfg.caf_team_heap.unwrap_or(cfg.symmetric_size / 16)
        })
    });
    match parent.and_then(|p| p.arena.as_ref()) {
        Some(a) => {
            let free = a
                .heap
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .free_bytes();
            want.min(free / 2)
        }
        None => want,
    }
}

/// `form team(team_number, team [, new_index=])`: collective over the current team.
///
/// # Safety
/// `team` is writable (gfortran passes the address of the team variable).
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_form_team(
    team_number: c_int,
    team: *mut *mut c_void,
    new_index: c_int,
) {
    const R: &str = "_gfortran_caf_form_team";
    crate::image::state(R);
    if team_number <= 0 {
        fatal(
            R,
            &format!("FORM TEAM: the team number must be positive, not {team_number}"),
        );
    }
    if team.is_null() {
        fatal(R, "FORM TEAM: no team variable");
    }
    let parent = current();
    // The variable's old team, formed from the current team: it can never be current
    // again, so its memory and core teams go back first (every image of the current team
    // executes this FORM TEAM, and held a team of the same earlier FORM TEAM).
    // SAFETY: contract (gfortran leaves a fresh team variable uninitialized: a value
    // that is no live handle is ignored).
    let old = lookup(unsafe { team.read() } as usize).filter(|o| same(o.parent, parent));
    if let Some(o) = old {
        if let Err(e) = release(R, o, true) {
            fatal(
                R,
                &format!("FORM TEAM: releasing the team the variable held: {}", e.msg),
            );
        }
    }
    let r = (|| -> CafResult<&'static CafTeam> {
        let pteam = core_team(R)?;
        let key = if new_index > 0 {
            new_index - 1
        } else {
            pteam.my_pe() as i32
        };
        let core = rshmem_core::team::split_color(pteam, team_number, key, TeamConfig::default())?
            .ok_or_else(|| CafError::new(STAT_ERROR, "this image is in no team of the split"))?;
        if new_index > core.n_pes() as i32 {
            return Err(CafError::new(
                STAT_ERROR,
                format!(
                    "NEW_INDEX={new_index} exceeds the {} images of team {team_number}",
                    core.n_pes()
                ),
            ));
        }
        // The arena: collective over the parent, like the split.
        let size = arena_size(parent);
        let base = match parent {
            None => memory::malloc(R, size).map_err(|e| {
                CafError::new(
                    STAT_ERROR,
                    format!(
                        "{e} (each FORM TEAM sets aside {TEAM_HEAP_VAR}={}M of it for the \
                         coarrays of its team: set {TEAM_HEAP_VAR} smaller, or \
                         SHMEM_SYMMETRIC_SIZE larger)",
                        size >> 20
                    ),
                )
            })? as usize,
            Some(p) => p.alloc(R, size)?,
        };
        // SYNC ALL's words first: zeroed (the arena may hold an earlier team's data), and
        // nobody writes them before every member has (the core team's sync).
        let mut heap = Heap::new(size);
        let wbytes = ArrivalWords::bytes(core.n_pes());
        let words = base
            + heap.alloc(wbytes, 64).map_err(|_| {
                CafError::new(
                    STAT_ERROR,
                    format!("{TEAM_HEAP_VAR} is too small for the team's own words"),
                )
            })?;
        // SAFETY: this image's part of the fresh arena, `wbytes` long.
        unsafe { std::ptr::write_bytes(words as *mut u8, 0, wbytes) };
        rshmem_core::team::sync_in(R, &core)?;
        let handle = {
            let mut f = FORMED.lock().unwrap_or_else(|e| e.into_inner());
            f.1 += 1;
            HANDLE0 + 16 * f.1
        };
        let t = Box::into_raw(Box::new(CafTeam {
            number: team_number,
            team: core,
            parent,
            arena: Some(Arena {
                base,
                heap: Mutex::new(heap),
            }),
            scratch: Mutex::new((0, 0)),
            words: ArrivalWords::new(words),
            handle,
            children: Mutex::new(Vec::new()),
        }));
        // SAFETY: just made; freed only by `release`.
        Ok(unsafe { &*t })
    })();
    match r {
        Ok(t) => {
            let addr = t as *const CafTeam as usize;
            FORMED
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .push((t.handle, addr));
            if let Some(p) = parent {
                p.children
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(addr);
            }
            // SAFETY: contract.
            unsafe { team.write(t.handle as *mut c_void) };
        }
        Err(e) => fatal(R, &format!("FORM TEAM: {}", e.msg)),
    }
}

/// `change team(team)`: the team (formed from the current team) becomes current, after
/// its images synchronize.
///
/// # Safety
/// `team` points at a team value.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_change_team(team: *mut *mut c_void, _coselector: c_int) {
    const R: &str = "_gfortran_caf_change_team";
    // SAFETY: contract.
    let t = unsafe { team_at(R, team) };
    let parent_is_current = match (t.parent, current()) {
        (None, None) => true,
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        _ => false,
    };
    if !parent_is_current {
        fatal(
            R,
            &format!(
                "CHANGE TEAM: team {} was not formed from the current team",
                t.number
            ),
        );
    }
    // Whatever this image wrote before is complete before the team's images go on.
    if let Err(e) = rshmem_core::order::quiet() {
        fatal(R, &e.to_string());
    }
    CURRENT.store((t as *const CafTeam).cast_mut(), Ordering::Release);
    if let Err(e) = t.sync(R) {
        fatal(R, &format!("CHANGE TEAM: {}", e.msg));
    }
}

/// `end team`: the images of the current team synchronize, then its parent becomes
/// current. (Coarrays allocated in the team and still allocated stay where they are:
/// gfortran 12 does not deallocate them, and the runtime cannot clear its descriptors.)
#[no_mangle]
pub extern "C" fn _gfortran_caf_end_team(_team: *mut *mut c_void) {
    const R: &str = "_gfortran_caf_end_team";
    let Some(t) = current() else {
        fatal(R, "END TEAM while the initial team is current");
    };
    if let Err(e) = t.sync(R) {
        fatal(R, &format!("END TEAM: {}", e.msg));
    }
    let parent = t
        .parent
        .map_or(std::ptr::null_mut(), |p| (p as *const CafTeam).cast_mut());
    CURRENT.store(parent, Ordering::Release);
}

/// `sync team(team)`: waits for every image of `team` (the current team, an ancestor, or
/// a team formed from the current one).
///
/// # Safety
/// `team` points at a team value.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_sync_team(team: *mut *mut c_void, _unused: c_int) {
    const R: &str = "_gfortran_caf_sync_team";
    // SAFETY: contract.
    let t = unsafe { team_at(R, team) };
    if let Err(e) = t.sync(R) {
        fatal(R, &format!("SYNC TEAM: {}", e.msg));
    }
}

/// `team_number([team])`: gfortran 12 passes the team value itself, or null for the
/// current team. The initial team's number is -1.
#[no_mangle]
pub extern "C" fn _gfortran_caf_team_number(team: *mut c_void) -> c_int {
    const R: &str = "_gfortran_caf_team_number";
    if team.is_null() {
        return current().map_or(-1, |t| t.number);
    }
    team_value(R, team).number
}

/// `get_team([level])`: gfortran 12 cannot compile GET_TEAM (its front end stops with an
/// internal compiler error, and `iso_fortran_env` lacks INITIAL_TEAM, PARENT_TEAM and
/// CURRENT_TEAM), and the entry point it declares returns nothing; kept so that a call
/// fails naming the feature.
#[no_mangle]
pub extern "C" fn _gfortran_caf_get_team(_level: c_int) {
    unsupported(
        "_gfortran_caf_get_team",
        "GET_TEAM (gfortran 12 cannot compile it: internal compiler error)",
    )
}
