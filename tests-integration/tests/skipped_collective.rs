//! A PE that skips a collective and finalizes (or dies) must not leave
//! the others waiting forever: they fail with the routine and the PE named.

use std::time::Duration;

use rshmem_tests::{Job, JobOutput};

fn skip(np: usize, what: &str, skipper: usize, env: &[(&str, &str)]) -> JobOutput {
    let mut job = Job::new(np, "skip_collective")
        .args([what, &skipper.to_string()])
        .timeout(Duration::from_secs(30));
    for (k, v) in env {
        job = job.env(k, v);
    }
    job.run()
}

#[track_caller]
fn fails_naming(out: &JobOutput, routine: &str, skipper: usize) {
    assert!(out.status.is_some(), "the job hung: {out:?}");
    assert_ne!(out.code(), 0, "{out:?}");
    let want = format!("{routine}: PE {skipper} called shmem_finalize while PE ");
    assert!(out.stderr.contains(&want), "want {want:?} in {out:?}");
    assert!(out.lines_with("passed").is_empty(), "{out:?}");
}

#[test]
fn skipped_barrier_fails() {
    for np in [2, 3, 4] {
        for alg in ["dissemination", "linear"] {
            let skipper = np - 1;
            let out = skip(np, "barrier", skipper, &[("SHMEM_BARRIER_ALGORITHM", alg)]);
            fails_naming(&out, "shmem_barrier_all", skipper);
        }
    }
}

#[test]
fn skipped_team_sync_fails() {
    for np in [2, 3, 4] {
        let out = skip(np, "team_sync", 0, &[]);
        fails_naming(&out, "shmem_team_sync", 0);
    }
}

#[test]
fn skipped_broadcast_fails() {
    for np in [2, 3, 4] {
        for alg in ["shm", "linear", "tree", "staged"] {
            let out = skip(np, "broadcast", 0, &[("SHMEM_BCAST_ALGORITHM", alg)]);
            fails_naming(&out, "shmem_broadcastmem", 0);
        }
    }
}

#[test]
fn skipped_reduction_fails() {
    for np in [2, 3, 4] {
        for alg in [
            "shm",
            "linear",
            "recursive_doubling",
            "ring",
            "rabenseifner",
        ] {
            let skipper = np / 2;
            let out = skip(np, "reduce", skipper, &[("SHMEM_REDUCE_ALGORITHM", alg)]);
            fails_naming(&out, "shmem_long_sum_reduce", skipper);
        }
    }
}

#[test]
fn skipped_team_split_fails() {
    for np in [2, 3, 4] {
        let out = skip(np, "split", 1, &[]);
        fails_naming(&out, "shmem_team_split_strided", 1);
    }
}

#[test]
fn wait_until_fails_once_every_other_pe_finalized() {
    for np in [2, 3, 4] {
        let out = skip(np, "wait", 0, &[]);
        assert!(out.status.is_some(), "the job hung: {out:?}");
        assert_ne!(out.code(), 0, "{out:?}");
        let want = "shmem_long_wait_until: PE 0 waits for a symmetric variable that no PE can change any more";
        assert!(out.stderr.contains(want), "want {want:?} in {out:?}");
    }
}

#[test]
fn killed_pe_ends_a_collective() {
    for np in [2, 3, 4] {
        let out = skip(np, "kill", 1, &[]);
        assert!(out.status.is_some(), "the job hung: {out:?}");
        assert_ne!(out.code(), 0, "{out:?}");
        assert!(out.stderr.contains("PE 1"), "{out:?}");
        assert!(out.lines_with("passed").is_empty(), "{out:?}");
    }
}
