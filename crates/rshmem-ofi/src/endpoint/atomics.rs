//! Remote atomics: posted, fetching and compare-and-swap, with their operand storage.

use crate::bindings as sys;
use crate::{Addr, AtomicKind, AtomicOp, AtomicType, OfiError, RemoteKey, Result};
use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::fmt;

use super::Endpoint;

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

impl Endpoint {
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
