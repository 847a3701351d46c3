//! Workers: the thread-mode markers ([`Multi`], [`Local`]) and [`Worker`] (progress, waits
//! for requests, flush and fence, active-message handlers, connecting endpoints).

use crate::context::Ucp;
use crate::endpoint::{ep_error_cb, Endpoint, EpInner};
use crate::progress::Driver;
use crate::request::{issued, Issued};
use crate::status::{check, ptr_is_err, ptr_status, Result, Status, UcxError};
use crate::sys;
use rshmem_util::{handoff, wait};
use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI8, AtomicU64};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

mod sealed {
    pub trait Sealed {}
}

/// A worker's thread mode, [`Multi`] or [`Local`].
pub trait ThreadMode: sealed::Sealed + 'static {
    #[doc(hidden)]
    const UCS_MODE: sys::ucs_thread_mode_t;
}

/// `UCS_THREAD_MODE_MULTI`: the worker and its endpoints and keys are `Send + Sync`.
#[derive(Debug)]
pub struct Multi;

/// `UCS_THREAD_MODE_SERIALIZED` used by one thread: the worker and its endpoints and keys are
/// neither `Send` nor `Sync`.
#[derive(Debug)]
pub struct Local(PhantomData<*const Cell<()>>);

impl sealed::Sealed for Multi {}
impl sealed::Sealed for Local {}
impl ThreadMode for Multi {
    const UCS_MODE: sys::ucs_thread_mode_t = sys::UCS_THREAD_MODE_MULTI;
}
impl ThreadMode for Local {
    const UCS_MODE: sys::ucs_thread_mode_t = sys::UCS_THREAD_MODE_SERIALIZED;
}

pub(crate) struct WorkerInner {
    ucp: Arc<Ucp>,
    h: sys::ucp_worker_h,
    /// The active-message handlers set on this worker, boxed so that the address UCX was
    /// given stays put; dropped after the worker is destroyed (`Drop` runs before fields).
    /// Boxed twice: UCX takes a thin pointer, a handler is a fat one, and a vector's
    /// elements move when it grows.
    #[allow(clippy::vec_box)]
    am_handlers: Mutex<Vec<Box<AmHandler>>>,
    /// The service this worker's blocking waits drive, where a wait of the process left it
    /// out of its progress thread's set ([`Worker::serve_while_blocked`]).
    serves: OnceLock<Driver>,
}

// SAFETY: the handle is only used through Worker/Endpoint/RemoteKey, whose mode marker makes
// them Send/Sync only for UCS_THREAD_MODE_MULTI workers, which UCX locks internally.
unsafe impl Send for WorkerInner {}
// SAFETY: as for Send.
unsafe impl Sync for WorkerInner {}

impl Drop for WorkerInner {
    fn drop(&mut self) {
        // SAFETY: every endpoint holds an Arc of this, so none is left.
        unsafe { self.ucp.lib.ucp_worker_destroy(self.h) };
    }
}

impl WorkerInner {
    pub(crate) fn lib(&self) -> &sys::UcpLib {
        &self.ucp.lib
    }

    fn progress(&self) -> bool {
        // SAFETY: live worker; the mode marker rules out unsynchronised use.
        unsafe { self.lib().ucp_worker_progress(self.h) != 0 }
    }

    /// Progresses until `req` (an `_nbx` return value) completes, then releases it.
    pub(crate) fn wait(&self, routine: &'static str, req: sys::ucs_status_ptr_t) -> Result<()> {
        self.wait_until(routine, req, None).map(|_| ())
    }

