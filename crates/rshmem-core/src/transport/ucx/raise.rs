//! The remote raise: a runtime counter of a peer raised by one active message, which may
//! carry the data whose arrival the count announces.

use std::sync::atomic::Ordering;

use super::rma::copy;
use super::{Conn, CtxWorker, Segment, Ucx, DATA, HEAP, REGIONS, RUNTIME_AREA};
use crate::error::Result;
use crate::transport::deferred::{Riders, RIDE_MAX};
use crate::transport::{CtxState, Dir, Seg, SymAddr, Xfer};
use crate::word::AmoOp;

/// The active message that raises a runtime counter on its target, after writing the data
/// it carries (a channel's message, a pushed chunk of a collective) into the target's
/// segment: one message where a put, a fence (a round trip over TCP) and a posted atomic
/// (a request and an acknowledgement) went before. Its header is three words: where the data goes and where the count is (as
/// [`SymAddr::to_word`]), and by how much it rises; then up to
/// [`RIDE_MAX`] pairs (where, by how much) of other counts of the target this PE owed
/// (acknowledgements it deferred: `Deferred::take_for`), applied after the first. The target's service worker applies it
/// in its progress call (the progress thread, or a wait that claimed it): the copy, then a
/// release add, so a waiter that sees the count sees the data. Every raise leaves from the
/// service worker, on its endpoint to the peer's ([`Ucx::svc`]): message channels keep two
/// messages in flight and pushed chunks several, each counted on one word, so they rely on
/// UCX applying one endpoint's eager active messages in the order sent, which its single
/// active-message lane gives (`UCX_MAX_EAGER_LANES`, 1 unless the user raises it).
/// libfabric carries the same header and data as one message (`transport::ofi`).
pub(in crate::transport) struct Raise;

impl Raise {
    /// The active-message id.
    pub(super) const ID: u16 = 1;
    /// The largest payload sent this way; larger puts go by RMA. Over TCP here, UCX moves
    /// an eager active message of 256 KiB-1 MiB at 2.0-2.7 GB/s and a put at 0.2-0.4 GB/s
    /// with TCP's default 8 KiB segments, 0.8-2.3 GB/s with the 64 KiB ones `Ucx::new` sets
    /// (`ucx_perftest -t ucp_am_bw` / `ucp_put_bw`), so the chunks collectives push
    /// (`coll::net`) go this way too; the bound only keeps UCX's reassembly buffer of one
    /// message (the target allocates it) modest.
    const MAX_DATA: usize = 1 << 20;
    /// `dst` when there is no data.
    const NO_DATA: u64 = u64::MAX;

    pub(in crate::transport) fn header(dst: Option<SymAddr>, sig: SymAddr, by: u64) -> [u8; 24] {
        let dst = dst.map_or(Self::NO_DATA, SymAddr::to_word);
        let mut h = [0u8; 24];
        for (chunk, w) in h.chunks_exact_mut(8).zip([dst, sig.to_word(), by]) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        h
    }

    /// [`Raise::header`] followed by the raises that ride along (a word pair each, where
    /// and by how much), and its length in bytes.
    fn header_with(
        dst: Option<SymAddr>,
        sig: SymAddr,
        by: u64,
        riders: &Riders,
    ) -> ([u8; 24 + 16 * RIDE_MAX], usize) {
        let mut h = [0u8; 24 + 16 * RIDE_MAX];
        h[..24].copy_from_slice(&Self::header(dst, sig, by));
        let mut len = 24;
        for &(a, n) in riders.as_slice() {
            h[len..len + 8].copy_from_slice(&a.to_word().to_ne_bytes());
            h[len + 8..len + 16].copy_from_slice(&n.to_ne_bytes());
            len += 16;
        }
        (h, len)
    }

