//! Message-passing reduction algorithms over [`msg`](super::msg) channels, and the
//! hierarchical composition over the HOST and LEADERS teams.

use std::cell::RefCell;

use super::msg::MAX_MSG;
use super::{Elem, ReduceOp};
use crate::algo::DataAlg;
use crate::error::Result;
use crate::runtime::Runtime;
use crate::team::Team;

/// Channels 0..29 carry recursive-doubling (and Rabenseifner) rounds, whose partner in
/// round k is rank r xor 2^k; the ring has its own channel, since its sender (the left
/// neighbour) differs, and a channel must keep one sender per receiver (`coll::msg`).
/// The last two fold the ranks beyond the largest power of two in and out. A round sends
/// its message, then receives the partner's: below `msg::EXCHANGE_CHANNELS` no
/// acknowledgement travels, which relies on that order.
pub(super) const CH_RING: usize = 29;
const CH_EXTRA_IN: usize = 30;
const CH_EXTRA_OUT: usize = 31;

thread_local! {
    static ACC: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

fn bytes_of<T>(v: &[T]) -> &[u8] {
    // SAFETY: reduction element types are plain numbers without padding.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

/// Copies message bytes over `dst` (same length in elements).
fn store<T: Copy>(dst: &mut [T], bytes: &[u8]) {
    debug_assert_eq!(bytes.len(), std::mem::size_of_val(dst));
    // SAFETY: `bytes` holds exactly `dst.len()` elements' worth, written by a peer from a
    // slice of the same type; element types have no invalid bit patterns.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.as_mut_ptr().cast(), bytes.len()) }
}

/// Folds message bytes into `acc`.
fn fold<T: Elem>(op: ReduceOp, acc: &mut [T], bytes: &[u8]) {
    debug_assert_eq!(bytes.len(), std::mem::size_of_val(acc));
    // Receive buffers start on page boundaries, so a message is aligned for any element.
    assert!(
        bytes.as_ptr().cast::<T>().is_aligned(),
        "message buffer misaligned"
    );
    // SAFETY: `bytes` holds exactly `acc.len()` elements written by a peer from a slice of
    // the same type, aligned (checked); element types accept every bit pattern, and the
    // buffer is not written until we acknowledge the message.
    let src = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), acc.len()) };
    T::fold(op, acc, src).expect("operator checked by the caller");
}

/// Recursive doubling on `acc` (≤ MAX_MSG bytes): afterwards every member holds the
/// reduction of all members' `acc`.
fn allreduce_rd<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    acc: &mut [T],
    op: ReduceOp,
) -> Result<()> {
    let (me, n) = (team.my_pe(), team.n_pes());
    let p2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let extra = n - p2;
    if me >= p2 {
        rt.msg_send(routine, team, CH_EXTRA_IN, me - p2, bytes_of(acc))?;
        let len = std::mem::size_of_val(acc);
        return rt.msg_recv(routine, team, CH_EXTRA_OUT, me - p2, len, |b| store(acc, b));
    }
    let len = std::mem::size_of_val(acc);
    if me < extra {
        rt.msg_recv(routine, team, CH_EXTRA_IN, me + p2, len, |b| {
            fold(op, acc, b)
        })?;
    }
    let mut k = 0;
    while (1usize << k) < p2 {
        let partner = me ^ (1 << k);
        rt.msg_send(routine, team, k, partner, bytes_of(acc))?;
        // Both partners fold the same two operands (operators commute), so every member
        // ends with identical bits.
        rt.msg_recv(routine, team, k, partner, len, |b| fold(op, acc, b))?;
        k += 1;
    }
    if me < extra {
        rt.msg_send(routine, team, CH_EXTRA_OUT, me + p2, bytes_of(acc))?;
    }
    Ok(())
}

