//! Team collectives on the core runtime at 1-4 and 6 PEs.

use std::time::Duration;

use rshmem_tests::Job;

#[test]
fn collectives_match_references() {
    for np in [1, 2, 3, 4, 6] {
        let out = Job::new(np, "coll_basic")
            .timeout(Duration::from_secs(90))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok coll_basic pe=").len(), np, "{out:?}");
    }
}
