//! Team collectives on the core runtime at 1-4 and 6 PEs, with every algorithm forced
//! through its environment variable and checked against local references.

use std::time::Duration;

use rshmem_tests::Job;

const VARS: [&str; 6] = [
    "SHMEM_BARRIER_ALGORITHM",
    "SHMEM_BCAST_ALGORITHM",
    "SHMEM_REDUCE_ALGORITHM",
    "SHMEM_COLLECT_ALGORITHM",
    "SHMEM_FCOLLECT_ALGORITHM",
    "SHMEM_ALLTOALL_ALGORITHM",
];

fn run(np: usize, data_alg: &str, sync_alg: &str) {
    let mut job = Job::new(np, "coll_basic").timeout(Duration::from_secs(90));
    for v in VARS {
        job = job.env(v, if v == VARS[0] { sync_alg } else { data_alg });
    }
    let out = job.run();
    out.assert_ok();
    assert_eq!(out.lines_with("ok coll_basic pe=").len(), np, "{out:?}");
}

#[test]
fn collectives_auto() {
    for np in [1, 2, 3, 4, 6] {
        run(np, "auto", "auto");
    }
}

#[test]
fn collectives_single_copy_and_dissemination() {
    for np in [2, 3, 4] {
        run(np, "shm", "dissemination");
    }
}

#[test]
fn collectives_linear() {
    for np in [1, 2, 3, 4, 6] {
        run(np, "linear", "linear");
    }
}

#[test]
fn broadcast_tree() {
    for np in [1, 2, 3, 4, 6] {
        let out = Job::new(np, "coll_basic")
            .env("SHMEM_BCAST_ALGORITHM", "tree")
            .timeout(Duration::from_secs(90))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok coll_basic pe=").len(), np, "{out:?}");
    }
}

#[test]
fn reductions_by_message_passing_and_hierarchy() {
    for alg in ["recursive_doubling", "ring", "rabenseifner", "hierarchical"] {
        for np in [2, 3, 4, 5, 6] {
            let out = Job::new(np, "coll_basic")
                .env("SHMEM_REDUCE_ALGORITHM", alg)
                .env("SHMEM_VIRTUAL_HOSTS", "2")
                .timeout(Duration::from_secs(90))
                .run();
            out.assert_ok();
            assert_eq!(
                out.lines_with("ok coll_basic pe=").len(),
                np,
                "{alg} at {np}: {out:?}"
            );
        }
    }
}

#[test]
fn unknown_or_planned_algorithm_is_a_clear_init_error() {
    for (value, says) in [
        ("ring", "not implemented yet"),
        ("magic", "unknown algorithm"),
    ] {
        let out = Job::new(2, "coll_basic")
            .env("SHMEM_BCAST_ALGORITHM", value)
            .timeout(Duration::from_secs(30))
            .run();
        assert_ne!(out.code(), 0);
        assert!(
            out.stderr
                .contains(&format!("SHMEM_BCAST_ALGORITHM={value}: ")),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains(says), "{}", out.stderr);
    }
}
