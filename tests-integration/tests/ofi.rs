//! The libfabric (OFI) transport on one host: forced for every PE (`SHMEM_TRANSPORT=ofi`)
//! on the providers Debian's libfabric has (`tcp;ofi_rxm`, manual progress, and `sockets`,
//! automatic progress), and mixed with shared memory (`SHMEM_TRANSPORT=mixed
//! SHMEM_NETWORK=ofi`: each virtual host's PEs share memory, and reach the other virtual
//! hosts through libfabric). tests/hosts.rs runs libfabric between simulated hosts. Each
//! job sets its transport, so these run in the default pass only (`default_pass`): the
//! others would repeat them unchanged.

use std::time::Duration;

use rshmem_tests::{default_pass, shm_objects, Job};

/// `Job` for `prog` on `np` PEs, every PE through libfabric's `provider`.
fn over_ofi(np: usize, provider: &str, prog: &str) -> Job {
    Job::new(np, prog)
        .env("SHMEM_TRANSPORT", "ofi")
        .env("FI_PROVIDER", provider)
        // sockets' own progress thread otherwise sleeps 10 ms between polls.
        .env("FI_SOCKETS_PE_WAITTIME", "0")
        .timeout(Duration::from_secs(240))
}

/// The programs every provider runs: RMA (blocking, non-blocking, fenced), every atomic of
/// every type in both forms, put-with-signal, collectives, contexts and teams.
const RUNS: &[(&str, &[&str])] = &[
    ("core_rma", &["contig"]),
    ("core_rma", &["nbi"]),
    ("core_rma", &["fence"]),
    ("core_amo", &["blocking"]),
    ("core_amo", &["nbi"]),
    ("api_signal_pipeline", &[]),
    ("core_sync", &["signal"]),
    ("coll_basic", &[]),
    ("core_ctx", &["basic"]),
    ("core_ctx", &["nbe"]),
    ("core_ctx", &["threads", "2"]),
    ("api_team", &["basic"]),
];

fn run_all(np: usize, provider: &str, runs: &[(&str, &[&str])]) {
    for (prog, args) in runs {
        let out = over_ofi(np, provider, prog)
            .args(args.iter().copied())
            .run();
        out.assert_ok();
        let oks = out.stdout.lines().filter(|l| l.starts_with("ok")).count();
        assert!(oks >= np, "{provider} {prog} {args:?} at {np}: {out:?}");
    }
}

#[test]
#[cfg_attr(not(have_ofi), ignore = "libfabric (libfabric.so.1) is not installed")]
fn tcp_runs_rma_atomics_signals_collectives_and_contexts() {
    if !default_pass() {
        return;
    }
    for np in [2, 3, 4] {
        run_all(np, "tcp", RUNS);
    }
}

/// sockets (automatic progress: its own thread, which polls without pause under
/// `FI_SOCKETS_PE_WAITTIME=0`, so more PEs than cores crawl) at 2 PEs.
#[test]
#[cfg_attr(not(have_ofi), ignore = "libfabric (libfabric.so.1) is not installed")]
fn sockets_runs_rma_atomics_signals_collectives_and_contexts() {
    if !default_pass() {
        return;
    }
    run_all(2, "sockets", RUNS);
}

/// `SHMEM_INFO` names the network, provider and fabric chosen.
#[test]
#[cfg_attr(not(have_ofi), ignore = "libfabric (libfabric.so.1) is not installed")]
fn shmem_info_names_the_provider_and_fabric() {
    if !default_pass() {
        return;
    }
    for (provider, name) in [("tcp", "tcp;ofi_rxm"), ("sockets", "sockets")] {
        let out = over_ofi(2, provider, "core_smoke")
            .env("SHMEM_INFO", "1")
            .run();
        out.assert_ok();
        assert!(
            out.stderr.contains("1 through libfabric"),
            "{provider}: {out:?}"
        );
        assert!(
            out.stderr.contains(&format!("provider {name}, fabric ")),
            "{provider}: {out:?}"
        );
        assert!(out.stderr.contains("SHMEM_NETWORK"), "{provider}: {out:?}");
    }
}

