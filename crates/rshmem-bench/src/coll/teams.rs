//! Team creation (one at a time, and by team count) and barrier latency.

use std::time::Instant;

use rshmem_core::sync;
use rshmem_core::team::{self, Team, TeamConfig};

use crate::report::{self, Report};
use crate::stats::{interleaved_fixed, Body, Lat};

use super::{med_min, ok, since, Effort, CHECKPOINTS, LIVE_TEAMS, SYNC_BATCH};

/// Team creation latency (seed 000, Fig. 3): `creations` duplicates of WORLD, then
/// `creations` halving splits `(0, 2^i, ceil(n / 2^i))` cycling over i; each destroyed
/// at once. The slot agreement costs two syncs of the parent plus a bitmap exchange;
/// its sync share is estimated as 2 x `team_sync(WORLD)` timed in the same loop over
/// the creation time.
pub(super) fn team_creation(r: &Report, e: &Effort, world: &Team, me: usize, npes: usize) {
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
pub(super) fn team_count(r: &Report, e: &Effort, world: &Team, me: usize, npes: usize) {
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
pub(super) fn barriers(
    r: &Report,
    e: &Effort,
    world: &Team,
    me: usize,
    npes: usize,
    cores: usize,
) -> Lat {
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
