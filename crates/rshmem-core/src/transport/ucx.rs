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
//! - Blocking operations wait for local completion; `quiet` is a flush of the context's
//!   worker; `fence` is the worker's fence; non-blocking operations count their
//!   completion in a [`Completion`] from UCX's completion callback.
//! - Workers are thread-safe (UCX's multi-thread mode), so any waiting thread may drive
//!   every worker's progress.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rshmem_boot::Bootstrap;
use rshmem_ucx::{
    AtomicOp, Driver, Driving, Endpoint, FetchOp, Issued, LoadOptions, ProgressThread, Region,
    RemoteKey, Ucp, UcxError, Worker,
};

use super::engine::Completion;
use super::{CtxState, Dir, Seg, SymAddr, Xfer};
use crate::error::{Error, InitError, Result, UNNAMED};
use crate::word::{AmoOp, Word};

/// Longest chunk of a value put in the bootstrap's store (PMI allows 512 characters).
const CHUNK: usize = 500;

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
    ucp: Arc<Ucp>,
    /// Where the user heap starts in the heap segment (the runtime area is below).
    heap_off: usize,
    /// Whether UCX allocated the heap segment (`Ucx::start`'s `maps_no_peer`).
    direct: bool,
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

fn ucx_init_error(what: &str) -> impl FnOnce(UcxError) -> InitError + '_ {
    move |e| InitError::Transport(format!("{what}: {e}"))
}

/// How long an operation that found its peer gone waits before it reports: the peer most
/// likely exited, and the launcher, which saw how, should be the one to tell.
const PEER_GONE_GRACE: std::time::Duration = std::time::Duration::from_millis(400);

/// The active message that raises a runtime counter on its target, after writing the data
/// it carries (a channel's message, a pushed chunk of a collective) into the target's
/// segment: one message where a put, a fence (a round trip over TCP) and a posted atomic
/// (a request and an acknowledgement) went before. Its header is three words: where the data goes and where the count is (as
/// [`SymAddr::to_word`]), and by how much it rises. The target's service worker applies it
/// in its progress call (the progress thread, or a wait that claimed it): the copy, then a
/// release add, so a waiter that sees the count sees the data. Message channels keep two
/// messages in flight and pushed chunks several, each counted on one word: they rely on
/// UCX applying one endpoint's eager active messages in the order sent, which its single
/// active-message lane gives (`UCX_MAX_EAGER_LANES`, 1 unless the user raises it).
/// libfabric carries the same header and data as one message (`transport::ofi`).
pub(super) struct Raise;

impl Raise {
    /// The active-message id.
    const ID: u16 = 1;
    /// The largest payload sent this way; larger puts go by RMA. Over TCP here, UCX moves
    /// an eager active message of 256 KiB-1 MiB at 2.0-2.7 GB/s and a put at 0.2-0.4 GB/s
    /// with TCP's default 8 KiB segments, 0.8-2.3 GB/s with the 64 KiB ones `Ucx::new` sets
    /// (`ucx_perftest -t ucp_am_bw` / `ucp_put_bw`), so the chunks collectives push
    /// (`coll::net`) go this way too; the bound only keeps UCX's reassembly buffer of one
    /// message (the target allocates it) modest.
    const MAX_DATA: usize = 1 << 20;
    /// `dst` when there is no data.
    const NO_DATA: u64 = u64::MAX;

    pub(super) fn header(dst: Option<SymAddr>, sig: SymAddr, by: u64) -> [u8; 24] {
        let dst = dst.map_or(Self::NO_DATA, SymAddr::to_word);
        let mut h = [0u8; 24];
        for (chunk, w) in h.chunks_exact_mut(8).zip([dst, sig.to_word(), by]) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        h
    }

    /// The handler of this PE's service worker, over this PE's `segments`.
    pub(super) fn handler(segments: &[Segment; REGIONS]) -> rshmem_ucx::AmHandler {
        let heap = (
            segments[HEAP].base,
            segments[RUNTIME_AREA].start,
            segments[HEAP].end,
        );
        let data = (
            segments[DATA].base,
            segments[DATA].start,
            segments[DATA].end,
        );
        // The local address of `len` bytes at `a`, if inside its segment's registered part.
        let local = move |a: SymAddr, len: usize| -> Option<*mut u8> {
            let (base, start, end) = match a.seg {
                Seg::Heap => heap,
                Seg::Data => data,
            };
            let fits = a.off >= start && a.off.checked_add(len)? <= end;
            fits.then_some((base + a.off) as *mut u8)
        };
        Box::new(move |h: &[u8], d: &[u8]| {
            let word = |i: usize| {
                h.get(i * 8..i * 8 + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            };
            let (Some(dst), Some(sig), Some(by)) = (word(0), word(1), word(2)) else {
                return Raise::malformed("a short header");
            };
            if dst != Self::NO_DATA {
                let Some(p) = local(SymAddr::from_word(dst), d.len()) else {
                    return Raise::malformed("data outside the segments");
                };
                // SAFETY: `p` is `d.len()` bytes inside this PE's mapped segment; the
                // sender's protocol (a channel's credit, a buffer the receiver freed) keeps
                // every other access off the range until the count below is seen.
                unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), p, d.len()) };
            }
            let Some(p) =
                local(SymAddr::from_word(sig), 8).filter(|p| p.cast::<u64>().is_aligned())
            else {
                return Raise::malformed("a count outside the runtime area");
            };
            // SAFETY: an aligned runtime word of this PE's mapped segment, which every
            // writer updates atomically (one writer raises it; its owner reads and resets).
            unsafe { std::sync::atomic::AtomicU64::from_ptr(p.cast()) }
                .fetch_add(by, Ordering::Release);
        })
    }

    /// A message no rshmem PE of this job sends: the job's PEs disagree on the layout.
    #[cold]
    fn malformed(what: &str) {
        eprintln!("rshmem: a peer's raise through the network carried {what}; aborting");
        std::process::abort();
    }
}

