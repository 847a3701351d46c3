//! The safe API's teams (`rshmem::Team`, `TeamRef`) under oshrun, through the
//! `api_team` PE program: strided, 2-D and color splits, translation, drop orders,
//! split/drop churn, and HOST/LEADERS with virtual hosts. The 22-PE 2-D split and the
//! 6-PE runs oversubscribe the 2 cores on purpose: waits must yield.

use std::time::Duration;

use rshmem_tests::{Job, JobOutput};

/// Runs `api_team args` on `np` PEs; asserts exit 0, one ok line per PE, no panic.
fn run_ok(np: usize, args: &[&str], env: &[(&str, &str)], secs: u64) -> JobOutput {
    let mut job = Job::new(np, "api_team")
        .args(args.iter().copied())
        .timeout(Duration::from_secs(secs));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_ok();
    let mut pes: Vec<usize> = out
        .lines_with("ok api_team pe=")
        .iter()
        .map(|s| s.trim().parse().expect("PE number"))
        .collect();
    pes.sort_unstable();
    assert_eq!(
        pes,
        (0..np).collect::<Vec<_>>(),
        "api_team {args:?} on {np} PEs: every PE must print its ok line once\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !out.stderr.contains("panicked"),
        "api_team on {np} PEs panicked:\n{}",
        out.stderr
    );
    out
}

#[test]
fn splits_translation_drops_and_churn() {
    for np in [1, 2, 3, 4, 6] {
        run_ok(np, &["basic"], &[], 120);
    }
}

#[test]
fn host_and_leaders_with_two_virtual_hosts() {
    run_ok(4, &["basic"], &[("SHMEM_VIRTUAL_HOSTS", "2")], 120);
    run_ok(6, &["basic"], &[("SHMEM_VIRTUAL_HOSTS", "3")], 120);
}

/// Checks the `grid` lines of a 2-D split of `np` PEs into rows of `xrange`.
fn check_grid(out: &JobOutput, np: usize, xrange: usize) {
    let mut lines = out.lines_with("grid pe=");
    lines.sort_by_key(|l| l.split(' ').next().unwrap().parse::<usize>().unwrap());
    assert_eq!(lines.len(), np, "{}", out.stdout);
    let xr = xrange.min(np);
    for (pe, l) in lines.iter().enumerate() {
        let (x, y) = (pe % xr, pe / xr);
        let xn = xr.min(np - y * xr);
        let yn = (np - x).div_ceil(xr);
        assert_eq!(*l, format!("{pe} x={x} y={y} xn={xn} yn={yn}"));
    }
}

#[test]
fn split_2d_small() {
    for np in [1, 2, 3, 4, 6] {
        for xrange in [1, 2, 5] {
            let out = run_ok(np, &["grid", &xrange.to_string()], &[], 60);
            check_grid(&out, np, xrange);
        }
    }
}

#[test]
fn split_2d_22_pes_rows_of_5() {
    let out = run_ok(22, &["grid", "5"], &[], 240);
    check_grid(&out, 22, 5);
    // Rows of 5 and a short last row of 2; columns of 5 (x < 2) and 4.
    let lines = out.lines_with("grid pe=");
    assert_eq!(lines.iter().filter(|l| l.ends_with("xn=2 yn=5")).count(), 2);
    assert_eq!(lines.iter().filter(|l| l.contains("xn=5 yn=5")).count(), 8);
    assert_eq!(lines.iter().filter(|l| l.contains("xn=5 yn=4")).count(), 12);
}
