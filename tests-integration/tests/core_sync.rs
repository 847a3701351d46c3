//! rshmem-core synchronization under oshrun at 1-4 PEs: barrier_all/sync_all, point-to-point
//! waits and tests, signals, locks (the PE program `core_sync`).

use rshmem_tests::run_ok;

const NPS: [usize; 4] = [1, 2, 3, 4];

#[test]
fn sync_barrier_all_and_sync_all_rounds() {
    for np in NPS {
        run_ok(np, "core_sync", &["barrier"], &[]);
    }
}

#[test]
fn sync_wait_until_test_all_forms() {
    for np in NPS {
        run_ok(np, "core_sync", &["p2p"], &[]);
    }
}

#[test]
fn sync_put_signal_and_signal_ops() {
    for np in NPS {
        run_ok(np, "core_sync", &["signal"], &[]);
    }
}

#[test]
fn sync_locks_mutual_exclusion_and_test_lock() {
    for np in NPS {
        run_ok(np, "core_sync", &["lock"], &[]);
    }
}

#[test]
fn sync_locks_exclude_in_both_protocols() {
    // FIFO hand-off and stealing (the default beyond the cores: 3 and 4 PEs here on a
    // 2-core machine), each forced, with a non-atomic counter under the lock.
    for proto in ["fifo", "steal"] {
        for np in [2, 4] {
            run_ok(
                np,
                "core_sync",
                &["lock"],
                &[("SHMEM_LOCK_PROTOCOL", proto)],
            );
        }
    }
}
