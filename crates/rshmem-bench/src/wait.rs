//! `wait`: small collectives and a put/wait ping-pong at 2 PEs, on an idle machine and
//! with background load (busy processes outside the job), under several waiting
//! policies (issue 13, section 1b).
//!
//! The limit is a raw cache-line ping-pong through `shmem_ptr` that only spins: what a
//! round trip costs when both PEs hold a core, and what a waiter that never gives its
//! core away gets under load. Figures are per call: the median of batch means (typical)
//! and the mean over all batches (throughput, which long stalls dominate).

use std::process::{Child, Command};
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use rshmem_core::coll::{self as core_coll, ReduceOp};
use rshmem_core::team;
use rshmem_core::{memory, setup, sync};
use rshmem_util::wait::{self, Policy};

use crate::pe::{init, ok, put_wait_round, raw_round};
use crate::report::Report;
use crate::stats::{interleaved_fixed, Body};

/// Calls per timed batch.
const BATCH: u64 = 8;
/// Batches of each operation between two decisions to go on.
const CHUNK: usize = 50;

/// Options of `rshmem-bench wait`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Opts {
    /// Fewer samples.
    #[arg(long)]
    quick: bool,
    /// Busy processes started beside the job for the loaded runs.
    #[arg(long, default_value_t = 5)]
    load: usize,
    /// Also run other policies (spin 0 / 5 / 500 us, and the old spin-then-yield), not only
    /// the default.
    #[arg(long)]
    sweep: bool,
}

/// The operations measured, in body order.
const OPS: [(&str, &str); 5] = [
    ("pingpong_raw", "raw ping-pong, pure spin (limit)"),
    ("pingpong_put", "put 8 B + wait_until, round trip"),
    ("barrier_all", "shmem_barrier_all"),
    ("broadcast_8", "broadcast 8 B"),
    ("reduce_sum_8", "sum reduce 8 B (i64)"),
];

/// One measured cell: per-call median of batch means and mean, per operation.
struct Cell {
    /// Batches measured of each operation.
    batches: usize,
    median: Vec<f64>,
    mean: Vec<f64>,
}

