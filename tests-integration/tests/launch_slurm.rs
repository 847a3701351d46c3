//! rshmem jobs under a real one-node Slurm that this test binary starts
//! (`scripts/slurm1.sh`: slurmctld, slurmd and munged with a fresh key, all state in a
//! temporary directory) and that stops when the binary ends: `srun --mpi=pmi2` (PMI-1 wire)
//! and `srun --mpi=pmix` (PMIx) at 1-4 PEs, `sbatch` with a script that calls `srun`,
//! `scancel` of a running job, a PE killed mid-collective, `--mpi=none` failing by name.
//! Without root or Slurm the tests pass with a message, unless
//! `RSHMEM_TESTS_REQUIRE_TOOLS=1` (CI) makes that a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rshmem_tests::{assert_left_nothing, bin, run_bounded, shm_objects, workspace, JobOutput};

/// One job at a time: they oversubscribe the 2 cores already.
static SERIAL: Mutex<()> = Mutex::new(());

/// The running Slurm: its directory (`slurm.conf` inside), or `None` when skipped.
static SLURM: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Starts the one-node Slurm once per test binary; its watcher stops it when this process
/// ends. `None` (after a message) where it cannot run and CI does not require it.
fn slurm() -> Option<(std::sync::MutexGuard<'static, ()>, &'static Path)> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = SLURM.get_or_init(|| {
        let mut cmd = Command::new(workspace().join("scripts/slurm1.sh"));
        cmd.args(["start", "--owner", &std::process::id().to_string()]);
        let out = run_bounded(cmd, None, Duration::from_secs(60));
        let required = std::env::var("RSHMEM_TESTS_REQUIRE_TOOLS").as_deref() == Ok("1");
        if out.code() == 77 && !required {
            eprintln!("skipping: {}", out.stderr.trim());
            return None;
        }
        out.assert_ok();
        Some(PathBuf::from(out.stdout.trim()))
    });
    Some((guard, dir.as_deref()?))
}

/// A Slurm client command (`srun`, `sbatch`, ...) against the test's Slurm.
fn client(dir: &Path, prog: &str) -> Command {
    let mut cmd = Command::new(prog);
    cmd.env("SLURM_CONF", dir.join("slurm.conf"));
    cmd
}

fn srun(dir: &Path, mpi: &str, np: usize, prog: &str, args: &[&str]) -> JobOutput {
    let mut cmd = client(dir, "srun");
    cmd.args([&format!("--mpi={mpi}"), "-n", &np.to_string()])
        .arg(bin(prog))
        .args(args);
    run_bounded(cmd, None, Duration::from_secs(60))
}

#[test]
#[cfg_attr(
    not(all(have_slurm, have_pmix)),
    ignore = "Slurm or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn srun_pmi2_and_pmix_run_one_job() {
    let Some((_g, dir)) = slurm() else { return };
    for mpi in ["pmi2", "pmix"] {
        for np in 1..=4 {
            srun(dir, mpi, np, "api_ring", &[]).assert_ring(np);
        }
        srun(dir, mpi, 4, "coll_basic", &[]).assert_all_ok(4, "coll_basic");
        srun(dir, mpi, 3, "statics_basic", &[]).assert_all_ok(3, "statics_basic");
        let out = srun(dir, mpi, 4, "pmi_probe", &["nodes"]);
        out.assert_ok();
        let want = "size=4 [0, 0, 0, 0]";
        assert_eq!(out.stdout.matches(want).count(), 4, "{mpi}: {out:?}");
    }
}

#[test]
#[cfg_attr(
    not(all(have_slurm, have_pmix)),
    ignore = "Slurm or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn srun_mpi_none_fails_naming_the_plugin() {
    let Some((_g, dir)) = slurm() else { return };
    let out = srun(dir, "none", 2, "api_ring", &[]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.lines_with("ok api_ring").is_empty(), "{out:?}");
    for w in ["srun (--mpi=none) as one of 2 processes", "srun --mpi=pmi2"] {
        assert!(out.stderr.contains(w), "no {w:?}: {out:?}");
    }
    // One task alone is a single PE.
    srun(dir, "none", 1, "api_ring", &[]).assert_ring(1);
}

#[test]
#[cfg_attr(
    not(all(have_slurm, have_pmix)),
    ignore = "Slurm or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn sbatch_script_calling_srun() {
    let Some((_g, dir)) = slurm() else { return };
    let script = dir.join("job.sh");
    let out_file = dir.join("job.out");
    std::fs::write(
        &script,
        format!(
            // The script itself is no task of a step: a program it runs directly is one PE.
            "#!/bin/sh\nsrun --mpi=pmix -n 4 {ring}\nsrun --mpi=pmi2 -n 3 {coll}\n{ring}\necho batch-done\n",
            ring = bin("api_ring").display(),
            coll = bin("coll_basic").display()
        ),
    )
    .unwrap();
    let mut cmd = client(dir, "sbatch");
    cmd.args(["--wait", "-n", "4", "-o"])
        .arg(&out_file)
        .arg(&script);
    let out = run_bounded(cmd, None, Duration::from_secs(90));
    let text = std::fs::read_to_string(&out_file).unwrap_or_default();
    assert_eq!(out.code(), 0, "{out:?}\n--- job output\n{text}");
    let count = |p: &str| text.lines().filter(|l| l.starts_with(p)).count();
    assert_eq!(count("ok api_ring"), 5, "{text}");
    assert_eq!(count("ring pe=0 from=0 "), 1, "{text}");
    assert_eq!(count("ok coll_basic"), 3, "{text}");
    assert_eq!(count("batch-done"), 1, "{text}");
}

