//! `nbe`: seed 002 §4, explicit non-blocking operations and merged requests.
//!
//! Run as `oshrun -np 2 rshmem-bench nbe --threads T`. PE 0 issues to PE 1 (to itself on
//! one PE) while the other PEs nap, except in the broadcast and GUPS, where every PE works:
//!
//! * message rate of `put_nbi` + quiet vs `put_nbe` joined to one request + wait vs
//!   `put_nbe` with a request each, merged, + wait, one thread, 1 B..4 MiB [Fig. 3];
//! * aggregate 8-byte message rate with 1..T threads [Fig. 4], and fetch_add rates
//!   (blocking, `_nbi`, `_nbe`) with 1..T threads [§4.2];
//! * aggregate `put_nbe` bandwidth with 1..T threads, 1 B..4 MiB [Fig. 5];
//! * communication/computation overlap the COMB way (post, work, wait) for 64 B and
//!   6 MiB [Fig. 6];
//! * a broadcast in which T threads of the root each send a part, against the library
//!   broadcast [Fig. 7];
//! * GUPS: random xor and fetch_xor (`_nbe`) updates to a table spread over all PEs,
//!   1..T threads per PE [Fig. 8].

use std::time::{Duration, Instant};

use rshmem_core::{amo, coll, order, p2p, request, rma, team, AmoOp, Cmp, Ctx, ReqHandle};
use serde_json::json;

use crate::report::{self, Goal, Report};
use crate::spmd::{
    cores, engine_config, init_multiple, median, ok, on_pinned, oversub, pages, pin,
    pin_engine_away_from, rate_for, sizes, start_engine, sym_alloc, sym_free, unpin, with_ctx,
    work, work_ns_per_iter, Ctl, CtxMode, Effort, Page, Rng, Shared, SpinBarrier, LINE,
};
use crate::stats::{interleaved_fixed, Body};
use crate::threads::{check, window};

/// Options of the `nbe` suite.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Opts {
    /// Fewer samples, shorter runs.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Threads (T); thread counts 1..=T are measured.
    #[arg(long, default_value_t = 2)]
    pub(crate) threads: usize,
    /// Largest put size of the message-rate and bandwidth tables (sizes go up by 4x).
    #[arg(long, default_value_t = 4 << 20)]
    pub(crate) max_size: usize,
    /// Message sizes of the overlap measurement, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "64,6291456")]
    pub(crate) overlap_sizes: Vec<usize>,
    /// Largest broadcast size.
    #[arg(long, default_value_t = 4 << 20)]
    pub(crate) bcast_max: usize,
    /// GUPS table words (u64) per PE (rounded up to a power of two).
    #[arg(long, default_value_t = 1 << 22)]
    pub(crate) gups_words: usize,
    /// Sections to run, comma separated (rate, mt, bw, overlap, bcast, gups; default all).
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(SECTIONS))]
    pub(crate) sections: Vec<String>,
}

/// The sections of the suite, in order.
pub(crate) const SECTIONS: [&str; 6] = ["rate", "mt", "bw", "overlap", "bcast", "gups"];

/// Waits for the request in `slot` (and releases it).
fn wait(slot: &mut Option<ReqHandle>) {
    // SAFETY: the slot holds a live handle of this thread's (or nothing).
    ok(unsafe { request::wait(slot) });
}

/// `put_nbe` of `n` bytes from `src` to symmetric `dst` on `pe`, joined to `slot`.
fn put_nbe(
    ctx: &Ctx,
    dst: *mut u8,
    src: *const u8,
    n: usize,
    pe: usize,
    slot: &mut Option<ReqHandle>,
) {
    // SAFETY: `src` is readable for `n` bytes and untouched until the request completes
    // (every caller waits before reusing it); a handle in `slot` is live.
    ok(unsafe { rma::put_nbe(ctx, "shmemx_ctx_putmem_nbe", dst, src, n, pe as i64, slot) });
}

/// Kinds of the single-thread put message rate.
const PUT_KINDS: [&str; 3] = ["put_nbi", "put_nbe", "put_nbe_merged"];

