//! The UCX transport on one host: forced for every PE (`SHMEM_TRANSPORT=ucx`), and mixed
//! with shared memory (`SHMEM_TRANSPORT=mixed`: each virtual host's PEs share memory, and
//! reach the other virtual hosts through UCX). `UCX_TLS=tcp` makes UCX emulate RMA and
//! atomics in software, as on a cluster without RDMA, so targets must make progress.
//! (CI also runs the whole integration suite with `SHMEM_TRANSPORT=ucx`.) Each job sets its
//! transport, so these run in the default pass only (`default_pass`).

use std::time::Duration;

use rshmem_tests::{assert_left_nothing, bin, default_pass, shm_objects, Job};

/// `Job` for `prog` on `np` PEs, every PE through UCX over TCP.
fn over_ucx(np: usize, prog: &str) -> Job {
    Job::new(np, prog)
        .env("SHMEM_TRANSPORT", "ucx")
        .env("UCX_TLS", "tcp")
        .timeout(Duration::from_secs(240))
}

/// `Job` for `prog` on `np` PEs on 2 virtual hosts: shared memory within, UCX between.
fn mixed(np: usize, prog: &str) -> Job {
    Job::new(np, prog)
        .env("SHMEM_TRANSPORT", "mixed")
        .env("SHMEM_NETWORK", "ucx")
        .env("SHMEM_VIRTUAL_HOSTS", "2")
        .env("UCX_TLS", "tcp")
        .timeout(Duration::from_secs(240))
}

/// Local and remote PEs hammer the same words with every atomic (`core_amo`: PE 0's words
/// and a ring); with PEs 0-1 on one virtual host and 2-3 on the other, each word is
/// updated by node-local and remote PEs at once, and every final value must be exact:
/// with UCX's atomics CPU atomics (this host has no RDMA adapter), node-local PEs use CPU
/// atomics beside the remote PEs' UCX atomics; with `UCX_ATOMIC_MODE=device`, every
/// atomic goes through UCX (the path of hosts with an adapter).
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn atomics_from_local_and_remote_pes_on_one_word_are_exact() {
    if !default_pass() {
        return;
    }
    let rdma = std::fs::read_dir("/sys/class/infiniband").is_ok_and(|mut d| d.next().is_some());
    for (mode, by_cpu) in [("guess", !rdma), ("device", false), ("cpu", true)] {
        for np in [3, 4] {
            let out = mixed(np, "core_amo")
                .env("UCX_ATOMIC_MODE", mode)
                .env("SHMEM_INFO", "1")
                .args(["blocking"])
                .run();
            out.assert_ok();
            assert_eq!(out.lines_with("ok blocking").len(), np, "{}", out.stdout);
            let said = if by_cpu {
                "with CPU atomics"
            } else {
                "sends every atomic through UCX"
            };
            assert!(out.stderr.contains(said), "{mode} at {np}: {out:?}");
        }
    }
}

/// Issue 27 (section 3): a job starts under every `UCX_TLS` a user may set, UCX's
/// shared-memory transports alone included (their peer-failure handling is turned on by
/// the library), with exact atomics and without UCX warning about the settings.
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn every_ucx_tls_starts() {
    if !default_pass() {
        return;
    }
    for tls in [
        "sm,self",
        "posix,self",
        "sysv,self",
        "self,tcp",
        "all",
        "^tcp",
    ] {
        let out = over_ucx(3, "core_amo")
            .env("UCX_TLS", tls)
            .args(["blocking"])
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok blocking").len(), 3, "{tls}: {out:?}");
        assert!(!out.stderr.contains("UCX  WARN"), "{tls}: {out:?}");
    }
}

/// Issue 27 (section 3): where the transports a user allows cannot reach another PE (`self`
/// alone, `cma` with no active messages, shared memory with its failure reports turned off),
/// init fails naming the variable to change, and leaves nothing behind.
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn ucx_tls_that_reaches_no_pe_fails_saying_what_to_allow() {
    if !default_pass() {
        return;
    }
    let before = shm_objects();
    for (tls, handling) in [("self", None), ("cma", None), ("sm", Some("n"))] {
        let mut job = over_ucx(2, "core_smoke").env("UCX_TLS", tls);
        if let Some(h) = handling {
            job = job
                .env("UCX_POSIX_ERROR_HANDLING", h)
                .env("UCX_SYSV_ERROR_HANDLING", h);
        }
        let out = job.timeout(Duration::from_secs(60)).run();
        assert_ne!(out.code(), 0, "{tls}: {}", out.stderr);
        assert!(out.stderr.contains("shmem_init"), "{tls}: {}", out.stderr);
        assert!(out.stderr.contains("allow tcp"), "{tls}: {}", out.stderr);
        assert_left_nothing(&bin("core_smoke"), &before, tls);
    }
}

