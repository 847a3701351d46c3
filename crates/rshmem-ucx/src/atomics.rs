//! Atomic operations: the op enums ([`AtomicOp`], [`FetchOp`]), their operands and
//! [`AmoBuffer`], and [`Endpoint`]'s atomic methods.

use crate::endpoint::{Endpoint, RemoteKey};
use crate::request::Issued;
use crate::status::{Result, UcxError};
use crate::sys;
use crate::worker::ThreadMode;
use std::fmt;
use std::sync::atomic::AtomicU64;

/// `ucp_dt_make_contig(n)` (a C macro).
fn dt_contig(elem_size: usize) -> sys::ucp_datatype_t {
    ((elem_size as u64) << sys::UCP_DATATYPE_SHIFT) | u64::from(sys::UCP_DATATYPE_CONTIG)
}

/// A non-fetching atomic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// `*r += v`
    Add,
    /// `*r &= v`
    And,
    /// `*r |= v`
    Or,
    /// `*r ^= v`
    Xor,
}

/// A fetching atomic operation (returns the old value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchOp {
    /// `*r += v`
    Add,
    /// `*r &= v`
    And,
    /// `*r |= v`
    Or,
    /// `*r ^= v`
    Xor,
    /// `*r = v`
    Swap,
}

impl AtomicOp {
    fn ucp(self) -> sys::ucp_atomic_op_t {
        match self {
            AtomicOp::Add => sys::UCP_ATOMIC_OP_ADD,
            AtomicOp::And => sys::UCP_ATOMIC_OP_AND,
            AtomicOp::Or => sys::UCP_ATOMIC_OP_OR,
            AtomicOp::Xor => sys::UCP_ATOMIC_OP_XOR,
        }
    }
}

impl FetchOp {
    fn ucp(self) -> sys::ucp_atomic_op_t {
        match self {
            FetchOp::Add => sys::UCP_ATOMIC_OP_ADD,
            FetchOp::And => sys::UCP_ATOMIC_OP_AND,
            FetchOp::Or => sys::UCP_ATOMIC_OP_OR,
            FetchOp::Xor => sys::UCP_ATOMIC_OP_XOR,
            FetchOp::Swap => sys::UCP_ATOMIC_OP_SWAP,
        }
    }
}

/// An atomic operand: 4 or 8 bytes, in native byte order.
#[repr(C)]
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

/// Caller-owned storage of a non-blocking fetching atomic ([`Endpoint::atomic_fetch_nb`],
/// [`Endpoint::cswap_nb`]): UCX reads the operand and writes the old value here while the
/// operation is in flight, so it must outlive the operation and not be reused before.
#[repr(C)]
pub struct AmoBuffer {
    operand: std::cell::UnsafeCell<Operand>,
    reply: std::cell::UnsafeCell<Operand>,
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
            operand: std::cell::UnsafeCell::new(Operand { u64: 0 }),
            reply: std::cell::UnsafeCell::new(Operand { u64: 0 }),
        }
    }

    /// The old value fetched by the completed operation of `size` bytes (4 or 8). Read it
    /// after completion only ([`Issued::Done`], or the `done` counter observed incremented).
    pub fn result(&self, size: usize) -> u64 {
        // SAFETY: after completion UCX no longer writes the reply; the caller reads it after
        // observing completion (Acquire on the counter, or the issuing call's return).
        unsafe { (*self.reply.get()).get(size) }
    }
}

#[inline(always)]
fn check_size(routine: &'static str, size: usize) -> Result<()> {
    if size == 4 || size == 8 {
        Ok(())
    } else {
        Err(bad_size(routine, size))
    }
}

#[cold]
#[inline(never)]
fn bad_size(routine: &'static str, size: usize) -> UcxError {
    UcxError::InvalidArgument {
        routine,
        message: format!("size {size} (must be 4 or 8)"),
    }
}

impl<M: ThreadMode> Endpoint<M> {
    /// A non-fetching atomic `op` with `value` on the `size`-byte (4 or 8) word at `raddr`.
    /// Returns after local completion (normally at once).
    pub fn atomic_post(
        &self,
        op: AtomicOp,
        value: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<()> {
        check_size("Endpoint::atomic_post", size)?;
        self.check_rkey("Endpoint::atomic_post", rkey)?;
        let operand = Operand::new(size, value);
        let p = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE,
            datatype: dt_contig(size),
            ..Default::default()
        };
        // SAFETY: operand lives until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_atomic_op_nbx(
                self.inner.h,
                op.ucp(),
                (&operand as *const Operand).cast(),
                1,
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_atomic_op_nbx", req)
    }

