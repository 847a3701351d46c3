//! Endpoints and their one-sided operations: here the libfabric objects, opening, the
//! receive slots and the bounce arena; the operations, by kind, in the submodules.

use crate::bindings as sys;
use crate::domain::close;
use crate::{Addr, Ofi, Result};
use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod atomics;
mod completion;
mod messages;
mod rma;

pub use atomics::AmoBuffer;

/// The libfabric objects of one endpoint; shared with [`crate::Progress`] handles.
pub(crate) struct EpInner {
    pub(crate) ofi: Arc<Ofi>,
    ep: *mut sys::fid_ep,
    pub(crate) cq: *mut sys::fid_cq,
    wcntr: *mut sys::fid_cntr,
    rcntr: *mut sys::fid_cntr,
    /// The last error entry read from the completion queue (cold).
    last_error: Mutex<Option<String>>,
    /// The bounce arena ([`BOUNCE_ARENA`] bytes, allocated on first use, null before):
    /// copies of puts' sources, which outstanding writes read until the endpoint closes.
    bounce: std::sync::atomic::AtomicPtr<u8>,
    /// Where received messages land, and what handles them ([`Endpoint::receive_messages`]).
    recv: std::sync::OnceLock<Receiver>,
    /// Where the reads of a flush land ([`Endpoint::flush`]): written by the provider,
    /// never read.
    flush_sink: std::cell::UnsafeCell<u64>,
    /// The completion queue was opened with a wait object ([`Ofi::endpoint_with_wait_fd`]):
    /// a thread may sleep on it.
    pub(crate) waitable: bool,
}

/// What handles each arrival at an endpoint that receives ([`Endpoint::receive_messages`]).
pub type ArrivalHandler = Box<dyn Fn(Arrival<'_>) + Send + Sync>;

/// What arrived at an endpoint that receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival<'a> {
    /// A message ([`Endpoint::send_message`]), whole.
    Message(&'a [u8]),
    /// The 8 bytes a peer's write carried ([`Endpoint::put_with_data_nb`]); the write's
    /// data is in place.
    Data(u64),
}

/// The receive side of an endpoint: slots posted with `fi_recvmsg`, each handed to the
/// handler when its message arrives and then posted again.
pub(crate) struct Receiver {
    /// `slots * slot` bytes, written by the provider while a slot is posted.
    bufs: *mut u8,
    slots: usize,
    slot: usize,
    handler: ArrivalHandler,
    /// Held while a completion is read and handled: messages of one sender are handled in
    /// the order they arrived (two threads each reading one could apply them swapped).
    reader: Mutex<()>,
}

impl Receiver {
    fn layout(slots: usize, slot: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(slots * slot, 64).expect("a valid layout")
    }

    /// Posts slot `i` for the next message.
    fn post(&self, ep: *mut sys::fid_ep, lib: &crate::library::Lib, i: usize) -> Result<()> {
        let iov = libc::iovec {
            // SAFETY: i < slots: inside the buffer.
            iov_base: unsafe { self.bufs.add(i * self.slot) }.cast(),
            iov_len: self.slot,
        };
        let msg = sys::fi_msg {
            msg_iov: &iov,
            desc: std::ptr::null_mut(),
            iov_count: 1,
            addr: u64::MAX, // FI_ADDR_UNSPEC: from any peer.
            context: (i + 1) as *mut c_void,
            data: 0,
        };
        // SAFETY: fi_recvmsg through the endpoint's message ops; the slot stays allocated
        // and untouched by us until its completion is read.
        let r = unsafe { ((*(*ep).msg).recvmsg)(ep, &msg, sys::FI_COMPLETION) };
        lib.check("fi_recvmsg", r as i32)
    }
}

// SAFETY: the buffer is written by the provider into posted slots only and read by the
// reader-lock holder for a completed slot; the handler is Send + Sync.
unsafe impl Send for Receiver {}
// SAFETY: as for Send.
unsafe impl Sync for Receiver {}

/// Puts longer than the provider injects but at most this long are copied into the
/// endpoint's bounce arena, so that a blocking put returns without waiting for delivery
/// (a round trip; copying 16 KiB takes about a microsecond). Sandia OpenSHMEM does the
/// same up to 2 KiB.
pub(crate) const BOUNCE_MAX: usize = 16 << 10;

/// The bounce arena of an endpoint: when full, the endpoint waits for its writes, which
/// frees all of it (as does any completed wait for the writes).
const BOUNCE_ARENA: usize = 1 << 20;

fn bounce_layout() -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(BOUNCE_ARENA, 64).expect("a valid layout")
}

