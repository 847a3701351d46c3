//! OSU-style curves: put/get latency and bandwidth 8 B..4 MiB, AMOs and small operations
//! on heap and static memory, barrier, broadcast and reduce, from the C programs of
//! `bench/c` on rshmem and on OSHMEM, with the machine's limits from `rshmem-bench pe`.

use super::{by_pes, by_size, hline, Axis, Figure, Kind, Records, Scale};

/// The small operations of `bench/c/shmem_bench.c`, in the order drawn.
const OPS: &[&str] = &[
    "put",
    "put_quiet",
    "get",
    "long_p",
    "long_g",
    "amo_fetch",
    "amo_set",
    "amo_swap",
    "amo_compare_swap",
    "amo_fetch_inc",
    "amo_inc",
    "amo_fetch_add",
    "amo_add",
    "amo_fetch_and",
    "amo_and",
    "amo_fetch_or",
    "amo_or",
    "amo_fetch_xor",
    "amo_xor",
];

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    for (op, what, dir) in [
        ("put", "shmem_putmem", "into"),
        ("get", "shmem_getmem", "from"),
    ] {
        let bw = format!("{op}_bw");
        let c = |imp: &'static str, metric: &'static str| {
            let bw = bw.clone();
            r.points(
                "cbench",
                move |x| x.bench == bw && x.metric == metric && x.tag("impl") == imp,
                by_size,
            )
        };
        let rust = |metric: &'static str| {
            r.points("pe", move |x| x.bench == op && x.metric == metric, by_size)
        };
        let memcpy = |metric: &str| r.memcpy(metric, 8.0, f64::INFINITY);
        let mut f = Figure::new(
            &format!("osu_{op}_latency"),
            "osu",
            &format!("{what} latency, 2 PEs"),
            Axis::new("message size", Scale::Bytes),
            Axis::new("time per transfer (ns, median)", Scale::Log),
        )
        .caption(&format!(
            "PE 0 {op}s {dir} PE 1's symmetric heap; median over batches of the time per \
             transfer (a batch ends with shmem_quiet). C: bench/c/shmem_bench.c on each \
             library; Rust: rshmem-bench pe."
        ));
        f.wants_peer = true;
        f.add("rshmem (C)", Kind::Rshmem, c("rshmem", "latency_median"));
        f.add("rshmem (Rust API)", Kind::Rshmem, rust("latency_median"));
        f.add("OSHMEM (C)", Kind::Peer, c("oshmem", "latency_median"));
        f.add("memcpy (limit)", Kind::Reference, memcpy("latency_median"));
        v.push(f);
        let mut f = Figure::new(
            &format!("osu_{op}_bandwidth"),
            "osu",
            &format!("{what} bandwidth, 2 PEs"),
            Axis::new("message size", Scale::Bytes),
            Axis::new("bandwidth (GB/s)", Scale::Log),
        )
        .caption(&format!(
            "Bytes over the median time per {op} (batches end with shmem_quiet), heap to heap."
        ));
        f.wants_peer = true;
        f.add("rshmem (C)", Kind::Rshmem, c("rshmem", "bandwidth"));
        f.add("rshmem (Rust API)", Kind::Rshmem, rust("bandwidth"));
        f.add("OSHMEM (C)", Kind::Peer, c("oshmem", "bandwidth"));
        f.add("memcpy (limit)", Kind::Reference, memcpy("bandwidth"));
        v.push(f);
    }

    // Small operations by name, heap and static.
    let (mut f, ops) = small_ops(
        r,
        "cbench",
        "osu_small_ops",
        "osu",
        "8-byte RMA and AMOs, heap and static, 2 PEs",
        "Heap: shmem_align; static: a global symmetric variable. AMOs on long (bitwise: uint64_t).",
        &[
            ("rshmem", "heap", "rshmem heap", Kind::Rshmem),
            ("rshmem", "static", "rshmem static", Kind::Rshmem),
            ("oshmem", "heap", "OSHMEM heap", Kind::Peer),
            ("oshmem", "static", "OSHMEM static", Kind::Peer),
        ],
    );
    f.wants_peer = true;
    let raw: Vec<(f64, f64)> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, o)| {
            let raw = format!("raw_atomic_{}", o.trim_start_matches("amo_"));
            r.value("pe", &raw, "latency_median", |_| true)
                .map(|y| (i as f64, y))
        })
        .collect();
    f.add(
        "raw atomic on the mapped peer word (limit)",
        Kind::Reference,
        raw,
    );
    let rtt = r.value("pe", "pingpong_raw", "rtt_median", |_| true);
    let line = hline(&f, rtt);
    f.add("raw cache-line round trip (limit)", Kind::Reference, line);
    v.push(f);

    // Barrier against PE count.
    let mut f = Figure::new(
        "osu_barrier",
        "osu",
        "shmem_barrier_all",
        Axis::new("PEs", Scale::Count),
        Axis::new("latency (ns, median, slowest PE)", Scale::Log),
    )
    .caption("bench/c/shmem_coll.c (barrier_all) on each library; Rust: rshmem-bench coll (barrier_all).");
    f.wants_peer = true;
    for (imp, name, kind) in [
        ("rshmem", "rshmem (C)", Kind::Rshmem),
        ("oshmem", "OSHMEM (C)", Kind::Peer),
    ] {
        let pts = r.points(
            "cbarrier",
            |x| x.bench == "barrier_all" && x.metric == "latency_median" && x.tag("impl") == imp,
            by_pes,
        );
        f.add(name, kind, pts);
    }
    let rust = r.points(
        "coll",
        |x| x.bench == "barrier_all_coll" && x.metric == "latency_median",
        by_pes,
    );
    f.add("rshmem (Rust API)", Kind::Rshmem, rust);
    let line = hline(&f, rtt);
    f.add(
        "raw cache-line round trip, 2 PEs (limit)",
        Kind::Reference,
        line,
    );
    v.push(f);

    // Broadcast and reduce against size, per PE count.
    let impls = [
        ("rshmem", "rshmem", Kind::Rshmem),
        ("oshmem", "OSHMEM", Kind::Peer),
    ];
    for (bench, id, title, cap) in COLLECTIVES {
        let mut f = by_size_per_pes(r, "ccoll", bench, &impls, id, "osu", title, cap);
        f.wants_peer = true;
        let (lo, hi) = f.x_range();
        let mc = r.memcpy("latency_median", lo, hi);
        f.add("memcpy of the message (limit)", Kind::Reference, mc);
        v.push(f);
    }
    v
}

