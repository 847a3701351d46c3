//! Collective latency by size against a memcpy of the bytes one PE receives.

use std::hint::black_box;

use rshmem_core::coll::{self as core_coll, ReduceOp};
use rshmem_core::team::Team;

use crate::report::{self, Goal, Report};
use crate::spmd::pages;
use crate::stats::{interleaved_fixed, Body, Lat};

use super::{batch, ok, sizes, Effort};

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
pub(super) fn collectives(
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
