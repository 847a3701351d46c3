//! `coll`: teams and team collectives on however many PEs run (seed 000, §V, on one node).
//!
//! * Team creation latency: duplicates of WORLD and halving splits of growing stride,
//!   each destroyed at once, against the two parent syncs of the slot agreement.
//! * Team creation by team count (seed 000, Fig. 3): 64 splits back to back, all kept
//!   alive, the time to the k-th, against as many pairs of `team_sync(WORLD)`.
//! * Barrier latency: `shmem_team_sync(WORLD)`, `shmem_sync_all`, `shmem_barrier_all`.
//! * Collective latency 8 B..1 MiB (broadcast, sum reductions, collect, fcollect,
//!   alltoall), each against a memcpy of the bytes one PE receives, interleaved.
//! * Sum reduction (i32, f64) on flat WORLD by algorithm (single-copy, recursive
//!   doubling, ring, linear), interleaved, with ratios to single-copy and the size from
//!   which ring beats recursive doubling (seed 000, Fig. 4).
//! * With more than one (virtual) host: flat WORLD sum reductions against the
//!   hierarchical composition (HOST reduce, LEADERS in-place reduce, HOST broadcast) with
//!   single-copy, recursive doubling and ring (flat over WORLD, hierarchical across
//!   LEADERS), interleaved (seed 000, Fig. 5).
//!
//! Every reduction variant is checked for exact sums before it is timed; a wrong result
//! stops the job.
//!
//! Every PE runs every batch (collectives must match one for one); PE 0 times and prints.
//! Memcpy batches run on PE 0 alone while the others wait in the next collective's sync.

use std::time::Instant;

use rshmem_core::team;
use rshmem_core::{memory, setup, sync};

use crate::report::{self, Goal, Report};
use crate::stats::Lat;

mod algorithms;
mod hierarchical;
mod latency;
mod net;
mod teams;

use algorithms::by_algorithm;
use hierarchical::hierarchical;
use latency::collectives;
pub(crate) use net::run_net;
use teams::{barriers, team_count, team_creation};

/// Ends the job on a runtime error.
fn ok<T>(r: rshmem_core::Result<T>) -> T {
    r.unwrap_or_else(|e| rshmem_core::fatal(&e))
}

/// How thoroughly to measure.
#[derive(Debug, Clone, Copy)]
struct Effort {
    /// Team creations per experiment.
    creations: usize,
    /// Runs of the team-count series (each creates and destroys [`LIVE_TEAMS`] teams).
    series_runs: usize,
    /// Timed batches per collective and size.
    samples: usize,
    /// Untimed batches per collective and size.
    warmup: usize,
    /// Timed batches of barriers.
    sync_samples: usize,
}

impl Effort {
    fn new(quick: bool) -> Effort {
        if quick {
            Effort {
                creations: 16,
                series_runs: 4,
                samples: 7,
                warmup: 1,
                sync_samples: 60,
            }
        } else {
            Effort {
                creations: 64,
                series_runs: 32,
                samples: 101,
                warmup: 3,
                sync_samples: 400,
            }
        }
    }
}

/// Teams alive at the end of a team-count run (the seed's 64: SOS's slot bitmask).
const LIVE_TEAMS: usize = 64;

/// Team counts at which a team-count run reads the clock.
const CHECKPOINTS: &[usize] = &[1, 2, 4, 8, 16, 32, 48, 64];

/// Barriers per timed batch.
const SYNC_BATCH: u64 = 16;

/// Operations per timed batch for `bytes` received per PE: the same on every PE (a
/// collective batch must match), about 256 KiB of traffic, 2 to 32 operations.
fn batch(bytes: usize) -> u64 {
    ((256usize << 10) / bytes.max(1)).clamp(2, 32) as u64
}

/// Powers of two from `from` to `max`.
fn sizes(from: usize, max: usize) -> Vec<usize> {
    std::iter::successors(Some(from), |n| Some(n * 2))
        .take_while(|&n| n <= max)
        .collect()
}

/// Nanoseconds since `t`.
fn since(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64
}

/// `med / min` of a latency.
fn med_min(l: Lat) -> String {
    format!("{} / {}", report::ns(l.median), report::ns(l.min))
}

/// `coll`: the whole suite.
pub(crate) fn run_coll(quick: bool, max_size: usize) {
    crate::pe::init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    let e = Effort::new(quick);
    let max_size = max_size.max(8).next_power_of_two();
    let world = ok(team::world());
    let host = ok(team::host());
    let leaders = ok(team::leaders());

    // Symmetric source and destination, large enough for alltoall at the largest size.
    let span = max_size * npes;
    let src = ok(memory::align("shmem_align", 4096, span));
    let dst = ok(memory::align("shmem_align", 4096, span));
    // SAFETY: both blocks were just allocated in our own heap with `span` bytes; touching
    // every page now keeps page faults out of the measurements.
    unsafe {
        fill_f64(src, span, 1.0);
        std::ptr::write_bytes(dst, 0, span);
    }
    ok(sync::barrier_all());

    let r = Report::new(npes);
    let cores = rshmem_util::wait::job_cpus();
    if me == 0 {
        r.line(format!(
            "rshmem-bench coll: {npes} PEs on {cores} cores{}, HOST team of PE 0: {} PEs; {} mode",
            if npes > cores {
                " (oversubscribed)"
            } else {
                ""
            },
            host.n_pes(),
            if quick { "quick" } else { "full" }
        ));
        r.line(
            "latency = median / min over batches of the per-op mean on PE 0; \
             ratio = collective / memcpy (PE 0 alone) of the bytes one PE receives, same run, interleaved",
        );
    }

    team_creation(&r, &e, &world, me, npes);
    team_count(&r, &e, &world, me, npes);
    let barrier = barriers(&r, &e, &world, me, npes, cores);
    collectives(&r, &e, &world, me, npes, src, dst, max_size);
    by_algorithm::<i32>(&r, &e, &world, me, npes, src, dst, max_size);
    by_algorithm::<f64>(&r, &e, &world, me, npes, src, dst, max_size);
    if host.n_pes() < npes {
        hierarchical(
            &r,
            &e,
            &world,
            &host,
            leaders.as_deref(),
            me,
            src,
            dst,
            max_size,
        );
        // Restore the source pattern for anything that follows.
        // SAFETY: `src` is our own symmetric block of `span` bytes; every PE is past the
        // last collective reading it (hierarchical ends with a barrier).
        unsafe { fill_f64(src, span, 1.0) };
    } else if me == 0 {
        r.section("hierarchical reduction: skipped (one host; set SHMEM_VIRTUAL_HOSTS=2)");
    }
    ok(sync::barrier_all());
    if me == 0 {
        if npes == 4 {
            r.target(
                "barrier_all_4pe_latency",
                &format!(
                    "shmem_barrier_all median {} on {cores} cores",
                    report::ns(barrier.median)
                ),
                barrier.median / 1e3,
                "us",
                Goal::AtMost(3.0),
            );
        }
        r.targets();
    }
    ok(memory::free("shmem_free", dst));
    ok(memory::free("shmem_free", src));
    rshmem_core::finalize();
}

/// Writes `v` into every whole f64 of `p..p + bytes`.
///
/// # Safety
/// `p` is 8-byte aligned and writable for `bytes` bytes.
unsafe fn fill_f64(p: *mut u8, bytes: usize, v: f64) {
    // SAFETY: the caller guarantees alignment and `bytes` writable bytes.
    let s = unsafe { std::slice::from_raw_parts_mut(p.cast::<f64>(), bytes / 8) };
    s.fill(v);
}