/// The small operations of `bench/c/shmem_bench.c` in `exp`'s records, one category each,
/// one series per (`impl`, `mem`, name, kind) of `series`; also the operations drawn.
pub(super) fn small_ops<'a>(
    r: &Records,
    exp: &str,
    id: &str,
    group: &'static str,
    title: &str,
    more: &str,
    series: &[(&str, &str, &str, Kind)],
) -> (Figure, Vec<&'a str>) {
    let ops: Vec<&str> = OPS
        .iter()
        .copied()
        .filter(|o| r.value(exp, o, "latency_median", |_| true).is_some())
        .collect();
    let mut f = Figure::new(
        id,
        group,
        title,
        Axis::new(
            "operation",
            Scale::Categories(ops.iter().map(|o| short(o)).collect()),
        ),
        Axis::new("latency (ns, median)", Scale::Log),
    )
    .caption(&format!(
        "bench/c/shmem_bench.c: put/p and non-fetching AMOs are pipelined batches ending with \
         shmem_quiet (put_quiet completes each put); get/g and fetching AMOs are round trips. \
         {more}"
    ));
    f.legend_low = true;
    for &(imp, mem, name, kind) in series {
        let pts = ops
            .iter()
            .enumerate()
            .filter_map(|(i, o)| {
                r.value(exp, o, "latency_median", |x| {
                    x.tag("impl") == imp && x.tag("mem") == mem
                })
                .map(|y| (i as f64, y))
            })
            .collect();
        f.add(name, kind, pts);
    }
    (f, ops)
}

/// The collectives drawn against size: (bench, figure id, title, caption).
pub(super) const COLLECTIVES: [(&str, &str, &str, &str); 2] = [
    (
        "broadcast64_barrier",
        "osu_broadcast",
        "shmem_broadcast64 + barrier_all",
        "Active-set broadcast from PE 0 followed by shmem_barrier_all (the root may \
         otherwise run ahead of its pSync), bench/c/shmem_coll.c --sweep.",
    ),
    (
        "reduce_sum_to_all",
        "osu_reduce",
        "shmem_long_sum_to_all",
        "Active-set sum reduction over all PEs, bench/c/shmem_coll.c --sweep.",
    ),
];

/// A figure of `bench`'s median latency against size, one series per implementation
/// (`impls`: the records' `impl`, its name, its kind) and PE count, from `exp`.
#[allow(clippy::too_many_arguments)]
pub(super) fn by_size_per_pes(
    r: &Records,
    exp: &str,
    bench: &str,
    impls: &[(&str, &str, Kind)],
    id: &str,
    group: &'static str,
    title: &str,
    caption: &str,
) -> Figure {
    let mut f = Figure::new(
        id,
        group,
        title,
        Axis::new("message size", Scale::Bytes),
        Axis::new("latency (ns, median, slowest PE)", Scale::Log),
    )
    .caption(caption);
    let mut pes: Vec<u64> = r.of(exp).map(|x| x.pes).collect();
    pes.sort_unstable();
    pes.dedup();
    for &n in &pes {
        for &(imp, name, kind) in impls {
            let pts = r.points(
                exp,
                |x| {
                    x.bench == bench
                        && x.metric == "latency_median"
                        && x.tag("impl") == imp
                        && x.pes == n
                },
                by_size,
            );
            f.add(&format!("{name}, {n} PEs"), kind, pts);
        }
    }
    f
}

/// Category label of an operation, short enough for 19 side by side.
fn short(op: &str) -> String {
    let o = op.trim_start_matches("amo_");
    match o {
        "compare_swap" => "cswap".into(),
        "put_quiet" => "put+q".into(),
        _ => o.replace("fetch_", "f_"),
    }
}
