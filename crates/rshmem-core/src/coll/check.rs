//! `SHMEM_DEBUG=1`: every collective call first checks that all members of its team call
//! the same collective with the same arguments (root, element count, operator, type, split
//! arguments). Each member writes the call's description into its own check line of the
//! team's slot, syncs, and compares every member's line with rank 0's; all members find
//! the same first mismatch, so all fail together with the same report (a member that went
//! on would wait forever for the others), and a second sync keeps the lines until all
//! have read them. With `SHMEM_DEBUG=0` the check is one branch on a configuration flag.

use crate::error::{Error, Result};
use crate::runtime::Runtime;
use crate::team::Team;
use crate::word::AmoOp;

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

/// Element types of reductions and scans, by the name [`super::Elem::TYPE`] gives.
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
        self.nb.drain(self);
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
        let name = |k: u64| {
            KINDS
                .get((k as usize).wrapping_sub(1))
                .copied()
                .unwrap_or("?")
        };
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
