//! Issue 10, item 15: bounds of `SHMEM_TEAMS_MAX` and `SHMEM_COPY_ENGINE_LANES`, and an
//! out-of-address-space init error that names `SHMEM_TEAMS_MAX`.

use std::time::Duration;

use rshmem_tests::Job;

#[track_caller]
fn init_fails(np: usize, env: &[(&str, &str)], want: &[&str]) {
    let mut job = Job::new(np, "core_smoke").timeout(Duration::from_secs(30));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    assert!(out.status.is_some(), "hung: {out:?}");
    assert_ne!(out.code(), 0, "{env:?}: {out:?}");
    assert!(out.lines_with("ok core_smoke").is_empty(), "{out:?}");
    for w in want {
        assert!(out.stderr.contains(w), "{env:?}: want {w:?} in {out:?}");
    }
}

#[test]
fn teams_max_below_the_predefined_teams_fails_init() {
    for v in ["0", "5"] {
        init_fails(
            2,
            &[("SHMEM_TEAMS_MAX", v)],
            &["SHMEM_TEAMS_MAX", "must be at least 6"],
        );
    }
    // The smallest valid value works.
    let out = Job::new(2, "core_smoke")
        .env("SHMEM_TEAMS_MAX", "6")
        .timeout(Duration::from_secs(30))
        .run();
    out.assert_ok();
}

#[test]
fn copy_engine_lanes_are_bounded() {
    init_fails(
        2,
        &[("SHMEM_COPY_ENGINE_LANES", "100000")],
        &["SHMEM_COPY_ENGINE_LANES", "must be at most 256"],
    );
}

#[test]
fn address_space_error_names_teams_max() {
    // 2 x 100T is more address space than any x86-64/aarch64 process has.
    init_fails(
        2,
        &[("SHMEM_SYMMETRIC_SIZE", "100T")],
        &["SHMEM_SYMMETRIC_SIZE=100T", "SHMEM_TEAMS_MAX=1024"],
    );
}
