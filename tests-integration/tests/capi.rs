//! The C face: installs librshmem, headers, oshcc/oshc++ and oshrun into a prefix in the
//! target directory (crates/rshmem-capi/scripts/install.sh), compiles the C and C++
//! programs of tests-integration/c with the installed wrappers, and runs them at 1-4 PEs.
//!
//! librshmem is built by `cargo test --workspace` (the rshmem-capi package's own tests
//! need its library); run alone, this test needs `cargo build -p rshmem-capi` first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rshmem_tests::{install_c_face, time_scale, workspace, Job, JobOutput};

/// The install prefix, installed once per test process.
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = install_c_face("capi-prefix");
        for f in [
            "lib/librshmem.so",
            "lib/librshmem.a",
            "lib/pkgconfig/rshmem.pc",
            "include/shmem.h",
            "include/shmemx.h",
            "include/mpp/shmem.h",
            "include/mpp/shmemx.h",
            "bin/oshcc",
            "bin/oshc++",
            "bin/oshrun",
        ] {
            assert!(prefix.join(f).exists(), "install.sh did not install {f}");
        }
        prefix
    })
}

/// Compiles tests-integration/c/`src` with the installed wrapper and extra `flags`.
/// Compiles `src` with `flags` once per test process and returns the executable.
///
/// Never replaced while in use: a job whose PEs start while the file is swapped for a
/// rebuild runs two different executables (one of them "(deleted)"), which is a test
/// bug, not the library's. So each (program, flags) is built once, under a name holding
/// this process's id; files left by earlier test processes are removed first.
fn build(src: &str, flags: &[&str]) -> String {
    static BUILT: Mutex<BTreeMap<String, Arc<OnceLock<String>>>> = Mutex::new(BTreeMap::new());
    let p = prefix();
    let dir = p.join("tests");
    let stem = src.split('.').next().unwrap();
    let name = format!(
        "{stem}{}.p{}",
        flags.join("").replace(['-', '=', '/'], "_"),
        std::process::id()
    );
    let cell = {
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        if built.is_empty() {
            remove_stale_builds(&dir);
        }
        built.entry(name.clone()).or_default().clone()
    };
    cell.get_or_init(|| compile(src, flags, &dir.join(&name)))
        .clone()
}

