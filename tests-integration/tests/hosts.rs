//! Jobs across hosts simulated on this machine (`scripts/simhosts.sh`: network, UTS, IPC,
//! mount and PID namespaces per host, launched by `mpiexec.hydra` with a fake ssh), so
//! PEs of one host reach each other through shared memory and PEs of two hosts through
//! UCX over TCP (or libfabric: `libfabric_between_hosts`). Where namespaces are not
//! permitted (not root) the tests say so and pass, unless `RSHMEM_TESTS_REQUIRE_NETNS=1`
//! (CI) makes that a failure. The launcher passes the environment on to every PE, but each
//! transport between the hosts is chosen here (`libfabric_between_hosts`), so these run in
//! the suite's default pass only (`default_pass`).

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rshmem_tests::{bin, default_pass, run_bounded, simhosts_skipped, workspace, JobOutput};

/// One simulated-host job at a time: each takes 2 cores' worth of PEs and threads.
static SERIAL: Mutex<()> = Mutex::new(());

fn simhosts(hosts: usize, ppn: usize, envs: &[&str], prog: &str, args: &[&str]) -> JobOutput {
    let mut cmd = Command::new(workspace().join("scripts/simhosts.sh"));
    cmd.args([
        "run",
        "--hosts",
        &hosts.to_string(),
        "--ppn",
        &ppn.to_string(),
    ])
    .args(["--timeout", "100"])
    .args(["--env", &format!("RSHMEM_TEST_HOSTS={hosts}")]);
    for e in envs {
        cmd.args(["--env", e]);
    }
    cmd.arg("--").arg(bin(prog)).args(args);
    run_bounded(cmd, None, Duration::from_secs(120))
}