/// One thread's put stream of kind `k` (index into [`PUT_KINDS`]) for `dur`; ops/s.
#[allow(clippy::too_many_arguments)]
fn put_stream(
    k: usize,
    ctx: &Ctx,
    region: *mut u8,
    region_len: usize,
    buf: *const u8,
    n: usize,
    pe: usize,
    dur: Duration,
) -> f64 {
    let w = window(n, region_len);
    rate_for(dur, check(w), || {
        match k {
            0 => {
                for j in 0..w {
                    // SAFETY: `buf` is readable for `region_len >= (j + 1) * n` bytes and
                    // unchanged until the quiet below.
                    ok(unsafe {
                        rma::ctx_put_nbi(
                            ctx,
                            "shmem_ctx_putmem_nbi",
                            region.wrapping_add(j * n),
                            buf.wrapping_add(j * n),
                            n,
                            pe as i64,
                        )
                    });
                }
                ok(order::ctx_quiet(ctx));
            }
            1 => {
                let mut slot = None;
                for j in 0..w {
                    put_nbe(
                        ctx,
                        region.wrapping_add(j * n),
                        buf.wrapping_add(j * n),
                        n,
                        pe,
                        &mut slot,
                    );
                }
                wait(&mut slot);
            }
            _ => {
                let mut head = None;
                for j in 0..w {
                    let mut one = None;
                    put_nbe(
                        ctx,
                        region.wrapping_add(j * n),
                        buf.wrapping_add(j * n),
                        n,
                        pe,
                        &mut one,
                    );
                    // SAFETY: both slots hold live handles of this thread's (or nothing).
                    ok(unsafe { request::merge(&mut head, &mut one) });
                }
                wait(&mut head);
            }
        }
        w as u64
    })
}

/// Kinds of the fetch_add rate.
const FADD_KINDS: [&str; 3] = ["fetch_add", "fetch_add_nbi", "fetch_add_nbe"];

/// One thread's fetch_add stream of kind `k` on word `w` of `pe` for `dur`; ops/s.
fn fadd_stream(k: usize, ctx: &Ctx, w: *mut u64, pe: usize, dur: Duration) -> f64 {
    let mut got = [0u64; 64];
    let pe = pe as i64;
    let r = rate_for(dur, 4, || {
        match k {
            0 => {
                for g in got.iter_mut() {
                    // SAFETY: `w` is an aligned symmetric u64.
                    *g = ok(unsafe {
                        amo::ctx_atomic(
                            ctx,
                            "shmem_ctx_uint64_atomic_fetch_add",
                            w,
                            AmoOp::Add(1),
                            pe,
                        )
                    });
                }
            }
            1 => {
                for g in got.iter_mut() {
                    // SAFETY: `g` is a writable aligned u64 read only after the quiet.
                    ok(unsafe {
                        amo::ctx_atomic_nbi(
                            ctx,
                            "shmem_ctx_uint64_atomic_fetch_add_nbi",
                            g,
                            w,
                            AmoOp::Add(1),
                            pe,
                        )
                    });
                }
                ok(order::ctx_quiet(ctx));
            }
            _ => {
                let mut slot = None;
                for g in got.iter_mut() {
                    // SAFETY: `g` is writable and read only after the wait; a handle in
                    // `slot` is live.
                    ok(unsafe {
                        amo::atomic_nbe(
                            ctx,
                            "shmemx_ctx_uint64_atomic_fetch_add_nbe",
                            g,
                            w,
                            AmoOp::Add(1),
                            pe,
                            &mut slot,
                        )
                    });
                }
                wait(&mut slot);
            }
        }
        std::hint::black_box(&got);
        64
    });
    r
}

