//! `threads`: seed 001 §IV-A/B, multithreaded message rate and ping-pong latency.
//!
//! Run as `oshrun -np 2T rshmem-bench threads --threads T`. Three configurations with the
//! same number of concurrent issuers (T) and the same targets, measured in one job and
//! interleaved sample by sample so that machine noise hits them alike:
//!
//! * **shared**: T threads of PE 0 on the default context, thread i to region i of PE T;
//! * **serialized**: the same on one `SHMEM_CTX_SERIALIZED` context that the T threads
//!   share, each OpenSHMEM call on it made under the program's own lock (a mutex), as the
//!   attribute requires of the program;
//! * **private**: the same with a `SHMEM_CTX_PRIVATE` context per thread;
//! * **PEs**: T single-threaded PEs, PE i to region i of PE T+i (seed 001's PE x -> x+12).
//!
//! PEs that do not issue in a phase nap (they use no core), so T busy threads run in
//! every configuration. Rates are aggregate: the sum of each issuer's operations per
//! second over a duration-bounded run (windows of up to 64 operations, then a quiet).
//! The ping-pong pairs thread i of PE 0 with thread i of PE T (PE i with PE T+i), so it
//! keeps 2T threads busy. Every PE runs at `SHMEM_THREAD_MULTIPLE` (rshmem's hot paths
//! are the same at every level).

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rshmem_core::{amo, ctx, order, p2p, rma, AmoOp, Cmp, Ctx};
use serde_json::json;

use crate::report::{self, Goal, Report};
use crate::spmd::{
    cores, geomean, init_multiple, median, ok, on_pinned, oversub, pages, pin, rate_for, sizes,
    sym_alloc, sym_free, unpin, with_ctx, Ctl, CtxMode, Effort, Page, Shared, SpinBarrier, LINE,
};

/// What one issuer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `shmem_ctx_putmem` of this many bytes.
    Put(usize),
    /// `shmem_ctx_getmem` of this many bytes.
    Get(usize),
    /// `shmem_ctx_uint64_atomic_add` (atomic post).
    Post,
    /// `shmem_ctx_uint64_atomic_fetch_add` (atomic fetch).
    Fetch,
}

impl Op {
    fn family(self) -> &'static str {
        match self {
            Op::Put(_) => "put",
            Op::Get(_) => "get",
            Op::Post => "atomic_post",
            Op::Fetch => "atomic_fetch",
        }
    }

    fn size(self) -> usize {
        match self {
            Op::Put(n) | Op::Get(n) => n,
            Op::Post | Op::Fetch => 8,
        }
    }
}

/// The configurations compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Threads(CtxMode),
    /// The T threads on one serialized context, under the program's lock.
    Serialized,
    Pes,
}

const KINDS: [Kind; 4] = [
    Kind::Threads(CtxMode::Shared),
    Kind::Serialized,
    Kind::Threads(CtxMode::Private),
    Kind::Pes,
];

/// Indices of [`KINDS`] (and of [`kind_label`]).
const SHARED: usize = 0;
const SERIAL: usize = 1;
const PRIVATE: usize = 2;
const PES: usize = 3;

/// The program's lock around each call on a serialized context (`None`: no lock).
fn held(lock: Option<&Mutex<()>>) -> Option<MutexGuard<'_, ()>> {
    lock.map(|l| l.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Operations per window (then a quiet): up to 64, at most `region` bytes.
pub(crate) fn window(n: usize, region: usize) -> usize {
    (region / n.max(1)).clamp(1, 64)
}

/// Windows between looks at the clock (about every 256 operations).
pub(crate) fn check(w: usize) -> u64 {
    (256 / w.max(1)).max(1) as u64
}

/// The job's symmetric buffers and layout.
struct Job {
    t: usize,
    /// The PE threads of PE 0 target.
    target: usize,
    /// Whether the PEs configuration fits (`npes >= 2T`).
    pes_ok: bool,
    region: usize,
    data: Shared<u8>,
    words: Shared<u8>,
    flags: Shared<u8>,
}

/// Issuers of one run: the context and the lock each call on it takes.
#[derive(Clone, Copy)]
struct On<'a> {
    ctx: &'a Ctx,
    lock: Option<&'a Mutex<()>>,
}

