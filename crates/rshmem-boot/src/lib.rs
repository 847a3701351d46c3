//! rshmem's bootstrap layer: how a PE learns its rank, the job size and a job-wide name, and
//! exchanges small strings with the other PEs before the data plane exists.
//!
//! [`from_env`] picks the implementation: a [`PmiClient`] speaking PMI-1 "simple" (see
//! [`wire`]) when a launcher (`oshrun`, MPICH's `mpiexec.hydra`, Slurm's
//! `srun --mpi=pmi2`) set `PMI_FD` (or `PMI_PORT` and `PMI_ID`), a [`PmixClient`] when a
//! PMIx server (Open MPI's `mpirun`, `srun --mpi=pmix`, `prterun`) set `PMIX_NAMESPACE`,
//! and a [`Singleton`] for a program no launcher started. A process some other launcher
//! started as one of several is an error (see [`detect`]), never a silent single PE.
//! `SHMEM_BOOTSTRAP=pmi1|pmix|auto` forces the choice.
//!
//! Keys and values must be non-empty and free of whitespace, `=` and control characters;
//! values are at most [`MAX_VALUE_LEN`] bytes and keys at most [`MAX_KEY_LEN`] bytes. Other
//! inputs are refused with [`BootError::Invalid`] (the PMI-1 wire format has no escaping).

// Audited exceptions: adopting the inherited PMI_FD needs `from_raw_fd` (see client.rs), and
// the PMIx client calls libpmix (pmix.rs).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod client;
pub mod detect;
pub mod mapping;
mod pmix;
mod singleton;
pub mod wire;

pub use client::{PmiClient, PmiStream, BARRIER_WARN_VAR};
pub use pmix::PmixClient;
pub use singleton::Singleton;

/// Longest value [`Bootstrap::put`] accepts, in bytes.
pub const MAX_VALUE_LEN: usize = 512;

/// Longest key [`Bootstrap::put`] accepts, in bytes (the wire key adds a rank prefix, and
/// hydra's limit is 64 in all).
pub const MAX_KEY_LEN: usize = 48;

/// The process-manager services a PE needs to start up.
pub trait Bootstrap: Send + Sync + std::fmt::Debug {
    /// This PE's rank, in `0..size()`.
    fn rank(&self) -> usize;
    /// Number of PEs in the job.
    fn size(&self) -> usize;
    /// A name unique to this job (PMI kvsname), usable in resource names.
    fn job_id(&self) -> &str;
    /// The node (host) index of every rank as the launcher placed them
    /// (`PMI_process_mapping`), or `None` when the launcher did not say.
    fn nodes(&self) -> Option<&[usize]>;
    /// Publishes `value` under `key` for this rank; visible to others after `fence`.
    fn put(&self, key: &str, value: &str) -> Result<(), BootError>;
    /// Collective: commits this rank's puts and waits for every rank (PMI barrier).
    fn fence(&self) -> Result<(), BootError>;
    /// The value `rank` published under `key` (after a fence).
    fn get(&self, rank: usize, key: &str) -> Result<String, BootError>;
    /// Collective barrier over all ranks.
    fn barrier(&self) -> Result<(), BootError>;
    /// Ends the whole job with status `code` (as mapped by [`exit_status`]) and exits this
    /// process with it.
    ///
    /// An empty `msg` means `shmem_global_exit(code)`. Otherwise `msg` is the one-line
    /// report of a fatal error: it goes to the launcher with the abort, and is printed on
    /// stderr by whichever of the launcher (`oshrun`) or this PE (other launchers, which
    /// may not print it) reaches the user, never by both.
    fn abort(&self, code: i32, msg: &str) -> !;
    /// Tells the launcher this rank finished cleanly (PMI finalize). Idempotent.
    fn finalize(&self) -> Result<(), BootError>;
    /// Called as this process exits with non-zero `status` after init, before it ends:
    /// under a launcher that learns of the exit late (hydra, through a proxy on another
    /// host), the failures it causes in other PEs would be reported first, so the exit
    /// goes to the launcher as an abort carrying `msg` and `status` (what the launcher
    /// then reports and exits with). Returns; does nothing under a launcher that watches
    /// its PEs itself (`oshrun`) and without one.
    fn exiting(&self, _status: i32, _msg: &str) {}
}

