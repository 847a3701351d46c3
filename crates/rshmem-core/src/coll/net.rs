//! Collectives built for the network: the algorithms `auto` takes on teams whose members
//! do not all map each other (docs/decisions/0023-network-collectives-push.md).
//! Through UCX a message costs a one-way latency and every fetch a round trip (over TCP
//! the target must also progress to serve it), so data is pushed, and a PE waits only
//! on words of its own segment that the sender raises after the data.
//!
//! * Broadcast ([`broadcast`]): a binomial tree rooted at the root. Up to one message
//!   ([`MAX_MSG`]) the data travels in the message channels, one message per tree level
//!   (on teams of up to [`FLAT_MAX_PES`], from the root to each member) and no team sync;
//!   larger data, after one team sync (every destination is free),
//!   goes in chunks straight into the children's destinations with their arrival
//!   counts (one active message each through UCX), so chunks pipeline down the tree
//!   without a round trip.
//! * Large reductions ([`reduce`]): a reduce-scatter and allgather. Through UCX, whose
//!   active messages carry data and count together and move bulk data over TCP several
//!   times faster than its puts and gets, a ring of pushes straight into the
//!   destinations (`reduce_ring`: 2 PEs, 1 MiB: 2.2-2.7 ms before, 0.62-0.77 after).
//!   Through libfabric, in bulk: after a team sync, rank r fetches chunk
//!   r of every source at once (one round trip for all), folds them in rank order (every
//!   member gets the same bits), puts the chunk into every destination at once and
//!   raises a count there; a member is done when every other has counted (no sync, no
//!   round trip at the end). Small reductions stay on recursive doubling over the
//!   message channels (`coll::allreduce`), one message a round.

use std::cell::RefCell;
use std::sync::atomic::Ordering::Relaxed;

use super::msg::MAX_MSG;
use super::{allreduce, Buf, Elem, ReduceOp};
use crate::error::{At, Result};
use crate::runtime::Runtime;
use crate::team::peers::Quorum;
use crate::team::{Flag, Team};
use crate::transport::{Dir, SourceHeld, Xfer};

/// Channel `CH_TREE + k` carries the tree's messages from rank r to rank r + 2^k (mod n):
/// one fixed sender per receiver whatever the root, as a channel requires (`coll::msg`).
/// Channels below it serve recursive doubling (up to 2^16 PEs) and carry exchanges only
/// (`msg::EXCHANGE_CHANNELS`), 29-31 the ring and the extra ranks (`coll::allreduce`).
const CH_TREE: usize = super::msg::EXCHANGE_CHANNELS;

/// Largest team the tree serves (its levels must fit in channels 16..=28).
pub(crate) const TREE_MAX_PES: usize = 1 << 13;

/// Largest team whose small broadcasts go from the root to every member at once
/// ([`flat_channel`]) rather than down the tree: a forwarding rank must receive before it
/// sends, and over TCP (a few us to send, tens to arrive) or on a busy node (the forwarder
/// must be scheduled) that hop cost more than the root's extra sends (8 B at 4 PEs on 2
/// cores: UCX's TCP 50-85 -> 39-61 us, libfabric's tcp 183-272 -> 56-101; figures in
/// docs/decisions/0023-network-collectives-push.md). 8 members keep the root's sends (7)
/// within about twice the tree's depth (3).
const FLAT_MAX_PES: usize = 8;

/// The count of chunks put into a member's destination by a bulk reduction (word 6 of the
/// team's collective line; several writers).
const DONE: Flag = Flag::Word(6);

/// Bytes of the scratch a large reduction fetches into at a time.
const FETCH_MAX: usize = 8 << 20;