/// Runs `prog args` on `hosts` x `ppn` PEs; every PE must print a line starting `ok`.
fn check(hosts: usize, ppn: usize, envs: &[&str], prog: &str, args: &[&str]) -> bool {
    let out = simhosts(hosts, ppn, envs, prog, args);
    if simhosts_skipped(&out) {
        return false;
    }
    out.assert_ok();
    let oks = out.stdout.lines().filter(|l| l.starts_with("ok")).count();
    assert!(
        oks >= hosts * ppn,
        "{prog} {args:?}: {oks} ok lines for {} PEs: {out:?}",
        hosts * ppn
    );
    true
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The launcher's node locality reaches the PEs: two nodes of two ranks.
#[test]
fn process_mapping_names_the_hosts() {
    if !default_pass() {
        return;
    }
    let _g = lock();
    let out = simhosts(2, 2, &[], "pmi_probe", &["nodes"]);
    if simhosts_skipped(&out) {
        return;
    }
    out.assert_ok();
    assert_eq!(out.lines_with("nodes rank=").len(), 4, "{out:?}");
    assert!(
        out.lines_with("nodes rank=")
            .iter()
            .all(|l| l.ends_with("size=4 [0, 0, 1, 1]")),
        "{out:?}"
    );
}

/// The programs run between the hosts: RMA, atomics, signals, locks, contexts
/// with threads, `_nbe`, every collective, the teams and the symmetric statics.
const SUITE: &[(&str, &[&str])] = &[
    ("core_rma", &["contig"]),
    ("core_rma", &["strided"]),
    ("core_rma", &["nbi"]),
    ("core_rma", &["fence"]),
    ("core_amo", &["blocking"]),
    ("core_amo", &["nbi"]),
    ("core_sync", &["barrier"]),
    ("core_sync", &["p2p"]),
    ("core_sync", &["signal"]),
    ("core_sync", &["lock"]),
    ("api_signal_pipeline", &[]),
    ("api_lock_counter", &[]),
    ("api_ctx", &["threads", "2"]),
    ("api_ctx", &["nbe"]),
    ("core_ctx", &["threads_coll", "2"]),
    ("api_nbi", &[]),
    ("coll_basic", &[]),
    ("api_coll", &[]),
    ("team_basic", &[]),
    ("api_team", &["basic"]),
    ("statics_basic", &[]),
];

/// RMA, atomics, signals, locks, contexts with threads, `_nbe`, every collective and the
/// teams (SHARED, HOST, LEADERS, splits) on 2 hosts x 2 PEs: local and remote routes mix
/// in every operation, and WORLD's collectives compose HOST and LEADERS.
#[test]
fn suite_on_two_hosts_of_two_pes() {
    if !default_pass() {
        return;
    }
    let _g = lock();
    for (prog, args) in SUITE {
        if !check(2, 2, &[], prog, args) {
            return;
        }
    }
}

/// The flat algorithms, forced, are correct across hosts too (they are what split teams
/// that span hosts use).
#[test]
fn flat_collectives_across_hosts() {
    if !default_pass() {
        return;
    }
    let _g = lock();
    let flat = [
        "SHMEM_BARRIER_ALGORITHM=dissemination",
        "SHMEM_BCAST_ALGORITHM=tree",
        "SHMEM_REDUCE_ALGORITHM=rabenseifner",
    ];
    for prog in ["coll_basic", "api_coll"] {
        if !check(2, 2, &flat, prog, &[]) {
            return;
        }
    }
}

/// libfabric (tcp) between the hosts, shared memory within each (`SHMEM_NETWORK=ofi`).
#[test]
fn libfabric_between_hosts() {
    if !default_pass() {
        return;
    }
    let _g = lock();
    // SHMEM_NETWORK applies to the auto and mixed transports.
    let ofi = [
        "SHMEM_TRANSPORT=auto",
        "SHMEM_NETWORK=ofi",
        "FI_PROVIDER=tcp",
    ];
    // A cross-section of the suite's programs (CI's ofi pass runs every program over
    // libfabric, on one host).
    let section: &[(&str, &[&str])] = &[
        ("core_rma", &["contig"]),
        ("core_rma", &["nbi"]),
        ("core_amo", &["blocking"]),
        ("core_amo", &["nbi"]),
        ("core_sync", &["signal"]),
        ("core_sync", &["lock"]),
        ("api_signal_pipeline", &[]),
        ("api_ctx", &["nbe"]),
        ("core_ctx", &["threads_coll", "2"]),
        ("coll_basic", &[]),
        ("api_team", &["basic"]),
        ("statics_basic", &[]),
    ];
    for (prog, args) in section {
        if !check(2, 2, &ofi, prog, args) {
            return;
        }
    }
}

/// One PE per host: every peer is remote.
#[test]
fn one_pe_per_host() {
    if !default_pass() {
        return;
    }
    let _g = lock();
    for (prog, args) in [
        ("coll_basic", &[][..]),
        ("core_amo", &["blocking"][..]),
        ("team_basic", &[][..]),
    ] {
        if !check(2, 1, &[], prog, args) {
            return;
        }
    }
}

/// A PE killed on one host ends the job on both, promptly and with a failure, and leaves
/// nothing behind: no process, namespace or shared-memory file.
#[test]
fn killed_pe_ends_the_job_on_every_host() {
    if !default_pass() {
        return;
    }
    let _g = lock();
    let start = Instant::now();
    let out = simhosts(2, 2, &[], "api_failure", &["kill"]);
    if simhosts_skipped(&out) {
        return;
    }
    let took = start.elapsed();
    assert_ne!(out.code(), 0, "{out:?}");
    assert_ne!(
        out.code(),
        124,
        "the job had to be killed by the timeout: {out:?}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}: {out:?}");
    assert_eq!(out.lines_with("started pe=").len(), 4, "{out:?}");
    assert!(out.lines_with("after-barrier").is_empty(), "{out:?}");
    let ps = Command::new("pgrep")
        .args(["-f", "api_failure kill"])
        .output();
    if let Ok(ps) = ps {
        assert!(
            ps.stdout.is_empty(),
            "processes left: {}",
            String::from_utf8_lossy(&ps.stdout)
        );
    }
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left: Vec<String> = String::from_utf8_lossy(&ns.stdout)
        .lines()
        .filter(|l| l.starts_with("rsh"))
        .map(str::to_owned)
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}
