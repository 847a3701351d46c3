//! Communication contexts: `shmem_ctx_create`, `shmem_team_create_ctx`,
//! `shmem_ctx_destroy`, `shmem_ctx_get_team` and the 1.6 context sessions.

use crate::writer::Gen;

pub(crate) fn contexts(g: &mut Gen) {
    g.section("Communication contexts");
    g.f(
        "int shmem_ctx_create(long options, shmem_ctx_t *ctx)",
        "glue::ctx_create(R, options, ctx)",
    );
    g.f(
        "int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)",
        "glue::team_create_ctx(R, team, options, ctx)",
    );
    g.f(
        "void shmem_ctx_destroy(shmem_ctx_t ctx)",
        "glue::ctx_destroy(R, ctx)",
    );
    g.f(
        "int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)",
        "glue::ctx_get_team(R, ctx, team)",
    );
    g.f(
        "void shmem_ctx_session_start(shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config, long config_mask)",
        "glue::session_start(R, ctx, options, config, config_mask)",
    );
    g.f(
        "void shmem_ctx_session_stop(shmem_ctx_t ctx)",
        "glue::session_stop(R, ctx)",
    );
}
