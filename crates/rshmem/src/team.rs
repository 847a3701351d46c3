//! Teams: [`TeamRef`] (the predefined teams and a view of any team) and [`Team`] (a team
//! made by a split, destroyed when dropped), plus the team accessors of [`Shmem`].

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::Arc;

use rshmem_core::team::{self as core_team, Team as CoreTeam};

pub use rshmem_core::team::TeamConfig;

use crate::error::{Error, Result};
use crate::shmem::{ok, Shmem};

/// A team: an ordered subset of the world's PEs, numbered `0..n_pes()` in team order
/// (*team ranks*), as seen by one of its members.
///
/// A `TeamRef` is what [`Shmem::world`], [`Shmem::shared`], [`Shmem::host`] and
/// [`Shmem::leaders`] hand out: a predefined team, which lives as long as the guard and is
/// never destroyed. Every team made by a split is a [`Team`], which dereferences to a
/// `TeamRef`, so all queries and splits below work on both, and `&team` passes wherever
/// a `&TeamRef` is asked for.
///
/// A `TeamRef` is not `Clone` (a view of a [`Team`] must not outlive it); ask the guard
/// again for another handle on a predefined team.
///
/// # Collectives
///
/// [`sync`](Self::sync) and the splits are collective over the team: every member calls
/// them, in the same order as the other members. Two threads of one PE must not run
/// collectives on the same team at once: a team is `Send` but not `Sync`.
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let world = shmem.world();
/// assert_eq!((world.my_pe(), world.n_pes()), (shmem.my_pe(), shmem.n_pes()));
/// world.sync()?;
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// ```compile_fail,E0277
/// let shmem = rshmem::Shmem::init()?;
/// let world = shmem.world();
/// std::thread::scope(|s| {
///     s.spawn(|| world.sync()); // error: `TeamRef` cannot be shared between threads
/// });
/// # Ok::<(), rshmem::Error>(())
/// ```
pub struct TeamRef<'s> {
    pub(crate) team: Arc<CoreTeam>,
    shmem: &'s Shmem,
    /// `Send` but not `Sync`: no concurrent collectives on one team.
    _not_sync: PhantomData<Cell<()>>,
}

impl fmt::Debug for TeamRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TeamRef")
            .field("my_pe", &self.my_pe())
            .field("n_pes", &self.n_pes())
            .field("members", self.team.members())
            .field("predefined", &self.is_predefined())
            .finish()
    }
}

impl<'s> TeamRef<'s> {
    fn new(team: Arc<CoreTeam>, shmem: &'s Shmem) -> Self {
        TeamRef {
            team,
            shmem,
            _not_sync: PhantomData,
        }
    }

    /// `shmem_team_my_pe`: this PE's rank in the team, in `0..n_pes()`.
    pub fn my_pe(&self) -> usize {
        self.team.my_pe()
    }

    /// `shmem_team_n_pes`: the number of members.
    pub fn n_pes(&self) -> usize {
        self.team.n_pes()
    }

    /// `shmem_team_get_config`: the configuration the team was created with (the default
    /// for predefined teams).
    pub fn config(&self) -> TeamConfig {
        self.team.config()
    }

    /// Whether this is a predefined team (world, shared, host or leaders).
    pub fn is_predefined(&self) -> bool {
        self.team.is_predefined()
    }

