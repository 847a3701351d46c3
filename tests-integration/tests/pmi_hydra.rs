//! The bootstrap client under MPICH's `mpiexec.hydra` (skipped when it is not installed).

use std::process::Command;
use std::time::Duration;

use rshmem_tests::{bin, run_bounded, JobOutput};

fn hydra() -> Option<&'static str> {
    let found = Command::new("mpiexec.hydra")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        Some("mpiexec.hydra")
    } else {
        println!("SKIPPED: mpiexec.hydra not installed");
        None
    }
}

fn run(np: usize, args: &[&str]) -> JobOutput {
    let mut cmd = Command::new("mpiexec.hydra");
    // fork: never try ssh, even if the host name does not resolve to this machine.
    cmd.args(["-launcher", "fork", "-n", &np.to_string()])
        .arg(bin("pmi_probe"))
        .args(args);
    run_bounded(cmd, None, Duration::from_secs(60))
}

#[test]
fn kvs_under_hydra() {
    if hydra().is_none() {
        return;
    }
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
fn barriers_under_hydra() {
    if hydra().is_none() {
        return;
    }
    let out = run(3, &["barrier", "100"]);
    out.assert_ok();
    assert_eq!(out.lines_with("ok barrier ").len(), 3);
}

#[test]
fn abort_under_hydra() {
    if hydra().is_none() {
        return;
    }
    let out = run(2, &["abort", "5", "1"]);
    assert_eq!(out.code(), 5, "{out:?}");
    assert!(out.elapsed < Duration::from_secs(10));
}