/// One issuer: operations `op` on `on.ctx` to region/word `i` of `pe`, through the private
/// buffer `buf`, for `dur`; returns operations per second.
fn issue(job: &Job, on: On<'_>, op: Op, i: usize, pe: usize, buf: *mut u8, dur: Duration) -> f64 {
    let ctx = on.ctx;
    let pe = pe as i64;
    let region = job.data.at(i * job.region);
    let word = job.words.at(i * LINE).cast::<u64>();
    match op {
        Op::Put(n) | Op::Get(n) => {
            let w = window(n, job.region);
            let is_put = matches!(op, Op::Put(_));
            rate_for(dur, check(w), || {
                for j in 0..w {
                    let (r, l) = (region.wrapping_add(j * n), buf.wrapping_add(j * n));
                    let _g = held(on.lock);
                    // SAFETY: `l` lies in this issuer's private buffer of `region` bytes
                    // (j * n + n <= region), which no other thread touches.
                    ok(unsafe {
                        if is_put {
                            rma::ctx_put(ctx, "shmem_ctx_putmem", r, l, n, pe)
                        } else {
                            rma::ctx_get(ctx, "shmem_ctx_getmem", l, r, n, pe)
                        }
                    });
                }
                let _g = held(on.lock);
                ok(order::ctx_quiet(ctx));
                w as u64
            })
        }
        Op::Post | Op::Fetch => {
            let routine = if op == Op::Post {
                "shmem_ctx_uint64_atomic_add"
            } else {
                "shmem_ctx_uint64_atomic_fetch_add"
            };
            let mut acc = 0u64;
            let r = rate_for(dur, 4, || {
                for _ in 0..64 {
                    let _g = held(on.lock);
                    // SAFETY: `word` is an aligned symmetric u64 (checked again).
                    let v = ok(unsafe { amo::ctx_atomic(ctx, routine, word, AmoOp::Add(1), pe) });
                    if op == Op::Fetch {
                        acc = acc.wrapping_add(v);
                    }
                }
                let _g = held(on.lock);
                ok(order::ctx_quiet(ctx));
                64
            });
            std::hint::black_box(acc);
            r
        }
    }
}

/// One ping-pong batch of `n` round trips on flag `i` with `pe`; returns (ns per round
/// trip, the new sequence number).
fn pingpong(
    job: &Job,
    on: On<'_>,
    initiator: bool,
    i: usize,
    pe: usize,
    mut seq: u64,
    n: u64,
) -> (f64, u64) {
    let flag = job.flags.at(i * LINE).cast::<u64>();
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        seq += 1;
        let v = seq;
        let send = || {
            let _g = held(on.lock);
            // SAFETY: `v` is a live local u64; `flag` is a symmetric word.
            ok(unsafe {
                rma::ctx_put(
                    on.ctx,
                    "shmem_ctx_putmem",
                    flag.cast(),
                    (&v as *const u64).cast(),
                    8,
                    pe as i64,
                )
            });
        };
        // SAFETY: `flag` is a symmetric u64 of this PE.
        let wait = || ok(unsafe { p2p::wait_until("shmem_uint64_wait_until", flag, Cmp::Ge, v) });
        if initiator {
            send();
            wait();
        } else {
            wait();
            send();
        }
    }
    (t0.elapsed().as_nanos() as f64 / n as f64, seq)
}

