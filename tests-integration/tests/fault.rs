//! Fault tolerance (issue 13 §3) from Rust: `api_ft` at 3 and 4 PEs, with and without
//! `SHMEM_FAULT_TOLERANT=1` (the C twin is `capi.rs`'s `c_fault_tolerance`).

use std::sync::Mutex;
use std::time::Duration;

use rshmem_tests::{assert_left_nothing, bin, shm_objects, Job};

/// One job of `api_ft` at a time: the leftover check looks for any process running it.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn killed_pe_survivors_go_on() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for np in [3, 4] {
        let before = shm_objects();
        // Shared memory only, whatever transport the suite runs over (refused over UCX).
        let out = Job::new(np, "api_ft")
            .env("SHMEM_FAULT_TOLERANT", "1")
            .env("SHMEM_TRANSPORT", "shm")
            .timeout(Duration::from_secs(30))
            .run();
        let ctx = format!("FT at {np} PEs: {out:?}");
        assert_eq!(out.code(), 137, "{ctx}");
        let mut oks = out.lines_with("ok ft pe=");
        oks.sort();
        let want: Vec<String> = (0..np).filter(|&p| p != 1).map(|p| p.to_string()).collect();
        assert_eq!(oks, want, "{ctx}");
        assert!(
            out.stderr.contains("PE 1 (pid") && out.stderr.contains("the other PEs go on"),
            "{ctx}"
        );
        assert!(out.stderr.contains("1 PE(s) failed: 1"), "{ctx}");
        assert_left_nothing(&bin("api_ft"), &before, &ctx);
    }
}

#[test]
fn killed_pe_ends_the_job_without_ft() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for np in [3, 4] {
        let before = shm_objects();
        let out = Job::new(np, "api_ft")
            .timeout(Duration::from_secs(30))
            .run();
        let ctx = format!("without FT at {np} PEs: {out:?}");
        assert_eq!(out.code(), 137, "{ctx}");
        assert!(out.lines_with("ok ft pe=").is_empty(), "{ctx}");
        assert!(out.stderr.contains("PE 1 (pid"), "{ctx}");
        assert!(out.elapsed < Duration::from_secs(10), "{ctx}");
        assert_left_nothing(&bin("api_ft"), &before, &ctx);
    }
}

#[test]
fn fault_tolerant_mode_refuses_ucx() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Job::new(2, "api_ft")
        .env("SHMEM_FAULT_TOLERANT", "1")
        .env("SHMEM_TRANSPORT", "ucx")
        .timeout(Duration::from_secs(30))
        .run();
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("SHMEM_FAULT_TOLERANT=1") && out.stderr.contains("UCX"),
        "{out:?}"
    );
}