/// `wait`: run under `oshrun -np 2`.
pub(crate) fn run(o: Opts) {
    init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    if npes != 2 {
        if me == 0 {
            eprintln!("rshmem-bench wait: run me on exactly 2 PEs (oshrun -np 2), not {npes}");
        }
        setup::global_exit(2);
    }
    let peer = 1 - me as i64;
    let sym = ok(memory::align("shmem_align", 64, 4 * 64));
    // SAFETY: just allocated in our own heap with this size.
    unsafe { std::ptr::write_bytes(sym, 0, 4 * 64) };
    ok(sync::barrier_all());
    let Some(peer_raw) = std::ptr::NonNull::new(ok(setup::ptr(sym as usize, peer))) else {
        if me == 0 {
            eprintln!(
                "rshmem-bench wait: PE 1 is not mapped (a network transport); run on shared memory"
            );
        }
        setup::global_exit(2);
    };
    let world = ok(team::world());
    let samples = if o.quick { 300 } else { 4000 };
    // Per policy and load: a stalling policy stops early, with what it measured.
    let budget = Duration::from_secs(if o.quick { 3 } else { 20 });
    let cores = rshmem_util::wait::job_cpus();
    let default = wait::policy();
    let mut policies = vec![("default".to_string(), default)];
    if o.sweep {
        let us = Duration::from_micros;
        for p in [
            Policy {
                spin: us(0),
                yield_for: us(2000),
            },
            Policy {
                spin: us(5),
                yield_for: us(2000),
            },
            Policy {
                spin: us(50),
                yield_for: us(200),
            },
            Policy {
                spin: us(500),
                yield_for: us(2000),
            },
            // Before this mode existed: a few dozen hints, then yield, never sleep.
            Policy {
                spin: Duration::from_nanos(1500),
                yield_for: Duration::from_secs(60),
            },
        ] {
            if p != default {
                policies.push((format!("spin {:?}, yield {:?}", p.spin, p.yield_for), p));
            }
        }
    }
    // Idle; busy processes each in a session of its own (a user's other programs: with
    // autogroup scheduling the job's PEs then share one slot against each of them); busy
    // processes in the job's session (each one a peer of each PE).
    let loads = [
        (0, false, "idle"),
        (o.load, true, "own sessions"),
        (o.load, false, "job's session"),
    ];

    let r = Report::new(npes);
    if me == 0 {
        r.line(format!(
            "rshmem-bench wait: 2 PEs on {cores} cores, idle and beside {} busy processes; \
             per call: median of batch means of {BATCH} / mean of all (up to {} batches or {:?} each)",
            o.load, samples, budget
        ));
        r.line(format!(
            "default policy here: spin {:?}, then yield until {:?} more, then sleep (SHMEM_WAIT_SPIN, SHMEM_WAIT_YIELD)",
            default.spin, default.yield_for
        ));
    }
    let mut cells: Vec<(usize, usize, Cell)> = Vec::new();
    let (mut i_raw, mut i_put) = (0u64, 0u64);
    for (li, &(n, own_session, label)) in loads.iter().enumerate() {
        let burners = (me == 0 && n > 0).then(|| Burners::start(n, own_session));
        ok(sync::barrier_all());
        for (pi, (name, p)) in policies.iter().enumerate() {
            wait::set_policy(*p);
            let t = Instant::now();
            let cell = measure(
                me,
                sym,
                peer_raw.as_ptr(),
                peer,
                &world,
                samples,
                budget,
                (&mut i_raw, &mut i_put),
            );
            if me == 0 {
                eprintln!(
                    "rshmem-bench wait: {label}, policy {name}: {:.1} s",
                    t.elapsed().as_secs_f64()
                );
            }
            wait::set_policy(default);
            cells.push((li, pi, cell));
        }
        ok(sync::barrier_all());
        drop(burners);
    }

    if me == 0 {
        for (pi, (name, _)) in policies.iter().enumerate() {
            let cell = |li: usize| &cells.iter().find(|c| c.0 == li && c.1 == pi).unwrap().2;
            r.section(&format!(
                "policy {name}: us per call, median / mean (batches: {})",
                (0..loads.len())
                    .map(|li| cell(li).batches.to_string())
                    .collect::<Vec<_>>()
                    .join(" / ")
            ));
            let mut head = format!("{:<36}", "operation");
            for (_, _, label) in &loads {
                head.push_str(&format!(" {label:>19}"));
            }
            r.line(head);
            for (k, (bench, desc)) in OPS.iter().enumerate() {
                let mut line = format!("{desc:<36}");
                for (li, &(n, own, label)) in loads.iter().enumerate() {
                    let c = cell(li);
                    line.push_str(&format!(
                        " {:>9.3} /{:>8.3}",
                        c.median[k] / 1e3,
                        c.mean[k] / 1e3
                    ));
                    let extra = [
                        ("policy", serde_json::json!(name)),
                        ("load", serde_json::json!(n)),
                        ("load_kind", serde_json::json!(label)),
                        ("own_sessions", serde_json::json!(own)),
                    ];
                    r.json_with(bench, Some(8), "latency_median", c.median[k], "ns", &extra);
                    r.json_with(bench, Some(8), "latency_mean", c.mean[k], "ns", &extra);
                }
                r.line(line);
            }
        }
    }
    ok(sync::barrier_all());
    ok(memory::free("shmem_free", sym));
    rshmem_core::finalize();
}

