//! Teams on the core runtime at 1-4 and 6 PEs (6 is oversubscribed on purpose: waits must
//! yield): strided, 2-D and color splits, translation, sync, churn, and HOST/LEADERS with
//! real and virtual hosts.

use std::time::Duration;

use rshmem_tests::Job;

fn run(np: usize, virtual_hosts: &str) {
    let out = Job::new(np, "team_basic")
        .env("SHMEM_VIRTUAL_HOSTS", virtual_hosts)
        .timeout(Duration::from_secs(60))
        .run();
    out.assert_ok();
    assert_eq!(out.lines_with("ok team_basic pe=").len(), np, "{out:?}");
}

#[test]
fn team_basics_at_several_sizes() {
    for np in [1, 2, 3, 4, 6] {
        run(np, "0");
    }
}

#[test]
fn host_and_leaders_with_virtual_hosts() {
    for (np, hosts) in [(4, "2"), (6, "3"), (3, "2"), (2, "5")] {
        run(np, hosts);
    }
}
