//! Teams: ordered subsets of the world's PEs with their own synchronization scratch.
//!
//! A team is its member list (a strided triplet in world numbering, or an explicit list for
//! color splits) plus a *slot*: the index of its scratch words in every member's runtime
//! area. Slots are agreed on at creation by an AND-reduction of the parent members'
//! availability bitmaps (seed 000, §IV-C), so two live teams that share a PE never share a
//! slot; scratch is indexed (slot, round), so neighbouring slots never overlap.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) mod call_check;
mod contexts;
pub(crate) mod frame;
pub(crate) mod group;
pub(crate) mod peers;
pub(crate) mod registry;
mod survivors;
pub use crate::runtime::members::Members;
pub use contexts::{create_ctx, ctx_team};
pub use group::strided_set;
pub(crate) use group::{Flag, Scratch};
pub use survivors::survivors;

use crate::error::{At, Error, Result};
use crate::runtime::{Layout, Runtime};
use crate::team::call_check::{Kind, Show};
use crate::team::frame::Frame;
use crate::word::AmoOp;

/// Where a team's members lie, for choosing its algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// Every member maps every other member's memory (one host).
    Host,
    /// WORLD, across hosts whose PEs share memory (HOST and LEADERS compose it).
    World,
    /// Any other team that spans hosts.
    Hosts,
    /// Every member is reached through the network library, which maps their memory
    /// (UCX's shared memory, one host): its transfers are copies, its messages cheap, yet
    /// no member maps another's memory itself, so the node-local algorithms cannot run.
    Mapped,
}

/// The x-team and y-team of a 2-D split (`None` where this PE is not a member).
pub type TeamPair = (Option<Arc<Team>>, Option<Arc<Team>>);

/// Options of a new team (`shmem_team_config_t`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamConfig {
    /// Contexts the team should be able to create (0 = no guarantee).
    pub num_contexts: i32,
}

/// A team as seen by one of its members.
#[derive(Debug)]
pub struct Team {
    members: Members,
    my_rank: usize,
    pub(crate) scratch: Scratch,
    config: TeamConfig,
    /// Syncs of this team entered so far (the epoch written into members' flags).
    pub(crate) epoch: AtomicU64,
    /// Collective calls on this team entered so far (`team::call_check`'s sequence).
    pub(crate) calls: AtomicU64,
    predefined: bool,
    /// Messages sent / received on each channel (`coll::msg`); the peers' counters
    /// mirror them, so they never travel.
    pub(crate) sent: [AtomicU64; Layout::CHANNELS],
    pub(crate) recvd: [AtomicU64; Layout::CHANNELS],
    /// Tree broadcast: chunks announced to this PE so far, and acknowledgements it has
    /// collected from its children so far (the counts the shared words must reach).
    pub(crate) tree_ready: AtomicU64,
    pub(crate) tree_done: AtomicU64,
    /// Bulk network reductions (`coll::net`): chunks the other members have signalled
    /// into this PE's destinations so far (the count the shared word must reach).
    pub(crate) direct_done: AtomicU64,
    /// Low-latency reductions and broadcasts so far (their sequences, `coll::ll`), and
    /// the broadcast count every other member is known to have consumed.
    pub(crate) ll_calls: AtomicU64,
    pub(crate) ll_bcasts: AtomicU64,
    pub(crate) ll_consumed: AtomicU64,
    /// Staged broadcasts (`coll::staged`): chunks published on the team so far, and the
    /// count every other member is known to have consumed.
    pub(crate) stage_chunks: AtomicU64,
    pub(crate) stage_consumed: AtomicU64,
    /// Shareable contexts made from the team (addresses), destroyed with it.
    pub(crate) ctxs: Mutex<Vec<usize>>,
    /// Where the members lie (`Runtime::span`), found on the first collective.
    span: OnceLock<Span>,
}

impl Team {
    pub(crate) fn new(
        members: Members,
        my_rank: usize,
        slot: usize,
        config: TeamConfig,
        predefined: bool,
    ) -> Team {
        Team::with_scratch(members, my_rank, Scratch::Slot(slot), config, predefined)
    }

    pub(crate) fn with_scratch(
        members: Members,
        my_rank: usize,
        scratch: Scratch,
        config: TeamConfig,
        predefined: bool,
    ) -> Team {
        Team {
            members,
            my_rank,
            scratch,
            config,
            epoch: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            predefined,
            sent: Default::default(),
            recvd: Default::default(),
            tree_ready: AtomicU64::new(0),
            tree_done: AtomicU64::new(0),
            direct_done: AtomicU64::new(0),
            ll_calls: AtomicU64::new(0),
            ll_bcasts: AtomicU64::new(0),
            ll_consumed: AtomicU64::new(0),
            stage_chunks: AtomicU64::new(0),
            stage_consumed: AtomicU64::new(0),
            ctxs: Mutex::new(Vec::new()),
            span: OnceLock::new(),
        }
    }