// SAFETY: the objects belong to the FI_THREAD_SAFE domain, which serialises concurrent calls;
// they are closed only on drop.
unsafe impl Send for EpInner {}
// SAFETY: as for Send.
unsafe impl Sync for EpInner {}

impl Drop for EpInner {
    fn drop(&mut self) {
        // SAFETY: each object was opened by `Ofi::endpoint` and is closed once, the endpoint
        // before what is bound to it.
        unsafe {
            if !self.ep.is_null() {
                close(&raw mut (*self.ep).fid);
            }
            for c in [self.wcntr, self.rcntr] {
                if !c.is_null() {
                    close(&raw mut (*c).fid);
                }
            }
            if !self.cq.is_null() {
                close(&raw mut (*self.cq).fid);
            }
            // After the endpoint: its outstanding writes may read the arena until then,
            // and posted receives write their slots.
            let b = *self.bounce.get_mut();
            if !b.is_null() {
                std::alloc::dealloc(b, bounce_layout());
            }
            if let Some(r) = self.recv.get() {
                std::alloc::dealloc(r.bufs, Receiver::layout(r.slots, r.slot));
            }
        }
    }
}

impl EpInner {
    pub(crate) fn fid(&self) -> *mut sys::fid {
        // SAFETY: the endpoint is live while self is.
        unsafe { &raw mut (*self.ep).fid }
    }

    /// Whether the endpoint receives messages ([`Endpoint::receive_messages`]).
    pub(crate) fn receives(&self) -> bool {
        self.recv.get().is_some()
    }

    pub(crate) fn cq_fid(&self) -> *mut sys::fid {
        // SAFETY: the queue is live while self is.
        unsafe { &raw mut (*self.cq).fid }
    }

    /// One non-blocking read of the completion queue, which drives the provider's progress
    /// on manual-progress providers; error entries are kept for the next wait to report.
    /// True if an entry was read.
    pub(crate) fn poll(&self) -> bool {
        let rx = self.recv.get();
        // Another thread reading the queue handles what comes meanwhile.
        let _reading = match rx.map(|r| r.reader.try_lock()) {
            Some(Ok(g)) => Some(g),
            Some(Err(_)) => return false,
            None => None,
        };
        let mut entry = sys::fi_cq_data_entry::EMPTY;
        // SAFETY: fi_cq_read of at most one FI_CQ_FORMAT_DATA entry into `entry`.
        let r = unsafe {
            ((*(*self.cq).ops).read)(
                self.cq,
                (&mut entry as *mut sys::fi_cq_data_entry).cast(),
                1,
            )
        };
        if r == -(sys::FI_EAVAIL as isize) {
            self.read_error();
            return true;
        }
        if r <= 0 {
            return false;
        }
        let Some(rx) = rx else { return true };
        let written = entry.flags & sys::FI_REMOTE_WRITE != 0;
        if written && entry.flags & sys::FI_REMOTE_CQ_DATA != 0 {
            (rx.handler)(Arrival::Data(entry.data));
        }
        if entry.flags & sys::FI_RECV != 0 {
            let i = (entry.op_context as usize).wrapping_sub(1);
            if i < rx.slots {
                if !written {
                    // SAFETY: slot i completed: the provider wrote `len` bytes there (at
                    // most the slot) and does not touch it until it is posted again below.
                    let msg = unsafe {
                        std::slice::from_raw_parts(rx.bufs.add(i * rx.slot), entry.len.min(rx.slot))
                    };
                    (rx.handler)(Arrival::Message(msg));
                }
                // A write's data that took a receive (where the provider makes it) frees
                // the slot as a message does.
                if let Err(e) = rx.post(self.ep, &self.ofi.lib, i) {
                    *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(format!("a receive could not be posted again: {e}"));
                }
            }
        }
        true
    }

