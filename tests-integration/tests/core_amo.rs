//! rshmem-core AMOs under oshrun at 1-4 PEs: every AmoOp on every Word type, all PEs
//! hammering PE 0 and a ring, exact final values (the PE program `core_amo`).
use std::time::Duration;

use rshmem_tests::{Job, JobOutput};

const NPS: [usize; 4] = [1, 2, 3, 4];

/// Runs `prog args` on `np` PEs with `env`, bounded by 60 s; asserts exit 0 and that
/// every PE printed `ok <mode> pe=<me>` exactly once.
fn run_ok(np: usize, prog: &str, args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    let mut job = Job::new(np, prog)
        .args(args.iter().copied())
        .timeout(Duration::from_secs(60));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_ok();
    let mode = args[0];
    let mut pes: Vec<usize> = out
        .lines_with(&format!("ok {mode} pe="))
        .iter()
        .map(|s| s.trim().parse().expect("PE number"))
        .collect();
    pes.sort_unstable();
    assert_eq!(
        pes,
        (0..np).collect::<Vec<_>>(),
        "{prog} {args:?} on {np} PEs: every PE must print its ok line once\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
    out
}

#[test]
fn amo_every_op_every_type_blocking() {
    for np in NPS {
        run_ok(np, "core_amo", &["blocking"], &[]);
    }
}

#[test]
fn amo_every_op_every_type_fetching_nbi() {
    for np in NPS {
        run_ok(np, "core_amo", &["nbi"], &[]);
    }
}