    /// This PE's rank in the team.
    pub fn my_pe(&self) -> usize {
        self.my_rank
    }

    /// Number of members.
    pub fn n_pes(&self) -> usize {
        self.members.size()
    }

    /// The members.
    pub fn members(&self) -> &Members {
        &self.members
    }

    /// The configuration it was created with.
    pub fn config(&self) -> TeamConfig {
        self.config
    }

    /// Whether this is WORLD or SHARED (not destroyable).
    pub fn is_predefined(&self) -> bool {
        self.predefined
    }

    /// Scratch slot index (`None` for an active set, whose scratch is pair-counted).
    pub fn slot(&self) -> Option<usize> {
        match self.scratch {
            Scratch::Slot(s) => Some(s),
            Scratch::Pairs => None,
        }
    }

    /// Whether this is an active set (made locally, pair-counted scratch).
    pub fn is_active_set(&self) -> bool {
        self.scratch == Scratch::Pairs
    }

    /// Translates `rank` of this team to a rank of `dest`, if that PE is in both.
    pub fn translate(&self, rank: usize, dest: &Team) -> Option<usize> {
        (rank < self.n_pes()).then(|| dest.members.rank_of(self.members.pe(rank)))?
    }
}

/// Which slots this PE has free: bit `s` of word `s / 64` set = free.
#[derive(Debug)]
pub(crate) struct SlotMap {
    free: Vec<u64>,
}

impl SlotMap {
    /// All of `n` slots free except the predefined ones.
    pub(crate) fn new(n: usize, reserved: usize) -> SlotMap {
        let mut free = vec![0u64; n.div_ceil(64)];
        for s in reserved..n {
            free[s / 64] |= 1 << (s % 64);
        }
        SlotMap { free }
    }

    pub(crate) fn words(&self) -> &[u64] {
        &self.free
    }

    pub(crate) fn take(&mut self, s: usize) {
        self.free[s / 64] &= !(1 << (s % 64));
    }

    pub(crate) fn give_back(&mut self, s: usize) {
        self.free[s / 64] |= 1 << (s % 64);
    }
}

impl Runtime {
    /// Where `team`'s members lie, which decides its algorithms: on one host (every
    /// member maps every other: the relation is an equivalence, so all members agree),
    /// WORLD across hosts that compose hierarchically, or across hosts.
    pub(crate) fn span(&self, team: &Team) -> Span {
        *team.span.get_or_init(|| {
            let n = team.n_pes();
            if (0..n).all(|r| self.fabric.maps(team.members.pe(r))) {
                Span::Host
            } else if std::ptr::eq(team, &*self.teams().world) && self.teams().world_hier {
                Span::World
            } else if self.fabric.network_maps_every_pe() {
                Span::Mapped
            } else {
                Span::Hosts
            }
        })
    }

    /// The slot of `parent` for a split, which only a team has.
    fn parent_slot(routine: &'static str, parent: &Team) -> Result<usize> {
        parent.slot().ok_or(Error::InvalidArgument {
            routine,
            arg: "parent_team",
            reason: "is an active set, which cannot be split (split a team instead)",
        })
    }

    /// This PE's free-slot bitmap, also written to the agreement scratch of slot `slot`
    /// for the other members to read.
    pub(crate) fn publish_free_slots(&self, slot: usize) -> Vec<u64> {
        let mine: Vec<u64> = self
            .teams()
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .words()
            .to_vec();
        for (w, v) in mine.iter().enumerate() {
            self.set_own(self.layout.slot_bits(slot, w), *v);
        }
        mine
    }