    /// The guard this team belongs to.
    pub fn shmem(&self) -> &'s Shmem {
        self.shmem
    }

    /// World PE number of team rank `rank`, or `None` if `rank >= n_pes()`. (Equivalent
    /// to [`translate_pe`](Self::translate_pe) into [`Shmem::world`].)
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// assert_eq!(world.world_pe(world.my_pe()), Some(shmem.my_pe()));
    /// assert_eq!(world.world_pe(world.n_pes()), None);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn world_pe(&self, rank: usize) -> Option<usize> {
        (rank < self.n_pes()).then(|| self.team.members().pe(rank))
    }

    /// The world PE numbers of the members, in team-rank order.
    pub fn world_pes(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        (0..self.n_pes()).map(|r| self.team.members().pe(r))
    }

    /// `shmem_team_translate_pe`: the rank in `dest` of the PE with rank `rank` in this
    /// team; `None` if `rank` is out of range or that PE is not a member of `dest`.
    ///
    /// Not collective, and any PE may translate between teams it belongs to.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let (world, shared) = (shmem.world(), shmem.shared());
    /// let r = shared.translate_pe(shared.my_pe(), &world);
    /// assert_eq!(r, Some(shmem.my_pe()));
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn translate_pe(&self, rank: usize, dest: &TeamRef<'_>) -> Option<usize> {
        self.team.translate(rank, &dest.team)
    }

    /// `shmem_team_sync`: waits until every member has called it. Collective over the
    /// team. It does not complete outstanding operations (use [`Shmem::quiet`] first for
    /// a team barrier).
    ///
    /// # Errors
    /// Only if the runtime is unusable.
    pub fn sync(&self) -> Result<()> {
        core_team::sync(&self.team).map_err(Error::from)
    }

    /// `shmemx_team_survivors`: the members of this team that have not failed (died
    /// without finalizing), in rank order, as a new team. Collective over the surviving
    /// members, which do not wait for the dead ones: after a collective returned
    /// [`Error::PeFailed`], every survivor calls it to go on (see [`Shmem::failed_pes`]).
    /// An active set gives an active set.
    ///
    /// If another PE dies during the call, survivors may disagree on the new team; its
    /// first collective then fails with [`Error::PeFailed`] and they call this again.
    ///
    /// # Errors
    /// [`Error::Core`] when a member finalized instead of calling it, or no team slot is
    /// free on every survivor (`SHMEM_TEAMS_MAX`).
    pub fn survivors(&self) -> Result<Team<'s>> {
        let t = core_team::survivors(&self.team)?;
        Ok(Team::new(t, self.shmem))
    }

    /// `shmem_team_split_strided`: the team of the members with ranks
    /// `start, start + stride, ..., start + (size - 1) * stride` of this team, numbered in
    /// that order. Collective over this team: every member calls it with the same
    /// arguments. `stride` may be negative, or 0 when `size` is 1.
    ///
    /// Returns `Ok(None)` on members that are not in the new team.
    ///
    /// # Errors
    /// On every member, when the triplet leaves this team (or `size` is 0, or `stride` is
    /// 0 with `size > 1`), or when no team slot is free (`SHMEM_TEAMS_MAX`).
    ///
    /// ```
    /// use rshmem::TeamConfig;
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let n = world.n_pes();
    /// // Even ranks; odd ones get None.
    /// let even = world.split_strided(0, 2, n.div_ceil(2), &TeamConfig::default())?;
    /// if let Some(even) = &even {
    ///     assert_eq!(even.my_pe(), world.my_pe() / 2);
    /// }
    /// // The world, reversed.
    /// let rev = world.split_strided(n - 1, -1, n, &TeamConfig::default())?.unwrap();
    /// assert_eq!(rev.my_pe(), n - 1 - world.my_pe());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn split_strided(
        &self,
        start: usize,
        stride: i64,
        size: usize,
        config: &TeamConfig,
    ) -> Result<Option<Team<'s>>> {
        const R: &str = "shmem_team_split_strided";
        let start = to_i64(R, "start", start)?;
        let size = to_i64(R, "size", size)?;
        let t = core_team::split_strided(&self.team, start, stride, size, *config)?;
        Ok(t.map(|t| Team::new(t, self.shmem)))
    }

    /// `shmem_team_split_2d`: arranges this team's members in rows of `xrange` (the last
    /// row may be short) and returns `(x-team, y-team)`: this PE's row, where its rank is
    /// its column index `my_pe() % xrange`, and its column, where its rank is its row
    /// index `my_pe() / xrange`. An `xrange` above `n_pes()` counts as `n_pes()`.
    /// Collective over this team.
    ///
    /// Every member gets both teams; the `Option`s are there for the interface's
    /// symmetry with the other splits and are always `Some` on success.
    ///
    /// # Errors
    /// On every member when `xrange` is 0 or no team slots are free.
    ///
    /// ```
    /// use rshmem::TeamConfig;
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let cfg = TeamConfig::default();
    /// let (row, col) = world.split_2d(2, &cfg, &cfg)?;
    /// let (row, col) = (row.unwrap(), col.unwrap());
    /// assert_eq!(row.my_pe(), world.my_pe() % 2);
    /// assert_eq!(col.my_pe(), world.my_pe() / 2);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn split_2d(
        &self,
        xrange: usize,
        xconfig: &TeamConfig,
        yconfig: &TeamConfig,
    ) -> Result<(Option<Team<'s>>, Option<Team<'s>>)> {
        const R: &str = "shmem_team_split_2d";
        let xrange = to_i64(R, "xrange", xrange)?;
        let (x, y) = core_team::split_2d(&self.team, xrange, *xconfig, *yconfig)?;
        Ok((
            x.map(|t| Team::new(t, self.shmem)),
            y.map(|t| Team::new(t, self.shmem)),
        ))
    }

    /// Splits by color (an rshmem extension, `shmemx_team_split_color`, like
    /// `MPI_Comm_split`): members passing the same non-negative `color` form a team,
    /// ordered by `key`, ties broken by rank in this team. A negative color gives
    /// `Ok(None)`. Collective over this team (colors and keys may differ between PEs).
    ///
    /// # Errors
    /// On every member when no team slot is free.
    ///
    /// ```
    /// use rshmem::TeamConfig;
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let me = world.my_pe();
    /// let parity = world.split_color((me % 2) as i32, 0, &TeamConfig::default())?.unwrap();
    /// assert_eq!(parity.my_pe(), me / 2);
    /// assert!(world.split_color(-1, 0, &TeamConfig::default())?.is_none());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn split_color(
        &self,
        color: i32,
        key: i32,
        config: &TeamConfig,
    ) -> Result<Option<Team<'s>>> {
        let t = core_team::split_color(&self.team, color, key, *config)?;
        Ok(t.map(|t| Team::new(t, self.shmem)))
    }
}

