//! Issue 10, items 1 and 2: in-place scans, zero-length collectives.

use std::time::Duration;

use rshmem_tests::Job;

#[test]
fn in_place_scans() {
    for np in [1, 2, 3, 4] {
        for alg in ["dissemination", "linear"] {
            let out = Job::new(np, "hard_scan")
                .env("SHMEM_BARRIER_ALGORITHM", alg)
                .timeout(Duration::from_secs(60))
                .run();
            out.assert_ok();
            assert_eq!(out.lines_with("ok hard_scan pe=").len(), np, "{out:?}");
        }
    }
}
