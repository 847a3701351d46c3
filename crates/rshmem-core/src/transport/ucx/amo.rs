//! Atomics: UCX's native ones, a compare-and-swap loop for the rest, posted ones where the
//! previous value is not needed.

use rshmem_ucx::{AtomicOp, FetchOp};

use super::{CtxWorker, Ucx};
use crate::error::Result;
use crate::transport::{CtxState, SymAddr};
use crate::word::{AmoOp, Word};

impl Ucx {
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
        if let Some(old) = self.cpu_rmw(w, pe, addr, op) {
            return Ok(old);
        }
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

    /// `op` as a CPU atomic where `addr` on `pe` is mapped here and UCX's atomics are CPU
    /// atomics (as UCX's shared-memory transports would apply it, without UCX's call,
    /// which costs 5-8 times as much); the previous value, or `None` when UCX must do it.
    #[inline(always)]
    fn cpu_rmw<W: Word>(&self, w: &CtxWorker, pe: usize, addr: SymAddr, op: AmoOp<W>) -> Option<W> {
        if !self.cpu_atomics {
            return None;
        }
        let p = Self::mapped(w, pe, addr)?;
        // SAFETY: the caller range-checked and aligned `addr` for `W`, and the mapping
        // lives as long as the connection.
        Some(unsafe { W::rmw(p.cast::<W>(), op) })
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
        let cw = crate::transport::CswapWord::holding::<W>(addr);
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
                if self.cpu_rmw(w, pe, addr, op).is_some() {
                    return Ok(());
                }
                let (ep, raddr, key) = self.target(w, pe, addr)?;
                let r = ep.atomic_post(o, v.to_bits64(), W::SIZE, raddr, key);
                w.note_issued();
                r.map_err(Self::op_error(pe, "a UCX atomic failed"))
            }
            _ => self.amo(ctx, pe, addr, op).map(drop),
        }
    }
}