    /// Takes the pending error entry off the queue and keeps its text.
    pub(crate) fn read_error(&self) {
        // SAFETY: an all-zero error entry is valid (null pointers, zero numbers).
        let mut e: sys::fi_cq_err_entry = unsafe { std::mem::zeroed() };
        // SAFETY: fi_cq_readerr into `e`; err_data stays NULL (the provider keeps its own).
        let r = unsafe { ((*(*self.cq).ops).readerr)(self.cq, &mut e, 0) };
        if r > 0 {
            let lib = &self.ofi.lib;
            let text = format!("{} (provider error {})", lib.strerror(e.err), e.prov_errno);
            *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(text);
        }
    }

    fn take_error(&self) -> String {
        self.read_error();
        self.last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_else(|| "no error entry was reported".into())
    }
}

/// A counter of an endpoint's operations of one kind: what was issued and what errors were
/// already reported.
struct Count {
    cntr: *mut sys::fid_cntr,
    issued: Cell<u64>,
    errors_seen: Cell<u64>,
}

impl Count {
    /// Operations completed successfully (`fi_cntr_read`, which drives progress on
    /// providers that need it).
    fn done(&self) -> u64 {
        // SAFETY: fi_cntr_read on the live counter.
        unsafe { ((*(*self.cntr).ops).read)(self.cntr) }
    }

    /// Operations completed with an error (`fi_cntr_readerr`).
    fn errors(&self) -> u64 {
        // SAFETY: fi_cntr_readerr on the live counter.
        unsafe { ((*(*self.cntr).ops).readerr)(self.cntr) }
    }

    /// Issued operations not completed yet.
    fn outstanding(&self) -> u64 {
        self.issued
            .get()
            .saturating_sub(self.done() + self.errors())
    }
}

/// An endpoint (`FI_EP_RDM`) with its write and read counters and error queue. `Send`, not
/// `Sync` (see the crate doc). Closed on drop, which cancels what is still outstanding:
/// call [`Endpoint::quiet`] first to complete it.
pub struct Endpoint {
    inner: Arc<EpInner>,
    writes: Count,
    reads: Count,
    /// How long an operation may be refused for lack of resources (`-FI_EAGAIN`) before
    /// it fails ([`Endpoint::set_issue_patience`]); `None`: forever.
    patience: Option<Duration>,
    /// Bytes of the bounce arena in use by writes not known complete.
    bounce_used: Cell<usize>,
    /// Peers written since the last flush, where puts complete once sent
    /// ([`Ofi::flushes_by_read`]).
    unflushed: std::cell::RefCell<Unflushed>,
}

/// The peers an endpoint put to since its last flush, each with a place to read back.
#[derive(Default)]
struct Unflushed {
    /// By peer address (an address-vector index): `CLEAN`, `DELIVERED` or `SENT`.
    state: Vec<u8>,
    /// (peer, offset, key) of the first put to each peer not `CLEAN`.
    list: Vec<(Addr, u64, u64)>,
}

impl Unflushed {
    /// No put since the last flush.
    const CLEAN: u8 = 0;
    /// One put, which completes at delivery.
    const DELIVERED: u8 = 1;
    /// Puts that complete once sent: the flush reads back.
    const SENT: u8 = 2;
}

