//! The libfabric (OFI) transport: PEs this process does not map are reached through
//! libfabric (`rshmem-ofi`, which loads `libfabric.so.1` at run time), on the provider
//! `FI_PROVIDER` names or the first reliable-datagram provider with RMA and atomics.
//!
//! - Each PE opens a *service* endpoint that peers target, registers its segments (the
//!   user heap, the shared globals, the runtime area) and publishes through the bootstrap
//!   the endpoint's name, the regions' remote keys and the segments' base addresses. Every
//!   endpoint shares one address vector, so a peer's address is inserted once.
//! - Each context has its own endpoint (made on its first operation, pooled when the context
//!   is destroyed; beyond [`MAX_ENDPOINTS`] contexts share), with its own write and read
//!   counters: `quiet` waits until the
//!   counters reach what the context issued (delivery completion where the provider has
//!   it), `fence` is free where the provider orders writes and a wait for the context's
//!   writes elsewhere. An endpoint counts in plain cells, so threads sharing a context
//!   take its lock around each operation (the network path only).
//! - Manual-progress providers (tcp, sockets) move a peer's operation on this PE only
//!   while something drives the service endpoint: a progress thread sleeping in the
//!   provider does, and so does every waiting thread ([`super::NetWait`]).
//! - Every atomic the API has is checked at init (`fi_query_atomic`): a provider lacking
//!   one fails init naming what is missing. Floating-point addition, where the provider
//!   lacks it, and words of 1 or 2 bytes are compare-and-swap loops on the word.
//! - A non-blocking transfer that the provider cannot complete at once (a get, a put too
//!   long to inject) is waited for before it returns: counters tell when all of a kind
//!   completed, not one.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rshmem_boot::Bootstrap;
use rshmem_ofi::{
    Addr, AmoBuffer, Arrival, AtomicKind, AtomicOp, AtomicType, Endpoint, Issued, OfiError,
    OpenOptions, Progress, ProgressThread, Region, RemoteKey,
};

use super::engine::Completion;
use super::ucx::{get_long, hex, put_long, unhex, Raise, Segment};
use super::{CswapWord, CtxState, Dir, Seg, SourceHeld, SymAddr, Xfer};
use crate::error::{Error, InitError, Result, UNNAMED};
use crate::word::{AmoOp, Word};

mod pushes;

/// Regions of each PE, as for UCX: the user heap, the shared globals and the runtime area.
const REGIONS: usize = 3;
const HEAP: usize = 0;
const DATA: usize = 1;
const RUNTIME_AREA: usize = 2;

/// What this PE knows of a peer it reaches through libfabric.
#[derive(Debug)]
struct Peer {
    /// Set once this PE knows the peer entered `shmem_finalize` ([`Ofi::mark_finalized`]):
    /// an operation the provider then keeps refusing means the peer left.
    finalized: AtomicBool,
    /// Set once the peer is known to have left the job after finalize.
    left: AtomicBool,
    addr: Addr,
    /// Remote keys of its regions (`None`: no such region).
    keys: [Option<RemoteKey>; REGIONS],
    /// Where each region's segment starts in its address space.
    base: [u64; REGIONS],
}

/// Endpoints made at most: further contexts share them, round robin. Opening an endpoint
/// costs milliseconds and megabytes (tcp;ofi_rxm zeroes its buffer pools, and connects anew
/// to each peer), which a program holding 64 contexts paid 64 times; a shared endpoint only
/// makes one context's quiet wait for the other's operations too (Sandia OpenSHMEM shares
/// transmit contexts the same way).
const MAX_ENDPOINTS: usize = 8;

/// A context's endpoint.
#[derive(Debug)]
pub(crate) struct CtxEndpoint {
    ep: Mutex<Endpoint>,
    /// Drives the endpoint without its lock (waiting threads).
    progress: Progress,
    /// Its place in [`Ofi::endpoints`], for the pool.
    index: usize,
}

/// A context's endpoint, if it has one (null until its first operation through libfabric).
#[derive(Debug)]
pub(crate) struct CtxSlot(AtomicPtr<CtxEndpoint>);

impl CtxSlot {
    pub(crate) const fn new() -> CtxSlot {
        CtxSlot(AtomicPtr::new(std::ptr::null_mut()))
    }
}

