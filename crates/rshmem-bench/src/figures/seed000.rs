//! Seed 000 (OpenSHMEM teams): team creation cost by PE count, and flat against
//! HOST -> LEADERS -> HOST sum reductions on simulated hosts (`rshmem-bench coll`).

use super::{by_pes, by_size, Axis, Figure, Kind, Records, Scale};

/// The figures of this group.
pub(super) fn figures(r: &Records) -> Vec<Figure> {
    let mut v = Vec::new();
    let mut f = Figure::new(
        "seed000_team_create",
        "seed000",
        "Team creation (shmem_team_split_strided) by PE count",
        Axis::new("PEs in the job", Scale::Count),
        Axis::new("time per creation (ns, median)", Scale::Log),
    )
    .caption(
        "rshmem-bench coll: a series of splits of WORLD, each destroyed at once; duplicating \
         WORLD, and halving (stride 2: every other PE takes part). The reference is the cost \
         of the agreement's synchronisation alone (two team_sync of WORLD), the part the seed \
         finds to dominate creation.",
    );
    let pick = |bench: &'static str, metric: &'static str| {
        r.points(
            "coll",
            move |x| x.bench == bench && x.metric == metric,
            by_pes,
        )
    };
    f.add(
        "create: dup WORLD",
        Kind::Rshmem,
        pick("team_create_dup_world", "create_latency_median"),
    );
    f.add(
        "create: halve (stride 2)",
        Kind::Rshmem,
        pick("team_create_halve_stride2", "create_latency_median"),
    );
    f.add(
        "destroy: dup WORLD",
        Kind::Peer,
        pick("team_create_dup_world", "destroy_latency_median"),
    );
    f.add(
        "2 x team_sync(WORLD) (agreement floor)",
        Kind::Reference,
        pick("team_create_dup_world", "two_world_syncs_median"),
    );
    v.push(f);

    let hosts = r
        .of("coll_hosts")
        .find(|x| x.bench == "reduce_sum_i32_flat")
        .map_or(0, |x| x.pes);
    let mut f = Figure::new(
        "seed000_flat_vs_hier",
        "seed000",
        &format!(
            "Sum reduction, flat vs HOST -> LEADERS -> HOST, {hosts} PEs on 2 simulated hosts"
        ),
        Axis::new("message size", Scale::Bytes),
        Axis::new("latency (ns, median)", Scale::Log),
    )
    .caption(
        "SHMEM_TRANSPORT=mixed SHMEM_VIRTUAL_HOSTS=2 rshmem-bench coll: int32 sum reduction on \
         WORLD by one algorithm (flat: shared-memory, recursive doubling, ring) against the \
         hierarchy (reduce on each HOST team, the same algorithm across LEADERS through UCX, \
         broadcast on each HOST).",
    );
    for (suffix, alg) in [("", "shm"), ("_rd", "rd"), ("_ring", "ring")] {
        for (kind, name, k) in [
            ("flat", "flat", Kind::Rshmem),
            ("hier", "hierarchical", Kind::Peer),
        ] {
            let bench = format!("reduce_sum_i32_{kind}{suffix}");
            let pts = r.points(
                "coll_hosts",
                |x| x.bench == bench && x.metric == "latency_median",
                by_size,
            );
            f.add(&format!("{name} {alg}"), k, pts);
        }
    }
    let mc = r.points(
        "coll_hosts",
        |x| x.bench == "memcpy_hier" && x.metric == "latency_median",
        by_size,
    );
    f.add("memcpy of the message (limit)", Kind::Reference, mc);
    v.push(f);
    v
}
