//! Which launcher started this process, read from the environment alone, so that a PE of a
//! job rshmem cannot join fails instead of running on as a one-PE job of its own.

use std::env;

/// Environment variable a PE sets once it joined a job, `<pid>` or `<pid>:<PMIx namespace>`:
/// a program the PE starts inherits the launcher's variables with it, and is then a
/// one-PE job of its own rather than another member of the PE's job.
pub const PE_MARKER_VAR: &str = "RSHMEM_BOOT_PE";

/// Environment variable forcing the bootstrap: `pmi1`, `pmix` or `auto` (the default).
pub const BOOTSTRAP_VAR: &str = "SHMEM_BOOTSTRAP";

/// The bootstrap `SHMEM_BOOTSTRAP` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Chosen by the environment.
    Auto,
    /// The PMI-1 wire protocol (`PMI_FD` or `PMI_PORT`).
    Pmi1,
    /// PMIx through `libpmix.so.2`.
    Pmix,
}

/// A launcher seen in the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// Who started this process, for messages.
    pub launcher: String,
    /// How many processes it started, when the environment says.
    pub size: Option<usize>,
    /// What the user can do when rshmem cannot join the job.
    pub fix: String,
}

fn var(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name).filter(|v| !v.is_empty())
}

fn num(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<usize> {
    var(lookup, name)?.trim().parse().ok()
}

/// Reads `SHMEM_BOOTSTRAP`; an unknown value is an error naming it.
pub fn choice(lookup: &impl Fn(&str) -> Option<String>) -> Result<Choice, String> {
    match var(lookup, BOOTSTRAP_VAR).as_deref().map(str::trim) {
        None | Some("auto") => Ok(Choice::Auto),
        Some("pmi1") | Some("pmi") => Ok(Choice::Pmi1),
        Some("pmix") => Ok(Choice::Pmix),
        Some(v) => Err(format!(
            "{BOOTSTRAP_VAR}={v:?} is not one of pmi1, pmix, auto"
        )),
    }
}

/// Whether the PMI-1 wire is offered (`PMI_FD`, or `PMI_PORT` of Hydra's `-pmi-port`).
pub fn has_pmi1(lookup: &impl Fn(&str) -> Option<String>) -> bool {
    var(lookup, "PMI_FD").is_some() || var(lookup, "PMI_PORT").is_some()
}

/// Whether a PMIx server handed this process a namespace and rank, and it is not the
/// namespace of a PE this process descends from.
pub fn has_pmix(lookup: &impl Fn(&str) -> Option<String>) -> bool {
    let Some(ns) = var(lookup, "PMIX_NAMESPACE") else {
        return var(lookup, "PMIX_RANK").is_some() && var(lookup, PE_MARKER_VAR).is_none();
    };
    match var(lookup, PE_MARKER_VAR) {
        Some(m) => m.split_once(':').map(|(_, n)| n) != Some(ns.as_str()),
        None => true,
    }
}

/// The launcher the environment shows, if any started this process as one of several (or
/// of an unknown number) and this process is not a program a PE started.
pub fn launcher_hint(lookup: &impl Fn(&str) -> Option<String>) -> Option<Hint> {
    let inherited = var(lookup, PE_MARKER_VAR).is_some();
    let ompi = num(lookup, "OMPI_COMM_WORLD_SIZE");
    let slurm = num(lookup, "SLURM_STEP_NUM_TASKS").or_else(|| {
        // SLURM_NTASKS alone is also set in a batch script, which is no task of a step.
        var(lookup, "SLURM_STEP_ID").and(num(lookup, "SLURM_NTASKS"))
    });
    let pmix_fix = "install the PMIx client library (Debian/Ubuntu: apt-get install libpmix2; \
                    RHEL: dnf install pmix), or launch with oshrun, mpiexec.hydra or \
                    srun --mpi=pmi2";
    if has_pmix(lookup) {
        let launcher = if ompi.is_some() {
            "Open MPI's mpirun (PMIx)".to_owned()
        } else if slurm.is_some() {
            "Slurm's srun --mpi=pmix".to_owned()
        } else {
            "a PMIx launcher (PMIX_NAMESPACE is set)".to_owned()
        };
        return Some(Hint {
            launcher,
            size: ompi.or(slurm),
            fix: pmix_fix.into(),
        });
    }
    if inherited {
        return None;
    }
    let several = |n: Option<usize>| n.is_some_and(|n| n > 1);
    if several(ompi) {
        return Some(Hint {
            launcher: "Open MPI's mpirun (OMPI_COMM_WORLD_SIZE is set, but no PMIX_NAMESPACE)"
                .into(),
            size: ompi,
            fix: "use an Open MPI whose mpirun serves PMIx (4.x or later), or launch with \
                  oshrun or mpiexec.hydra"
                .into(),
        });
    }
    if several(slurm) {
        let mpi = var(lookup, "SLURM_MPI_TYPE").unwrap_or_else(|| "none".into());
        return Some(Hint {
            launcher: format!("Slurm's srun (--mpi={mpi})"),
            size: slurm,
            fix: "run with srun --mpi=pmi2 or srun --mpi=pmix (srun --mpi=list shows what \
                  this Slurm offers; MpiDefault= in slurm.conf sets the default)"
                .into(),
        });
    }
    if several(num(lookup, "PMI_SIZE")) {
        return Some(Hint {
            launcher: "a PMI launcher (PMI_SIZE is set, but neither PMI_FD nor PMI_PORT)".into(),
            size: num(lookup, "PMI_SIZE"),
            fix: "this launcher expects a PMI client library rshmem does not load; launch \
                  with oshrun, mpiexec.hydra, srun --mpi=pmi2 or a PMIx launcher"
                .into(),
        });
    }
    let pals_rank = num(lookup, "PALS_RANKID");
    if pals_rank.is_some_and(|r| r > 0) || several(num(lookup, "PALS_LOCAL_SIZE")) {
        return Some(Hint {
            launcher: "HPE Cray PALS (PALS_RANKID is set)".into(),
            size: None,
            fix: "PALS serves Cray PMI only; launch with srun --mpi=pmix or --mpi=pmi2, a \
                  PMIx launcher, or oshrun"
                .into(),
        });
    }
    if several(num(lookup, "MPI_LOCALNRANKS")) {
        return Some(Hint {
            launcher: "an MPICH-style launcher (MPI_LOCALNRANKS is set, but no PMI_FD)".into(),
            size: num(lookup, "MPI_LOCALNRANKS"),
            fix: "launch with oshrun, mpiexec.hydra, srun --mpi=pmi2 or a PMIx launcher".into(),
        });
    }
    None
}

/// The marker a PE leaves in its environment once it joined a job (see [`PE_MARKER_VAR`]).
pub fn marker(pmix_namespace: Option<&str>) -> String {
    match pmix_namespace {
        Some(ns) => format!("{}:{ns}", std::process::id()),
        None => std::process::id().to_string(),
    }
}

/// The process environment as a lookup.
pub fn process_env(name: &str) -> Option<String> {
    env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn no_launcher_is_a_singleton() {
        assert_eq!(launcher_hint(&env_of(&[])), None);
        // One task of one: a singleton is what was asked for.
        let e = env_of(&[("SLURM_STEP_NUM_TASKS", "1"), ("OMPI_COMM_WORLD_SIZE", "1")]);
        assert_eq!(launcher_hint(&e), None);
        // A batch script: SLURM_NTASKS without a step.
        assert_eq!(launcher_hint(&env_of(&[("SLURM_NTASKS", "4")])), None);
    }

    #[test]
    fn launchers_are_named() {
        let h = launcher_hint(&env_of(&[
            ("PMIX_NAMESPACE", "1234"),
            ("PMIX_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
        ]))
        .unwrap();
        assert!(h.launcher.contains("mpirun") && h.fix.contains("libpmix2"));
        assert_eq!(h.size, Some(4));
        let h = launcher_hint(&env_of(&[
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("SLURM_MPI_TYPE", "none"),
        ]))
        .unwrap();
        assert!(h.launcher.contains("--mpi=none") && h.fix.contains("--mpi=pmi2"));
        let h = launcher_hint(&env_of(&[("SLURM_STEP_ID", "0"), ("SLURM_NTASKS", "3")]));
        assert_eq!(h.unwrap().size, Some(3));
        assert!(launcher_hint(&env_of(&[("PMI_SIZE", "2")])).is_some());
        assert!(launcher_hint(&env_of(&[("PALS_RANKID", "3")])).is_some());
        assert!(launcher_hint(&env_of(&[("MPI_LOCALNRANKS", "2")])).is_some());
        assert!(launcher_hint(&env_of(&[("OMPI_COMM_WORLD_SIZE", "2")])).is_some());
    }

    #[test]
    fn a_program_started_by_a_pe_is_no_member_of_its_job() {
        let e = env_of(&[
            ("PMIX_NAMESPACE", "77"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            (PE_MARKER_VAR, "4242:77"),
        ]);
        assert!(!has_pmix(&e));
        assert_eq!(launcher_hint(&e), None);
        // A nested job has a namespace of its own.
        let e = env_of(&[("PMIX_NAMESPACE", "78"), (PE_MARKER_VAR, "4242:77")]);
        assert!(has_pmix(&e));
        let e = env_of(&[("SLURM_STEP_NUM_TASKS", "4"), (PE_MARKER_VAR, "4242")]);
        assert_eq!(launcher_hint(&e), None);
    }

    #[test]
    fn bootstrap_choice() {
        assert_eq!(choice(&env_of(&[])), Ok(Choice::Auto));
        assert_eq!(
            choice(&env_of(&[(BOOTSTRAP_VAR, "pmix")])),
            Ok(Choice::Pmix)
        );
        assert_eq!(
            choice(&env_of(&[(BOOTSTRAP_VAR, "pmi1")])),
            Ok(Choice::Pmi1)
        );
        let e = choice(&env_of(&[(BOOTSTRAP_VAR, "slurm")])).unwrap_err();
        assert!(e.contains("SHMEM_BOOTSTRAP") && e.contains("pmix"));
    }
}