// SAFETY: the counters are objects of the FI_THREAD_SAFE domain; the cells (which make the
// endpoint !Sync) move with it.
unsafe impl Send for Endpoint {}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Endpoint({:p})", self.inner.ep)
    }
}

/// What a non-blocking operation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// Sent inline: the source buffer may be reused at once (the operation still counts
    /// until [`Endpoint::quiet`]).
    Done,
    /// Outstanding: buffers stay in use until [`Endpoint::wait_writes`] /
    /// [`Endpoint::wait_reads`] / [`Endpoint::quiet`] returns.
    Pending,
}

impl Ofi {
    /// Creates an endpoint bound to the shared address vector, with its own counters and
    /// completion queue, which has no wait object: nothing sleeps on it (a
    /// [`crate::ProgressThread`] over it polls). A wait object costs every segment that
    /// reaches the endpoint an epoll callback under `tcp;ofi_rxm` (its sockets join the
    /// queue's epoll set), and a context's endpoint only takes the answers to its own
    /// operations (measured in docs/decisions/0011-libfabric-network.md).
    pub fn endpoint(self: &Arc<Self>) -> Result<Endpoint> {
        self.open_endpoint(sys::FI_WAIT_NONE)
            .or_else(|_| self.open_endpoint(sys::FI_WAIT_UNSPEC))
    }

    /// [`Ofi::endpoint`] whose completion queue has a file descriptor to sleep on, where
    /// the provider offers one ([`crate::Progress::wait_fd`]; otherwise as
    /// [`Ofi::endpoint`]): the endpoint that peers' operations arrive on, which a
    /// [`crate::ProgressThread`] and waiting threads take turns to sleep on.
    pub fn endpoint_with_wait_fd(self: &Arc<Self>) -> Result<Endpoint> {
        self.open_endpoint(sys::FI_WAIT_FD)
            .or_else(|_| self.open_endpoint(sys::FI_WAIT_UNSPEC))
    }

    fn open_endpoint(self: &Arc<Self>, wait_obj: std::ffi::c_int) -> Result<Endpoint> {
        let lib = &self.lib;
        let mut inner = EpInner {
            ofi: self.clone(),
            ep: std::ptr::null_mut(),
            cq: std::ptr::null_mut(),
            wcntr: std::ptr::null_mut(),
            rcntr: std::ptr::null_mut(),
            last_error: Mutex::new(None),
            bounce: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            recv: std::sync::OnceLock::new(),
            flush_sink: std::cell::UnsafeCell::new(0),
            waitable: wait_obj != sys::FI_WAIT_NONE,
        };
        // SAFETY: the domain's ops-table calls (fi_cq_open, fi_cntr_open, fi_endpoint,
        // fi_ep_bind, fi_enable) with complete attribute structs and out pointers; what is
        // opened is closed by EpInner's Drop if a later step fails.
        unsafe {
            let dops = &*(*self.domain).ops;
            let mut cq_attr = sys::fi_cq_attr {
                size: 0,
                flags: 0,
                // With the data writes carry (`Arrival::Data`).
                format: sys::FI_CQ_FORMAT_DATA,
                wait_obj,
                signaling_vector: 0,
                wait_cond: sys::FI_CQ_COND_NONE,
                wait_set: std::ptr::null_mut(),
            };
            lib.check(
                "fi_cq_open",
                (dops.cq_open)(
                    self.domain,
                    &mut cq_attr,
                    &mut inner.cq,
                    std::ptr::null_mut(),
                ),
            )?;
            for c in [&mut inner.wcntr, &mut inner.rcntr] {
                let mut attr = sys::fi_cntr_attr {
                    events: sys::FI_CNTR_EVENTS_COMP,
                    wait_obj: sys::FI_WAIT_NONE,
                    wait_set: std::ptr::null_mut(),
                    flags: 0,
                };
                lib.check(
                    "fi_cntr_open",
                    (dops.cntr_open)(self.domain, &mut attr, c, std::ptr::null_mut()),
                )?;
            }
            lib.check(
                "fi_endpoint",
                (dops.endpoint)(
                    self.domain,
                    self.info(),
                    &mut inner.ep,
                    std::ptr::null_mut(),
                ),
            )?;
            let ep_fid = &raw mut (*inner.ep).fid;
            let bind = (*(*ep_fid).ops).bind;
            lib.check("fi_ep_bind (av)", bind(ep_fid, &raw mut (*self.av).fid, 0))?;
            lib.check(
                "fi_ep_bind (cq)",
                bind(
                    ep_fid,
                    &raw mut (*inner.cq).fid,
                    sys::FI_TRANSMIT | sys::FI_RECV | sys::FI_SELECTIVE_COMPLETION,
                ),
            )?;
            // Messages sent count as writes: quiet completes them too.
            let sends = if self.ordered_messages() {
                sys::FI_SEND
            } else {
                0
            };
            lib.check(
                "fi_ep_bind (write counter)",
                bind(ep_fid, &raw mut (*inner.wcntr).fid, sys::FI_WRITE | sends),
            )?;
            lib.check(
                "fi_ep_bind (read counter)",
                bind(ep_fid, &raw mut (*inner.rcntr).fid, sys::FI_READ),
            )?;
            lib.check(
                "fi_enable",
                ((*(*ep_fid).ops).control)(ep_fid, sys::FI_ENABLE, std::ptr::null_mut()),
            )?;
        }
        let count = |cntr| Count {
            cntr,
            issued: Cell::new(0),
            errors_seen: Cell::new(0),
        };
        Ok(Endpoint {
            writes: count(inner.wcntr),
            reads: count(inner.rcntr),
            inner: Arc::new(inner),
            patience: None,
            bounce_used: Cell::new(0),
            unflushed: Default::default(),
        })
    }
}

