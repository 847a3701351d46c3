//! Team synchronization (`shmem_team_sync`, and the syncs inside collectives and team
//! management): the algorithm `SHMEM_SYNC_ALGORITHM` or `auto` chose for the team's
//! [`Span`](crate::team::Span), over the team's flags (`team::group`).

use std::sync::atomic::Ordering;

use crate::algo::SyncAlg;
use crate::error::{At, Result};
use crate::runtime::Runtime;
use crate::team::{Flag, Team};

impl Runtime {
    /// `shmem_team_sync`: dissemination barrier over the team's members, on the team's
    /// slot. Epochs only grow while the slot belongs to the team; `destroy` zeroes them.
    pub fn team_sync(&self, team: &Team) {
        self.sync_in("shmem_team_sync", team);
    }

    /// [`Runtime::try_sync_in`], ending the job on failure (for callers with no way to
    /// report one: `shmem_barrier_all`, finalize).
    pub(crate) fn sync_in(&self, routine: &'static str, team: &Team) {
        if let Err(e) = self.try_sync_in(routine, team) {
            self.fatal(&e);
        }
    }

    /// [`Runtime::team_sync`] as a step of collective `routine`, which a failure names
    /// (a member that finalized or died instead of joining).
    pub(crate) fn try_sync_in(&self, routine: &'static str, team: &Team) -> Result<()> {
        if self.fabric.has_ucx() {
            // Collectives put through UCX before they sync: the data must have landed
            // before any member leaves (on shared memory stores are visible at once).
            self.fabric.quiet(crate::ctx::runtime_ctx()).at(routine)?;
        }
        match self.algs().sync_for(self.span(team)) {
            SyncAlg::Dissemination => self.sync_dissemination(routine, team),
            SyncAlg::Linear => self.sync_linear(routine, team),
            SyncAlg::Hierarchical => self.sync_hierarchical(routine),
        }
    }

    /// WORLD's sync as three: within each host (every PE), across the leaders, within
    /// each host again (which releases the non-leaders once their leader is through).
    fn sync_hierarchical(&self, routine: &'static str) -> Result<()> {
        self.sync_dissemination(routine, &self.teams().inner_host)?;
        if let Some(leaders) = &self.teams().inner_leaders {
            self.sync_dissemination(routine, leaders)?;
        }
        self.sync_dissemination(routine, &self.teams().inner_host)
    }

    /// Gather-release through rank 0: members add one to rank 0's arrival counter and wait
    /// for their release word to reach the epoch; rank 0 waits for `(n-1) * epoch`
    /// arrivals and releases everyone. Both words only grow while the team lives. (No
    /// member can leave before rank 0 has all arrivals, so a finalizing member seen by a
    /// waiting rank 0 skipped the sync.)
    fn sync_linear(&self, routine: &'static str, team: &Team) -> Result<()> {
        let epoch = team.epoch.fetch_add(1, Ordering::Relaxed) + 1;
        let n = team.n_pes();
        if n == 1 {
            return Ok(());
        }
        let (arrivals, release) = (Flag::Word(1), Flag::Word(2));
        if team.my_pe() == 0 {
            self.await_signals(
                routine,
                team,
                arrivals,
                || 1..n,
                (n as u64 - 1) * epoch,
                1,
                crate::team::peers::Quorum::Any,
            )?;
            // Counts rather than stores of the epoch: a posted add needs no round trip
            // through UCX, and rank 0 alone raises them, so each equals the epoch.
            for r in 1..n {
                self.signal(routine, team, release, r, false)?;
            }
        } else {
            // Many writers: the job's atomicity domain.
            self.signal(routine, team, arrivals, 0, true)?;
            self.await_signal(routine, team, release, 0, epoch)?;
        }
        Ok(())
    }

    /// Dissemination: in round k, rank r raises rank r + 2^k's round-k flag (by one per
    /// epoch) and waits for its own (raised by rank r - 2^k) to reach the epoch.
    fn sync_dissemination(&self, routine: &'static str, team: &Team) -> Result<()> {
        let epoch = team.epoch.fetch_add(1, Ordering::Relaxed) + 1;
        let n = team.n_pes();
        let (mut dist, mut round) = (1, 0);
        while dist < n {
            let to = (team.my_pe() + dist) % n;
            let from = (team.my_pe() + n - dist) % n;
            // One writer per flag (rank r - 2^k): the count is the epoch.
            self.signal(routine, team, Flag::Round(round), to, false)?;
            self.await_signal(routine, team, Flag::Round(round), from, epoch)?;
            dist <<= 1;
            round += 1;
        }
        Ok(())
    }
}
