//! A small safe layer over libfabric (OFI), loaded at run time: the building block of
//! rshmem's libfabric transport (issue 30), beside `rshmem-ucx`.
//!
//! One [`Ofi`] per process opens a provider (`tcp;ofi_rxm`, `sockets`, `cxi`, `efa`, ...):
//! its fabric, a thread-safe domain and one address vector shared by every [`Endpoint`]
//! (reliable datagram, `FI_EP_RDM`, with `FI_RMA | FI_ATOMIC`). Memory is registered as
//! [`Region`]s whose [`RemoteKey`] (key, base address, length) and an endpoint's
//! [`Endpoint::name`] travel to peers as bytes; a peer inserts the name ([`Ofi::insert`])
//! and gets an [`Addr`]. Operations take remote *virtual* addresses whatever the provider's
//! memory-registration mode (the crate turns them into offsets where the provider wants
//! those, and checks them against the key's range).
//!
//! # Loading libfabric at run time
//!
//! `libfabric.so.1` is opened with `dlopen` by [`Ofi::open`], not linked, so building needs
//! neither libfabric nor its headers. libfabric exports six functions (`fi_getinfo`,
//! `fi_freeinfo`, `fi_dupinfo`, `fi_fabric`, `fi_strerror`, `fi_version`), looked up at the
//! symbol versions whose struct layouts `src/bindings.rs` describes (written by hand from the
//! 1.17 headers and checked against them by a unit test where the headers are installed);
//! every other call goes through the operation tables of the objects, as the headers' inline
//! functions do. The API version asked for is the library's own, at most 1.17. Tests that
//! need libfabric are skipped (saying so) where it is missing, unless `RSHMEM_REQUIRE_OFI=1`.
//!
//! # Completion: counters
//!
//! Each endpoint has a write counter (puts, posted atomics) and a read counter (gets,
//! fetching atomics), bound with `FI_WRITE` / `FI_READ`, and counts what it issued; errors
//! go to a completion queue bound with `FI_SELECTIVE_COMPLETION` (successful operations
//! write no entries). [`Endpoint::quiet`] waits until both counters reach what was issued,
//! as Sandia OpenSHMEM does; with `FI_DELIVERY_COMPLETE` (asked for, see
//! [`Ofi::delivery_complete`]) the writes are then visible at their targets. Where the
//! provider serves a read after earlier writes to the same peer ([`Ofi::flushes_by_read`]),
//! only the first put to a peer since the last quiet completes at delivery: later ones
//! complete once sent, and quiet first reads one byte back from each such peer. Blocking
//! operations wait the same way, so they also complete the endpoint's earlier non-blocking
//! operations of their kind. A failed operation counts as completed and makes the wait
//! return the error.
//!
//! # Messages
//!
//! Where the provider has them in order ([`Ofi::ordered_messages`]: `FI_MSG` with
//! `FI_ORDER_SAS`), an endpoint can receive messages into slots it posts, each handed to a
//! handler by the thread that reads its completion queue, one at a time in arrival order
//! ([`Endpoint::receive_messages`]), and send them ([`Endpoint::send_message`]: injected or
//! bounced, counted as writes). rshmem carries its counts and a collective's small data
//! this way, where a put, a fence and an atomic went before.
//!
//! Where a write can carry 8 bytes to its target's completion queue
//! ([`Ofi::writes_with_data`]: remote CQ data; not `sockets`, which hands them on the next
//! message's receive instead), [`Endpoint::put_with_data_nb`] writes them, and the
//! receiving endpoint's handler gets them ([`Arrival::Data`]) once the written bytes are in
//! place: rshmem pushes a collective's data longer than a message this way, with its count.
//! No provider here promises the order of those completions against each other or against
//! messages (`FI_ORDER_WAW`, `FI_ORDER_SAW`), so the user of this crate orders them.
//!
//! # Threads
//!
//! The domain is opened `FI_THREAD_SAFE`: [`Ofi`], [`Region`] and [`Progress`] are
//! `Send + Sync`. An [`Endpoint`] counts its operations in plain cells, so it is `Send` but
//! not `Sync`: one thread (or one lock holder) issues on it at a time, which keeps "the
//! counter reached what was issued" exact. Give each thread or communication context its
//! own endpoint:
//!
//! ```compile_fail
//! fn needs_sync<T: Sync>(_: T) {}
//! let ofi = rshmem_ofi::Ofi::open().unwrap();
//! needs_sync(ofi.endpoint().unwrap()); // an Endpoint cannot be shared between threads
//! ```
//! ```no_run
//! fn needs_send<T: Send>(_: T) {}
//! let ofi = rshmem_ofi::Ofi::open().unwrap();
//! needs_send(ofi.endpoint().unwrap()); // but it can move to another thread
//! ```
//!
//! # Progress
//!
//! Providers with manual data progress ([`Ofi::manual_progress`]: tcp, udp) move data only
//! inside calls on the endpoint involved, the TARGET's included: a [`ProgressThread`] serves
//! an endpoint's peers while its owner computes. Where the completion queue has a wait fd
//! ([`Ofi::endpoint_with_wait_fd`]; `tcp;ofi_rxm` has one) the thread sleeps on it, and a
//! thread that waits anyway takes it over ([`Driver::drive`]: it drives the endpoint and
//! naps on the fd, and the progress thread is not woken for what it serves); elsewhere the
//! thread sleeps in `fi_cq_sread`, and [`Progress::progress`] lets waiting threads drive the
//! endpoint too. Other endpoints ([`Ofi::endpoint`]) have no wait object: nothing sleeps
//! on them, and under `tcp;ofi_rxm` a wait object puts the endpoint's sockets in an epoll
//! set, whose callbacks every arriving segment pays.
//! Providers with automatic progress run their own thread instead (`sockets`: it spins for
//! `FI_SOCKETS_PE_WAITTIME`, 10 ms by default, after each operation, which on a machine
//! whose cores the PEs fill makes every round trip milliseconds long unless that is set
//! to 0).

