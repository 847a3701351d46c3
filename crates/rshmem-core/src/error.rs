//! Errors of the runtime. Every error names the routine and the argument at fault, so the
//! faces (Rust API, C ABI) can report it as is.

use rshmem_util::config::show_size;

/// Result of a runtime call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How the job ends on an error no caller can take ([`fatal`]): the runtime's
/// `runtime::fatal`, set at init, so that layers below the runtime (the copy engine's
/// threads) need not reach up to it.
static FATAL_HOOK: std::sync::OnceLock<fn(&dyn std::fmt::Display) -> !> =
    std::sync::OnceLock::new();

/// Sets how [`fatal`] ends the job (the first setting stays).
pub(crate) fn set_fatal_hook(end: fn(&dyn std::fmt::Display) -> !) {
    let _ = FATAL_HOOK.set(end);
}

/// Reports `err` and ends the job with a non-zero status, through the hook the runtime set
/// ([`set_fatal_hook`]); without one, the process prints the error and exits.
#[cold]
pub(crate) fn fatal(err: &dyn std::fmt::Display) -> ! {
    match FATAL_HOOK.get() {
        Some(end) => end(err),
        None => print_and_exit(err),
    }
}

/// Ends the process (not the job) on `err`: before init, or where no runtime runs.
#[cold]
pub(crate) fn print_and_exit(err: &dyn std::fmt::Display) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    eprintln!("rshmem: {err}");
    std::process::exit(1)
}

