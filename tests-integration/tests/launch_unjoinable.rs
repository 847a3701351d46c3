//! Never a silent single PE: a process whose environment shows a launcher that started it as
//! one of several, which rshmem cannot join, fails at init naming the launcher and what to
//! do; a process no launcher started (or one task of one) is a single PE. The launchers'
//! variables are set by hand here, so these tests need no launcher installed.

use std::process::Command;
use std::time::Duration;

use rshmem_tests::{bin, run_bounded, JobOutput};

/// Variables of launchers that may surround the test run itself (CI inside a Slurm job).
const LAUNCHER_VARS: &[&str] = &[
    "PMI_FD",
    "PMI_PORT",
    "PMI_ID",
    "PMI_RANK",
    "PMI_SIZE",
    "PMIX_NAMESPACE",
    "PMIX_RANK",
    "PMIX_SERVER_URI41",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_STEP_ID",
    "SLURM_NTASKS",
    "SLURM_PROCID",
    "SLURM_MPI_TYPE",
    "PALS_RANKID",
    "PALS_LOCAL_SIZE",
    "MPI_LOCALNRANKS",
    "SHMEM_BOOTSTRAP",
    "RSHMEM_BOOT_PE",
];

/// Runs the ring program alone with `envs` as the launcher's variables.
fn ring_with(envs: &[(&str, &str)]) -> JobOutput {
    let mut cmd = Command::new(bin("api_ring"));
    for v in LAUNCHER_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(envs.iter().copied());
    run_bounded(cmd, None, Duration::from_secs(30))
}

#[track_caller]
fn assert_fails_naming(out: &JobOutput, words: &[&str]) {
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(out.lines_with("ok api_ring").is_empty(), "{out:?}");
    for w in words {
        assert!(out.stderr.contains(w), "no {w:?} in:\n{}", out.stderr);
    }
}

#[test]
fn pmix_environment_without_a_reachable_server_fails() {
    let out = ring_with(&[
        ("PMIX_NAMESPACE", "4242"),
        ("PMIX_RANK", "1"),
        ("PMIX_SERVER_URI41", "pmix-server.1;tcp4://127.0.0.1:9"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("OMPI_COMM_WORLD_RANK", "1"),
    ]);
    assert_fails_naming(&out, &["Open MPI's mpirun", "PMIx_Init failed"]);
}

#[test]
fn launchers_rshmem_cannot_join_are_named() {
    type Case = (
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
    );
    let cases: &[Case] = &[
        (
            &[
                ("SLURM_STEP_NUM_TASKS", "4"),
                ("SLURM_STEP_ID", "0"),
                ("SLURM_PROCID", "2"),
                ("SLURM_MPI_TYPE", "none"),
            ],
            &["srun (--mpi=none) as one of 4 processes", "srun --mpi=pmi2"],
        ),
        (
            &[("OMPI_COMM_WORLD_SIZE", "3"), ("OMPI_COMM_WORLD_RANK", "0")],
            &["Open MPI's mpirun", "as one of 3 processes"],
        ),
        (&[("PMI_SIZE", "2"), ("PMI_RANK", "1")], &["PMI_SIZE"]),
        (&[("PALS_RANKID", "1")], &["PALS"]),
        (&[("MPI_LOCALNRANKS", "2")], &["MPI_LOCALNRANKS"]),
    ];
    for (envs, words) in cases {
        let out = ring_with(envs);
        assert_fails_naming(&out, words);
    }
}

#[test]
fn no_launcher_or_one_task_is_a_single_pe() {
    for envs in [
        &[][..],
        // A batch script: the allocation has 4 tasks, but this process is no task of a step.
        &[("SLURM_NTASKS", "4")][..],
        &[("SLURM_STEP_NUM_TASKS", "1"), ("SLURM_STEP_ID", "0")][..],
        &[("OMPI_COMM_WORLD_SIZE", "1")][..],
        &[("SHMEM_BOOTSTRAP", "auto")][..],
    ] {
        let out = ring_with(envs);
        out.assert_ok();
        assert_eq!(
            out.lines_with("ok api_ring pe=0").len(),
            1,
            "{envs:?}: {out:?}"
        );
    }
}

#[test]
fn shmem_bootstrap_is_checked() {
    let out = ring_with(&[("SHMEM_BOOTSTRAP", "pmix")]);
    assert_fails_naming(&out, &["SHMEM_BOOTSTRAP=pmix", "PMIX_NAMESPACE"]);
    let out = ring_with(&[("SHMEM_BOOTSTRAP", "pmi1")]);
    assert_fails_naming(&out, &["SHMEM_BOOTSTRAP=pmi1", "PMI_FD"]);
    let out = ring_with(&[("SHMEM_BOOTSTRAP", "slurm")]);
    assert_fails_naming(&out, &["SHMEM_BOOTSTRAP", "pmi1, pmix, auto"]);
}
