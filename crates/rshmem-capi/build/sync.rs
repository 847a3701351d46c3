//! Memory ordering and synchronization (`shmem_fence`, `shmem_quiet`, `shmem_pe_quiet`,
//! `shmem_barrier_all`, `shmem_sync_all`) and distributed locking (`shmem_set_lock`...).

use crate::writer::Gen;

/// Ordering, whole-job synchronization and locks.
pub(crate) fn ordering_and_locks(g: &mut Gen) {
    g.section("Memory ordering and synchronization");
    g.fc("void shmem_fence(void)", "glue::fence(R, @CTXOPT@)");
    g.fc("void shmem_quiet(void)", "glue::quiet(R, @CTXOPT@)");
    g.fc(
        "void shmem_pe_quiet(const int *target_pes, size_t npes)",
        "glue::pe_quiet(R, @CTXOPT@, target_pes, npes)",
    );
    g.flush_ctx();
    g.f(
        "void shmem_barrier_all(void)",
        "glue::ok(rshmem_core::sync::barrier_all())",
    );
    g.f(
        "void shmem_sync_all(void)",
        "glue::ok(rshmem_core::sync::sync_all())",
    );
    g.section("Distributed locking");
    g.f(
        "void shmem_set_lock(long *lock)",
        "glue::ok(rshmem_core::lock::set_lock(R, lock))",
    );
    g.f(
        "int shmem_test_lock(long *lock)",
        "(!glue::ok(rshmem_core::lock::test_lock(R, lock))) as core::ffi::c_int",
    );
    g.f(
        "void shmem_clear_lock(long *lock)",
        "glue::ok(rshmem_core::lock::clear_lock(R, lock))",
    );
}