fn to_i64(routine: &'static str, arg: &'static str, v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::InvalidArgument {
        routine,
        arg,
        reason: "too large",
    })
}

/// A team made by a split ([`TeamRef::split_strided`], [`TeamRef::split_2d`],
/// [`TeamRef::split_color`]); it dereferences to [`TeamRef`] for queries, syncs and
/// further splits.
///
/// # Destruction is collective
///
/// Dropping a `Team` (or calling [`destroy`](Self::destroy)) is `shmem_team_destroy`:
/// collective over its members, with a team sync. Every member must drop its teams **in
/// the same order** (drop them explicitly, or keep them in the same scopes on every PE).
/// While a thread panics, drops leak the team instead of synchronizing with PEs that may
/// never arrive.
///
/// A team cannot be destroyed while it is borrowed. Teams split from it borrow only the
/// guard, not their parent, so a child may outlive its parent (which the specification
/// allows); children are independent teams.
///
/// ```
/// use rshmem::TeamConfig;
/// let shmem = rshmem::Shmem::init()?;
/// let world = shmem.world();
/// let all = world.split_strided(0, 1, world.n_pes(), &TeamConfig::default())?.unwrap();
/// let first = all.split_strided(0, 0, 1, &TeamConfig::default())?; // rank 0 of `all`
/// assert_eq!(first.is_some(), all.my_pe() == 0);
/// drop(all); // the parent first: fine
/// drop(first);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Teams cannot outlive the guard:
///
/// ```compile_fail,E0505
/// use rshmem::TeamConfig;
/// let shmem = rshmem::Shmem::init()?;
/// let t = shmem.world().split_strided(0, 1, 1, &TeamConfig::default())?;
/// shmem.finalize()?; // error: cannot move out of `shmem` because it is borrowed
/// drop(t);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Nor can a team be destroyed while borrowed:
///
/// ```compile_fail,E0505
/// use rshmem::TeamConfig;
/// let shmem = rshmem::Shmem::init()?;
/// let t = shmem.world().split_strided(0, 1, 1, &TeamConfig::default())?.unwrap();
/// let view: &rshmem::TeamRef = &t;
/// drop(t); // error: cannot move out of `t` because it is borrowed
/// view.sync()?;
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct Team<'s> {
    team: TeamRef<'s>,
    /// Set once destroyed (by `destroy`), so `Drop` does nothing more.
    done: bool,
}