/// What went wrong in a routine. Small and `Copy`, so returning it costs nothing on the
/// hot path; the text is built only when it is displayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A routine was called before `shmem_init` or after `shmem_finalize`.
    #[error("{routine}: called before shmem_init (or after shmem_finalize)")]
    NotInitialized {
        /// The routine.
        routine: &'static str,
    },
    /// A PE number outside the team.
    #[error("{routine}: argument {arg}: PE {pe} is out of range (valid PEs are 0 to {})", npes.saturating_sub(1))]
    PeOutOfRange {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// The PE passed.
        pe: i64,
        /// Number of PEs in the team.
        npes: usize,
    },
    /// An address that is not in symmetric memory (or a range running past its end).
    #[error("{routine}: argument {arg}: address {addr:#x} (+{len} bytes) is not symmetric: it lies outside the symmetric heap [{base:#x}, {end:#x})")]
    NotSymmetric {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// The address passed.
        addr: usize,
        /// Bytes accessed from it.
        len: usize,
        /// Start of this PE's symmetric heap.
        base: usize,
        /// End of this PE's symmetric heap.
        end: usize,
    },
    /// An address that is not suitably aligned for the operation.
    #[error("{routine}: argument {arg}: address {addr:#x} is not aligned to {align} bytes")]
    Misaligned {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// The address passed.
        addr: usize,
        /// Required alignment.
        align: usize,
    },
    /// The symmetric heap cannot satisfy an allocation.
    #[error("{routine}: symmetric heap exhausted: requested {} but only {} of SHMEM_SYMMETRIC_SIZE={} is free (largest free block {}); raise SHMEM_SYMMETRIC_SIZE", Bytes(*requested), Bytes(*free), Bytes(*heap_size), Bytes(*largest))]
    HeapExhausted {
        /// The routine.
        routine: &'static str,
        /// Bytes requested (with alignment padding).
        requested: usize,
        /// Bytes free in all.
        free: usize,
        /// Largest free block.
        largest: usize,
        /// The configured heap size.
        heap_size: usize,
    },
    /// A pointer passed to free/realloc that the heap did not hand out.
    #[error("{routine}: argument {arg}: {addr:#x} was not returned by shmem_malloc (or was already freed)")]
    NotAllocated {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// The address passed.
        addr: usize,
    },
    /// PEs passed different arguments to a collective routine (`SHMEM_DEBUG=1` check).
    #[error("{routine}: collective arguments differ between PEs: PE {pe} passed {arg}={value} but PE {other_pe} passed {arg}={other_value}")]
    CollectiveMismatch {
        /// The routine.
        routine: &'static str,
        /// Name of the argument that differs.
        arg: &'static str,
        /// This PE.
        pe: usize,
        /// Its value.
        value: u64,
        /// The PE compared against.
        other_pe: usize,
        /// That PE's value.
        other_value: u64,
    },
    /// PEs passed different arguments to a collective routine, or called different
    /// collectives (`SHMEM_DEBUG=1` check), for arguments shown by name.
    #[error("{routine}: collective arguments differ between PEs: PE {pe} passed {arg}={value} but PE {other_pe} passed {arg}={other_value}")]
    CollectiveMismatchNamed {
        /// The routine.
        routine: &'static str,
        /// Name of the argument that differs (`routine called` for different routines).
        arg: &'static str,
        /// This PE.
        pe: usize,
        /// Its value.
        value: &'static str,
        /// The PE compared against.
        other_pe: usize,
        /// That PE's value.
        other_value: &'static str,
    },
    /// Two members of a team made different collective calls as their n-th call on it
    /// (one skipped a collective, or they call them in different orders).
    #[error("{routine}: PEs call different collectives: {routine} on PE {pe} met {other_routine} on PE {other_pe} (collective call {seq} on this team; every member must make the same collective calls in the same order)")]
    CollectiveOrder {
        /// The routine of this PE.
        routine: &'static str,
        /// This PE.
        pe: usize,
        /// The other PE's routine.
        other_routine: &'static str,
        /// The other PE (world number).
        other_pe: usize,
        /// The number of the call on the team.
        seq: u64,
    },
    /// Any other invalid argument.
    #[error("{routine}: argument {arg}: {reason}")]
    InvalidArgument {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A PE that this PE waits for inside a collective has entered `shmem_finalize`: it
    /// skipped the collective, or finalized while the others were still in it.
    #[error("{routine}: PE {pe} called shmem_finalize while PE {waiter} waits for it in this collective (every member must make the same collective calls before finalizing)")]
    PeerFinalized {
        /// The routine waiting.
        routine: &'static str,
        /// The finalized PE (world number).
        pe: usize,
        /// This PE.
        waiter: usize,
    },
    /// A PE that this PE waits for died (killed by a signal, or exited without
    /// `shmem_finalize`). From a collective: a member of its team; from a user wait
    /// (`shmem_wait_until`...): a PE whose failure this PE has not yet acknowledged with
    /// `shmemx_failed_pes` (any PE might have been the writer waited for).
    #[error("{routine}: PE {pe} failed (it died without calling shmem_finalize) while PE {waiter} waits for it")]
    PeFailed {
        /// The routine waiting.
        routine: &'static str,
        /// The failed PE (world number).
        pe: usize,
        /// This PE.
        waiter: usize,
    },
    /// A point-to-point wait that no PE can satisfy any more: every other PE has called
    /// `shmem_finalize` (or failed), or is itself stuck in such a wait.
    #[error("{routine}: PE {waiter} waits for a symmetric variable that no PE can change any more: {}", Nobody { first: *first, finalized: *finalized, waiting: *waiting })]
    WaitAfterFinalize {
        /// The routine waiting.
        routine: &'static str,
        /// This PE.
        waiter: usize,
        /// The first PE that finalized (or failed).
        first: usize,
        /// How many PEs finalized (or failed).
        finalized: usize,
        /// How many other PEs wait in a user wait of their own, which nobody can end.
        waiting: usize,
    },
    /// The PE ahead of this one in a lock's queue entered `shmem_finalize` holding the
    /// lock: only `shmem_clear_lock` releases a lock, so it is held for good.
    #[error("{routine}: argument lock: PE {pe} called shmem_finalize while holding the lock PE {waiter} waits for (a lock is released only by shmem_clear_lock; finalize does not release it)")]
    LockHolderFinalized {
        /// The routine waiting.
        routine: &'static str,
        /// The PE that finalized holding the lock (world number).
        pe: usize,
        /// This PE.
        waiter: usize,
    },
    /// A list of PEs that must be distinct names one twice.
    #[error("{routine}: argument {arg}: PE {pe} appears twice")]
    RepeatedPe {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// The PE named twice (world number).
        pe: usize,
    },
    /// A synchronization that goes on without departed PEs (Coarray Fortran's image
    /// control: [`crate::coll::tolerant_sync`], [`crate::ops::pair_sync`]) found a member of its
    /// team finalized or failed instead of taking part.
    #[error("{routine}: PE {pe} (rank {rank} of the team) has {how}{}", Missing(*missing))]
    PeGone {
        /// The routine synchronizing.
        routine: &'static str,
        /// The first departed member found (world number); finalized ones come first.
        pe: usize,
        /// Its rank in the team synchronized.
        rank: usize,
        /// How it departed.
        how: Departure,
        /// How many members were found departed (at least 1).
        missing: usize,
    },
    /// The network transport (UCX or libfabric) failed: the peer died, or the fabric broke.
    #[error("{routine}: {what}{}{}", Peer(*pe), Status(status))]
    Transport {
        /// The routine.
        routine: &'static str,
        /// The PE the operation went to, if one.
        pe: Option<usize>,
        /// What failed.
        what: &'static str,
        /// The network library's status (empty when it reported nothing).
        status: &'static str,
    },
}

/// The routine of an error built below the layer that knows it: the transport does not
/// carry routine names, so its errors leave the name for the caller to give with
/// [`Error::at`] / [`At::at`].
pub(crate) const UNNAMED: &str = "";

impl Error {
    /// `self`, reported under `routine` if the layer that built it could not name it.
    #[cold]
    pub(crate) fn at(mut self, routine: &'static str) -> Self {
        let r = self.routine_mut();
        if r.is_empty() {
            *r = routine;
        }
        self
    }

