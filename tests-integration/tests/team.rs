//! Team creation, translation, sync and churn at 1-4 and 6 PEs (6 is oversubscribed on
//! purpose: waits must yield).

use std::time::Duration;

use rshmem_tests::Job;

#[test]
fn team_basics_at_several_sizes() {
    for np in [1, 2, 3, 4, 6] {
        let out = Job::new(np, "team_basic")
            .timeout(Duration::from_secs(60))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok team_basic pe=").len(), np, "{out:?}");
    }
}