/// `nbe`: the suite.
pub(crate) fn run(o: Opts) {
    let (me, npes) = init_multiple("nbe");
    let t = o.threads.max(1);
    let e = Effort::new(o.quick);
    let target = if npes > 1 { 1 } else { 0 };
    let region = o.max_size.max(8);
    let ovl_max = o.overlap_sizes.iter().copied().max().unwrap_or(64);
    let sym_len = (t * region).max(ovl_max);
    let data = Shared(sym_alloc(sym_len, 0x5a));
    let words = Shared(sym_alloc(t * LINE, 0));
    // Lane threads inherit the affinity of the thread that starts them: start them now,
    // before any thread is pinned.
    start_engine();
    let mut ctl = Ctl::new(me, npes);
    let r = Report::new(npes);
    let mut bufs: Vec<Vec<Page>> = (0..t).map(|_| pages(region.max(ovl_max), 0xa5)).collect();
    let bp: Vec<Shared<u8>> = bufs
        .iter_mut()
        .map(|b| Shared(b.as_mut_ptr().cast()))
        .collect();
    let (thr, lanes) = engine_config();
    let piece = engine_piece();
    if me == 0 {
        r.line(format!(
            "rshmem-bench nbe: {npes} PEs, T = {t} threads on {} cores; copy engine: threshold {}, {lanes} lane(s), {}; {} mode",
            cores(),
            report::size(thr),
            piece_label(piece),
            if o.quick { "quick" } else { "full" }
        ));
        r.line(format!(
            "PE 0 issues to PE {target}, other PEs nap (except broadcast and GUPS); rates are medians of {} samples of {} ms",
            e.samples,
            e.dur.as_millis()
        ));
    }

    // A phase in which only PE 0 works: `f` returns the figure to keep.
    let mut solo = |f: &mut dyn FnMut() -> f64| -> f64 {
        ctl.sync(me == 0);
        let v = if me == 0 { f() } else { f64::NAN };
        ctl.sync(false);
        v
    };

    let on = |name: &str| o.sections.is_empty() || o.sections.iter().any(|x| x == name);

    // 1. Single-thread put rate: nbi vs nbe vs merged nbe.
    let mut put_sizes = sizes(1, region, 4);
    if !on("rate") {
        put_sizes.clear();
    }
    let mut put_rates = vec![vec![Vec::new(); PUT_KINDS.len()]; put_sizes.len()];
    for (si, &n) in put_sizes.iter().enumerate() {
        for _ in 0..e.samples {
            for (k, v) in put_rates[si].iter_mut().enumerate() {
                let x = solo(&mut || {
                    put_stream(
                        k,
                        Ctx::default_ctx(),
                        data.0,
                        region,
                        bp[0].0,
                        n,
                        target,
                        e.dur,
                    )
                });
                v.push(x / 1e6);
            }
        }
    }

    // 2. Multithreaded 8-byte put rate, and 3. fetch_add rates, with 1..T threads.
    let mt_kinds: [(&str, CtxMode, usize); 3] = [
        ("put_nbi_shared_ctx", CtxMode::Shared, 0),
        ("put_nbi_private_ctx", CtxMode::Private, 0),
        ("put_nbe", CtxMode::Private, 1),
    ];
    let mut mt_rates = vec![vec![Vec::new(); mt_kinds.len()]; t];
    let mut fadd_rates = vec![vec![Vec::new(); FADD_KINDS.len()]; t];
    for tt in (1..=t).filter(|_| on("mt")) {
        for _ in 0..e.samples {
            for (k, &(_, mode, kind)) in mt_kinds.iter().enumerate() {
                let x = solo(&mut || {
                    let start = SpinBarrier::new(tt);
                    on_pinned(tt, 0, |i| {
                        with_ctx(mode, |ctx| {
                            start.wait();
                            let reg = data.at(i * region);
                            put_stream(kind, ctx, reg, region, bp[i].0, 8, target, e.dur)
                        })
                    })
                    .iter()
                    .sum()
                });
                mt_rates[tt - 1][k].push(x / 1e6);
            }
            for (k, v) in fadd_rates[tt - 1].iter_mut().enumerate() {
                let x = solo(&mut || {
                    let start = SpinBarrier::new(tt);
                    on_pinned(tt, 0, |i| {
                        with_ctx(CtxMode::Private, |ctx| {
                            start.wait();
                            fadd_stream(k, ctx, words.at(i * LINE).cast(), target, e.dur)
                        })
                    })
                    .iter()
                    .sum()
                });
                v.push(x / 1e6);
            }
        }
    }

    // 4. Bandwidth with threads: put_nbe, a request per thread.
    let mut bw_sizes = sizes(1, region, 4);
    if !on("bw") {
        bw_sizes.clear();
    }
    let mut bw = vec![vec![Vec::new(); t]; bw_sizes.len()];
    for (si, &n) in bw_sizes.iter().enumerate() {
        for _ in 0..e.samples {
            for tt in 1..=t {
                let x = solo(&mut || {
                    let start = SpinBarrier::new(tt);
                    on_pinned(tt, 0, |i| {
                        with_ctx(CtxMode::Private, |ctx| {
                            start.wait();
                            let reg = data.at(i * region);
                            put_stream(1, ctx, reg, region, bp[i].0, n, target, e.dur)
                        })
                    })
                    .iter()
                    .sum()
                });
                bw[si][tt - 1].push(x * n as f64 / 1e9);
            }
        }
    }

    // 5. Overlap, COMB post-work-wait, one thread.
    let mut ovl = Vec::new();
    for &n in o.overlap_sizes.iter().filter(|_| on("overlap")) {
        for pinned in [false, true] {
            let mut rows = Vec::new();
            solo(&mut || {
                if pinned {
                    pin(0);
                    pin_engine_away_from(Some(0));
                }
                rows = overlap(&e, data.0, bp[0].0, n, target);
                if pinned {
                    unpin();
                    pin_engine_away_from(None);
                }
                0.0
            });
            ovl.push((n, pinned, rows));
        }
    }

    if me == 0 {
        if on("rate") {
            report_put_rates(&r, &put_sizes, &put_rates);
        }
        if on("mt") {
            report_mt(&r, t, &mt_kinds, &mt_rates, &fadd_rates);
        }
        if on("bw") {
            report_bw(&r, t, &bw_sizes, &bw);
        }
        if on("overlap") {
            report_overlap(&r, thr, piece, &ovl);
        }
    }

    // 6. Multithreaded broadcast against the library one (every PE takes part).
    if on("bcast") {
        bcast(&r, &e, &mut ctl, me, npes, t, o.bcast_max);
    }
    // 7. GUPS (every PE, 1..T threads each).
    if on("gups") {
        gups(&r, &e, &mut ctl, me, npes, t, o.gups_words);
    }

    if me == 0 {
        r.targets();
    }
    drop(bufs);
    ctl.free();
    sym_free(words.0);
    sym_free(data.0);
    rshmem_core::finalize();
}

