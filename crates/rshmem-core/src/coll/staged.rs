//! Staged broadcasts on teams whose members all map each other (`Span::Host`): the root
//! copies the data into staging chunks of its own and publishes each chunk's number in
//! the chunk's head; members copy out of the root's chunks as their heads say they are
//! ready and raise a consumed count in their own area.
//!
//! Neither side waits for the other but a member for the data: no team sync, and the root
//! returns once its copies are published. A single-copy broadcast needs a sync before
//! (the root's source is ready) and after (every member has read it); with more PEs than
//! cores each sync waits for every member to be scheduled (4 PEs on 2 cores: 1-16 KiB in
//! 6-9 us, against 1.4-2 us for the LL broadcast, which does not sync). The price is a
//! second copy, the root's, which the members' copies of earlier chunks overlap.
//!
//! A team's chunks are numbered across its broadcasts (every member counts the same,
//! since a broadcast's size is the same everywhere), and chunk c goes into the root's
//! chunk c mod [`CHUNKS`], whoever the root. A root fills chunk c only once every member
//! has consumed chunk c - [`CHUNKS`] (of any root): it reads the members' counts only when
//! its cached minimum is too old. Destroy zeroes the heads and the count for the slot's
//! next team, whose chunk numbers start again at 0.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use crate::algo::Span;
use crate::error::Result;
use crate::runtime::{Layout, Runtime};
use crate::team::Team;

/// Bytes of a chunk.
pub const CHUNK: usize = Layout::STAGE_CHUNK;
/// Chunks per team slot, used in turn.
pub const CHUNKS: usize = Layout::STAGE_CHUNKS;

/// Whether staged broadcasts serve `team`: a team (not an active set, which has no slot)
/// whose members all map each other.
pub(crate) fn eligible(rt: &Runtime, team: &Team) -> bool {
    team.slot().is_some() && rt.span(team) == Span::Host
}

impl Runtime {
    /// The slot of a team the staged broadcasts serve.
    #[inline(always)]
    fn stage_slot(team: &Team) -> usize {
        team.slot()
            .expect("staged broadcasts run on teams with a slot")
    }

    /// Line `i` of team rank `r`'s staging page (`Layout::stage_line`), as an atomic word.
    #[inline(always)]
    fn stage_word(&self, team: &Team, r: usize, i: usize) -> &AtomicU64 {
        let addr = self.layout.stage_line(Self::stage_slot(team), i);
        let p = if r == team.my_pe() {
            self.fabric.local(addr)
        } else {
            self.fabric
                .ptr(team.members().pe(r), addr)
                .expect("staged broadcasts run among PEs that map each other")
        };
        // SAFETY: a line-aligned word of a mapped runtime area, only accessed atomically.
        unsafe { AtomicU64::from_ptr(p.cast()) }
    }

    /// Zeroes this PE's staging heads and consumed count of `team` (destroy: after its
    /// last sync nobody reads them any more), so the slot's next team can count from 0.
    pub(crate) fn stage_reset(&self, team: &Team) {
        if team.stage_chunks.load(Relaxed) > 0 {
            let me = team.my_pe();
            (0..=CHUNKS).for_each(|i| self.stage_word(team, me, i).store(0, Relaxed));
        }
    }
}

/// Staged broadcast of `nbytes` from team rank `root` on an [`eligible`] team of at least
/// two members.
///
/// # Safety
/// `src` (on the root) and `dest` hold `nbytes`, identical or disjoint; the root's `dest`
/// is written only with `root_dest`.
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
    debug_assert!(team.n_pes() > 1);
    let slot = Runtime::stage_slot(team);
    let first = team.stage_chunks.load(Relaxed);
    let chunks = nbytes.div_ceil(CHUNK);
    let end = first + chunks as u64;
    team.stage_chunks.store(end, Relaxed);
    let me = team.my_pe();
    let consumed = rt.stage_word(team, me, CHUNKS);
    let span = |k: usize| (k * CHUNK, (nbytes - k * CHUNK).min(CHUNK));
    if me == root {
        for k in 0..chunks {
            let c = first + k as u64;
            let i = (c % CHUNKS as u64) as usize;
            // Chunk i last carried chunk c - CHUNKS: every member must be past it.
            let need = (c + 1).saturating_sub(CHUNKS as u64);
            if team.stage_consumed.load(Relaxed) < need {
                let low =
                    rt.members_past(routine, team, need, |r| rt.stage_word(team, r, CHUNKS))?;
                team.stage_consumed.store(low, Relaxed);
            }
            let (off, len) = span(k);
            let chunk = rt.fabric.local(rt.layout.stage_chunk(slot, i));
            // SAFETY: `src` holds `nbytes` (contract); the chunk holds CHUNK bytes, which
            // no member reads until its head says `c + 1` (stored below).
            unsafe { std::ptr::copy_nonoverlapping(src.add(off), chunk, len) };
            rt.stage_word(team, me, i).store(c + 1, Release);
        }
        // The root reads none of this call's chunks: it is past them for later roots.
        consumed.store(end, Release);
        if root_dest && !std::ptr::eq(src, dest) {
            // SAFETY: both hold `nbytes` (contract); `copy` tolerates overlap.
            unsafe { std::ptr::copy(src, dest, nbytes) };
        }
        return Ok(());
    }
    let root_pe = team.members().pe(root);
    for k in 0..chunks {
        let c = first + k as u64;
        let i = (c % CHUNKS as u64) as usize;
        let head = rt.stage_word(team, root, i);
        if head.load(Acquire) != c + 1 {
            rt.wait_peer_in(routine, team, root_pe, || head.load(Acquire) == c + 1)?;
        }
        let chunk = rt
            .fabric
            .ptr(root_pe, rt.layout.stage_chunk(slot, i))
            .expect("staged broadcasts run among PEs that map each other");
        let (off, len) = span(k);
        // SAFETY: the root published chunk c (its head, read with Acquire) and does not
        // refill it before our count passes c; `dest` holds `nbytes` and only we write it.
        unsafe { std::ptr::copy_nonoverlapping(chunk.cast_const(), dest.add(off), len) };
        consumed.store(c + 1, Release);
    }
    Ok(())
}
