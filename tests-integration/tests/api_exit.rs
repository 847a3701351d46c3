//! A Rust program that leaves with a live `Shmem` guard.

use std::time::Duration;

use rshmem_tests::Job;

#[test]
fn process_exit_with_a_live_guard_is_not_a_failure() {
    for np in [1, 3] {
        let out = Job::new(np, "api_exit")
            .args(["exit0"])
            .timeout(Duration::from_secs(60))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok exit0 pe=").len(), np, "{out:?}");
        assert!(
            out.stderr
                .contains("rshmem: PE 0: warning: exiting without shmem_finalize"),
            "{out:?}"
        );
    }
}

#[test]
fn panic_with_a_live_guard_fails_the_job_at_once() {
    for np in [1, 3] {
        let out = Job::new(np, "api_exit")
            .args(["panic"])
            .timeout(Duration::from_secs(60))
            .run();
        assert_eq!(out.code(), 101, "{out:?}");
        assert!(out.lines_with("survivor").is_empty(), "{out:?}");
        assert!(!out.stderr.contains("warning: exiting"), "{out:?}");
    }
}
