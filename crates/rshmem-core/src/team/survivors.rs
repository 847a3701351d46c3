//! `shmemx_team_survivors`: a team of the members of a team that have not failed
//! (issue 13 §3), made without waiting for the dead ones.
//!
//! A failure may interrupt any collective of the team, so its barrier flags and channel
//! counts can be out of step between survivors. This call uses none of them: each
//! member's per-slot generation word (`Layout::ft_word`, written only by its owner, a
//! stored value rather than a count) says how far it got in this protocol, and waits on
//! it skip members found failed. Two phases: publish the slot bitmap and reach `2g - 1`
//! (all survivors published), AND the survivors' bitmaps into a free slot, then reach
//! `2g` (all have read, so the bitmap scratch may be reused).

use std::sync::Arc;

use rshmem_util::Waiter;

use super::{Members, Scratch, Team};
use crate::error::{At, Error, Result};
use crate::runtime::Runtime;
use crate::word::AmoOp;

const R: &str = "shmemx_team_survivors";

impl Runtime {
    /// The survivors of `team` in rank order, as a new team (see the module). Every
    /// surviving member calls it. An active set gives an active set (local, as always).
    pub fn team_survivors(&self, team: &Team) -> Result<Arc<Team>> {
        let alive = |r: usize| {
            let pe = team.members.pe(r);
            pe == self.me || !self.probe_failed(pe)
        };
        let slot = match team.scratch {
            Scratch::Slot(s) => s,
            _ => {
                let list: Arc<[usize]> = (0..team.n_pes())
                    .filter(|&r| alive(r))
                    .map(|r| team.members.pe(r))
                    .collect();
                return self
                    .active_set(R, Members::List(list))?
                    .ok_or(Error::InvalidArgument {
                        routine: R,
                        arg: "team",
                        reason: "this PE is not a member",
                    });
            }
        };
        let w = self.layout.ft_word(slot);
        let g = self.load_local::<u64>(w) / 2 + 1;
        let mine = self.publish_free_slots(slot);
        // Release: the bitmap is visible to whoever sees the generation.
        self.set_own(w, 2 * g - 1);
        self.reach(team, w, 2 * g - 1)?;
        // The membership: those not failed now. Every survivor decides after all
        // survivors published, so they agree unless a PE dies during this call (then the
        // new team's first collective reports it, and the survivors call this again).
        let ranks: Vec<usize> = (0..team.n_pes()).filter(|&r| alive(r)).collect();
        let mut all = mine;
        let mut theirs = vec![0u64; all.len()];
        for &r in ranks.iter().filter(|&&r| r != team.my_rank) {
            self.fabric
                .get_words(
                    crate::ctx::runtime_ctx(),
                    team.members.pe(r),
                    self.layout.slot_bits(slot, 0),
                    &mut theirs,
                )
                .at(R)?;
            for (v, t) in all.iter_mut().zip(&theirs) {
                *v &= t;
            }
        }
        self.set_own(w, 2 * g);
        self.reach(team, w, 2 * g)?;
        let new_slot = all
            .iter()
            .enumerate()
            .find(|(_, v)| **v != 0)
            .map(|(i, v)| i * 64 + v.trailing_zeros() as usize)
            .ok_or(Error::InvalidArgument {
                routine: R,
                arg: "team",
                reason: "no team slot is free on every survivor (raise SHMEM_TEAMS_MAX)",
            })?;
        let my_rank = ranks
            .iter()
            .position(|&r| r == team.my_rank)
            .expect("a PE survives itself");
        let members = Members::List(ranks.iter().map(|&r| team.members.pe(r)).collect());
        self.teams()
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take(new_slot);
        Ok(Arc::new(Team::new(
            members,
            my_rank,
            new_slot,
            team.config(),
            false,
        )))
    }

    /// Waits until every member of `team` that has not failed has its generation word
    /// `w` at `want` or beyond. A member that finalized instead fails the call.
    fn reach(&self, team: &Team, w: crate::transport::SymAddr, want: u64) -> Result<()> {
        for r in (0..team.n_pes()).filter(|&r| r != team.my_rank) {
            let pe = team.members.pe(r);
            if self.probe_failed(pe) {
                continue;
            }
            let mut wt = Waiter::new();
            while self.amo::<u64>(R, pe, w, AmoOp::Fetch)? < want {
                if wt.overdue() {
                    if self.probe_failed(pe) {
                        break;
                    }
                    if self.is_finalizing(pe) && self.amo::<u64>(R, pe, w, AmoOp::Fetch)? < want {
                        return Err(Error::PeerFinalized {
                            routine: R,
                            pe,
                            waiter: self.me,
                        });
                    }
                }
                wt.snooze();
            }
        }
        Ok(())
    }
}

/// `shmemx_team_survivors`: the members of `team` that have not failed, in rank order,
/// as a new team (collective over the survivors; the dead are not waited for).
pub fn survivors(team: &Team) -> Result<Arc<Team>> {
    crate::runtime::rt(R)?.team_survivors(team)
}
