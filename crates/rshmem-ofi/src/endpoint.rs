//! Endpoints and their one-sided operations.

use crate::bindings as sys;
use crate::domain::close;
use crate::{Addr, AtomicKind, AtomicOp, AtomicType, Ofi, OfiError, RemoteKey, Result};
use std::cell::{Cell, UnsafeCell};
use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
}

/// What handles each message an endpoint receives ([`Endpoint::receive_messages`]).
pub type MessageHandler = Box<dyn Fn(&[u8]) + Send + Sync>;

/// The receive side of an endpoint: slots posted with `fi_recvmsg`, each handed to the
/// handler when its message arrives and then posted again.
pub(crate) struct Receiver {
    /// `slots * slot` bytes, written by the provider while a slot is posted.
    bufs: *mut u8,
    slots: usize,
    slot: usize,
    handler: MessageHandler,
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
        let mut entry = sys::fi_cq_msg_entry {
            op_context: std::ptr::null_mut(),
            flags: 0,
            len: 0,
        };
        // SAFETY: fi_cq_read of at most one FI_CQ_FORMAT_MSG entry into `entry`.
        let r = unsafe {
            ((*(*self.cq).ops).read)(self.cq, (&mut entry as *mut sys::fi_cq_msg_entry).cast(), 1)
        };
        if r == -(sys::FI_EAVAIL as isize) {
            self.read_error();
            return true;
        }
        if r <= 0 {
            return false;
        }
        if let Some(rx) = rx.filter(|_| entry.flags & sys::FI_RECV != 0) {
            let i = (entry.op_context as usize).wrapping_sub(1);
            if i < rx.slots {
                // SAFETY: slot i completed: the provider wrote `len` bytes there (at most
                // the slot) and does not touch it until it is posted again below.
                let msg = unsafe {
                    std::slice::from_raw_parts(rx.bufs.add(i * rx.slot), entry.len.min(rx.slot))
                };
                (rx.handler)(msg);
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
    /// completion queue.
    pub fn endpoint(self: &Arc<Self>) -> Result<Endpoint> {
        self.open_endpoint(sys::FI_WAIT_UNSPEC)
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
        };
        // SAFETY: the domain's ops-table calls (fi_cq_open, fi_cntr_open, fi_endpoint,
        // fi_ep_bind, fi_enable) with complete attribute structs and out pointers; what is
        // opened is closed by EpInner's Drop if a later step fails.
        unsafe {
            let dops = &*(*self.domain).ops;
            let mut cq_attr = sys::fi_cq_attr {
                size: 0,
                flags: 0,
                format: sys::FI_CQ_FORMAT_MSG,
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
        })
    }
}

/// An atomic operand or result: 4 or 8 bytes in native byte order.
#[repr(C)]
#[derive(Clone, Copy)]
union Operand {
    u32: u32,
    u64: u64,
}

impl Operand {
    fn new(size: usize, v: u64) -> Operand {
        if size == 4 {
            Operand { u32: v as u32 }
        } else {
            Operand { u64: v }
        }
    }

    fn get(&self, size: usize) -> u64 {
        // SAFETY: both fields are plain integers; the one of `size` bytes was written.
        unsafe {
            if size == 4 {
                u64::from(self.u32)
            } else {
                self.u64
            }
        }
    }
}

/// Caller-owned storage of a non-blocking fetching atomic ([`Endpoint::atomic_fetch_nb`]):
/// libfabric reads the operands and writes the old value here while the operation is in
/// flight, so it must outlive the operation and not be reused before it completes.
#[repr(C)]
pub struct AmoBuffer {
    operand: UnsafeCell<Operand>,
    compare: UnsafeCell<Operand>,
    result: UnsafeCell<Operand>,
}

// SAFETY: plain integers; the unsafe issuing functions make the caller keep it unshared while
// an operation is in flight.
unsafe impl Send for AmoBuffer {}

impl Default for AmoBuffer {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for AmoBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AmoBuffer")
    }
}

impl AmoBuffer {
    /// An empty buffer.
    pub const fn new() -> Self {
        AmoBuffer {
            operand: UnsafeCell::new(Operand { u64: 0 }),
            compare: UnsafeCell::new(Operand { u64: 0 }),
            result: UnsafeCell::new(Operand { u64: 0 }),
        }
    }