/// UCX's TCP segment size unless the user sets one (see `Ucx::new`).
const TCP_SEGMENT: &str = "64k";

/// How long finalize's flushes of a worker wait for peers' acknowledgements (after the
/// last sync, which every PE passed): a live peer answers within milliseconds, even on an
/// oversubscribed host; one that exited may never answer.
const TEARDOWN_FLUSH: std::time::Duration = std::time::Duration::from_secs(5);

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

/// Whether `UCX_TLS` (unset: every transport) lets UCX use its shared-memory transports.
fn shm_transports_allowed(tls: Option<&str>) -> bool {
    transports_allowed(
        tls,
        &["sm", "shm", "mm", "posix", "sysv"],
        &["sm", "shm", "mm"],
    )
}

/// Whether the user set any of these environment variables.
fn any_set(vars: &[&str]) -> bool {
    vars.iter().any(|v| std::env::var_os(v).is_some())
}

/// Whether `UCX_TLS` lets UCX use TCP.
fn tcp_allowed(tls: Option<&str>) -> bool {
    transports_allowed(tls, &["tcp"], &["tcp"])
}

/// Whether `UCX_TLS` allows a transport it would name among `names` (listed) or
/// `excluded_by` (in a `^` list).
fn transports_allowed(tls: Option<&str>, names: &[&str], excluded_by: &[&str]) -> bool {
    let Some(tls) = tls.map(str::trim).filter(|t| !t.is_empty()) else {
        return true;
    };
    match tls.strip_prefix('^') {
        // An exclusion list: allowed unless it names them.
        Some(excluded) => !excluded.split(',').any(|t| excluded_by.contains(&t.trim())),
        None => tls
            .split(',')
            .any(|t| t.trim() == "all" || names.contains(&t.trim())),
    }
}

