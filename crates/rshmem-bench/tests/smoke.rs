//! Smoke test of the multithreaded suites (`threads`, `apps`, `nbe`, `threshold`): each
//! runs with `--quick` at small sizes, under `oshrun -np 2` when the launcher is built
//! next to this binary (as `cargo test --workspace` does), otherwise as one PE. It checks
//! that every run exits 0 within its time bound and prints the expected JSON lines; it
//! never checks a timing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a run may take (a debug build on a loaded machine).
const BOUND: Duration = Duration::from_secs(120);

fn bench() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rshmem-bench"))
}

/// `oshrun` from the same target directory, if built.
fn oshrun() -> Option<PathBuf> {
    let p = bench().parent().map(|d| d.join("oshrun"))?;
    p.exists().then_some(p)
}

/// Runs `rshmem-bench args...` on `np` PEs (one PE without a launcher) and returns stdout.
fn run(np: usize, args: &[&str]) -> String {
    let mut cmd = match oshrun() {
        Some(o) => {
            let mut c = Command::new(o);
            c.arg("-np").arg(np.to_string()).arg(bench());
            c
        }
        None => Command::new(bench()),
    };
    cmd.args(args)
        .env("SHMEM_SYMMETRIC_SIZE", "256M")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start rshmem-bench");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let ereader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if t0.elapsed() > BOUND {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = reader.join().unwrap_or_default();
    let stderr = ereader.join().unwrap_or_default();
    assert!(
        status.is_some_and(|s| s.success()),
        "rshmem-bench {args:?} on {np} PEs: status {status:?} after {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        t0.elapsed()
    );
    stdout
}

/// The JSON lines of an output, each checked to parse with the documented keys.
fn records(out: &str) -> Vec<serde_json::Value> {
    let v: Vec<serde_json::Value> = out
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect();
    for r in &v {
        for k in ["bench", "size", "pes", "metric", "value", "unit"] {
            assert!(r.get(k).is_some(), "JSON line without {k}: {r}");
        }
    }
    v
}

/// Asserts that some record has bench `bench`.
fn has(recs: &[serde_json::Value], bench: &str) {
    assert!(
        recs.iter().any(|r| r["bench"] == bench),
        "no JSON line of bench {bench}"
    );
}

fn np() -> usize {
    if oshrun().is_some() {
        2
    } else {
        1
    }
}

#[test]
fn threads_quick() {
    let out = run(
        np(),
        &["threads", "--quick", "--threads", "1", "--max-size", "4096"],
    );
    let recs = records(&out);
    for b in ["mt_put", "mt_get", "mt_atomic_post", "mt_atomic_fetch"] {
        has(&recs, b);
        // Shared, serialized (one context under a lock) and private contexts.
        for m in ["rate_shared", "rate_serialized", "rate_private"] {
            assert!(
                recs.iter().any(|r| r["bench"] == b && r["metric"] == m),
                "no {m} of {b}"
            );
        }
    }
    if np() == 2 {
        has(&recs, "mt_pingpong_put");
        has(&recs, "target");
    }
}

#[test]
fn apps_quick() {
    let out = run(
        np(),
        &[
            "apps",
            "--quick",
            "--threads",
            "2",
            "--halo-sizes",
            "8,16",
            "--isx-keys",
            "4096",
            "--mandel-size",
            "32",
            "--mandel-iters",
            "64",
        ],
    );
    let recs = records(&out);
    for b in ["app_halo3d", "app_isx", "app_mandelbrot"] {
        has(&recs, b);
    }
}

#[test]
fn nbe_quick() {
    let out = run(
        np(),
        &[
            "nbe",
            "--quick",
            "--threads",
            "2",
            "--max-size",
            "4096",
            "--overlap-sizes",
            "64,65536",
            "--bcast-max",
            "4096",
            "--gups-words",
            "4096",
        ],
    );
    let recs = records(&out);
    for b in [
        "put_nbe_msgrate",
        "mt_put_nbe_msgrate",
        "mt_fetch_add_nbe_rate",
        "mt_put_nbe_bandwidth",
        "overlap_put_nbe",
        "bcast_library",
        "bcast_threads_put_nbe",
        "gups_xor",
        "gups_fetch_xor_nbe",
    ] {
        has(&recs, b);
    }
}

#[test]
fn threshold_quick() {
    let out = run(
        np(),
        &[
            "threshold",
            "--quick",
            "--min-size",
            "1024",
            "--max-size",
            "65536",
        ],
    );
    let recs = records(&out);
    for b in [
        "engine_inline_put",
        "engine_nbi_work_quiet",
        "engine_threshold",
    ] {
        has(&recs, b);
    }
}

#[test]
fn launcher_path_is_a_file_when_present() {
    if let Some(p) = oshrun() {
        assert!(Path::new(&p).is_file());
    }
}

/// `coll`'s team-count series on 3 PEs (one PE without the launcher): 64 teams kept
/// alive, a record per checkpoint for dup, halve and the sync reference.
#[test]
fn coll_team_count_quick() {
    let np = if oshrun().is_some() { 3 } else { 1 };
    let out = run(np, &["coll", "--quick", "--max-size", "64"]);
    let recs = records(&out);
    for b in [
        "team_count_dup_world",
        "team_count_halve",
        "team_count_two_world_syncs",
    ] {
        let teams: Vec<u64> = recs
            .iter()
            .filter(|r| r["bench"] == b && r["metric"] == "cumulative_mean")
            .filter_map(|r| r["teams"].as_u64())
            .collect();
        assert_eq!(teams, [1, 2, 4, 8, 16, 32, 48, 64], "{b}: checkpoints");
        assert!(
            recs.iter()
                .filter(|r| r["bench"] == b)
                .all(|r| r["pes"] == np && r["value"].as_f64().is_some_and(|v| v > 0.0)),
            "{b}: a record of another PE count or without a positive time"
        );
    }
}