#[test]
#[cfg_attr(
    not(all(have_slurm, have_pmix)),
    ignore = "Slurm or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn scancel_ends_a_running_job() {
    let Some((_g, dir)) = slurm() else { return };
    let shm = shm_objects();
    let script = dir.join("hold.sh");
    let out_file = dir.join("hold.out");
    let exe = bin("launch_modes");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsrun --mpi=pmix -n 3 {} hold 120\n",
            exe.display()
        ),
    )
    .unwrap();
    let mut cmd = client(dir, "sbatch");
    cmd.args(["--parsable", "-n", "3", "-o"])
        .arg(&out_file)
        .arg(&script);
    let out = run_bounded(cmd, None, Duration::from_secs(30));
    out.assert_ok();
    let job = out.stdout.trim().split(';').next().unwrap().to_owned();
    let holding = || {
        std::fs::read_to_string(&out_file)
            .unwrap_or_default()
            .matches("holding pe=")
            .count()
    };
    let start = Instant::now();
    while holding() < 3 && start.elapsed() < Duration::from_secs(40) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(holding(), 3, "the job did not start: {job}");
    let mut cmd = client(dir, "scancel");
    cmd.arg(&job);
    run_bounded(cmd, None, Duration::from_secs(30)).assert_ok();
    // Gone from the queue and from the machine within seconds.
    let start = Instant::now();
    loop {
        let mut q = client(dir, "squeue");
        q.args(["-h", "-j", &job, "-o", "%i"]);
        let queued = !run_bounded(q, None, Duration::from_secs(30))
            .stdout
            .trim()
            .is_empty();
        if !queued && rshmem_tests::running(&exe).is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "job {job} still queued ({queued}) or running after scancel"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_left_nothing(&exe, &shm, "scancel");
}

#[test]
#[cfg_attr(
    not(all(have_slurm, have_pmix)),
    ignore = "Slurm or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn killed_pe_or_abort_ends_the_step() {
    let Some((_g, dir)) = slurm() else { return };
    for mpi in ["pmi2", "pmix"] {
        let shm = shm_objects();
        let start = Instant::now();
        let out = srun(dir, mpi, 4, "api_failure", &["kill"]);
        assert_ne!(out.code(), 0, "{mpi}: {out:?}");
        assert!(
            out.status.is_some(),
            "{mpi}: the time bound killed it: {out:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(30), "{mpi}: {out:?}");
        assert_eq!(out.lines_with("started pe=").len(), 4, "{mpi}: {out:?}");
        assert!(out.lines_with("after-barrier").is_empty(), "{mpi}: {out:?}");
        assert_left_nothing(&bin("api_failure"), &shm, mpi);

        let out = srun(dir, mpi, 2, "pmi_probe", &["abort", "5", "1"]);
        assert_ne!(out.code(), 0, "{mpi}: {out:?}");
        assert_eq!(
            out.stderr.matches("abort requested").count(),
            1,
            "{mpi}: {out:?}"
        );
    }
}

/// Slurm across 2 simulated hosts (`scripts/simhosts.sh --launcher slurm`: slurmctld beside
/// the hosts, one slurmd in each, `srun -N 2 -n 4`): one job of 4 PEs whose node map says
/// 2 hosts, through both plugins; a PE killed on one host ends the step on both. Passes
/// with a message where namespaces are not permitted, unless CI requires them.
#[test]
#[cfg_attr(
    not(all(have_slurm, have_pmix, have_ucx)),
    ignore = "Slurm, libpmix2 or UCX is not installed (scripts/install-deps.sh installs them)"
)]
fn srun_across_two_simulated_hosts() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let run = |mpi: &str, prog: &str, args: &[&str]| {
        let mut cmd = Command::new(workspace().join("scripts/simhosts.sh"));
        cmd.args(["run", "--hosts", "2", "--ppn", "2", "--timeout", "100"])
            .args(["--launcher", "slurm", "--env", "RSHMEM_TEST_HOSTS=2"])
            .env("SIMHOSTS_SRUN_ARGS", format!("--mpi={mpi}"))
            .arg("--")
            .arg(bin(prog))
            .args(args);
        run_bounded(cmd, None, Duration::from_secs(120))
    };
    let runs: &[(&str, &str, &[&str], &str)] = &[
        ("pmix", "pmi_probe", &["nodes"], "size=4 [0, 0, 1, 1]"),
        ("pmix", "coll_basic", &[], "ok coll_basic"),
        ("pmix", "api_ring", &[], "ok api_ring"),
        ("pmi2", "pmi_probe", &["nodes"], "size=4 [0, 0, 1, 1]"),
        ("pmi2", "coll_basic", &[], "ok coll_basic"),
    ];
    for (mpi, prog, args, want) in runs {
        let out = run(mpi, prog, args);
        if rshmem_tests::simhosts_skipped(&out) {
            return;
        }
        out.assert_ok();
        let hits = out.stdout.lines().filter(|l| l.contains(want)).count();
        assert_eq!(hits, 4, "{mpi} {prog}: {out:?}");
    }
    let start = Instant::now();
    let out = run("pmix", "api_failure", &["kill"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert_ne!(
        out.code(),
        124,
        "the job had to be killed by the timeout: {out:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(30), "{out:?}");
    assert!(out.lines_with("after-barrier").is_empty(), "{out:?}");
    assert!(rshmem_tests::running(&bin("api_failure")).is_empty());
}
