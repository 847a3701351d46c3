//! The UCX transport: PEs this process does not map are reached through UCX's UCP layer
//! (`rshmem-ucx`, which loads `libucp.so.0` at run time).
//!
//! - Each PE registers its segments (the used part of its slot, and its shared globals)
//!   and publishes, through the bootstrap's key-value store, the address of a *service*
//!   worker, the packed remote keys and the segments' base addresses.
//! - The service worker is driven by a progress thread that sleeps on the worker's event
//!   file descriptor: on TCP, UCX carries gets and atomics as messages that the target
//!   must handle, and a PE that computes without calling the library still serves them.
//!   An endpoint's wire-up is completed (a flush) when it is made, so operations this PE
//!   posts leave at once rather than wait in UCX's queue for its next progress call.
//! - Each context has its own worker (made on the context's first UCX operation, pooled
//!   when the context is destroyed, with its endpoints), so threads on private contexts
//!   share nothing; endpoints to the peers' service workers are made on first use.
//! - The runtime's raised counts (syncs, channels, pushed chunks: [`Raise`]) leave from the
//!   service worker itself, on one endpoint per peer made at wire-up, so that two PEs'
//!   raises to each other share one connection.
//! - Blocking operations wait for local completion; `quiet` is a flush of the context's
//!   worker; `fence` is the worker's fence; non-blocking operations count their
//!   completion in a [`Completion`](super::engine::Completion) from UCX's completion
//!   callback.
//! - Workers are thread-safe (UCX's multi-thread mode), so any waiting thread may drive
//!   every worker's progress.

mod amo;
mod completion;
mod endpoints;
mod raise;
mod rma;
mod setup;

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rshmem_boot::Bootstrap;
use rshmem_ucx::{Driver, Endpoint, ProgressThread, Region, RemoteKey, Ucp, UcxError, Worker};

pub(super) use raise::Raise;

use crate::error::{Error, InitError, Result};
use crate::transport::{Seg, SymAddr};

/// What this PE knows of a peer it reaches through UCX.
#[derive(Debug)]
struct Peer {
    /// The peer's service worker address.
    worker: Vec<u8>,
    /// Packed remote keys of its registered regions ([`HEAP`], [`DATA`],
    /// [`RUNTIME_AREA`]; empty: no such region).
    rkeys: [Vec<u8>; REGIONS],
    /// Where each region's segment starts in its address space.
    base: [u64; REGIONS],
    /// Set once the peer is known to have left the job after finalize
    /// ([`Ucx::mark_left`]): its failed endpoint is then no error of this PE's quiet.
    left: AtomicBool,
    /// Set once this PE knows the peer entered `shmem_finalize` ([`Ucx::mark_finalized`]):
    /// its connection failing later means it left after finalize, not that it died.
    finalized: AtomicBool,
}

/// An endpoint to a peer's service worker, with the peer's remote keys unpacked for it.
#[derive(Debug)]
struct Conn {
    /// Declared before `ep`: keys are destroyed before their endpoint.
    rkeys: [Option<RemoteKey>; REGIONS],
    ep: Endpoint,
    /// Where the PE's heap segment (runtime area and heap) is mapped in this process, when
    /// UCX allocated it and reaches it through shared memory (`ucp_rkey_ptr`); 0 otherwise.
    /// Transfers there are copies, as on rshmem's own shared memory.
    mapped: usize,
}

impl Conn {
    /// `addr` as mapped in this process ([`Conn::mapped`]), if it is.
    #[inline(always)]
    fn at(&self, addr: SymAddr) -> Option<*mut u8> {
        (addr.seg == Seg::Heap && self.mapped != 0).then(|| (self.mapped + addr.off) as *mut u8)
    }
}

/// A context's worker and its endpoints (made on first use).
#[derive(Debug)]
pub(crate) struct CtxWorker {
    conns: Box<[OnceLock<Conn>]>,
    worker: Arc<Worker>,
    /// Operations issued that may still be incomplete at their target (puts, posted
    /// atomics, non-blocking transfers); gets and fetching atomics are complete when they
    /// return. Counted so that a quiet with nothing new to complete costs no flush (over
    /// TCP a flush is a round trip, and a barrier quiets twice).
    issued: AtomicU64,
    /// The value of `issued` read before the last flush that completed.
    flushed: AtomicU64,
}

impl CtxWorker {
    #[inline(always)]
    fn note_issued(&self) {
        self.issued.fetch_add(1, Ordering::Release);
    }

    /// Flushes the worker if something was issued since the last completed flush; false if
    /// there was nothing to do. A flush that began after this PE's last issue covers it
    /// (`issued` is read first).
    fn flush_if_issued(&self) -> std::result::Result<bool, rshmem_ucx::UcxError> {
        let issued = self.issued.load(Ordering::Acquire);
        if self.flushed.load(Ordering::Acquire) >= issued {
            return Ok(false);
        }
        self.worker.flush()?;
        self.flushed.fetch_max(issued, Ordering::AcqRel);
        Ok(true)
    }
}

/// A context's worker, if it has one (null until its first UCX operation).
#[derive(Debug)]
pub(crate) struct CtxSlot(AtomicPtr<CtxWorker>);

impl CtxSlot {
    pub(crate) const fn new() -> CtxSlot {
        CtxSlot(AtomicPtr::new(std::ptr::null_mut()))
    }
}

