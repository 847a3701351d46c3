//! rshmem over libfabric beside Sandia OpenSHMEM over the same libfabric (issue 30): the C
//! programs of `bench/c` with `FI_PROVIDER=tcp` on both, rshmem with every peer through
//! libfabric (`SHMEM_TRANSPORT=ofi`), SOS with no on-node transport (an `--with-ofi`
//! build). Point-to-point figures at 2 PEs, collectives at each PE count run.

use super::osu::{by_size_per_pes, small_ops, COLLECTIVES};
use super::{by_pes, by_size, Axis, Figure, Kind, Records, Scale};

/// The two implementations: the records' `impl`, the series' name, the kind.
const IMPLS: [(&str, &str, Kind); 2] = [
    ("rshmem", "rshmem over libfabric", Kind::Rshmem),
    ("sos", "SOS over libfabric", Kind::Peer),
];

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let sos = r.machine().sos;
    let peer = if sos.is_empty() {
        " Sandia OpenSHMEM was not given to this run (--sos DIR or SOS_DIR): no SOS series."
            .to_string()
    } else {
        format!(" SOS: {sos}.")
    };
    let mut v = Vec::new();
    for (metric, id, title, axis) in [
        (
            "latency_median",
            "ofi_latency",
            "shmem_putmem / shmem_getmem latency over libfabric tcp, 2 PEs",
            "time per transfer (ns, median)",
        ),
        (
            "bandwidth",
            "ofi_bandwidth",
            "shmem_putmem / shmem_getmem bandwidth over libfabric tcp, 2 PEs",
            "bandwidth (GB/s)",
        ),
    ] {
        let mut f = Figure::new(
            id,
            "ofi",
            title,
            Axis::new("message size", Scale::Bytes),
            Axis::new(axis, Scale::Log),
        )
        .caption(&format!(
            "PE 0 puts into / gets from PE 1's symmetric heap, batches ending with shmem_quiet \
             (bench/c/shmem_bench.c).{peer}"
        ));
        for (imp, name, kind) in IMPLS {
            for op in ["put", "get"] {
                let bench = format!("{op}_bw");
                let pts = r.points(
                    "ofi",
                    |x| x.bench == bench && x.metric == metric && x.tag("impl") == imp,
                    by_size,
                );
                f.add(&format!("{name}: {op}"), kind, pts);
            }
        }
        v.push(f);
    }

    let (f, _) = small_ops(
        r,
        "ofi",
        "ofi_small_ops",
        "ofi",
        "8-byte RMA and AMOs over libfabric tcp, heap, 2 PEs",
        &format!("AMOs on long (bitwise: uint64_t).{peer}"),
        &IMPLS.map(|(imp, name, kind)| (imp, "heap", name, kind)),
    );
    v.push(f);

    let mut f = Figure::new(
        "ofi_barrier",
        "ofi",
        "shmem_barrier_all over libfabric tcp",
        Axis::new("PEs", Scale::Count),
        Axis::new("latency (ns, median, slowest PE)", Scale::Log),
    )
    .caption(&format!(
        "bench/c/shmem_coll.c (barrier_all); above 2 PEs the PEs share the machine's cores.{peer}"
    ));
    for (imp, name, kind) in IMPLS {
        let pts = r.points(
            "ofi_barrier",
            |x| x.bench == "barrier_all" && x.metric == "latency_median" && x.tag("impl") == imp,
            by_pes,
        );
        f.add(name, kind, pts);
    }
    v.push(f);

    for (bench, id, title, cap) in COLLECTIVES {
        let id = id.replace("osu_", "ofi_");
        let title = format!("{title} over libfabric tcp");
        let cap = format!("{cap}{peer}");
        let impls = IMPLS.map(|(i, n, k)| (i, n.trim_end_matches(" over libfabric"), k));
        v.push(by_size_per_pes(
            r, "ofi_coll", bench, &impls, &id, "ofi", &title, &cap,
        ));
    }
    v
}