/// Where UCX may use its shared-memory transports and no PE maps another's heap, UCX allocates
/// the heap segment, so transfers and atomics are one-sided: every atomic of every type (in
/// both forms), RMA and the collectives give exact results there, at 2, 3 and 4 PEs.
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn a_heap_ucx_allocated_runs_rma_atomics_and_collectives() {
    if !default_pass() {
        return;
    }
    for np in [2, 3, 4] {
        for (prog, args) in [
            ("core_amo", &["blocking"][..]),
            ("core_amo", &["nbi"]),
            ("core_rma", &["contig"]),
            ("core_rma", &["nbi"]),
            ("coll_basic", &[]),
            ("api_aset", &[]),
        ] {
            let out = over_ucx(np, prog)
                .env("UCX_TLS", "sm,self")
                .env("SHMEM_INFO", "1")
                .args(args.iter().copied())
                .run();
            out.assert_ok();
            // SHMEM_INFO is PE 0's.
            assert!(
                out.stderr.contains("PE 0 has its heap allocated by UCX"),
                "{prog} {args:?} at {np}: {out:?}"
            );
            // Every PE's is, so the collectives choose as for memory the network maps
            // (`Span::Mapped`): coll_basic's broadcasts and reductions above 16 KiB (512 B
            // at 2 PEs) take single-copy, every transfer a copy through UCX's mapping.
            assert!(
                out.stderr
                    .contains("collectives choose for memory the network maps"),
                "{prog} {args:?} at {np}: {out:?}"
            );
        }
    }
    // A non-blocking collective's worker raises from a fresh context: each of its raises
    // must take the way the service's endpoint says (the mapping), not the message its
    // context's unopened endpoint would send first, or a count shows before its data
    // (Rabenseifner's channel messages over active sets read stale buffers 5 runs in 10).
    for _ in 0..3 {
        let out = over_ucx(3, "api_aset")
            .env("UCX_TLS", "sm,self")
            .env("SHMEM_REDUCE_ALGORITHM", "rabenseifner")
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok api_aset pe=").len(), 3, "{out:?}");
    }
}

/// A PE that computes without calling the library serves gets and fetch-adds.
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn a_computing_pe_still_serves_its_peers() {
    if !default_pass() {
        return;
    }
    for np in [2, 3] {
        let out = over_ucx(np, "ucx_progress").run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok pe=").len(), np, "{}", out.stdout);
        assert_eq!(out.lines_with("served while computing").len(), 1);
    }
}

/// The mixed path moves data and runs collectives (RMA, contexts, teams and collectives).
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn mixed_routes_run_rma_contexts_and_collectives() {
    if !default_pass() {
        return;
    }
    for (prog, args) in [
        ("core_rma", &["contig"][..]),
        ("core_rma", &["nbi"]),
        ("core_rma", &["fence"]),
        ("core_ctx", &["nbe"]),
        ("coll_basic", &[]),
        ("api_team", &["basic"]),
    ] {
        let out = mixed(4, prog).args(args.iter().copied()).run();
        out.assert_ok();
    }
    for alg in ["linear", "recursive_doubling", "hierarchical"] {
        let out = mixed(4, "coll_basic")
            .env("SHMEM_REDUCE_ALGORITHM", alg)
            .run();
        out.assert_ok();
        assert_eq!(
            out.lines_with("ok coll_basic pe=").len(),
            4,
            "{alg}: {out:?}"
        );
    }
}

/// Without UCX a job that needs it fails at init, saying what to install, and leaves
/// nothing behind.
#[test]
fn a_job_needing_absent_ucx_fails_saying_what_to_install() {
    if !default_pass() {
        return;
    }
    let before = shm_objects();
    let out = Job::new(2, "core_smoke")
        .env("SHMEM_TRANSPORT", "ucx")
        .env("SHMEM_UCX_LIBRARY", "/nonexistent/libucp.so.0")
        .timeout(Duration::from_secs(60))
        .run();
    assert_ne!(out.code(), 0, "{}", out.stderr);
    assert!(out.stderr.contains("shmem_init"), "{}", out.stderr);
    assert!(out.stderr.contains("libucx0"), "{}", out.stderr);
    let after = shm_objects();
    let left: Vec<_> = after.iter().filter(|o| !before.contains(o)).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Issue 26, item 11: a job whose PEs share one host opens UCX's TCP listeners on the
/// loopback device only (UCX_NET_DEVICES=lo unless the user chose devices).
#[test]
#[cfg_attr(not(have_ucx), ignore = "UCX (libucp.so.0) is not installed")]
fn one_host_jobs_listen_on_loopback_only() {
    if !default_pass() {
        return;
    }
    for (np, job) in [(2, over_ucx(2, "ucx_listen")), (3, mixed(3, "ucx_listen"))] {
        let out = job.timeout(Duration::from_secs(60)).run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok ucx_listen pe=").len(), np, "{out:?}");
        let listens = out.lines_with("listen pe=");
        assert!(
            !listens.is_empty(),
            "UCX over TCP listens somewhere: {out:?}"
        );
        for l in &listens {
            let addr = l.split_whitespace().nth(1).unwrap_or("");
            assert!(
                addr.starts_with("127.") || addr.starts_with("::1:"),
                "a listener outside the loopback device: {l} in {out:?}"
            );
        }
    }
}
