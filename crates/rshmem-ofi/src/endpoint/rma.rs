//! One-sided puts and gets.

use crate::bindings as sys;
use crate::{Addr, RemoteKey, Result};

use super::{Endpoint, Issued, BOUNCE_MAX};

impl Endpoint {
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
        // SAFETY: forwarded contract.
        unsafe { self.write_nb("Endpoint::put_nb", src, len, peer, raddr, key, None) }
    }

    /// [`Endpoint::put_nb`] whose 8 bytes of `data` reach the target's completion queue once
    /// the written bytes are in place there ([`Ofi::writes_with_data`] must hold): an
    /// endpoint receiving at `peer` hands them to its handler ([`crate::Arrival::Data`]).
    /// Completes once sent where a flush reads back ([`Ofi::flushes_by_read`]; the next
    /// [`Endpoint::quiet`] reads back from `peer`), so that a run of them waits for no
    /// acknowledgement; elsewhere as a put.
    ///
    /// # Safety
    /// As [`Endpoint::put_nb`].
    ///
    /// [`Ofi::writes_with_data`]: crate::Ofi::writes_with_data
    /// [`Ofi::flushes_by_read`]: crate::Ofi::flushes_by_read
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn put_with_data_nb(
        &self,
        src: *const u8,
        len: usize,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
        data: u64,
    ) -> Result<Issued> {
        const R: &str = "Endpoint::put_with_data_nb";
        if !self.inner.ofi.writes_with_data() {
            return Err(crate::OfiError::InvalidArgument {
                routine: R,
                message: format!(
                    "provider {} carries no data with writes",
                    self.inner.ofi.provider()
                ),
            });
        }
        // SAFETY: forwarded contract.
        unsafe { self.write_nb(R, src, len, peer, raddr, key, Some(data)) }
    }

    /// A put, with `data` for the target's completion queue if any.
    ///
    /// # Safety
    /// As [`Endpoint::put_nb`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn write_nb(
        &self,
        routine: &'static str,
        src: *const u8,
        len: usize,
        peer: Addr,
        raddr: u64,
        key: &RemoteKey,
        data: Option<u64>,
    ) -> Result<Issued> {
        let off = self.inner.ofi.target(routine, raddr, len, key)?;
        // Injected, or copied into the bounce arena, or left in place until completion.
        let inject = len <= self.inner.ofi.inject_size;
        let bounced = !inject && len <= BOUNCE_MAX;
        let src = if bounced {
            // SAFETY: the caller's contract: `src` is readable for `len` bytes.
            unsafe { self.bounce(src, len)? }
        } else {
            src
        };
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
            data: data.unwrap_or(0),
        };
        // Not fi_inject_write nor fi_write: their completion follows the endpoint's
        // default, and fi_inject_write's may count before delivery (tcp;ofi_rxm counts it
        // once sent), which would let quiet return too early unless it reads back
        // (`Ofi::flushes_by_read`): the flags say which.
        let with_data = if data.is_some() {
            sys::FI_REMOTE_CQ_DATA
        } else {
            0
        };
        let flags = self.put_flags(inject, peer, data.is_some()) | with_data;
        // SAFETY: fi_writemsg through the endpoint's RMA ops; the caller keeps src valid as
        // documented (an injected source is copied before the call returns, a bounced one
        // lives in the arena until the writes complete).
        self.issue(routine, &self.writes, || unsafe {
            ((*(*self.ep()).rma).writemsg)(self.ep(), &msg, flags)
        })?;
        self.note_put(peer, off, key.key, data.is_some());
        Ok(if inject || bounced {
            Issued::Done
        } else {
            Issued::Pending
        })
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
}
