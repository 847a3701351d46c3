//! Endpoints to remote workers ([`Endpoint`]: put, get, active messages; its atomics are in
//! `atomics.rs`) and the remote keys unpacked on them ([`RemoteKey`]).

use crate::request::{send_done_cb, Issued};
use crate::status::{check, ptr_is_err, ptr_status, Result, Status, UcxError};
use crate::sys;
use crate::worker::{Multi, ThreadMode, WorkerInner};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI8, AtomicU64, Ordering};
use std::sync::Arc;

pub(crate) extern "C" fn ep_error_cb(
    arg: *mut c_void,
    _ep: sys::ucp_ep_h,
    status: sys::ucs_status_t,
) {
    // SAFETY: arg is the endpoint's failure cell, alive until the endpoint is closed.
    let cell = unsafe { &*(arg as *const AtomicI8) };
    cell.store(
        if status == sys::UCS_OK {
            sys::UCS_ERR_IO_ERROR
        } else {
            status
        },
        Ordering::Release,
    );
}

pub(crate) struct EpInner {
    pub(crate) worker: Arc<WorkerInner>,
    pub(crate) h: sys::ucp_ep_h,
    pub(crate) failed: Box<AtomicI8>,
}

// SAFETY: as for WorkerInner: only reachable through mode-marked Endpoint/RemoteKey; the failure
// cell is atomic.
unsafe impl Send for EpInner {}
// SAFETY: as for Send.
unsafe impl Sync for EpInner {}

impl Drop for EpInner {
    fn drop(&mut self) {
        let mut param = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_FLAGS,
            ..Default::default()
        };
        param.flags = sys::UCP_EP_CLOSE_FLAG_FORCE;
        // SAFETY: every RemoteKey of this endpoint holds an Arc of this, so all are destroyed;
        // the endpoint is closed once.
        let req = unsafe { self.worker.lib().ucp_ep_close_nbx(self.h, &param) };
        // A forced close completes locally; its status is of no use here.
        let _ = self.worker.wait("ucp_ep_close_nbx", req);
    }
}

/// An endpoint to a remote worker. Closed (forced) on drop, once its remote keys are gone.
pub struct Endpoint<M: ThreadMode = Multi> {
    pub(crate) inner: Arc<EpInner>,
    pub(crate) _mode: PhantomData<M>,
}

impl<M: ThreadMode> fmt::Debug for Endpoint<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Endpoint({:p})", self.inner.h)
    }
}

/// A remote key unpacked on one endpoint; destroyed on drop (before its endpoint is closed).
pub struct RemoteKey<M: ThreadMode = Multi> {
    ep: Arc<EpInner>,
    pub(crate) h: RkeyHandle,
    _mode: PhantomData<M>,
}

#[derive(Clone, Copy)]
pub(crate) struct RkeyHandle(pub(crate) sys::ucp_rkey_h);

// SAFETY: only reachable through the mode-marked RemoteKey; operations using it run under the
// worker's lock in UCS_THREAD_MODE_MULTI.
unsafe impl Send for RkeyHandle {}
// SAFETY: as for Send.
unsafe impl Sync for RkeyHandle {}

impl<M: ThreadMode> fmt::Debug for RemoteKey<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RemoteKey({:p})", self.h.0)
    }
}

impl<M: ThreadMode> RemoteKey<M> {
    /// A pointer through which this process reaches the remote byte at `raddr` with loads
    /// and stores, where UCX maps the remote memory here (its shared-memory transports, on
    /// memory UCX allocated); `None` elsewhere.
    pub fn local_ptr(&self, raddr: u64) -> Option<*mut u8> {
        let mut p = std::ptr::null_mut();
        // SAFETY: a live key (its endpoint is held); `p` is a valid out-pointer.
        let st = unsafe { self.ep.worker.lib().ucp_rkey_ptr(self.h.0, raddr, &mut p) };
        (st == sys::UCS_OK && !p.is_null()).then_some(p.cast())
    }
}

impl<M: ThreadMode> Drop for RemoteKey<M> {
    fn drop(&mut self) {
        // SAFETY: the key came from ucp_ep_rkey_unpack; its endpoint is still open (we hold it).
        unsafe { self.ep.worker.lib().ucp_rkey_destroy(self.h.0) };
    }
}

impl<M: ThreadMode> Endpoint<M> {
    /// The endpoint's state: `Ok` or the peer failure UCX reported.
    #[inline]
    pub fn status(&self) -> Result<()> {
        match self.inner.failed.load(Ordering::Acquire) {
            sys::UCS_OK => Ok(()),
            st => Err(UcxError::PeerFailed(Status(st))),
        }
    }

    /// Unpacks a peer's packed remote key ([`Region::pack_rkey`]) for use on this endpoint.
    ///
    /// [`Region::pack_rkey`]: crate::Region::pack_rkey
    pub fn unpack_rkey(&self, packed: &[u8]) -> Result<RemoteKey<M>> {
        if packed.is_empty() {
            return Err(UcxError::InvalidArgument {
                routine: "Endpoint::unpack_rkey",
                message: "empty packed key".into(),
            });
        }
        let mut h: sys::ucp_rkey_h = std::ptr::null_mut();
        // SAFETY: open endpoint; the packed bytes are read during the call.
        check("ucp_ep_rkey_unpack", unsafe {
            self.lib()
                .ucp_ep_rkey_unpack(self.inner.h, packed.as_ptr().cast(), &mut h)
        })?;
        Ok(RemoteKey {
            ep: self.inner.clone(),
            h: RkeyHandle(h),
            _mode: PhantomData,
        })
    }

    /// Closes the endpoint now (forced: outstanding operations are dropped), or when its last
    /// remote key is dropped if some are still alive.
    pub fn close(self) {
        drop(self)
    }

