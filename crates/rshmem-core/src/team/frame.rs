//! The frame every collective entry point runs in (the team splits and destroy too): the runtime, the team's turn, the
//! call check, and the profile count, taken in that order when the call begins and let
//! go when it ends (the frame is dropped, on an error return too).
//!
//! It lives with the teams, not in `coll/`, because the team layer's own entry point
//! (`shmem_team_sync`) runs in it too, and everything it takes is at or below this layer.

use std::sync::MutexGuard;

use super::call_check::{Arg, Kind};
use super::Team;
use crate::error::Result;
use crate::profile::{self, CollCount, Family};
use crate::runtime::{rt, Runtime};

/// A collective call in progress on this PE.
pub(crate) struct Frame {
    rt: &'static Runtime,
    /// Fields drop in order: the turn goes first, then the count is taken.
    _turn: Option<MutexGuard<'static, ()>>,
    _count: Option<CollCount>,
}

impl Frame {
    /// Begins collective `routine` of `kind` on `team`, moving `bytes` (for the profile):
    /// drains earlier non-blocking collectives and takes the team's turn, then makes the
    /// call check (`SHMEM_DEBUG` agreement on `args`). A failed check still counts as a
    /// call, as the faces counted it.
    #[inline(always)]
    pub(crate) fn begin(
        routine: &'static str,
        team: &Team,
        kind: Kind,
        args: &[Arg],
        bytes: usize,
    ) -> Result<Frame> {
        let count = profile::coll(kind.family(), bytes);
        Self::open(rt(routine)?, routine, team, kind, args, count, true)
    }

    /// [`Frame::begin`] for the world's barrier and sync, which wait for earlier
    /// non-blocking collectives (in the call check) but take no turn; `counted`: a call
    /// of the program (not a step of a face's own routine).
    #[inline(always)]
    pub(crate) fn begin_world(routine: &'static str, kind: Kind, counted: bool) -> Result<Frame> {
        let count = if counted {
            profile::coll(kind.family(), 0)
        } else {
            None
        };
        let rt = rt(routine)?;
        Self::open(rt, routine, &rt.teams().world, kind, &[], count, false)
    }

    /// [`Frame::begin`] for the team layer's own collectives (the splits and
    /// `shmem_team_destroy`) on `rt`, which the profile does not count as collectives.
    pub(crate) fn begin_team_op(
        rt: &'static Runtime,
        routine: &'static str,
        team: &Team,
        kind: Kind,
        args: &[Arg],
    ) -> Result<Frame> {
        Self::open(rt, routine, team, kind, args, None, true)
    }

    #[inline(always)]
    fn open(
        rt: &'static Runtime,
        routine: &'static str,
        team: &Team,
        kind: Kind,
        args: &[Arg],
        count: Option<CollCount>,
        turn: bool,
    ) -> Result<Frame> {
        let turn = if turn { rt.turn(team) } else { None };
        rt.check_coll(routine, team, kind, args)?;
        Ok(Frame {
            rt,
            _turn: turn,
            _count: count,
        })
    }

    /// The runtime the collective runs on.
    #[inline(always)]
    pub(crate) fn rt(&self) -> &'static Runtime {
        self.rt
    }
}

impl Kind {
    /// The profile family a collective of this kind counts in.
    fn family(self) -> Family {
        match self {
            Kind::BarrierAll | Kind::SyncAll | Kind::TeamSync => Family::Sync,
            _ => Family::Coll,
        }
    }
}