thread_local! {
    /// Fetched chunks of the peers' sources, and the accumulator.
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Index of the highest set bit of `v` (> 0).
fn high_bit(v: usize) -> usize {
    (usize::BITS - 1 - v.leading_zeros()) as usize
}

/// The binomial tree of relative rank `v` (0 = the root) in a team of `n`: the tree level
/// it receives on (`None` at the root), and the levels it sends on, largest subtree
/// first. At level k a rank sends to the rank 2^k after it.
fn tree(v: usize, n: usize) -> (Option<usize>, impl Iterator<Item = usize>) {
    let (up, first) = if v == 0 {
        (None, 0)
    } else {
        let h = high_bit(v);
        (Some(h), h + 1)
    };
    let top = (first..usize::BITS as usize)
        .take_while(|&k| v + (1 << k) < n)
        .last();
    let down = top.into_iter().flat_map(move |t| (first..=t).rev());
    (up, down)
}

/// The channel a flat broadcast sends on from a rank to the rank `d` after it (1 <= d <
/// [`FLAT_MAX_PES`]): a distance 2^k takes the tree's channel for level k (the same pair
/// of ranks), the others channels the tree of so small a team never uses, so each channel
/// keeps one sender per receiver whatever the algorithm (`coll::msg`).
fn flat_channel(d: usize) -> usize {
    debug_assert!((1..FLAT_MAX_PES).contains(&d));
    let levels = high_bit(FLAT_MAX_PES - 1) + 1;
    if d.is_power_of_two() {
        CH_TREE + high_bit(d)
    } else {
        // Distances that are not powers of two below d: d - 1 less the powers (high_bit + 1).
        CH_TREE + levels + (d - 1) - (high_bit(d) + 1)
    }
}

/// Broadcast of `nbytes` of `src` on rank `root` into `dest` of every member (the root's
/// too where `root_dest`), by a binomial tree of pushes (small data on small teams: from
/// the root straight to each member, [`FLAT_MAX_PES`]).
///
/// # Safety
/// `dest` and `src` are checked symmetric buffers of `nbytes` (`s` is `src`'s), untouched
/// by the caller during the call.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn broadcast(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    s: &Buf,
    nbytes: usize,
    root: usize,
    root_dest: bool,
) -> Result<()> {
    let (me, n) = (team.my_pe(), team.n_pes());
    debug_assert!(n <= TREE_MAX_PES);
    let v = (me + n - root) % n;
    let src = rt.fabric.local(s.addr).cast_const();
    let (up, down) = tree(v, n);
    let to = |k: usize| (me + (1 << k)) % n;
    let from = |k: usize| (me + n - (1 << k)) % n;
    if v == 0 && root_dest {
        // SAFETY: our own source and destination, `nbytes` each (checked); `copy`
        // tolerates the in-place case.
        unsafe { std::ptr::copy(src, dest, nbytes) };
    }
    // The root sends from its source, the others from their destination.
    let data = if v == 0 { src } else { dest.cast_const() };
    if nbytes <= MAX_MSG && n <= FLAT_MAX_PES {
        if v != 0 {
            let ch = flat_channel(v);
            return rt.msg_recv(routine, team, ch, (me + n - v) % n, nbytes, |b| {
                // SAFETY: `dest` holds `nbytes` (checked) and does not overlap the
                // channel buffer.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dest, nbytes) }
            });
        }
        // SAFETY: `data` is our source, `nbytes`, not written during the sends.
        let bytes = unsafe { std::slice::from_raw_parts(data, nbytes) };
        for d in 1..n {
            rt.msg_send(routine, team, flat_channel(d), (me + d) % n, bytes)?;
        }
        return Ok(());
    }
    if nbytes <= MAX_MSG {
        if let Some(k) = up {
            rt.msg_recv(routine, team, CH_TREE + k, from(k), nbytes, |b| {
                // SAFETY: `dest` holds `nbytes` (checked) and does not overlap the
                // channel buffer.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dest, nbytes) }
            })?;
        }
        // SAFETY: `data` holds `nbytes` and is not written during the sends.
        let bytes = unsafe { std::slice::from_raw_parts(data, nbytes) };
        for k in down {
            rt.msg_send(routine, team, CH_TREE + k, to(k), bytes)?;
        }
        return Ok(());
    }
    // Every member's destination is free once all have arrived.
    rt.try_sync_in(routine, team)?;
    let d = rt.coll_buf(routine, "dest", dest, nbytes)?;
    let down: Vec<usize> = down.collect();
    let chunk = rt.fabric.push_chunk();
    let mut at = 0;
    while at < nbytes {
        let len = chunk.min(nbytes - at);
        if let Some(k) = up {
            rt.msg_arrived(routine, team, CH_TREE + k, from(k))?;
        }
        for &k in &down {
            // SAFETY: the chunk lies in every member's checked destination, which the
            // child reads only after the arrival count; ours holds it (it arrived, or we
            // are the root and it is our source).
            unsafe {
                rt.msg_push(
                    routine,
                    team,
                    CH_TREE + k,
                    to(k),
                    d.at(at),
                    data.add(at),
                    len,
                    SourceHeld::UntilSettled,
                )?
            };
        }
        at += len;
    }
    // Chunks went out while the next arrived; the caller may change its buffers now.
    rt.msg_settle(routine)
}