#![warn(missing_docs)]
#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod bindings;
#[allow(unsafe_code)]
mod domain;
#[allow(unsafe_code)]
mod endpoint;
#[allow(unsafe_code)]
mod library;
#[allow(unsafe_code)]
mod progress;

pub use domain::{Addr, Ofi, OpenOptions, Region, RemoteKey, API_VERSION, DEFAULT_LIBRARY};
pub use endpoint::{AmoBuffer, Arrival, ArrivalHandler, Endpoint, Issued};
pub use progress::{Driver, Driving, Progress, ProgressThread};

use bindings as sys;
use std::ffi::c_int;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum OfiError {
    /// The libfabric library could not be opened or lacks a needed function.
    #[error(
        "cannot load the libfabric library {library} ({reason}); the OFI transport needs \
         libfabric: install it (Debian/Ubuntu: `apt-get install libfabric1`; RHEL/Fedora: \
         `dnf install libfabric`)"
    )]
    Load {
        /// The library name given to `dlopen`.
        library: String,
        /// The `dlopen`/`dlsym` error.
        reason: String,
    },
    /// No provider matches (`fi_getinfo` found none).
    #[error(
        "no libfabric provider {wanted} offers {needs} (`fi_info -t FI_EP_RDM -c \
         'FI_RMA|FI_ATOMIC'` lists those that do)"
    )]
    NoProvider {
        /// The provider asked for (option or `FI_PROVIDER`).
        wanted: String,
        /// What this crate needs.
        needs: &'static str,
    },
    /// A libfabric routine failed.
    #[error("{routine} failed: {message} (error {code})")]
    Call {
        /// The libfabric routine.
        routine: &'static str,
        /// Its (positive) error number.
        code: c_int,
        /// `fi_strerror`'s text.
        message: String,
    },
    /// An operation completed with an error (its completion-queue error entry, if one).
    #[error("{routine}: an operation failed on provider {provider}: {message}")]
    Failed {
        /// The routine of this crate that waited.
        routine: &'static str,
        /// The provider.
        provider: String,
        /// The error entry's text.
        message: String,
    },
    /// The provider lacks something needed.
    #[error("{routine}: provider {provider} does not support {what}")]
    Unsupported {
        /// The routine of this crate.
        routine: &'static str,
        /// The provider.
        provider: String,
        /// What is missing.
        what: String,
    },
    /// The provider kept refusing an operation for longer than the endpoint's patience
    /// ([`Endpoint::set_issue_patience`]): the peer is most likely gone.
    #[error("{routine}: provider {provider} kept refusing the operation: the peer is unreachable")]
    Unreachable {
        /// The libfabric routine.
        routine: &'static str,
        /// The provider.
        provider: String,
    },
    /// A bad argument to a routine of this crate.
    #[error("{routine}: {message}")]
    InvalidArgument {
        /// The routine of this crate.
        routine: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Result of this crate.
pub type Result<T, E = OfiError> = std::result::Result<T, E>;

/// An atomic operand's type: its size and how the target combines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicType {
    /// `int32_t`
    I32,
    /// `uint32_t`
    U32,
    /// `int64_t`
    I64,
    /// `uint64_t`
    U64,
    /// `float`
    F32,
    /// `double`
    F64,
}

