//! rshmem-core symmetric heap routines under oshrun at 1-4 PEs (the PE program
//! `core_memory`), including exhaustion and the SHMEM_DEBUG collective check.
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
fn memory_heap_routines() {
    for np in NPS {
        run_ok(np, "core_memory", &["heap"], &[]);
    }
    // The same calls pass the SHMEM_DEBUG collective check.
    for np in [2, 4] {
        run_ok(np, "core_memory", &["heap"], &[("SHMEM_DEBUG", "1")]);
    }
}

#[test]
fn memory_align_above_page_size() {
    for np in NPS {
        run_ok(np, "core_memory", &["align_large"], &[]);
    }
}

#[test]
fn memory_heap_exhaustion_names_symmetric_size() {
    for np in NPS {
        run_ok(
            np,
            "core_memory",
            &["exhaust"],
            &[("SHMEM_SYMMETRIC_SIZE", "1M")],
        );
    }
}

#[test]
fn memory_collective_mismatch_fails_the_job() {
    for np in [2, 3, 4] {
        let out = Job::new(np, "core_memory")
            .args(["mismatch"])
            .env("SHMEM_DEBUG", "1")
            .timeout(Duration::from_secs(60))
            .run();
        assert_ne!(
            out.code(),
            0,
            "job should fail:\n{}\n{}",
            out.stdout,
            out.stderr
        );
        assert!(
            out.elapsed < Duration::from_secs(20),
            "took {:?}",
            out.elapsed
        );
        assert_eq!(
            out.lines_with("matched pe=").len(),
            np,
            "equal arguments pass:\n{}",
            out.stdout
        );
        for part in ["shmem_malloc", "collective arguments differ", "size=64"] {
            assert!(
                out.stderr.contains(part),
                "stderr lacks {part:?}:\n{}",
                out.stderr
            );
        }
        assert!(!out.stderr.contains("went unnoticed"), "{}", out.stderr);
    }
}
