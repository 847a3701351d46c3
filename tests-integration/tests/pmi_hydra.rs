//! The bootstrap client under MPICH's `mpiexec.hydra` (reported as ignored when it is not
//! installed: see `build.rs`).

use std::process::Command;
use std::time::Duration;

use rshmem_tests::{bin, run_bounded, JobOutput};

fn run(np: usize, args: &[&str]) -> JobOutput {
    run_prog(np, "pmi_probe", args)
}

fn run_prog(np: usize, prog: &str, args: &[&str]) -> JobOutput {
    run_with(np, &[], prog, args)
}

fn run_with(np: usize, hydra_args: &[&str], prog: &str, args: &[&str]) -> JobOutput {
    let mut cmd = Command::new("mpiexec.hydra");
    // fork: never try ssh, even if the host name does not resolve to this machine.
    cmd.args(["-launcher", "fork", "-n", &np.to_string()])
        .args(hydra_args)
        .arg(bin(prog))
        .args(args);
    run_bounded(cmd, None, Duration::from_secs(60))
}

/// Node locality from `PMI_process_mapping` and the key-value store, with the socket
/// inherited (`PMI_FD`) and over TCP (`-pmi-port`: `PMI_PORT` and `PMI_ID` only).
#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn nodes_and_kvs_with_and_without_pmi_port() {
    for hydra_args in [&[][..], &["-pmi-port"][..]] {
        let np = 4;
        let out = run_with(np, hydra_args, "pmi_probe", &["nodes"]);
        out.assert_ok();
        for r in 0..np {
            let want = format!("nodes rank={r} size={np} [0, 0, 0, 0]");
            assert!(
                out.stdout.lines().any(|l| l == want),
                "{hydra_args:?}: no {want:?} in {}",
                out.stdout
            );
        }
        let out = run_with(3, hydra_args, "pmi_probe", &["kvs"]);
        out.assert_ok();
        assert_eq!(
            out.lines_with("ok kvs ").len(),
            3,
            "{hydra_args:?}: {}",
            out.stdout
        );
    }
}

/// A whole rshmem job (heap, RMA, collectives) under `-pmi-port`.
#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn rshmem_job_under_pmi_port() {
    let out = run_with(3, &["-pmi-port"], "coll_basic", &[]);
    out.assert_ok();
    assert_eq!(out.lines_with("ok coll_basic").len(), 3, "{}", out.stdout);
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn kvs_under_hydra() {
    for np in [2, 3] {
        let out = run(np, &["kvs"]);
        out.assert_ok();
        let lines = out.lines_with("ok kvs ");
        assert_eq!(lines.len(), np, "{}", out.stdout);
        let sum = 7 * np * (np - 1) / 2;
        for r in 0..np {
            let want = format!("rank={r} size={np} sum={sum} job=");
            assert!(
                lines.iter().any(|l| l.starts_with(&want)),
                "no {want:?} in {}",
                out.stdout
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn barriers_under_hydra() {
    let out = run(3, &["barrier", "100"]);
    out.assert_ok();
    assert_eq!(out.lines_with("ok barrier ").len(), 3);
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn abort_under_hydra() {
    let out = run(2, &["abort", "5", "1"]);
    assert_eq!(out.code(), 5, "{out:?}");
    assert!(out.elapsed < Duration::from_secs(10));
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn global_exit_256_fails_under_hydra() {
    let out = run_prog(2, "api_failure", &["exit", "256"]);
    assert_eq!(out.code(), 255, "{out:?}");
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn fatal_message_printed_once_under_hydra() {
    // hydra does not print an abort's message, so the PE prints it itself.
    let out = run_prog(2, "core_errors", &["fatal"]);
    assert_ne!(out.code(), 0, "{out:?}");
    let want =
        "rshmem: PE 1: shmem_putmem: argument pe: PE 2 is out of range (valid PEs are 0 to 1)";
    let hits = out
        .stderr
        .lines()
        .filter(|l| l.contains("shmem_putmem"))
        .count();
    assert_eq!(hits, 1, "{want:?} once in:\n{}", out.stderr);
    assert!(out.stderr.contains(want), "{}", out.stderr);
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn program_started_by_a_pe_is_a_singleton_under_hydra() {
    let out = run_prog(2, "launch_modes", &["spawn-child"]);
    out.assert_ok();
    for r in 0..2 {
        assert_eq!(
            out.lines_with(&format!("ok spawn-child pe={r} child=")),
            ["child npes=1 me=0"],
            "{out:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(have_hydra),
    ignore = "mpiexec.hydra is not installed (scripts/install-deps.sh installs it)"
)]
fn pe_exiting_before_init_is_reported_under_hydra() {
    // hydra keeps the others waiting in shmem_init; all a PE can do is say so. hydra's
    // own timeout ends the job.
    let mut cmd = Command::new("mpiexec.hydra");
    cmd.args(["-launcher", "fork", "-n", "2"])
        .arg(bin("launch_modes"))
        .args(["early-exit", "1"])
        .env("RSHMEM_BOOT_WARN_SECS", "0.5")
        .env("MPIEXEC_TIMEOUT", "4");
    let out = run_bounded(cmd, None, Duration::from_secs(60));
    assert_ne!(out.code(), 0, "{out:?}");
    let warn = "rshmem: PE 0: shmem_init has waited 0.5 s in a PMI barrier for the other PEs";
    assert_eq!(out.stderr.matches(warn).count(), 1, "{out:?}");
    assert!(!out.stdout.contains("passed init"), "{out:?}");
}