/// Every operation of [`OPS`], interleaved batch by batch, both PEs in step. The round
/// counters live across calls: a peer may already have sent the next round's value.
#[allow(clippy::too_many_arguments)]
fn measure(
    me: usize,
    sym: *mut u8,
    peer_raw: *mut u8,
    peer: i64,
    world: &team::Team,
    samples: usize,
    budget: Duration,
    (i_raw, i_put): (&mut u64, &mut u64),
) -> Cell {
    let initiator = me == 0;
    let word = |line: usize| sym.wrapping_add(line * 64).cast::<u64>();
    let raw_mine = atomic(word(0));
    let raw_theirs = atomic(peer_raw.cast());
    let mut raw = |k: u64| {
        for _ in 0..k {
            *i_raw += 1;
            raw_round(raw_mine, raw_theirs, *i_raw, initiator, true);
        }
    };
    let flag = word(1);
    let mut pingpong = |k: u64| {
        for _ in 0..k {
            *i_put += 1;
            put_wait_round(flag, *i_put, peer, initiator);
        }
    };
    let mut barrier = |k: u64| {
        for _ in 0..k {
            ok(sync::barrier_all());
        }
    };
    let (bsrc, bdst) = (word(2), word(3).wrapping_add(1));
    let mut bcast = |k: u64| {
        for _ in 0..k {
            // SAFETY: two symmetric words of this block.
            ok(unsafe {
                core_coll::broadcast("shmem_broadcastmem", world, bdst.cast(), bsrc.cast(), 8, 0)
            });
        }
    };
    let (rsrc, rdst) = (word(3).wrapping_add(2), word(3).wrapping_add(3));
    let mut reduce = |k: u64| {
        for _ in 0..k {
            // SAFETY: two symmetric i64 of this block.
            ok(unsafe {
                core_coll::reduce::<i64>(
                    "shmem_int64_sum_reduce",
                    world,
                    rdst.cast(),
                    rsrc.cast(),
                    1,
                    ReduceOp::Sum,
                )
            });
        }
    };
    let mut bodies: [Body<'_>; 5] = [
        &mut raw,
        &mut pingpong,
        &mut barrier,
        &mut bcast,
        &mut reduce,
    ];
    // Chunks of samples until `samples` or the time budget, PE 0 deciding for both (a
    // collective tells PE 1), so a policy that stalls under load ends in bounded time.
    let start = Instant::now();
    let (go_src, go_dst) = (word(3).wrapping_add(4), word(3).wrapping_add(5));
    let mut t: Vec<Vec<f64>> = vec![Vec::new(); bodies.len()];
    let mut warmup = 20;
    loop {
        for (all, chunk) in t
            .iter_mut()
            .zip(interleaved_fixed(&mut bodies, BATCH, warmup, CHUNK))
        {
            all.extend(chunk);
        }
        warmup = 0;
        let go = u64::from(t[0].len() < samples && start.elapsed() < budget);
        // SAFETY: two symmetric words of this block; only PE 0's source is read.
        unsafe {
            go_src.write(go);
            ok(core_coll::broadcast(
                "shmem_broadcastmem",
                world,
                go_dst.cast(),
                go_src.cast(),
                8,
                0,
            ));
        }
        let go = if me == 0 {
            go
        } else {
            // SAFETY: a symmetric word of this block, written by the broadcast.
            unsafe { go_dst.read() }
        };
        if go == 0 {
            break;
        }
    }
    Cell {
        batches: t[0].len(),
        median: t.iter().map(|s| crate::spmd::median(s)).collect(),
        mean: t
            .iter()
            .map(|s| s.iter().sum::<f64>() / s.len() as f64)
            .collect(),
    }
}

/// The atomic view of a symmetric word (ours, or the peer's through `shmem_ptr`).
fn atomic(p: *mut u64) -> &'static AtomicU64 {
    assert!(!p.is_null() && p.is_aligned());
    // SAFETY: an aligned word of a symmetric heap that stays mapped until finalize, after
    // every use; every concurrent access to it is atomic.
    unsafe { AtomicU64::from_ptr(p) }
}

/// Busy processes beside the job (`rshmem-bench burn`), killed and reaped on drop.
struct Burners(Vec<Child>);

impl Burners {
    fn start(n: usize, own_session: bool) -> Burners {
        let exe = std::env::current_exe().expect("rshmem-bench: cannot find its own path");
        let kids = (0..n)
            .map(|_| {
                Command::new(&exe)
                    .args(["burn", "--secs", "600"])
                    .args(own_session.then_some("--own-session"))
                    .env_remove("PMI_FD")
                    .spawn()
                    .expect("rshmem-bench: cannot start a busy process")
            })
            .collect();
        // Let them reach their loops (and the scheduler see them).
        std::thread::sleep(Duration::from_millis(200));
        Burners(kids)
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for k in &mut self.0 {
            let _ = k.kill();
            let _ = k.wait();
        }
    }
}

/// `burn`: spins for `secs` seconds, or until its parent dies (no orphans).
pub(crate) fn burn(secs: u64, own_session: bool) {
    // A killed PE 0 takes its burners with it.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    if own_session {
        let _ = rustix::process::setsid();
    }
    let end = Instant::now() + Duration::from_secs(secs);
    let mut x = 1u64;
    while Instant::now() < end {
        for _ in 0..100_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}
