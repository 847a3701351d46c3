//! rshmem-core bad input and failure modes under oshrun at 1-4 PEs (the PE program
//! `core_errors`): errors name the routine and argument; fatal errors, panics and
//! global_exit end the whole job quickly and cleanly.
use std::time::Duration;

use rshmem_tests::{run_ok, Job, JobOutput};

const NPS: [usize; 4] = [1, 2, 3, 4];

#[test]
fn errors_bad_input_is_reported_not_fatal() {
    for np in NPS {
        run_ok(np, "core_errors", &["inputs"], &[]);
    }
}

#[test]
fn errors_signal_routines_name_sig_addr() {
    for np in NPS {
        run_ok(np, "core_errors", &["sig_args"], &[]);
    }
}

/// Runs a failure mode; checks every PE started, the job ended within seconds with a
/// non-zero status, every PE process is gone and no `/dev/shm` object of the job is left.
fn run_failing(np: usize, mode: &str) -> JobOutput {
    let out = Job::new(np, "core_errors")
        .args([mode])
        .timeout(Duration::from_secs(30))
        .run();
    assert_ne!(
        out.code(),
        0,
        "{mode} on {np} PEs should fail:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.elapsed < Duration::from_secs(10),
        "{mode} on {np} PEs took {:?}",
        out.elapsed
    );
    let alive = out.lines_with("alive pe=");
    assert_eq!(
        alive.len(),
        np,
        "every PE starts:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    for line in &alive {
        let pid = line.split("pid=").nth(1).expect("pid");
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "{mode}: PE process {pid} outlived the job"
        );
    }
    let jobid = out.lines_with("jobid=").first().cloned().expect("job id");
    assert!(!jobid.is_empty(), "OSHRUN_JOBID is set");
    let left: Vec<String> = rshmem_tests::shm_objects()
        .into_iter()
        .filter(|o| o.contains(&jobid))
        .collect();
    assert!(
        left.is_empty(),
        "{mode}: leftover /dev/shm objects {left:?}"
    );
    assert!(!out.stderr.contains("passed a barrier"), "{}", out.stderr);
    out
}

#[test]
fn errors_fatal_ends_the_job() {
    for np in NPS {
        let out = run_failing(np, "fatal");
        assert_eq!(out.code(), 1, "{}", out.stderr);
        let want = format!(
            "shmem_putmem: argument pe: PE {np} is out of range (valid PEs are 0 to {})",
            np - 1
        );
        assert!(
            out.stderr.contains(&want),
            "stderr lacks {want:?}:\n{}",
            out.stderr
        );
    }
}

#[test]
fn errors_panicking_pe_ends_the_job() {
    for np in NPS {
        let out = run_failing(np, "panic");
        assert!(out.stderr.contains("panics on purpose"), "{}", out.stderr);
    }
}

#[test]
fn errors_global_exit_status_is_the_job_status() {
    for np in NPS {
        let out = run_failing(np, "exit3");
        assert_eq!(out.code(), 3, "{}", out.stderr);
    }
}
