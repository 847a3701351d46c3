//! rshmem-core contexts, copy engine and explicit non-blocking requests under oshrun at
//! 1-4 PEs and 1-4 threads per PE (the PE program `core_ctx` asserts every value).

use rshmem_tests::run_ok;

/// Sends every transfer from 4 KiB up through the copy engine.
const SMALL_THRESHOLD: (&str, &str) = ("SHMEM_COPY_ENGINE_THRESHOLD", "4K");

#[test]
fn contexts_on_world_and_split_teams() {
    for np in [1, 2, 3, 4] {
        run_ok(np, "core_ctx", &["basic"], &[]);
    }
}

#[test]
fn copy_engine_nbi_transfers_and_signals() {
    for np in [1, 2, 3] {
        run_ok(np, "core_ctx", &["engine"], &[SMALL_THRESHOLD]);
    }
    // Without an engine every transfer completes at once; the same checks hold.
    run_ok(
        2,
        "core_ctx",
        &["engine"],
        &[("SHMEM_COPY_ENGINE_LANES", "0")],
    );
    // Several lanes.
    run_ok(
        3,
        "core_ctx",
        &["engine"],
        &[SMALL_THRESHOLD, ("SHMEM_COPY_ENGINE_LANES", "3")],
    );
}

/// The copy engine (paused by the test) exists on the shared-memory path only: through UCX
/// the same operations may complete at once, so isolation is observed on shared memory.
const SHM_ONLY: (&str, &str) = ("SHMEM_TRANSPORT", "shm");

#[test]
fn quiet_on_one_context_leaves_another_pending() {
    for np in [1, 2, 3] {
        run_ok(np, "core_ctx", &["isolation"], &[SMALL_THRESHOLD, SHM_ONLY]);
    }
}

#[test]
fn merged_requests_across_pes_and_kinds() {
    for np in [1, 2, 3, 4] {
        run_ok(np, "core_ctx", &["nbe"], &[SMALL_THRESHOLD]);
    }
    run_ok(3, "core_ctx", &["nbe"], &[]);
}

#[test]
fn context_and_request_churn_keeps_memory_flat() {
    // Over libfabric on sockets: tcp;ofi_rxm grows by itself (see api_ctx.rs).
    let over_ofi = std::env::var("SHMEM_TRANSPORT").is_ok_and(|t| t == "ofi")
        || std::env::var("SHMEM_NETWORK").is_ok_and(|n| n == "ofi");
    let sockets: &[(&str, &str)] = if over_ofi {
        &[("FI_PROVIDER", "sockets"), ("FI_SOCKETS_PE_WAITTIME", "0")]
    } else {
        &[]
    };
    run_ok(2, "core_ctx", &["churn"], sockets);
}

#[test]
fn threads_with_private_and_default_contexts() {
    for np in [2, 3] {
        for t in ["1", "2", "3", "4"] {
            run_ok(np, "core_ctx", &["threads", t], &[SMALL_THRESHOLD]);
        }
    }
}

#[test]
fn threads_run_collectives_on_their_own_teams() {
    for np in [2, 3] {
        for t in ["1", "2", "4"] {
            run_ok(np, "core_ctx", &["threads_coll", t], &[]);
        }
    }
}