/// Rabenseifner's allreduce on `acc` (≤ 2 × MAX_MSG bytes): reduce-scatter by recursive
/// halving, then allgather by recursive doubling; ranks beyond the largest power of two
/// are folded in and out as in [`allreduce_rd`].
fn allreduce_rabenseifner<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    acc: &mut [T],
    op: ReduceOp,
) -> Result<()> {
    let (me, n) = (team.my_pe(), team.n_pes());
    let p2 = 1usize << (usize::BITS - 1 - n.leading_zeros());
    let extra = n - p2;
    let sz = std::mem::size_of::<T>();
    let full = std::mem::size_of_val(acc);
    // The full vector travels in at most two messages when folding extras in and out.
    let send_all = |to: usize, ch: usize, acc: &[T]| -> Result<()> {
        let half = acc.len() / 2;
        rt.msg_send(routine, team, ch, to, bytes_of(&acc[..half]))?;
        rt.msg_send(routine, team, ch, to, bytes_of(&acc[half..]))
    };
    if me >= p2 {
        send_all(me - p2, CH_EXTRA_IN, acc)?;
        let half = acc.len() / 2;
        rt.msg_recv(routine, team, CH_EXTRA_OUT, me - p2, half * sz, |b| {
            store(&mut acc[..half], b)
        })?;
        return rt.msg_recv(
            routine,
            team,
            CH_EXTRA_OUT,
            me - p2,
            full - half * sz,
            |b| store(&mut acc[half..], b),
        );
    }
    if me < extra {
        let half = acc.len() / 2;
        rt.msg_recv(routine, team, CH_EXTRA_IN, me + p2, half * sz, |b| {
            fold(op, &mut acc[..half], b)
        })?;
        rt.msg_recv(routine, team, CH_EXTRA_IN, me + p2, full - half * sz, |b| {
            fold(op, &mut acc[half..], b)
        })?;
    }
    // Reduce-scatter: halve the range each round, keeping the half our bit selects.
    let rounds = p2.trailing_zeros() as usize;
    let (mut lo, mut hi) = (0, acc.len());
    let mut stack = Vec::with_capacity(rounds);
    for k in (0..rounds).rev() {
        let d = 1 << k;
        let partner = me ^ d;
        let mid = lo + (hi - lo) / 2;
        let (keep, give) = if me & d == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        stack.push((lo, hi));
        rt.msg_send(routine, team, k, partner, bytes_of(&acc[give.0..give.1]))?;
        rt.msg_recv(routine, team, k, partner, (keep.1 - keep.0) * sz, |b| {
            fold(op, &mut acc[keep.0..keep.1], b)
        })?;
        (lo, hi) = keep;
    }
    // Allgather: retrace the halvings, exchanging the reduced halves.
    for k in 0..rounds {
        let partner = me ^ (1 << k);
        let (plo, phi) = stack.pop().expect("one range per round");
        let other = if lo == plo { (hi, phi) } else { (plo, lo) };
        rt.msg_send(routine, team, k, partner, bytes_of(&acc[lo..hi]))?;
        rt.msg_recv(routine, team, k, partner, (other.1 - other.0) * sz, |b| {
            store(&mut acc[other.0..other.1], b)
        })?;
        (lo, hi) = (plo, phi);
    }
    if me < extra {
        send_all(me + p2, CH_EXTRA_OUT, acc)?;
    }
    Ok(())
}

