//! Seed 002 (explicit non-blocking operations): `_nbe` message rate with and without
//! merged requests, overlap against message size, multithreaded broadcast
//! (`rshmem-bench nbe`).

use super::{by_size, hline, Axis, Figure, Kind, Records, Scale};

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    let mut f = Figure::new(
        "seed002_nbe_rate",
        "seed002",
        "put_nbe message rate, with and without merged requests, 2 PEs",
        Axis::new("message size", Scale::Bytes),
        Axis::new("message rate (Mmsg/s)", Scale::Log),
    )
    .caption(
        "rshmem-bench nbe: one thread of PE 0 puts into PE 1; put_nbe waits each request, \
         merged folds a batch of requests into one before waiting; put_nbi completes the batch \
         with one quiet (the implicit form the seed compares with). Open MPI 4.1's OSHMEM has \
         no put_nbe (explicit requests are the seed's proposal): its series is put_nbi + quiet \
         from bench/c/shmem_bench.c (windows of up to 64, heap to heap), drawn beside rshmem \
         running the same C program.",
    );
    f.wants_peer = true;
    for (bench, name, kind) in [
        (
            "put_nbe_msgrate",
            "put_nbe (one request each)",
            Kind::Rshmem,
        ),
        (
            "put_nbe_merged_msgrate",
            "put_nbe, merged requests",
            Kind::Rshmem,
        ),
        ("put_nbi_msgrate", "put_nbi + quiet", Kind::Peer),
    ] {
        let pts = r.points("nbe", |x| x.bench == bench && x.metric == "rate", by_size);
        f.add(name, kind, pts);
    }
    for (imp, name, kind) in [
        ("rshmem", "rshmem (C): put_nbi + quiet", Kind::Rshmem),
        ("oshmem", "OSHMEM (C): put_nbi + quiet", Kind::Peer),
    ] {
        let pts = r.points(
            "cbench",
            |x| x.bench == "put_nbi_sized" && x.metric == "rate" && x.tag("impl") == imp,
            by_size,
        );
        f.add(name, kind, pts);
    }
    let raw = r.value("pe", "raw_memmove_msgrate", "rate", |_| true);
    let line = hline(&f, raw);
    f.add(
        "raw 8-byte stores into the mapped peer (limit)",
        Kind::Reference,
        line,
    );
    v.push(f);

    let mut f = Figure::new(
        "seed002_overlap",
        "seed002",
        "Overlap of put_nbe with computation by message size (COMB), 2 PEs",
        Axis::new("message size", Scale::Bytes),
        Axis::new("communication hidden (%)", Scale::Linear),
    )
    .caption(
        "rshmem-bench nbe (overlap): a put_nbe, computation as long as the transfer alone \
         takes inline, then the wait; overlap = share of the transfer hidden behind the \
         computation (large transfers go to the copy engine, SHMEM_COPY_ENGINE_THRESHOLD). \
         Open MPI 4.1's OSHMEM has no put_nbe (no request to wait on alone): no OSHMEM \
         series.",
    );
    for (placement, name) in [
        ("default", "put_nbe, default placement"),
        ("pinned", "put_nbe, pinned"),
    ] {
        let pts = r.points(
            "nbe",
            |x| {
                x.bench == "overlap_put_nbe"
                    && x.metric == "overlap"
                    && x.tag("placement") == placement
                    && x.extra.get("work_equals_inline") == Some(&serde_json::Value::Bool(true))
            },
            by_size,
        );
        f.add(name, Kind::Rshmem, pts);
    }
    let full = hline(&f, Some(100.0));
    f.add("100 % (all hidden)", Kind::Reference, full);
    v.push(f);

    let mut f = Figure::new(
        "seed002_bcast",
        "seed002",
        "Broadcast by threads with put_nbe against the library's, 2 PEs",
        Axis::new("message size", Scale::Bytes),
        Axis::new("latency (ns)", Scale::Log),
    )
    .caption(
        "rshmem-bench nbe (bcast): T threads of the root each put_nbe a slice to every PE, \
         against shmem_broadcastmem on WORLD. Open MPI 4.1's OSHMEM has neither put_nbe nor \
         teams (shmem_broadcastmem): no OSHMEM series.",
    );
    f.add(
        "library broadcast",
        Kind::Peer,
        r.points(
            "nbe",
            |x| x.bench == "bcast_library" && x.metric == "latency",
            by_size,
        ),
    );
    let mut ts: Vec<u64> = r
        .of("nbe")
        .filter(|x| x.bench == "bcast_threads_put_nbe")
        .filter_map(|x| x.num("threads").map(|t| t as u64))
        .collect();
    ts.sort_unstable();
    ts.dedup();
    for t in ts {
        let pts = r.points(
            "nbe",
            |x| {
                x.bench == "bcast_threads_put_nbe"
                    && x.metric == "latency"
                    && x.num("threads") == Some(t as f64)
            },
            by_size,
        );
        f.add(&format!("{t} thread(s), put_nbe"), Kind::Rshmem, pts);
    }
    let (lo, hi) = f.x_range();
    let mc = r.memcpy("latency_median", lo, hi);
    f.add("memcpy of the message (limit)", Kind::Reference, mc);
    v.push(f);
    v
}
