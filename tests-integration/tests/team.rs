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
    for (np, hosts) in [(4, "2"), (6, "3"), (3, "2"), (2, "2"), (1, "2")] {
        run(np, hosts);
    }
}

/// More virtual hosts than PEs is an init error naming the variable (issue 26, item 9).
#[test]
fn more_virtual_hosts_than_pes_fails_init() {
    for (np, hosts) in [(2, "5"), (3, "4")] {
        let out = Job::new(np, "team_basic")
            .env("SHMEM_VIRTUAL_HOSTS", hosts)
            .timeout(Duration::from_secs(60))
            .run();
        assert!(out.status.is_some(), "hung: {out:?}");
        assert_ne!(out.code(), 0, "{out:?}");
        assert!(out.lines_with("ok team_basic").is_empty(), "{out:?}");
        let want = format!(
            "SHMEM_VIRTUAL_HOSTS=\"{hosts}\" is invalid: must be at most the number of PEs ({np})"
        );
        assert!(out.stderr.contains(&want), "want {want:?}: {out:?}");
    }
}