    fn routine_mut(&mut self) -> &mut &'static str {
        match self {
            Error::NotInitialized { routine, .. }
            | Error::PeOutOfRange { routine, .. }
            | Error::NotSymmetric { routine, .. }
            | Error::Misaligned { routine, .. }
            | Error::HeapExhausted { routine, .. }
            | Error::NotAllocated { routine, .. }
            | Error::CollectiveMismatch { routine, .. }
            | Error::CollectiveMismatchNamed { routine, .. }
            | Error::CollectiveOrder { routine, .. }
            | Error::InvalidArgument { routine, .. }
            | Error::PeerFinalized { routine, .. }
            | Error::PeFailed { routine, .. }
            | Error::WaitAfterFinalize { routine, .. }
            | Error::LockHolderFinalized { routine, .. }
            | Error::RepeatedPe { routine, .. }
            | Error::PeGone { routine, .. }
            | Error::Transport { routine, .. } => routine,
        }
    }
}

/// Names the routine of a lower layer's error, where the routine is known.
pub(crate) trait At {
    /// The result, its error (if any) reported under `routine`.
    fn at(self, routine: &'static str) -> Self;
}

impl<T> At for Result<T> {
    #[inline(always)]
    fn at(self, routine: &'static str) -> Self {
        self.map_err(|e| e.at(routine))
    }
}

/// How a PE left the job before the others: the image status Coarray Fortran reports as
/// stopped (normal termination) or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Departure {
    /// It entered `shmem_finalize` (normal termination); its memory stays readable on
    /// shared memory.
    Finalized,
    /// Its process is gone without finalizing (`crate::ft`).
    Failed,
}

impl std::fmt::Display for Departure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Departure::Finalized => "finalized",
            Departure::Failed => "failed",
        })
    }
}

/// " (n members are missing)" when a synchronization found more than one departed.
struct Missing(usize);
impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            0 | 1 => Ok(()),
            n => write!(f, " ({n} members are missing)"),
        }
    }
}

/// Why nobody can end a user wait: the PEs that finalized, and those that wait too.
struct Nobody {
    first: usize,
    finalized: usize,
    waiting: usize,
}
impl std::fmt::Display for Nobody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Nobody {
            first,
            finalized,
            waiting,
        } = *self;
        if waiting == 0 {
            return write!(f, "every other PE has called shmem_finalize");
        }
        write!(f, "PE {first} ")?;
        if finalized > 1 {
            write!(f, "and {} other PE(s) ", finalized - 1)?;
        }
        write!(
            f,
            "called shmem_finalize (or died), and the {waiting} other PE(s) are stuck in waits of their own"
        )
    }
}

/// " (PE n)" for a transport error aimed at a PE.
struct Peer(Option<usize>);
impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(pe) => write!(f, " (PE {pe})"),
            None => Ok(()),
        }
    }
}

/// ": the network says <status>" when the network library gave one (which library is in
/// the error's `what`).
struct Status<'a>(&'a str);
impl std::fmt::Display for Status<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, ": the network says {:?}", self.0)
        }
    }
}

/// Displays a byte count both exactly and in binary units.
struct Bytes(usize);
impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 < 1024 {
            write!(f, "{} bytes", self.0)
        } else {
            write!(f, "{} bytes ({})", self.0, show_size(self.0))
        }
    }
}

/// Errors of `init`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    /// A `SHMEM_*` variable does not parse.
    #[error("shmem_init: {0}")]
    Config(#[from] rshmem_util::ConfigError),
    /// The launcher protocol failed.
    #[error("shmem_init: bootstrap failed: {0}")]
    Boot(#[from] rshmem_boot::BootError),
    /// A system call failed while setting up symmetric memory.
    #[error("shmem_init: {what}: {err}")]
    Os {
        /// What was being done.
        what: String,
        /// The OS error.
        err: std::io::Error,
    },
    /// A collective algorithm variable names no usable algorithm.
    #[error("shmem_init: {0}")]
    Algorithm(String),
    /// Another PE could not be reached.
    #[error("shmem_init: {0}")]
    Topology(String),
    /// The network transport could not start (UCX missing or failing).
    #[error("shmem_init: {0}")]
    Transport(String),
    /// `init` after the runtime was finalized under a launcher (which has released this
    /// PE) or with shared globals.
    #[error("shmem_init: OpenSHMEM was already finalized in this process; it cannot be initialized again under a launcher or with symmetric global variables (finalize only once, at the end)")]
    Reinit,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lower_layers_error_takes_the_callers_routine_once() {
        let e = Error::Transport {
            routine: UNNAMED,
            pe: Some(3),
            what: "a UCX transfer failed",
            status: "",
        };
        let named: Result<()> = Err(e);
        let named = named.at("shmem_putmem").at("shmem_barrier_all");
        assert_eq!(
            named.unwrap_err().to_string(),
            "shmem_putmem: a UCX transfer failed (PE 3)"
        );
    }
}