fn report_put_rates(r: &Report, sizes: &[usize], rates: &[Vec<Vec<f64>>]) {
    r.section("put message rate, one thread, Mmsg/s [seed 002 Fig. 3]: windows of up to 64, then quiet / wait");
    r.line(format!(
        "{:>8}  {:>12}  {:>12}  {:>15}  {:>9}  {:>9}",
        "size", "put_nbi", "put_nbe", "put_nbe merged", "nbe/nbi", "merged/nbi"
    ));
    for (si, &n) in sizes.iter().enumerate() {
        let m: Vec<f64> = rates[si].iter().map(|v| median(v)).collect();
        r.line(format!(
            "{:>8}  {:>12.2}  {:>12.2}  {:>15.2}  {:>9.3}  {:>9.3}",
            report::size(n),
            m[0],
            m[1],
            m[2],
            m[1] / m[0],
            m[2] / m[0]
        ));
        for (k, name) in PUT_KINDS.iter().enumerate() {
            r.json(&format!("{name}_msgrate"), Some(n), "rate", m[k], "Mmsg/s");
        }
        r.json(
            "put_nbe_msgrate",
            Some(n),
            "ratio_to_put_nbi",
            m[1] / m[0],
            "x",
        );
    }
}

fn report_mt(
    r: &Report,
    t: usize,
    kinds: &[(&str, CtxMode, usize)],
    mt: &[Vec<Vec<f64>>],
    fadd: &[Vec<Vec<f64>>],
) {
    r.section(&format!(
        "aggregate 8-byte message rate with threads, Mmsg/s [seed 002 Fig. 4, §4.2]{}",
        oversub(t)
    ));
    let mut head = format!("{:>7}", "threads");
    for (name, _, _) in kinds {
        head.push_str(&format!("  {name:>20}"));
    }
    for name in FADD_KINDS {
        head.push_str(&format!("  {name:>14}"));
    }
    r.line(head);
    for tt in 1..=t {
        let mut line = format!("{tt:>7}");
        let extra = [("threads", json!(tt))];
        for (k, (name, _, _)) in kinds.iter().enumerate() {
            let m = median(&mt[tt - 1][k]);
            line.push_str(&format!("  {m:>20.2}"));
            r.json_with(
                &format!("mt_{name}_msgrate"),
                Some(8),
                "rate",
                m,
                "Mmsg/s",
                &extra,
            );
        }
        for (k, name) in FADD_KINDS.iter().enumerate() {
            let m = median(&fadd[tt - 1][k]);
            line.push_str(&format!("  {m:>14.2}"));
            r.json_with(
                &format!("mt_{name}_rate"),
                Some(8),
                "rate",
                m,
                "Mops/s",
                &extra,
            );
        }
        r.line(line);
    }
}

fn report_bw(r: &Report, t: usize, sizes: &[usize], bw: &[Vec<Vec<f64>>]) {
    r.section(&format!(
        "aggregate put_nbe bandwidth with threads, GB/s [seed 002 Fig. 5]{}",
        oversub(t)
    ));
    let mut head = format!("{:>8}", "size");
    for tt in 1..=t {
        head.push_str(&format!("  {:>10}", format!("{tt} thr")));
    }
    r.line(head);
    for (si, &n) in sizes.iter().enumerate() {
        let mut line = format!("{:>8}", report::size(n));
        for tt in 1..=t {
            let m = median(&bw[si][tt - 1]);
            line.push_str(&format!("  {m:>10.3}"));
            r.json_with(
                "mt_put_nbe_bandwidth",
                Some(n),
                "bandwidth",
                m,
                "GB/s",
                &[("threads", json!(tt))],
            );
        }
        r.line(line);
    }
}