/// The libfabric transport of one PE.
#[derive(Debug)]
pub(crate) struct Ofi {
    /// Stopped first, when the transport drops.
    progress_thread: Mutex<Option<ProgressThread>>,
    /// Per PE; `None` for PEs reached through shared memory.
    peers: Box<[Option<Peer>]>,
    /// Every context endpoint made (owned here; contexts point at them), read without a
    /// lock by waiting threads, which drive them all.
    endpoints: boxcar::Vec<Box<CtxEndpoint>>,
    /// Indices of endpoints of destroyed contexts, ready for new ones.
    free: Mutex<Vec<usize>>,
    /// The next endpoint to share once [`MAX_ENDPOINTS`] are made.
    shared_next: AtomicUsize,
    /// The context of [`Ofi::raise`]'s counts (an endpoint from the pool on first use).
    signals: CtxState,
    /// The context of pushes by writes that carry their count ([`pushes`]).
    pushes: CtxState,
    /// Whether pushes go by writes that carry their count ([`pushes`]): where counts go
    /// by message and the provider has remote completion-queue data.
    push_by_write: bool,
    /// Reads of peers' runtime words for liveness checks ([`Ofi::probe_word`]).
    probe: Mutex<Probe>,
    /// Registered until the transport drops.
    _regions: Vec<Region>,
    service: Progress,
    /// Lets waiting threads take the service endpoint over from the progress thread (where
    /// the thread sleeps on a wait fd; see [`super::NetWait`]).
    driver: Option<rshmem_ofi::Driver>,
    _service_ep: Mutex<Endpoint>,
    fabric: Arc<rshmem_ofi::Ofi>,
    /// Where the user heap starts in the heap segment (the runtime area is below).
    heap_off: usize,
    /// Whether the provider adds floating-point words itself.
    float_add: bool,
    /// Counts (and small data with them) go as messages ([`Ofi::raise`]); cleared for
    /// finalize's last sync ([`Ofi::raise_by_atomics`]).
    raise_by_message: AtomicBool,
    /// The most data a raise's message carries (0: the provider sends no ordered messages,
    /// or orders writes, where counts ride behind the data on the context's endpoint).
    message_data: usize,
}

/// Bytes of a raise's header ([`Raise::header`]).
const RAISE_HEADER: usize = 24;

/// Receive slots of the service endpoint, and their size: a raise with up to 1000 bytes
/// of data (a collective's small message) goes as one message (injected up to the
/// provider's inject size, 64 bytes for tcp;ofi_rxm, else from the bounce arena).
/// tcp;ofi_rxm's eager buffers are 1 KiB here (`FI_OFI_RXM_BUFFER_SIZE`), and it queues
/// what the slots cannot take yet.
const RECV_SLOTS: usize = 256;
const RECV_SLOT: usize = 1024;

/// The endpoint of liveness reads ([`Ofi::probe_word`]), and those abandoned: a read that
/// stalled may still complete into its buffer and count on its endpoint, so both are kept
/// until the transport drops (the endpoint first: closing it cancels the read).
#[derive(Debug, Default)]
struct Probe {
    ep: Option<Endpoint>,
    abandoned: Vec<(Endpoint, Box<AmoBuffer>)>,
}

/// The status of an operation refused because its peer is gone.
const PEER_GONE: &str = "the PE is unreachable through libfabric (its process is gone)";

/// How long an operation towards a PE known to have finalized may be refused before the PE
/// is taken as gone (over `tcp;ofi_rxm` one towards an exited process is refused for ever).
const FINALIZED_PATIENCE: Duration = Duration::from_secs(2);

/// The same for any other PE: a full queue clears as soon as this PE drives its progress,
/// which the refused operation does, so only a vanished peer is refused this long.
const PATIENCE: Duration = Duration::from_secs(10);

/// libfabric's error as an operation's status: errors end the program, so the text is kept.
fn status(e: &OfiError) -> &'static str {
    if matches!(e, OfiError::Unreachable { .. }) {
        return PEER_GONE;
    }
    Box::leak(e.to_string().into_boxed_str())
}

/// Whether `e` says that the peer's process is gone.
pub(crate) fn peer_gone(e: &Error) -> bool {
    matches!(e, Error::Transport { status, .. } if *status == PEER_GONE)
}

fn init_error(what: &str) -> impl FnOnce(OfiError) -> InitError + '_ {
    move |e| InitError::Transport(format!("{what}: {e}"))
}

/// The atomics the API needs, on unsigned words of 4 and 8 bytes (the operations are
/// blind to sign; floating-point words go by their bits, addition aside).
fn needed_atomics() -> impl Iterator<Item = (AtomicKind, AtomicType, AtomicOp)> {
    use AtomicOp::*;
    [AtomicType::U32, AtomicType::U64]
        .into_iter()
        .flat_map(|ty| {
            let posted = [Sum, Band, Bor, Bxor, Write].map(|op| (AtomicKind::Post, ty, op));
            let fetching =
                [Sum, Band, Bor, Bxor, Write, Read].map(|op| (AtomicKind::Fetch, ty, op));
            posted
                .into_iter()
                .chain(fetching)
                .chain([(AtomicKind::Compare, ty, CompareSwap)])
        })
}

/// The libfabric type an integer-like word of `size` bytes goes as.
fn bits_type(size: usize) -> AtomicType {
    if size == 8 {
        AtomicType::U64
    } else {
        AtomicType::U32
    }
}

