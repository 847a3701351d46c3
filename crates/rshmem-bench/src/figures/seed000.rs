//! Seed 000 (OpenSHMEM teams): team creation cost by PE count and by team count, and
//! flat against HOST -> LEADERS -> HOST sum reductions on simulated hosts
//! (`rshmem-bench coll`).

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
         finds to dominate creation. Beyond the machine's cores the PEs are oversubscribed. \
         Open MPI 4.1's OSHMEM has no teams (OpenSHMEM 1.5): no OSHMEM series.",
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
    v.push(team_count(r));

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
         broadcast on each HOST). Open MPI 4.1's OSHMEM has no teams (no HOST or LEADERS \
         team to compose) and cannot be given simulated hosts: no OSHMEM series (its \
         active-set sum reduction on one host is in the OSU-style reduce figure).",
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

/// Seed 000, Fig. 3: the time to create k teams kept alive, by k.
fn team_count(r: &Records) -> Figure {
    let teams = |x: &super::Record| x.num("teams");
    let mut pes: Vec<u64> = r
        .of("coll")
        .filter(|x| x.bench == "team_count_dup_world")
        .map(|x| x.pes)
        .collect();
    pes.sort_unstable();
    pes.dedup();
    let most = pes.last().copied().unwrap_or(0);
    let mut f = Figure::new(
        "seed000_team_count",
        "seed000",
        "Team creation (shmem_team_split_strided) by team count, teams kept alive",
        Axis::new("teams created (k)", Scale::Pow2),
        Axis::new("time to create k teams (ns, mean of runs)", Scale::Log),
    )
    .caption(&format!(
        "rshmem-bench coll: 64 splits of WORLD back to back, none destroyed until the last \
         (the seed's Fig. 3: up to SOS's 64 team slots); the time from the start to the k-th \
         creation on PE 0. Duplicating WORLD at each PE count run; halving (stride 2^(i mod \
         levels) for the i-th split) at {most} PEs. The reference is as many pairs of \
         team_sync(WORLD) as teams, the synchronisation part of each slot agreement. Beyond \
         the machine's cores the PEs are oversubscribed. Open MPI 4.1's OSHMEM has no teams \
         (OpenSHMEM 1.5): no OSHMEM series."
    ));
    let pick = |bench: &'static str, n: u64| {
        r.points(
            "coll",
            move |x| x.bench == bench && x.metric == "cumulative_mean" && x.pes == n,
            teams,
        )
    };
    for &n in &pes {
        f.add(
            &format!("dup WORLD, {n} PEs"),
            Kind::Rshmem,
            pick("team_count_dup_world", n),
        );
    }
    f.add(
        &format!("halve, {most} PEs"),
        Kind::Peer,
        pick("team_count_halve", most),
    );
    f.add(
        &format!("k x 2 team_sync(WORLD), {most} PEs"),
        Kind::Reference,
        pick("team_count_two_world_syncs", most),
    );
    f
}