    /// The old value fetched by the completed operation on `ty`. Read it only after the
    /// endpoint's reads completed ([`Endpoint::wait_reads`] or [`Endpoint::quiet`]).
    pub fn result(&self, ty: AtomicType) -> u64 {
        // SAFETY: after completion libfabric no longer writes the result.
        unsafe { (*self.result.get()).get(ty.size()) }
    }
}

const EAGAIN: isize = -(sys::FI_EAGAIN as isize);

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

    /// The longest message [`Endpoint::send_message`] sends.
    pub const MESSAGE_MAX: usize = 4096;

    /// Receives messages from now on ([`Ofi::ordered_messages`] must hold): `slots`
    /// receive buffers of `slot` bytes are posted, and each message that arrives is handed
    /// to `handler` by whichever thread reads the completion queue (its progress), one at
    /// a time, in arrival order. Once per endpoint.
    pub fn receive_messages(
        &self,
        slots: usize,
        slot: usize,
        handler: MessageHandler,
    ) -> Result<()> {
        const R: &str = "Endpoint::receive_messages";
        if !self.inner.ofi.ordered_messages() || slots == 0 || slot == 0 {
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: format!(
                    "provider {} has no ordered messages, or no slots were asked for",
                    self.inner.ofi.provider()
                ),
            });
        }
        let layout = Receiver::layout(slots, slot);
        // SAFETY: a non-zero size; freed by EpInner's Drop with the same layout.
        let bufs = unsafe { std::alloc::alloc(layout) };
        if bufs.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let rx = Receiver {
            bufs,
            slots,
            slot,
            handler,
            reader: Mutex::new(()),
        };
        if let Err(rx) = self.inner.recv.set(rx) {
            // SAFETY: allocated above with this layout, never posted.
            unsafe { std::alloc::dealloc(rx.bufs, layout) };
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: "the endpoint receives messages already".into(),
            });
        }
        let rx = self.inner.recv.get().expect("set above");
        for i in 0..slots {
            rx.post(self.ep(), self.lib(), i)?;
        }
        Ok(())
    }

    /// Sends `bytes` (at most [`Endpoint::MESSAGE_MAX`]) to the endpoint `peer`, which
    /// must receive messages ([`Endpoint::receive_messages`]) into slots that hold them;
    /// returns at once (the bytes are copied: injected, or into the bounce arena). Counted
    /// as a write: delivered once [`Endpoint::quiet`] returns. Messages of one endpoint
    /// arrive in the order sent.
    pub fn send_message(&self, bytes: &[u8], peer: Addr) -> Result<()> {
        const R: &str = "Endpoint::send_message";
        if !self.inner.ofi.ordered_messages() || bytes.len() > Self::MESSAGE_MAX {
            return Err(OfiError::InvalidArgument {
                routine: R,
                message: format!(
                    "{} bytes: provider {} sends ordered messages of at most {} bytes ({})",
                    bytes.len(),
                    self.inner.ofi.provider(),
                    Self::MESSAGE_MAX,
                    if self.inner.ofi.ordered_messages() {
                        "too long"
                    } else {
                        "it has none"
                    }
                ),
            });
        }
        let inject = bytes.len() <= self.inner.ofi.inject_size;
        let src = if inject {
            bytes.as_ptr()
        } else {
            // SAFETY: `bytes` is readable and at most MESSAGE_MAX <= BOUNCE_MAX long.
            unsafe { self.bounce(bytes.as_ptr(), bytes.len())? }
        };
        let iov = libc::iovec {
            iov_base: src.cast_mut().cast(),
            iov_len: bytes.len(),
        };
        let msg = sys::fi_msg {
            msg_iov: &iov,
            desc: std::ptr::null_mut(),
            iov_count: 1,
            addr: peer.0,
            context: std::ptr::null_mut(),
            data: 0,
        };
        let flags = if inject {
            self.inject_flags()
        } else if self.inner.ofi.delivery_complete() {
            sys::FI_DELIVERY_COMPLETE
        } else {
            0
        };
        // SAFETY: fi_sendmsg through the endpoint's message ops; injected bytes are copied
        // before it returns, bounced ones stay in the arena until the writes complete.
        self.issue("fi_sendmsg", &self.writes, || unsafe {
            ((*(*self.ep()).msg).sendmsg)(self.ep(), &msg, flags)
        })
    }

    fn lib(&self) -> &crate::library::Lib {
        &self.inner.ofi.lib
    }

    fn ep(&self) -> *mut sys::fid_ep {
        self.inner.ep
    }

    /// Flags of injected writes: the source is copied at once, and the write counts as
    /// completed when delivered (if the provider can tell), as the endpoint's other writes.
    fn inject_flags(&self) -> u64 {
        if self.inner.ofi.delivery_complete() {
            sys::FI_INJECT | sys::FI_DELIVERY_COMPLETE
        } else {
            sys::FI_INJECT
        }
    }

    /// Makes operations that the provider keeps refusing with `-FI_EAGAIN` for longer than
    /// `patience` fail with [`OfiError::Unreachable`] (`None`, the default: retry forever).
    /// Over `tcp;ofi_rxm` an operation towards a process that exited is refused that way
    /// for ever, as the provider tries to reconnect.
    pub fn set_issue_patience(&mut self, patience: Option<Duration>) {
        self.patience = patience;
    }

    /// Issues with `f` until it does not return `-FI_EAGAIN` (queue full: progress, retry;
    /// at most the endpoint's patience), then counts it in `count`.
    fn issue(
        &self,
        routine: &'static str,
        count: &Count,
        mut f: impl FnMut() -> isize,
    ) -> Result<()> {
        let mut refused_since = None;
        loop {
            match f() {
                0 => {
                    count.issued.set(count.issued.get() + 1);
                    return Ok(());
                }
                EAGAIN => {
                    if let Some(p) = self.patience {
                        let since = *refused_since.get_or_insert_with(Instant::now);
                        if since.elapsed() > p {
                            return Err(OfiError::Unreachable {
                                routine,
                                provider: self.inner.ofi.provider().to_string(),
                            });
                        }
                    }
                    if !self.inner.poll() && !rshmem_util::handoff::serve_claimed() {
                        std::thread::yield_now();
                    }
                }
                r => return Err(self.lib().error(routine, r)),
            }
        }
    }

    /// Waits until everything issued on `count` completed; reports a failure among them.
    fn wait(&self, routine: &'static str, count: &Count) -> Result<()> {
        let r = self.wait_within(routine, count, None);
        if std::ptr::eq(count, &self.writes) {
            // Every write completed (or failed): none reads the arena any more.
            self.bounce_used.set(0);
        }
        r
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

    /// [`Endpoint::wait`]; with `patience`, fails with [`OfiError::Unreachable`] once
    /// nothing completed for that long.
    fn wait_within(
        &self,
        routine: &'static str,
        count: &Count,
        patience: Option<Duration>,
    ) -> Result<()> {
        let target = count.issued.get();
        let mut round = 0u32;
        // (completions seen, when that number last moved), checked every 64 rounds.
        let mut stall: Option<(u64, Instant)> = None;
        loop {
            // Reading a counter drives progress where the provider needs it (util counters
            // progress their endpoints), so nothing else is polled here.
            // Each operation counts once, as done or as an error; errors already reported
            // are known, so only a new one needs a look at the error counter.
            let done = count.done();
            if done + count.errors_seen.get() >= target {
                return Ok(());
            }
            round += 1;
            if round.is_multiple_of(8) {
                let errors = count.errors();
                if done + errors >= target {
                    count.errors_seen.set(errors);
                    return Err(OfiError::Failed {
                        routine,
                        provider: self.inner.ofi.provider().to_string(),
                        message: self.inner.take_error(),
                    });
                }
            }
            if let Some(p) = patience.filter(|_| round.is_multiple_of(64)) {
                let seen = done + count.errors();
                match stall {
                    Some((n, since)) if n == seen => {
                        if since.elapsed() > p {
                            return Err(OfiError::Unreachable {
                                routine,
                                provider: self.inner.ofi.provider().to_string(),
                            });
                        }
                    }
                    _ => stall = Some((seen, Instant::now())),
                }
            }
            // A thread that claimed the endpoint peers' operations arrive on serves them
            // while it waits (they may be what its own operations wait for).
            if round > 16 && !rshmem_util::handoff::serve_claimed() {
                std::thread::yield_now();
            }
        }
    }

    /// Waits for every write (put, posted atomic) issued so far on this endpoint.
    pub fn wait_writes(&self) -> Result<()> {
        self.wait("Endpoint::wait_writes", &self.writes)
    }

    /// Waits for every read (get, fetching atomic) issued so far on this endpoint.
    pub fn wait_reads(&self) -> Result<()> {
        self.wait("Endpoint::wait_reads", &self.reads)
    }

    /// [`Endpoint::wait_reads`], bounded: fails with [`OfiError::Unreachable`] once no read
    /// completed (or failed) for `patience` while some are outstanding. Over `tcp;ofi_rxm`
    /// a read from a process that exited after its connection was made neither completes
    /// nor fails. After that error the reads stay in flight and may still complete: keep
    /// the endpoint and their buffers alive, and use the endpoint no more.
    pub fn wait_reads_within(&self, patience: Duration) -> Result<()> {
        self.wait_within("Endpoint::wait_reads_within", &self.reads, Some(patience))
    }

    /// Completes every operation issued so far on this endpoint (remotely, where the
    /// provider has delivery completion: [`Ofi::delivery_complete`]).
    pub fn quiet(&self) -> Result<()> {
        self.wait("Endpoint::quiet", &self.writes)?;
        self.wait("Endpoint::quiet", &self.reads)
    }

    /// Orders this endpoint's earlier writes before its later ones: nothing where the
    /// provider orders writes ([`Ofi::ordered_writes`]), else a wait for the earlier writes.
    pub fn fence(&self) -> Result<()> {
        if self.inner.ofi.ordered_writes {
            Ok(())
        } else {
            self.wait("Endpoint::fence", &self.writes)
        }
    }

    /// Issued writes and reads not completed yet (a diagnostic; reads the counters).
    pub fn outstanding(&self) -> (u64, u64) {
        (self.writes.outstanding(), self.reads.outstanding())
    }

    /// Writes and reads issued on this endpoint since it was made.
    pub fn issued(&self) -> (u64, u64) {
        (self.writes.issued.get(), self.reads.issued.get())
    }

    /// Starts writing `len` bytes from `src` to `raddr` at `peer` (in the region of `key`).
    ///
    /// # Safety
    /// Unless [`Issued::Done`] is returned, `src..src+len` must stay readable and unmodified
    /// until the endpoint's writes complete ([`Endpoint::wait_writes`] / [`Endpoint::quiet`]).
    pub unsafe fn put_nb(
        &self,
        src: *const u8,
        len: usize,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
    ) -> Result<Issued> {
        const R: &str = "Endpoint::put_nb";
        let off = self.inner.ofi.target(R, raddr, len, key)?;
        // SAFETY: fi_writemsg / fi_write through the endpoint's RMA ops; the caller keeps
        // src valid as documented (an injected source is copied before the call returns).
        unsafe {
            let rma = &*(*self.ep()).rma;
            if len <= self.inner.ofi.inject_size {
                // Not fi_inject_write: its completion may count before delivery (tcp;ofi_rxm
                // counts it once sent), which would let quiet return too early.
                let iov = libc::iovec {
                    iov_base: src.cast_mut().cast(),
                    iov_len: len,
                };
                let rma_iov = sys::fi_rma_iov {
                    addr: off,
                    len,
                    key: key.key,
                };
                let msg = sys::fi_msg_rma {
                    msg_iov: &iov,
                    desc: std::ptr::null_mut(),
                    iov_count: 1,
                    addr: peer.0,
                    rma_iov: &rma_iov,
                    rma_iov_count: 1,
                    context: std::ptr::null_mut(),
                    data: 0,
                };
                let flags = self.inject_flags();
                self.issue("fi_writemsg", &self.writes, || {
                    (rma.writemsg)(self.ep(), &msg, flags)
                })?;
                Ok(Issued::Done)
            } else {
                let bounced = len <= BOUNCE_MAX;
                let src = if bounced { self.bounce(src, len)? } else { src };
                self.issue("fi_write", &self.writes, || {
                    (rma.write)(
                        self.ep(),
                        src.cast(),
                        len,
                        std::ptr::null_mut(),
                        peer.0,
                        off,
                        key.key,
                        std::ptr::null_mut(),
                    )
                })?;
                Ok(if bounced {
                    Issued::Done
                } else {
                    Issued::Pending
                })
            }
        }
    }

    /// Starts reading `len` bytes at `raddr` at `peer` into `dst`.
    ///
    /// # Safety
    /// `dst..dst+len` must stay writable and otherwise unused until the endpoint's reads
    /// complete ([`Endpoint::wait_reads`] / [`Endpoint::quiet`]).
    pub unsafe fn get_nb(
        &self,
        dst: *mut u8,
        len: usize,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
    ) -> Result<Issued> {
        const R: &str = "Endpoint::get_nb";
        let off = self.inner.ofi.target(R, raddr, len, key)?;
        // SAFETY: fi_read through the endpoint's RMA ops; the caller keeps dst valid.
        unsafe {
            let rma = &*(*self.ep()).rma;
            self.issue("fi_read", &self.reads, || {
                (rma.read)(
                    self.ep(),
                    dst.cast(),
                    len,
                    std::ptr::null_mut(),
                    peer.0,
                    off,
                    key.key,
                    std::ptr::null_mut(),
                )
            })?;
        }
        Ok(Issued::Pending)
    }

    /// Writes `src` to `raddr` at `peer` and returns once `src` may be reused (and, for
    /// writes too long to inject, once the endpoint's writes completed). Remote completion
    /// of injected writes needs [`Endpoint::quiet`].
    pub fn put(&self, src: &[u8], peer: Addr, raddr: u64, key: &RemoteKey) -> Result<()> {
        // SAFETY: src is borrowed until the wait below when the write is pending.
        match unsafe { self.put_nb(src.as_ptr(), src.len(), peer, raddr, key) }? {
            Issued::Done => Ok(()),
            Issued::Pending => self.wait("Endpoint::put", &self.writes),
        }
    }

    /// Reads `dst.len()` bytes at `raddr` at `peer` into `dst` and waits for them.
    pub fn get(&self, dst: &mut [u8], peer: Addr, raddr: u64, key: &RemoteKey) -> Result<()> {
        // SAFETY: dst is borrowed mutably until the wait below.
        unsafe { self.get_nb(dst.as_mut_ptr(), dst.len(), peer, raddr, key) }?;
        self.wait("Endpoint::get", &self.reads)
    }

    fn check_atomic(
        &self,
        routine: &'static str,
        kind: AtomicKind,
        ty: AtomicType,
        op: AtomicOp,
    ) -> Result<()> {
        let ofi = &self.inner.ofi;
        if !kind.allows(op) {
            return Err(OfiError::InvalidArgument {
                routine,
                message: format!("{op:?} has no {kind:?} form"),
            });
        }
        if !ofi.atomic_supported(kind, ty, op) {
            return Err(OfiError::Unsupported {
                routine,
                provider: ofi.provider().to_string(),
                what: format!("{kind:?} {op:?} on {ty:?}"),
            });
        }
        Ok(())
    }

    /// A posted (non-fetching) atomic `op` with `value` (its bits: `f64::to_bits`, or the
    /// low 32 bits for 4-byte types) on the `ty` word at `raddr`; returns at once (the
    /// operand is injected). Counts as a write.
    #[allow(clippy::too_many_arguments)]
    pub fn atomic_post(
        &self,
        op: AtomicOp,
        ty: AtomicType,
        value: u64,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
    ) -> Result<()> {
        const R: &str = "Endpoint::atomic_post";
        self.check_atomic(R, AtomicKind::Post, ty, op)?;
        let off = self.inner.ofi.target(R, raddr, ty.size(), key)?;
        let mut operand = Operand::new(ty.size(), value);
        let ioc = sys::fi_ioc {
            addr: (&mut operand as *mut Operand).cast(),
            count: 1,
        };
        let rma_ioc = sys::fi_rma_ioc {
            addr: off,
            count: 1,
            key: key.key,
        };
        let msg = sys::fi_msg_atomic {
            msg_iov: &ioc,
            desc: std::ptr::null_mut(),
            iov_count: 1,
            addr: peer.0,
            rma_iov: &rma_ioc,
            rma_iov_count: 1,
            datatype: ty.fi(),
            op: op.fi(),
            context: std::ptr::null_mut(),
            data: 0,
        };
        let flags = self.inject_flags();
        // SAFETY: fi_atomicmsg through the endpoint's atomic ops, injected: the operand is
        // copied before the call returns.
        unsafe {
            let atomic = &*(*self.ep()).atomic;
            self.issue("fi_atomicmsg", &self.writes, || {
                (atomic.writemsg)(self.ep(), &msg, flags)
            })
        }
    }

    /// A fetching atomic `op` with `value` on the `ty` word at `raddr`; waits and returns the
    /// old value (`Read` ignores `value`; `Write` is a swap).
    #[allow(clippy::too_many_arguments)]
    pub fn atomic_fetch(
        &self,
        op: AtomicOp,
        ty: AtomicType,
        value: u64,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
    ) -> Result<u64> {
        let buf = AmoBuffer::new();
        // SAFETY: buf lives until the wait below completes the operation.
        unsafe { self.atomic_fetch_nb(op, ty, value, peer, raddr, key, &buf) }?;
        self.wait("Endpoint::atomic_fetch", &self.reads)?;
        Ok(buf.result(ty))
    }

    /// Compare-and-swap on the `ty` word at `raddr`: stores `new` if it holds `compare`;
    /// waits and returns the old value (equal to `compare` iff the swap happened).
    #[allow(clippy::too_many_arguments)]
    pub fn compare_swap(
        &self,
        ty: AtomicType,
        compare: u64,
        new: u64,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
    ) -> Result<u64> {
        let buf = AmoBuffer::new();
        // SAFETY: buf lives until the wait below completes the operation.
        unsafe { self.compare_swap_nb(ty, compare, new, peer, raddr, key, &buf) }?;
        self.wait("Endpoint::compare_swap", &self.reads)?;
        Ok(buf.result(ty))
    }

    /// Starts a fetching atomic (as [`Endpoint::atomic_fetch`]); the old value is in `buf`
    /// once the endpoint's reads completed. Counts as a read.
    ///
    /// # Safety
    /// `buf` must stay alive and unused by anything else until the endpoint's reads complete
    /// ([`Endpoint::wait_reads`] / [`Endpoint::quiet`]).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn atomic_fetch_nb(
        &self,
        op: AtomicOp,
        ty: AtomicType,
        value: u64,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
        buf: &AmoBuffer,
    ) -> Result<()> {
        const R: &str = "Endpoint::atomic_fetch";
        self.check_atomic(R, AtomicKind::Fetch, ty, op)?;
        let off = self.inner.ofi.target(R, raddr, ty.size(), key)?;
        // SAFETY: the caller gives us buf exclusively until completion; fi_fetch_atomic
        // through the endpoint's atomic ops reads the operand and writes the result there.
        unsafe {
            *buf.operand.get() = Operand::new(ty.size(), value);
            let atomic = &*(*self.ep()).atomic;
            self.issue("fi_fetch_atomic", &self.reads, || {
                (atomic.readwrite)(
                    self.ep(),
                    buf.operand.get().cast_const().cast(),
                    1,
                    std::ptr::null_mut(),
                    buf.result.get().cast(),
                    std::ptr::null_mut(),
                    peer.0,
                    off,
                    key.key,
                    ty.fi(),
                    op.fi(),
                    std::ptr::null_mut(),
                )
            })
        }
    }

    /// Starts a compare-and-swap (as [`Endpoint::compare_swap`]); the old value is in `buf`
    /// once the endpoint's reads completed. Counts as a read.
    ///
    /// # Safety
    /// As for [`Endpoint::atomic_fetch_nb`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn compare_swap_nb(
        &self,
        ty: AtomicType,
        compare: u64,
        new: u64,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
        buf: &AmoBuffer,
    ) -> Result<()> {
        const R: &str = "Endpoint::compare_swap";
        self.check_atomic(R, AtomicKind::Compare, ty, AtomicOp::CompareSwap)?;
        let off = self.inner.ofi.target(R, raddr, ty.size(), key)?;
        // SAFETY: as in atomic_fetch_nb; fi_compare_atomic reads operand and compare and
        // writes the result in buf.
        unsafe {
            *buf.operand.get() = Operand::new(ty.size(), new);
            *buf.compare.get() = Operand::new(ty.size(), compare);
            let atomic = &*(*self.ep()).atomic;
            self.issue("fi_compare_atomic", &self.reads, || {
                (atomic.compwrite)(
                    self.ep(),
                    buf.operand.get().cast_const().cast(),
                    1,
                    std::ptr::null_mut(),
                    buf.compare.get().cast_const().cast::<c_void>(),
                    std::ptr::null_mut(),
                    buf.result.get().cast(),
                    std::ptr::null_mut(),
                    peer.0,
                    off,
                    key.key,
                    ty.fi(),
                    sys::FI_CSWAP,
                    std::ptr::null_mut(),
                )
            })
        }
    }
}
