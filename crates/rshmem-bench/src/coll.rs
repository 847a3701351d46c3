//! `coll`: teams and team collectives on however many PEs run (seed 000, §V, on one node).
//!
//! * Team creation latency: duplicates of WORLD and halving splits of growing stride,
//!   each destroyed at once, against the two parent syncs of the slot agreement.
//! * Barrier latency: `shmem_team_sync(WORLD)`, `shmem_sync_all`, `shmem_barrier_all`.
//! * Collective latency 8 B..1 MiB (broadcast, sum reductions, collect, fcollect,
//!   alltoall), each against a memcpy of the bytes one PE receives, interleaved.
//! * With more than one (virtual) host: a flat WORLD sum reduction against the
//!   hierarchical one (HOST reduce, LEADERS in-place reduce, HOST broadcast).
//!
//! Every PE runs every batch (collectives must match one for one); PE 0 times and prints.
//! Memcpy batches run on PE 0 alone while the others wait in the next collective's sync.

use std::hint::black_box;
use std::time::Instant;

use rshmem_core::coll::{self as core_coll, ReduceOp};
use rshmem_core::team::{self, Team, TeamConfig};
use rshmem_core::{memory, setup, sync};

use crate::report::{self, Goal, Report};
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
                samples: 7,
                warmup: 1,
                sync_samples: 60,
            }
        } else {
            Effort {
                creations: 64,
                samples: 101,
                warmup: 3,
                sync_samples: 400,
            }
        }
    }
}

/// Barriers per timed batch.
const SYNC_BATCH: u64 = 16;

/// Operations per timed batch for `bytes` received per PE: the same on every PE (a
/// collective batch must match), about 256 KiB of traffic, 2 to 32 operations.
fn batch(bytes: usize) -> u64 {
    ((256usize << 10) / bytes.max(1)).clamp(2, 32) as u64
}

/// A page of private memory (page-aligned like the symmetric buffers).
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Page([u8; 4096]);

fn pages(bytes: usize, fill: u8) -> Vec<Page> {
    vec![Page([fill; 4096]); bytes.div_ceil(4096)]
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
    let barrier = barriers(&r, &e, &world, me, npes, cores);
    collectives(&r, &e, &world, me, npes, src, dst, max_size);
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

/// Flat WORLD sum reduction against HOST reduce + LEADERS in-place reduce + HOST
/// broadcast from rank 0 (the leader), i32 elements, 4 B..`max_size`.
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
    const R: &str = "shmem_int32_sum_reduce";
    let flat = |n: usize| {
        // SAFETY: `src` and `dst` are distinct symmetric blocks of at least `max_size`
        // bytes, `n <= max_size / 4` i32; every PE of WORLD calls this in step.
        ok(unsafe { core_coll::reduce::<i32>(R, world, dst.cast(), src.cast(), n, ReduceOp::Sum) });
    };
    let hier = |n: usize| {
        // SAFETY: as `flat`; the HOST reduce and broadcast are called by every member of
        // each host, the LEADERS reduce (in place on `dst`) by every leader, in step. The
        // broadcast's opening sync orders it after the leader's in-place reduction.
        unsafe {
            ok(core_coll::reduce::<i32>(
                R,
                host,
                dst.cast(),
                src.cast(),
                n,
                ReduceOp::Sum,
            ));
            if let Some(l) = leaders {
                ok(core_coll::reduce::<i32>(
                    R,
                    l,
                    dst.cast(),
                    dst.cast(),
                    n,
                    ReduceOp::Sum,
                ));
            }
            ok(core_coll::broadcast(
                "shmem_broadcastmem",
                host,
                dst,
                dst,
                n * 4,
                0,
            ));
        }
    };

    // Both must give the same sums: PE p contributes p + 1 + i in element i.
    let npes = world.n_pes();
    let check = (max_size / 4).min(4096);
    {
        // SAFETY: `src` holds at least `max_size` bytes, i32-aligned, and no collective
        // reads it until the barrier below; the slice dies before it.
        let s = unsafe { std::slice::from_raw_parts_mut(src.cast::<i32>(), check) };
        for (i, v) in s.iter_mut().enumerate() {
            *v = (me + 1 + i) as i32;
        }
    }
    let want = |i: usize| (npes * (npes + 1) / 2 + npes * i) as i32;
    for (name, f) in [("flat", &flat as &dyn Fn(usize)), ("hierarchical", &hier)] {
        // SAFETY: `dst` holds at least `max_size >= 4 * check` bytes; no collective
        // touches it until the barrier below.
        unsafe { std::ptr::write_bytes(dst.cast::<i32>(), 0, check) };
        ok(sync::barrier_all());
        f(check);
        // SAFETY: the reduction ended with a sync of every team it used, so every write
        // into our `dst` is complete, and nothing writes it until the next barrier; the
        // slice dies before that.
        let d = unsafe { std::slice::from_raw_parts(dst.cast::<i32>(), check) };
        if let Some(i) = (0..check).find(|&i| d[i] != want(i)) {
            eprintln!(
                "rshmem-bench coll: PE {me}: {name} sum reduction gives {} at element {i}, not {}",
                d[i],
                want(i)
            );
            setup::global_exit(1);
        }
        ok(sync::barrier_all());
    }
    ok(sync::barrier_all());

    let psrc = pages(max_size, 0xa5);
    let mut pdst = pages(max_size, 0x3c);
    let (ps, pd) = (psrc.as_ptr().cast::<u8>(), pdst.as_mut_ptr().cast::<u8>());
    let sizes = sizes(4, max_size);
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
        let mut f = |k: u64| (0..k).for_each(|_| flat(n / 4));
        let mut h = |k: u64| (0..k).for_each(|_| hier(n / 4));
        let mut bodies: [Body<'_>; 3] = [&mut memcpy, &mut f, &mut h];
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
        "sum reduction i32, flat WORLD vs hierarchical (HOST reduce, LEADERS reduce, HOST broadcast); \
         {hosts} hosts of {} PEs at PE 0 ({} batches per size)",
        host.n_pes(),
        e.samples
    ));
    r.line(format!(
        "{:>8}  {:>10}  {:>21}  {:>21}  {:>9}  {:>8}",
        "size", "memcpy", "flat med / min", "hier med / min", "hier/flat", "flat/mc"
    ));
    for (i, &n) in sizes.iter().enumerate() {
        let [m, f, h] = [lat[i][0], lat[i][1], lat[i][2]];
        r.line(format!(
            "{:>8}  {:>10}  {:>21}  {:>21}  {:>9.2}  {:>8.2}",
            report::size(n),
            report::ns(m.median),
            med_min(f),
            med_min(h),
            h.median / f.median,
            f.median / m.median
        ));
        r.json("memcpy_hier", Some(n), "latency_median", m.median, "ns");
        for (bench, l) in [("reduce_sum_i32_flat", f), ("reduce_sum_i32_hier", h)] {
            r.json(bench, Some(n), "latency_median", l.median, "ns");
            r.json(bench, Some(n), "latency_min", l.min, "ns");
            r.json(bench, Some(n), "ratio_to_memcpy", l.median / m.median, "x");
        }
        r.json(
            "reduce_sum_i32_hier",
            Some(n),
            "ratio_hier_to_flat",
            h.median / f.median,
            "x",
        );
    }
}
