//! In-place sum scans (`dest == source`) at 1-4 PEs under both barrier algorithms.

use std::time::Duration;

use rshmem_tests::Job;

#[test]
fn in_place_scans() {
    for np in [1, 2, 3, 4] {
        for alg in ["dissemination", "linear"] {
            let out = Job::new(np, "inplace_scans")
                .env("SHMEM_BARRIER_ALGORITHM", alg)
                .timeout(Duration::from_secs(60))
                .run();
            out.assert_ok();
            assert_eq!(out.lines_with("ok inplace_scans pe=").len(), np, "{out:?}");
        }
    }
}