/// One row of the overlap table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OvlRow {
    /// Work / communication time asked for.
    pub(crate) ratio: f64,
    /// Communication alone (post + wait), ns.
    pub(crate) comm: f64,
    /// The same transfer as a blocking put (the issuer copies), ns.
    pub(crate) inline: f64,
    /// Work alone, ns.
    pub(crate) work: f64,
    /// Post, work, wait, ns.
    pub(crate) total: f64,
    /// The row whose work equals the blocking put's time (not a ratio of the curve).
    pub(crate) at_inline: bool,
}

impl OvlRow {
    /// Share of the communication hidden behind the work, in percent (OSU/COMB: 100 x
    /// (1 - (total - work) / comm), clamped to 0..100).
    pub(crate) fn overlap(&self) -> f64 {
        (100.0 * (1.0 - (self.total - self.work) / self.comm)).clamp(0.0, 100.0)
    }

    /// Share of a blocking put's time hidden behind the work, in percent: what the engine
    /// saves the issuer against copying the data itself.
    pub(crate) fn hidden(&self) -> f64 {
        (100.0 * (1.0 - (self.total - self.work) / self.inline)).clamp(0.0, 100.0)
    }
}

/// Work fractions of the overlap curve.
const RATIOS: [f64; 9] = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5];

/// COMB post-work-wait for a put_nbe of `n` bytes: communication alone, work alone and
/// both, interleaved, for growing work; then once more with work equal to a blocking
/// put of the same size.
pub(crate) fn overlap(
    e: &Effort,
    dst: *mut u8,
    src: *const u8,
    n: usize,
    pe: usize,
) -> Vec<OvlRow> {
    let ctx = Ctx::default_ctx();
    let batch = ((64 << 10) / n.max(1)).clamp(1, 1000) as u64;
    let samples = if e.quick { 5 } else { 41 };
    let mut comm = |k: u64| {
        for _ in 0..k {
            let mut slot = None;
            put_nbe(ctx, dst, src, n, pe, &mut slot);
            wait(&mut slot);
        }
    };
    let mut inline = |k: u64| {
        for _ in 0..k {
            // SAFETY: `src` is readable for `n` bytes; `dst` is symmetric.
            ok(unsafe { rma::ctx_put(ctx, "shmem_ctx_putmem", dst, src, n, pe as i64) });
        }
    };
    let mut bodies: [Body<'_>; 2] = [&mut comm, &mut inline];
    let s0 = interleaved_fixed(&mut bodies, batch, 3, samples);
    let (tc0, inline0) = (median(&s0[0]), median(&s0[1]));
    let ns_iter = work_ns_per_iter();
    let mut rows = Vec::new();
    let curve = RATIOS.iter().map(|&r| (r, false));
    for (ratio, at_inline) in curve.chain([(inline0 / tc0, true)]) {
        let iters = (ratio * tc0 / ns_iter).round() as u64;
        let mut comm = |k: u64| {
            for _ in 0..k {
                let mut slot = None;
                put_nbe(ctx, dst, src, n, pe, &mut slot);
                wait(&mut slot);
            }
        };
        let mut alone = |k: u64| {
            for _ in 0..k {
                work(iters);
            }
        };
        let mut both = |k: u64| {
            for _ in 0..k {
                let mut slot = None;
                put_nbe(ctx, dst, src, n, pe, &mut slot);
                work(iters);
                wait(&mut slot);
            }
        };
        let mut bodies: [Body<'_>; 3] = [&mut comm, &mut alone, &mut both];
        let s = interleaved_fixed(&mut bodies, batch, 2, samples);
        rows.push(OvlRow {
            ratio,
            comm: median(&s[0]),
            inline: inline0,
            work: median(&s[1]),
            total: median(&s[2]),
            at_inline,
        });
    }
    rows
}

/// `SHMEM_COPY_ENGINE_PIECE` in force (0: transfers are not cut).
fn engine_piece() -> usize {
    rshmem_core::runtime::try_runtime().map_or(0, |rt| rt.config().copy_engine_piece)
}

fn piece_label(piece: usize) -> String {
    match piece {
        0 => "transfers uncut (SHMEM_COPY_ENGINE_PIECE=0)".to_string(),
        p => format!("transfers cut into pieces of >= {}", report::size(p)),
    }
}

fn report_overlap(r: &Report, thr: usize, piece: usize, ovl: &[(usize, bool, Vec<OvlRow>)]) {
    r.section(&format!(
        "communication/computation overlap, COMB post-work-wait, put_nbe, one thread, {} [seed 002 Fig. 6]",
        piece_label(piece)
    ));
    r.line("placement: default = issuer and copy engine placed by the OS (what a program gets); pinned = issuer on core 0, engine lanes on the other cores (diagnostic)");
    r.line("overlap = 1 - (total - work) / comm (COMB; comm = post + wait, in which the waiting thread copies beside the engine); of inline = 1 - (total - work) / inline (the blocking put the engine saves the issuer); the '=inline' row has work equal to the blocking put");
    r.line(format!(
        "{:>8}  {:>9}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>9}  {:>9}",
        "size", "placement", "work/comm", "comm", "inline", "work", "total", "overlap", "of inline"
    ));
    for (n, pinned, rows) in ovl {
        let placement = if *pinned { "pinned" } else { "default" };
        for row in rows {
            let ratio = if row.at_inline {
                format!("={:.2}", row.ratio)
            } else {
                format!("{:.2}", row.ratio)
            };
            r.line(format!(
                "{:>8}  {:>9}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:>8.1}%  {:>8.1}%",
                report::size(*n),
                placement,
                ratio,
                report::ns(row.comm),
                report::ns(row.inline),
                report::ns(row.work),
                report::ns(row.total),
                row.overlap(),
                row.hidden()
            ));
            let extra = [
                ("work_ratio", json!(row.ratio)),
                ("work_equals_inline", json!(row.at_inline)),
                ("placement", json!(placement)),
            ];
            let figures = [
                ("overlap", row.overlap(), "%"),
                ("hidden_of_inline", row.hidden(), "%"),
                ("total", row.total, "ns"),
                ("comm", row.comm, "ns"),
                ("inline", row.inline, "ns"),
            ];
            for (metric, value, unit) in figures {
                r.json_with("overlap_put_nbe", Some(*n), metric, value, unit, &extra);
            }
        }
        if *n < thr || *pinned {
            continue;
        }
        let cut = if piece == 0 { "_uncut" } else { "" };
        let name = format!("{}{cut}", report::size(*n).replace(' ', ""));
        if let Some(row) = rows.iter().find(|x| x.ratio == 1.0 && !x.at_inline) {
            r.target(
                &format!("overlap_put_nbe_{name}"),
                &format!(
                    "COMB, work = comm, default placement: comm {} work {} total {}",
                    report::ns(row.comm),
                    report::ns(row.work),
                    report::ns(row.total)
                ),
                row.overlap(),
                "%",
                Goal::AtLeast(90.0),
            );
        }
        if let Some(row) = rows.iter().find(|x| x.at_inline) {
            r.target(
                &format!("hidden_put_nbe_{name}"),
                &format!(
                    "work = blocking put, default placement: inline {} work {} total {}",
                    report::ns(row.inline),
                    report::ns(row.work),
                    report::ns(row.total)
                ),
                row.hidden(),
                "%",
                Goal::AtLeast(90.0),
            );
        }
        if let Some(row) = rows
            .iter()
            .filter(|x| !x.at_inline)
            .find(|x| x.overlap() >= 90.0)
        {
            r.line(format!(
                "{}: COMB overlap reaches 90% at work/comm = {:.2} ({:.1}%)",
                report::size(*n),
                row.ratio,
                row.overlap()
            ));
        }
    }
    r.line(format!(
        "(transfers below the copy-engine threshold, {}, are copied by the issuing thread at post: nothing is left to overlap)",
        report::size(thr)
    ));
}

/// Multithreaded broadcast (T threads of the root each put a part to every PE) vs the
/// library broadcast, from root 0 to every PE.
#[allow(clippy::too_many_arguments)]
fn bcast(r: &Report, e: &Effort, ctl: &mut Ctl, me: usize, npes: usize, t: usize, max: usize) {
    let sizes = sizes(8, max, 4);
    let max = *sizes.last().unwrap_or(&8);
    let src = Shared(sym_alloc(max, 0xc3));
    let dst = Shared(sym_alloc(max, 0));
    let ctlw = Shared(sym_alloc(2 * LINE, 0).cast::<u64>());
    let (arrive, ack) = (ctlw, Shared(ctlw.at(LINE / 8)));
    let world = ok(team::world());
    let mut arrived = 0u64; // arrivals expected so far (non-roots)
    let mut acked = 0u64; // acknowledgements expected so far (root)
    let others = (npes - 1) as u64;
    // kinds: 0 = library broadcast, k = k threads
    let nk = t + 1;
    let mut lat = vec![vec![Vec::new(); nk]; sizes.len()];
    for (si, &n) in sizes.iter().enumerate() {
        let iters = if e.quick {
            3
        } else {
            ((8 << 20) / n).clamp(8, 200)
        } as u64;
        // SAFETY: our own symmetric block of `max >= n` bytes, unused by peers until the
        // next sync.
        unsafe { std::ptr::write_bytes(dst.0, 0, n) };
        for _ in 0..e.samples {
            for (k, lat_k) in lat[si].iter_mut().enumerate() {
                // The root's main thread (library) or threads (k > 0) take cores 0..,
                // each other PE the next core.
                pin(if me == 0 { 0 } else { k.max(1) + me - 1 });
                ctl.sync(true);
                let t0 = Instant::now();
                let mut thread_time = None;
                let wait_acks = |acked: u64| {
                    // SAFETY: a symmetric u64 of this PE.
                    ok(unsafe {
                        p2p::wait_until("shmem_uint64_wait_until", ack.ptr(), Cmp::Ge, acked)
                    })
                };
                let ack_root = || {
                    // SAFETY: a symmetric u64.
                    ok(unsafe {
                        amo::ctx_atomic::<u64>(
                            Ctx::default_ctx(),
                            "shmem_uint64_atomic_add",
                            ack.ptr(),
                            AmoOp::Add(1),
                            0,
                        )
                    });
                };
                if k == 0 {
                    for _ in 0..iters {
                        // SAFETY: symmetric buffers of `n` bytes, untouched during the call.
                        ok(unsafe {
                            coll::broadcast("shmem_broadcastmem", &world, dst.0, src.0, n, 0)
                        });
                        if me == 0 {
                            acked += others;
                            wait_acks(acked);
                        } else {
                            ack_root();
                        }
                    }
                } else if me == 0 {
                    let start = SpinBarrier::new(k);
                    let base = acked;
                    let times = on_pinned(k, 0, |i| {
                        with_ctx(CtxMode::Private, |ctx| {
                            let (lo, hi) = (i * n / k, (i + 1) * n / k);
                            start.wait();
                            let t0 = Instant::now();
                            for it in 1..=iters {
                                let mut slot = None;
                                if hi > lo {
                                    for pe in 0..npes {
                                        put_nbe(
                                            ctx,
                                            dst.at(lo),
                                            src.at(lo),
                                            hi - lo,
                                            pe,
                                            &mut slot,
                                        );
                                    }
                                }
                                wait(&mut slot);
                                for pe in 1..npes {
                                    // SAFETY: a symmetric u64.
                                    ok(unsafe {
                                        amo::ctx_atomic::<u64>(
                                            ctx,
                                            "shmem_ctx_uint64_atomic_add",
                                            arrive.ptr(),
                                            AmoOp::Add(1),
                                            pe as i64,
                                        )
                                    });
                                }
                                if i == 0 {
                                    wait_acks(base + it * others);
                                }
                                start.wait();
                            }
                            t0.elapsed()
                        })
                    });
                    thread_time = Some(times[0]);
                    acked += iters * others;
                } else {
                    for _ in 0..iters {
                        arrived += k as u64;
                        // SAFETY: a symmetric u64 of this PE.
                        ok(unsafe {
                            p2p::wait_until(
                                "shmem_uint64_wait_until",
                                arrive.ptr(),
                                Cmp::Ge,
                                arrived,
                            )
                        });
                        ack_root();
                    }
                }
                // Root threads time themselves (thread start-up is not timed).
                let per = thread_time.unwrap_or(t0.elapsed()).as_nanos() as f64 / iters as f64;
                ctl.sync(false);
                if me == 0 {
                    lat_k.push(per);
                }
            }
        }
        // Every byte arrived (the source is a constant pattern).
        // SAFETY: our own block, written by the finished broadcasts above.
        let got = unsafe { std::slice::from_raw_parts(dst.0, n) };
        if let Some(i) = got.iter().position(|&b| b != 0xc3) {
            eprintln!(
                "rshmem-bench nbe: PE {me}: broadcast of {n} B: byte {i} is {:#x}",
                got[i]
            );
            rshmem_core::setup::global_exit(3);
        }
    }
    if me == 0 {
        r.section(&format!(
            "broadcast latency from PE 0 to {npes} PEs: library vs k root threads each putting 1/k (put_nbe) [seed 002 Fig. 7]; {} busy threads at most{}",
            t + npes - 1,
            oversub(t + npes - 1)
        ));
        let mut head = format!("{:>8}  {:>10}", "size", "library");
        for k in 1..=t {
            head.push_str(&format!("  {:>10}  {:>6}", format!("{k} thr"), "x"));
        }
        r.line(head);
        for (si, &n) in sizes.iter().enumerate() {
            let lib = median(&lat[si][0]);
            let mut line = format!("{:>8}  {:>10}", report::size(n), report::ns(lib));
            r.json("bcast_library", Some(n), "latency", lib, "ns");
            for (k, lk) in lat[si].iter().enumerate().skip(1) {
                let m = median(lk);
                line.push_str(&format!("  {:>10}  {:>6.2}", report::ns(m), m / lib));
                let extra = [("threads", json!(k))];
                r.json_with("bcast_threads_put_nbe", Some(n), "latency", m, "ns", &extra);
                r.json_with(
                    "bcast_threads_put_nbe",
                    Some(n),
                    "ratio_to_library",
                    m / lib,
                    "x",
                    &extra,
                );
            }
            r.line(line);
        }
        r.line("(latency = mean per broadcast including an acknowledgement from every PE to the root; x = threads / library)");
    }
    unpin();
    ok(rshmem_core::sync::barrier_all());
    sym_free(ctlw.0.cast());
    sym_free(dst.0);
    sym_free(src.0);
}

/// GUPS: random xor (post) and fetch_xor (`_nbe`, windows of 64) updates to a table of
/// `words` u64 per PE, every PE with 1..T threads.
#[allow(clippy::too_many_arguments)]
fn gups(r: &Report, e: &Effort, ctl: &mut Ctl, me: usize, npes: usize, t: usize, words: usize) {
    let words = words.next_power_of_two().max(64);
    let table = Shared(sym_alloc(words * 8, 0).cast::<u64>());
    let total = (words * npes) as u64;
    let shift = words.trailing_zeros();
    let kinds = ["xor", "fetch_xor_nbe"];
    let mut res = vec![vec![Vec::new(); kinds.len()]; t];
    for tt in 1..=t {
        for s in 0..e.samples {
            for (k, _) in kinds.iter().enumerate() {
                ctl.sync(true);
                let start = SpinBarrier::new(tt);
                let v: f64 = on_pinned(tt, 0, |i| {
                    with_ctx(CtxMode::Private, |ctx| {
                        let mut rng = Rng::new((me * 64 + i) as u64 * 1000 + s as u64 + 1);
                        let mut got = [0u64; 64];
                        start.wait();
                        rate_for(e.dur, 4, || {
                            let mut slot = None;
                            for g in got.iter_mut() {
                                let x = rng.next();
                                let idx = ((u128::from(x) * u128::from(total)) >> 64) as u64;
                                let pe = (idx >> shift) as i64;
                                let w = table.at((idx & (words as u64 - 1)) as usize);
                                if k == 0 {
                                    // SAFETY: an aligned u64 of the symmetric table.
                                    ok(unsafe {
                                        amo::ctx_atomic(
                                            ctx,
                                            "shmem_ctx_uint64_atomic_xor",
                                            w,
                                            AmoOp::Xor(x),
                                            pe,
                                        )
                                    });
                                } else {
                                    // SAFETY: `g` is writable, read after the wait; the
                                    // table word is symmetric and aligned.
                                    ok(unsafe {
                                        amo::atomic_nbe(
                                            ctx,
                                            "shmemx_ctx_uint64_atomic_fetch_xor_nbe",
                                            g,
                                            w,
                                            AmoOp::Xor(x),
                                            pe,
                                            &mut slot,
                                        )
                                    });
                                }
                            }
                            if k == 0 {
                                ok(order::ctx_quiet(ctx));
                            } else {
                                wait(&mut slot);
                            }
                            std::hint::black_box(&got);
                            64
                        })
                    })
                })
                .iter()
                .sum();
                ctl.post(me, v);
                ctl.sync(false);
                if me == 0 {
                    let sum: f64 = (0..npes).map(|p| ctl.take(p)).sum();
                    res[tt - 1][k].push(sum / 1e9);
                }
            }
        }
    }
    if me == 0 {
        r.section(&format!(
            "GUPS: random updates to a {} table per PE over {npes} PEs, giga-updates/s [seed 002 Fig. 8]",
            report::size(words * 8)
        ));
        r.line(format!(
            "{:>15}  {:>12}  {:>16}  {}",
            "threads per PE", "xor", "fetch_xor_nbe", "busy threads"
        ));
        for tt in 1..=t {
            let m: Vec<f64> = res[tt - 1].iter().map(|v| median(v)).collect();
            r.line(format!(
                "{tt:>15}  {:>12.4}  {:>16.4}  {}{}",
                m[0],
                m[1],
                tt * npes,
                oversub(tt * npes)
            ));
            for (k, name) in kinds.iter().enumerate() {
                r.json_with(
                    &format!("gups_{name}"),
                    Some(words * 8),
                    "gups",
                    m[k],
                    "GUP/s",
                    &[("threads", json!(tt))],
                );
            }
        }
    }
    ok(rshmem_core::sync::barrier_all());
    sym_free(table.0.cast());
}