impl Ucx {
    /// Loads UCX, registers `segments` (indexed by [`Seg`]; length 0: none), starts the
    /// service worker and its progress thread, and publishes what peers need. Every PE
    /// of a job that uses UCX calls it, then [`Ucx::connect`] after the store's fence.
    ///
    /// `one_host`: every PE of the job is on this host, so UCX needs no network device:
    /// it gets the loopback device alone (`UCX_NET_DEVICES=lo`) unless the user chose
    /// devices, and its unauthenticated TCP listeners are not reachable from outside.
    ///
    /// `maps_no_peer`: no other PE maps this PE's heap segment (every peer is reached through
    /// UCX). The segment (runtime area and heap, which hold nothing yet) is then allocated by
    /// UCX in place, where UCX may use its shared-memory transports: they reach memory UCX
    /// allocated one-sidedly (a put is a copy, an atomic a CPU atomic), while memory it only
    /// registered costs a system call per transfer and the target's progress per atomic.
    /// Where UCX cannot allocate it (its shared memory too small), it is registered as usual.
    pub(crate) fn start(
        boot: &dyn Bootstrap,
        library: &str,
        heap_off: usize,
        segments: [Segment; REGIONS],
        one_host: bool,
        maps_no_peer: bool,
    ) -> Result<Ucx, InitError> {
        let loopback = one_host && std::env::var_os("UCX_NET_DEVICES").is_none();
        let config: &[(&str, &str)] = if loopback {
            &[("NET_DEVICES", "lo")]
        } else {
            &[]
        };
        // Endpoints ask UCX to report a dead peer, which its shared-memory transports
        // (posix, sysv) offer only with their error handling on: without it a job
        // restricted to them (UCX_TLS=sm,self) has no route at all (UCS_ERR_UNREACHABLE).
        // Unless the user chose, turn it on where UCX_TLS lets them be used (UCX warns about
        // a setting no transport in use reads).
        let user_chose = any_set(&[
            "UCX_MM_ERROR_HANDLING",
            "UCX_POSIX_ERROR_HANDLING",
            "UCX_SYSV_ERROR_HANDLING",
        ]);
        let tls = std::env::var("UCX_TLS").ok();
        let mut if_known: Vec<(&str, &str)> = Vec::new();
        if !user_chose && shm_transports_allowed(tls.as_deref()) {
            if_known.push(("MM_ERROR_HANDLING", "y"));
        }
        // TCP sends bulk data in segments of 8 KiB by default, each one message the target's
        // progress handles: with PEs sharing cores a segment can cost a wake-up, and a 1 MiB
        // put took 1.2-3.8 ms where 64 KiB segments (the receive side's default size) take
        // 0.32-0.72, a 4-PE broadcast of 1 MiB 4.4-5.2 ms against 1.8-2.1 (`docs/results/
        // osu-ucx.md`); small messages are unchanged. UCX applies the name to each transport
        // that has it (TCP alone, in UCX 1.13) and warns where a worker opened none, so only
        // where TCP is allowed and the user chose neither the devices nor a segment size.
        let tcp_chosen = any_set(&[
            "UCX_TCP_TX_SEG_SIZE",
            "UCX_TCP_RX_SEG_SIZE",
            "UCX_NET_DEVICES",
        ]);
        if !tcp_chosen && tcp_allowed(tls.as_deref()) {
            if_known.push(("TX_SEG_SIZE", TCP_SEGMENT));
        }
        let ucp = Ucp::load_with(&LoadOptions {
            library,
            config,
            if_known: &if_known,
        })
        .map_err(|e| InitError::Transport(e.to_string()))?;
        let service = Arc::new(
            ucp.worker()
                .map_err(ucx_init_error("cannot create the UCX service worker"))?,
        );
        // Before the worker's address is published: no peer can send a raise yet.
        service
            .set_am_handler(Raise::ID, Raise::handler(&segments))
            .map_err(ucx_init_error("cannot set the UCX active-message handler"))?;
        let mut regions = Vec::new();
        let mut desc = Vec::new();
        // The heap segment in one allocation: [runtime area start, heap end).
        let allocated = if maps_no_peer && shm_transports_allowed(tls.as_deref()) {
            let (rt, heap) = (segments[RUNTIME_AREA], segments[HEAP]);
            debug_assert_eq!((rt.base, rt.end), (heap.base, heap.start));
            let (addr, len) = ((rt.base + rt.start) as *mut u8, heap.end - rt.start);
            // SAFETY: the segment is this PE's own page-aligned slot of the runtime's
            // reservation, which nobody else maps and which holds nothing yet.
            unsafe { ucp.mem_alloc_fixed(addr, len) }
                .ok()
                .and_then(|r| {
                    let key = r.pack_rkey().ok()?;
                    regions.push(r);
                    Some(hex(&key))
                })
        } else {
            None
        };
        let direct = allocated.is_some();
        for (i, seg) in segments.into_iter().enumerate() {
            let Segment {
                base,
                start,
                end,
                on_demand,
            } = seg;
            if let (Some(key), HEAP | RUNTIME_AREA) = (&allocated, i) {
                desc.push(format!("{base:x}:{key}"));
                continue;
            }
            if end <= start {
                desc.push(format!("{base:x}:"));
                continue;
            }
            let (addr, len) = ((base + start) as *mut u8, end - start);
            let r = if on_demand {
                ucp.mem_map_on_demand(addr, len)
            } else {
                ucp.mem_map(addr, len)
            }
            .map_err(ucx_init_error(
                "cannot register the symmetric memory with UCX",
            ))?;
            let key = r
                .pack_rkey()
                .map_err(ucx_init_error("cannot pack a UCX remote key"))?;
            desc.push(format!("{base:x}:{}", hex(&key)));
            regions.push(r);
        }
        let addr = service
            .address()
            .map_err(ucx_init_error("cannot read the UCX worker address"))?;
        put_long(boot, "ucx-worker", &hex(&addr))?;
        put_long(boot, "ucx-segs", &desc.join(","))?;
        let progress = ProgressThread::start(Arc::clone(&service))
            .map_err(ucx_init_error("cannot start the UCX progress thread"))?;
        let driver = progress.driver();
        Ok(Ucx {
            peers: Box::new([]),
            workers: boxcar::Vec::new(),
            free: Mutex::new(Vec::new()),
            progress: Mutex::new(Some(progress)),
            _regions: regions,
            _service: service,
            service: driver,
            ucp,
            heap_off,
            direct,
            maps_peer: AtomicBool::new(false),
            raise_by_message: AtomicBool::new(true),
        })
    }

    /// Reads the published values of the PEs `remote` marks (after the store's fence).
    pub(crate) fn connect(
        &mut self,
        boot: &dyn Bootstrap,
        remote: &[bool],
    ) -> Result<(), InitError> {
        let mut peers = Vec::with_capacity(remote.len());
        for (pe, &r) in remote.iter().enumerate() {
            if !r {
                peers.push(None);
                continue;
            }
            let bad = |what: &str| {
                InitError::Topology(format!("PE {pe} published a malformed UCX {what}"))
            };
            let worker =
                unhex(&get_long(boot, pe, "ucx-worker")?).ok_or_else(|| bad("worker address"))?;
            let segs = get_long(boot, pe, "ucx-segs")?;
            let mut rkeys: [Vec<u8>; REGIONS] = Default::default();
            let mut base = [0u64; REGIONS];
            for (i, d) in segs.split(',').enumerate().take(REGIONS) {
                let (b, k) = d.split_once(':').ok_or_else(|| bad("segment"))?;
                base[i] = u64::from_str_radix(b, 16).map_err(|_| bad("segment base"))?;
                rkeys[i] = unhex(k).ok_or_else(|| bad("remote key"))?;
            }
            peers.push(Some(Peer {
                worker,
                rkeys,
                base,
                left: AtomicBool::new(false),
                finalized: AtomicBool::new(false),
            }));
        }
        self.peers = peers.into_boxed_slice();
        Ok(())
    }

