//! The error type of every fallible call.

use std::ops::Range;

/// Result of an rshmem call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong. Every variant names the OpenSHMEM routine at fault (its C name, e.g.
/// `shmem_put`), so messages read the same from Rust and from C.
///
/// Argument errors (bounds, PE numbers, lengths) are detected before anything is sent,
/// so a failed call has no effect.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// [`Shmem::init`](crate::Shmem::init) while another [`Shmem`](crate::Shmem) guard is
    /// live in this process.
    #[error("{routine}: OpenSHMEM is already initialized by a live rshmem::Shmem guard in this process; pass that guard around (by reference) instead of initializing twice")]
    AlreadyInitialized {
        /// The routine.
        routine: &'static str,
    },
    /// Starting the runtime failed (configuration, launcher, shared memory).
    #[error(transparent)]
    Init(#[from] rshmem_core::InitError),
    /// Elements `range` of an object of `len` elements were addressed.
    #[error("{routine}: argument {arg}: elements {}..{} are out of bounds for length {len}", range.start, range.end)]
    OutOfBounds {
        /// The routine.
        routine: &'static str,
        /// Which argument (`dest`, `source`, `ivars`...).
        arg: &'static str,
        /// Length of the object, in elements.
        len: usize,
        /// The elements addressed (the end saturates at `usize::MAX`).
        range: Range<usize>,
    },
    /// A PE number not below the number of PEs.
    #[error("{routine}: PE {pe} is out of range (valid PEs are 0 to {})", npes.saturating_sub(1))]
    PeOutOfRange {
        /// The routine.
        routine: &'static str,
        /// The PE passed.
        pe: usize,
        /// Number of PEs.
        npes: usize,
    },
    /// A slice argument whose length must match another's.
    #[error("{routine}: argument {arg} has {got} elements but {expected} are required")]
    LengthMismatch {
        /// The routine.
        routine: &'static str,
        /// Name of the argument.
        arg: &'static str,
        /// Elements required.
        expected: usize,
        /// Elements passed.
        got: usize,
    },
    /// [`SymLock::lock`](crate::SymLock::lock) on a lock this PE already holds
    /// (OpenSHMEM locks are not reentrant; waiting would deadlock).
    #[error("{routine}: this PE already holds the lock; OpenSHMEM locks are not reentrant")]
    LockHeld {
        /// The routine.
        routine: &'static str,
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
    /// A use that the thread level provided at initialization does not allow: a call
    /// from a thread other than the initializing one under
    /// [`ThreadLevel::Single`](crate::ThreadLevel::Single) or
    /// [`Funneled`](crate::ThreadLevel::Funneled), or a [`Shared`](crate::Shared)
    /// context below [`Multiple`](crate::ThreadLevel::Multiple).
    #[error("{routine}: {what} needs thread level {required:?} or higher, but {provided:?} was provided (initialize with Shmem::init_thread(ThreadLevel::{required:?}))")]
    ThreadLevel {
        /// The routine.
        routine: &'static str,
        /// What needed the higher level.
        what: &'static str,
        /// The lowest level that allows it.
        required: rshmem_core::ThreadLevel,
        /// The level provided.
        provided: rshmem_core::ThreadLevel,
    },
    /// A PE taking part in a collective or wait died without finalizing (killed, or
    /// exited early). With `SHMEM_FAULT_TOLERANT=1` the job goes on: see
    /// [`Shmem::failed_pes`](crate::Shmem::failed_pes) and
    /// [`TeamRef::survivors`](crate::TeamRef::survivors).
    #[error("{routine}: PE {pe} failed (it died without calling shmem_finalize) while PE {waiter} waits for it")]
    PeFailed {
        /// The routine that waited.
        routine: &'static str,
        /// The failed PE (world number).
        pe: usize,
        /// This PE.
        waiter: usize,
    },
    /// An error reported by the runtime (heap exhausted, unreachable PE, collective
    /// arguments that differ between PEs under `SHMEM_DEBUG=1`, ...), as
    /// [`CoreError`](crate::CoreError).
    #[error(transparent)]
    Core(rshmem_core::Error),
}

impl From<rshmem_core::Error> for Error {
    fn from(e: rshmem_core::Error) -> Self {
        match e {
            rshmem_core::Error::PeOutOfRange {
                routine, pe, npes, ..
            } if pe >= 0 => Error::PeOutOfRange {
                routine,
                pe: pe as usize,
                npes,
            },
            rshmem_core::Error::PeFailed {
                routine,
                pe,
                waiter,
            } => Error::PeFailed {
                routine,
                pe,
                waiter,
            },
            rshmem_core::Error::InvalidArgument {
                routine,
                arg,
                reason,
            } => Error::InvalidArgument {
                routine,
                arg,
                reason,
            },
            e => Error::Core(e),
        }
    }
}
