//! Global and static variables are symmetric (RMA, AMO, wait, lock, ptr) at 1-4 PEs, and
//! `SHMEM_SYMMETRIC_DATA=0` turns the feature off with a clear error.

use std::time::Duration;

use rshmem_tests::Job;

#[test]
fn statics_are_symmetric() {
    for np in [1, 2, 3, 4] {
        let out = Job::new(np, "statics_basic")
            .timeout(Duration::from_secs(60))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok statics_basic pe=").len(), np, "{out:?}");
    }
}

#[test]
fn statics_can_be_turned_off() {
    let out = Job::new(2, "statics_basic")
        .env("SHMEM_SYMMETRIC_DATA", "0")
        .timeout(Duration::from_secs(60))
        .run();
    assert_ne!(out.code(), 0);
    assert!(out.stderr.contains("NotSymmetric"), "{}", out.stderr);
}