impl Endpoint {
    /// This endpoint's address (`fi_getname`), for peers' [`Ofi::insert`].
    pub fn name(&self) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; 64];
        loop {
            let mut len = buf.len();
            // SAFETY: fi_getname through the endpoint's CM ops; buf has `len` bytes.
            let ret = unsafe {
                ((*(*self.inner.ep).cm).getname)(
                    &raw mut (*self.inner.ep).fid,
                    buf.as_mut_ptr().cast(),
                    &mut len,
                )
            };
            if ret == -sys::FI_ETOOSMALL && len > buf.len() {
                buf.resize(len, 0);
                continue;
            }
            self.lib().check("fi_getname", ret)?;
            buf.truncate(len);
            return Ok(buf);
        }
    }

    /// Registers `[addr, addr + len)` for remote access through this endpoint (bound to it
    /// where the provider wants that, `FI_MR_ENDPOINT`; elsewhere as [`Ofi::register`]). The
    /// memory must stay mapped until the region is dropped.
    pub fn register(&self, addr: *mut u8, len: usize) -> Result<crate::Region> {
        self.inner
            .ofi
            .register_on(addr, len, Some(self.inner.clone()))
    }

    /// The `Ofi` this endpoint belongs to.
    pub fn ofi(&self) -> &Arc<Ofi> {
        &self.inner.ofi
    }

    /// A handle that drives this endpoint's progress from any thread (see
    /// [`crate::ProgressThread`]).
    pub fn progress_handle(&self) -> crate::Progress {
        crate::Progress::new(self.inner.clone())
    }

    /// One round of progress (a completion-queue poll): what manual-progress providers
    /// need while a thread waits for something else.
    pub fn progress(&self) {
        self.inner.poll();
    }

    fn lib(&self) -> &crate::library::Lib {
        &self.inner.ofi.lib
    }

    fn ep(&self) -> *mut sys::fid_ep {
        self.inner.ep
    }

    /// Flags of a put to `peer` (`inject`: injected, the source copied at once). Where a
    /// flush reads back ([`Ofi::flushes_by_read`]), the first put to a peer since the last
    /// flush completes at delivery and the later ones once their source may be reused
    /// (not `FI_TRANSMIT_COMPLETE`, which over a reliable endpoint waits for the peer to
    /// acknowledge): a single put and quiet then costs one acknowledgement, as before, and
    /// a run of puts one acknowledgement and one read. `sent`: complete once sent even if
    /// first (the flush reads back: [`Self::note_put`]). Elsewhere, as [`Self::inject_flags`].
    fn put_flags(&self, inject: bool, peer: Addr, sent: bool) -> u64 {
        let base = if inject { sys::FI_INJECT } else { 0 };
        if self.inner.ofi.flush_by_read && (sent || self.written_since_flush(peer)) {
            base | sys::FI_INJECT_COMPLETE
        } else {
            base | self.delivered()
        }
    }

    fn written_since_flush(&self, peer: Addr) -> bool {
        let u = self.unflushed.borrow();
        u.state
            .get(peer.0 as usize)
            .is_some_and(|&s| s != Unflushed::CLEAN)
    }

    /// Notes a put to `peer` at `off` (of `key`) for the next flush, where puts may
    /// complete before delivery. Allocates only when a peer with a higher address than any
    /// before is written first, or more peers than ever before between two flushes.
    /// `sent`: the put completes once sent even if it is the first.
    fn note_put(&self, peer: Addr, off: u64, key: u64, sent: bool) {
        if !self.inner.ofi.flush_by_read {
            return;
        }
        let mut u = self.unflushed.borrow_mut();
        let i = peer.0 as usize;
        if i >= u.state.len() {
            u.state.resize(i + 1, Unflushed::CLEAN);
        }
        let first = u.state[i] == Unflushed::CLEAN;
        if first {
            u.list.push((peer, off, key));
        }
        u.state[i] = if first && !sent {
            Unflushed::DELIVERED
        } else {
            Unflushed::SENT
        };
    }

    /// Flags of injected writes: the source is copied at once, and the write counts as
    /// completed when delivered (if the provider can tell), as the endpoint's other writes.
    fn inject_flags(&self) -> u64 {
        sys::FI_INJECT | self.delivered()
    }

    /// The completion flag of an operation that completes at delivery where the provider
    /// can tell (`FI_DELIVERY_COMPLETE`, asked for at open), else none.
    fn delivered(&self) -> u64 {
        if self.inner.ofi.delivery_complete() {
            sys::FI_DELIVERY_COMPLETE
        } else {
            0
        }
    }

    /// A copy of `len` bytes from `src` in the bounce arena (waiting for the endpoint's
    /// writes when it is full).
    ///
    /// # Safety
    /// `src..src+len` is readable; `len <= BOUNCE_MAX`.
    unsafe fn bounce(&self, src: *const u8, len: usize) -> Result<*const u8> {
        let mut base = self.inner.bounce.load(std::sync::atomic::Ordering::Relaxed);
        if base.is_null() {
            // SAFETY: a non-zero size; freed by EpInner's Drop with the same layout.
            base = unsafe { std::alloc::alloc(bounce_layout()) };
            if base.is_null() {
                std::alloc::handle_alloc_error(bounce_layout());
            }
            self.inner
                .bounce
                .store(base, std::sync::atomic::Ordering::Relaxed);
        }
        if self.bounce_used.get() + len > BOUNCE_ARENA {
            self.wait("Endpoint::put_nb", &self.writes)?;
        }
        let at = self.bounce_used.get();
        self.bounce_used.set((at + len).next_multiple_of(64));
        // SAFETY: at + len <= BOUNCE_ARENA, in the arena this endpoint alone writes; the
        // bytes there belong to no outstanding write (those end before `at`).
        unsafe {
            let dst = base.add(at);
            std::ptr::copy_nonoverlapping(src, dst, len);
            Ok(dst)
        }
    }
}
