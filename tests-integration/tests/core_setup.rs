//! rshmem-core setup and query routines under oshrun at 1-4 PEs, plus configuration
//! errors and warnings (the PE program `core_setup`).
use std::time::Duration;

use rshmem_tests::{run_ok, Job};

const NPS: [usize; 4] = [1, 2, 3, 4];

#[test]
fn setup_queries_at_every_thread_level() {
    for np in NPS {
        for level in ["single", "funneled", "serialized", "multiple"] {
            let out = run_ok(np, "core_setup", &["setup", level], &[]);
            assert_eq!(
                out.lines_with(&format!("n_pes={np}")).len(),
                np,
                "{}",
                out.stdout
            );
        }
    }
}

#[test]
fn setup_nested_init_finalize() {
    for np in NPS {
        run_ok(np, "core_setup", &["nested"], &[]);
    }
}

#[test]
fn setup_version_banner() {
    let out = run_ok(
        2,
        "core_setup",
        &["setup", "single"],
        &[("SHMEM_VERSION", "1")],
    );
    assert_eq!(
        out.stderr.matches("OpenSHMEM 1.5").count(),
        1,
        "PE 0 prints the banner once:\n{}",
        out.stderr
    );
    assert!(out.stderr.contains("rshmem"), "{}", out.stderr);
}

#[test]
fn setup_invalid_symmetric_size_is_an_init_error() {
    for np in NPS {
        // The error comes back from init ...
        let out = Job::new(np, "core_setup")
            .args(["init_err"])
            .env("SHMEM_SYMMETRIC_SIZE", "lots")
            .timeout(Duration::from_secs(60))
            .run();
        out.assert_ok();
        assert_eq!(
            out.lines_with("ok init_err rank=").len(),
            np,
            "{}",
            out.stdout
        );
        // ... and a program that treats it as fatal fails the job with a clear message.
        let out = Job::new(np, "core_setup")
            .args(["setup", "single"])
            .env("SHMEM_SYMMETRIC_SIZE", "lots")
            .timeout(Duration::from_secs(60))
            .run();
        assert_ne!(out.code(), 0, "job should fail:\n{}", out.stderr);
        assert!(
            out.elapsed < Duration::from_secs(20),
            "took {:?}",
            out.elapsed
        );
        for part in [
            "shmem_init",
            "SHMEM_SYMMETRIC_SIZE",
            "\"lots\"",
            "not a size",
        ] {
            assert!(
                out.stderr.contains(part),
                "stderr lacks {part:?}:\n{}",
                out.stderr
            );
        }
        assert!(out.lines_with("ok setup").is_empty(), "{}", out.stdout);
    }
}

#[test]
fn setup_unknown_variable_gets_a_suggestion() {
    for np in NPS {
        let out = run_ok(
            np,
            "core_setup",
            &["setup", "single"],
            &[("SHMEM_SYMETRIC_SIZE", "1M")],
        );
        let warning = "unknown environment variable SHMEM_SYMETRIC_SIZE ignored (did you mean SHMEM_SYMMETRIC_SIZE?)";
        assert_eq!(
            out.stderr.matches(warning).count(),
            1,
            "one warning (from PE 0):\n{}",
            out.stderr
        );
    }
}

/// Issue 29: `SHMEM_INFO` lists every variable the library and oshrun read, those read
/// before the table (the bootstrap's, oshrun's) and the one oshrun sets for its PEs
/// included, each with the value in force.
#[test]
fn setup_info_lists_every_variable_read() {
    let out = run_ok(
        1,
        "core_setup",
        &["setup", "single"],
        &[("SHMEM_INFO", "1"), ("SMA_PMIX_LIBRARY", "libpmix.so.2")],
    );
    for var in [
        "SHMEM_BOOTSTRAP",
        "SHMEM_PMIX_LIBRARY",
        "RSHMEM_BOOT_WARN_SECS",
        "SHMEM_BIND_TO",
        "SHMEM_FAULT_TOLERANT",
        "SHMEM_INFO",
    ] {
        assert!(
            out.stderr.lines().any(|l| l.trim_start().starts_with(var)),
            "{var} is not listed:\n{}",
            out.stderr
        );
    }
    // oshrun tells its PEs the job's CPUs; the listing shows the value it set.
    let cpus = out
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("OSHRUN_JOB_CPUS"))
        .unwrap_or_else(|| panic!("OSHRUN_JOB_CPUS is not listed:\n{}", out.stderr));
    assert!(cpus.contains("(set)"), "{cpus}");
    // The deprecated spelling the bootstrap now reads through the table is shown set.
    let pmix = out
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("SHMEM_PMIX_LIBRARY"))
        .unwrap();
    assert!(pmix.contains("(set)"), "{pmix}");
}
