//! rshmem-core RMA under oshrun at 1-4 PEs: put/get, p/g, iput/iget, ibput/ibget, nbi,
//! fence (the PE program `core_rma` asserts every value).
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
fn rma_contiguous_put_get_all_sizes_and_alignments() {
    for np in NPS {
        run_ok(np, "core_rma", &["contig"], &[]);
    }
}

#[test]
fn rma_single_element_p_g_every_pair() {
    for np in NPS {
        run_ok(np, "core_rma", &["pg"], &[]);
    }
}

#[test]
fn rma_strided_iput_iget() {
    for np in NPS {
        run_ok(np, "core_rma", &["strided"], &[]);
    }
}

#[test]
fn rma_blocked_ibput_ibget() {
    for np in NPS {
        run_ok(np, "core_rma", &["blocked"], &[]);
    }
}

#[test]
fn rma_nbi_with_quiet() {
    for np in NPS {
        run_ok(np, "core_rma", &["nbi"], &[]);
    }
}

#[test]
fn rma_fence_orders_data_before_flag() {
    for np in NPS {
        run_ok(np, "core_rma", &["fence"], &[]);
    }
}