/// Why a bootstrap operation failed. Messages name the PMI command and the environment
/// variable or reply at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BootError {
    /// A launcher environment variable is missing or malformed.
    #[error("environment variable {var}={value:?} is invalid: {reason}")]
    Env {
        /// The variable (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`).
        var: &'static str,
        /// Its value (empty when unset).
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The launcher uses a PMI flavour this crate does not speak.
    #[error("unsupported process manager: {0}")]
    Unsupported(String),
    /// `PMI_FD` was already adopted by an earlier [`from_env`] in this process.
    #[error("PMI_FD was already taken by an earlier rshmem_boot::from_env() in this process")]
    AlreadyConnected,
    /// Reading or writing the PMI socket failed.
    #[error("PMI {cmd}: I/O error on the PMI socket: {source}")]
    Io {
        /// The PMI command under way.
        cmd: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The process manager closed the PMI socket.
    #[error("PMI {cmd}: the process manager closed the connection")]
    Closed {
        /// The PMI command under way.
        cmd: &'static str,
    },
    /// The reply was not what the protocol prescribes.
    #[error("PMI {cmd}: unexpected reply {reply:?}: {reason}")]
    Protocol {
        /// The PMI command under way.
        cmd: &'static str,
        /// The reply line (or what could be read of it).
        reply: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The process manager answered with a non-zero `rc`.
    #[error("PMI {cmd}: the process manager answered rc={rc} in {reply:?}")]
    Failed {
        /// The PMI command.
        cmd: &'static str,
        /// Its `rc`.
        rc: i32,
        /// The reply line.
        reply: String,
    },
    /// A launcher started this process as one of several, but rshmem cannot join its job.
    #[error(
        "this process was started by {launcher}, but rshmem cannot join that job: {reason}; {fix}"
    )]
    Unjoinable {
        /// Who started the process.
        launcher: String,
        /// Why the job cannot be joined.
        reason: String,
        /// What the user can do.
        fix: String,
    },
    /// A PMIx call failed.
    #[error("{call} failed: {text} (PMIx status {status})")]
    Pmix {
        /// The PMIx function.
        call: &'static str,
        /// Its status code.
        status: i32,
        /// `PMIx_Error_string` of it.
        text: String,
    },
    /// `get` found nothing under the key for that rank.
    #[error("PMI get: rank {rank} published no key {key:?} ({msg})")]
    NotFound {
        /// The rank asked about.
        rank: usize,
        /// The key asked for.
        key: String,
        /// The process manager's explanation.
        msg: String,
    },
    /// A key or value that cannot be sent (see the crate docs for the rules).
    #[error(transparent)]
    Invalid(#[from] wire::WireError),
    /// A rank outside `0..size`.
    #[error("rank {rank} is out of range for a job of {size} PEs")]
    RankOutOfRange {
        /// The rank given.
        rank: usize,
        /// The job size.
        size: usize,
    },
    /// The operation came after [`Bootstrap::finalize`].
    #[error("PMI {cmd}: called after finalize")]
    Finalized {
        /// The PMI command attempted.
        cmd: &'static str,
    },
}

/// The exit status a job or PE ends with for `status` (of `shmem_global_exit`, or an
/// abort): the OS keeps only the low 8 bits, so a non-zero status whose low byte is 0 (256,
/// -256, ...) would read as success. It becomes 255 instead; every other status is its low
/// byte (1..=255 unchanged, -1 becomes 255, 257 becomes 1, as `exit` itself would).
pub fn exit_status(status: i32) -> i32 {
    match status & 0xff {
        0 if status != 0 => 255,
        low => low,
    }
}

/// Connects to the launcher named by the environment: a [`PmiClient`] when `PMI_FD` (or
/// `PMI_PORT`) is set, a [`PmixClient`] when `PMIX_NAMESPACE` is, else a [`Singleton`]
/// (rank 0 of 1) when no launcher started this process. `SHMEM_BOOTSTRAP` (`pmi1`, `pmix`,
/// `auto`) forces one wire.
///
/// A process that a launcher started as one of several but that cannot join the job (no
/// PMIx library, `srun --mpi=none`, ...) gets [`BootError::Unjoinable`] naming the launcher
/// and what to do, never a single-PE job of its own.
///
/// The PMI-1 variables (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`) are removed from the environment
/// once read, and [`detect::PE_MARKER_VAR`] is set, so a program this process starts
/// (`system()`, `Command`) is a single-PE job of its own instead of failing on a socket it
/// does not have or joining this PE's job. A second call after a launcher connection fails
/// with [`BootError::AlreadyConnected`].
pub fn from_env() -> Result<Box<dyn Bootstrap>, BootError> {
    use detect::Choice;
    if client::launcher_env_taken() {
        return Err(BootError::AlreadyConnected);
    }
    let env = detect::process_env;
    let choice = detect::choice(&env).map_err(|reason| BootError::Env {
        var: detect::BOOTSTRAP_VAR,
        value: env(detect::BOOTSTRAP_VAR).unwrap_or_default(),
        reason,
    })?;
    let hint = detect::launcher_hint(&env);
    let pmi1 = detect::has_pmi1(&env);
    let pmix = detect::has_pmix(&env);
    let launcher = |what: &str| match &hint {
        Some(h) => h.launcher.clone(),
        None => what.to_owned(),
    };
    let use_pmix = match choice {
        Choice::Pmi1 if !pmi1 => {
            return Err(BootError::Unjoinable {
                launcher: launcher("no launcher"),
                reason: "SHMEM_BOOTSTRAP=pmi1 but neither PMI_FD nor PMI_PORT is set".into(),
                fix: "launch with oshrun, mpiexec.hydra or srun --mpi=pmi2, or unset \
                      SHMEM_BOOTSTRAP"
                    .into(),
            })
        }
        Choice::Pmix if !pmix => {
            return Err(BootError::Unjoinable {
                launcher: launcher("no launcher"),
                reason: "SHMEM_BOOTSTRAP=pmix but PMIX_NAMESPACE is not set".into(),
                fix: "launch with Open MPI's mpirun, srun --mpi=pmix or prterun, or unset \
                      SHMEM_BOOTSTRAP"
                    .into(),
            })
        }
        Choice::Pmi1 => false,
        Choice::Pmix => true,
        Choice::Auto => !pmi1 && pmix,
    };
    // Set before any connection starts threads (see client.rs on changing the environment).
    let mark = |ns: Option<&str>| std::env::set_var(detect::PE_MARKER_VAR, detect::marker(ns));
    if use_pmix {
        let launcher = launcher("a PMIx launcher");
        let ns = env("PMIX_NAMESPACE");
        mark(ns.as_deref());
        return match PmixClient::connect(&launcher) {
            Ok(c) => Ok(Box::new(c)),
            // A job the environment says is of one process may run without its launcher.
            Err(BootError::Unjoinable { .. }) if hint.as_ref().and_then(|h| h.size) == Some(1) => {
                Ok(Box::new(Singleton::new()))
            }
            Err(e) => Err(e),
        };
    }
    if pmi1 {
        mark(None);
        return Ok(Box::new(PmiClient::from_env()?));
    }
    if let Some(h) = hint {
        let n = match h.size {
            Some(n) => format!("{n} processes"),
            None => "several processes".into(),
        };
        return Err(BootError::Unjoinable {
            launcher: format!("{} as one of {n}", h.launcher),
            reason: "it offers neither of the bootstraps rshmem speaks (PMI-1: PMI_FD or \
                     PMI_PORT; PMIx: PMIX_NAMESPACE)"
                .into(),
            fix: h.fix,
        });
    }
    Ok(Box::new(Singleton::new()))
}

/// Whether [`from_env`] connects to a launcher (rather than making a single PE).
pub fn launched() -> bool {
    let env = detect::process_env;
    detect::has_pmi1(&env) || detect::has_pmix(&env)
}

/// This process's rank as its launcher announced it, without connecting: `PMI_RANK` (or
/// `PMIX_RANK`) under a launcher, 0 alone, `None` when unknown. For messages about a
/// failure before or while connecting.
pub fn rank_hint() -> Option<usize> {
    let env = detect::process_env;
    if detect::has_pmi1(&env) {
        // Hydra's -pmi-port mode gives only PMI_ID, which is the rank.
        std::env::var("PMI_RANK")
            .or_else(|_| std::env::var("PMI_ID"))
            .ok()?
            .parse()
            .ok()
    } else if detect::has_pmix(&env) {
        std::env::var("PMIX_RANK").ok()?.parse().ok()
    } else if detect::launcher_hint(&env).is_some() {
        [
            "OMPI_COMM_WORLD_RANK",
            "SLURM_PROCID",
            "PMI_RANK",
            "PALS_RANKID",
        ]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
    } else {
        Some(0)
    }
}

/// Checks a user key and value against the crate's rules.
fn check_key(key: &str) -> Result<(), BootError> {
    Ok(wire::check_token("key", key, MAX_KEY_LEN)?)
}

fn check_value(value: &str, max: usize) -> Result<(), BootError> {
    Ok(wire::check_token("value", value, max)?)
}

fn check_rank(rank: usize, size: usize) -> Result<(), BootError> {
    if rank < size {
        Ok(())
    } else {
        Err(BootError::RankOutOfRange { rank, size })
    }
}

/// Prints the abort message on stderr, with a trailing newline (nothing if it is empty).
fn print_abort_msg(msg: &str) {
    use std::io::Write;
    if msg.is_empty() {
        return;
    }
    let mut e = std::io::stderr().lock();
    let _ = if msg.ends_with('\n') {
        e.write_all(msg.as_bytes())
    } else {
        writeln!(e, "{msg}")
    };
    let _ = e.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_name_the_culprit() {
        let e = BootError::Env {
            var: "PMI_RANK",
            value: "x".into(),
            reason: "not a number".into(),
        };
        assert!(e.to_string().contains("PMI_RANK"));
        let e = BootError::Failed {
            cmd: "put",
            rc: -1,
            reply: "cmd=put_result rc=-1".into(),
        };
        assert!(e.to_string().contains("put") && e.to_string().contains("rc=-1"));
        assert!(check_key("a b").is_err());
        assert!(check_value(&"x".repeat(MAX_VALUE_LEN + 1), MAX_VALUE_LEN).is_err());
        assert!(check_rank(3, 3).is_err());
    }

    #[test]
    fn exit_status_is_never_zero_for_a_failure() {
        for (s, want) in [
            (0, 0),
            (1, 1),
            (255, 255),
            (256, 255),
            (512, 255),
            (-256, 255),
            (i32::MIN, 255),
            (-1, 255),
            (257, 1),
            (-255, 1),
        ] {
            assert_eq!(exit_status(s), want, "{s}");
        }
    }
}