    /// Agrees with the other members of `parent` on a slot free on all of them
    /// (AND-reduction of availability bitmaps through the parent's scratch). `None` when
    /// no slot is free everywhere.
    fn agree_slot(&self, routine: &'static str, parent: &Team) -> Result<Option<usize>> {
        let pslot = Self::parent_slot(routine, parent)?;
        let mine = self.publish_free_slots(pslot);
        self.try_sync_in(routine, parent)?;
        let mut all = mine;
        // Each member's bitmap in one get (stable between the two syncs).
        let mut theirs = vec![0u64; all.len()];
        for r in (0..parent.n_pes()).filter(|&r| r != parent.my_rank) {
            let pe = parent.members.pe(r);
            self.fabric
                .get_words(
                    crate::ctx::runtime_ctx(),
                    pe,
                    self.layout.slot_bits(pslot, 0),
                    &mut theirs,
                )
                .at(routine)?;
            for (v, t) in all.iter_mut().zip(&theirs) {
                *v &= t;
            }
        }
        // Nobody may overwrite the scratch for the next split before all have read it.
        self.try_sync_in(routine, parent)?;
        Ok(all
            .iter()
            .enumerate()
            .find(|(_, v)| **v != 0)
            .map(|(w, v)| w * 64 + v.trailing_zeros() as usize))
    }

    /// Creates the team `members` (a subset of `parent`) collectively over `parent`.
    /// Returns the team on members and `None` on the other PEs of `parent`.
    pub fn team_create(
        &self,
        routine: &'static str,
        parent: &Team,
        members: Members,
        config: TeamConfig,
    ) -> Result<Option<Arc<Team>>> {
        let slot = self
            .agree_slot(routine, parent)?
            .ok_or(Error::InvalidArgument {
                routine,
                arg: "parent_team",
                reason: "no team slot is free on every member (raise SHMEM_TEAMS_MAX)",
            })?;
        let Some(my_rank) = members.rank_of(self.me) else {
            return Ok(None);
        };
        self.teams()
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(slot);
        Ok(Some(Arc::new(Team::new(
            members, my_rank, slot, config, false,
        ))))
    }

    /// `shmem_team_split_strided`: members `start + i * stride` (parent numbering).
    /// An invalid triplet fails on every PE of the parent.
    pub fn team_split_strided(
        &'static self,
        parent: &Team,
        start: i64,
        stride: i64,
        size: i64,
        config: TeamConfig,
    ) -> Result<Option<Arc<Team>>> {
        const R: &str = "shmem_team_split_strided";
        let _frame = Frame::begin_team_op(
            self,
            R,
            parent,
            Kind::SplitStrided,
            &[
                ("start", start as u64, Show::Num),
                ("stride", stride as u64, Show::Num),
                ("size", size as u64, Show::Num),
            ],
        )?;
        let members =
            parent
                .members
                .sub_strided(start, stride, size)
                .ok_or(Error::InvalidArgument {
                    routine: R,
                    arg: "start/stride/size",
                    reason: "the triplet selects PEs outside the parent team",
                })?;
        self.team_create(R, parent, members, config)
    }

    /// `shmem_team_split_2d`: rows of `xrange` PEs (x-teams) and the columns (y-teams).
    pub fn team_split_2d(
        &'static self,
        parent: &Team,
        xrange: i64,
        xconfig: TeamConfig,
        yconfig: TeamConfig,
    ) -> Result<TeamPair> {
        const R: &str = "shmem_team_split_2d";
        let _frame = Frame::begin_team_op(
            self,
            R,
            parent,
            Kind::Split2d,
            &[("xrange", xrange as u64, Show::Num)],
        )?;
        if xrange < 1 {
            return Err(Error::InvalidArgument {
                routine: R,
                arg: "xrange",
                reason: "must be at least 1",
            });
        }
        let n = parent.n_pes() as i64;
        let xrange = xrange.min(n);
        let yrange = (n + xrange - 1) / xrange;
        let (x, y) = (
            parent.my_rank as i64 % xrange,
            parent.my_rank as i64 / xrange,
        );
        // Every parent PE takes part in every row's and column's creation, in order, so
        // slot agreement stays collective; each keeps only its own row and column.
        let mut xt = None;
        for row in 0..yrange {
            let size = xrange.min(n - row * xrange);
            let m = parent
                .members
                .sub_strided(row * xrange, 1, size)
                .expect("row inside parent");
            let t = self.team_create(R, parent, m, xconfig)?;
            if row == y {
                xt = t;
            }
        }
        let mut yt = None;
        for col in 0..xrange {
            let size = (n - col + xrange - 1) / xrange;
            let m = parent
                .members
                .sub_strided(col, xrange, size)
                .expect("column inside parent");
            let t = self.team_create(R, parent, m, yconfig)?;
            if col == x {
                yt = t;
            }
        }
        Ok((xt, yt))
    }