/// `threads`: the suite.
pub(crate) fn run(quick: bool, threads: usize, max_size: usize) {
    let (me, npes) = init_multiple("threads");
    let t = threads.max(1);
    let e = Effort::new(quick);
    let max_size = max_size.max(8);
    let region = max_size;
    let job = Job {
        t,
        target: if npes == 1 { 0 } else { t.min(npes - 1) },
        pes_ok: npes >= 2 * t,
        region,
        data: Shared(sym_alloc(t * region, 0x5a)),
        words: Shared(sym_alloc(t * LINE, 0)),
        flags: Shared(sym_alloc(t * LINE, 0)),
    };
    let mut ctl = Ctl::new(me, npes);
    // The serialized context the threads of a PE share, and the program's lock for it.
    let serial = ok(ctx::create(ctx::SERIALIZED));
    // SAFETY: created above, destroyed only at the end, after every thread has joined.
    let serial_ctx: &Ctx = unsafe { serial.as_ref() };
    let serial_lock = Mutex::new(());
    let serialized = On {
        ctx: serial_ctx,
        lock: Some(&serial_lock),
    };
    let r = Report::new(npes);
    let extra = [("threads", json!(t))];

    // Private buffers, one per thread (PE 0) or one (a PE issuer).
    let mut bufs: Vec<Vec<Page>> = (0..t).map(|_| pages(region, 0xa5)).collect();
    let buf_ptrs: Vec<Shared<u8>> = bufs
        .iter_mut()
        .map(|b| Shared(b.as_mut_ptr().cast::<u8>()))
        .collect();

    if me == 0 {
        r.line(format!(
            "rshmem-bench threads: {npes} PEs, T = {t} threads on {} cores; {} mode",
            cores(),
            if quick { "quick" } else { "full" }
        ));
        r.line(format!(
            "shared/serialized/private: {t} threads of PE 0 -> PE {}; PEs: PE i -> PE {t}+i ({}); idle PEs nap; \
             rate = sum over issuers, median of {} samples of {} ms",
            job.target,
            if job.pes_ok {
                format!("{t} PEs")
            } else {
                format!("skipped: needs -np {}", 2 * t)
            },
            e.samples,
            e.dur.as_millis()
        ));
    }

    let mut ops: Vec<Op> = Vec::new();
    for n in sizes(1, max_size, 4) {
        ops.push(Op::Put(n));
    }
    for n in sizes(1, max_size, 4) {
        ops.push(Op::Get(n));
    }
    ops.push(Op::Post);
    ops.push(Op::Fetch);

    // rates[op][kind] = samples
    let mut rates = vec![vec![Vec::new(); KINDS.len()]; ops.len()];
    for (oi, &op) in ops.iter().enumerate() {
        for _ in 0..e.samples {
            for (ki, &kind) in KINDS.iter().enumerate() {
                if kind == Kind::Pes && !job.pes_ok {
                    continue;
                }
                let active = match kind {
                    Kind::Threads(_) | Kind::Serialized => me == 0,
                    Kind::Pes => me < t,
                };
                ctl.sync(active);
                let mut mine = f64::NAN;
                if active {
                    match kind {
                        Kind::Threads(mode) => {
                            let start = SpinBarrier::new(t);
                            let v = on_pinned(t, 0, |i| {
                                with_ctx(mode, |ctx| {
                                    start.wait();
                                    let on = On { ctx, lock: None };
                                    issue(&job, on, op, i, job.target, buf_ptrs[i].0, e.dur)
                                })
                            });
                            mine = v.iter().sum();
                        }
                        Kind::Serialized => {
                            let start = SpinBarrier::new(t);
                            let v = on_pinned(t, 0, |i| {
                                start.wait();
                                issue(&job, serialized, op, i, job.target, buf_ptrs[i].0, e.dur)
                            });
                            mine = v.iter().sum();
                        }
                        Kind::Pes => {
                            let ctx = Ctx::default_ctx();
                            pin(me);
                            let on = On { ctx, lock: None };
                            let v = issue(&job, on, op, me, t + me, buf_ptrs[0].0, e.dur);
                            unpin();
                            ctl.post(me, v);
                        }
                    }
                }
                ctl.sync(false);
                if me == 0 {
                    let total = match kind {
                        Kind::Threads(_) | Kind::Serialized => mine,
                        Kind::Pes => (0..t).map(|i| ctl.take(i)).sum(),
                    };
                    rates[oi][ki].push(total / 1e6);
                }
            }
        }
    }

    // Ping-pong: put RTT, threads of PE 0 with threads of PE T (PE i with PE T+i).
    let mut seqs = vec![0u64; t];
    let pp_n: u64 = if quick { 200 } else { 4000 };
    let mut rtts = vec![Vec::new(); KINDS.len()];
    if npes >= 2 {
        for _ in 0..e.samples {
            for (ki, &kind) in KINDS.iter().enumerate() {
                if kind == Kind::Pes && !job.pes_ok {
                    continue;
                }
                let active = match kind {
                    Kind::Threads(_) | Kind::Serialized => me == 0 || me == job.target,
                    Kind::Pes => me < 2 * t,
                };
                ctl.sync(active);
                if active {
                    match kind {
                        Kind::Threads(_) | Kind::Serialized => {
                            let init = me == 0;
                            let peer = if init { job.target } else { 0 };
                            let seq_in = seqs.clone();
                            let pair = |on: On<'_>, i: usize| {
                                let (_, s) =
                                    pingpong(&job, on, init, i, peer, seq_in[i], pp_n / 10);
                                pingpong(&job, on, init, i, peer, s, pp_n)
                            };
                            let v = on_pinned(t, if init { 0 } else { t }, |i| match kind {
                                Kind::Threads(mode) => {
                                    with_ctx(mode, |ctx| pair(On { ctx, lock: None }, i))
                                }
                                _ => pair(serialized, i),
                            });
                            for (i, &(rtt, s)) in v.iter().enumerate() {
                                seqs[i] = s;
                                if init {
                                    ctl.post(i, rtt);
                                }
                            }
                        }
                        Kind::Pes => {
                            let init = me < t;
                            let (i, peer) = if init { (me, t + me) } else { (me - t, me - t) };
                            let ctx = Ctx::default_ctx();
                            pin(me);
                            let on = On { ctx, lock: None };
                            let (_, s) = pingpong(&job, on, init, i, peer, seqs[i], pp_n / 10);
                            let (rtt, s) = pingpong(&job, on, init, i, peer, s, pp_n);
                            unpin();
                            seqs[i] = s;
                            if init {
                                ctl.post(i, rtt);
                            }
                        }
                    }
                }
                ctl.sync(false);
                if me == 0 {
                    rtts[ki].push((0..t).map(|i| ctl.take(i)).sum::<f64>() / t as f64);
                }
            }
        }
    }

    if me == 0 {
        report_rates(&r, &job, &ops, &rates, &extra);
        report_pingpong(&r, &job, &ops, &rates, &rtts, &extra);
        r.targets();
    }
    drop(bufs);
    // SAFETY: created by this thread above; every thread that used it has joined.
    ok(unsafe { ctx::destroy(serial) });
    ctl.free();
    sym_free(job.flags.0);
    sym_free(job.words.0);
    sym_free(job.data.0);
    rshmem_core::finalize();
}

