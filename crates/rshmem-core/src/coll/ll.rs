//! Low-latency ("LL") small-message reductions, broadcasts and fcollects on teams whose
//! members all map each other (`Span::Host`).
//!
//! Every 8-byte word a PE stores into a peer's buffer carries 4 bytes of data and the low
//! 32 bits of the team's LL call count (its sequence), written with one aligned atomic
//! store. The receiver knows a word is fresh from the word alone: no flag, no fence, no
//! team sync; a step costs one one-way cache-line transfer.
//!
//! Reductions: a one-shot exchange for teams of up to [`ONE_SHOT_MAX`] members (each PE
//! stores its vector into every peer's lane of its rank, then folds all members' vectors
//! in rank order), recursive doubling above (lane k for round k, two lanes to fold ranks
//! beyond the largest power of two in and out). Each lane has two buffers, used by calls
//! of alternate parity: a writer fills a buffer for call s + 2 only after it has received
//! the reader's data of call s + 1, which the reader sends only once it has consumed call
//! s. So buffers need no reset while the team lives; destroy zeroes them for the slot's
//! next team, whose sequence starts again at 1.
//!
//! Fcollects (teams of up to [`ONE_SHOT_MAX`]) are the one-shot exchange without the
//! fold, on the same lanes and sequence.
//!
//! Broadcasts (teams of up to [`ONE_SHOT_MAX`]): the root stores the data into every
//! member's broadcast buffer of the call (one of [`BCAST_BUFS`], in turn) and returns;
//! members read it and raise a consumed count in their own area. A root reuses a buffer
//! only once every member has consumed the call that last used it: it reads the members'
//! counts only when its cached minimum is too old, once every few calls.

use std::mem::MaybeUninit;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use super::{Elem, ReduceOp};
use crate::algo::Span;
use crate::error::Result;
use crate::runtime::{Layout, Runtime};
use crate::team::Team;
use crate::transport::SymAddr;

/// Largest payload (bytes) of an LL reduction or broadcast: half a buffer (4 data bytes
/// per 8-byte word).
pub const MAX_BYTES: usize = Layout::LL_BYTES / 2;
/// Teams up to this size reduce one-shot and may broadcast LL.
pub const ONE_SHOT_MAX: usize = 8;
/// Reduction lanes: one per recursive-doubling round (32), fold-in, fold-out.
const LANES: usize = 34;
const LANE_EXTRA_IN: usize = 32;
const LANE_EXTRA_OUT: usize = 33;
/// Broadcast buffers per team, used in turn.
pub(crate) const BCAST_BUFS: usize = 8;
/// Index of the buffer whose first word is this PE's consumed-broadcast count.
const CONSUMED: usize = 2 * LANES + BCAST_BUFS;
/// LL buffers per team slot ([`Layout::LL_BUFS`] must equal it).
pub(crate) const BUFS: usize = CONSUMED + 1;
// The runtime's layout reserves them at a size of its own.
const _: () = assert!(BUFS == crate::runtime::Layout::LL_BUFS);
/// Scratch words (u64) for one payload.
const WORDS: usize = MAX_BYTES / 8;

/// Whether the LL algorithms serve a `bytes` collective on `team`: a team (not an active
/// set, which has no slot) whose members all map each other.
pub(crate) fn eligible(rt: &Runtime, team: &Team, bytes: usize) -> bool {
    bytes <= MAX_BYTES && team.slot().is_some() && rt.span(team) == Span::Host
}

/// Whether a broadcast of `bytes` on `team` goes LL.
pub(crate) fn bcast_eligible(rt: &Runtime, team: &Team, bytes: usize) -> bool {
    team.n_pes() <= ONE_SHOT_MAX && eligible(rt, team, bytes)
}

/// Stores `data` as LL words of sequence `seq` at `dst` (a peer's buffer).
///
/// # Safety
/// `dst` is an 8-byte aligned buffer of at least `data.len().div_ceil(4)` words that only
/// LL stores and loads touch.
#[inline(always)]
unsafe fn put(dst: *mut u64, data: &[u32], seq: u32) {
    let tag = (seq as u64) << 32;
    for (i, &d) in data.iter().enumerate() {
        // SAFETY: in the buffer (contract); every access to it is atomic.
        unsafe { AtomicU64::from_ptr(dst.add(i)) }.store(tag | d as u64, Release);
    }
}