    /// `shmemx_team_split_color`: collective over `parent`; PEs passing the same
    /// non-negative `color` form a team ordered by `key` (ties by parent rank); a negative
    /// color gives no team. All the new teams share one agreed slot: they are disjoint.
    pub fn team_split_color(
        &'static self,
        parent: &Team,
        color: i32,
        key: i32,
        config: TeamConfig,
    ) -> Result<Option<Arc<Team>>> {
        const R: &str = "shmemx_team_split_color";
        let _frame = Frame::begin_team_op(self, R, parent, Kind::SplitColor, &[])?;
        let pslot = Self::parent_slot(R, parent)?;
        // Exchange (color, key) through the parent's slot scratch.
        let pack = |c: i32, k: i32| ((c as u32 as u64) << 32) | k as u32 as u64;
        self.set_own(self.layout.slot_bits(pslot, 0), pack(color, key));
        self.try_sync_in(R, parent)?;
        let mut mine: Vec<(i32, usize)> = Vec::new();
        for r in 0..parent.n_pes() {
            let v: u64 = self.amo(
                R,
                parent.members.pe(r),
                self.layout.slot_bits(pslot, 0),
                AmoOp::Fetch,
            )?;
            let (c, k) = ((v >> 32) as u32 as i32, v as u32 as i32);
            if color >= 0 && c == color {
                mine.push((k, r));
            }
        }
        self.try_sync_in(R, parent)?;
        mine.sort();
        let members = Members::List(mine.iter().map(|&(_, r)| parent.members.pe(r)).collect());
        if color < 0 {
            // Still take part in the slot agreement, which is collective over the parent.
            let empty = Members::List(Arc::from([]));
            return self.team_create(R, parent, empty, config);
        }
        self.team_create(R, parent, members, config)
    }

    /// `shmem_team_destroy`: collective over the team; frees its slot.
    pub fn team_destroy(&'static self, team: &Team) -> Result<()> {
        if team.predefined {
            return Err(Error::InvalidArgument {
                routine: "shmem_team_destroy",
                arg: "team",
                reason: "predefined teams (WORLD, SHARED) cannot be destroyed",
            });
        }
        let Scratch::Slot(slot) = team.scratch else {
            // An active set owns no scratch: deleting it is local.
            contexts::destroy_all(self, team);
            return Ok(());
        };
        let _frame =
            Frame::begin_team_op(self, "shmem_team_destroy", team, Kind::TeamDestroy, &[])?;
        contexts::destroy_all(self, team);
        // Acknowledgements this PE still owes (`coll::msg`) land before the peers reset the
        // slot's counts after the sync.
        let ctx = crate::ctx::runtime_ctx();
        if self.fabric.flush_deferred(ctx).at("shmem_team_destroy")? {
            self.fabric.quiet(ctx).at("shmem_team_destroy")?;
        }
        self.try_sync_in("shmem_team_destroy", team)?;
        // After the last sync nobody signals our flags for this slot again: reset them so
        // the slot's next owner starts from epoch 0.
        // Only the rounds and channels this team used can hold non-zero counts.
        let rounds = team.n_pes().next_power_of_two().trailing_zeros() as usize;
        for round in 0..rounds {
            let flag = self.layout.sync_flag(slot, round);
            self.set_own(flag, 0);
        }
        self.set_own(self.layout.ft_word(slot), 0);
        self.ll_reset(team);
        self.stage_reset(team);
        for w in 0..8 {
            let word = self.layout.coll_word(slot, w);
            self.set_own(word, 0);
            let word = self.layout.check_word(slot, w);
            self.set_own(word, 0);
            let word = self.layout.call_word(slot, w);
            self.set_own(word, 0);
        }
        for ch in 0..Layout::CHANNELS {
            if team.recvd[ch].load(Ordering::Relaxed) > 0 {
                let f = self.layout.msg_flag(slot, ch);
                self.set_own(f, 0);
            }
            if team.sent[ch].load(Ordering::Relaxed) > 0 {
                let f = self.layout.ack_flag(slot, ch);
                self.set_own(f, 0);
            }
        }
        self.teams()
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .give_back(slot);
        Ok(())
    }
}

/// `shmem_team_ptr` (OpenSHMEM 1.6): like [`ptr`], with `pe` a rank of `team`.
pub fn team_ptr(team: &Team, addr: usize, pe: i64) -> Result<*mut u8> {
    let rt = crate::runtime::rt("shmem_team_ptr")?;
    if pe < 0 || pe as usize >= team.n_pes() {
        return Ok(std::ptr::null_mut());
    }
    let world = team.members().pe(pe as usize);
    Ok(crate::setup::ptr_in(rt, addr, world as i64).unwrap_or(std::ptr::null_mut()))
}

