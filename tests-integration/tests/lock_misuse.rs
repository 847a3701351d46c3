//! Lock misuse: setting a lock this PE holds or waits for, testing
//! it while holding it, and clearing one it does not hold end the job with an error
//! naming the routine and the `lock` argument, instead of hanging.
//!
//! The C programs are compiled with the installed `oshcc` as in capi.rs (installed into
//! a prefix of this test's own); run alone, this test needs `cargo build -p rshmem-capi`.

use std::sync::OnceLock;
use std::time::Duration;

use rshmem_tests::{compile_c_program, Job};

/// Installs the C face into a prefix once, compiles lock_misuse.c; returns the program.
fn lock_misuse() -> &'static str {
    static EXE: OnceLock<String> = OnceLock::new();
    EXE.get_or_init(|| compile_c_program("sound-prefix", "lock_misuse.c", &["-pthread"]))
}

/// Runs `mode` at `np` PEs; asserts the right use passed, the job failed with `msg`
/// from `pe`, and no PE went past the misuse.
fn misuse(mode: &str, np: usize, pe: usize, msg: &str) {
    let out = Job::new(np, lock_misuse())
        .args([mode])
        .timeout(Duration::from_secs(60))
        .run();
    // The right use passed on the misusing PE (the others' output may be cut short).
    let ready = out.lines_with("ready pe=");
    assert!(ready.contains(&pe.to_string()), "{mode}: {out:?}");
    assert_ne!(out.code(), 0, "{mode}: the job must fail: {out:?}");
    let want = format!("PE {pe}: {msg}");
    assert!(out.stderr.contains(&want), "{mode}: no `{want}`: {out:?}");
    assert!(out.lines_with("not caught").is_empty(), "{mode}: {out:?}");
}

#[test]
fn lock_used_right_passes() {
    for np in [2, 3] {
        let out = Job::new(np, lock_misuse())
            .args(["ok"])
            .timeout(Duration::from_secs(60))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok lock_misuse pe=").len(), np, "{out:?}");
    }
}

#[test]
fn clear_lock_not_held_is_an_error() {
    misuse(
        "clear_unheld",
        2,
        0,
        "shmem_clear_lock: argument lock: this PE does not hold this lock",
    );
}

#[test]
fn clear_lock_held_by_another_pe_is_an_error() {
    misuse(
        "clear_other",
        3,
        1,
        "shmem_clear_lock: argument lock: this PE does not hold this lock",
    );
}

#[test]
fn set_lock_twice_is_an_error() {
    misuse(
        "set_twice",
        2,
        0,
        "shmem_set_lock: argument lock: this PE already holds this lock",
    );
}

#[test]
fn test_lock_by_the_holder_is_an_error() {
    misuse(
        "test_held",
        2,
        0,
        "shmem_test_lock: argument lock: this PE already holds this lock",
    );
}

#[test]
fn set_lock_while_waiting_is_an_error() {
    misuse(
        "set_while_waiting",
        2,
        1,
        "shmem_set_lock: argument lock: this PE is already waiting for this lock",
    );
}

#[test]
fn safe_api_refuses_misuse() {
    let out = Job::new(2, "lock_misuse")
        .timeout(Duration::from_secs(60))
        .run();
    out.assert_ok();
    assert_eq!(out.lines_with("ok lock_misuse pe=").len(), 2, "{out:?}");
}
