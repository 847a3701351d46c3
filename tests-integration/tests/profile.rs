//! Profiling counters (`SHMEM_PROFILE`, `shmem_pcontrol`, `shmemx_pcntr_*` through the
//! safe API) at 2, 3 and 4 PEs: exact per-PE counts, and the job-wide summary printed at
//! finalize holding the sums over the PEs.
use std::time::Duration;

use rshmem_tests::{Job, JobOutput};

const T: Duration = Duration::from_secs(60);

fn run(np: usize, env: &[(&str, &str)]) -> JobOutput {
    let mut job = Job::new(np, "api_profile").timeout(T);
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_ok();
    assert_eq!(
        out.lines_with("ok api_profile pe=").len(),
        np,
        "every PE checks its counts\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
    out
}

/// The (calls, bytes) of `family` in the summary's table after `title`.
fn row(text: &str, title: &str, family: &str) -> Option<(u64, u64)> {
    let table = text.split(title).nth(1)?;
    let line = table
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .find(|l| l.split_whitespace().next() == Some(family))?;
    let cols: Vec<&str> = line.split_whitespace().collect();
    Some((cols[1].parse().ok()?, cols[2].parse().ok()?))
}

#[test]
fn pcontrol_counts_exactly_and_level_0_stops() {
    for np in [2, 3, 4] {
        let out = run(np, &[]);
        assert!(
            !out.stderr.contains("rshmem profile"),
            "no summary without SHMEM_PROFILE:\n{}",
            out.stderr
        );
    }
}

#[test]
fn shmem_profile_prints_per_pe_and_job_totals() {
    for np in [2, 3, 4] {
        let out = run(np, &[("SHMEM_PROFILE", "1")]);
        let text = &out.stderr;
        // Per PE: 10 + pe puts on the default context, 4 + pe on a private one.
        for pe in 0..np as u64 {
            let title = format!("rshmem profile: PE {pe}\n");
            let puts = 14 + 2 * pe;
            assert_eq!(row(text, &title, "put"), Some((puts, 8 * puts)), "{text}");
            assert_eq!(
                row(text, &title, "get"),
                Some((5 + pe, 8 * (5 + pe))),
                "{text}"
            );
            assert_eq!(row(text, &title, "fence"), Some((3, 0)), "{text}");
        }
        let n = np as u64;
        let puts: u64 = (0..n).map(|pe| 14 + 2 * pe).sum();
        let gets: u64 = (0..n).map(|pe| 5 + pe).sum();
        let job = format!("rshmem profile: job ({np} PEs)\n");
        assert_eq!(row(text, &job, "put"), Some((puts, 8 * puts)), "{text}");
        assert_eq!(row(text, &job, "get"), Some((gets, 8 * gets)), "{text}");
        assert_eq!(row(text, &job, "quiet"), Some((4 * n, 0)), "{text}");
        // Allocations and frees (four each per PE), the three barriers and a sync_nbe,
        // and a reduce_nbe of 24 bytes (issue 26: `_nbe` collectives count, as in C).
        assert_eq!(row(text, &job, "alloc").map(|r| r.0), Some(8 * n), "{text}");
        assert_eq!(row(text, &job, "sync").map(|r| r.0), Some(4 * n), "{text}");
        assert_eq!(row(text, &job, "coll"), Some((n, 24 * n)), "{text}");
        assert_eq!(
            text.matches("rshmem profile: job").count(),
            1,
            "PE 0 alone prints"
        );
    }
}

#[test]
fn pes_that_disagree_on_shmem_profile_finalize() {
    for np in [2, 3] {
        // PE 0 counts: it prints, and says which PEs did not.
        let out = run(np, &[("API_PROFILE_ON_PES", "even")]);
        assert!(
            out.stderr.contains("rshmem profile: job")
                && out.stderr.contains("not set on PE(s) [1]"),
            "{}",
            out.stderr
        );
        // PE 0 does not: nothing is printed, and nobody waits for a report.
        let out = run(np, &[("API_PROFILE_ON_PES", "odd")]);
        assert!(!out.stderr.contains("rshmem profile"), "{}", out.stderr);
    }
}