/// Removes executables built by test processes that have ended.
fn remove_stale_builds(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let pid = name
            .rsplit_once(".p")
            .and_then(|(_, pid)| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn compile(src: &str, flags: &[&str], exe: &Path) -> String {
    let p = prefix();
    let cxx = src.ends_with(".cpp");
    let (wrapper, std) = if cxx {
        ("oshc++", "-std=c++17")
    } else {
        ("oshcc", "-std=c11")
    };
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    let mut cmd = Command::new(p.join("bin").join(wrapper));
    cmd.args([std, "-Wall", "-Wextra", "-Werror", "-O1", "-g"]);
    if !cxx {
        cmd.arg("-pedantic");
    }
    let out = cmd
        .args(flags)
        .arg("-o")
        .arg(exe)
        .arg(workspace().join("tests-integration/c").join(src))
        .output()
        .expect("run the compiler wrapper");
    assert!(
        out.status.success(),
        "{wrapper} {src} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe.to_str().unwrap().to_string()
}

fn run(np: usize, exe: &str) -> JobOutput {
    Job::new(np, exe).timeout(Duration::from_secs(60)).run()
}

fn all_ok(src: &str, name: &str, nps: &[usize]) {
    all_ok_with(src, name, nps, &[], &[]);
}

/// [`all_ok`] with compiler `flags` and environment `env` for every run.
fn all_ok_with(src: &str, name: &str, nps: &[usize], flags: &[&str], env: &[(&str, &str)]) {
    let exe = build(src, flags);
    for &np in nps {
        let mut job = Job::new(np, &exe).timeout(Duration::from_secs(60));
        for (k, v) in env {
            job = job.env(k, v);
        }
        let out = job.run();
        out.assert_ok();
        assert_eq!(
            out.lines_with(&format!("ok {name} pe=")).len(),
            np,
            "{name} at {np} PEs with {env:?}: {out:?}"
        );
    }
}

#[test]
fn c_rma() {
    all_ok("rma.c", "rma", &[1, 2, 3, 4]);
}

#[test]
fn c_amo() {
    all_ok("amo.c", "amo", &[1, 2, 3, 4]);
}

#[test]
fn c_p2p_signals_locks() {
    all_ok("p2p.c", "p2p", &[1, 2, 3, 4]);
}

#[test]
fn c_teams() {
    all_ok("team.c", "team", &[1, 2, 3, 4]);
}

#[test]
fn c_team_collectives() {
    all_ok("coll.c", "coll", &[1, 2, 3, 4]);
}

#[test]
fn c_long_double_reductions() {
    all_ok("longdouble.c", "longdouble", &[1, 2, 3, 4]);
}

#[test]
fn c_active_set_collectives() {
    all_ok("active.c", "active", &[1, 2, 3, 4]);
}

#[test]
fn c_explicit_active_sets() {
    all_ok("aset.c", "aset", &[1, 2, 3, 4]);
    // Through the network (the suite's ucx and ofi passes) the algorithms run at 4 PEs
    // only: the algorithms are the same, each step a network message.
    let sizes: &[usize] = if time_scale() > 1 { &[4] } else { &[3, 4] };
    for (var, alg) in [
        ("SHMEM_REDUCE_ALGORITHM", "ring"),
        ("SHMEM_REDUCE_ALGORITHM", "rabenseifner"),
        ("SHMEM_BCAST_ALGORITHM", "tree"),
        ("SHMEM_BARRIER_ALGORITHM", "linear"),
    ] {
        all_ok_with("aset.c", "aset", sizes, &[], &[(var, alg)]);
    }
}

#[test]
fn c_nonblocking_collectives() {
    all_ok("nbcoll.c", "nbcoll", &[1, 2, 3, 4]);
    for (var, alg) in [
        ("SHMEM_REDUCE_ALGORITHM", "ring"),
        ("SHMEM_BCAST_ALGORITHM", "tree"),
        ("SHMEM_DEBUG", "1"),
    ] {
        all_ok_with("nbcoll.c", "nbcoll", &[3], &[], &[(var, alg)]);
    }
}

#[test]
fn c_active_set_collectives_run_every_algorithm() {
    // The deprecated routines are the core's collectives on an active set, so each
    // algorithm choice applies to them as to teams (pair-counted scratch, team::group).
    // Through the network at 4 PEs only, as in `c_explicit_active_sets`.
    let sizes: &[usize] = if time_scale() > 1 { &[4] } else { &[3, 4] };
    for (var, alg) in [
        ("SHMEM_REDUCE_ALGORITHM", "linear"),
        ("SHMEM_REDUCE_ALGORITHM", "recursive_doubling"),
        ("SHMEM_REDUCE_ALGORITHM", "ring"),
        ("SHMEM_REDUCE_ALGORITHM", "rabenseifner"),
        ("SHMEM_BCAST_ALGORITHM", "tree"),
        ("SHMEM_BCAST_ALGORITHM", "linear"),
        ("SHMEM_BARRIER_ALGORITHM", "linear"),
        ("SHMEM_COLLECT_ALGORITHM", "linear"),
        ("SHMEM_FCOLLECT_ALGORITHM", "linear"),
        ("SHMEM_ALLTOALL_ALGORITHM", "linear"),
    ] {
        all_ok_with("active.c", "active", sizes, &[], &[(var, alg)]);
    }
    all_ok_with("active.c", "active", &[3], &[], &[("SHMEM_DEBUG", "1")]);
}

#[test]
fn c_deprecated_api_and_pshmem_names() {
    all_ok("deprecated.c", "deprecated", &[1, 2, 4]);
}

#[test]
fn c_contexts() {
    all_ok("ctx.c", "ctx", &[1, 2, 3, 4]);
}

#[test]
fn c_contexts_copy_engine() {
    // Every nbi transfer of 4 KiB or more goes to the copy engine; then none does.
    let engine = [("SHMEM_COPY_ENGINE_THRESHOLD", "4K")];
    all_ok_with("ctx.c", "ctx", &[2, 3], &[], &engine);
    let inline = [("SHMEM_COPY_ENGINE_LANES", "0")];
    all_ok_with("ctx.c", "ctx", &[2], &[], &inline);
    all_ok_with("ctx.c", "ctx", &[3], &[], &[("SHMEM_DEBUG", "1")]);
}

#[test]
fn c_explicit_nonblocking_requests() {
    all_ok("nbe.c", "nbe", &[1, 2, 3, 4]);
    let engine = [("SHMEM_COPY_ENGINE_THRESHOLD", "4K")];
    all_ok_with("nbe.c", "nbe", &[2, 3], &[], &engine);
    let lanes = [
        ("SHMEM_COPY_ENGINE_THRESHOLD", "4K"),
        ("SHMEM_COPY_ENGINE_LANES", "3"),
    ];
    all_ok_with("nbe.c", "nbe", &[2], &[], &lanes);
    all_ok_with(
        "nbe.c",
        "nbe",
        &[3],
        &[],
        &[("SHMEM_COPY_ENGINE_LANES", "0")],
    );
}

#[test]
fn c_threads_on_private_contexts() {
    let flags = ["-pthread"];
    all_ok_with("ctx_threads.c", "ctx_threads", &[2, 3, 4], &flags, &[]);
    // The copy engine moves node-local data: not in the passes where every PE is reached
    // through the network.
    if time_scale() == 1 {
        let engine = [("SHMEM_COPY_ENGINE_THRESHOLD", "4K")];
        all_ok_with("ctx_threads.c", "ctx_threads", &[2, 3], &flags, &engine);
    }
    let debug = [("SHMEM_DEBUG", "1")];
    all_ok_with("ctx_threads.c", "ctx_threads", &[2], &flags, &debug);
}

#[test]
fn cxx_program() {
    all_ok("cxx.cpp", "cxx", &[1, 2, 4]);
}

#[test]
fn c_globals_and_statics_are_symmetric() {
    all_ok("statics.c", "statics", &[1, 2, 3, 4]);
}

/// Compiles tests-integration/c/`src` with the plain compiler against lib/librshmem.a.
fn build_static(src: &str) -> std::path::PathBuf {
    let p = prefix();
    let dir = p.join("tests");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = src.split('.').next().unwrap();
    let exe = dir.join(format!("{stem}_static{}", std::process::id()));
    let out = Command::new("cc")
        .args(["-std=c11", "-O1", "-I"])
        .arg(p.join("include"))
        .arg("-o")
        .arg(&exe)
        .arg(workspace().join("tests-integration/c").join(src))
        .arg(p.join("lib/librshmem.a"))
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

#[test]
fn c_static_library() {
    // Links lib/librshmem.a with the plain compiler (oshcc links the shared library).
    let exe = build_static("amo.c");
    let ldd = Command::new("ldd").arg(&exe).output().expect("ldd");
    assert!(
        !String::from_utf8_lossy(&ldd.stdout).contains("librshmem"),
        "not statically linked"
    );
    let out = run(2, exe.to_str().unwrap());
    let _ = std::fs::remove_file(&exe);
    out.assert_ok();
    assert_eq!(out.lines_with("ok amo pe=").len(), 2, "{out:?}");
}

#[test]
fn c_profiling_wrappers_shared_and_static() {
    // A tool's shmem_X wraps the library's pshmem_X, whichever library it links.
    all_ok("profiling.c", "profiling", &[2, 3]);
    let exe = build_static("profiling.c");
    let out = run(2, exe.to_str().unwrap());
    let _ = std::fs::remove_file(&exe);
    out.assert_ok();
    assert_eq!(out.lines_with("ok profiling pe=").len(), 2, "{out:?}");
}

#[test]
#[cfg_attr(
    not(have_pkg_config),
    ignore = "pkg-config is not installed (scripts/install-deps.sh installs it)"
)]
fn pkg_config_file() {
    let p = prefix();
    let out = Command::new("pkg-config")
        .args(["--cflags", "--libs", "rshmem"])
        .env("PKG_CONFIG_PATH", p.join("lib/pkgconfig"))
        .output()
        .expect("run pkg-config");
    assert!(out.status.success(), "{out:?}");
    let flags = String::from_utf8_lossy(&out.stdout);
    let inc = format!("-I{}", p.join("include").display());
    let lib = format!("-L{}", p.join("lib").display());
    assert!(
        flags.contains(&inc) && flags.contains(&lib) && flags.contains("-lrshmem"),
        "{flags}"
    );
}

/// Runs `exe mode` on `np` PEs with `env`.
fn run_mode(np: usize, exe: &str, mode: &str, env: &[(&str, &str)]) -> JobOutput {
    let mut job = Job::new(np, exe)
        .args([mode])
        .timeout(Duration::from_secs(60));
    for (k, v) in env {
        job = job.env(k, v);
    }
    job.run()
}

/// Runs `mode`, which must end the job (not by a signal) with `msg` on stderr.
fn fails_naming(np: usize, exe: &str, mode: &str, env: &[(&str, &str)], msg: &str) {
    let out = run_mode(np, exe, mode, env);
    assert_ne!(out.code(), 0, "{mode}: {out:?}");
    assert!(out.code() < 128, "{mode}: a PE died of a signal: {out:?}");
    assert!(out.stderr.contains(msg), "{mode}: want {msg:?} in {out:?}");
}

const NO_FINALIZE_WARNING: &str = "warning: exiting without shmem_finalize";

#[test]
fn start_pes_programs_finalize_at_exit_silently() {
    let exe = build("lifecycle.c", &[]);
    for np in [1, 3] {
        let out = run_mode(np, &exe, "start_pes", &[]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok start_pes pe=").len(), np, "{out:?}");
        assert!(!out.stderr.contains("shmem_finalize"), "{out:?}");
    }
}

#[test]
fn init_without_finalize_is_finalized_at_exit_with_a_warning() {
    // PE 0 returns from main while the others still work: its exit waits for them.
    let exe = build("lifecycle.c", &[]);
    for np in [1, 2, 3] {
        let out = run_mode(np, &exe, "no_finalize", &[]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok no_finalize pe=").len(), np, "{out:?}");
        let warnings: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains(NO_FINALIZE_WARNING))
            .collect();
        assert_eq!(warnings.len(), 1, "{out:?}");
        assert!(warnings[0].starts_with("rshmem: PE 0: "), "{out:?}");
    }
}

#[test]
fn repeated_init_and_nested_finalize() {
    let exe = build("lifecycle.c", &[]);
    for np in [1, 3] {
        // Two inits, one finalize: the at-exit finalize ends it, silently.
        let out = run_mode(np, &exe, "init_twice", &[]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok init_twice pe=").len(), np, "{out:?}");
        assert!(!out.stderr.contains(NO_FINALIZE_WARNING), "{out:?}");
        // Matched pairs: the inner finalize keeps the library up.
        let out = run_mode(np, &exe, "nested", &[]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok nested pe=").len(), np, "{out:?}");
    }
}

#[test]
fn init_after_the_last_finalize_fails_clearly() {
    let exe = build("lifecycle.c", &[]);
    let out = run_mode(2, &exe, "reinit", &[]);
    assert_ne!(out.code(), 0, "{out:?}");
    // The first PE to fail ends the job: the others may not get to print.
    assert!(!out.lines_with("finalized pe=").is_empty(), "{out:?}");
    assert!(out.lines_with("reinitialized").is_empty(), "{out:?}");
    assert!(
        out.stderr
            .contains("shmem_init: OpenSHMEM was already finalized in this process"),
        "{out:?}"
    );
}

#[test]
fn forked_child_exit_finalizes_nothing() {
    let exe = build("lifecycle.c", &[]);
    for np in [1, 2] {
        let out = Job::new(np, &exe)
            .args(["fork_exit"])
            .timeout(Duration::from_secs(20))
            .run();
        out.assert_ok();
        assert_eq!(out.lines_with("ok fork_exit pe=").len(), np, "{out:?}");
        assert!(!out.stderr.contains(NO_FINALIZE_WARNING), "{out:?}");
    }
}

#[test]
fn failing_exit_is_not_finalized_at_exit() {
    // A non-zero exit while the others wait must end the job with that status, at once.
    let exe = build("lifecycle.c", &[]);
    for np in [1, 3] {
        let out = run_mode(np, &exe, "exit_fail", &[]);
        assert_eq!(out.code(), 3, "{out:?}");
        assert!(!out.stderr.contains(NO_FINALIZE_WARNING), "{out:?}");
        // shmem_global_exit(0) exits with status 0, but the job is being torn down.
        let out = Job::new(np, &exe)
            .args(["global_exit0"])
            .timeout(Duration::from_secs(20))
            .run();
        assert_eq!(out.code(), 0, "{out:?}");
        assert!(!out.stderr.contains(NO_FINALIZE_WARNING), "{out:?}");
    }
}

#[test]
fn init_errors_name_shmem_init_once_the_pe_and_the_variable() {
    let exe = build("lifecycle.c", &[]);
    for (size, var) in [
        ("garbage", "SHMEM_SYMMETRIC_SIZE=\"garbage\""),
        ("100T", "SHMEM_SYMMETRIC_SIZE=100T"),
    ] {
        let out = run_mode(2, &exe, "init_twice", &[("SHMEM_SYMMETRIC_SIZE", size)]);
        assert_ne!(out.code(), 0, "{out:?}");
        let lines: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("shmem_init"))
            .collect();
        assert!(!lines.is_empty(), "{out:?}");
        for l in &lines {
            assert_eq!(l.matches("shmem_init").count(), 1, "{l}\n{out:?}");
            assert!(
                l.starts_with("rshmem: PE 0: shmem_init: ")
                    || l.starts_with("rshmem: PE 1: shmem_init: "),
                "{l}\n{out:?}"
            );
            assert!(l.contains(var), "{l}\n{out:?}");
        }
    }
}

#[test]
fn calloc_overflow_returns_null_on_every_pe() {
    let exe = build("lifecycle.c", &[]);
    for np in [1, 2, 3] {
        let out = run_mode(np, &exe, "calloc", &[]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok calloc pe=").len(), np, "{out:?}");
    }
}

#[test]
fn team_handles_are_validated() {
    let exe = build("debug.c", &["-pthread"]);
    for (what, msg) in [
        (
            "team_destroy_twice",
            "shmem_team_destroy: argument team: was destroyed",
        ),
        (
            "team_use_destroyed",
            "shmem_team_sync: argument team: was destroyed",
        ),
        (
            "team_parent_destroyed",
            "shmem_team_split_strided: argument parent_team: was destroyed",
        ),
        (
            "team_garbage",
            "shmem_team_n_pes: argument team: is not a team handle",
        ),
        (
            "team_destroy_world",
            "shmem_team_destroy: argument team: is SHMEM_TEAM_WORLD, a predefined team",
        ),
        (
            "team_destroy_shared",
            "shmem_team_destroy: argument team: is SHMEM_TEAM_SHARED",
        ),
    ] {
        for np in [2, 3] {
            fails_naming(np, &exe, what, &[], msg);
        }
    }
}

#[test]
fn sandia_openshmem_names() {
    all_ok("sos.c", "sos", &[1, 2, 3]);
}

#[test]
fn global_exit_status_reaches_the_launcher() {
    let exe = build("exit.c", &[]);
    for np in [1, 3] {
        let out = run(np, &exe);
        assert_eq!(out.code(), 7, "{out:?}");
    }
}

#[test]
fn bad_arguments_name_routine_and_argument() {
    let exe = build("debug.c", &["-pthread"]);
    for (what, debug, msg) in [
        ("nonsym", "0", "shmem_int_put: argument dest"),
        (
            "null",
            "1",
            "shmem_int_put: argument source: is a null pointer",
        ),
        ("cmp", "0", "shmem_int_wait_until: argument cmp"),
        ("pe", "0", "shmem_int_p: argument pe"),
        (
            "ctx_invalid",
            "0",
            "shmem_ctx_int_p: argument ctx: is SHMEM_CTX_INVALID",
        ),
        (
            "ctx_destroyed",
            "0",
            "shmem_ctx_int_atomic_add: argument ctx: was destroyed",
        ),
        (
            "ctx_team",
            "0",
            "shmem_ctx_int_p: argument ctx: was destroyed",
        ),
        ("ctx_default", "0", "shmem_ctx_destroy: argument ctx"),
        ("team_pe", "0", "shmem_ctx_int_p: argument pe"),
        (
            "ctx_fake",
            "1",
            "shmem_ctx_int_p: argument ctx: is not a context handle",
        ),
        (
            "ctx_private",
            "1",
            "shmem_ctx_int_p: argument ctx: is a SHMEM_CTX_PRIVATE context of another thread",
        ),
        ("req_null", "0", "shmemx_putmem_nbe: argument req"),
        ("merge_null", "0", "shmemx_merge_request: argument merged"),
    ] {
        let out = Job::new(2, &exe)
            .args([what])
            .env("SHMEM_DEBUG", debug)
            .timeout(Duration::from_secs(60))
            .run();
        assert_ne!(out.code(), 0, "{what}: {out:?}");
        assert!(out.stderr.contains(msg), "{what}: want {msg:?} in {out:?}");
    }
}

/// Issue 10, item 1: zero-length calls with null pointers, for every routine with a count
/// (collect with some PEs contributing nothing from NULL among others that contribute).
#[test]
fn c_zero_length_calls_with_null_pointers() {
    all_ok("zero_len.c", "zero_len", &[1, 2, 3, 4]);
    all_ok_with(
        "zero_len.c",
        "zero_len",
        &[3, 4],
        &[],
        &[("SHMEM_COLLECT_ALGORITHM", "linear"), ("SHMEM_DEBUG", "1")],
    );
}

/// Issue 10, item 10, for the C face's active-set collectives (point-to-point waits of
/// their own): a PE that skips `shmem_barrier` and finalizes ends the job with an error
/// naming the routine and the PE.
#[test]
fn c_active_set_skipped_by_a_finalizing_pe_fails() {
    let exe = build("zero_len.c", &[]);
    for np in [2, 3, 4] {
        let out = Job::new(np, &exe)
            .args(["skip_active"])
            .timeout(Duration::from_secs(30))
            .run();
        assert!(out.status.is_some(), "hung at {np}: {out:?}");
        assert_ne!(out.code(), 0, "{out:?}");
        let want = format!(
            "shmem_barrier: PE {} called shmem_finalize while PE ",
            np - 1
        );
        assert!(out.stderr.contains(&want), "want {want:?} in {out:?}");
        assert!(out.lines_with("passed").is_empty(), "{out:?}");
    }
}

#[test]
fn c_profiling_counters_and_pcontrol() {
    all_ok("pcntr.c", "pcntr", &[1, 2, 3, 4]);
    all_ok_with("pcntr.c", "pcntr", &[3], &[], &[("SHMEM_PROFILE", "1")]);
}

#[test]
fn c_error_codes() {
    all_ok("errcodes.c", "errcodes", &[1, 2, 3, 4]);
    all_ok_with(
        "errcodes.c",
        "errcodes",
        &[2, 3],
        &[],
        &[("ERRCODES_FINALIZED", "1")],
    );
}

/// Fault tolerance (issue 13 §3): PE 1 raises SIGKILL in a loop of collectives. With
/// SHMEM_FAULT_TOLERANT=1 the survivors see SHMEMX_ERR_PE_FAILED, list PE 1 as failed,
/// reduce and sync on the survivors' team and finalize; oshrun exits 137 naming PE 1.
/// Without it the job ends at once. Either way no process or /dev/shm object is left.
#[test]
fn c_fault_tolerance() {
    let exe = build("ft.c", &[]);
    // Through the network a dead PE is not detected yet, so fault-tolerant mode is refused
    // at init.
    let over_ucx =
        std::env::var("SHMEM_TRANSPORT").is_ok_and(|t| t == "ucx" || t == "ofi" || t == "mixed");
    for np in [3, 4] {
        let before = rshmem_tests::shm_objects();
        let out = Job::new(np, &exe)
            .env("SHMEM_FAULT_TOLERANT", "1")
            .timeout(Duration::from_secs(30))
            .run();
        let ctx = format!("FT at {np} PEs: {out:?}");
        if over_ucx {
            assert_ne!(out.code(), 0, "{ctx}");
            assert!(out.stderr.contains("SHMEM_FAULT_TOLERANT=1"), "{ctx}");
            assert!(out.lines_with("ok ft pe=").is_empty(), "{ctx}");
        } else {
            assert_eq!(out.code(), 137, "{ctx}");
            let mut oks: Vec<String> = out.lines_with("ok ft pe=");
            oks.sort();
            let want: Vec<String> = (0..np).filter(|&p| p != 1).map(|p| p.to_string()).collect();
            assert_eq!(oks, want, "{ctx}");
            assert!(
                out.stderr.contains("PE 1 (pid") && out.stderr.contains("SIGKILL"),
                "{ctx}"
            );
            assert!(out.stderr.contains("PE(s) failed: 1"), "{ctx}");
        }
        rshmem_tests::assert_left_nothing(Path::new(&exe), &before, &ctx);

        let out = Job::new(np, &exe).timeout(Duration::from_secs(30)).run();
        let ctx = format!("without FT at {np} PEs: {out:?}");
        assert_eq!(out.code(), 137, "{ctx}");
        assert!(out.lines_with("ok ft pe=").is_empty(), "{ctx}");
        assert!(out.stderr.contains("PE 1 (pid"), "{ctx}");
        assert!(out.elapsed < Duration::from_secs(10), "{ctx}");
        rshmem_tests::assert_left_nothing(Path::new(&exe), &before, &ctx);
    }
}

/// Issue 26, item 3: a PE that skips a collective and goes on to another one (blocking,
/// or a non-blocking one it never issues) ends the job with an error naming both calls,
/// without `SHMEM_DEBUG`, instead of a silent hang.
#[test]
fn c_skipped_collective_names_both_calls() {
    let exe = build("coll_misuse.c", &[]);
    for (what, theirs) in [
        ("skip_reduce", "shmem_long_sum_reduce"),
        ("skip_nbe_reduce", "shmemx_long_sum_reduce_nbe"),
    ] {
        for np in [2, 4] {
            let out = Job::new(np, &exe)
                .args([what])
                .timeout(Duration::from_secs(60))
                .run();
            assert!(out.status.is_some(), "{what} at {np}: hung: {out:?}");
            assert_ne!(out.code(), 0, "{what} at {np}: {out:?}");
            assert!(
                out.code() < 128,
                "{what} at {np}: died of a signal: {out:?}"
            );
            assert!(out.lines_with("passed").is_empty(), "{what}: {out:?}");
            // Whichever PE notices first reports; PE 1 is on one side of the mismatch.
            let a = format!("shmem_barrier_all on PE 1 met {theirs} on PE ");
            let b = " met shmem_barrier_all on PE 1 ";
            assert!(
                out.stderr.contains(&a)
                    || (out.stderr.contains(b) && out.stderr.contains(&format!("{theirs} on PE "))),
                "{what} at {np}: want both calls named in {out:?}"
            );
        }
    }
}

/// Issue 26, item 4: request handles are checked: a copy of a completed request, or
/// garbage, gets an error naming the routine and the argument (no glibc abort, no
/// segfault).
#[test]
fn c_request_handles_are_validated() {
    let exe = build("coll_misuse.c", &[]);
    for (what, msg) in [
        ("req_copy_wait", "shmemx_request_wait: argument req: "),
        ("req_copy_free", "shmemx_request_free: argument req: "),
        ("req_garbage", "shmemx_request_wait: argument req: "),
        (
            "req_garbage_nbe",
            "shmemx_long_sum_reduce_nbe: argument req: ",
        ),
    ] {
        for np in [1, 2, 3] {
            let out = run_mode(np, &exe, what, &[]);
            assert_ne!(out.code(), 0, "{what} at {np}: {out:?}");
            assert!(
                out.code() < 128,
                "{what} at {np}: died of a signal: {out:?}"
            );
            assert!(out.stderr.contains(msg), "{what}: want {msg:?} in {out:?}");
            assert!(!out.stderr.contains("free()"), "{what}: {out:?}");
            assert!(out.lines_with("passed").is_empty(), "{what}: {out:?}");
        }
    }
}

/// Issue 26, item 8: an argument error of a non-blocking collective that is never
/// waited for is reported at finalize at the latest.
#[test]
fn c_unwaited_nbe_error_is_reported_at_finalize() {
    let exe = build("coll_misuse.c", &[]);
    for np in [1, 2, 3] {
        let out = run_mode(np, &exe, "nbe_bad_root", &[]);
        assert_ne!(out.code(), 0, "at {np}: {out:?}");
        assert!(out.code() < 128, "at {np}: {out:?}");
        let msg = "shmemx_long_broadcast_nbe: argument PE_root";
        assert!(out.stderr.contains(msg), "at {np}: want {msg:?} in {out:?}");
    }
}

/// Issue 26, item 12: the try forms of request waits and active-set creation return
/// error codes (an argument error, a member that finalized) and the job goes on.
#[test]
fn c_try_request_wait_and_try_aset_creation() {
    let exe = build("coll_misuse.c", &[]);
    for np in [1, 2, 3, 4] {
        let out = run_mode(np, &exe, "try_forms", &[]);
        assert!(out.status.is_some(), "hung at {np}: {out:?}");
        assert!(!out.stderr.contains("FAIL"), "at {np}: {out:?}");
        let want = if np == 1 { 1 } else { np - 1 };
        assert_eq!(out.lines_with("ok try_forms pe=").len(), want, "{out:?}");
    }
}

/// Issue 26, item 6: `shmem_align` returns truly aligned addresses (up to the heap's
/// 64 MiB alignment) and NULL when an alignment cannot fit; above 64 MiB, or 0, it is an
/// error naming the routine and argument.
#[test]
fn align_is_true_and_bounded() {
    let exe = build("heap_args.c", &[]);
    for np in [1, 2, 3] {
        let out = run_mode(np, &exe, "align", &[("SHMEM_SYMMETRIC_SIZE", "16M")]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok align pe=").len(), np, "{out:?}");
    }
    for (what, msg) in [
        (
            "align_huge",
            "shmem_align: argument alignment: must be at most 64 MiB",
        ),
        (
            "align_zero",
            "shmem_align: argument alignment: must be a power of two (0 is not)",
        ),
    ] {
        fails_naming(2, &exe, what, &[], msg);
    }
}

/// Issue 26, item 9: a split without an output handle, and an active set deleted twice,
/// are errors naming the routine and argument.
#[test]
fn team_outputs_and_deleted_sets_are_named() {
    let exe = build("heap_args.c", &[]);
    for (what, msg) in [
        (
            "split_null",
            "shmem_team_split_strided: argument new_team: is NULL",
        ),
        (
            "aset_twice",
            "shmemx_delete_aset: argument aset: was deleted (by shmemx_delete_aset)",
        ),
    ] {
        for np in [2, 3] {
            fails_naming(np, &exe, what, &[], msg);
        }
    }
}

/// Issue 26, item 10: `shmemx_register_gettid` (Sandia OpenSHMEM) links, and the library
/// tells threads apart by the program's names for them (here: `SHMEM_DEBUG`'s check of a
/// private context's thread).
#[test]
fn registered_gettid_names_the_threads() {
    let exe = build("gettid.c", &["-pthread"]);
    for np in [1, 2, 3] {
        let out = run_mode(np, &exe, "same", &[("SHMEM_DEBUG", "1")]);
        out.assert_ok();
        assert_eq!(out.lines_with("ok gettid pe=").len(), np, "{out:?}");
    }
    let msg =
        "shmem_ctx_long_atomic_add: argument ctx: is a SHMEM_CTX_PRIVATE context of another thread";
    fails_naming(2, &exe, "other", &[("SHMEM_DEBUG", "1")], msg);
}
