//! The glue every generated entry point shares: panics and core errors become job
//! aborts naming the routine, `SHMEM_DEBUG=1` argument checks on local buffers, C
//! constants to core types, and team, context and request handles. No routine logic
//! lives here: each helper makes one call into `rshmem-core`.
//!
//! One module per routine family (`setup`, `rma`, `amo`, `ordering`, `contexts`,
//! `requests`, `teams`, `active_sets`, `fault_tolerance`, `collectives`) and per shared
//! concern (`errors`, `checks`, `profiling`, `long_double`); the generated code calls
//! them through the re-exports below (`glue::amo`, `glue::quiet`...).
// The C-facing types are `pub` because the exported entry points name them.
#![allow(unreachable_pub)]

mod active_sets;
mod amo;
mod checks;
mod collectives;
mod contexts;
mod errors;
mod fault_tolerance;
mod long_double;
mod ordering;
mod profiling;
mod requests;
mod rma;
mod setup;
mod teams;

pub(crate) use self::active_sets::{
    aset_custom, aset_list, aset_log_strided, aset_pe, aset_rank, aset_size, aset_strided,
    barrier_aset, delete_aset, in_aset, AsetIndexFn,
};
pub(crate) use self::amo::{amo, amo_nbi, amo_post};
pub(crate) use self::checks::{cmp, nonnull, nonnull_mut};
pub(crate) use self::collectives::{
    alltoall, alltoalls, broadcast, collect, fcollect, reduce, sum_scan, sync_nbe,
};
pub(crate) use self::contexts::{
    ctx, ctx_create, ctx_destroy, ctx_get_team, ctx_opt, register_gettid, session_start,
    session_stop, team_create_ctx, CtxH, GettidFn, SessionConfigC, H_CTX_DEFAULT,
};
pub(crate) use self::errors::{
    error_message, fail, guard, ok, returning, strerror, ERR_INVALID_ARGUMENT,
};
pub(crate) use self::fault_tolerance::{failed_pes, pe_failed, team_survivors};
pub(crate) use self::long_double::LongDouble;
pub(crate) use self::ordering::{fence, pe_quiet, quiet};
pub(crate) use self::profiling::pcntr;
pub(crate) use self::requests::{
    amo_nbe, merge_request, nbe, request_alloc, request_free, request_test, request_wait,
};
pub(crate) use self::rma::{blocked, g, p, put_signal, strided, xfer, Dir};
pub(crate) use self::setup::{
    alloc, info_get_name, info_get_version, init, init_thread, query_initialized, query_thread,
    start_pes, wtime,
};
pub(crate) use self::teams::{
    team_destroy, team_get_config, team_my_pe, team_n_pes, team_ptr, team_split_2d,
    team_split_color, team_split_strided, team_sync, team_translate_pe, TeamConfigC, TeamHandle,
    H_HOST, H_LEADERS, H_SHARED, H_WORLD,
};