fn kind_label(k: usize) -> &'static str {
    ["shared", "serialized", "private", "pes"][k]
}

fn report_rates(
    r: &Report,
    job: &Job,
    ops: &[Op],
    rates: &[Vec<Vec<f64>>],
    extra: &[(&str, serde_json::Value)],
) {
    let t = job.t;
    r.section(&format!(
        "multithreaded message rate, aggregate Mmsg/s [seed 001 Figs. 4-5]: T = {t} issuers{}",
        oversub(t)
    ));
    r.line(format!(
        "{:<13} {:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>11}  {:>12}  {:>12}",
        "op",
        "size",
        "shared",
        "serialized",
        "private",
        "PEs",
        "shared/PEs",
        "serial./PEs",
        "private/PEs"
    ));
    let mut ratios: Vec<(&str, Vec<f64>)> = Vec::new();
    for (oi, &op) in ops.iter().enumerate() {
        let m: Vec<f64> = rates[oi].iter().map(|v| median(v)).collect();
        let (rs, rz, rp) = (m[SHARED] / m[PES], m[SERIAL] / m[PES], m[PRIVATE] / m[PES]);
        let f = |v: f64, p: usize| {
            if v.is_finite() {
                format!("{v:.p$}")
            } else {
                "-".into()
            }
        };
        r.line(format!(
            "{:<13} {:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>11}  {:>12}  {:>12}",
            op.family(),
            report::size(op.size()),
            f(m[SHARED], 2),
            f(m[SERIAL], 2),
            f(m[PRIVATE], 2),
            f(m[PES], 2),
            f(rs, 3),
            f(rz, 3),
            f(rp, 3)
        ));
        let bench = format!("mt_{}", op.family());
        for (k, &v) in m.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            r.json_with(
                &bench,
                Some(op.size()),
                &format!("rate_{}", kind_label(k)),
                v,
                "Mmsg/s",
                extra,
            );
        }
        if job.pes_ok {
            r.json_with(
                &bench,
                Some(op.size()),
                "ratio_shared_to_pes",
                rs,
                "x",
                extra,
            );
            r.json_with(
                &bench,
                Some(op.size()),
                "ratio_serialized_to_pes",
                rz,
                "x",
                extra,
            );
            r.json_with(
                &bench,
                Some(op.size()),
                "ratio_private_to_pes",
                rp,
                "x",
                extra,
            );
            match ratios.iter_mut().find(|(f, _)| *f == op.family()) {
                Some((_, v)) => v.push(rp),
                None => ratios.push((op.family(), vec![rp])),
            }
        }
    }
    if !job.pes_ok {
        r.line(format!(
            "(no PEs configuration: run with -np {} for the private/PEs ratios)",
            2 * t
        ));
        return;
    }
    for (family, v) in &ratios {
        let g = geomean(v);
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let how = format!(
            "geomean over {} sizes of private-context rate / PE rate, T = {t}; min {min:.3}",
            v.len()
        );
        if t <= cores() {
            r.target(
                &format!("mt_{family}_private_vs_pes_T{t}"),
                &how,
                g,
                "x",
                Goal::AtLeast(0.9),
            );
        } else {
            r.json_with(
                &format!("mt_{family}"),
                None,
                "geomean_ratio_private_to_pes_oversubscribed",
                g,
                "x",
                extra,
            );
        }
    }
}