    /// As [`WorkerInner::wait`], giving up at `deadline`: returns whether `req` completed
    /// (if not, it is released and UCX frees it when it completes or its worker goes).
    fn wait_until(
        &self,
        routine: &'static str,
        req: sys::ucs_status_ptr_t,
        deadline: Option<Instant>,
    ) -> Result<bool> {
        if req.is_null() {
            return Ok(true);
        }
        if ptr_is_err(req) {
            return Err(UcxError::Status {
                routine,
                status: ptr_status(req),
            });
        }
        let lib = self.lib();
        let mut serving = None;
        let mut waiter = wait::Waiter::new();
        loop {
            // SAFETY: req is a live request we own (no callback was set).
            let st = unsafe { lib.ucp_request_check_status(req) };
            if st != sys::UCS_INPROGRESS {
                // SAFETY: completed request, released once.
                unsafe { lib.ucp_request_free(req) };
                return check(routine, st).map(|()| true);
            }
            // Blocked: claimed here, not around every operation, so one that completes at
            // once (shared memory) never touches the handoff's lock.
            serving.get_or_insert_with(|| self.serves.get().and_then(Driver::drive_if_out));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                // SAFETY: a request we own, released once; UCX keeps it until it ends.
                unsafe { lib.ucp_request_free(req) };
                return Ok(false);
            }
            // A thread that claimed a service worker keeps serving it while it waits here:
            // the progress thread stands aside, and a peer may wait for this very service
            // to answer our request.
            let served = handoff::serve_claimed();
            if self.progress() || served {
                waiter.keep_hot();
            } else {
                // The waiting policy's spin, then yields (never its naps: nothing here
                // ends one early). A yield at each idle round, as before, was a system
                // call per poll: a fetch-add over TCP made about one per operation.
                waiter.snooze_with(|_| std::thread::yield_now());
            }
        }
    }
}

/// A UCP worker (one per communication context). See the crate doc for thread safety.
pub struct Worker<M: ThreadMode = Multi> {
    inner: Arc<WorkerInner>,
    _mode: PhantomData<M>,
}

impl<M: ThreadMode> fmt::Debug for Worker<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Worker({:p})", self.inner.h)
    }
}

impl<M: ThreadMode> Worker<M> {
    pub(crate) fn create(ucp: &Arc<Ucp>) -> Result<Self> {
        let params = sys::ucp_worker_params_t {
            field_mask: u64::from(sys::UCP_WORKER_PARAM_FIELD_THREAD_MODE),
            thread_mode: M::UCS_MODE,
            ..Default::default()
        };
        let mut h: sys::ucp_worker_h = std::ptr::null_mut();
        // SAFETY: params zero-initialised except thread_mode; h is an out pointer.
        check("ucp_worker_create", unsafe {
            ucp.lib.ucp_worker_create(ucp.ctx, &params, &mut h)
        })?;
        Ok(Worker {
            inner: Arc::new(WorkerInner {
                ucp: ucp.clone(),
                h,
                am_handlers: Mutex::new(Vec::new()),
                serves: OnceLock::new(),
            }),
            _mode: PhantomData,
        })
    }

    /// Runs `handler` for every active message `id` that arrives at this worker, inside the
    /// progress call that receives it (whichever thread progresses the worker), with the
    /// message's header and payload, whole. Senders use [`Endpoint::am_send`]. The handler
    /// stays until the worker is destroyed; it must not block, and a panic in it aborts the
    /// process (it runs inside UCX).
    pub fn set_am_handler(&self, id: u16, handler: AmHandler) -> Result<()> {
        let boxed = Box::new(handler);
        let param = sys::ucp_am_handler_param_t {
            field_mask: u64::from(
                sys::UCP_AM_HANDLER_PARAM_FIELD_ID
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_FLAGS
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_CB
                    | sys::UCP_AM_HANDLER_PARAM_FIELD_ARG,
            ),
            id: u32::from(id),
            flags: sys::UCP_AM_FLAG_WHOLE_MSG,
            cb: Some(am_trampoline),
            arg: (&*boxed as *const AmHandler).cast_mut().cast(),
        };
        let mut handlers = self
            .inner
            .am_handlers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // SAFETY: live worker; `arg` points into a box kept (below) until after the worker is
        // destroyed, and the trampoline reads it as that type.
        check("ucp_worker_set_am_recv_handler", unsafe {
            self.inner
                .lib()
                .ucp_worker_set_am_recv_handler(self.inner.h, &param)
        })?;
        handlers.push(boxed);
        Ok(())
    }