/// `SHMEM_TEAM_WORLD`.
pub fn world() -> Result<Arc<Team>> {
    Ok(crate::runtime::rt("shmem_team_world")?
        .teams()
        .world
        .clone())
}

/// `SHMEM_TEAM_SHARED`.
pub fn shared() -> Result<Arc<Team>> {
    Ok(crate::runtime::rt("shmem_team_shared")?
        .teams()
        .shared
        .clone())
}

/// `SHMEMX_TEAM_HOST`: the PEs of this PE's host (virtual hosts with `SHMEM_VIRTUAL_HOSTS`).
pub fn host() -> Result<Arc<Team>> {
    Ok(crate::runtime::rt("shmemx_team_host")?.teams().host.clone())
}

/// `SHMEMX_TEAM_LEADERS`: one PE per host; `None` on the others.
pub fn leaders() -> Result<Option<Arc<Team>>> {
    Ok(crate::runtime::rt("shmemx_team_leaders")?
        .teams()
        .leaders
        .clone())
}

/// `shmem_team_split_strided` (collective over `parent`).
pub fn split_strided(
    parent: &Team,
    start: i64,
    stride: i64,
    size: i64,
    config: TeamConfig,
) -> Result<Option<Arc<Team>>> {
    crate::runtime::rt("shmem_team_split_strided")?
        .team_split_strided(parent, start, stride, size, config)
}

/// `shmem_team_split_2d` (collective over `parent`): (x-team, y-team).
pub fn split_2d(
    parent: &Team,
    xrange: i64,
    xconfig: TeamConfig,
    yconfig: TeamConfig,
) -> Result<TeamPair> {
    crate::runtime::rt("shmem_team_split_2d")?.team_split_2d(parent, xrange, xconfig, yconfig)
}

/// `shmemx_team_split_color` (collective over `parent`).
pub fn split_color(
    parent: &Team,
    color: i32,
    key: i32,
    config: TeamConfig,
) -> Result<Option<Arc<Team>>> {
    crate::runtime::rt("shmemx_team_split_color")?.team_split_color(parent, color, key, config)
}

/// An active set (seed 004) of `members`, a list or strided range of world PEs: made
/// locally (no communication, no slot), usable by every collective like a team, deleted
/// with [`destroy`] (local too). `None` on PEs outside it.
pub fn active_set(routine: &'static str, members: Members) -> Result<Option<Arc<Team>>> {
    crate::runtime::rt(routine)?.active_set(routine, members)
}

/// `shmem_team_sync` (collective over `team`).
pub fn sync(team: &Team) -> Result<()> {
    sync_in("shmem_team_sync", team)
}

/// [`sync`] on behalf of `routine` (the deprecated active-set `shmem_barrier` and
/// `shmem_sync`), which errors name.
pub fn sync_in(routine: &'static str, team: &Team) -> Result<()> {
    let f = frame::Frame::begin(routine, team, Kind::TeamSync, &[], 0)?;
    f.rt().try_sync_in(routine, team)
}

/// `shmem_team_destroy` (collective over `team`).
pub fn destroy(team: &Team) -> Result<()> {
    crate::runtime::rt("shmem_team_destroy")?.team_destroy(team)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_membership() {
        let world = Members::Strided {
            start: 0,
            stride: 1,
            size: 10,
        };
        let odd = world.sub_strided(1, 2, 5).unwrap();
        assert_eq!(
            (0..5).map(|r| odd.pe(r)).collect::<Vec<_>>(),
            [1, 3, 5, 7, 9]
        );
        assert_eq!(odd.rank_of(7), Some(3));
        assert_eq!(odd.rank_of(4), None);
        let sub = odd.sub_strided(4, -2, 3).unwrap();
        assert_eq!((0..3).map(|r| sub.pe(r)).collect::<Vec<_>>(), [9, 5, 1]);
        assert_eq!(sub.rank_of(5), Some(1));
        assert!(world.sub_strided(8, 1, 3).is_none());
        assert!(world.sub_strided(0, 0, 2).is_none());
        let one = world.sub_strided(4, 0, 1).unwrap();
        assert_eq!(one.rank_of(4), Some(0));
        assert!(world.sub_strided(-1, 1, 1).is_none());
    }

    #[test]
    fn slot_map() {
        let mut s = SlotMap::new(130, 2);
        assert_eq!(s.words()[0] & 3, 0);
        s.take(64);
        assert_eq!(s.words()[1] & 1, 0);
        s.give_back(64);
        assert_eq!(s.words()[1] & 1, 1);
        assert_eq!(s.words()[2], 0b11);
    }
}