fn report_pingpong(
    r: &Report,
    job: &Job,
    ops: &[Op],
    rates: &[Vec<Vec<f64>>],
    rtts: &[Vec<f64>],
    extra: &[(&str, serde_json::Value)],
) {
    let t = job.t;
    if rtts[0].is_empty() {
        r.line("(no ping-pong: needs at least 2 PEs)");
        return;
    }
    r.section(&format!(
        "ping-pong latency with threads [seed 001 Fig. 6]: {t} pairs, {} busy threads{}",
        2 * t,
        oversub(2 * t)
    ));
    r.line(format!(
        "{:<46} {:>10}  {:>10}  {:>10}  {:>10}",
        "", "shared", "serialized", "private", "PEs"
    ));
    let m: Vec<f64> = rtts.iter().map(|v| median(v)).collect();
    r.line(format!(
        "{:<46} {:>10}  {:>10}  {:>10}  {:>10}",
        "put 8 B + wait_until round trip (mean of pairs)",
        report::ns(m[SHARED]),
        report::ns(m[SERIAL]),
        report::ns(m[PRIVATE]),
        report::ns(m[PES])
    ));
    // Fetching AMO latency: a blocking fetch_add per issuer, from the rate run.
    if let Some(oi) = ops.iter().position(|&o| o == Op::Fetch) {
        let lat: Vec<f64> = rates[oi]
            .iter()
            .map(|v| t as f64 * 1e3 / median(v))
            .collect();
        r.line(format!(
            "{:<46} {:>10}  {:>10}  {:>10}  {:>10}",
            "atomic fetch_add latency (T / aggregate rate)",
            report::ns(lat[SHARED]),
            report::ns(lat[SERIAL]),
            report::ns(lat[PRIVATE]),
            report::ns(lat[PES])
        ));
        for (k, &v) in lat.iter().enumerate() {
            r.json_with(
                "mt_atomic_fetch_latency",
                Some(8),
                &format!("latency_{}", kind_label(k)),
                v,
                "ns",
                extra,
            );
        }
    }
    for (k, &v) in m.iter().enumerate() {
        r.json_with(
            "mt_pingpong_put",
            Some(8),
            &format!("rtt_{}", kind_label(k)),
            v,
            "ns",
            extra,
        );
    }
    if job.pes_ok {
        r.json_with(
            "mt_pingpong_put",
            Some(8),
            "ratio_private_to_pes",
            m[PRIVATE] / m[PES],
            "x",
            extra,
        );
    }
}
