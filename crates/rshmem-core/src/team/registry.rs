//! The team layer's state: the predefined teams, the free team slots and the active sets'
//! pair counters, published by `world::init` beside the runtime.

use std::sync::{Arc, Mutex};

use super::group::PairCounts;
use super::{Members, SlotMap, Team, TeamConfig};
use crate::runtime::published::Published;
use crate::runtime::Runtime;

/// Slots of the predefined teams.
const WORLD_SLOT: usize = 0;
const SHARED_SLOT: usize = 1;
const HOST_SLOT: usize = 2;
const LEADERS_SLOT: usize = 3;
const INNER_HOST_SLOT: usize = 4;
const INNER_LEADERS_SLOT: usize = 5;
/// Slots taken by predefined teams on every PE (the config refuses fewer team slots).
const PREDEFINED_SLOTS: usize = rshmem_util::config::TEAMS_MIN;

/// This PE's teams.
#[derive(Debug)]
pub(crate) struct Teams {
    /// Team slots free on this PE.
    pub(crate) slots: Mutex<SlotMap>,
    /// `SHMEM_TEAM_WORLD`.
    pub(crate) world: Arc<Team>,
    /// `SHMEM_TEAM_SHARED`: the PEs whose memory this PE maps.
    pub(crate) shared: Arc<Team>,
    /// `SHMEMX_TEAM_HOST`: the PEs of this (possibly virtual) host.
    pub(crate) host: Arc<Team>,
    /// `SHMEMX_TEAM_LEADERS`: the first PE of each host; `None` on other PEs.
    pub(crate) leaders: Option<Arc<Team>>,
    /// The runtime's own copies of HOST and LEADERS, for WORLD's hierarchical
    /// collectives: slots of their own, so a user's collective on HOST in another thread
    /// never shares their scratch.
    pub(crate) inner_host: Arc<Team>,
    pub(crate) inner_leaders: Option<Arc<Team>>,
    /// Whether WORLD's collectives compose `inner_host` and `inner_leaders` by default.
    pub(crate) world_hier: bool,
    /// This PE's counts of the active sets' pair-counted scratch (`team::group`).
    pub(crate) pairs: PairCounts,
    /// Held through each active-set collective: they share the pair counters, so one
    /// PE runs them one at a time.
    pub(crate) set_turn: Mutex<()>,
}

/// Where the predefined teams lie, as `world::init` found them.
#[derive(Debug)]
pub(crate) struct Placement {
    pub(crate) me: usize,
    pub(crate) npes: usize,
    /// The PEs this PE maps.
    pub(crate) shared: Members,
    /// The PEs of this PE's host, and the first PE of every host.
    pub(crate) host: Members,
    pub(crate) leaders: Members,
    /// Whether WORLD's collectives compose HOST and LEADERS.
    pub(crate) world_hier: bool,
    /// `SHMEM_TEAMS_MAX`.
    pub(crate) max_teams: usize,
}

static TEAMS: Published<Teams> = Published::new();

impl Teams {
    /// The predefined teams of a PE placed as `p` says.
    pub(crate) fn new(p: Placement) -> Teams {
        let predefined = |members: &Members, slot| {
            let rank = members.rank_of(p.me)?;
            Some(Arc::new(Team::new(
                members.clone(),
                rank,
                slot,
                TeamConfig::default(),
                true,
            )))
        };
        let world = Members::Strided {
            start: 0,
            stride: 1,
            size: p.npes,
        };
        let mine = "a PE belongs to WORLD, SHARED and its HOST";
        Teams {
            slots: Mutex::new(SlotMap::new(p.max_teams, PREDEFINED_SLOTS)),
            world: predefined(&world, WORLD_SLOT).expect(mine),
            shared: predefined(&p.shared, SHARED_SLOT).expect(mine),
            host: predefined(&p.host, HOST_SLOT).expect(mine),
            leaders: predefined(&p.leaders, LEADERS_SLOT),
            inner_host: predefined(&p.host, INNER_HOST_SLOT).expect(mine),
            inner_leaders: predefined(&p.leaders, INNER_LEADERS_SLOT),
            world_hier: p.world_hier,
            pairs: PairCounts::new(p.npes),
            set_turn: Mutex::new(()),
        }
    }

    /// Publishes this PE's teams (init, before the runtime).
    pub(crate) fn publish(self) {
        TEAMS.publish(Box::new(self));
    }

    /// Takes them back (the last finalize, after the runtime).
    pub(crate) fn unpublish() -> Option<Box<Teams>> {
        TEAMS.take()
    }
}

impl Runtime {
    /// This PE's teams.
    #[inline(always)]
    pub(crate) fn teams(&self) -> &'static Teams {
        TEAMS.expect()
    }

    /// `SHMEM_TEAM_WORLD`.
    pub fn world(&self) -> &Arc<Team> {
        &self.teams().world
    }

    /// `SHMEM_TEAM_SHARED`.
    pub fn shared(&self) -> &Arc<Team> {
        &self.teams().shared
    }

    /// `SHMEMX_TEAM_HOST`.
    pub fn host(&self) -> &Arc<Team> {
        &self.teams().host
    }

    /// `SHMEMX_TEAM_LEADERS` (`None` on PEs that lead no host).
    pub fn leaders(&self) -> Option<&Arc<Team>> {
        self.teams().leaders.as_ref()
    }
}