    /// The handler of this PE's service worker, over this PE's `segments`.
    pub(in crate::transport) fn handler(segments: &[Segment; REGIONS]) -> rshmem_ucx::AmHandler {
        let heap = (
            segments[HEAP].base,
            segments[RUNTIME_AREA].start,
            segments[HEAP].end,
        );
        let data = (
            segments[DATA].base,
            segments[DATA].start,
            segments[DATA].end,
        );
        // The local address of `len` bytes at `a`, if inside its segment's registered part.
        let local = move |a: SymAddr, len: usize| -> Option<*mut u8> {
            let (base, start, end) = match a.seg {
                Seg::Heap => heap,
                Seg::Data => data,
            };
            let fits = a.off >= start && a.off.checked_add(len)? <= end;
            fits.then_some((base + a.off) as *mut u8)
        };
        Box::new(move |h: &[u8], d: &[u8]| {
            let word = |i: usize| {
                h.get(i * 8..i * 8 + 8)
                    .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            };
            let (Some(dst), Some(_), Some(_)) = (word(0), word(1), word(2)) else {
                return Raise::malformed("a short header");
            };
            if dst != Self::NO_DATA {
                let Some(p) = local(SymAddr::from_word(dst), d.len()) else {
                    return Raise::malformed("data outside the segments");
                };
                // SAFETY: `p` is `d.len()` bytes inside this PE's mapped segment; the
                // sender's protocol (a channel's credit, a buffer the receiver freed) keeps
                // every other access off the range until the count below is seen.
                unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), p, d.len()) };
            }
            // The count, then the counts that rode along (owed acknowledgements:
            // `Deferred::take_for`), each a (where, by how much) pair of words. A count of
            // 0 raises nothing: its data's count goes another way (numbered pushes over
            // libfabric, `transport::ofi::pushes`).
            let mut i = 1;
            while let (Some(at), Some(by)) = (word(i), word(i + 1)) {
                if by == 0 {
                    i += 2;
                    continue;
                }
                let Some(p) =
                    local(SymAddr::from_word(at), 8).filter(|p| p.cast::<u64>().is_aligned())
                else {
                    return Raise::malformed("a count outside the runtime area");
                };
                // SAFETY: an aligned runtime word of this PE's mapped segment, which every
                // writer updates atomically (one writer raises it; its owner reads and
                // resets).
                unsafe { std::sync::atomic::AtomicU64::from_ptr(p.cast()) }
                    .fetch_add(by, Ordering::Release);
                i += 2;
            }
        })
    }

    /// A message no rshmem PE of this job sends: the job's PEs disagree on the layout.
    #[cold]
    fn malformed(what: &str) {
        eprintln!("rshmem: a peer's raise through the network carried {what}; aborting");
        std::process::abort();
    }
}

impl Ucx {
    /// A put whose arrival a count announces (see
    /// [`crate::transport::Fabric::put_raise`]): one message carrying data and count, or
    /// for data longer than a message, the put, its flush, the count; over a heap mapped
    /// here, a copy and the raise.
    ///
    /// # Safety
    /// As [`crate::transport::Fabric::put_raise`].
    pub(crate) unsafe fn put_raise(&self, x: Xfer, sig: SymAddr, riders: Riders) -> Result<()> {
        let src = x.local as *const u8;
        let w = self.worker(x.ctx)?;
        let (conn, mapped) = self.raise_route(x.pe, x.remote)?;
        if let Some(p) = mapped {
            // SAFETY: as in `xfer`.
            unsafe { copy(Dir::Put, p, src.cast_mut(), x.len) };
            self.amo_post(x.ctx, x.pe, sig, AmoOp::Add(1))?;
            return self.raise_each(x.ctx, w, x.pe, &riders);
        }
        let (ep, raddr, key) = self.target(w, x.pe, x.remote)?;
        // SAFETY: the caller's contract: `src` is readable for `len` bytes.
        let data = unsafe { std::slice::from_raw_parts(src, x.len) };
        let by_message = self.raise_by_message.load(Ordering::Relaxed);
        if x.len <= Raise::MAX_DATA && by_message {
            // Data and count in one message: no fence, no acknowledgement.
            return self.send_raise(conn, x.pe, Some(x.remote), data, sig, 1, &riders);
        }
        // The remote range was checked.
        let r = ep.put_blocking(data, raddr, key);
        w.note_issued();
        r.map_err(Self::op_error(x.pe, "a UCX transfer failed"))?;
        // A count by message leaves from another worker than the put: the put must have
        // landed first. A posted atomic goes the put's way, after a fence.
        if by_message {
            w.flush_if_issued()
                .map_err(Self::op_error(x.pe, "a UCX flush failed"))?;
        } else {
            w.worker
                .fence()
                .map_err(Self::op_error(x.pe, "a UCX fence failed"))?;
        }
        self.raise_served(x.ctx, w, x.pe, sig, 1, riders)
    }