    /// The packed worker address, for a peer's [`Worker::connect`].
    pub fn address(&self) -> Result<Vec<u8>> {
        let lib = self.inner.lib();
        let mut addr: *mut sys::ucp_address_t = std::ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live worker; out pointers.
        check("ucp_worker_get_address", unsafe {
            lib.ucp_worker_get_address(self.inner.h, &mut addr, &mut len)
        })?;
        // SAFETY: UCX returned `len` bytes at `addr`, released right after the copy.
        let v = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
        // SAFETY: addr came from ucp_worker_get_address on this worker.
        unsafe { lib.ucp_worker_release_address(self.inner.h, addr) };
        Ok(v)
    }

    /// One round of progress; true if anything happened (call again until false).
    pub fn progress(&self) -> bool {
        self.inner.progress()
    }

    /// Makes this worker's blocking waits serve `service` too, while a wait of the process
    /// left it out of its progress thread's set ([`Driver::drive_if_out`]): a peer blocked
    /// towards this process may be waiting for that service to answer it. Set once, before
    /// the worker is used (a later call is ignored); `service` must not be this worker's.
    pub fn serve_while_blocked(&self, service: &Driver) {
        let _ = self.inner.serves.set(service.clone());
    }

    /// Orders the operations issued before it before those issued after it (no completion).
    pub fn fence(&self) -> Result<()> {
        // SAFETY: live worker.
        check("ucp_worker_fence", unsafe {
            self.inner.lib().ucp_worker_fence(self.inner.h)
        })
    }

    /// Blocks (progressing the worker) until every operation issued on this worker so far is
    /// complete at its target.
    pub fn flush(&self) -> Result<()> {
        self.flush_until(None).map(drop)
    }

    /// As [`Worker::flush`], giving up after `bound`: returns whether the flush completed.
    /// For a teardown, once every peer has said it needs nothing more: a peer that already
    /// exited may never answer (a process it started can hold its connections open).
    pub fn flush_within(&self, bound: Duration) -> Result<bool> {
        self.flush_until(Some(Instant::now() + bound))
    }

    fn flush_until(&self, deadline: Option<Instant>) -> Result<bool> {
        let param = sys::ucp_request_param_t::default();
        // SAFETY: live worker; no callback, the request is waited for or released below.
        let req = unsafe { self.inner.lib().ucp_worker_flush_nbx(self.inner.h, &param) };
        self.inner.wait_until("ucp_worker_flush_nbx", req, deadline)
    }

    /// Starts a flush of every operation issued on this worker so far: when it completes, they
    /// are complete at their targets. Same completion contract as the operations.
    ///
    /// # Safety
    /// `done` must stay alive until it is incremented.
    pub unsafe fn flush_nb(&self, done: Option<&AtomicU64>) -> Result<Issued> {
        let p = Endpoint::<M>::param(done);
        // SAFETY: live worker; the caller keeps done alive.
        let req = unsafe { self.inner.lib().ucp_worker_flush_nbx(self.inner.h, &p) };
        issued(
            self.inner.lib(),
            "ucp_worker_flush_nbx",
            req,
            done.is_some(),
        )
    }

    /// The worker's event file descriptor (readable when [`Worker::arm`]ed and work arrived).
    /// Owned by the worker: do not close it.
    pub fn efd(&self) -> Result<RawFd> {
        let mut fd: libc::c_int = -1;
        // SAFETY: live worker (created with the WAKEUP feature); fd is an out pointer.
        check("ucp_worker_get_efd", unsafe {
            self.inner.lib().ucp_worker_get_efd(self.inner.h, &mut fd)
        })?;
        Ok(fd)
    }

    /// Arms the event fd before sleeping on it: true if armed, false if events are pending
    /// (progress again instead of sleeping).
    pub fn arm(&self) -> Result<bool> {
        // SAFETY: live worker.
        match unsafe { self.inner.lib().ucp_worker_arm(self.inner.h) } {
            sys::UCS_OK => Ok(true),
            sys::UCS_ERR_BUSY => Ok(false),
            st => Err(UcxError::Status {
                routine: "ucp_worker_arm",
                status: Status(st),
            }),
        }
    }

    /// Wakes a thread sleeping on the event fd.
    pub fn signal(&self) -> Result<()> {
        // SAFETY: live worker; ucp_worker_signal is thread-safe in any mode.
        check("ucp_worker_signal", unsafe {
            self.inner.lib().ucp_worker_signal(self.inner.h)
        })
    }

