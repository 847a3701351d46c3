//! Library setup, exit and query routines (`shmem_init`, `shmem_my_pe`, `shmem_ptr`,
//! `shmem_info_*`...), the deprecated `start_pes` names and the `shmemx_` heap queries.

use crate::writer::Gen;

pub(crate) fn setup(g: &mut Gen) {
    g.section("Library setup, exit and query");
    g.f("void shmem_init(void)", "glue::init(R)");
    g.f(
        "int shmem_init_thread(int requested, int *provided)",
        "glue::init_thread(R, requested, provided)",
    );
    g.f("void shmem_finalize(void)", "rshmem_core::finalize()");
    g.f(
        "NORETURN void shmem_global_exit(int status)",
        "rshmem_core::setup::global_exit(status)",
    );
    g.f(
        "int shmem_my_pe(void)",
        "glue::ok(rshmem_core::setup::my_pe()) as core::ffi::c_int",
    );
    g.f(
        "int shmem_n_pes(void)",
        "glue::ok(rshmem_core::setup::n_pes()) as core::ffi::c_int",
    );
    g.f(
        "int shmem_pe_accessible(int pe)",
        "glue::ok(rshmem_core::setup::pe_accessible(pe.into())) as core::ffi::c_int",
    );
    g.f(
        "int shmem_addr_accessible(const void *addr, int pe)",
        "glue::ok(rshmem_core::setup::addr_accessible(addr as usize, pe.into())) as core::ffi::c_int",
    );
    g.f(
        "void *shmem_ptr(const void *dest, int pe)",
        "glue::ok(rshmem_core::setup::ptr(dest as usize, pe.into())).cast()",
    );
    g.f(
        "void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)",
        "glue::team_ptr(R, team, dest, pe)",
    );
    g.f(
        "void shmem_info_get_version(int *major, int *minor)",
        "glue::info_get_version(R, major, minor)",
    );
    g.f(
        "void shmem_info_get_name(char *name)",
        "glue::info_get_name(R, name)",
    );
    g.f(
        "void shmem_query_thread(int *provided)",
        "glue::query_thread(R, provided)",
    );
    g.f(
        "void shmem_query_initialized(int *initialized)",
        "glue::query_initialized(R, initialized)",
    );
    g.hand("void shmem_pcontrol(const int level, ...);");
    g.section("Deprecated setup (OpenSHMEM 1.5 deprecation table)");
    g.f(
        "void start_pes(int npes)",
        "{ let _ = npes; glue::start_pes(R) }",
    );
    g.f(
        "int _my_pe(void)",
        "glue::ok(rshmem_core::setup::my_pe()) as core::ffi::c_int",
    );
    g.f(
        "int _num_pes(void)",
        "glue::ok(rshmem_core::setup::n_pes()) as core::ffi::c_int",
    );
    g.f("double shmemx_wtime(void)", "glue::wtime()");
    g.f(
        "size_t shmemx_heap_size(void)",
        "glue::ok(rshmem_core::memory::heap_size())",
    );
    g.f(
        "size_t shmemx_heap_free(void)",
        "glue::ok(rshmem_core::memory::heap_free())",
    );
}
