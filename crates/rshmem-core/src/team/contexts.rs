//! Contexts made from a team (`shmem_team_create_ctx`): numbered by the team's ranks,
//! listed on the team while shareable (the context layer keeps the list), and destroyed
//! with it.

use std::sync::{Arc, Mutex};

use super::Team;
use crate::ctx::{self, Ctx, CtxHandle, CtxTeam};
use crate::error::Result;
use crate::runtime::{rt, Runtime};

impl CtxTeam for Team {
    fn shareable(&self) -> &Mutex<Vec<usize>> {
        &self.ctxs
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }
}

/// `shmem_team_create_ctx`: a new context whose PE numbers are ranks of `team`.
pub fn create_ctx(team: &Arc<Team>, options: i64) -> Result<CtxHandle> {
    const R: &str = "shmem_team_create_ctx";
    // The world's own numbering needs no translation.
    if Arc::ptr_eq(team, rt(R)?.world()) {
        return ctx::create_in(R, options, None);
    }
    let link: Arc<dyn CtxTeam> = team.clone();
    ctx::create_in(R, options, Some((team.members().clone(), link)))
}

/// `shmem_ctx_get_team`: the team a context was made from (WORLD for `shmem_ctx_create`
/// and the default context).
pub fn ctx_team(ctx: &Ctx) -> Result<Arc<Team>> {
    let rt = rt("shmem_ctx_get_team")?;
    let team = ctx
        .team()
        .and_then(|t| t.clone().into_any().downcast::<Team>().ok());
    Ok(team.unwrap_or_else(|| rt.world().clone()))
}

/// Destroys the shareable contexts made from `team` (on `shmem_team_destroy`).
pub(crate) fn destroy_all(rt: &Runtime, team: &Team) {
    ctx::destroy_shareable(rt, team);
}
