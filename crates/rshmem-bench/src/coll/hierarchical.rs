//! Flat WORLD sum reductions against the hierarchical composition (HOST, LEADERS, HOST).

use std::hint::black_box;

use rshmem_core::algo::DataAlg;
use rshmem_core::coll as core_coll;
use rshmem_core::sync;
use rshmem_core::team::Team;

use crate::report::{self, Report};
use crate::spmd::pages;
use crate::stats::{interleaved_fixed, Body, Lat};

use super::algorithms::{bodies_of, sum, verify, Num};
use super::{batch, ok, sizes, Effort};

/// Inner (LEADERS) algorithms of the hierarchical comparison, with their bench suffixes
/// (Shm keeps the historical unsuffixed names).
const INNER: [(DataAlg, &str, &str); 3] = [
    (DataAlg::Shm, "shm", ""),
    (DataAlg::RecursiveDoubling, "rd", "_rd"),
    (DataAlg::Ring, "ring", "_ring"),
];

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

/// Flat WORLD sum reduction against the hierarchical composition (HOST reduce, LEADERS
/// in-place reduce, HOST broadcast), each with Shm, recursive doubling and ring (flat:
/// over WORLD; hierarchical: across LEADERS), i32 elements, 4 B..`max_size`, with a memcpy
/// of the bytes for scale (seed 000, Fig. 5).
#[allow(clippy::too_many_arguments)]
pub(super) fn hierarchical(
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
