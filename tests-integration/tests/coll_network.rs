//! The collectives built for the network (`coll::net`, issue 27): `auto` takes them on
//! teams whose members reach each other through UCX. `coll_basic` checks broadcasts from
//! every root and reductions of every operator against local references, on WORLD, a
//! strided and a reversed team, at sizes on both sides of the 16 KiB message threshold
//! and across the 256 KiB broadcast chunks.

use std::time::Duration;

use rshmem_tests::Job;

fn coll_basic(np: usize) -> Job {
    Job::new(np, "coll_basic").timeout(Duration::from_secs(240))
}

fn assert_ok(np: usize, job: Job) {
    let out = job.run();
    out.assert_ok();
    assert_eq!(out.lines_with("ok coll_basic pe=").len(), np, "{out:?}");
}

/// Every PE through UCX over TCP (RMA and atomics emulated: targets must progress).
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn network_collectives_over_ucx() {
    for np in [2, 3, 4] {
        let job = coll_basic(np)
            .env("SHMEM_TRANSPORT", "ucx")
            .env("UCX_TLS", "tcp");
        assert_ok(np, job);
    }
}

/// Two virtual hosts: sub-teams across them take the network algorithms, WORLD the
/// hierarchical composition with the bulk reduction across LEADERS.
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn network_collectives_across_two_virtual_hosts() {
    for np in [3, 4] {
        let job = coll_basic(np)
            .env("SHMEM_TRANSPORT", "mixed")
            .env("SHMEM_VIRTUAL_HOSTS", "2")
            .env("UCX_TLS", "tcp");
        assert_ok(np, job);
    }
}

/// Forced on shared memory, where the same code runs on loads, stores and CPU atomics.
#[test]
fn network_algorithms_forced_on_shared_memory() {
    for np in [1, 2, 3, 5] {
        let job = coll_basic(np)
            .env("SHMEM_BCAST_ALGORITHM", "binomial")
            .env("SHMEM_REDUCE_ALGORITHM", "direct");
        assert_ok(np, job);
    }
}
