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

use std::hint::black_box;
use std::time::Instant;

use rshmem_core::algo::DataAlg;
use rshmem_core::coll::{self as core_coll, Elem, ReduceOp};
use rshmem_core::team::{self, Team, TeamConfig};
use rshmem_core::{memory, setup, sync};

use crate::report::{self, Goal, Report};
use crate::spmd::pages;
use crate::stats::{interleaved_fixed, Body, Lat};

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
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
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

/// Team creation latency (seed 000, Fig. 3): `creations` duplicates of WORLD, then
/// `creations` halving splits `(0, 2^i, ceil(n / 2^i))` cycling over i; each destroyed
/// at once. The slot agreement costs two syncs of the parent plus a bitmap exchange;
/// its sync share is estimated as 2 x `team_sync(WORLD)` timed in the same loop over
/// the creation time.
fn team_creation(r: &Report, e: &Effort, world: &Team, me: usize, npes: usize) {
    let cfg = TeamConfig::default();
    let levels = npes.ilog2() as usize + 1;
    // Experiment 0: duplicates; 1..=levels: halving with stride 2^(k-1).
    let kinds = 1 + levels;
    let mut create = vec![Vec::new(); kinds];
    let mut destroy = vec![Vec::new(); kinds];
    let mut syncs = vec![Vec::new(); kinds];
    let mut one = |kind: usize, stride: usize| {
        let size = npes.div_ceil(stride);
        ok(sync::sync_all());
        let t = Instant::now();
        let new = ok(team::split_strided(
            world,
            0,
            stride as i64,
            size as i64,
            cfg,
        ));
        create[kind].push(since(t));
        assert_eq!(
            new.is_some(),
            me.is_multiple_of(stride),
            "membership of the split"
        );
        ok(sync::sync_all());
        if let Some(new) = new {
            let t = Instant::now();
            ok(team::destroy(&new));
            destroy[kind].push(since(t));
        }
        ok(sync::sync_all());
        let t = Instant::now();
        ok(team::sync(world));
        ok(team::sync(world));
        syncs[kind].push(since(t));
    };
    for _ in 0..e.creations {
        one(0, 1);
    }
    for i in 0..e.creations {
        let level = i % levels;
        one(1 + level, 1 << level);
    }
    if me != 0 {
        return;
    }
    r.section(&format!(
        "team creation, {} creations each, destroyed at once (agreement-sync share = 2 x team_sync(WORLD) / create, medians)",
        e.creations
    ));
    r.line(format!(
        "{:<34} {:>21}  {:>10}  {:>13}  {:>6}",
        "", "create med / min", "destroy", "2 x sync", "share"
    ));
    for kind in 0..kinds {
        let (bench, desc) = if kind == 0 {
            (
                "team_create_dup_world".to_string(),
                format!("dup WORLD split(0, 1, {npes})"),
            )
        } else {
            let stride = 1usize << (kind - 1);
            let size = npes.div_ceil(stride);
            (
                format!("team_create_halve_stride{stride}"),
                format!("halve split(0, {stride}, {size})"),
            )
        };
        let (c, d, s) = (
            Lat::of(&create[kind]),
            Lat::of(&destroy[kind]),
            Lat::of(&syncs[kind]),
        );
        let share = s.median / c.median;
        r.line(format!(
            "{:<34} {:>21}  {:>10}  {:>13}  {:>6.2}",
            desc,
            med_min(c),
            report::ns(d.median),
            report::ns(s.median),
            share
        ));
        r.json(&bench, None, "create_latency_median", c.median, "ns");
        r.json(&bench, None, "create_latency_min", c.min, "ns");
        r.json(&bench, None, "destroy_latency_median", d.median, "ns");
        r.json(&bench, None, "two_world_syncs_median", s.median, "ns");
        r.json(&bench, None, "agreement_sync_share", share, "x");
    }
}