/// The data of the LL words of `seq` at `src` (this PE's buffer) read so far into
/// `out[*got..]`; true once all of `out` is in.
///
/// # Safety
/// As [`put`], for `out.len()` words.
#[inline(always)]
unsafe fn take(src: *const u64, out: &mut [u32], got: &mut usize, seq: u32) -> bool {
    while *got < out.len() {
        // SAFETY: in the buffer (contract); every access to it is atomic.
        let v = unsafe { AtomicU64::from_ptr(src.add(*got).cast_mut()) }.load(Acquire);
        if (v >> 32) as u32 != seq {
            return false;
        }
        out[*got] = v as u32;
        *got += 1;
    }
    true
}

/// Alignment of the payload scratch: enough for every element type of the faces (C
/// `long double` takes 16).
pub(crate) const ALIGN: usize = 16;

/// A [`ALIGN`]-aligned payload scratch on the stack, of which only the prefix a call uses
/// is ever initialized (zeroing all of it would cost more than a small reduction).
#[repr(C, align(16))]
struct Scratch(MaybeUninit<[u64; WORDS]>);

impl Scratch {
    /// A scratch whose first `words` words are zero.
    #[inline(always)]
    fn new(words: usize) -> Scratch {
        debug_assert!(words <= WORDS);
        let mut s = Scratch(MaybeUninit::uninit());
        // SAFETY: `words` ≤ WORDS words of the scratch.
        unsafe { std::ptr::write_bytes(s.0.as_mut_ptr().cast::<u64>(), 0, words) };
        s
    }

    /// The first `n` elements (inside the initialized prefix).
    #[inline(always)]
    fn elems<T>(&mut self, n: usize) -> &mut [T] {
        debug_assert!(n * std::mem::size_of::<T>() <= MAX_BYTES);
        debug_assert!(std::mem::align_of::<T>() <= ALIGN);
        // SAFETY: within the initialized prefix (callers size it for the payload), ALIGN
        // aligned; callers take no element type that needs more (`reduce_with`), and
        // element types accept every bit pattern.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), n) }
    }

    /// The first `k` 4-byte data words (inside the initialized prefix).
    #[inline(always)]
    fn halves(&mut self, k: usize) -> &mut [u32] {
        self.elems::<u32>(k)
    }
}

impl Runtime {
    /// Address of LL buffer `i` of `team`'s slot.
    #[inline(always)]
    fn ll_buf(&self, team: &Team, i: usize) -> SymAddr {
        let slot = team
            .slot()
            .expect("LL collectives run on teams with a slot");
        self.layout.ll_buf(slot, i)
    }

    /// Stores `data` into buffer `i` of team rank `to`.
    #[inline(always)]
    fn ll_send(&self, team: &Team, to: usize, i: usize, data: &[u32], seq: u32) {
        let pe = team.members().pe(to);
        let p = self
            .fabric
            .ptr(pe, self.ll_buf(team, i))
            .expect("LL collectives run among PEs that map each other");
        // SAFETY: an LL buffer holds LL_BYTES = 2 × MAX_BYTES, room for the words of any
        // payload the callers allow; it is line-aligned in the peer's runtime area.
        unsafe { put(p.cast(), data, seq) };
    }

    /// Waits for the words of `seq` in our buffer `i` (written by team rank `from`).
    #[inline(always)]
    fn ll_recv(
        &self,
        routine: &'static str,
        team: &Team,
        from: usize,
        i: usize,
        out: &mut [u32],
        seq: u32,
    ) -> Result<()> {
        let p = self.fabric.local(self.ll_buf(team, i)).cast::<u64>();
        let mut got = 0;
        // SAFETY: our own LL buffer, as in `ll_send`.
        if unsafe { take(p, out, &mut got, seq) } {
            return Ok(());
        }
        let pe = team.members().pe(from);
        // SAFETY: as above.
        self.wait_peer_in(routine, team, pe, || unsafe { take(p, out, &mut got, seq) })
    }

    /// Zeroes this PE's LL buffers of `team` (destroy: after its last sync, nobody
    /// writes them any more), so the slot's next team can start its sequence at 1.
    pub(crate) fn ll_reset(&self, team: &Team) {
        let calls = team.ll_calls.load(Relaxed);
        let bcasts = team.ll_bcasts.load(Relaxed);
        let clear = |i: usize| {
            let p = self.fabric.local(self.ll_buf(team, i));
            // SAFETY: our own LL buffer of LL_BYTES, which nobody accesses any more.
            unsafe { std::ptr::write_bytes(p, 0, Layout::LL_BYTES) };
        };
        if calls > 0 {
            // Lanes below the team size (one-shot ranks, rounds) and the fold lanes.
            let used = (0..team.n_pes().min(LANE_EXTRA_IN)).chain([LANE_EXTRA_IN, LANE_EXTRA_OUT]);
            used.flat_map(|l| [2 * l, 2 * l + 1]).for_each(clear);
        }
        if bcasts > 0 {
            (2 * LANES..BUFS).for_each(clear);
        }
    }
}