/// The pieces of block `b` (of `n` elements cut in `blocks`), as element ranges of at
/// most `chunk` bytes ([`Fabric::push_chunk`](crate::transport::Fabric::push_chunk)): each
/// travels as one message, so a receiver folds one piece while the next is on its way.
fn pieces(
    n: usize,
    blocks: usize,
    b: usize,
    sz: usize,
    chunk: usize,
) -> impl Iterator<Item = (usize, usize)> {
    let (lo, hi) = (n * b / blocks, n * (b + 1) / blocks);
    let step = (chunk / sz).max(1);
    (lo..hi)
        .step_by(step)
        .map(move |at| (at, (at + step).min(hi)))
}

/// Ring reduce-scatter and allgather whose messages push data straight into the
/// destinations (UCX carries data and count in one active message). Rank i ends the
/// reduce-scatter holding block i: at step s it sends block i-s-1 to its right neighbour
/// and receives block i-s-2 into its own destination, where it folds its source in; the
/// allgather then forwards finished blocks round the ring into the destinations. Each
/// destination block is written by the left neighbour alone, once per phase, and every
/// block's bits come from one rank, so every member gets the same result. Sources are read
/// only by their owners: one team sync at the start (destinations free), none at the end
/// (a member has everything once its last block arrived).
///
/// # Safety
/// As [`reduce`].
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_ring<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    d: &Buf,
    n: usize,
    op: ReduceOp,
) -> Result<()> {
    let (me, npes) = (team.my_pe(), team.n_pes());
    let (right, left) = ((me + 1) % npes, (me + npes - 1) % npes);
    let sz = std::mem::size_of::<T>();
    let block = |k: usize| (me + npes * 2 - k) % npes;
    let chunk = rt.fabric.push_chunk();
    SCRATCH.with(|cell| -> Result<()> {
        let mut own_copy = cell.borrow_mut();
        // In place, the destination is where the left neighbour's blocks land: fold from a
        // private copy of the source, taken before the sync lets the neighbour push.
        let own: *const T = if std::ptr::eq(dest.cast_const(), src) {
            let words = (n * sz).div_ceil(8);
            if own_copy.len() < words {
                own_copy.resize(words, 0);
            }
            let p = own_copy.as_mut_ptr().cast::<T>();
            // SAFETY: the copy holds `n` elements, 8-byte aligned (no element type needs
            // more); the source holds `n` (checked).
            unsafe { std::ptr::copy_nonoverlapping(src, p, n) };
            p
        } else {
            src
        };
        rt.try_sync_in(routine, team)?;
        let push = |b: usize, from: *const T| -> Result<()> {
            for (lo, hi) in pieces(n, npes, b, sz, chunk) {
                // SAFETY: the piece lies in every member's checked destination; the right
                // neighbour's is free (it passed the sync) and its block `b` is written by
                // us alone in this phase; `from` holds the block and stays untouched until
                // the send completed locally.
                unsafe {
                    rt.msg_push(
                        routine,
                        team,
                        allreduce::CH_RING,
                        right,
                        d.at(lo * sz),
                        from.add(lo).cast(),
                        (hi - lo) * sz,
                        SourceHeld::UntilReturn,
                    )?
                };
            }
            Ok(())
        };
        // Reduce-scatter: our own block last, then the finished block is ours.
        for s in 0..npes - 1 {
            let from = if s == 0 { own } else { dest.cast_const() };
            push(block(s + 1), from)?;
            for (lo, hi) in pieces(n, npes, block(s + 2), sz, chunk) {
                rt.msg_arrived(routine, team, allreduce::CH_RING, left)?;
                // SAFETY: the piece of our destination just landed and is written by
                // nobody else before we forward it; `own` holds `n` elements, disjoint
                // from the destination.
                let (acc, part) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(dest.add(lo), hi - lo),
                        std::slice::from_raw_parts(own.add(lo), hi - lo),
                    )
                };
                T::fold(op, acc, part).expect("operator checked by the caller");
            }
        }
        // Allgather: forward each finished block; they land in place.
        for s in 0..npes - 1 {
            push(block(s), dest.cast_const())?;
            for _ in pieces(n, npes, block(s + 1), sz, chunk) {
                rt.msg_arrived(routine, team, allreduce::CH_RING, left)?;
            }
        }
        Ok(())
    })
}