    /// Connects the context's worker to every peer now, wire-up included (at init, for
    /// the default context, while every peer is alive and serving).
    pub(crate) fn wire_up(&self, ctx: &CtxState) -> Result<()> {
        let w = self.worker(ctx)?;
        for pe in (0..self.peers.len()).filter(|&pe| self.peers[pe].is_some()) {
            if w.conns[pe].get().is_none() {
                self.open(w, pe)?;
            }
        }
        Ok(())
    }

    /// The context's worker, made (or taken from the pool) on first use.
    #[inline]
    fn worker(&self, ctx: &CtxState) -> Result<&CtxWorker> {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: workers live in `workers` until the transport drops, which no
            // operation races with.
            return Ok(unsafe { &*p });
        }
        self.attach(ctx)
    }

    #[cold]
    fn attach(&self, ctx: &CtxState) -> Result<&CtxWorker> {
        let reused = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let w = match reused {
            Some(w) => w,
            None => {
                let worker = self.ucp.worker().map_err(|e| Error::Transport {
                    routine: UNNAMED,
                    pe: None,
                    what: "cannot create a UCX worker for the context",
                    status: status_of(&e),
                })?;
                // Its waits serve the service worker where a wait left it out of the
                // progress thread's set: a peer blocked towards this PE likewise may wait
                // for it (a 2-PE 64 KiB reduction, gets and puts both ways, took 390-440 us
                // instead of 250-310 without this).
                worker.serve_while_blocked(&self.service);
                let worker = Arc::new(worker);
                let i = self.workers.push(Box::new(CtxWorker {
                    conns: (0..self.peers.len()).map(|_| OnceLock::new()).collect(),
                    worker,
                    issued: AtomicU64::new(0),
                    flushed: AtomicU64::new(0),
                }));
                // The box never moves nor drops before the transport: contexts keep its
                // address (and only ever read through it).
                &*self.workers[i] as *const CtxWorker as *mut CtxWorker
            }
        };
        match ctx.ucx.0.compare_exchange(
            std::ptr::null_mut(),
            w,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: as in `worker`.
            Ok(_) => Ok(unsafe { &*w }),
            Err(other) => {
                // Another thread of a shared context attached one first.
                self.free.lock().unwrap_or_else(|e| e.into_inner()).push(w);
                // SAFETY: as in `worker`.
                Ok(unsafe { &*other })
            }
        }
    }

    /// The endpoint to `pe` on `w`, and the remote address and key of `addr` there.
    #[inline]
    fn target<'w>(
        &self,
        w: &'w CtxWorker,
        pe: usize,
        addr: SymAddr,
    ) -> Result<(&'w Endpoint, u64, &'w RemoteKey)> {
        let conn = match w.conns[pe].get() {
            Some(c) => c,
            None => self.open(w, pe)?,
        };
        let region = match addr.seg {
            Seg::Heap if addr.off < self.heap_off => RUNTIME_AREA,
            Seg::Heap => HEAP,
            Seg::Data => DATA,
        };
        let peer = self.peers[pe].as_ref().expect("a UCX route has a peer");
        let key = conn.rkeys[region].as_ref().ok_or(Error::Transport {
            routine: UNNAMED,
            pe: Some(pe),
            what: "the peer has no such symmetric segment (global variables are symmetric on no PE or on every PE)",
            status: "",
        })?;
        Ok((&conn.ep, peer.base[region] + addr.off as u64, key))
    }

    /// `addr` on `pe` as mapped in this process ([`Conn::mapped`]), if it is.
    #[inline(always)]
    fn mapped(w: &CtxWorker, pe: usize, addr: SymAddr) -> Option<*mut u8> {
        match (addr.seg, w.conns[pe].get()) {
            (Seg::Heap, Some(c)) if c.mapped != 0 => Some((c.mapped + addr.off) as *mut u8),
            _ => None,
        }
    }

    #[cold]
    fn open<'w>(&self, w: &'w CtxWorker, pe: usize) -> Result<&'w Conn> {
        let peer = self.peers[pe].as_ref().expect("a UCX route has a peer");
        let fail = |what: &'static str| {
            move |e: UcxError| Error::Transport {
                routine: UNNAMED,
                pe: Some(pe),
                what,
                status: status_of(&e),
            }
        };
        let ep = w
            .worker
            .connect(&peer.worker)
            .map_err(fail("cannot connect to the PE through UCX"))?;
        let mut rkeys = [None, None, None];
        for (i, k) in peer.rkeys.iter().enumerate() {
            if !k.is_empty() {
                rkeys[i] = Some(
                    ep.unpack_rkey(k)
                        .map_err(fail("cannot unpack the PE's UCX remote key"))?,
                );
            }
        }
        // Complete the wire-up now: until it is done UCX queues operations on the endpoint
        // (reporting them complete), and only a progress call of this worker sends them,
        // which a PE that goes on to compute might not make for a long time.
        w.worker
            .flush()
            .map_err(fail("cannot connect to the PE through UCX"))?;
        // Where the peer's UCX allocated its heap segment (one key for the runtime area and
        // the heap: one allocation, hence one mapping).
        let one_allocation = peer.rkeys[HEAP] == peer.rkeys[RUNTIME_AREA];
        let mapped = rkeys[HEAP]
            .as_ref()
            .filter(|_| one_allocation)
            .and_then(|k| k.local_ptr(peer.base[HEAP] + self.heap_off as u64))
            .map_or(0, |p| p as usize - self.heap_off);
        if mapped != 0 {
            self.maps_peer.store(true, Ordering::Release);
        }
        // A racing thread may have opened one too: the first stays, ours is closed.
        let _ = w.conns[pe].set(Conn { rkeys, ep, mapped });
        Ok(w.conns[pe].get().expect("set above"))
    }

    fn op_error(pe: usize, what: &'static str) -> impl Fn(UcxError) -> Error {
        move |e| Error::Transport {
            routine: UNNAMED,
            pe: Some(pe),
            what,
            status: status_of(&e),
        }
    }

    /// A blocking transfer (see [`super::Fabric::xfer`]).
    ///
    /// # Safety
    /// As [`super::Fabric::xfer`].
    pub(crate) unsafe fn xfer(&self, x: Xfer) -> Result<()> {
        let w = self.worker(x.ctx)?;
        if let Some(p) = Self::mapped(w, x.pe, x.remote) {
            // SAFETY: as below; `p` maps the checked remote range, which does not overlap
            // `local` (a PE's own buffer).
            unsafe { copy(x.dir, p, x.local, x.len) };
            return Ok(());
        }
        let (ep, raddr, key) = self.target(w, x.pe, x.remote)?;
        // SAFETY: the caller's contract on `local` (readable for a put, writable for a get,
        // for `len` bytes); the remote range was checked.
        let r = unsafe {
            match x.dir {
                Dir::Put => ep.put_blocking(std::slice::from_raw_parts(x.local, x.len), raddr, key),
                Dir::Get => {
                    ep.get_blocking(std::slice::from_raw_parts_mut(x.local, x.len), raddr, key)
                }
            }
        };
        // Counted once issued: a quiet that read the count before would not cover it.
        if x.dir == Dir::Put {
            w.note_issued();
        }
        r.map_err(Self::op_error(x.pe, "a UCX transfer failed"))
    }

    /// A put whose arrival a count announces (see [`super::Fabric::put_raise`]): the put,
    /// a fence, the count (both counted for quiet: see `Fabric::raise`), or over a
    /// heap mapped here, a copy and the raise.
    ///
    /// # Safety
    /// As [`super::Fabric::put_raise`].
    pub(crate) unsafe fn put_raise(&self, x: Xfer, sig: SymAddr) -> Result<()> {
        let src = x.local as *const u8;
        let w = self.worker(x.ctx)?;
        if let Some(p) = Self::mapped(w, x.pe, x.remote) {
            // SAFETY: as in `xfer`.
            unsafe { copy(Dir::Put, p, src.cast_mut(), x.len) };
            return self.amo_post(x.ctx, x.pe, sig, AmoOp::Add(1));
        }
        let (ep, raddr, key) = self.target(w, x.pe, x.remote)?;
        // SAFETY: the caller's contract: `src` is readable for `len` bytes.
        let data = unsafe { std::slice::from_raw_parts(src, x.len) };
        if x.len <= Raise::MAX_DATA && self.raise_by_message.load(Ordering::Relaxed) {
            // Data and count in one message: no fence, no acknowledgement.
            return Self::send_raise(w, ep, x.pe, Some(x.remote), data, sig, 1);
        }
        // The remote range was checked.
        let r = ep.put_blocking(data, raddr, key);
        w.note_issued();
        r.map_err(Self::op_error(x.pe, "a UCX transfer failed"))?;
        w.worker
            .fence()
            .map_err(Self::op_error(x.pe, "a UCX fence failed"))?;
        self.raise_served(x.ctx, w, x.pe, sig, 1)
    }

    /// Adds `by` to a runtime counter on `pe` that only this PE raises (see
    /// [`super::Fabric::raise`]): one active message ([`Raise`]) that the peer's service
    /// applies, where UCX would carry a posted atomic over TCP as a request and an
    /// acknowledgement; a posted atomic into a heap mapped here (one-sided) or once
    /// finalize's last sync began.
    pub(crate) fn raise(&self, ctx: &CtxState, pe: usize, addr: SymAddr, by: u64) -> Result<()> {
        let w = self.worker(ctx)?;
        self.raise_served(ctx, w, pe, addr, by)
    }

    /// [`Ucx::raise`] on `ctx`'s worker `w`, by a thread already serving where it must.
    fn raise_served(
        &self,
        ctx: &CtxState,
        w: &CtxWorker,
        pe: usize,
        addr: SymAddr,
        by: u64,
    ) -> Result<()> {
        if Self::mapped(w, pe, addr).is_some() || !self.raise_by_message.load(Ordering::Relaxed) {
            return self.amo_post(ctx, pe, addr, AmoOp::Add(by));
        }
        let (ep, _, _) = self.target(w, pe, addr)?;
        Self::send_raise(w, ep, pe, None, &[], addr, by)
    }

    /// Sends a [`Raise`] on `ep` (of `w`, to `pe`): `data` to `dst`, then `sig` up by `by`.
    #[allow(clippy::too_many_arguments)]
    fn send_raise(
        w: &CtxWorker,
        ep: &Endpoint,
        pe: usize,
        dst: Option<SymAddr>,
        data: &[u8],
        sig: SymAddr,
        by: u64,
    ) -> Result<()> {
        let r = ep.am_send(Raise::ID, &Raise::header(dst, sig, by), data);
        // Counted for quiet, as the posted add it replaces.
        w.note_issued();
        r.map_err(Self::op_error(pe, "a UCX active message failed"))
    }

    /// From now on counts are raised by posted atomics, whose flush completes them at
    /// their target (finalize's last sync: a message counts as sent once in the socket,
    /// and a PE that exits with unread input resets its connections, dropping what it had
    /// not sent yet).
    pub(crate) fn raise_by_atomics(&self) {
        self.raise_by_message.store(false, Ordering::Relaxed);
    }

    /// A non-blocking transfer (see [`super::Fabric::xfer_nbi`]).
    ///
    /// # Safety
    /// As [`super::Fabric::xfer_nbi`].
    pub(crate) unsafe fn xfer_nbi<'c>(
        &self,
        x: Xfer,
        counter: impl FnOnce() -> (&'c Completion, usize),
        signal: Option<(SymAddr, AmoOp<u64>)>,
    ) -> Result<()> {
        let w = self.worker(x.ctx)?;
        if let Some(p) = Self::mapped(w, x.pe, x.remote) {
            // SAFETY: as in `xfer`; complete on return, so `counter` is not needed.
            unsafe { copy(x.dir, p, x.local, x.len) };
            if let Some((a, op)) = signal {
                self.amo_post(x.ctx, x.pe, a, op)?;
            }
            return Ok(());
        }
        let (ep, raddr, key) = self.target(w, x.pe, x.remote)?;
        let (comp, _) = counter();
        comp.issue(1);
        // SAFETY: the caller keeps `local` valid until `comp` completes, and `comp` alive.
        let r = unsafe {
            match x.dir {
                Dir::Put => ep.put(x.local, x.len, raddr, key, Some(comp.done_counter())),
                Dir::Get => ep.get(x.local, x.len, raddr, key, Some(comp.done_counter())),
            }
        };
        w.note_issued();
        match r {
            Ok(Issued::Done) => comp.finish(1),
            Ok(Issued::Pending) => {}
            Err(e) => {
                comp.finish(1);
                return Err(Self::op_error(x.pe, "a UCX transfer failed")(e));
            }
        }
        if let Some((a, op)) = signal {
            w.worker
                .fence()
                .map_err(Self::op_error(x.pe, "a UCX fence failed"))?;
            self.amo_post(x.ctx, x.pe, a, op)?;
        }
        Ok(())
    }

    /// An atomic returning the previous value.
    ///
    /// UCX has integer atomics of 4 and 8 bytes; the rest (floating-point addition, 2-byte
    /// words) is a compare-and-swap loop on the word (or the 4-byte word holding it), which
    /// is atomic with respect to every other atomic, as all of the job's go through UCX.
    pub(crate) fn amo<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        let w = self.worker(ctx)?;
        let err = Self::op_error(pe, "a UCX atomic failed");
        // On a heap UCX allocated, UCX 1.13's shared-memory transports return 0 and clear the
        // word for fetching and/or/xor (fetch-add, swap and compare-swap are right): those
        // go by compare-swap there.
        let bitwise = matches!(op, AmoOp::And(_) | AmoOp::Or(_) | AmoOp::Xor(_));
        let native = matches!(W::SIZE, 4 | 8)
            && !(W::FLOAT && matches!(op, AmoOp::Add(_)))
            && !(self.direct && bitwise);
        if !native {
            return self.amo_by_cswap(w, pe, addr, op);
        }
        let (ep, raddr, key) = self.target(w, pe, addr)?;
        let size = W::SIZE;
        let fetch = |o: FetchOp, v: W| ep.atomic_fetch(o, v.to_bits64(), size, raddr, key);
        let old = match op {
            // An add of 0, not an or: see `bitwise` above.
            AmoOp::Fetch => ep.atomic_fetch(FetchOp::Add, 0, size, raddr, key),
            AmoOp::Set(v) => fetch(FetchOp::Swap, v).map(|_| v.to_bits64()),
            AmoOp::Swap(v) => fetch(FetchOp::Swap, v),
            AmoOp::Add(v) => fetch(FetchOp::Add, v),
            AmoOp::And(v) => fetch(FetchOp::And, v),
            AmoOp::Or(v) => fetch(FetchOp::Or, v),
            AmoOp::Xor(v) => fetch(FetchOp::Xor, v),
            AmoOp::CompareSwap { cond, value } => {
                ep.cswap(cond.to_bits64(), value.to_bits64(), size, raddr, key)
            }
        }
        .map_err(err)?;
        Ok(W::from_bits64(old))
    }

    /// [`Ucx::amo`] for what UCX lacks, as a compare-and-swap loop on the aligned 4- or
    /// 8-byte word holding the value.
    #[cold]
    fn amo_by_cswap<W: Word>(
        &self,
        w: &CtxWorker,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        let err = Self::op_error(pe, "a UCX atomic failed");
        let cw = super::CswapWord::holding::<W>(addr);
        let (ep, raddr, key) = self.target(w, pe, cw.word)?;
        let old = ep
            .atomic_fetch(FetchOp::Add, 0, cw.size, raddr, key)
            .map_err(&err)?;
        cw.apply(op, old, |o, n| {
            ep.cswap(o, n, cw.size, raddr, key).map_err(&err)
        })
    }

    /// An atomic whose previous value is not needed.
    pub(crate) fn amo_post<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<()> {
        let post = match op {
            AmoOp::Add(v) if !W::FLOAT => Some((AtomicOp::Add, v)),
            AmoOp::And(v) => Some((AtomicOp::And, v)),
            AmoOp::Or(v) => Some((AtomicOp::Or, v)),
            AmoOp::Xor(v) => Some((AtomicOp::Xor, v)),
            _ => None,
        };
        match post {
            Some((o, v)) if matches!(W::SIZE, 4 | 8) => {
                let w = self.worker(ctx)?;
                let (ep, raddr, key) = self.target(w, pe, addr)?;
                let r = ep.atomic_post(o, v.to_bits64(), W::SIZE, raddr, key);
                w.note_issued();
                r.map_err(Self::op_error(pe, "a UCX atomic failed"))
            }
            _ => self.amo(ctx, pe, addr, op).map(drop),
        }
    }

    /// Orders the context's earlier operations before its later ones.
    pub(crate) fn fence(&self, ctx: &CtxState) {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if p.is_null() {
            return;
        }
        // SAFETY: as in `worker`.
        let w = unsafe { &*p };
        if self.maps_peer.load(Ordering::Acquire) {
            // A copy into a mapped heap lands at once: what went through UCX before it
            // must have landed first, so complete it (nothing, mostly: a flush only when
            // something was issued through UCX since the last one).
            // A failed flush means a failed peer, which the next operation to it reports.
            let _ = w.flush_if_issued();
            std::sync::atomic::fence(Ordering::SeqCst);
            return;
        }
        // A failed fence means a failed peer, which the next operation to it reports.
        let _ = w.worker.fence();
    }

    /// Sends what the context's worker still holds, ignoring peers that already closed
    /// (finalize, after its last sync: they need nothing more from this PE), for at most
    /// [`TEARDOWN_FLUSH`]: a peer that exited never answers when a process it started
    /// inherited its sockets and holds the connection open (seen: a PE that left a `sleep`
    /// behind; its peer's flush waited for an acknowledgement until the job timed out).
    pub(crate) fn flush_at_teardown(&self, ctx: &CtxState) {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: as in `worker`.
            let _ = unsafe { &*p }.worker.flush_within(TEARDOWN_FLUSH);
        }
    }

    /// Completes the context's operations (a flush of its worker).
    pub(crate) fn quiet(&self, ctx: &CtxState) -> Result<()> {
        let p = ctx.ucx.0.load(Ordering::Acquire);
        if p.is_null() {
            return Ok(());
        }
        // SAFETY: as in `worker`.
        let w = unsafe { &*p };
        // Copies into mapped heaps are complete once visible: `Fabric::quiet`'s closing
        // sequentially consistent fence sees to that (no second one here).
        let flushed = w.flush_if_issued().map_err(|e| Error::Transport {
            routine: UNNAMED,
            pe: None,
            what: "completing operations through UCX failed",
            status: status_of(&e),
        })?;
        if !flushed {
            return Ok(());
        }
        // A flush drops the operations of a failed endpoint and still succeeds: look
        // (but not at peers that left after finalize: nothing may be sent to them).
        for (pe, c) in w.conns.iter().enumerate() {
            if self.has_left(pe) {
                continue;
            }
            if let Some(c) = c.get() {
                let r = c.ep.status().map_err(Self::op_error(
                    pe,
                    "operations to the PE were lost: the connection failed",
                ));
                if let Err(e) = r {
                    // Reported once: a peer gone is gone for good. One known to have
                    // finalized left after finalize: nothing of the program's was lost.
                    if peer_gone(&e) {
                        self.mark_left(pe);
                        if self.known_finalized(pe) {
                            continue;
                        }
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Records that `pe` left the job after finalize (its state word can no longer be
    /// read: see `Runtime::state_of`).
    pub(crate) fn mark_left(&self, pe: usize) {
        if let Some(Some(p)) = self.peers.get(pe) {
            p.left.store(true, Ordering::Relaxed);
        }
    }

    /// Records that `pe` is known to have entered `shmem_finalize`.
    pub(crate) fn mark_finalized(&self, pe: usize) {
        if let Some(Some(p)) = self.peers.get(pe) {
            p.finalized.store(true, Ordering::Relaxed);
        }
    }

    /// Whether `pe` is known to have entered `shmem_finalize` ([`Ucx::mark_finalized`]).
    pub(crate) fn known_finalized(&self, pe: usize) -> bool {
        matches!(self.peers.get(pe), Some(Some(p)) if p.finalized.load(Ordering::Relaxed))
    }

    /// Whether `pe` is known to have left the job ([`Ucx::mark_left`]).
    pub(crate) fn has_left(&self, pe: usize) -> bool {
        matches!(self.peers.get(pe), Some(Some(p)) if p.left.load(Ordering::Relaxed))
    }

    /// Completes the operations of every context worker.
    pub(crate) fn flush_all(&self) -> Result<()> {
        let mut r = Ok(());
        for (_, w) in self.workers.iter() {
            if r.is_ok() {
                r = w.worker.flush().map_err(|e| Error::Transport {
                    routine: UNNAMED,
                    pe: None,
                    what: "completing operations through UCX failed",
                    status: status_of(&e),
                });
            }
        }
        r
    }

    /// Drives every context worker once when `contexts` (waiting threads call it), and the
    /// service worker when no other thread is driving it: a peer's get or fetching atomic is then served
    /// by the waiting thread at once, not after the progress thread wakes up. (Driving it
    /// under UCX's own spinning lock, contended by the progress thread, made collectives
    /// at 4 PEs on 2 cores take milliseconds; the driver's lock sleeps instead.)
    ///
    /// Returns whether anything happened (an operation of ours completed, or a peer's was
    /// served): the wait then stays hot, as more is likely to follow.
    pub(crate) fn progress(&self, contexts: bool) -> bool {
        let mut any = false;
        if contexts {
            for (_, w) in self.workers.iter() {
                any |= w.worker.progress();
            }
        }
        self.service.try_progress() || any
    }

    /// Claims the service worker for a waiting thread (the progress thread stands aside
    /// until the claim drops): see [`rshmem_ucx::Driver::drive`].
    pub(crate) fn drive(&self) -> Driving<'_> {
        self.service.drive()
    }

    /// A driving waiter's nap: until the service worker has work or `nap` passes.
    pub(crate) fn sleep(&self, nap: std::time::Duration) {
        self.service.sleep(nap);
    }

    /// Whether UCX allocated this PE's heap segment, so that its shared-memory transports
    /// reach it one-sidedly (for `SHMEM_INFO`).
    pub(crate) fn allocated_heap(&self) -> bool {
        self.direct
    }

    /// Takes the context's worker back (the context was quieted).
    pub(crate) fn release(&self, ctx: &CtxState) {
        let p = ctx.ucx.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            self.free.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        }
    }
}

impl Drop for Ucx {
    /// Closes every endpoint, destroys the workers and stops the progress thread; the
    /// memory is deregistered and UCX released as the fields drop (after the finalize
    /// barrier, or when init fails).
    fn drop(&mut self) {
        // The thread first: it holds and drives the workers, which drop with their field.
        if let Some(t) = self
            .progress
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = t.stop();
        }
    }
}

/// A transfer of `len` bytes between `remote` (a peer's memory mapped here) and `local`.
///
/// # Safety
/// Both ranges are valid for `len` bytes (`local` readable for a put, writable for a get)
/// and do not overlap.
#[inline(always)]
unsafe fn copy(dir: Dir, remote: *mut u8, local: *mut u8, len: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        match dir {
            Dir::Put => std::ptr::copy_nonoverlapping(local.cast_const(), remote, len),
            Dir::Get => std::ptr::copy_nonoverlapping(remote.cast_const(), local, len),
        }
    }
    // Ordered before whatever announces the data (a flag raised through UCX next).
    std::sync::atomic::fence(Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::{shm_transports_allowed, tcp_allowed};

    #[test]
    fn which_ucx_tls_lists_allow_tcp() {
        for tls in [
            None,
            Some("all"),
            Some("tcp"),
            Some("sm,self,tcp"),
            Some("^sm"),
        ] {
            assert!(tcp_allowed(tls), "{tls:?}");
        }
        for tls in [
            Some("sm,self"),
            Some("^tcp"),
            Some("rc,ud"),
            Some("tcp_sockcm"),
        ] {
            assert!(!tcp_allowed(tls), "{tls:?}");
        }
    }

    #[test]
    fn which_ucx_tls_lists_allow_shared_memory() {
        for tls in [
            None,
            Some(""),
            Some("all"),
            Some("sm,self"),
            Some("tcp,posix"),
            Some("^tcp"),
        ] {
            assert!(shm_transports_allowed(tls), "{tls:?}");
        }
        for tls in [Some("tcp"), Some("self,tcp"), Some("^sm"), Some("rc,ud")] {
            assert!(!shm_transports_allowed(tls), "{tls:?}");
        }
    }
}