/// The UCX transport of one PE.
#[derive(Debug)]
pub(crate) struct Ucx {
    /// Stopped first, when the transport drops.
    progress: Mutex<Option<ProgressThread>>,
    /// Per PE; `None` for PEs reached through shared memory.
    peers: Box<[Option<Peer>]>,
    /// Every context worker made (owned here; contexts point at them): an append-only list
    /// that waiting threads read without a lock, since they drive every worker between checks.
    workers: boxcar::Vec<Box<CtxWorker>>,
    /// Workers of destroyed contexts, ready for new ones.
    free: Mutex<Vec<*mut CtxWorker>>,
    /// Registered until the transport drops (fields drop in this order).
    _regions: Vec<Region>,
    _service: Arc<Worker>,
    /// Drives the service worker from waiting threads, one at a time.
    service: Driver,
    /// The service worker's own endpoints to the peers' service workers, which carry every
    /// [`Raise`]: a peer's raises to this PE come back on the same connection, so over TCP
    /// each message acknowledges the last one the other way, where raises sent from the
    /// contexts' workers (one connection each way) drew a bare acknowledgement per two
    /// messages (3.0 TCP segments per 2-PE barrier against 2.1; tcpdump). Sent under
    /// [`Driver::exclusive`]; made at wire-up. Its issue counts are unused: a raise is
    /// complete once sent.
    svc: CtxWorker,
    ucp: Arc<Ucp>,
    /// Where the user heap starts in the heap segment (the runtime area is below).
    heap_off: usize,
    /// Whether UCX allocated the heap segment (`Ucx::start`'s `maps_no_peer`).
    direct: bool,
    /// Whether UCX's atomics are CPU atomics (no RDMA adapter's): an atomic on a heap
    /// mapped here ([`Conn::mapped`]) is then a CPU atomic on the mapping, and the job's
    /// node-local atomics need not go through UCX (`Fabric::amo`).
    cpu_atomics: bool,
    /// Bytes of a chunk collectives push in one active message (`setup::push_chunk_for`),
    /// the smallest of every PE's after [`Ucx::connect`].
    push_chunk: usize,
    /// Whether every PE of the job is on this host (`Ucx::start`'s `one_host`).
    one_host: bool,
    /// Whether UCX maps every PE's memory here ([`Ucx::maps_every_pe`]), known to every PE
    /// alike after [`Ucx::connect`].
    maps_every_pe: bool,
    /// Whether some connection maps its PE's heap segment ([`Conn::mapped`]): fences then
    /// complete what went through UCX, since later copies do not queue behind it.
    maps_peer: AtomicBool,
    /// Whether counts are raised by active message ([`Raise`]); off for finalize's last
    /// sync, whose flags must be known delivered before a PE may exit.
    raise_by_message: AtomicBool,
}

// SAFETY: the raw worker pointers (the free list) point into `workers`, which owns them until
// the transport drops; the workers themselves are multi-threaded UCX workers (Sync).
unsafe impl Send for Ucx {}
// SAFETY: as above; the lists are behind mutexes.
unsafe impl Sync for Ucx {}

/// Registered regions of each PE: the user heap, the shared globals, and the runtime area
/// that precedes the heap in the same segment (flags, counters, message buffers: about
/// 1 GiB of address space at the default team count, little of it ever touched, so it is
/// registered on demand rather than pinned).
const REGIONS: usize = 3;
const HEAP: usize = 0;
const DATA: usize = 1;
const RUNTIME_AREA: usize = 2;

/// A region of this PE to register: where its segment starts, where the region starts
/// and ends (offsets in the segment), and whether to register it on demand.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub(crate) base: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) on_demand: bool,
}

/// Longest chunk of a value put in the bootstrap's store (PMI allows 512 characters).
const CHUNK: usize = 500;

pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

pub(super) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Puts `value` under `key` in chunks the store accepts: `key` holds the chunk count.
pub(super) fn put_long(boot: &dyn Bootstrap, key: &str, value: &str) -> Result<(), InitError> {
    let chunks: Vec<&str> = value
        .as_bytes()
        .chunks(CHUNK)
        .map(|c| std::str::from_utf8(c).expect("hex is ASCII"))
        .collect();
    boot.put(key, &chunks.len().to_string())?;
    for (i, c) in chunks.iter().enumerate() {
        boot.put(&format!("{key}.{i}"), c)?;
    }
    Ok(())
}

pub(super) fn get_long(boot: &dyn Bootstrap, pe: usize, key: &str) -> Result<String, InitError> {
    let n: usize = boot.get(pe, key)?.parse().map_err(|_| {
        InitError::Topology(format!(
            "PE {pe} published a malformed network value {key:?}"
        ))
    })?;
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&boot.get(pe, &format!("{key}.{i}"))?);
    }
    Ok(s)
}

/// How long an operation that found its peer gone waits before it reports: the peer most
/// likely exited, and the launcher, which saw how, should be the one to tell.
const PEER_GONE_GRACE: std::time::Duration = std::time::Duration::from_millis(400);

/// UCX statuses that mean the peer's process is gone.
const PEER_GONE: [&str; 3] = [
    "UCS_ERR_ENDPOINT_TIMEOUT",
    "UCS_ERR_CONNECTION_RESET",
    "UCS_ERR_UNREACHABLE",
];

/// Whether `e` says that the peer's process is gone (it exited, or was killed).
pub(crate) fn peer_gone(e: &Error) -> bool {
    matches!(e, Error::Transport { status, .. } if PEER_GONE.contains(status))
}

/// UCX's name for what went wrong, for [`Error::Transport`]; when the peer is gone, after
/// [`PEER_GONE_GRACE`].
fn status_of(e: &UcxError) -> &'static str {
    let peer_gone = matches!(e, UcxError::PeerFailed(_))
        || matches!(e, UcxError::Status { status, .. } if PEER_GONE.contains(&status.name()));
    if peer_gone {
        std::thread::sleep(PEER_GONE_GRACE);
    }
    match e {
        UcxError::Status { status, .. } | UcxError::PeerFailed(status) => status.name(),
        UcxError::Load { .. } => "library not loaded",
        _ => "invalid argument",
    }
}