impl<'s> Team<'s> {
    pub(crate) fn new(team: Arc<CoreTeam>, shmem: &'s Shmem) -> Self {
        Team {
            team: TeamRef::new(team, shmem),
            done: false,
        }
    }

    /// `shmem_team_destroy`: destroys the team, collectively over its members (as
    /// dropping it does), and reports errors.
    ///
    /// ```
    /// use rshmem::TeamConfig;
    /// let shmem = rshmem::Shmem::init()?;
    /// let t = shmem.world().split_color(0, 0, &TeamConfig::default())?.unwrap();
    /// t.destroy()?;
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn destroy(mut self) -> Result<()> {
        self.done = true;
        if self.team.team.is_predefined() {
            // An active set with WORLD's members is WORLD itself.
            return Ok(());
        }
        core_team::destroy(&self.team.team).map_err(Error::from)
    }
}

impl<'s> Deref for Team<'s> {
    type Target = TeamRef<'s>;
    fn deref(&self) -> &TeamRef<'s> {
        &self.team
    }
}

impl Drop for Team<'_> {
    fn drop(&mut self) {
        // While panicking the other members may never reach the destroy's sync: leak.
        if self.done || std::thread::panicking() || self.team.team.is_predefined() {
            return;
        }
        ok(core_team::destroy(&self.team.team));
    }
}

/// The predefined teams. They live as long as the guard and are never destroyed.
impl Shmem {
    /// `SHMEM_TEAM_WORLD`: every PE, ranked by PE number.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// assert_eq!(shmem.world().n_pes(), shmem.n_pes());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn world(&self) -> TeamRef<'_> {
        TeamRef::new(ok(core_team::world()), self)
    }

    /// `SHMEM_TEAM_SHARED`: the PEs whose symmetric memory this PE can load and store
    /// directly (every PE on a single host).
    pub fn shared(&self) -> TeamRef<'_> {
        TeamRef::new(ok(core_team::shared()), self)
    }

    /// `SHMEMX_TEAM_HOST` (extension): the PEs on this PE's host, ranked by PE number.
    /// `SHMEM_VIRTUAL_HOSTS=k` splits the world into `k` contiguous blocks of PEs that
    /// act as hosts (for testing hierarchical algorithms on one machine).
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let host = shmem.host();
    /// assert_eq!(host.world_pe(host.my_pe()), Some(shmem.my_pe()));
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn host(&self) -> TeamRef<'_> {
        TeamRef::new(ok(core_team::host()), self)
    }

    /// `SHMEMX_TEAM_LEADERS` (extension): the first PE of each host, ranked by host;
    /// `None` on the other PEs.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let host = shmem.host();
    /// assert_eq!(shmem.leaders().is_some(), host.world_pe(0) == Some(shmem.my_pe()));
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn leaders(&self) -> Option<TeamRef<'_>> {
        ok(core_team::leaders()).map(|t| TeamRef::new(t, self))
    }
}