fn float_type(size: usize) -> AtomicType {
    if size == 8 {
        AtomicType::F64
    } else {
        AtomicType::F32
    }
}

impl Ofi {
    /// Loads libfabric, opens the provider, checks its atomics, opens the service endpoint
    /// and its progress thread, registers `segments` and publishes what peers need. Every
    /// PE of a job that uses libfabric calls it, then [`Ofi::connect`] after the store's
    /// fence.
    pub(crate) fn start(
        boot: &dyn Bootstrap,
        library: &str,
        heap_off: usize,
        segments: [Segment; REGIONS],
    ) -> Result<Ofi, InitError> {
        let fabric = rshmem_ofi::Ofi::open_with(&OpenOptions {
            library,
            ..OpenOptions::default()
        })
        .map_err(|e| InitError::Transport(e.to_string()))?;
        let missing: Vec<String> = needed_atomics()
            .filter(|&(k, t, o)| !fabric.atomic_supported(k, t, o))
            .map(|(k, t, o)| format!("{k:?} {o:?} on {t:?}"))
            .collect();
        if !missing.is_empty() {
            return Err(InitError::Transport(format!(
                "libfabric provider {} lacks atomics OpenSHMEM needs: {} (choose another with FI_PROVIDER, or SHMEM_NETWORK=ucx)",
                fabric.provider(),
                missing.join(", ")
            )));
        }
        let float_add = [AtomicType::F32, AtomicType::F64].iter().all(|&t| {
            fabric.atomic_supported(AtomicKind::Fetch, t, AtomicOp::Sum)
                && fabric.atomic_supported(AtomicKind::Post, t, AtomicOp::Sum)
        });
        let service = fabric
            .endpoint_with_wait_fd()
            .map_err(init_error("cannot open the libfabric service endpoint"))?;
        // A raise as one message, where a put, a fence that waits for its delivery (writes
        // are not ordered) and an atomic went before.
        let slot = RECV_SLOT.min(Endpoint::MESSAGE_MAX);
        let message_data = if fabric.ordered_messages() && !fabric.ordered_writes() {
            let apply = Raise::handler(&segments);
            let counts = pushes::Counts::new(&segments);
            service
                .receive_messages(
                    RECV_SLOTS,
                    slot,
                    Box::new(move |a: Arrival| match a {
                        Arrival::Message(m) => {
                            let (header, data) = m.split_at(RAISE_HEADER.min(m.len()));
                            match pushes::numbered(header) {
                                Some((plain, d)) => {
                                    apply(&plain, data);
                                    counts.landed(d);
                                }
                                None => apply(header, data),
                            }
                        }
                        Arrival::Data(d) => counts.landed(d),
                    }),
                )
                .map_err(init_error("cannot post libfabric receives"))?;
            slot - RAISE_HEADER
        } else {
            0
        };
        let push_by_write = message_data > 0 && fabric.writes_with_data();
        let mut regions = Vec::new();
        let mut desc = Vec::new();
        for seg in segments {
            if seg.end <= seg.start {
                desc.push(format!("{:x}:", seg.base));
                continue;
            }
            let r = service
                .register((seg.base + seg.start) as *mut u8, seg.end - seg.start)
                .map_err(init_error(
                    "cannot register the symmetric memory with libfabric",
                ))?;
            desc.push(format!(
                "{:x}:{}",
                seg.base,
                hex(&r.remote_key().to_bytes())
            ));
            regions.push(r);
        }
        let name = service
            .name()
            .map_err(init_error("cannot read the libfabric endpoint name"))?;
        put_long(boot, "ofi-ep", &hex(&name))?;
        put_long(boot, "ofi-segs", &desc.join(","))?;
        let progress = service.progress_handle();
        // Providers with automatic progress (sockets) run a thread of their own.
        let thread = if fabric.manual_progress() {
            Some(
                ProgressThread::start(progress.clone())
                    .map_err(init_error("cannot start the libfabric progress thread"))?,
            )
        } else {
            None
        };
        let driver = thread.as_ref().and_then(ProgressThread::driver);
        Ok(Ofi {
            progress_thread: Mutex::new(thread),
            driver,
            peers: Box::new([]),
            endpoints: boxcar::Vec::new(),
            free: Mutex::new(Vec::new()),
            shared_next: AtomicUsize::new(0),
            signals: CtxState::new(),
            pushes: CtxState::new(),
            push_by_write,
            probe: Mutex::new(Probe::default()),
            _regions: regions,
            service: progress,
            _service_ep: Mutex::new(service),
            fabric,
            heap_off,
            float_add,
            raise_by_message: AtomicBool::new(message_data > 0),
            message_data,
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
                InitError::Topology(format!("PE {pe} published a malformed libfabric {what}"))
            };
            let name = unhex(&get_long(boot, pe, "ofi-ep")?).ok_or_else(|| bad("address"))?;
            let addr = self
                .fabric
                .insert(&name)
                .map_err(init_error("cannot insert a PE's libfabric address"))?;
            let segs = get_long(boot, pe, "ofi-segs")?;
            let mut keys = [None, None, None];
            let mut base = [0u64; REGIONS];
            for (i, d) in segs.split(',').enumerate().take(REGIONS) {
                let (b, k) = d.split_once(':').ok_or_else(|| bad("segment"))?;
                base[i] = u64::from_str_radix(b, 16).map_err(|_| bad("segment base"))?;
                if !k.is_empty() {
                    let bytes = unhex(k).ok_or_else(|| bad("remote key"))?;
                    keys[i] = Some(RemoteKey::from_bytes(&bytes).map_err(|_| bad("remote key"))?);
                }
            }
            peers.push(Some(Peer {
                finalized: AtomicBool::new(false),
                left: AtomicBool::new(false),
                addr,
                keys,
                base,
            }));
        }
        self.peers = peers.into_boxed_slice();
        Ok(())
    }