    /// Creates an endpoint to the worker whose packed [`Worker::address`] is `remote_address`,
    /// with peer error handling: if the peer dies, pending and later operations fail with
    /// [`UcxError::PeerFailed`] instead of hanging. The connection is wired up lazily: the first
    /// operation needs both workers to progress.
    ///
    /// UCX 1.13 then uses only transports able to detect a dead peer (tcp here; rc/dc/ud on
    /// InfiniBand), not shared memory: see [`Worker::connect_with`].
    pub fn connect(&self, remote_address: &[u8]) -> Result<Endpoint<M>> {
        self.connect_with(remote_address, true)
    }

    /// As [`Worker::connect`]; with `peer_errors` false (`UCP_ERR_HANDLING_MODE_NONE`) UCX may
    /// use every transport, shared memory included, but an operation to a dead peer may hang.
    pub fn connect_with(&self, remote_address: &[u8], peer_errors: bool) -> Result<Endpoint<M>> {
        if remote_address.is_empty() {
            return Err(UcxError::InvalidArgument {
                routine: "Worker::connect",
                message: "empty remote address".into(),
            });
        }
        let failed = Box::new(AtomicI8::new(sys::UCS_OK));
        let params = sys::ucp_ep_params_t {
            field_mask: u64::from(
                sys::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                    | sys::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                    | sys::UCP_EP_PARAM_FIELD_ERR_HANDLER,
            ),
            address: remote_address.as_ptr().cast(),
            err_mode: if peer_errors {
                sys::UCP_ERR_HANDLING_MODE_PEER
            } else {
                sys::UCP_ERR_HANDLING_MODE_NONE
            },
            err_handler: sys::ucp_err_handler {
                cb: Some(ep_error_cb),
                arg: (&*failed as *const AtomicI8).cast_mut().cast(),
            },
            ..Default::default()
        };
        let mut h: sys::ucp_ep_h = std::ptr::null_mut();
        // SAFETY: live worker; the address bytes are read during the call (UCX copies what it
        // needs); the error handler's argument is a heap cell owned by the endpoint, which
        // outlives the UCX endpoint (closed in EpInner's Drop before the box is freed).
        check("ucp_ep_create", unsafe {
            self.inner
                .lib()
                .ucp_ep_create(self.inner.h, &params, &mut h)
        })?;
        Ok(Endpoint {
            inner: Arc::new(EpInner {
                worker: self.inner.clone(),
                h,
                failed,
            }),
            _mode: PhantomData,
        })
    }
}

/// An active-message handler (see [`Worker::set_am_handler`]): called with the message's
/// header and payload.
pub type AmHandler = Box<dyn Fn(&[u8], &[u8]) + Send + Sync>;

// Receive callback of every active-message id: the handler registered with it, on the
// message's header and payload (eager and whole: `Endpoint::am_send` never sends otherwise).
extern "C" fn am_trampoline(
    arg: *mut c_void,
    header: *const c_void,
    header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const sys::ucp_am_recv_param_t,
) -> sys::ucs_status_t {
    // SAFETY: UCX passes the receive parameters of this message.
    let attr = unsafe { (*param).recv_attr };
    if attr & u64::from(sys::UCP_AM_RECV_ATTR_FLAG_RNDV) != 0 {
        // Its payload would need a receive of its own; no sender of ours asks for that.
        eprintln!("rshmem-ucx: an active message arrived by rendezvous; aborting");
        std::process::abort();
    }
    let bytes = |p: *const c_void, n: usize| -> &[u8] {
        if n == 0 {
            &[]
        } else {
            // SAFETY: UCX passes `n` readable bytes at `p`, valid during this call.
            unsafe { std::slice::from_raw_parts(p.cast(), n) }
        }
    };
    // SAFETY: `arg` is the address of a handler `Worker::set_am_handler` keeps alive as long
    // as the worker.
    let handler = unsafe { &*(arg as *const AmHandler) };
    let run =
        std::panic::AssertUnwindSafe(|| handler(bytes(header, header_length), bytes(data, length)));
    if std::panic::catch_unwind(run).is_err() {
        // Unwinding into UCX is undefined behaviour.
        std::process::abort();
    }
    sys::UCS_OK
}
