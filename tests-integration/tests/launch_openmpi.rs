//! rshmem jobs under Open MPI's `mpirun`, which hands its processes PMIx (the bootstrap's
//! `PmixClient`): one job of N PEs with the results `oshrun` gives, locality, abort and a
//! killed PE, a clear failure without the PMIx library, and 2 simulated hosts x 2 PEs.
//! Reported as ignored where Open MPI or libpmix is not installed (see `build.rs`).

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rshmem_tests::{
    assert_left_nothing, bin, is_root, run_bounded, shm_objects, workspace, JobOutput,
};

/// One mpirun job at a time: they oversubscribe the 2 cores already.
static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `mpirun -np NP [-x K=V]... PROG ARGS`.
fn mpirun(np: usize, envs: &[&str], prog: &str, args: &[&str]) -> JobOutput {
    let mut cmd = Command::new("mpirun.openmpi");
    if is_root() {
        cmd.arg("--allow-run-as-root");
    }
    cmd.args(["--oversubscribe", "-np", &np.to_string()]);
    for e in envs {
        cmd.args(["-x", e]);
    }
    cmd.arg(bin(prog)).args(args);
    run_bounded(cmd, None, Duration::from_secs(60))
}

#[test]
#[cfg_attr(
    not(all(have_openmpi, have_pmix)),
    ignore = "Open MPI or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn one_job_of_n_pes_under_mpirun() {
    let _g = lock();
    for np in 1..=4 {
        mpirun(np, &[], "api_ring", &[]).assert_ring(np);
    }
    for np in [3, 4] {
        mpirun(np, &[], "coll_basic", &[]).assert_all_ok(np, "coll_basic");
    }
    // Symmetric globals: the PMIx library's own thread must not make init go without them.
    mpirun(3, &[], "statics_basic", &[]).assert_all_ok(3, "statics_basic");
    let out = mpirun(4, &[], "core_amo", &["blocking"]);
    out.assert_ok();
    assert!(
        out.stdout.lines().filter(|l| l.starts_with("ok")).count() >= 4,
        "{out:?}"
    );
}

#[test]
#[cfg_attr(
    not(all(have_openmpi, have_pmix)),
    ignore = "Open MPI or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn locality_and_kvs_through_pmix() {
    let _g = lock();
    let out = mpirun(4, &[], "pmi_probe", &["nodes"]);
    out.assert_ok();
    for r in 0..4 {
        let want = format!("nodes rank={r} size=4 [0, 0, 0, 0]");
        assert!(
            out.stdout.lines().any(|l| l == want),
            "no {want:?}: {out:?}"
        );
    }
    let out = mpirun(3, &[], "pmi_probe", &["kvs"]);
    out.assert_ok();
    assert_eq!(out.lines_with("ok kvs rank=").len(), 3, "{out:?}");
    // A program a PE starts is a single PE of its own, not a member of the PE's job.
    let out = mpirun(2, &[], "launch_modes", &["spawn-child"]);
    out.assert_ok();
    assert_eq!(
        out.lines_with("ok spawn-child pe=")
            .iter()
            .filter(|l| l.ends_with("child=child npes=1 me=0"))
            .count(),
        2,
        "{out:?}"
    );
}

#[test]
#[cfg_attr(
    not(all(have_openmpi, have_pmix)),
    ignore = "Open MPI or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn abort_and_a_killed_pe_end_the_job() {
    let _g = lock();
    let out = mpirun(2, &[], "pmi_probe", &["abort", "5", "1"]);
    assert_eq!(out.code(), 5, "{out:?}");
    assert_eq!(out.stderr.matches("abort requested").count(), 1, "{out:?}");
    let out = mpirun(2, &[], "core_errors", &["fatal"]);
    assert_ne!(out.code(), 0, "{out:?}");
    let want = "rshmem: PE 1: shmem_putmem: argument pe: PE 2 is out of range";
    assert_eq!(out.stderr.matches(want).count(), 1, "{out:?}");

    let shm = shm_objects();
    let start = Instant::now();
    let out = mpirun(4, &[], "api_failure", &["kill"]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.status.is_some(), "the time bound killed it: {out:?}");
    assert!(start.elapsed() < Duration::from_secs(30), "{out:?}");
    assert_eq!(out.lines_with("started pe=").len(), 4, "{out:?}");
    assert!(out.lines_with("after-barrier").is_empty(), "{out:?}");
    assert_left_nothing(&bin("api_failure"), &shm, "mpirun, PE killed");
}

#[test]
#[cfg_attr(
    not(all(have_openmpi, have_pmix)),
    ignore = "Open MPI or libpmix2 is not installed (scripts/install-deps.sh installs them)"
)]
fn without_the_pmix_library_init_fails_saying_what_to_install() {
    let _g = lock();
    let out = mpirun(
        2,
        &["SHMEM_PMIX_LIBRARY=libpmix-absent.so.2"],
        "api_ring",
        &[],
    );
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.lines_with("ok api_ring").is_empty(), "{out:?}");
    for w in [
        "Open MPI's mpirun",
        "apt-get install libpmix2",
        "cannot be loaded",
    ] {
        assert!(out.stderr.contains(w), "no {w:?}: {out:?}");
    }
    // PMI-1 forced where the launcher offers only PMIx.
    let out = mpirun(2, &["SHMEM_BOOTSTRAP=pmi1"], "api_ring", &[]);
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.stderr.contains("SHMEM_BOOTSTRAP=pmi1"), "{out:?}");
}

/// `mpirun` across 2 simulated hosts x 2 PEs (`scripts/simhosts.sh --launcher openmpi`):
/// PMIx gives each PE its node, PEs of a host share memory, hosts reach each other
/// through UCX. Passes with a message where namespaces are not permitted.
#[test]
#[cfg_attr(
    not(all(have_openmpi, have_pmix, have_ucx)),
    ignore = "Open MPI, libpmix2 or UCX is not installed (scripts/install-deps.sh installs them)"
)]
fn two_simulated_hosts_through_pmix() {
    let _g = lock();
    for (prog, args, want) in [
        ("pmi_probe", &["nodes"][..], "size=4 [0, 0, 1, 1]"),
        ("coll_basic", &[][..], "ok coll_basic"),
        ("api_ring", &[][..], "ok api_ring"),
    ] {
        let mut cmd = Command::new(workspace().join("scripts/simhosts.sh"));
        cmd.args(["run", "--hosts", "2", "--ppn", "2", "--timeout", "100"])
            .args(["--launcher", "openmpi", "--env", "RSHMEM_TEST_HOSTS=2"])
            .env("SIMHOSTS_MPIRUN_ARGS", "--oversubscribe")
            .arg("--")
            .arg(bin(prog))
            .args(args);
        let out = run_bounded(cmd, None, Duration::from_secs(120));
        if rshmem_tests::simhosts_skipped(&out) {
            return;
        }
        out.assert_ok();
        let hits = out.stdout.lines().filter(|l| l.contains(want)).count();
        assert_eq!(hits, 4, "{prog}: {out:?}");
    }
}