/// Buffer of lane `l` for call parity `seq & 1`.
#[inline(always)]
fn lane(l: usize, seq: u32) -> usize {
    2 * l + (seq & 1) as usize
}

/// LL reduction of `n` elements (≤ [`MAX_BYTES`] bytes) on an [`eligible`] team of at
/// least two members; `rd` forces the recursive-doubling shape. Every member folds the
/// operands in the same order, so all end with identical bits.
///
/// # Safety
/// `dest` and `src` hold `n` elements (identical or disjoint).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn reduce<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut T,
    src: *const T,
    n: usize,
    op: ReduceOp,
    rd: bool,
) -> Result<()> {
    let bytes = n * std::mem::size_of::<T>();
    debug_assert!(bytes <= MAX_BYTES && team.n_pes() > 1);
    // Data words (4 bytes each) and scratch words (8 bytes) of the payload.
    let (k, words) = (bytes.div_ceil(4), bytes.div_ceil(8));
    let c = team.ll_calls.load(Relaxed) + 1;
    team.ll_calls.store(c, Relaxed);
    let seq = c as u32;
    let (me, npes) = (team.my_pe(), team.n_pes());
    let mut acc = Scratch::new(words);
    let mut tmp = Scratch::new(words);
    acc.elems::<T>(n)
        // SAFETY: `src` holds `n` elements (contract).
        .copy_from_slice(unsafe { std::slice::from_raw_parts(src, n) });
    let fold = |a: &mut Scratch, b: &mut Scratch| {
        T::fold(op, a.elems::<T>(n), b.elems::<T>(n)).expect("operator checked by the caller")
    };
    if npes <= ONE_SHOT_MAX && !rd {
        for r in (0..npes).filter(|&r| r != me) {
            rt.ll_send(team, r, lane(me, seq), acc.halves(k), seq);
        }
        // Rank order: rank 0's vector, then each next rank's folded in.
        let mut total = Scratch::new(words);
        if me == 0 {
            total.halves(k).copy_from_slice(acc.halves(k));
        } else {
            rt.ll_recv(routine, team, 0, lane(0, seq), total.halves(k), seq)?;
        }
        for r in 1..npes {
            if r == me {
                fold(&mut total, &mut acc);
            } else {
                rt.ll_recv(routine, team, r, lane(r, seq), tmp.halves(k), seq)?;
                fold(&mut total, &mut tmp);
            }
        }
        acc = total;
    } else {
        let p2 = 1usize << (usize::BITS - 1 - npes.leading_zeros());
        let extra = npes - p2;
        if me >= p2 {
            let (to, i, o) = (me - p2, lane(LANE_EXTRA_IN, seq), lane(LANE_EXTRA_OUT, seq));
            rt.ll_send(team, to, i, acc.halves(k), seq);
            rt.ll_recv(routine, team, to, o, acc.halves(k), seq)?;
        } else {
            if me < extra {
                let i = lane(LANE_EXTRA_IN, seq);
                rt.ll_recv(routine, team, me + p2, i, tmp.halves(k), seq)?;
                fold(&mut acc, &mut tmp);
            }
            let mut round = 0;
            while (1usize << round) < p2 {
                let partner = me ^ (1 << round);
                rt.ll_send(team, partner, lane(round, seq), acc.halves(k), seq);
                rt.ll_recv(routine, team, partner, lane(round, seq), tmp.halves(k), seq)?;
                // The lower ranks' value first, on both partners.
                if partner < me {
                    fold(&mut tmp, &mut acc);
                    std::mem::swap(&mut acc, &mut tmp);
                } else {
                    fold(&mut acc, &mut tmp);
                }
                round += 1;
            }
            if me < extra {
                let o = lane(LANE_EXTRA_OUT, seq);
                rt.ll_send(team, me + p2, o, acc.halves(k), seq);
            }
        }
    }
    // SAFETY: `dest` holds `n` elements and only this PE writes it.
    unsafe { std::ptr::copy_nonoverlapping(acc.elems::<T>(n).as_ptr(), dest, n) };
    Ok(())
}

