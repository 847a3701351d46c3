//! Bounds of `SHMEM_TEAMS_MAX` and `SHMEM_COPY_ENGINE_LANES`, and an
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

/// Issue 26, item 5: sizes near 2^64 fail init naming the variable, never wrap into a
/// 16 EiB or a 0-byte heap.
#[test]
fn symmetric_size_near_2_64_fails_init() {
    for v in ["18446744072635809792", "18446744073709551615", "65537T"] {
        init_fails(
            2,
            &[("SHMEM_SYMMETRIC_SIZE", v)],
            &[&format!("SHMEM_SYMMETRIC_SIZE=\"{v}\" is invalid"), "64P"],
        );
    }
}

/// Issue 26, item 9: values that used to be taken silently fail init naming the
/// variable; unknown names of the project's own are warned about like `SHMEM_*` ones.
#[test]
fn bad_values_of_every_variable_fail_init() {
    for (var, v, why) in [
        (
            "RSHMEM_BOOT_WARN_SECS",
            "abc",
            "expected a number of seconds",
        ),
        ("SHMEM_PROFILE", "5", "must be at most 2"),
        ("RSHMEM_CAF_LOCK", "ticket", "auto, fifo, steal"),
        ("RSHMEM_CAF_TEAM_HEAP", "lots", "is not a size"),
    ] {
        init_fails(2, &[(var, v)], &[&format!("{var}=\"{v}\" is invalid"), why]);
    }
    // The T suffix every size takes, and a warning for a misspelt name.
    let out = Job::new(2, "core_smoke")
        .env("RSHMEM_CAF_COMPONENT_HEAP", "1T")
        .env("RSHMEM_CAF_COMPONENT_HEAPS", "1G")
        .timeout(Duration::from_secs(30))
        .run();
    out.assert_ok();
    assert_eq!(out.lines_with("ok core_smoke").len(), 2, "{out:?}");
    assert!(
        out.stderr.contains("unknown environment variable RSHMEM_CAF_COMPONENT_HEAPS ignored (did you mean RSHMEM_CAF_COMPONENT_HEAP?)"),
        "{out:?}"
    );
}
