//! The Coarray Fortran face: installs the C face and libcaf_rshmem (with `caf`, `cafrun`)
//! into a prefix in the target directory, builds the programs of
//! tests-integration/fortran with the installed `caf`, and runs them under `cafrun` at 1-4
//! images. Each image checks its own values and prints `ok <name> image=<n>`.
//!
//! libcaf_rshmem is built by `cargo test --workspace`; run alone, this test needs
//! `cargo build -p rshmem-capi -p rshmem-caf -p oshrun` first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use rshmem_tests::{install_c_face, run_bounded, running, time_scale, workspace, JobOutput};

/// The install prefix, installed once per test process.
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = install_c_face("caf-prefix");
        for f in [
            "lib/libcaf_rshmem.so",
            "lib/libcaf_rshmem.a",
            "lib/pkgconfig/caf-rshmem.pc",
            "bin/caf",
            "bin/cafrun",
            "bin/oshrun",
        ] {
            assert!(
                prefix.join(f).exists(),
                "install.sh did not install {f} (is rshmem-caf built? cargo build -p rshmem-caf)"
            );
        }
        prefix
    })
}

/// Builds tests-integration/fortran/`name`.f90 with the installed `caf` (once per test
/// process, under a name holding this process's id, so a running job's executable is
/// never replaced).
fn build(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, exe)) = built.iter().find(|(n, _)| n == name) {
        return exe.clone();
    }
    let p = prefix();
    let dir = p.join("tests");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(format!("{name}.p{}", std::process::id()));
    // Object and module files go to a directory of this process's own.
    let work = dir.join(format!("work.p{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new(p.join("bin/caf"))
        .args(["-O1", "-g", "-Wall", "-Wno-character-truncation"])
        .arg("-J")
        .arg(&work)
        .arg("-o")
        .arg(&exe)
        .arg(
            workspace()
                .join("tests-integration/fortran")
                .join(format!("{name}.f90")),
        )
        .output()
        .expect("run caf");
    assert!(
        out.status.success(),
        "caf {name}.f90 failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&work);
    built.push((name.to_string(), exe.clone()));
    exe
}

/// `cafrun -np <np> exe args`, bounded by 60 s.
fn cafrun(np: usize, exe: &Path, args: &[&str]) -> JobOutput {
    cafrun_env(np, exe, args, &[])
}

/// `cafrun -np <np> exe args` with `env` set, bounded by 60 s.
fn cafrun_env(np: usize, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    let mut cmd = Command::new(prefix().join("bin/cafrun"));
    cmd.arg("-np").arg(np.to_string()).arg(exe).args(args);
    cmd.envs(env.iter().copied());
    run_bounded(cmd, None, Duration::from_secs(60) * time_scale())
}

/// Runs `name` at 1-4 images; every image must print its ok line once.
fn all_ok(name: &str) {
    all_ok_env(name, &[]);
}

/// [`all_ok`] with environment variables set for every job.
fn all_ok_env(name: &str, env: &[(&str, &str)]) {
    let exe = build(name);
    for np in 1..=4 {
        let out = cafrun_env(np, &exe, &[], env);
        out.assert_ok();
        assert_eq!(
            ok_images(&out, name),
            (1..=np).collect::<Vec<_>>(),
            "{name} at {np} images: every image must say ok once\n--- stdout\n{}\n--- stderr\n{}",
            out.stdout,
            out.stderr
        );
    }
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_basics() {
    all_ok("basics");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_strided_sections_conversion_and_allocatable_coarrays() {
    all_ok("xfer");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_sync_all_images_memory() {
    all_ok("sync");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_atomics_events_locks_critical() {
    all_ok("atomics");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_locks_exclude_in_both_protocols() {
    // FIFO hand-off (the seed's MCS lock) and stealing (the default beyond the cores).
    all_ok_env("locks", &[("RSHMEM_CAF_LOCK", "fifo")]);
    all_ok_env("locks", &[("RSHMEM_CAF_LOCK", "steal")]);
    // A holder that stops: the waiters' LOCK with STAT= says so instead of hanging (on
    // shared memory, as the stopped-image test below: the suite's default pass only).
    if !rshmem_tests::default_pass() {
        return;
    }
    let exe = build("locks");
    for mode in ["fifo", "steal"] {
        for np in 2..=4 {
            let env = [("RSHMEM_CAF_LOCK", mode), ("SHMEM_TRANSPORT", "shm")];
            let out = cafrun_env(np, &exe, &["stop"], &env);
            out.assert_ok();
            let images = ok_images(&out, "locks");
            assert_eq!(
                images,
                (2..=np).collect::<Vec<_>>(),
                "{mode} at {np}: {out:?}"
            );
        }
    }
    let out = cafrun_env(2, &build("locks"), &[], &[("RSHMEM_CAF_LOCK", "ticket")]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("RSHMEM_CAF_LOCK=\"ticket\"")
            && out.stderr.contains("auto, fifo, steal"),
        "the error must name the variable and the choices: {out:?}"
    );
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_collectives() {
    all_ok("coll");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_stop_and_error_stop_end_the_job_with_their_code() {
    let exe = build("term");
    for np in [1, 3] {
        let out = cafrun(np, &exe, &["stop"]);
        assert_eq!(out.code(), 3, "stop 3 at {np} images: {out:?}");
        assert_eq!(out.lines_with("ok term image=").len(), np, "{out:?}");
        assert_eq!(out.stderr.matches("STOP 3").count(), np, "{out:?}");
    }
    for np in [2, 4] {
        let out = cafrun(np, &exe, &["errorstop"]);
        assert_eq!(out.code(), 7, "error stop 7 at {np} images: {out:?}");
        assert!(out.stderr.contains("ERROR STOP 7"), "{out:?}");
        assert!(!out.stdout.contains("not reached"), "{out:?}");
        assert!(running(&exe).is_empty(), "images left running: {out:?}");
    }
    let out = cafrun(3, &exe, &["errorstr"]);
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stderr.contains("ERROR STOP bad thing"), "{out:?}");
    assert!(running(&exe).is_empty(), "images left running: {out:?}");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_unsupported_features_fail_naming_the_feature() {
    let exe = build("term");
    // A pointer component associated with memory that is not symmetric.
    let out = cafrun(2, &exe, &["pointer"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("not supported yet by libcaf_rshmem")
            && out.stderr.contains("pointer component"),
        "the message must name the pointer component: {out:?}"
    );
}

/// An error of a CAF entry point names the routine once (issue 26, item 9).
#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_errors_name_their_routine_once() {
    let out = cafrun(2, &build("term"), &["unalloc"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.lines_with("not reached").is_empty(), "{out:?}");
    let r = "_gfortran_caf_send_by_ref";
    assert!(
        out.stderr.contains(&format!(
            "{r}: the allocatable or pointer component is not allocated on image 2"
        )),
        "{out:?}"
    );
    assert!(!out.stderr.contains(&format!("{r}: {r}")), "{out:?}");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_links_statically_through_pkg_config_flags() {
    // The static library with the flags caf-rshmem.pc gives (read here without
    // pkg-config: Libs with -lcaf_rshmem made static, and Libs.private).
    let p = prefix();
    let pc = std::fs::read_to_string(p.join("lib/pkgconfig/caf-rshmem.pc")).unwrap();
    let private = pc
        .lines()
        .find_map(|l| l.strip_prefix("Libs.private:"))
        .expect("Libs.private")
        .split_whitespace()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    let exe = p
        .join("tests")
        .join(format!("basics-static.p{}", std::process::id()));
    let out = Command::new("gfortran")
        .arg("-fcoarray=lib")
        .arg("-o")
        .arg(&exe)
        .arg(workspace().join("tests-integration/fortran/basics.f90"))
        .arg(p.join("lib/libcaf_rshmem.a"))
        .args(&private)
        .output()
        .expect("run gfortran");
    assert!(
        out.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cafrun(3, &exe, &[]);
    let _ = std::fs::remove_file(&exe);
    out.assert_ok();
    assert_eq!(out.lines_with("ok basics image=").len(), 3, "{out:?}");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_wrapper_shows_its_command_and_cafrun_takes_n() {
    let p = prefix();
    let out = Command::new(p.join("bin/caf"))
        .args(["--show", "x.f90", "-o", "x"])
        .output()
        .unwrap();
    let cmd = String::from_utf8_lossy(&out.stdout);
    assert!(
        cmd.contains("-fcoarray=lib") && cmd.contains("-lcaf_rshmem"),
        "{cmd}"
    );
    // `-n N` and OpenCoarrays' Open MPI flags are accepted.
    let exe = build("basics");
    let mut c = Command::new(p.join("bin/cafrun"));
    c.args(["--oversubscribe", "-n", "2"]).arg(&exe);
    let out = run_bounded(c, None, Duration::from_secs(60) * time_scale());
    out.assert_ok();
    assert_eq!(out.lines_with("ok basics image=").len(), 2, "{out:?}");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_vector_subscripts() {
    all_ok("vector");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_allocatable_and_pointer_components_through_coindexed_objects() {
    all_ok("components");
}

/// A copy of `exe` of this test's own, so that `running` sees no other test's job.
fn own_copy(exe: &Path, tag: &str) -> PathBuf {
    let name = exe.file_name().expect("file name").to_string_lossy();
    let copy = exe.with_file_name(format!("{name}.{tag}"));
    std::fs::copy(exe, &copy).expect("copy the test program");
    copy
}

/// The images (sorted) that printed `ok <name> image=<n>`.
fn ok_images(out: &JobOutput, name: &str) -> Vec<usize> {
    let mut v: Vec<usize> = out
        .lines_with(&format!("ok {name} image="))
        .iter()
        .map(|s| s.trim().parse().expect("image number"))
        .collect();
    v.sort_unstable();
    v
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_teams_form_change_sync_and_team_relative_images() {
    all_ok("teams");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_image_status_of_running_images() {
    let exe = build("status");
    for np in 1..=4 {
        let out = cafrun(np, &exe, &["running"]);
        out.assert_ok();
        assert_eq!(
            ok_images(&out, "status"),
            (1..=np).collect::<Vec<_>>(),
            "{out:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_stopped_image_seen_by_sync_all_and_sync_images_stat() {
    // The last image stops; the others get STAT_STOPPED_IMAGE from SYNC ALL and SYNC
    // IMAGES (not a hang: the 60 s bound), and see it in IMAGE_STATUS / STOPPED_IMAGES.
    // On shared memory: through UCX the stopped image's process may leave the job, and a
    // later quiet ends the job on the lost connection (docs/decisions/0039-caf-image-control.md).
    let exe = build("status");
    for np in 2..=4 {
        let out = cafrun_env(np, &exe, &["stopped"], &[("SHMEM_TRANSPORT", "shm")]);
        out.assert_ok();
        assert_eq!(
            ok_images(&out, "status"),
            (1..=np).collect::<Vec<_>>(),
            "{out:?}"
        );
        assert!(!out.stdout.contains("FAIL"), "{out:?}");
    }
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_fail_image_in_a_fault_tolerant_job() {
    // Image 2 fails; the others see STAT_FAILED_IMAGE, IMAGE_STATUS, FAILED_IMAGES and
    // NUM_IMAGES(FAILED=), and finish; oshrun reports the failed PE (SIGKILL: 137).
    let exe = own_copy(&build("status"), "ft");
    for np in 2..=4 {
        // Fault-tolerant mode is built on shared memory only (refused through UCX).
        let out = cafrun_env(
            np,
            &exe,
            &["failed"],
            &[("SHMEM_FAULT_TOLERANT", "1"), ("SHMEM_TRANSPORT", "shm")],
        );
        assert_eq!(out.code(), 137, "fail image at {np} images: {out:?}");
        let want: Vec<usize> = (1..=np).filter(|&i| i != 2).collect();
        assert_eq!(ok_images(&out, "status"), want, "{out:?}");
        assert!(!out.stdout.contains("FAIL"), "{out:?}");
        assert!(out.stderr.contains("1 PE(s) failed"), "{out:?}");
        assert!(running(&exe).is_empty(), "images left running: {out:?}");
    }
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_fail_image_without_fault_tolerance_ends_the_job_saying_why() {
    let exe = own_copy(&build("status"), "noft");
    let out = cafrun(3, &exe, &["failnoft"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("FAIL IMAGE") && out.stderr.contains("SHMEM_FAULT_TOLERANT=1"),
        "{out:?}"
    );
    assert!(!out.stdout.contains("not reached"), "{out:?}");
    assert!(running(&exe).is_empty(), "images left running: {out:?}");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_sync_all_goes_on_without_a_stopped_image() {
    // One image stops; the others' SYNC ALLs (several, with STAT=) each report
    // STAT_STOPPED_IMAGE (the effect of SYNC MEMORY: the running images synchronize with
    // SYNC IMAGES after them); the job ends normally (a stopped image is a normal stop).
    // In the initial team (first or last image), in teams, and paired with SYNC IMAGES
    // in an order that deadlocks if SYNC ALL waits for the running images.
    let exe = build("stopsync");
    for np in [3, 4] {
        for args in [
            &["world", "last"][..],
            &["world", "first"],
            &["team"],
            &["pairs"],
        ] {
            let out = cafrun(np, &exe, args);
            out.assert_ok();
            assert_eq!(
                ok_images(&out, "stopsync"),
                (1..=np).collect::<Vec<_>>(),
                "{args:?} at {np} images: {out:?}"
            );
            assert!(!out.stdout.contains("FAIL"), "{out:?}");
        }
    }
    // Without STAT=, the error ends the job naming the stopped image (no hang).
    let exe = own_copy(&exe, "nostat");
    let out = cafrun(3, &exe, &["nostat"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("_gfortran_caf_sync_all") && out.stderr.contains("image 3"),
        "{out:?}"
    );
    assert!(!out.stdout.contains("not reached"), "{out:?}");
    assert!(running(&exe).is_empty(), "images left running: {out:?}");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_form_team_in_a_loop_returns_team_memory() {
    // 500 FORM/CHANGE/END TEAM (with a nested team each time) in 8 MiB of symmetric
    // memory with a 256 KiB team heap: without the release of the team a FORM TEAM
    // replaces, the heap (or the core's team slots) would run out within the first
    // few dozen iterations.
    let exe = build("teamloop");
    for np in [2, 3] {
        let out = cafrun_env(
            np,
            &exe,
            &["500"],
            &[
                ("RSHMEM_CAF_TEAM_HEAP", "256K"),
                ("SHMEM_SYMMETRIC_SIZE", "8M"),
            ],
        );
        out.assert_ok();
        assert_eq!(
            ok_images(&out, "teamloop"),
            (1..=np).collect::<Vec<_>>(),
            "{out:?}"
        );
    }
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_collectives_on_integer_16() {
    all_ok("kind16");
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_static_initial_values_and_random_init_across_images() {
    all_ok("startup");
}

/// The (calls, bytes) of the `coll` row of the job's profile summary.
fn job_coll_row(out: &JobOutput, np: usize) -> (u64, u64) {
    let title = format!("rshmem profile: job ({np} PEs)\n");
    let table = out.stderr.split(&title).nth(1).expect("the job's summary");
    let line = table
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .find(|l| l.split_whitespace().next() == Some("coll"))
        .expect("a coll row");
    let cols: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(2)
        .map(|c| c.parse().expect("a count"))
        .collect();
    (cols[0], cols[1])
}

#[test]
#[cfg_attr(
    not(have_gfortran),
    ignore = "gfortran is not installed (scripts/install-deps.sh installs it)"
)]
fn caf_collectives_are_counted_in_the_profile() {
    let exe = build("profile");
    for np in [1, 3] {
        let run = |k: &str| {
            let out = cafrun_env(np, &exe, &[k], &[("SHMEM_PROFILE", "1")]);
            out.assert_ok();
            assert_eq!(ok_images(&out, "profile"), (1..=np).collect::<Vec<_>>());
            job_coll_row(&out, np)
        };
        // What the runtime itself runs at start-up counts alike in both runs.
        let (none, five) = (run("0"), run("5"));
        let n = np as u64;
        assert_eq!(five.0 - none.0, 5 * n, "five co_sum calls per image");
        assert_eq!(five.1 - none.1, 5 * 12 * n, "of 12 bytes each");
        assert!(none.0 >= n && none.1 >= 8 * n, "the co_broadcast: {none:?}");
    }
}
