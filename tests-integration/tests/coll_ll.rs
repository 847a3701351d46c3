//! The low-latency (LL) small reductions and broadcasts and the staged broadcasts at 2, 3,
//! 4 and 6 PEs (3 and 6: ranks folded in and out of recursive doubling; 4 and 6
//! oversubscribe the machine's cores, so waits must yield), chosen by `auto`, forced
//! (`ll`, `ll_rd`, `staged`), and through UCX, where teams spanning hosts keep the
//! message algorithms.

use std::time::Duration;

use rshmem_tests::{time_scale, Job};

fn run(np: usize, env: &[(&str, &str)], iters: &str) {
    let mut job = Job::new(np, "coll_ll")
        .args([iters])
        .timeout(Duration::from_secs(120));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_ok();
    assert_eq!(
        out.lines_with("ok coll_ll pe=").len(),
        np,
        "{env:?} at {np}: {out:?}"
    );
}

#[test]
fn ll_auto() {
    // Through the network (the suite's ucx and ofi passes) no team maps its members, so LL
    // never applies: fewer rounds of the message algorithms, as in `ll_beside_ucx`.
    let iters = if time_scale() > 1 { "20" } else { "300" };
    for np in [1, 2, 3, 4] {
        run(np, &[], iters);
    }
}

#[test]
fn ll_forced_one_shot_and_recursive_doubling() {
    for (reduce, np) in [
        ("ll", 3),
        ("ll_rd", 2),
        ("ll_rd", 3),
        ("ll_rd", 4),
        ("ll_rd", 6),
    ] {
        let env = [
            ("SHMEM_REDUCE_ALGORITHM", reduce),
            ("SHMEM_BCAST_ALGORITHM", "ll"),
        ];
        // Through the network LL never applies either (see `ll_auto`).
        run(np, &env, if time_scale() > 1 { "20" } else { "100" });
    }
}

#[test]
fn staged_broadcast_forced() {
    // Every size (auto takes it at 3 PEs and more up to 32 KiB), chunks wrapping.
    for np in [2, 3, 4, 6] {
        let env = [("SHMEM_BCAST_ALGORITHM", "staged")];
        run(np, &env, if time_scale() > 1 { "20" } else { "100" });
    }
}

#[test]
fn ll_beside_ucx() {
    // All through UCX: no team maps its members, LL never applies.
    run(3, &[("SHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")], "20");
    // Two virtual hosts: WORLD spans them (messages), the pair team lies on one host.
    for np in [3, 4] {
        let env = [
            ("SHMEM_TRANSPORT", "mixed"),
            ("SHMEM_VIRTUAL_HOSTS", "2"),
            ("UCX_TLS", "tcp"),
        ];
        run(np, &env, "20");
    }
}