impl AtomicType {
    /// Every type.
    pub const ALL: [AtomicType; 6] = [
        AtomicType::I32,
        AtomicType::U32,
        AtomicType::I64,
        AtomicType::U64,
        AtomicType::F32,
        AtomicType::F64,
    ];

    /// Size in bytes (4 or 8).
    pub fn size(self) -> usize {
        match self {
            AtomicType::I32 | AtomicType::U32 | AtomicType::F32 => 4,
            AtomicType::I64 | AtomicType::U64 | AtomicType::F64 => 8,
        }
    }

    fn fi(self) -> c_int {
        match self {
            AtomicType::I32 => sys::FI_INT32,
            AtomicType::U32 => sys::FI_UINT32,
            AtomicType::I64 => sys::FI_INT64,
            AtomicType::U64 => sys::FI_UINT64,
            AtomicType::F32 => sys::FI_FLOAT,
            AtomicType::F64 => sys::FI_DOUBLE,
        }
    }
}

/// An atomic operation (`enum fi_op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `*r += v` (`FI_SUM`)
    Sum,
    /// `*r &= v` (`FI_BAND`)
    Band,
    /// `*r |= v` (`FI_BOR`)
    Bor,
    /// `*r ^= v` (`FI_BXOR`)
    Bxor,
    /// `*r = min(*r, v)` (`FI_MIN`)
    Min,
    /// `*r = max(*r, v)` (`FI_MAX`)
    Max,
    /// `*r = v` (`FI_ATOMIC_WRITE`: set when posted, swap when fetching)
    Write,
    /// read `*r` (`FI_ATOMIC_READ`, fetching only)
    Read,
    /// `if *r == c { *r = v }` (`FI_CSWAP`, compare form only)
    CompareSwap,
}

impl AtomicOp {
    /// Every operation.
    pub const ALL: [AtomicOp; 9] = [
        AtomicOp::Sum,
        AtomicOp::Band,
        AtomicOp::Bor,
        AtomicOp::Bxor,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Write,
        AtomicOp::Read,
        AtomicOp::CompareSwap,
    ];

    fn fi(self) -> c_int {
        match self {
            AtomicOp::Sum => sys::FI_SUM,
            AtomicOp::Band => sys::FI_BAND,
            AtomicOp::Bor => sys::FI_BOR,
            AtomicOp::Bxor => sys::FI_BXOR,
            AtomicOp::Min => sys::FI_MIN,
            AtomicOp::Max => sys::FI_MAX,
            AtomicOp::Write => sys::FI_ATOMIC_WRITE,
            AtomicOp::Read => sys::FI_ATOMIC_READ,
            AtomicOp::CompareSwap => sys::FI_CSWAP,
        }
    }
}

/// The form of an atomic: posted (`fi_atomic`), fetching (`fi_fetch_atomic`) or compare
/// (`fi_compare_atomic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicKind {
    /// No result returned.
    Post,
    /// Returns the previous value.
    Fetch,
    /// Compare-and-swap, returns the previous value.
    Compare,
}

impl AtomicKind {
    /// Every form.
    pub const ALL: [AtomicKind; 3] = [AtomicKind::Post, AtomicKind::Fetch, AtomicKind::Compare];

    /// Whether `op` exists in this form.
    pub fn allows(self, op: AtomicOp) -> bool {
        match self {
            AtomicKind::Post => !matches!(op, AtomicOp::Read | AtomicOp::CompareSwap),
            AtomicKind::Fetch => op != AtomicOp::CompareSwap,
            AtomicKind::Compare => op == AtomicOp::CompareSwap,
        }
    }

    fn flags(self) -> u64 {
        match self {
            AtomicKind::Post => 0,
            AtomicKind::Fetch => sys::FI_FETCH_ATOMIC,
            AtomicKind::Compare => sys::FI_COMPARE_ATOMIC,
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests;