/// Reduction of `n` elements of every member's `src` (`s`) into every `dest` (`d`): a
/// pushed ring ([`reduce_ring`]) where the network carries data in its count messages
/// (UCX), else a bulk reduce-scatter and allgather (see the module doc).
///
/// # Safety
/// `dest` and `src` are checked symmetric buffers of `n` elements (`d`, `s`), identical
/// or disjoint, untouched by the caller during the call.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn reduce<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    s: &Buf,
    d: &Buf,
    n: usize,
    op: ReduceOp,
) -> Result<()> {
    if rt.fabric.pushes_data_in_messages() {
        // SAFETY: forwarded.
        return unsafe { reduce_ring(rt, routine, team, dest, src, d, n, op) };
    }
    let (me, npes) = (team.my_pe(), team.n_pes());
    let sz = std::mem::size_of::<T>();
    let ctx = crate::ctx::runtime_ctx();
    let (lo, hi) = (n * me / npes, n * (me + 1) / npes);
    // Elements of our chunk handled at a time: one slot per member plus the accumulator.
    let piece = (FETCH_MAX / sz / (npes + 1)).max(1).min(hi - lo).max(1);
    // Sources ready, destinations free.
    rt.try_sync_in(routine, team)?;
    SCRATCH.with(|cell| -> Result<()> {
        let mut buf = cell.borrow_mut();
        let words = ((npes + 1) * piece * sz).div_ceil(8);
        if buf.len() < words {
            buf.resize(words, 0);
        }
        let base = buf.as_mut_ptr().cast::<T>();
        // SAFETY: slot `r` (and the accumulator, slot `npes`) is `piece` elements of
        // `buf`, which holds `(npes + 1) * piece`, 8-byte aligned; element types need
        // no more alignment and accept every bit pattern.
        let slot = |r: usize| unsafe { base.add(r * piece) };
        let mut at = lo;
        while at < hi {
            let len = piece.min(hi - at);
            for r in (0..npes).filter(|&r| r != me) {
                // SAFETY: chunk `me` of rank r's checked source is read only by us and
                // not written before the last sync; the slot holds `len` elements and
                // is left alone until the quiet below. (It also completes the previous
                // piece's puts from the accumulator.)
                unsafe {
                    rt.fabric
                        .xfer_nbi(
                            Xfer {
                                ctx,
                                dir: Dir::Get,
                                pe: team.members().pe(r),
                                remote: s.at(at * sz),
                                local: slot(r).cast(),
                                len: len * sz,
                            },
                            || (&ctx.comp, ctx.lane),
                            None,
                        )
                        .at(routine)?
                };
            }
            rt.fabric.quiet(ctx).at(routine)?;
            // SAFETY: the accumulator and the fetched slots hold `len` elements each, and
            // do not overlap; our own part is our source (checked).
            let acc = unsafe { std::slice::from_raw_parts_mut(slot(npes), len) };
            for r in 0..npes {
                let part = if r == me {
                    // SAFETY: our source holds `n` elements (checked).
                    unsafe { std::slice::from_raw_parts(src.add(at), len) }
                } else {
                    // SAFETY: filled by the completed get above.
                    unsafe { std::slice::from_raw_parts(slot(r), len) }
                };
                if r == 0 {
                    acc.copy_from_slice(part);
                } else {
                    T::fold(op, acc, part).expect("operator checked by the caller");
                }
            }
            for r in (0..npes).filter(|&r| r != me) {
                // SAFETY: chunk `me` of every destination is written by us alone, after
                // its owner arrived (the sync above); the accumulator stays untouched
                // until the next quiet.
                unsafe {
                    rt.fabric
                        .xfer_nbi(
                            Xfer {
                                ctx,
                                dir: Dir::Put,
                                pe: team.members().pe(r),
                                remote: d.at(at * sz),
                                local: acc.as_mut_ptr().cast(),
                                len: len * sz,
                            },
                            || (&ctx.comp, ctx.lane),
                            None,
                        )
                        .at(routine)?
                };
            }
            // SAFETY: our destination holds `n` elements (checked); in place, chunk `me`
            // of our source was read by us alone, above.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dest.add(at), len) };
            at += len;
        }
        Ok(())
    })?;
    // Each member's chunks, then its count on every other member: once every other
    // member has counted, our destination is complete and nobody reads our source any
    // more (each fetched it before putting). A count's writers all passed the sync above,
    // so no member's count for the next call can come before this call's. The chunks are
    // completed, not fenced: a count by message leaves from another worker or endpoint
    // than the puts (UCX's service worker, libfabric's signal endpoint), which a fence of
    // the context does not order.
    rt.fabric.quiet(ctx).at(routine)?;
    let others = || (0..npes).filter(move |&r| r != me);
    for r in others() {
        rt.signal(routine, team, DONE, r, true)?;
    }
    let want = team.direct_done.load(Relaxed) + npes as u64 - 1;
    rt.await_signals(routine, team, DONE, others, want, 1, Quorum::All)?;
    team.direct_done.store(want, Relaxed);
    // Counts raised by atomics (finalize's last sync) complete too (nothing, mostly).
    rt.fabric.quiet(ctx).at(routine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_channels_keep_one_sender_per_receiver() {
        let chans: Vec<usize> = (1..FLAT_MAX_PES).map(flat_channel).collect();
        // One channel per distance, the tree's for powers of two, all below the ring's.
        let mut sorted = chans.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), chans.len(), "{chans:?}");
        for (d, &c) in (1..FLAT_MAX_PES).zip(&chans) {
            if d.is_power_of_two() {
                assert_eq!(c, CH_TREE + d.trailing_zeros() as usize);
            } else {
                // Levels the tree of a team this small uses are below high_bit(7) + 1.
                assert!(c > CH_TREE + high_bit(FLAT_MAX_PES - 1), "{d} -> {c}");
            }
            assert!(c < allreduce::CH_RING);
        }
    }

    /// Every rank but the root receives exactly once, from the rank 2^k before it on the
    /// level it sends on, for every team size and root position.
    #[test]
    fn binomial_tree_reaches_every_rank_once() {
        for n in 1..=40 {
            let mut got = vec![0; n];
            for v in 0..n {
                let (up, down) = tree(v, n);
                assert_eq!(up.is_none(), v == 0);
                for k in down {
                    let child = v + (1 << k);
                    assert!(child < n);
                    assert_eq!(tree(child, n).0, Some(k), "n {n} v {v} k {k}");
                    got[child] += 1;
                }
            }
            assert!(got.iter().skip(1).all(|&c| c == 1), "n {n}: {got:?}");
        }
    }
}
