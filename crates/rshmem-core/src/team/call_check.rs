//! `SHMEM_DEBUG=1`: every collective call first checks that all members of its team call
//! the same collective with the same arguments (root, element count, operator, type, split
//! arguments). Each member writes the call's description into its own check line of the
//! team's slot, syncs, and compares every member's line with rank 0's; all members find
//! the same first mismatch, so all fail together with the same report (a member that went
//! on would wait forever for the others), and a second sync keeps the lines until all
//! have read them. With `SHMEM_DEBUG=0` the check is one branch on a configuration flag.
//!
//! Always on, and free of communication: the call sequence. Every collective call on a
//! team stores its number on the team and its kind into a word of this PE's own memory
//! (`Layout::call_word`) and notes it in the calling thread. Only a wait that is overdue
//! (`Runtime::wait_in`) reads its peers' words: a peer whose call of the same number is
//! another collective never comes (PE 1 skipped a reduction and went on to a barrier),
//! so the wait fails naming both calls instead of hanging. Active sets, which have no
//! slot, are not covered.

use std::cell::Cell;
use std::sync::atomic::Ordering::Relaxed;

use rshmem_util::Waiter;

use super::group::Scratch;
use super::Team;
use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::word::AmoOp;

/// The collective call a thread is in (or was in last), for the overdue check.
#[derive(Clone, Copy)]
struct Call {
    /// The team's slot (`usize::MAX`: none yet).
    slot: usize,
    /// `sequence << 8 | kind`, as in the call word.
    word: u64,
    routine: &'static str,
}

thread_local! {
    static CURRENT: Cell<Call> = const {
        Cell::new(Call { slot: usize::MAX, word: 0, routine: "" })
    };
}

/// Bytes of a routine's name a PE publishes (call words 2..8).
const NAME_WORDS: usize = 6;

/// The collective routines, as compared across PEs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u64)]
pub(crate) enum Kind {
    BarrierAll = 1,
    SyncAll,
    TeamSync,
    Broadcast,
    Collect,
    Fcollect,
    Alltoall,
    Alltoalls,
    Reduce,
    Scan,
    SplitStrided,
    Split2d,
    SplitColor,
    TeamDestroy,
    Malloc,
    Align,
    Calloc,
    Realloc,
    Free,
}

const KINDS: [&str; 19] = [
    "shmem_barrier_all",
    "shmem_sync_all",
    "shmem_team_sync",
    "shmem_broadcast",
    "shmem_collect",
    "shmem_fcollect",
    "shmem_alltoall",
    "shmem_alltoalls",
    "a reduction (shmem_TYPE_OP_reduce)",
    "a scan (shmem_TYPE_sum_inscan/exscan)",
    "shmem_team_split_strided",
    "shmem_team_split_2d",
    "shmemx_team_split_color",
    "shmem_team_destroy",
    "shmem_malloc",
    "shmem_align",
    "shmem_calloc",
    "shmem_realloc",
    "shmem_free",
];

/// How an argument's value is shown in a mismatch report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Show {
    /// A number.
    Num,
    /// A reduction operator (`ReduceOp as u64`).
    Op,
    /// An element type (index into [`TYPES`] plus one).
    Type,
}

/// Element types of reductions and scans, by the name `coll::Elem::TYPE` gives.
pub(crate) const TYPES: [&str; 14] = [
    "i8",
    "i16",
    "i32",
    "i64",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "usize",
    "f32",
    "f64",
    "complex f32",
    "complex f64",
];

/// The code of an element type name for the check.
pub(crate) fn type_code(name: &str) -> u64 {
    TYPES
        .iter()
        .position(|t| *t == name)
        .map_or(0, |i| i as u64 + 1)
}

const OPS: [&str; 7] = ["and", "or", "xor", "min", "max", "sum", "prod"];

fn shown(show: Show, v: u64) -> &'static str {
    let pick = |t: &[&'static str], i: u64| t.get(i as usize).copied().unwrap_or("?");
    match show {
        Show::Num => "?",
        Show::Op => pick(&OPS, v),
        Show::Type if v == 0 => "a type of the C face (long double)",
        Show::Type => pick(&TYPES, v - 1),
    }
}