    pub(crate) fn lib(&self) -> &sys::UcpLib {
        self.inner.worker.lib()
    }

    #[inline]
    pub(crate) fn check_rkey(&self, routine: &'static str, rkey: &RemoteKey<M>) -> Result<()> {
        if !Arc::ptr_eq(&self.inner, &rkey.ep) {
            return Err(UcxError::InvalidArgument {
                routine,
                message: "remote key unpacked on another endpoint".into(),
            });
        }
        self.status()
    }

    /// Waits for `req`; a failure on a failed endpoint is reported as the peer's failure.
    #[inline]
    pub(crate) fn wait(&self, routine: &'static str, req: sys::ucs_status_ptr_t) -> Result<()> {
        // Completed at once (shared memory, short messages): nothing to wait for.
        if req.is_null() {
            return Ok(());
        }
        self.inner
            .worker
            .wait(routine, req)
            .map_err(|e| match self.status() {
                Err(peer) => peer,
                Ok(()) => e,
            })
    }

    pub(crate) fn param(done: Option<&AtomicU64>) -> sys::ucp_request_param_t {
        let mut p = sys::ucp_request_param_t::default();
        if let Some(d) = done {
            p.op_attr_mask = sys::UCP_OP_ATTR_FIELD_CALLBACK | sys::UCP_OP_ATTR_FIELD_USER_DATA;
            p.cb.send = Some(send_done_cb);
            p.user_data = (d as *const AtomicU64).cast_mut().cast();
        }
        p
    }

    pub(crate) fn issued(
        &self,
        routine: &'static str,
        req: sys::ucs_status_ptr_t,
        counted: bool,
    ) -> Result<Issued> {
        if req.is_null() {
            Ok(Issued::Done)
        } else if ptr_is_err(req) {
            Err(UcxError::Status {
                routine,
                status: ptr_status(req),
            })
        } else {
            if !counted {
                // SAFETY: a request we do not need; UCX completes it internally.
                unsafe { self.lib().ucp_request_free(req) };
            }
            Ok(Issued::Pending)
        }
    }

    /// Starts writing `len` bytes from `src` to `raddr` in the peer's region of `rkey`.
    ///
    /// # Safety
    /// `src..src+len` must stay readable and unmodified until local completion ([`Issued::Done`]
    /// or the `done` increment), and `done` must stay alive until it is incremented.
    pub unsafe fn put(
        &self,
        src: *const u8,
        len: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        self.check_rkey("Endpoint::put", rkey)?;
        let p = Self::param(done);
        // SAFETY: the caller keeps src and done alive as documented; the key is this endpoint's.
        let req = unsafe {
            self.lib()
                .ucp_put_nbx(self.inner.h, src.cast(), len, raddr, rkey.h.0, &p)
        };
        self.issued("ucp_put_nbx", req, done.is_some())
    }

    /// Starts reading `len` bytes at `raddr` in the peer's region of `rkey` into `dst`.
    ///
    /// # Safety
    /// `dst..dst+len` must stay writable and otherwise unused until completion ([`Issued::Done`]
    /// or the `done` increment), and `done` must stay alive until it is incremented.
    pub unsafe fn get(
        &self,
        dst: *mut u8,
        len: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        self.check_rkey("Endpoint::get", rkey)?;
        let p = Self::param(done);
        // SAFETY: the caller keeps dst and done alive as documented; the key is this endpoint's.
        let req = unsafe {
            self.lib()
                .ucp_get_nbx(self.inner.h, dst.cast(), len, raddr, rkey.h.0, &p)
        };
        self.issued("ucp_get_nbx", req, done.is_some())
    }

    /// Writes `src` to `raddr` and waits for local completion (`src` reusable; remote
    /// completion needs [`Worker::flush`]).
    ///
    /// [`Worker::flush`]: crate::Worker::flush
    pub fn put_blocking(&self, src: &[u8], raddr: u64, rkey: &RemoteKey<M>) -> Result<()> {
        self.check_rkey("Endpoint::put_blocking", rkey)?;
        let p = sys::ucp_request_param_t::default();
        // SAFETY: src is borrowed until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_put_nbx(
                self.inner.h,
                src.as_ptr().cast(),
                src.len(),
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_put_nbx", req)
    }

    /// Sends active message `id` with `header` and `data` to the peer's worker, eagerly (its
    /// handler gets the message whole), and waits for local completion (both buffers
    /// reusable). Delivery is not awaited: a [`Worker::flush`] covers the message once sent.
    ///
    /// [`Worker::flush`]: crate::Worker::flush
    pub fn am_send(&self, id: u16, header: &[u8], data: &[u8]) -> Result<()> {
        self.status()?;
        let p = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_FLAGS,
            flags: sys::UCP_AM_SEND_FLAG_EAGER,
            ..Default::default()
        };
        // SAFETY: header and data are borrowed until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_am_send_nbx(
                self.inner.h,
                u32::from(id),
                header.as_ptr().cast(),
                header.len(),
                data.as_ptr().cast(),
                data.len(),
                &p,
            )
        };
        self.wait("ucp_am_send_nbx", req)
    }

    /// Reads `dst.len()` bytes at `raddr` into `dst` and waits until they arrived.
    pub fn get_blocking(&self, dst: &mut [u8], raddr: u64, rkey: &RemoteKey<M>) -> Result<()> {
        self.check_rkey("Endpoint::get_blocking", rkey)?;
        let p = sys::ucp_request_param_t::default();
        // SAFETY: dst is borrowed mutably until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_get_nbx(
                self.inner.h,
                dst.as_mut_ptr().cast(),
                dst.len(),
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_get_nbx", req)
    }
}
