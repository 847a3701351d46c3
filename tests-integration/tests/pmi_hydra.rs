//! The bootstrap client under MPICH's `mpiexec.hydra` (reported as ignored when it is not
//! installed: see `build.rs`).

use std::process::Command;
use std::time::Duration;

use rshmem_tests::{bin, run_bounded, JobOutput};

fn run(np: usize, args: &[&str]) -> JobOutput {
    let mut cmd = Command::new("mpiexec.hydra");
    // fork: never try ssh, even if the host name does not resolve to this machine.
    cmd.args(["-launcher", "fork", "-n", &np.to_string()])
        .arg(bin("pmi_probe"))
        .args(args);
    run_bounded(cmd, None, Duration::from_secs(60))
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