    /// The provider, fabric and domain, for `SHMEM_INFO`.
    pub(crate) fn describe(&self) -> String {
        let f = &self.fabric;
        let (major, minor) = f.library_version();
        format!(
            "libfabric {major}.{minor}: provider {}, fabric {}, domain {}; {} progress, writes {}, completion at {}, floating-point add {}, counts {}",
            f.provider(),
            f.fabric_name(),
            f.domain_name(),
            if f.manual_progress() { "manual (progress thread + waiters)" } else { "automatic" },
            if f.ordered_writes() { "ordered" } else { "unordered (fence waits)" },
            match (f.delivery_complete(), f.flushes_by_read()) {
                (true, true) => "delivery (a run of puts to a peer: once sent, then one read back at quiet)",
                (true, false) => "delivery",
                (false, _) => "transmission",
            },
            if self.float_add { "native" } else { "by compare-and-swap" },
            if self.push_by_write {
                format!(
                    "by message (with up to {} bytes of data; longer pushes by writes that carry their count)",
                    self.message_data
                )
            } else if self.message_data > 0 {
                format!("by message (with up to {} bytes of data)", self.message_data)
            } else {
                "by atomics".to_string()
            },
        )
    }

    /// The context's endpoint, made (or taken from the pool) on first use, locked, for an
    /// operation towards `pe`.
    fn endpoint(&self, ctx: &CtxState, pe: usize) -> Result<MutexGuard<'_, Endpoint>> {
        let mut p = ctx.ofi.0.load(Ordering::Acquire);
        if p.is_null() {
            p = self.attach(ctx)?;
        }
        // SAFETY: endpoints live in `endpoints` until the transport drops, which no
        // operation races with.
        let e = unsafe { &*p };
        let mut ep = e.ep.lock().unwrap_or_else(|e| e.into_inner());
        ep.set_issue_patience(Some(if self.known_finalized(pe) {
            FINALIZED_PATIENCE
        } else {
            PATIENCE
        }));
        Ok(ep)
    }

    /// Records that `pe` left the job after finalize.
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

    /// Whether `pe` is known to have entered `shmem_finalize`.
    pub(crate) fn known_finalized(&self, pe: usize) -> bool {
        matches!(self.peers.get(pe), Some(Some(p)) if p.finalized.load(Ordering::Relaxed))
    }

    /// Whether `pe` is known to have left the job.
    pub(crate) fn has_left(&self, pe: usize) -> bool {
        matches!(self.peers.get(pe), Some(Some(p)) if p.left.load(Ordering::Relaxed))
    }

    #[cold]
    fn attach(&self, ctx: &CtxState) -> Result<*mut CtxEndpoint> {
        let reused = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let made = self.endpoints.count();
        let index = match reused {
            Some(i) => i,
            None if made >= MAX_ENDPOINTS => {
                self.shared_next.fetch_add(1, Ordering::Relaxed) % made
            }
            None => {
                let ep = self.fabric.endpoint().map_err(|e| Error::Transport {
                    routine: UNNAMED,
                    pe: None,
                    what: "cannot open a libfabric endpoint for the context",
                    status: status(&e),
                })?;
                let progress = ep.progress_handle();
                self.endpoints.push_with(|i| {
                    Box::new(CtxEndpoint {
                        ep: Mutex::new(ep),
                        progress,
                        index: i,
                    })
                })
            }
        };
        // The box never moves nor drops before the transport: contexts keep its address.
        let e = &*self.endpoints[index] as *const CtxEndpoint as *mut CtxEndpoint;
        match ctx.ofi.0.compare_exchange(
            std::ptr::null_mut(),
            e,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => Ok(e),
            Err(other) => {
                // Another thread of a shared context attached one first.
                self.free
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(index);
                Ok(other)
            }
        }
    }

    /// The peer's address, and the remote address and key of `addr` there.
    #[inline]
    fn target(&self, pe: usize, addr: SymAddr) -> Result<(Addr, u64, &RemoteKey)> {
        let region = match addr.seg {
            Seg::Heap if addr.off < self.heap_off => RUNTIME_AREA,
            Seg::Heap => HEAP,
            Seg::Data => DATA,
        };
        let peer = self.peers[pe].as_ref().expect("a network route has a peer");
        let key = peer.keys[region].as_ref().ok_or(Error::Transport {
            routine: UNNAMED,
            pe: Some(pe),
            what: "the peer has no such symmetric segment (global variables are symmetric on no PE or on every PE)",
            status: "",
        })?;
        Ok((peer.addr, peer.base[region] + addr.off as u64, key))
    }

    fn op_error(pe: usize, what: &'static str) -> impl Fn(OfiError) -> Error {
        move |e| Error::Transport {
            routine: UNNAMED,
            pe: Some(pe),
            what,
            status: status(&e),
        }
    }

    /// A blocking transfer (see [`super::Fabric::xfer`]).
    ///
    /// # Safety
    /// As [`super::Fabric::xfer`].
    pub(crate) unsafe fn xfer(&self, x: Xfer) -> Result<()> {
        let (addr, raddr, key) = self.target(x.pe, x.remote)?;
        let ep = self.endpoint(x.ctx, x.pe)?;
        let _serving = self.serving();
        // SAFETY: the caller's contract on `local` (readable for a put, writable for a get,
        // for `len` bytes); the remote range was checked.
        unsafe {
            match x.dir {
                Dir::Put => ep.put(std::slice::from_raw_parts(x.local, x.len), addr, raddr, key),
                Dir::Get => ep.get(
                    std::slice::from_raw_parts_mut(x.local, x.len),
                    addr,
                    raddr,
                    key,
                ),
            }
        }
        .map_err(Self::op_error(x.pe, "a libfabric transfer failed"))
    }

    /// A non-blocking transfer (see [`super::Fabric::xfer_nbi`]): returns at once when the
    /// provider took the data (an injected put), else once the context's transfers of its
    /// kind completed.
    ///
    /// # Safety
    /// As [`super::Fabric::xfer_nbi`].
    pub(crate) unsafe fn xfer_nbi<'c>(
        &self,
        x: Xfer,
        counter: impl FnOnce() -> (&'c Completion, usize),
        signal: Option<(SymAddr, AmoOp<u64>)>,
    ) -> Result<()> {
        let (addr, raddr, key) = self.target(x.pe, x.remote)?;
        let err = Self::op_error(x.pe, "a libfabric transfer failed");
        // Counted, and finished once complete below, as UCX counts its transfers: a request
        // made for the transfer then behaves alike on both networks.
        let (comp, _) = counter();
        comp.issue(1);
        let done = (|| -> Result<()> {
            let ep = self.endpoint(x.ctx, x.pe)?;
            // SAFETY: the caller keeps `local` valid until completion, which is before
            // this returns unless the provider copied the data (Issued::Done).
            let issued = unsafe {
                match x.dir {
                    Dir::Put => ep.put_nb(x.local, x.len, addr, raddr, key),
                    Dir::Get => ep.get_nb(x.local, x.len, addr, raddr, key),
                }
            }
            .map_err(&err)?;
            let _serving = (issued == Issued::Pending || signal.is_some())
                .then(|| self.serving())
                .flatten();
            if issued == Issued::Pending {
                match x.dir {
                    Dir::Put => ep.wait_writes(),
                    Dir::Get => ep.wait_reads(),
                }
                .map_err(&err)?;
            }
            if signal.is_some() {
                ep.fence().map_err(&err)?;
            }
            Ok(())
        })();
        comp.finish(1);
        done?;
        match signal {
            Some((a, op)) => self.amo_post(x.ctx, x.pe, a, op),
            None => Ok(()),
        }
    }

    /// Reads the 8-byte runtime word at `addr` of `pe`, which may have exited (a liveness
    /// check: `Runtime::peer_word`). Over `tcp;ofi_rxm` a read towards a process that exited
    /// after its connection was made neither completes nor fails, so the wait is bounded
    /// (patience as for refused operations) and fails with the peer-gone status; the
    /// stalled read's endpoint is set aside and the next check opens another.
    #[cold]
    pub(crate) fn probe_word(&self, pe: usize, addr: SymAddr) -> Result<u64> {
        let err = Self::op_error(pe, "a libfabric read of a runtime word failed");
        let (peer, raddr, key) = self.target(pe, addr)?;
        let patience = if self.known_finalized(pe) {
            FINALIZED_PATIENCE
        } else {
            PATIENCE
        };
        let mut probe = self.probe.lock().unwrap_or_else(|e| e.into_inner());
        let ep = match &mut probe.ep {
            Some(ep) => ep,
            slot => slot.insert(
                self.fabric
                    .endpoint()
                    .map_err(Self::op_error(pe, "cannot open a libfabric endpoint"))?,
            ),
        };
        ep.set_issue_patience(Some(patience));
        let buf = Box::new(AmoBuffer::new());
        // SAFETY: `buf` is heap memory kept alive, with the endpoint, until the read
        // completed (below) or the transport drops (when it stalled).
        unsafe { ep.atomic_fetch_nb(AtomicOp::Read, AtomicType::U64, 0, peer, raddr, key, &buf) }
            .map_err(&err)?;
        match ep.wait_reads_within(patience) {
            Ok(()) => Ok(buf.result(AtomicType::U64)),
            Err(e) => {
                if let Some(ep) = probe.ep.take() {
                    probe.abandoned.push((ep, buf));
                }
                Err(err(e))
            }
        }
    }

    /// An atomic returning the previous value (for `Set`, the new one).
    pub(crate) fn amo<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        let float_add = W::FLOAT && matches!(op, AmoOp::Add(_));
        if !matches!(W::SIZE, 4 | 8) || (float_add && !self.float_add) {
            return self.amo_by_cswap(ctx, pe, addr, op);
        }
        let (peer, raddr, key) = self.target(pe, addr)?;
        let ep = self.endpoint(ctx, pe)?;
        let _serving = self.serving();
        let ty = bits_type(W::SIZE);
        let fetch = |o: AtomicOp, t: AtomicType, v: W| {
            ep.atomic_fetch(o, t, v.to_bits64(), peer, raddr, key)
        };
        let old = match op {
            AmoOp::Fetch => fetch(AtomicOp::Read, ty, W::from_bits64(0)),
            AmoOp::Set(v) => fetch(AtomicOp::Write, ty, v).map(|_| v.to_bits64()),
            AmoOp::Swap(v) => fetch(AtomicOp::Write, ty, v),
            AmoOp::Add(v) if W::FLOAT => fetch(AtomicOp::Sum, float_type(W::SIZE), v),
            AmoOp::Add(v) => fetch(AtomicOp::Sum, ty, v),
            AmoOp::And(v) => fetch(AtomicOp::Band, ty, v),
            AmoOp::Or(v) => fetch(AtomicOp::Bor, ty, v),
            AmoOp::Xor(v) => fetch(AtomicOp::Bxor, ty, v),
            AmoOp::CompareSwap { cond, value } => {
                ep.compare_swap(ty, cond.to_bits64(), value.to_bits64(), peer, raddr, key)
            }
        }
        .map_err(Self::op_error(pe, "a libfabric atomic failed"))?;
        Ok(W::from_bits64(old))
    }

    /// [`Ofi::amo`] for what the provider lacks ([`CswapWord`]).
    #[cold]
    fn amo_by_cswap<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        let err = Self::op_error(pe, "a libfabric atomic failed");
        let cw = CswapWord::holding::<W>(addr);
        let (peer, raddr, key) = self.target(pe, cw.word)?;
        let ty = bits_type(cw.size);
        let ep = self.endpoint(ctx, pe)?;
        let old = ep
            .atomic_fetch(AtomicOp::Read, ty, 0, peer, raddr, key)
            .map_err(&err)?;
        cw.apply(op, old, |o, n| {
            ep.compare_swap(ty, o, n, peer, raddr, key).map_err(&err)
        })
    }

    /// An atomic whose previous value is not needed: posted, without a round trip.
    pub(crate) fn amo_post<W: Word>(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<()> {
        let ty = bits_type(W::SIZE);
        let post = match op {
            AmoOp::Add(v) if W::FLOAT && self.float_add => {
                Some((AtomicOp::Sum, float_type(W::SIZE), v))
            }
            AmoOp::Add(v) if !W::FLOAT => Some((AtomicOp::Sum, ty, v)),
            AmoOp::And(v) => Some((AtomicOp::Band, ty, v)),
            AmoOp::Or(v) => Some((AtomicOp::Bor, ty, v)),
            AmoOp::Xor(v) => Some((AtomicOp::Bxor, ty, v)),
            // Floating-point words too: a store of the bits.
            AmoOp::Set(v) => Some((AtomicOp::Write, ty, v)),
            _ => None,
        };
        match post {
            Some((o, t, v)) if matches!(W::SIZE, 4 | 8) => {
                let (peer, raddr, key) = self.target(pe, addr)?;
                let ep = self.endpoint(ctx, pe)?;
                ep.atomic_post(o, t, v.to_bits64(), peer, raddr, key)
                    .map_err(Self::op_error(pe, "a libfabric atomic failed"))
            }
            _ => self.amo(ctx, pe, addr, op).map(drop),
        }
    }

    /// Adds `by` to a runtime counter on `pe` that this PE alone raises
    /// ([`super::Fabric::raise`]). Where the provider does not order writes (tcp;ofi_rxm:
    /// [`rshmem_ofi::Ofi::ordered_writes`]) it goes through an endpoint of its own, so that
    /// a later quiet of `ctx` (every sync starts with one, for the collective's data) does
    /// not wait for its acknowledgement: a 2-PE `shmem_sync_all` over tcp took 35 us, 25
    /// without that wait. Data raised after is fenced on `ctx` first, which there waits
    /// for its delivery, so the count is still never visible before the data; finalize
    /// completes every endpoint ([`Ofi::flush_all`]), so no count is left in flight.
    pub(crate) fn raise(&self, ctx: &CtxState, pe: usize, addr: SymAddr, by: u64) -> Result<()> {
        if self.raise_by_message.load(Ordering::Relaxed) {
            return self.send_raise(pe, None, &[], addr, by);
        }
        let via = if self.fabric.ordered_writes() {
            ctx
        } else {
            &self.signals
        };
        self.amo_post(via, pe, addr, AmoOp::Add(by))
    }

    /// Puts `len` bytes to `dst` on `pe`, then raises `sig` there by one (see
    /// [`super::Fabric::put_raise`]; `seq`: the push's number on `sig`): one message up to
    /// a message's data where the provider sends them ordered, longer data as one write
    /// that carries its count where it has remote completion data (both numbered then:
    /// [`pushes`]), else the put, a fence and [`Ofi::raise`].
    ///
    /// # Safety
    /// As [`super::Fabric::put_raise`].
    pub(crate) unsafe fn put_raise(
        &self,
        x: Xfer,
        sig: SymAddr,
        seq: u64,
        held: SourceHeld,
    ) -> Result<()> {
        let src = x.local as *const u8;
        let by_message = self.raise_by_message.load(Ordering::Relaxed);
        let numbered = pushes::data(sig, seq).filter(|_| by_message && self.push_by_write);
        if x.len <= self.message_data && by_message {
            // SAFETY: the caller's contract: `src` is readable for `len` bytes.
            let data = unsafe { std::slice::from_raw_parts(src, x.len) };
            let by = match numbered {
                Some(_) => pushes::NUMBERED | seq as u32 as u64,
                None => 1,
            };
            return self.send_raise(x.pe, Some(x.remote), data, sig, by);
        }
        if let Some(data) = numbered {
            // SAFETY: forwarded contract.
            return unsafe { self.push(x, data, held) };
        }
        // SAFETY: forwarded contract.
        unsafe { self.xfer(x)? };
        self.fence(x.ctx);
        self.raise(x.ctx, x.pe, sig, 1)
    }

    /// Writes `x` with its count's completion `data` ([`pushes`]), from the pushes'
    /// endpoint; returns once the source may be reused (at once up to the bounce size),
    /// or at once where `held` lets the source be read until [`Ofi::settle_pushes`].
    ///
    /// # Safety
    /// As [`super::Fabric::put_raise`].
    unsafe fn push(&self, x: Xfer, data: u64, held: SourceHeld) -> Result<()> {
        let (peer, raddr, key) = self.target(x.pe, x.remote)?;
        let err = Self::op_error(x.pe, "a libfabric push failed");
        let ep = self.endpoint(&self.pushes, x.pe)?;
        // SAFETY: the caller's contract on `local`, readable for `len` bytes until the
        // write completed, which is waited for below unless the provider copied it.
        let issued =
            unsafe { ep.put_with_data_nb(x.local, x.len, peer, raddr, key, data) }.map_err(&err)?;
        if issued == Issued::Pending && held == SourceHeld::UntilReturn {
            let _serving = self.serving();
            ep.wait_writes().map_err(&err)?;
        }
        Ok(())
    }

    /// Waits until the pushes' endpoint reads no source any more (see [`Ofi::push`]).
    pub(crate) fn settle_pushes(&self) -> Result<()> {
        self.complete(
            &self.pushes,
            "completing pushes through libfabric failed",
            |ep| ep.wait_writes(),
        )
    }

    /// Sends a raise ([`Raise`]) with `data` for `dst` to `pe`'s service endpoint, from the
    /// endpoint of [`Ofi::raise`]'s counts: one endpoint's messages arrive in order, so a
    /// count is never seen before the data of any raise sent before it.
    fn send_raise(
        &self,
        pe: usize,
        dst: Option<SymAddr>,
        data: &[u8],
        sig: SymAddr,
        by: u64,
    ) -> Result<()> {
        debug_assert!(data.len() <= self.message_data);
        let mut m = [0u8; RECV_SLOT];
        m[..RAISE_HEADER].copy_from_slice(&Raise::header(dst, sig, by));
        m[RAISE_HEADER..RAISE_HEADER + data.len()].copy_from_slice(data);
        let peer = self.peers[pe]
            .as_ref()
            .expect("a network route has a peer")
            .addr;
        let ep = self.endpoint(&self.signals, pe)?;
        ep.send_message(&m[..RAISE_HEADER + data.len()], peer)
            .map_err(Self::op_error(pe, "a libfabric message failed"))
    }

    /// From now on counts are raised by atomics (finalize's last sync, as for UCX: a
    /// message is applied when its target reads its queue, an atomic when delivered).
    pub(crate) fn raise_by_atomics(&self) {
        self.raise_by_message.store(false, Ordering::Relaxed);
    }

    /// Completes the counts [`Ofi::raise`] and [`Ofi::put_raise`] sent on their own
    /// endpoints.
    pub(crate) fn quiet_signals(&self) -> Result<()> {
        self.quiet(&self.signals)?;
        self.quiet(&self.pushes)
    }

    /// Orders the context's earlier writes before its later ones.
    pub(crate) fn fence(&self, ctx: &CtxState) {
        let p = ctx.ofi.0.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: as in `endpoint`. A failed fence means a failed operation, which the
            // next quiet reports.
            let e = unsafe { &*p };
            let _serving = self.serving();
            let _ = e.ep.lock().unwrap_or_else(|e| e.into_inner()).fence();
        }
    }

    /// Completes the context's operations (its counters reach what it issued).
    pub(crate) fn quiet(&self, ctx: &CtxState) -> Result<()> {
        self.complete(
            ctx,
            "completing operations through libfabric failed",
            |ep| ep.quiet(),
        )
    }

    /// Runs the wait `f` on the context's endpoint, if it has one, serving the service
    /// endpoint meanwhile where a wait left it out; `what` names a failure.
    fn complete(
        &self,
        ctx: &CtxState,
        what: &'static str,
        f: impl FnOnce(&Endpoint) -> rshmem_ofi::Result<()>,
    ) -> Result<()> {
        let p = ctx.ofi.0.load(Ordering::Acquire);
        if p.is_null() {
            return Ok(());
        }
        // SAFETY: as in `endpoint`.
        let e = unsafe { &*p };
        let _serving = self.serving();
        f(&e.ep.lock().unwrap_or_else(|e| e.into_inner())).map_err(|e| Error::Transport {
            routine: UNNAMED,
            pe: None,
            what,
            status: status(&e),
        })
    }

    /// Completes the operations of every context endpoint.
    pub(crate) fn flush_all(&self) -> Result<()> {
        for (_, e) in self.endpoints.iter() {
            e.ep.lock()
                .unwrap_or_else(|e| e.into_inner())
                .quiet()
                .map_err(|e| Error::Transport {
                    routine: UNNAMED,
                    pe: None,
                    what: "completing operations through libfabric failed",
                    status: status(&e),
                })?;
        }
        Ok(())
    }

    /// Drives the service endpoint, and with `own` every context endpoint, once (waiting
    /// threads call it); whether anything happened.
    pub(crate) fn progress(&self, own: bool) -> bool {
        let mut any = self.service.progress();
        if own {
            for (_, e) in self.endpoints.iter() {
                any |= e.progress.progress();
            }
        }
        any
    }

    /// A wait pauses and drives the service: see [`rshmem_ofi::Driver::touch`].
    #[inline]
    pub(crate) fn touch(&self) {
        if let Some(d) = &self.driver {
            d.touch();
        }
    }

    /// Claims the service endpoint for a waiting thread (see [`super::NetWait`]), where the
    /// progress thread sleeps on a wait fd.
    pub(crate) fn drive(&self) -> Option<rshmem_ofi::Driving<'_>> {
        self.driver.as_ref().map(rshmem_ofi::Driver::drive)
    }

    /// Serves the service endpoint while this thread blocks on its own operations, where a
    /// wait left it out of the progress thread's set (`rshmem_util::handoff::claim_if_out`):
    /// a peer blocked towards this PE likewise may wait for it.
    #[inline]
    fn serving(&self) -> Option<rshmem_ofi::Driving<'_>> {
        self.driver
            .as_ref()
            .and_then(rshmem_ofi::Driver::drive_if_out)
    }

    /// A driving waiter's nap: until the service endpoint has work or `nap` passes; true
    /// if work was found.
    pub(crate) fn sleep(&self, nap: std::time::Duration) -> bool {
        match &self.driver {
            Some(d) => d.sleep(nap),
            None => {
                std::thread::sleep(nap);
                false
            }
        }
    }

    /// Takes the context's endpoint back (the context was quieted).
    pub(crate) fn release(&self, ctx: &CtxState) {
        let p = ctx.ofi.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: as in `endpoint`.
            let index = unsafe { &*p }.index;
            self.free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(index);
        }
    }
}

impl Drop for Ofi {
    /// Stops the progress thread; endpoints, regions and the provider close as the fields
    /// drop (after the finalize barrier, or when init fails).
    fn drop(&mut self) {
        if let Some(t) = self
            .progress_thread
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = t.stop();
        }
    }
}
