//! rshmem-core symmetric heap routines under oshrun at 1-4 PEs (the PE program
//! `core_memory`), including exhaustion and the SHMEM_DEBUG collective check.
use std::time::Duration;

use rshmem_tests::{run_ok, Job};

const NPS: [usize; 4] = [1, 2, 3, 4];

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