/// Ring allreduce on `acc` (blocks of ≤ MAX_MSG bytes): reduce-scatter, then allgather.
fn allreduce_ring<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    acc: &mut [T],
    op: ReduceOp,
) -> Result<()> {
    let (me, n) = (team.my_pe(), team.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let len = acc.len();
    let block = |b: usize| (len * b / n, len * (b + 1) / n);
    let sz = std::mem::size_of::<T>();
    for s in 0..n - 1 {
        let (lo, hi) = block((me + n - s) % n);
        rt.msg_send(routine, team, CH_RING, right, bytes_of(&acc[lo..hi]))?;
        let (lo, hi) = block((me + n - s - 1) % n);
        rt.msg_recv(routine, team, CH_RING, left, (hi - lo) * sz, |b| {
            fold(op, &mut acc[lo..hi], b)
        })?;
    }
    for s in 0..n - 1 {
        let (lo, hi) = block((me + 1 + n - s) % n);
        rt.msg_send(routine, team, CH_RING, right, bytes_of(&acc[lo..hi]))?;
        let (lo, hi) = block((me + n - s) % n);
        rt.msg_recv(routine, team, CH_RING, left, (hi - lo) * sz, |b| {
            store(&mut acc[lo..hi], b)
        })?;
    }
    Ok(())
}

/// A reduction by message passing: each PE copies its source chunk by chunk into a
/// private accumulator, runs the algorithm, and writes its own destination. Nobody
/// touches another PE's buffers, so no team sync is needed around it.
///
/// # Safety
/// `dest` and `src` are checked symmetric buffers of `n` elements.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn reduce_msg<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
    alg: DataAlg,
) -> Result<()> {
    let sz = std::mem::size_of::<T>();
    let per_msg = (MAX_MSG / sz).max(1);
    let chunk = match alg {
        DataAlg::Ring => per_msg * team.n_pes(),
        DataAlg::Rabenseifner => per_msg * 2,
        _ => per_msg,
    };
    ACC.with(|cell| -> Result<()> {
        let mut buf = cell.borrow_mut();
        let words = (chunk.min(n) * sz).div_ceil(8);
        if buf.len() < words {
            buf.resize(words, 0);
        }
        let mut at = 0;
        while at < n {
            let len = chunk.min(n - at);
            // SAFETY: `buf` holds at least `len` elements, 8-byte aligned; element types
            // need no more alignment and accept every bit pattern.
            let acc = unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), len) };
            // SAFETY: `src` holds `n` elements (checked by the caller).
            acc.copy_from_slice(unsafe { std::slice::from_raw_parts(src.add(at), len) });
            match alg {
                DataAlg::Ring => allreduce_ring(rt, routine, team, acc, op)?,
                DataAlg::Rabenseifner => allreduce_rabenseifner(rt, routine, team, acc, op)?,
                _ => allreduce_rd(rt, routine, team, acc, op)?,
            }
            // SAFETY: `dest` holds `n` elements; only this PE writes its own dest.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), dest.add(at), len) };
            at += len;
        }
        Ok(())
    })
}

/// Seed 000's Algorithm 2 for WORLD: reduce within each host (single-copy, or LL for small
/// vectors), reduce the host results across LEADERS (recursive doubling; `coll::net`'s bulk
/// reduction for vectors above a message), broadcast within
/// each host (LL for small vectors on hosts of up to 8 PEs). Other
/// teams, or a single host, take the flat single-copy path.
///
/// # Safety
/// As [`reduce_msg`].
pub(super) unsafe fn reduce_hierarchical<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
) -> Result<()> {
    let host = rt.teams().inner_host.clone();
    let is_world = std::ptr::eq(team, &*rt.teams().world);
    let flat = !is_world || host.n_pes() == team.n_pes();
    if flat {
        // SAFETY: forwarded.
        return unsafe { super::reduce_with(routine, team, dest, src, n, op, DataAlg::Shm) };
    }
    // Small vectors take the low-latency algorithms within the host (its PEs map each
    // other), larger ones single-copy.
    let bytes = n * std::mem::size_of::<T>();
    let (inner, inner_bcast) = (
        if super::ll::eligible(rt, &host, bytes) {
            DataAlg::Ll
        } else {
            DataAlg::Shm
        },
        if super::ll::bcast_eligible(rt, &host, bytes) {
            DataAlg::Ll
        } else {
            DataAlg::Shm
        },
    );
    // SAFETY: forwarded.
    unsafe { super::reduce_with(routine, &host, dest, src, n, op, inner)? };
    if let Some(leaders) = rt.teams().inner_leaders.clone() {
        // Across the network: one message a round for small vectors, bulk above.
        let across = crate::algo::net_reduce(bytes, leaders.n_pes());
        // SAFETY: `dest` holds `n` elements; in place is allowed.
        unsafe { super::reduce_with(routine, &leaders, dest, dest, n, op, across)? };
    }
    // SAFETY: forwarded; broadcast in place from host rank 0 (the leader).
    unsafe {
        super::broadcast_with(
            routine,
            &host,
            dest.cast(),
            dest.cast(),
            bytes,
            0,
            inner_bcast,
        )
    }
}