    /// Raises each of `riders` on `pe` on its own (where no message carries them).
    fn raise_each(&self, ctx: &CtxState, w: &CtxWorker, pe: usize, riders: &Riders) -> Result<()> {
        for &(a, by) in riders.as_slice() {
            self.raise_served(ctx, w, pe, a, by, Riders::default())?;
        }
        Ok(())
    }

    /// Adds `by` to a runtime counter on `pe` that only this PE raises (see
    /// [`crate::transport::Fabric::raise`]): one active message ([`Raise`]) that the peer's
    /// service applies, where UCX would carry a posted atomic over TCP as a request and an
    /// acknowledgement; a posted atomic into a heap mapped here (one-sided) or once
    /// finalize's last sync began.
    pub(crate) fn raise(
        &self,
        ctx: &CtxState,
        pe: usize,
        addr: SymAddr,
        by: u64,
        riders: Riders,
    ) -> Result<()> {
        let w = self.worker(ctx)?;
        self.raise_served(ctx, w, pe, addr, by, riders)
    }

    /// [`Ucx::raise`] on `ctx`'s worker `w`, by a thread already serving where it must.
    fn raise_served(
        &self,
        ctx: &CtxState,
        w: &CtxWorker,
        pe: usize,
        addr: SymAddr,
        by: u64,
        riders: Riders,
    ) -> Result<()> {
        let (conn, mapped) = self.raise_route(pe, addr)?;
        if mapped.is_some() || !self.raise_by_message.load(Ordering::Relaxed) {
            self.amo_post(ctx, pe, addr, AmoOp::Add(by))?;
            return self.raise_each(ctx, w, pe, &riders);
        }
        self.send_raise(conn, pe, None, &[], addr, by, &riders)
    }

    /// Sends a [`Raise`] to `pe` on `conn`, the service worker's endpoint to it
    /// ([`Ucx::svc`], [`Ucx::svc_conn`]): `data` to `dst`,
    /// then `sig` up by `by`. Complete on return: the message is in UCX's hands, and the
    /// service worker, always driven by its thread or a waiter, sends what a full socket
    /// left over (finalize's teardown flushes it). Nothing the contexts' workers carry is
    /// ordered before it: a caller that needs their puts landed first flushes them.
    #[allow(clippy::too_many_arguments)]
    fn send_raise(
        &self,
        conn: &Conn,
        pe: usize,
        dst: Option<SymAddr>,
        data: &[u8],
        sig: SymAddr,
        by: u64,
        riders: &Riders,
    ) -> Result<()> {
        let (header, len) = Raise::header_with(dst, sig, by, riders);
        self.service
            .exclusive(|| conn.ep.am_send(Raise::ID, &header[..len], data))
            .map_err(Self::op_error(pe, "a UCX active message failed"))
    }

    /// From now on counts are raised by posted atomics, whose flush completes them at
    /// their target (finalize's last sync: a message counts as sent once in the socket,
    /// and a PE that exits with unread input resets its connections, dropping what it had
    /// not sent yet).
    pub(crate) fn raise_by_atomics(&self) {
        self.raise_by_message.store(false, Ordering::Relaxed);
    }
}