/// A PE that computes without calling the library serves gets and fetch-adds (its progress
/// thread drives the manual-progress tcp provider).
#[test]
#[cfg_attr(not(have_ofi), ignore = "libfabric (libfabric.so.1) is not installed")]
fn a_computing_pe_still_serves_its_peers() {
    if !default_pass() {
        return;
    }
    for np in [2, 3] {
        let out = over_ofi(np, "tcp", "ucx_progress").run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok pe=").len(), np, "{}", out.stdout);
        assert_eq!(out.lines_with("served while computing").len(), 1);
    }
}

/// A member finalizes while the others sync on WORLD (`live_nbe`): every survivor's
/// request fails naming it, the survivors go on as an active set, and the job ends cleanly
/// (the finalized PE waits in finalize for them; reading its state never hangs).
#[test]
#[cfg_attr(not(have_ofi), ignore = "libfabric (libfabric.so.1) is not installed")]
fn a_finalized_member_fails_the_survivors_sync_and_the_job_ends() {
    if !default_pass() {
        return;
    }
    for np in [3, 4] {
        let out = over_ofi(np, "tcp", "live_nbe").run();
        out.assert_ok();
        assert_eq!(out.lines_with("sync_nbe pe=").len(), np - 1, "{out:?}");
        assert_eq!(out.lines_with("ok live_nbe pe=").len(), np - 1, "{out:?}");
    }
}

/// Shared memory within each of 2 virtual hosts, libfabric between them: node-local and
/// remote PEs update the same words with every atomic, exactly.
#[test]
#[cfg_attr(not(have_ofi), ignore = "libfabric (libfabric.so.1) is not installed")]
fn mixed_routes_over_libfabric() {
    if !default_pass() {
        return;
    }
    for (prog, args) in [
        ("core_amo", &["blocking"][..]),
        ("core_rma", &["contig"]),
        ("core_rma", &["nbi"]),
        ("api_signal_pipeline", &[]),
        ("coll_basic", &[]),
        ("api_team", &["basic"]),
    ] {
        let out = Job::new(4, prog)
            .env("SHMEM_TRANSPORT", "mixed")
            .env("SHMEM_VIRTUAL_HOSTS", "2")
            .env("SHMEM_NETWORK", "ofi")
            .env("FI_PROVIDER", "tcp")
            .env("SHMEM_INFO", "1")
            .args(args.iter().copied())
            .timeout(Duration::from_secs(240))
            .run();
        out.assert_ok();
        assert!(
            out.stderr
                .contains("2 PE(s) through shared memory and 2 through libfabric"),
            "{prog}: {out:?}"
        );
    }
}

/// A provider that does not exist, a library that is missing, and networks that disagree
/// fail at init with a message naming the cause, leaving nothing behind.
#[test]
fn bad_libfabric_settings_fail_at_init_saying_why() {
    if !default_pass() {
        return;
    }
    let before = shm_objects();
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[
                ("SHMEM_TRANSPORT", "ofi"),
                ("FI_PROVIDER", "no_such_provider"),
            ],
            "no libfabric provider",
        ),
        (
            &[
                ("SHMEM_TRANSPORT", "ofi"),
                ("SHMEM_OFI_LIBRARY", "/nonexistent/libfabric.so.1"),
            ],
            "libfabric1",
        ),
        (
            &[("SHMEM_TRANSPORT", "ucx"), ("SHMEM_NETWORK", "ofi")],
            "disagree",
        ),
    ];
    for (env, says) in cases {
        let mut job = Job::new(2, "core_smoke").timeout(Duration::from_secs(60));
        for (k, v) in env {
            job = job.env(k, v);
        }
        let out = job.run();
        assert_ne!(out.code(), 0, "{env:?}: {}", out.stderr);
        assert!(out.stderr.contains("shmem_init"), "{env:?}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{env:?}: {}", out.stderr);
    }
    let after = shm_objects();
    let left: Vec<_> = after.iter().filter(|o| !before.contains(o)).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