    /// A fetching atomic `op` with `value` on the `size`-byte word at `raddr`; blocks
    /// (progressing the worker) and returns the old value.
    pub fn atomic_fetch(
        &self,
        op: FetchOp,
        value: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<u64> {
        check_size("Endpoint::atomic_fetch", size)?;
        self.check_rkey("Endpoint::atomic_fetch", rkey)?;
        let operand = Operand::new(size, value);
        let mut reply = Operand::new(size, 0);
        self.fetch_op(op.ucp(), size, &operand, &mut reply, raddr, rkey)?;
        Ok(reply.get(size))
    }

    /// Compare-and-swap on the `size`-byte word at `raddr`: stores `new` if it holds `compare`;
    /// blocks and returns the old value (equal to `compare` iff the swap happened).
    pub fn cswap(
        &self,
        compare: u64,
        new: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<u64> {
        check_size("Endpoint::cswap", size)?;
        self.check_rkey("Endpoint::cswap", rkey)?;
        // UCP's CSWAP takes the compare value as the operand and the new value in the reply
        // buffer, which then receives the old value.
        let operand = Operand::new(size, compare);
        let mut reply = Operand::new(size, new);
        self.fetch_op(
            sys::UCP_ATOMIC_OP_CSWAP,
            size,
            &operand,
            &mut reply,
            raddr,
            rkey,
        )?;
        Ok(reply.get(size))
    }

    /// Starts a fetching atomic `op` with `value` on the `size`-byte word at `raddr`; the old
    /// value is then in `buf` ([`AmoBuffer::result`]).
    ///
    /// # Safety
    /// `buf` must stay alive and unused by anything else until completion ([`Issued::Done`] or
    /// the `done` increment), and `done` must stay alive until it is incremented.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn atomic_fetch_nb(
        &self,
        op: FetchOp,
        value: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        buf: &AmoBuffer,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        check_size("Endpoint::atomic_fetch_nb", size)?;
        self.check_rkey("Endpoint::atomic_fetch_nb", rkey)?;
        // SAFETY: the caller gives us buf exclusively until completion.
        unsafe {
            *buf.operand.get() = Operand::new(size, value);
            *buf.reply.get() = Operand::new(size, 0);
            self.fetch_op_nb(op.ucp(), size, buf, raddr, rkey, done)
        }
    }

    /// Starts a compare-and-swap (as [`Endpoint::cswap`]); the old value is then in `buf`.
    ///
    /// # Safety
    /// As for [`Endpoint::atomic_fetch_nb`].
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn cswap_nb(
        &self,
        compare: u64,
        new: u64,
        size: usize,
        raddr: u64,
        rkey: &RemoteKey<M>,
        buf: &AmoBuffer,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        check_size("Endpoint::cswap_nb", size)?;
        self.check_rkey("Endpoint::cswap_nb", rkey)?;
        // SAFETY: the caller gives us buf exclusively until completion.
        unsafe {
            *buf.operand.get() = Operand::new(size, compare);
            *buf.reply.get() = Operand::new(size, new);
            self.fetch_op_nb(sys::UCP_ATOMIC_OP_CSWAP, size, buf, raddr, rkey, done)
        }
    }

    /// # Safety
    /// buf and done as for [`Endpoint::atomic_fetch_nb`].
    unsafe fn fetch_op_nb(
        &self,
        op: sys::ucp_atomic_op_t,
        size: usize,
        buf: &AmoBuffer,
        raddr: u64,
        rkey: &RemoteKey<M>,
        done: Option<&AtomicU64>,
    ) -> Result<Issued> {
        let mut p = Self::param(done);
        p.op_attr_mask |= sys::UCP_OP_ATTR_FIELD_DATATYPE | sys::UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p.datatype = dt_contig(size);
        p.reply_buffer = buf.reply.get().cast();
        // SAFETY: the caller keeps buf and done alive until completion.
        let req = unsafe {
            self.lib().ucp_atomic_op_nbx(
                self.inner.h,
                op,
                buf.operand.get().cast_const().cast(),
                1,
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.issued("ucp_atomic_op_nbx", req, done.is_some())
    }

    fn fetch_op(
        &self,
        op: sys::ucp_atomic_op_t,
        size: usize,
        operand: &Operand,
        reply: &mut Operand,
        raddr: u64,
        rkey: &RemoteKey<M>,
    ) -> Result<()> {
        let p = sys::ucp_request_param_t {
            op_attr_mask: sys::UCP_OP_ATTR_FIELD_DATATYPE | sys::UCP_OP_ATTR_FIELD_REPLY_BUFFER,
            datatype: dt_contig(size),
            reply_buffer: (reply as *mut Operand).cast(),
            ..Default::default()
        };
        // SAFETY: operand and reply live until the wait below completes the request.
        let req = unsafe {
            self.lib().ucp_atomic_op_nbx(
                self.inner.h,
                op,
                (operand as *const Operand).cast(),
                1,
                raddr,
                rkey.h.0,
                &p,
            )
        };
        self.wait("ucp_atomic_op_nbx", req)
    }
}