/// Team creation by team count (seed 000, Fig. 3): [`LIVE_TEAMS`] splits of WORLD back to
/// back, kept alive, then destroyed; duplicates of WORLD, and halving splits of stride
/// `2^(i mod levels)` for the i-th. PE 0's time from the start to the k-th creation
/// (k in [`CHECKPOINTS`]), mean over runs, against as many pairs of `team_sync(WORLD)`
/// (the synchronisation part of each slot agreement).
fn team_count(r: &Report, e: &Effort, world: &Team, me: usize, npes: usize) {
    let cfg = TeamConfig::default();
    let levels = npes.ilog2() as usize + 1;
    // Sums over runs of the time to each checkpoint: dup, halve, syncs.
    let mut cum = [[0.0f64; CHECKPOINTS.len()]; 3];
    for _ in 0..e.series_runs {
        for (kind, sums) in cum.iter_mut().enumerate() {
            let mut live = Vec::with_capacity(LIVE_TEAMS);
            let mut c = 0;
            ok(sync::sync_all());
            let t = Instant::now();
            for i in 0..LIVE_TEAMS {
                if kind == 2 {
                    ok(team::sync(world));
                    ok(team::sync(world));
                } else {
                    let stride = if kind == 0 { 1 } else { 1usize << (i % levels) };
                    let size = npes.div_ceil(stride);
                    let new = ok(team::split_strided(
                        world,
                        0,
                        stride as i64,
                        size as i64,
                        cfg,
                    ));
                    live.extend(new);
                }
                if CHECKPOINTS.get(c) == Some(&(i + 1)) {
                    sums[c] += since(t);
                    c += 1;
                }
            }
            ok(sync::sync_all());
            // Every member destroys its teams in the order they were made.
            for t in live {
                ok(team::destroy(&t));
            }
        }
    }
    if me != 0 {
        return;
    }
    r.section(&format!(
        "team creation by team count: {LIVE_TEAMS} splits kept alive, time to the k-th (mean of {} runs)",
        e.series_runs
    ));
    r.line(format!(
        "{:>6}  {:>12}  {:>12}  {:>12}",
        "teams", "dup WORLD", "halve", "2k x sync"
    ));
    let runs = e.series_runs.max(1) as f64;
    for (c, &k) in CHECKPOINTS.iter().enumerate() {
        r.line(format!(
            "{k:>6}  {:>12}  {:>12}  {:>12}",
            report::ns(cum[0][c] / runs),
            report::ns(cum[1][c] / runs),
            report::ns(cum[2][c] / runs)
        ));
        for (kind, bench) in [
            "team_count_dup_world",
            "team_count_halve",
            "team_count_two_world_syncs",
        ]
        .into_iter()
        .enumerate()
        {
            r.json_with(
                bench,
                None,
                "cumulative_mean",
                cum[kind][c] / runs,
                "ns",
                &[("teams", serde_json::json!(k))],
            );
        }
    }
}

