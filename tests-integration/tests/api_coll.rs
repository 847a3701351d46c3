//! The safe API's team collectives (`TeamRef::{broadcast, collect, fcollect, alltoall,
//! alltoalls, reduce, sum_inscan, sum_exscan}`) under oshrun, through the `api_coll` PE
//! program, at 1, 2, 3, 4 and 6 PEs (6 oversubscribes the 2 cores on purpose), with the
//! default algorithms and with each `SHMEM_REDUCE_ALGORITHM`.

use std::time::Duration;

use rshmem_tests::Job;

/// Runs `api_coll` on `np` PEs; asserts exit 0, one ok line per PE, no panic.
fn run_ok(np: usize, env: &[(&str, &str)]) {
    let mut job = Job::new(np, "api_coll").timeout(Duration::from_secs(120));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_ok();
    let mut pes: Vec<usize> = out
        .lines_with("ok api_coll pe=")
        .iter()
        .map(|s| s.trim().parse().expect("PE number"))
        .collect();
    pes.sort_unstable();
    assert_eq!(
        pes,
        (0..np).collect::<Vec<_>>(),
        "api_coll on {np} PEs {env:?}: every PE must print its ok line once\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !out.stderr.contains("panicked"),
        "api_coll on {np} PEs {env:?} panicked:\n{}",
        out.stderr
    );
}

const NPES: [usize; 5] = [1, 2, 3, 4, 6];

#[test]
fn collectives_default_algorithms() {
    for np in NPES {
        run_ok(np, &[]);
    }
}

fn with_reduce_algorithm(alg: &str, extra: &[(&str, &str)]) {
    let mut env = vec![("SHMEM_REDUCE_ALGORITHM", alg)];
    env.extend_from_slice(extra);
    for np in NPES {
        run_ok(np, &env);
    }
}

#[test]
fn reduce_algorithm_shm() {
    with_reduce_algorithm("shm", &[]);
}

#[test]
fn reduce_algorithm_linear() {
    with_reduce_algorithm("linear", &[]);
}

#[test]
fn reduce_algorithm_recursive_doubling() {
    with_reduce_algorithm("recursive_doubling", &[]);
}

#[test]
fn reduce_algorithm_ring() {
    with_reduce_algorithm("ring", &[]);
}

#[test]
fn reduce_algorithm_hierarchical_two_virtual_hosts() {
    with_reduce_algorithm("hierarchical", &[("SHMEM_VIRTUAL_HOSTS", "2")]);
}

#[test]
fn data_algorithms_linear() {
    let env = [
        ("SHMEM_BCAST_ALGORITHM", "linear"),
        ("SHMEM_COLLECT_ALGORITHM", "linear"),
        ("SHMEM_FCOLLECT_ALGORITHM", "linear"),
        ("SHMEM_ALLTOALL_ALGORITHM", "linear"),
    ];
    for np in [1, 3, 4] {
        run_ok(np, &env);
    }
}