/// LL fcollect of `nbytes` (≤ [`MAX_BYTES`]) per member on an [`eligible`] team of two to
/// [`ONE_SHOT_MAX`] members (`algo::Algorithms::fcollect_for`): the one-shot reduction's exchange without the fold, on the
/// same lanes and sequence (every member hears from every other in each call, so the
/// buffers' parity rule holds across both).
///
/// # Safety
/// `src` holds `nbytes` and `dest` `nbytes` per member; they may overlap (the source is
/// read before `dest` is written).
pub(super) unsafe fn fcollect(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
) -> Result<()> {
    debug_assert!(nbytes <= MAX_BYTES && team.n_pes() > 1 && team.n_pes() <= ONE_SHOT_MAX);
    let (k, words) = (nbytes.div_ceil(4), nbytes.div_ceil(8));
    let c = team.ll_calls.load(Relaxed) + 1;
    team.ll_calls.store(c, Relaxed);
    let seq = c as u32;
    let (me, npes) = (team.my_pe(), team.n_pes());
    let mut mine = Scratch::new(words);
    // SAFETY: `src` holds `nbytes` (contract); the scratch holds MAX_BYTES.
    unsafe { std::ptr::copy_nonoverlapping(src, mine.0.as_mut_ptr().cast::<u8>(), nbytes) };
    for r in (0..npes).filter(|&r| r != me) {
        rt.ll_send(team, r, lane(me, seq), mine.halves(k), seq);
    }
    let mut block = Scratch::new(words);
    for r in 0..npes {
        let from = if r == me {
            &mine
        } else {
            rt.ll_recv(routine, team, r, lane(r, seq), block.halves(k), seq)?;
            &block
        };
        // SAFETY: `dest` holds `nbytes` per member and only this PE writes it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                from.0.as_ptr().cast::<u8>(),
                dest.add(r * nbytes),
                nbytes,
            )
        };
    }
    Ok(())
}

/// LL broadcast of `nbytes` (≤ [`MAX_BYTES`]) from team rank `root` on a
/// [`bcast_eligible`] team of at least two members.
///
/// # Safety
/// `src` (on the root) and `dest` hold `nbytes`, identical or disjoint; the root's
/// `dest` is written only with `root_dest`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn broadcast(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    dest: *mut u8,
    src: *const u8,
    nbytes: usize,
    root: usize,
    root_dest: bool,
) -> Result<()> {
    debug_assert!(nbytes <= MAX_BYTES && team.n_pes() > 1);
    let (k, words) = (nbytes.div_ceil(4), nbytes.div_ceil(8));
    let c = team.ll_bcasts.load(Relaxed) + 1;
    team.ll_bcasts.store(c, Relaxed);
    let seq = c as u32;
    let buf = 2 * LANES + (c % BCAST_BUFS as u64) as usize;
    let (me, npes) = (team.my_pe(), team.n_pes());
    let mut w = Scratch::new(words);
    let consumed = rt.fabric.local(rt.ll_buf(team, CONSUMED)).cast::<u64>();
    if me == root {
        // Buffer `buf` last carried call c - BCAST_BUFS: every member must be past it.
        let need = c.saturating_sub(BCAST_BUFS as u64);
        if team.ll_consumed.load(Relaxed) < need {
            let low = rt.members_past(routine, team, need, |r| {
                let p = rt
                    .fabric
                    .ptr(team.members().pe(r), rt.ll_buf(team, CONSUMED))
                    .expect("LL collectives run among PEs that map each other");
                // SAFETY: the peer's consumed word, line-aligned, only accessed atomically.
                unsafe { AtomicU64::from_ptr(p.cast()) }
            })?;
            team.ll_consumed.store(low, Relaxed);
        }
        // SAFETY: `src` holds `nbytes` (contract); the scratch holds MAX_BYTES.
        unsafe { std::ptr::copy_nonoverlapping(src, w.0.as_mut_ptr().cast::<u8>(), nbytes) };
        for r in (0..npes).filter(|&r| r != me) {
            rt.ll_send(team, r, buf, w.halves(k), seq);
        }
        // The root needs no buffer of this call: it is past it for later roots.
        // SAFETY: our own consumed word, only ever accessed atomically.
        unsafe { AtomicU64::from_ptr(consumed) }.store(c, Release);
        if root_dest && !std::ptr::eq(src, dest) {
            // SAFETY: both hold `nbytes` (contract); `copy` tolerates overlap.
            unsafe { std::ptr::copy(src, dest, nbytes) };
        }
        return Ok(());
    }
    rt.ll_recv(routine, team, root, buf, w.halves(k), seq)?;
    // SAFETY: our own consumed word, only ever accessed atomically; the data is out.
    unsafe { AtomicU64::from_ptr(consumed) }.store(c, Release);
    // SAFETY: `dest` holds `nbytes` and only this PE writes it.
    unsafe { std::ptr::copy_nonoverlapping(w.0.as_ptr().cast::<u8>(), dest, nbytes) };
    Ok(())
}
