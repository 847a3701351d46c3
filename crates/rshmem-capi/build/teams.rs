//! Teams (`shmem_team_my_pe`, `_split_strided`, `_split_2d`, `_destroy`, `_sync`...)
//! and seed 004's explicit active sets (`shmemx_create_*_aset`, `shmemx_aset_*`), which
//! are team handles made locally.

use crate::writer::Gen;

/// The team routines of OpenSHMEM 1.5 (`shmem_team_*`).
pub(crate) fn teams(g: &mut Gen) {
    g.section("Teams");
    g.f(
        "int shmem_team_my_pe(shmem_team_t team)",
        "glue::team_my_pe(R, team)",
    );
    g.f(
        "int shmem_team_n_pes(shmem_team_t team)",
        "glue::team_n_pes(R, team)",
    );
    g.f(
        "int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)",
        "glue::team_get_config(R, team, config_mask, config)",
    );
    g.f(
        "int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)",
        "glue::team_translate_pe(R, src_team, src_pe, dest_team)",
    );
    g.f(
        "int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size, const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)",
        "glue::team_split_strided(R, parent_team, start, stride, size, config, config_mask, new_team)",
    );
    g.f(
        "int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config, long yaxis_mask, shmem_team_t *yaxis_team)",
        "glue::team_split_2d(R, parent_team, xrange, xaxis_config, xaxis_mask, xaxis_team, yaxis_config, yaxis_mask, yaxis_team)",
    );
    g.f(
        "void shmem_team_destroy(shmem_team_t team)",
        "glue::team_destroy(R, team)",
    );
    g.f(
        "int shmem_team_sync(shmem_team_t team)",
        "glue::team_sync(R, team)",
    );
}

/// Seed 004's explicit active sets (`shmemx_*_aset`), which are team handles, and
/// `shmemx_team_split_color`.
pub(crate) fn active_sets(g: &mut Gen) {
    g.section("Explicit active sets (seed 004): made locally, no pSync; an active set is a team handle, so every team collective takes one");
    g.f(
        "shmemx_aset_t shmemx_create_strided_aset(int PE_start, int PE_stride, int PE_size)",
        "glue::aset_strided(R, PE_start, PE_stride, PE_size)",
    );
    g.f(
        "shmemx_aset_t shmemx_create_log_strided_aset(int PE_start, int PE_log_stride, int PE_size, int stride_base)",
        "glue::aset_log_strided(R, PE_start, PE_log_stride, PE_size, stride_base)",
    );
    g.f(
        "shmemx_aset_t shmemx_create_custom_aset(int PE_start, shmemx_offset_fn offset, int PE_size, void *const_params)",
        "glue::aset_custom(R, PE_start, offset, PE_size, const_params)",
    );
    g.f(
        "shmemx_aset_t shmemx_create_generic_aset(const int *PE_list, int PE_size)",
        "glue::aset_list(R, PE_list, PE_size)",
    );
    g.f(
        "int shmemx_in_aset(shmemx_aset_t aset)",
        "glue::in_aset(R, aset)",
    );
    g.f(
        "int shmemx_aset_size(shmemx_aset_t aset)",
        "glue::aset_size(R, aset)",
    );
    g.f(
        "int shmemx_aset_pe(shmemx_aset_t aset, int rank)",
        "glue::aset_pe(R, aset, rank)",
    );
    g.f(
        "int shmemx_aset_rank(shmemx_aset_t aset, int pe)",
        "glue::aset_rank(R, aset, pe)",
    );
    g.f(
        "void shmemx_delete_aset(shmemx_aset_t aset)",
        "glue::delete_aset(R, aset)",
    );
    g.f(
        "void shmemx_barrier_aset(shmemx_aset_t aset)",
        "glue::barrier_aset(R, aset, true)",
    );
    g.f(
        "void shmemx_sync_aset(shmemx_aset_t aset)",
        "glue::barrier_aset(R, aset, false)",
    );
    g.f(
        "int shmemx_team_split_color(shmem_team_t parent_team, int color, int key, const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)",
        "glue::team_split_color(R, parent_team, color, key, config, config_mask, new_team)",
    );
}
