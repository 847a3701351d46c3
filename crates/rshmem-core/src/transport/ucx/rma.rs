//! Transfers: blocking and non-blocking puts and gets, copies where the peer's heap is
//! mapped here.

use std::sync::atomic::Ordering;

use rshmem_ucx::Issued;

use super::Ucx;
use crate::error::Result;
use crate::transport::engine::Completion;
use crate::transport::{Dir, SymAddr, Xfer};
use crate::word::AmoOp;

impl Ucx {
    /// A blocking transfer (see [`crate::transport::Fabric::xfer`]).
    ///
    /// # Safety
    /// As [`crate::transport::Fabric::xfer`].
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

    /// A non-blocking transfer (see [`crate::transport::Fabric::xfer_nbi`]).
    ///
    /// # Safety
    /// As [`crate::transport::Fabric::xfer_nbi`].
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
}

/// A transfer of `len` bytes between `remote` (a peer's memory mapped here) and `local`.
///
/// # Safety
/// Both ranges are valid for `len` bytes (`local` readable for a put, writable for a get)
/// and do not overlap.
#[inline(always)]
pub(super) unsafe fn copy(dir: Dir, remote: *mut u8, local: *mut u8, len: usize) {
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