/// Barrier latency on WORLD; returns `shmem_barrier_all`'s.
fn barriers(r: &Report, e: &Effort, world: &Team, me: usize, npes: usize, cores: usize) -> Lat {
    let mut team_sync = |k: u64| {
        for _ in 0..k {
            ok(team::sync(world));
        }
    };
    let mut sync_all = |k: u64| {
        for _ in 0..k {
            ok(sync::sync_all());
        }
    };
    let mut barrier = |k: u64| {
        for _ in 0..k {
            ok(sync::barrier_all());
        }
    };
    let mut bodies: [Body<'_>; 3] = [&mut team_sync, &mut sync_all, &mut barrier];
    let t = interleaved_fixed(&mut bodies, SYNC_BATCH, 10, e.sync_samples);
    let lats: Vec<Lat> = t.iter().map(|x| Lat::of(x)).collect();
    if me == 0 {
        r.section(&format!(
            "barrier latency, {npes} PEs on {cores} cores ({} batches of {SYNC_BATCH})",
            e.sync_samples
        ));
        for (k, (bench, desc)) in [
            ("team_sync_world", "shmem_team_sync(WORLD)"),
            ("sync_all_coll", "shmem_sync_all"),
            ("barrier_all_coll", "shmem_barrier_all"),
        ]
        .into_iter()
        .enumerate()
        {
            r.line(format!("{:<34} {:>21}", desc, med_min(lats[k])));
            r.json(bench, None, "latency_median", lats[k].median, "ns");
            r.json(bench, None, "latency_min", lats[k].min, "ns");
        }
    }
    lats[2]
}

/// The collectives of the suite, in body order after the two memcpys.
const COLLS: [(&str, &str); 6] = [
    ("broadcast", "bcast"),
    ("reduce_sum_i64", "sum i64"),
    ("reduce_sum_f64", "sum f64"),
    ("collect", "collect"),
    ("fcollect", "fcollect"),
    ("alltoall", "alltoall"),
];

/// Collective latency per size against memcpy (PE 0 alone) of the bytes one PE receives:
/// `n` for broadcast and reductions, `n * npes` for collect, fcollect and alltoall (`n`
/// = bytes per PE contribution or per block).
#[allow(clippy::too_many_arguments)]
fn collectives(
    r: &Report,
    e: &Effort,
    world: &Team,
    me: usize,
    npes: usize,
    src: *mut u8,
    dst: *mut u8,
    max_size: usize,
) {
    let span = max_size * npes;
    let psrc = pages(span, 0xa5);
    let mut pdst = pages(span, 0x3c);
    let (ps, pd) = (psrc.as_ptr().cast::<u8>(), pdst.as_mut_ptr().cast::<u8>());
    let sizes = sizes(8, max_size);
    // Per size: [memcpy n, memcpy n * npes, COLLS...].
    let mut lat: Vec<Vec<Lat>> = Vec::new();
    for &n in &sizes {
        let all = n * npes;
        let memcpy = |bytes: usize| {
            move |k: u64| {
                if me == 0 {
                    for _ in 0..k {
                        // SAFETY: both private buffers hold `span >= bytes` bytes and do
                        // not overlap.
                        unsafe {
                            std::ptr::copy_nonoverlapping(black_box(ps), black_box(pd), bytes)
                        }
                    }
                }
            }
        };
        let mut mc1 = memcpy(n);
        let mut mcn = memcpy(all);
        // SAFETY (every body below): `src` and `dst` are distinct symmetric blocks of
        // `span >= n * npes` bytes, 4096-aligned, that nothing else touches during the
        // collectives; every PE runs the same calls in the same order.
        let mut bcast = |k: u64| {
            for _ in 0..k {
                // SAFETY: see above.
                ok(unsafe { core_coll::broadcast("shmem_broadcastmem", world, dst, src, n, 0) });
            }
        };
        let mut sum_i64 = |k: u64| {
            for _ in 0..k {
                // SAFETY: see above; `n / 8` i64 fit in `n` bytes.
                ok(unsafe {
                    core_coll::reduce::<i64>(
                        "shmem_int64_sum_reduce",
                        world,
                        dst.cast(),
                        src.cast(),
                        n / 8,
                        ReduceOp::Sum,
                    )
                });
            }
        };
        let mut sum_f64 = |k: u64| {
            for _ in 0..k {
                // SAFETY: see above; `n / 8` f64 fit in `n` bytes.
                ok(unsafe {
                    core_coll::reduce::<f64>(
                        "shmem_double_sum_reduce",
                        world,
                        dst.cast(),
                        src.cast(),
                        n / 8,
                        ReduceOp::Sum,
                    )
                });
            }
        };
        let mut collect = |k: u64| {
            for _ in 0..k {
                // SAFETY: see above; dest receives `n * npes` bytes.
                ok(unsafe {
                    core_coll::collect("shmem_collectmem", world, dst, src, n, usize::MAX)
                });
            }
        };
        let mut fcollect = |k: u64| {
            for _ in 0..k {
                // SAFETY: see above; dest receives `n * npes` bytes.
                ok(unsafe { core_coll::fcollect("shmem_fcollectmem", world, dst, src, n) });
            }
        };
        let mut alltoall = |k: u64| {
            for _ in 0..k {
                // SAFETY: see above; both buffers hold `n * npes` bytes.
                ok(unsafe { core_coll::alltoall("shmem_alltoallmem", world, dst, src, n) });
            }
        };
        let mut bodies: [Body<'_>; 8] = [
            &mut mc1,
            &mut mcn,
            &mut bcast,
            &mut sum_i64,
            &mut sum_f64,
            &mut collect,
            &mut fcollect,
            &mut alltoall,
        ];
        let t = interleaved_fixed(&mut bodies, batch(n), e.warmup, e.samples);
        lat.push(t.iter().map(|x| Lat::of(x)).collect());
    }
    drop(pdst);
    drop(psrc);
    // Per collective, the memcpy it is compared with.
    let base = |k: usize| if k < 3 { 0 } else { 1 };
    if me != 0 {
        return;
    }
    r.section(&format!(
        "collectives on WORLD, latency median ({} batches per size; size = bytes per PE contribution or block)",
        e.samples
    ));
    let mut head = format!("{:>8}  {:>10}  {:>10}", "size", "memcpy n", "memcpy nP");
    for (_, short) in COLLS {
        head.push_str(&format!("  {short:>10}"));
    }
    r.line(head);
    for (i, &n) in sizes.iter().enumerate() {
        let mut row = format!(
            "{:>8}  {:>10}  {:>10}",
            report::size(n),
            report::ns(lat[i][0].median),
            report::ns(lat[i][1].median)
        );
        for k in 0..COLLS.len() {
            row.push_str(&format!("  {:>10}", report::ns(lat[i][2 + k].median)));
        }
        r.line(row);
    }
    r.section(&format!(
        "collectives on WORLD, ratio to memcpy (bcast, sums: memcpy n; collect, fcollect, alltoall: memcpy n x {npes})"
    ));
    let mut head = format!("{:>8}", "size");
    for (_, short) in COLLS {
        head.push_str(&format!("  {short:>8}"));
    }
    r.line(head);
    for (i, &n) in sizes.iter().enumerate() {
        let mut row = format!("{:>8}", report::size(n));
        for k in 0..COLLS.len() {
            row.push_str(&format!(
                "  {:>8.2}",
                lat[i][2 + k].median / lat[i][base(k)].median
            ));
        }
        r.line(row);
    }
    for (i, &n) in sizes.iter().enumerate() {
        r.json(
            "memcpy_coll",
            Some(n),
            "latency_median",
            lat[i][0].median,
            "ns",
        );
        r.json(
            "memcpy_coll_npes",
            Some(n),
            "latency_median",
            lat[i][1].median,
            "ns",
        );
        for (k, (bench, _)) in COLLS.into_iter().enumerate() {
            let l = lat[i][2 + k];
            r.json(bench, Some(n), "latency_median", l.median, "ns");
            r.json(bench, Some(n), "latency_min", l.min, "ns");
            r.json(
                bench,
                Some(n),
                "ratio_to_memcpy",
                l.median / lat[i][base(k)].median,
                "x",
            );
        }
    }
    if npes == 2 {
        if let Some(i) = sizes.iter().position(|&n| n == 1 << 20) {
            let target = |name: &str, k: usize, goal: f64| {
                let (l, m) = (lat[i][2 + k], lat[i][base(k)]);
                r.target(
                    name,
                    &format!(
                        "{} {} / memcpy {}",
                        COLLS[k].0,
                        report::ns(l.median),
                        report::ns(m.median)
                    ),
                    l.median / m.median,
                    "x",
                    Goal::AtMost(goal),
                );
            };
            target("reduce_sum_i64_1MiB_vs_memcpy", 1, 3.0);
            target("reduce_sum_f64_1MiB_vs_memcpy", 2, 3.0);
            target("broadcast_1MiB_vs_memcpy", 0, 1.5);
        }
    }
}

/// An element type of the algorithm comparisons.
trait Num: Elem + From<i32> + PartialEq + std::fmt::Debug {
    /// Type name in tables and bench names.
    const NAME: &'static str;
    /// The OpenSHMEM routine it stands for (in error messages).
    const ROUTINE: &'static str;
}

impl Num for i32 {
    const NAME: &'static str = "i32";
    const ROUTINE: &'static str = "shmem_int32_sum_reduce";
}

impl Num for f64 {
    const NAME: &'static str = "f64";
    const ROUTINE: &'static str = "shmem_double_sum_reduce";
}

/// Reduction algorithms compared on flat WORLD; Shm first, the reference of the ratios.
const ALGS: [(DataAlg, &str); 4] = [
    (DataAlg::Shm, "shm"),
    (DataAlg::RecursiveDoubling, "rd"),
    (DataAlg::Ring, "ring"),
    (DataAlg::Linear, "linear"),
];

/// Sum reduction of `n` elements of `T` over `team` with `alg`, `src` into `dst`.
///
/// # Safety
/// `dst` and `src` are symmetric blocks of at least `n` elements of `T`, aligned for `T`,
/// identical or disjoint, that nothing else touches during the call; every member of
/// `team` calls this in step.
unsafe fn sum<T: Num>(team: &Team, dst: *mut u8, src: *const u8, n: usize, alg: DataAlg) {
    // SAFETY: forwarded contract.
    ok(unsafe {
        core_coll::reduce_with::<T>(
            T::ROUTINE,
            team,
            dst.cast(),
            src.cast(),
            n,
            ReduceOp::Sum,
            alg,
        )
    });
}

/// The hierarchical composition (seed 000, Algorithm 2) with `inner` across LEADERS: HOST
/// reduce (single-copy) into `dst`, LEADERS reduce in place on `dst`, HOST broadcast
/// (single-copy) from host rank 0, the leader.
///
/// # Safety
/// As [`sum`] with `dst` and `src` disjoint, called in step by every PE of WORLD. The
/// broadcast's opening sync orders it after the leader's in-place reduction, which writes
/// only the leader's own `dst`.
unsafe fn hier_sum<T: Num>(
    host: &Team,
    leaders: Option<&Team>,
    dst: *mut u8,
    src: *const u8,
    n: usize,
    inner: DataAlg,
) {
    // SAFETY: forwarded contract, see above.
    unsafe {
        sum::<T>(host, dst, src, n, DataAlg::Shm);
        if let Some(l) = leaders {
            sum::<T>(l, dst, dst, n, inner);
        }
        ok(core_coll::broadcast_with(
            "shmem_broadcastmem",
            host,
            dst,
            dst,
            n * std::mem::size_of::<T>(),
            0,
            DataAlg::Shm,
        ));
    }
}

/// Before any timing, stops the job unless every variant gives the exact sums: PE p
/// contributes `p + 1 + i` in element i (exact in `f64` too, so every algorithm must give
/// the same bits), checked at 1, 3, 1031 and `max` elements, and nothing is written past
/// the count. Leaves the pattern in `src`.
fn verify<T: Num>(
    me: usize,
    npes: usize,
    src: *mut u8,
    dst: *mut u8,
    max: usize,
    variants: &[(&str, &dyn Fn(usize))],
) {
    {
        // SAFETY: `src` holds `max` elements of `T`, 4096-aligned, and no collective reads
        // it until the barrier below; the slice dies before it.
        let s = unsafe { std::slice::from_raw_parts_mut(src.cast::<T>(), max) };
        for (i, v) in s.iter_mut().enumerate() {
            *v = T::from((me + 1 + i) as i32);
        }
    }
    let want = |i: usize| T::from((npes * (npes + 1) / 2 + npes * i) as i32);
    let mut counts = vec![1, 3, 1031, max];
    counts.retain(|&c| c <= max);
    counts.dedup();
    for &count in &counts {
        for (name, f) in variants {
            // SAFETY: `dst` holds `max` elements of `T`; no collective touches it until the
            // barrier below.
            unsafe { std::ptr::write_bytes(dst.cast::<T>(), 0, max) };
            ok(sync::barrier_all());
            f(count);
            // SAFETY: the variant ended with a sync of every team whose members write our
            // `dst` (message-passing algorithms write only their own), and nothing writes
            // it until the next barrier; the slice dies before that.
            let d = unsafe { std::slice::from_raw_parts(dst.cast::<T>(), max) };
            let bad = (0..count)
                .find(|&i| d[i] != want(i))
                .map(|i| (i, want(i)))
                .or_else(|| (count < max && d[count] != T::from(0)).then(|| (count, T::from(0))));
            if let Some((i, w)) = bad {
                eprintln!(
                    "rshmem-bench coll: PE {me}: {name} sum reduction of {count} {} gives {:?} at element {i}, not {w:?}",
                    T::NAME,
                    d[i]
                );
                setup::global_exit(1);
            }
            ok(sync::barrier_all());
        }
    }
}

/// Per-iteration bodies of `fs`, each running `f(n)` `k` times.
fn bodies_of<'a>(fs: &'a [&'a dyn Fn(usize)], n: usize) -> Vec<Box<dyn FnMut(u64) + 'a>> {
    fs.iter()
        .map(|&f| Box::new(move |k: u64| (0..k).for_each(|_| f(n))) as Box<dyn FnMut(u64) + 'a>)
        .collect()
}

/// Flat WORLD sum reduction of `T` by every algorithm of [`ALGS`], one element to
/// `max_size`, interleaved batch by batch; ratios to Shm and the size from which ring
/// beats recursive doubling (seed 000, Fig. 4).
#[allow(clippy::too_many_arguments)]
fn by_algorithm<T: Num>(
    r: &Report,
    e: &Effort,
    world: &Team,
    me: usize,
    npes: usize,
    src: *mut u8,
    dst: *mut u8,
    max_size: usize,
) {
    let sz = std::mem::size_of::<T>();
    // SAFETY (every closure): `src` and `dst` are distinct symmetric blocks of at least
    // `max_size` bytes, 4096-aligned, that nothing else touches during the collectives;
    // every PE of WORLD runs the same calls in the same order.
    let run = |alg: DataAlg| {
        move |n: usize| {
            // SAFETY: see above; `n <= max_size / size_of::<T>()`.
            unsafe { sum::<T>(world, dst, src, n, alg) }
        }
    };
    let fs = ALGS.map(|(alg, _)| run(alg));
    let dyns: Vec<&dyn Fn(usize)> = fs.iter().map(|f| f as &dyn Fn(usize)).collect();
    let variants: Vec<(&str, &dyn Fn(usize))> = ALGS
        .iter()
        .zip(&dyns)
        .map(|(&(_, name), &f)| (name, f))
        .collect();
    verify::<T>(me, npes, src, dst, max_size / sz, &variants);

    let sizes = sizes(sz, max_size);
    let mut lat: Vec<Vec<Lat>> = Vec::new();
    for &n in &sizes {
        let mut boxed = bodies_of(&dyns, n / sz);
        let mut bodies: Vec<Body<'_>> = boxed.iter_mut().map(|b| &mut **b as Body<'_>).collect();
        let t = interleaved_fixed(&mut bodies, batch(n), e.warmup, e.samples);
        lat.push(t.iter().map(|x| Lat::of(x)).collect());
    }
    ok(sync::barrier_all());
    if me != 0 {
        return;
    }
    let ty = T::NAME;
    r.section(&format!(
        "sum reduction {ty} on flat WORLD by algorithm, {npes} PEs, latency median and ratio to shm \
         ({} batches per size, the four interleaved)",
        e.samples
    ));
    r.line(format!(
        "{:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>7}  {:>8}  {:>7}  {:>7}",
        "size", "shm", "rd", "ring", "linear", "rd/shm", "ring/shm", "lin/shm", "ring/rd"
    ));
    // Sizes at which ring beats recursive doubling (median).
    let ring_wins: Vec<bool> = lat.iter().map(|l| l[2].median < l[1].median).collect();
    for (i, &n) in sizes.iter().enumerate() {
        let l = &lat[i];
        r.line(format!(
            "{:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>7.2}  {:>8.2}  {:>7.2}  {:>7.2}{}",
            report::size(n),
            report::ns(l[0].median),
            report::ns(l[1].median),
            report::ns(l[2].median),
            report::ns(l[3].median),
            l[1].median / l[0].median,
            l[2].median / l[0].median,
            l[3].median / l[0].median,
            l[2].median / l[1].median,
            if ring_wins[i] { "  ring < rd" } else { "" }
        ));
        for (k, (_, name)) in ALGS.iter().enumerate() {
            let bench = format!("reduce_sum_{ty}_{name}");
            r.json(&bench, Some(n), "latency_median", l[k].median, "ns");
            r.json(&bench, Some(n), "latency_min", l[k].min, "ns");
            r.json(
                &bench,
                Some(n),
                "ratio_to_shm",
                l[k].median / l[0].median,
                "x",
            );
        }
        r.json(
            &format!("reduce_sum_{ty}_rd_vs_ring"),
            Some(n),
            "ratio_ring_to_rd",
            l[2].median / l[1].median,
            "x",
        );
    }
    // First size where ring beats RD, and the size from which it beats it at every size.
    let first = ring_wins.iter().position(|&w| w).map(|i| sizes[i]);
    let from = (0..sizes.len())
        .rev()
        .take_while(|&i| ring_wins[i])
        .last()
        .map(|i| sizes[i]);
    // Medians within a few percent are a coin toss (at 2 PEs both move n bytes per PE):
    // also the first size where ring wins by at least 5%.
    let clear = lat
        .iter()
        .position(|l| l[2].median <= 0.95 * l[1].median)
        .map(|i| sizes[i]);
    let show = |s: Option<usize>| s.map_or("never (up to the largest size)".into(), report::size);
    r.line(format!(
        "rd vs ring crossover ({ty}, {npes} PEs): ring first beats rd at {}; ring ahead at every size from {}; \
         ring first ahead by 5% at {}",
        show(first),
        show(from),
        show(clear)
    ));
    let bytes = |s: Option<usize>| s.map_or(f64::NAN, |s| s as f64);
    let bench = format!("reduce_sum_{ty}_rd_vs_ring");
    r.json(
        &bench,
        None,
        "crossover_first_ring_faster",
        bytes(first),
        "B",
    );
    r.json(&bench, None, "crossover_ring_faster_from", bytes(from), "B");
    r.json(
        &bench,
        None,
        "crossover_ring_faster_by_5pct",
        bytes(clear),
        "B",
    );
}

/// Inner (LEADERS) algorithms of the hierarchical comparison, with their bench suffixes
/// (Shm keeps the historical unsuffixed names).
const INNER: [(DataAlg, &str, &str); 3] = [
    (DataAlg::Shm, "shm", ""),
    (DataAlg::RecursiveDoubling, "rd", "_rd"),
    (DataAlg::Ring, "ring", "_ring"),
];

/// Flat WORLD sum reduction against the hierarchical composition (HOST reduce, LEADERS
/// in-place reduce, HOST broadcast), each with Shm, recursive doubling and ring (flat:
/// over WORLD; hierarchical: across LEADERS), i32 elements, 4 B..`max_size`, with a memcpy
/// of the bytes for scale (seed 000, Fig. 5).
#[allow(clippy::too_many_arguments)]
fn hierarchical(
    r: &Report,
    e: &Effort,
    world: &Team,
    host: &Team,
    leaders: Option<&Team>,
    me: usize,
    src: *mut u8,
    dst: *mut u8,
    max_size: usize,
) {
    // SAFETY (every closure): `src` and `dst` are distinct symmetric blocks of at least
    // `max_size` bytes, 4096-aligned, that nothing else touches during the collectives;
    // every PE of WORLD runs the same calls in the same order.
    let flat = |alg: DataAlg| {
        move |n: usize| {
            // SAFETY: see above; `n <= max_size / 4`.
            unsafe { sum::<i32>(world, dst, src, n, alg) }
        }
    };
    let hier = |alg: DataAlg| {
        move |n: usize| {
            // SAFETY: see above; `n <= max_size / 4`.
            unsafe { hier_sum::<i32>(host, leaders, dst, src, n, alg) }
        }
    };
    let flats = INNER.map(|(alg, _, _)| flat(alg));
    let hiers = INNER.map(|(alg, _, _)| hier(alg));
    let core_hier = flat(DataAlg::Hierarchical);
    let mut dyns: Vec<&dyn Fn(usize)> = flats.iter().map(|f| f as &dyn Fn(usize)).collect();
    dyns.extend(hiers.iter().map(|f| f as &dyn Fn(usize)));
    let names = [
        "flat shm",
        "flat rd",
        "flat ring",
        "hier shm",
        "hier rd",
        "hier ring",
    ];
    let mut variants: Vec<(&str, &dyn Fn(usize))> = names.into_iter().zip(dyns.clone()).collect();
    variants.push(("core hierarchical", &core_hier));
    let npes = world.n_pes();
    verify::<i32>(me, npes, src, dst, max_size / 4, &variants);

    let psrc = pages(max_size, 0xa5);
    let mut pdst = pages(max_size, 0x3c);
    let (ps, pd) = (psrc.as_ptr().cast::<u8>(), pdst.as_mut_ptr().cast::<u8>());
    let sizes = sizes(4, max_size);
    // Per size: [memcpy, flat shm, rd, ring, hier shm, rd, ring].
    let mut lat: Vec<Vec<Lat>> = Vec::new();
    for &n in &sizes {
        let mut memcpy = |k: u64| {
            if me == 0 {
                for _ in 0..k {
                    // SAFETY: both private buffers hold `max_size >= n` bytes and do not
                    // overlap.
                    unsafe { std::ptr::copy_nonoverlapping(black_box(ps), black_box(pd), n) }
                }
            }
        };
        let mut boxed = bodies_of(&dyns, n / 4);
        let mut bodies: Vec<Body<'_>> = vec![&mut memcpy];
        bodies.extend(boxed.iter_mut().map(|b| &mut **b as Body<'_>));
        let t = interleaved_fixed(&mut bodies, batch(n), e.warmup, e.samples);
        lat.push(t.iter().map(|x| Lat::of(x)).collect());
    }
    drop(pdst);
    drop(psrc);
    ok(sync::barrier_all());
    if me != 0 {
        return;
    }
    let hosts = leaders.map_or(0, |l| l.n_pes());
    r.section(&format!(
        "sum reduction i32, flat WORLD vs hierarchical (HOST reduce, LEADERS reduce with shm / rd / ring, \
         HOST broadcast); {hosts} hosts of {} PEs at PE 0, latency median ({} batches per size, all interleaved)",
        host.n_pes(),
        e.samples
    ));
    let mut head = format!("{:>8}  {:>10}", "size", "memcpy");
    for name in names {
        head.push_str(&format!("  {name:>10}"));
    }
    r.line(head);
    for (i, &n) in sizes.iter().enumerate() {
        let mut row = format!(
            "{:>8}  {:>10}",
            report::size(n),
            report::ns(lat[i][0].median)
        );
        for k in 0..names.len() {
            row.push_str(&format!("  {:>10}", report::ns(lat[i][1 + k].median)));
        }
        r.line(row);
    }
    r.section(
        "hierarchical / flat with the same algorithm (below 1: hierarchy wins), and the fastest",
    );
    r.line(format!(
        "{:>8}  {:>8}  {:>8}  {:>9}  {:>8}  {:>10}",
        "size", "h/f shm", "h/f rd", "h/f ring", "flat/mc", "fastest"
    ));
    for (i, &n) in sizes.iter().enumerate() {
        let l = &lat[i];
        let m = l[0];
        let ratio = |k: usize| l[4 + k].median / l[1 + k].median;
        let fastest = (0..names.len())
            .min_by(|&a, &b| l[1 + a].median.total_cmp(&l[1 + b].median))
            .map_or("-", |k| names[k]);
        r.line(format!(
            "{:>8}  {:>8.2}  {:>8.2}  {:>9.2}  {:>8.2}  {:>10}",
            report::size(n),
            ratio(0),
            ratio(1),
            ratio(2),
            l[1].median / m.median,
            fastest
        ));
        r.json("memcpy_hier", Some(n), "latency_median", m.median, "ns");
        for (k, (_, _, suffix)) in INNER.iter().enumerate() {
            for (kind, lk) in [("flat", l[1 + k]), ("hier", l[4 + k])] {
                let bench = format!("reduce_sum_i32_{kind}{suffix}");
                r.json(&bench, Some(n), "latency_median", lk.median, "ns");
                r.json(&bench, Some(n), "latency_min", lk.min, "ns");
                r.json(
                    &bench,
                    Some(n),
                    "ratio_to_memcpy",
                    lk.median / m.median,
                    "x",
                );
            }
            r.json(
                &format!("reduce_sum_i32_hier{suffix}"),
                Some(n),
                "ratio_hier_to_flat",
                ratio(k),
                "x",
            );
        }
    }
}

/// A ping-pong of `send`s between PEs 0 and 1 (`in_pair`), each raising the other's
/// symmetric `word` by one: a body for [`interleaved_fixed`].
fn pingpong<'a>(
    in_pair: bool,
    me: usize,
    word: *mut u64,
    send: &'a dyn Fn(),
) -> impl FnMut(u64) + 'a {
    let mut got = 0u64;
    move |k: u64| {
        if !in_pair {
            return;
        }
        for _ in 0..k {
            got += 1;
            if me == 0 {
                send();
            }
            // SAFETY: `word` is a symmetric word that only the peer's `send` raises.
            ok(unsafe {
                rshmem_core::p2p::wait_until("shmem_wait_until", word, rshmem_core::Cmp::Ge, got)
            });
            if me == 1 {
                send();
            }
        }
    }
}

/// `coll --net`: what the network collectives cost against the one-way latency of the
/// routes they cross (run over UCX: `SHMEM_TRANSPORT=ucx UCX_TLS=tcp`). The one-way
/// latency is half a ping-pong between PEs 0 and 1, of a put with signal and of a posted
/// atomic add; each collective is shown as a multiple of it (its ideal is its messages
/// on the critical path).
pub(crate) fn run_net(quick: bool) {
    use rshmem_core::{amo, ctx::Ctx, signal, AmoOp, SignalOp};
    crate::pe::init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    let world = ok(team::world());
    const BIG: usize = 1 << 20;
    let src = ok(memory::align("shmem_align", 4096, BIG));
    let dst = ok(memory::align("shmem_align", 4096, BIG));
    let words = ok(memory::align("shmem_align", 4096, 4096)).cast::<u64>();
    // SAFETY: all three blocks were just allocated in our heap with these sizes.
    unsafe {
        fill_f64(src, BIG, 1.0);
        std::ptr::write_bytes(dst, 0, BIG);
        std::ptr::write_bytes(words.cast::<u8>(), 0, 4096);
    }
    ok(sync::barrier_all());
    let (samples, warm) = if quick { (15, 2) } else { (61, 4) };
    let ctx = Ctx::default_ctx();
    let peer = (me ^ 1) as i64;
    let in_pair = me < 2 && npes >= 2;
    // Word 0: put-with-signal count; word 8: posted-add count; 64..: put payload.
    let (sig, cnt) = (words, words.wrapping_add(8));
    let payload = words.wrapping_add(64).cast::<u8>();
    let put_signal = || {
        // SAFETY: `payload` and `sig` are symmetric words of our block.
        ok(unsafe {
            signal::ctx_put_signal(
                ctx,
                "shmem_putmem_signal",
                false,
                payload,
                payload,
                8,
                sig,
                1,
                SignalOp::Add,
                peer,
            )
        })
    };
    let posted_add = || {
        // SAFETY: `cnt` is a symmetric word of our block.
        ok(unsafe { amo::ctx_atomic_post(ctx, "shmem_atomic_add", cnt, AmoOp::Add(1u64), peer) })
    };
    let mut ping = pingpong(in_pair, me, sig, &put_signal);
    let mut post = pingpong(in_pair, me, cnt, &posted_add);
    // The bandwidth the large collectives meet: 1 MiB put then quiet, PE 0 to PE 1.
    let mut bulk = |k: u64| {
        for _ in 0..k {
            if me == 0 && npes >= 2 {
                // SAFETY: `dst` is a symmetric block of `BIG` bytes that only this test
                // writes, `src` ours.
                ok(unsafe { rshmem_core::rma::ctx_put(ctx, "shmem_putmem", dst, src, BIG, 1) });
                ok(rshmem_core::order::quiet());
            }
            ok(sync::barrier_all());
        }
    };
    let mut pp: [Body<'_>; 3] = [&mut ping, &mut post, &mut bulk];
    let t = interleaved_fixed(&mut pp, 32, warm, samples);
    let bulk = Lat::of(&t[2]);
    let one_way: Vec<Lat> = t[..2]
        .iter()
        .map(|x| Lat::of(&x.iter().map(|v| v / 2.0).collect::<Vec<_>>()))
        .collect();
    ok(sync::barrier_all());
    let mut barrier = |k: u64| {
        for _ in 0..k {
            ok(sync::barrier_all());
        }
    };
    let mut tsync = |k: u64| {
        for _ in 0..k {
            ok(team::sync(&world));
        }
    };
    let bcast = |n: usize| {
        let world = &world;
        move |k: u64| {
            for _ in 0..k {
                // SAFETY: `src` and `dst` are distinct symmetric blocks of `BIG >= n` bytes
                // that only these collectives touch; every PE runs the same calls.
                ok(unsafe { core_coll::broadcast("shmem_broadcastmem", world, dst, src, n, 0) });
            }
        }
    };
    let reduce = |n: usize| {
        let world = &world;
        move |k: u64| {
            for _ in 0..k {
                // SAFETY: as for `bcast`; `n / 8` f64 fit in `n` bytes.
                ok(unsafe {
                    core_coll::reduce::<f64>(
                        "shmem_double_sum_reduce",
                        world,
                        dst.cast(),
                        src.cast(),
                        n / 8,
                        ReduceOp::Sum,
                    )
                });
            }
        }
    };
    let (mut b8, mut b64k, mut b1m) = (bcast(8), bcast(64 << 10), bcast(BIG));
    let (mut r8, mut r64k, mut r1m) = (reduce(8), reduce(64 << 10), reduce(BIG));
    let small: Vec<Vec<f64>> = {
        let mut bodies: [Body<'_>; 4] = [&mut barrier, &mut tsync, &mut b8, &mut r8];
        interleaved_fixed(&mut bodies, 16, warm, samples)
    };
    let large: Vec<Vec<f64>> = {
        let mut bodies: [Body<'_>; 4] = [&mut b64k, &mut r64k, &mut b1m, &mut r1m];
        interleaved_fixed(&mut bodies, 2, warm.min(2), samples)
    };
    // The reductions above must have summed exactly: every source element is 1.0.
    // SAFETY: `dst` holds the last reduction's `BIG` bytes of f64.
    let sums = unsafe { std::slice::from_raw_parts(dst.cast::<f64>(), BIG / 8) };
    assert!(
        sums.iter().all(|&v| v == npes as f64),
        "reduction result is wrong"
    );
    if me == 0 {
        let r = Report::new(npes);
        r.section(&format!(
            "network collectives, {npes} PEs: latency median / min; x1w = median / one-way latency (put+signal)"
        ));
        let w = one_way[0].median;
        for (name, lat) in [
            ("one-way put+signal", one_way[0]),
            ("one-way posted add", one_way[1]),
        ] {
            r.line(format!("{name:<24} {:>21}", med_min(lat)));
            r.json("net_one_way", None, name, lat.median, "ns");
        }
        r.line(format!(
            "{:<24} {:>21}   ({:.2} GB/s at the minimum)",
            "put 1 MiB + quiet + barrier",
            med_min(bulk),
            BIG as f64 / bulk.min
        ));
        r.json(
            "net_bulk",
            None,
            "put_1MiB_quiet_barrier",
            bulk.median,
            "ns",
        );
        let names = [
            "barrier_all",
            "team_sync",
            "bcast 8 B",
            "reduce f64 8 B",
            "bcast 64 KiB",
            "reduce f64 64 KiB",
            "bcast 1 MiB",
            "reduce f64 1 MiB",
        ];
        for (name, x) in names.iter().zip(small.iter().chain(large.iter())) {
            let lat = Lat::of(x);
            r.line(format!(
                "{name:<24} {:>21}   x1w {:>6.1}",
                med_min(lat),
                lat.median / w
            ));
            r.json("net_coll", None, name, lat.median, "ns");
        }
    }
    ok(sync::barrier_all());
    ok(memory::free("shmem_free", words.cast()));
    ok(memory::free("shmem_free", dst));
    ok(memory::free("shmem_free", src));
    rshmem_core::finalize();
}