/// One argument to compare: name, value, how to show it.
pub(crate) type Arg = (&'static str, u64, Show);

impl Runtime {
    /// The `SHMEM_DEBUG` check of a collective call on `team` (nothing without it).
    #[inline(always)]
    pub(crate) fn check_coll(
        &self,
        routine: &'static str,
        team: &Team,
        kind: Kind,
        args: &[Arg],
    ) -> Result<()> {
        // Earlier non-blocking collectives run first, on every member alike.
        self.worker().drain(self);
        if let Scratch::Slot(slot) = team.scratch {
            // One team runs one collective at a time: no read-modify-write needed.
            let seq = team.calls.load(Relaxed) + 1;
            team.calls.store(seq, Relaxed);
            let word = seq << 8 | kind as u64;
            self.set_own(self.layout.call_word(slot, 0), word);
            CURRENT.with(|c| {
                c.set(Call {
                    slot,
                    word,
                    routine,
                })
            });
        }
        if !self.cfg.debug {
            return Ok(());
        }
        self.check_coll_slow(routine, team, kind, args)
    }

    #[cold]
    #[inline(never)]
    fn check_coll_slow(
        &self,
        routine: &'static str,
        team: &Team,
        kind: Kind,
        args: &[Arg],
    ) -> Result<()> {
        debug_assert!(args.len() <= 4);
        if team.n_pes() == 1 {
            return Ok(());
        }
        let word = |w: usize| self.team_word(team, true, w);
        let mut mine = [0u64; 5];
        mine[0] = kind as u64;
        for (i, a) in args.iter().enumerate() {
            mine[i + 1] = a.1;
        }
        for (i, v) in mine.iter().enumerate() {
            self.set_own(word(i), *v);
        }
        self.try_sync_in(routine, team)?;
        // Every member compares every member with rank 0, so all find the same first
        // mismatch and fail alike with the whole story (whichever PE reports first).
        let read = |pe: usize| -> Result<[u64; 5]> {
            let mut v = [0u64; 5];
            for (i, x) in v.iter_mut().enumerate() {
                *x = self.amo(routine, pe, word(i), AmoOp::Fetch)?;
            }
            Ok(v)
        };
        let root = team.members().pe(0);
        let theirs = read(root)?;
        let mut mismatch = None;
        for r in 1..team.n_pes() {
            let pe = team.members().pe(r);
            let v = if pe == self.me { mine } else { read(pe)? };
            mismatch = describe(routine, args, pe, &v, root, &theirs);
            if mismatch.is_some() {
                break;
            }
        }
        // Nobody may overwrite its words (next collective) before all have read them.
        self.try_sync_in(routine, team)?;
        if let Some(e) = mismatch {
            return Err(e);
        }
        Ok(())
    }
}

impl Runtime {
    /// The overdue check of a wait inside a collective: the first of `peers` whose call of
    /// this thread's call number on its team is another collective. Publishes this PE's
    /// routine name first (peers name it in their report); a peer's name not yet
    /// published is waited for a while, then its kind is named instead.
    #[cold]
    #[inline(never)]
    pub(crate) fn call_mismatch(
        &self,
        peers: impl Iterator<Item = usize>,
        w: &Waiter,
    ) -> Option<Error> {
        let cur = CURRENT.with(Cell::get);
        if cur.slot == usize::MAX {
            return None;
        }
        let word = |i: usize| self.layout.call_word(cur.slot, i);
        if self.load_local::<u64>(word(1)) != cur.word {
            let mut name = [0u8; NAME_WORDS * 8];
            let n = cur.routine.len().min(name.len());
            name[..n].copy_from_slice(&cur.routine.as_bytes()[..n]);
            for (i, c) in name.chunks(8).enumerate() {
                let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                self.set_own(word(2 + i), v);
            }
            self.set_own(word(1), cur.word);
        }
        let read = |pe: usize, i: usize| self.amo::<u64>("", pe, word(i), AmoOp::Fetch).ok();
        for pe in peers.filter(|&pe| pe != self.me) {
            let Some(v) = read(pe, 0) else { continue };
            if v >> 8 != cur.word >> 8 || v == cur.word {
                continue;
            }
            let mut name = [0u8; NAME_WORDS * 8];
            let mut named = read(pe, 1) == Some(v);
            for (i, c) in name.chunks_mut(8).enumerate() {
                c.copy_from_slice(&read(pe, 2 + i).unwrap_or(0).to_le_bytes());
            }
            // The name belongs to the call only if it is still the published one.
            named &= read(pe, 1) == Some(v);
            let other: &'static str = if named {
                let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                match std::str::from_utf8(&name[..len]) {
                    // Leaked once, on the way to a fatal error.
                    Ok(s) => Box::leak(s.to_owned().into_boxed_str()),
                    Err(_) => kind_name(v & 0xff),
                }
            } else if w.waited() < rshmem_util::wait::OVERDUE_AFTER * 5 {
                return None;
            } else {
                kind_name(v & 0xff)
            };
            return Some(Error::CollectiveOrder {
                routine: cur.routine,
                pe: self.me,
                other_routine: other,
                other_pe: pe,
                seq: cur.word >> 8,
            });
        }
        None
    }
}

/// The name of kind `k` (`Kind as u64`).
fn kind_name(k: u64) -> &'static str {
    KINDS
        .get((k as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("?")
}

/// The mismatch between `pe`'s call `v` and rank 0's (`root`, `theirs`), if any.
fn describe(
    routine: &'static str,
    args: &[Arg],
    pe: usize,
    v: &[u64; 5],
    root: usize,
    theirs: &[u64; 5],
) -> Option<Error> {
    if v[0] != theirs[0] {
        let name = kind_name;
        return Some(Error::CollectiveMismatchNamed {
            routine,
            arg: "(routine called)",
            pe,
            value: name(v[0]),
            other_pe: root,
            other_value: name(theirs[0]),
        });
    }
    let i = (1..=args.len()).find(|&i| v[i] != theirs[i])?;
    let (arg, _, show) = args[i - 1];
    Some(match show {
        Show::Num => Error::CollectiveMismatch {
            routine,
            arg,
            pe,
            value: v[i],
            other_pe: root,
            other_value: theirs[i],
        },
        _ => Error::CollectiveMismatchNamed {
            routine,
            arg,
            pe,
            value: shown(show, v[i]),
            other_pe: root,
            other_value: shown(show, theirs[i]),
        },
    })
}
