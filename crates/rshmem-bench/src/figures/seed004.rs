//! Seed 004 (active sets): active-set creation cost by constructor, and the overlap of
//! non-blocking collectives (`bench/c/shmem_seed004.c`).

use super::{by_pes, hline, Axis, Figure, Kind, Records, Scale};

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    let mut f = Figure::new(
        "seed004_aset_create",
        "seed004",
        "Active-set creation + delete by constructor",
        Axis::new("PEs", Scale::Count),
        Axis::new("time (ns, median, slowest PE)", Scale::Log),
    )
    .caption(
        "bench/c/shmem_seed004.c: each constructor builds an active set of all PEs and deletes \
         it (local, no communication); the reference is a team split of WORLD (collective). \
         OSHMEM 4.1 has no active-set objects nor teams: no OSHMEM series.",
    );
    for (c, name) in [
        ("strided", "strided"),
        ("log_strided", "log-strided"),
        ("custom", "custom (list)"),
        ("generic", "generic (callback)"),
    ] {
        let bench = format!("aset_create_{c}");
        let pts = r.points(
            "seed004",
            |x| x.bench == bench && x.metric == "latency_median",
            by_pes,
        );
        f.add(name, Kind::Rshmem, pts);
    }
    f.add(
        "team split of WORLD (reference)",
        Kind::Reference,
        r.points(
            "seed004",
            |x| x.bench == "aset_create_team_split" && x.metric == "latency_median",
            by_pes,
        ),
    );
    v.push(f);

    let mut f = Figure::new(
        "seed004_overlap",
        "seed004",
        "Overlap of 1 MiB non-blocking collectives with computation",
        Axis::new("PEs", Scale::Count),
        Axis::new("communication hidden (%)", Scale::Linear),
    )
    .caption(
        "bench/c/shmem_seed004.c (COMB): a non-blocking reduction or broadcast of 1 MiB, \
         computation, then the wait; computing: the PEs compute while the collective runs; \
         idle: the cores are left idle instead (what the progress engine alone achieves). \
         Open MPI 4.1's OSHMEM has no non-blocking collectives: no OSHMEM series.",
    );
    for (bench, name, kind) in [
        ("overlap_reduce_nbe", "reduce, computing", Kind::Rshmem),
        (
            "overlap_broadcast_nbe",
            "broadcast, computing",
            Kind::Rshmem,
        ),
        ("overlap_reduce_nbe_idle", "reduce, idle", Kind::Peer),
        ("overlap_broadcast_nbe_idle", "broadcast, idle", Kind::Peer),
    ] {
        let pts = r.points(
            "seed004",
            |x| x.bench == bench && x.metric == "overlap",
            by_pes,
        );
        f.add(name, kind, pts);
    }
    let full = hline(&f, Some(100.0));
    f.add("100 % (all hidden)", Kind::Reference, full);
    v.push(f);
    v
}
