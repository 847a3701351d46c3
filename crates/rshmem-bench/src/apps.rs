//! `apps`: seed 001 §IV-C/D/E, three application patterns with threads on one context
//! (all threads on `SHMEM_CTX_DEFAULT`) against threads on private contexts.
//!
//! Run as `oshrun -np P rshmem-bench apps --threads T` (every PE and thread works, so P x T
//! threads are busy):
//!
//! * **3-D halo exchange**: the PEs form a periodic 3-D grid, each owns m^3 doubles with a
//!   1-deep halo; an iteration packs the 6 faces, puts them (`put_nbi`) into the
//!   neighbours' receive buffers, quiets, synchronizes and unpacks; the threads share the
//!   faces. Receive buffers alternate between iterations, so one barrier per iteration
//!   suffices.
//! * **ISx-style all-to-all of uneven sizes**: every thread is an issuer with its own keys,
//!   buckets and receive buffer; it sends each bucket to its owner thread, round robin
//!   from its right neighbour, reserving space with a fetch-add on the owner's counter and
//!   writing with `put_nbi` (seed 001: "as if they are individual processes"). Only the
//!   exchange is timed.
//! * **Mandelbrot with work stealing**: the image rows are split evenly over the PEs (the
//!   view is off-centre, so the split is uneven in work); threads take rows with a
//!   fetch-add on their PE's counter, then steal from the next PEs the same way and put
//!   the finished rows back to the owner.
//!
//! Figures: median time per iteration (per image) over interleaved samples, and the
//! speedup of private contexts over the shared one.

use std::time::Instant;

use rshmem_core::{amo, order, rma, sync, AmoOp, Ctx};
use serde_json::json;

use crate::report::{self, Report};
use crate::spmd::{
    cores, engine_config, init_multiple, median, ok, on_pinned, oversub, start_engine, sym_alloc,
    sym_free, with_ctx, CtxMode, Effort, Rng, Shared, SpinBarrier, LINE,
};

/// Options of the `apps` suite.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Opts {
    /// Fewer samples, smaller problems.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Threads per PE (T).
    #[arg(long, default_value_t = 2)]
    pub(crate) threads: usize,
    /// Halo block edges m (m^3 doubles per PE), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "64,192")]
    pub(crate) halo_sizes: Vec<usize>,
    /// ISx keys (u32) per thread.
    #[arg(long, default_value_t = 1 << 20)]
    pub(crate) isx_keys: usize,
    /// Mandelbrot image edge in pixels.
    #[arg(long, default_value_t = 512)]
    pub(crate) mandel_size: usize,
    /// Mandelbrot iteration limit.
    #[arg(long, default_value_t = 512)]
    pub(crate) mandel_iters: u32,
}

const MODES: [CtxMode; 2] = [CtxMode::Shared, CtxMode::Private];

/// Thread `i`'s part of a PE-wide synchronization: every thread quiets its own context
/// first; thread 0 runs `shmem_barrier_all` between two thread barriers.
fn team_sync(bar: &SpinBarrier, i: usize, ctx: &Ctx) {
    ok(order::ctx_quiet(ctx));
    bar.wait();
    if i == 0 {
        ok(sync::barrier_all());
    }
    bar.wait();
}

/// Runs `body(i, ctx, bar)` on `t` threads with contexts of `mode`; the threads of every
/// PE start together (after a PE-wide synchronization) and stop at the next one. Returns
/// thread 0's time from start to stop, in ns (thread start-up and context creation are
/// not timed).
fn timed_run(
    me: usize,
    t: usize,
    mode: CtxMode,
    body: impl Fn(usize, &Ctx, &SpinBarrier) + Sync,
) -> f64 {
    let bar = SpinBarrier::new(t);
    let first = me * t;
    let v = on_pinned(t, first, |i| {
        with_ctx(mode, |ctx| {
            team_sync(&bar, i, ctx);
            let t0 = Instant::now();
            body(i, ctx, &bar);
            team_sync(&bar, i, ctx);
            t0.elapsed().as_nanos() as f64
        })
    });
    v[0]
}

/// One result row.
struct Row {
    app: String,
    params: String,
    size: Option<usize>,
    /// Median ns per iteration, per mode.
    time: [f64; 2],
    /// Work rate per mode (unit in `rate_unit`), if any.
    rate: Option<([f64; 2], &'static str)>,
}

/// `apps`: the suite.
pub(crate) fn run(o: Opts) {
    let (me, npes) = init_multiple("apps");
    let t = o.threads.max(1);
    let e = Effort::new(o.quick);
    let r = Report::new(npes);
    let (thr, _) = engine_config();
    if me == 0 {
        r.line(format!(
            "rshmem-bench apps: {npes} PEs x T = {t} threads = {} busy threads on {} cores{}; copy engine threshold {}; {} mode",
            npes * t,
            cores(),
            oversub(npes * t),
            report::size(thr),
            if o.quick { "quick" } else { "full" }
        ));
    }
    // Lane threads inherit the affinity of the thread that starts them: start them now,
    // before any thread is pinned.
    start_engine();
    let mut rows = Vec::new();
    for &m in &o.halo_sizes {
        rows.push(halo(&e, me, npes, t, m.max(2)));
    }
    rows.push(isx(&e, me, npes, t, o.isx_keys.max(16)));
    rows.push(mandel(
        &e,
        me,
        npes,
        t,
        o.mandel_size.max(8),
        o.mandel_iters.max(1),
    ));

    if me == 0 {
        r.section(&format!(
            "applications, {npes} PEs x {t} threads: single context vs private context per thread [seed 001 Figs. 7-9]"
        ));
        r.line(format!(
            "{:<12} {:<34} {:>12}  {:>12}  {:>8}  {}",
            "app", "parameters", "single ctx", "multi ctx", "speedup", "work rate single / multi"
        ));
        let extra = [("threads", json!(t))];
        for row in &rows {
            let sp = row.time[0] / row.time[1];
            let rate = row.rate.map_or(String::new(), |(v, u)| {
                format!("{:.2} / {:.2} {u}", v[0], v[1])
            });
            r.line(format!(
                "{:<12} {:<34} {:>12}  {:>12}  {:>8.3}  {rate}",
                row.app,
                row.params,
                report::ns(row.time[0]),
                report::ns(row.time[1]),
                sp
            ));
            let bench = format!("app_{}", row.app);
            r.json_with(
                &bench,
                row.size,
                "time_single_ctx",
                row.time[0],
                "ns",
                &extra,
            );
            r.json_with(
                &bench,
                row.size,
                "time_multi_ctx",
                row.time[1],
                "ns",
                &extra,
            );
            r.json_with(&bench, row.size, "speedup_multi_vs_single", sp, "x", &extra);
            if let Some((v, u)) = row.rate {
                r.json_with(&bench, row.size, "rate_single_ctx", v[0], u, &extra);
                r.json_with(&bench, row.size, "rate_multi_ctx", v[1], u, &extra);
            }
        }
        r.line("(time = median per iteration / image; speedup = single-context time / multi-context time)");
    }
    ok(sync::barrier_all());
    rshmem_core::finalize();
}

/// Factors `n` into a near-cubic 3-D grid (largest first).
fn grid3(n: usize) -> [usize; 3] {
    let mut best = [n, 1, 1];
    let mut score = usize::MAX;
    for a in 1..=n {
        if !n.is_multiple_of(a) {
            continue;
        }
        for b in 1..=n / a {
            if !(n / a).is_multiple_of(b) {
                continue;
            }
            let c = n / a / b;
            let s = a.max(b).max(c) - a.min(b).min(c);
            if s < score {
                score = s;
                let mut g = [a, b, c];
                g.sort_unstable_by(|x, y| y.cmp(x));
                best = g;
            }
        }
    }
    best
}

/// Copies the m x m interior points of plane `p` (0..=m+1) across face `f`'s axis
/// (`f / 2`: 0 = i, 1 = j, 2 = k) of an (m+2)^3 grid into a packed buffer (`pack`) or
/// back.
///
/// # Safety
/// `grid` holds (m+2)^3 doubles and `buf` m^2; no other thread accesses the points
/// written.
unsafe fn face_copy(grid: *mut f64, buf: *mut f64, m: usize, f: usize, p: usize, pack: bool) {
    let e2 = m + 2;
    let idx = |i: usize, j: usize, k: usize| (i * e2 + j) * e2 + k;
    for u in 1..=m {
        let b = buf.wrapping_add((u - 1) * m);
        if f / 2 < 2 {
            // Rows along k are contiguous.
            let g = grid.wrapping_add(if f / 2 == 0 {
                idx(p, u, 1)
            } else {
                idx(u, p, 1)
            });
            // SAFETY: m doubles in bounds of both (the caller's contract).
            unsafe {
                if pack {
                    std::ptr::copy_nonoverlapping(g, b, m);
                } else {
                    std::ptr::copy_nonoverlapping(b, g, m);
                }
            }
        } else {
            for w in 1..=m {
                let g = grid.wrapping_add(idx(u, w, p));
                // SAFETY: in bounds (the caller's contract).
                unsafe {
                    if pack {
                        *b.add(w - 1) = *g;
                    } else {
                        *g = *b.add(w - 1);
                    }
                }
            }
        }
    }
}

/// The 3-D halo exchange on an m^3 block per PE.
fn halo(e: &Effort, me: usize, npes: usize, t: usize, m: usize) -> Row {
    let g = grid3(npes);
    let c = [me % g[0], (me / g[0]) % g[1], me / (g[0] * g[1])];
    let pe_at = |x: [usize; 3]| x[0] + g[0] * (x[1] + g[1] * x[2]);
    // Face f: axis f / 2, side f % 2 (0 = low, 1 = high); its neighbour and opposite.
    let nb: Vec<usize> = (0..6)
        .map(|f| {
            let (a, s) = (f / 2, f % 2);
            let mut x = c;
            x[a] = if s == 1 {
                (c[a] + 1) % g[a]
            } else {
                (c[a] + g[a] - 1) % g[a]
            };
            pe_at(x)
        })
        .collect();
    let face = m * m;
    let e2 = m + 2;
    let mut grid: Vec<f64> = vec![me as f64; e2 * e2 * e2];
    let mut send: Vec<f64> = vec![0.0; 6 * face];
    let recv = Shared(sym_alloc(2 * 6 * face * 8, 0).cast::<f64>());
    let (gp, sp) = (Shared(grid.as_mut_ptr()), Shared(send.as_mut_ptr()));
    let idx = move |i: usize, j: usize, k: usize| (i * e2 + j) * e2 + k;
    let iters = if e.quick { 2 } else { 20 };
    let mut it_global = 0usize;
    let mut time = [Vec::new(), Vec::new()];
    for sample in 0..=e.samples {
        for (mi, &mode) in MODES.iter().enumerate() {
            let ns = timed_run(me, t, mode, |i, ctx, bar| {
                for it in it_global..it_global + iters {
                    let parity = it % 2;
                    for f in (i..6).step_by(t) {
                        let s = sp.at(f * face);
                        let p = if f % 2 == 0 { 1 } else { m };
                        // SAFETY: face f's send buffer is this thread's alone, and the
                        // grid is only read while packing (halos are written after a
                        // barrier, interiors never).
                        unsafe { face_copy(gp.ptr(), s, m, f, p, true) };
                        let opp = f ^ 1;
                        let dst = recv.at((parity * 6 + opp) * face);
                        // SAFETY: the send buffer holds `face` doubles and is untouched
                        // until this thread's quiet below.
                        ok(unsafe {
                            rma::ctx_put_nbi(
                                ctx,
                                "shmem_ctx_putmem_nbi",
                                dst.cast(),
                                s.cast(),
                                face * 8,
                                nb[f] as i64,
                            )
                        });
                    }
                    team_sync(bar, i, ctx);
                    for f in (i..6).step_by(t) {
                        let src = recv.at((parity * 6 + f) * face);
                        let p = if f % 2 == 0 { 0 } else { m + 1 };
                        // SAFETY: halo plane f is written by this thread only, and the
                        // receive buffer of this parity is complete (barrier above)
                        // and not written again before the next barrier.
                        unsafe { face_copy(gp.ptr(), src, m, f, p, false) };
                    }
                }
            });
            if sample > 0 {
                time[mi].push(ns / iters as f64);
            }
            it_global += iters;
        }
    }
    ok(sync::barrier_all());
    sym_free(recv.0.cast());
    // Every halo came from a neighbour: its value is the neighbour's PE number.
    for (f, &from) in nb.iter().enumerate() {
        let p = if f % 2 == 0 { 0 } else { m + 1 };
        let v = match f / 2 {
            0 => grid[idx(p, 1, m)],
            1 => grid[idx(m, p, 1)],
            _ => grid[idx(1, m, p)],
        };
        if v != from as f64 {
            eprintln!("rshmem-bench apps: PE {me}: halo face {f} holds {v}, not {from}");
            rshmem_core::setup::global_exit(3);
        }
    }
    Row {
        app: "halo3d".into(),
        params: format!(
            "{m}^3/PE, grid {}x{}x{}, face {}",
            g[0],
            g[1],
            g[2],
            report::size(face * 8)
        ),
        size: Some(face * 8),
        time: [median(&time[0]), median(&time[1])],
        rate: None,
    }
}

/// ISx-style exchange: `keys` u32 keys per issuer (thread).
fn isx(e: &Effort, me: usize, npes: usize, t: usize, keys: usize) -> Row {
    let gn = npes * t;
    let range: u64 = 1 << 20; // keys per bucket range
    let cap = 2 * keys + 4096;
    let recv = Shared(sym_alloc(t * cap * 4, 0).cast::<u32>());
    let counters = Shared(sym_alloc(2 * t * LINE, 0).cast::<u64>());
    let counter = |parity: usize, i: usize| counters.at((parity * t + i) * LINE / 8);
    // Keys, bucketed by destination issuer (untimed, as in seed 001).
    let mut send: Vec<Vec<u32>> = Vec::new();
    let mut starts: Vec<Vec<usize>> = Vec::new();
    for i in 0..t {
        let gid = me * t + i;
        let mut rng = Rng::new(0x15c0 + gid as u64);
        let mut buckets = vec![Vec::new(); gn];
        for _ in 0..keys {
            let k = (rng.next() % (range * gn as u64)) as u32;
            buckets[(u64::from(k) / range) as usize].push(k);
        }
        let mut st = vec![0usize];
        for b in &buckets {
            st.push(st.last().unwrap_or(&0) + b.len());
        }
        send.push(buckets.concat());
        starts.push(st);
    }
    let iters = if e.quick { 2 } else { 20 };
    let mut it_global = 0usize;
    let mut time = [Vec::new(), Vec::new()];
    let sends: Vec<Shared<u32>> = send.iter_mut().map(|v| Shared(v.as_mut_ptr())).collect();
    for sample in 0..=e.samples {
        for (mi, &mode) in MODES.iter().enumerate() {
            let ns = timed_run(me, t, mode, |i, ctx, bar| {
                let gid = me * t + i;
                for it in it_global..it_global + iters {
                    let parity = it % 2;
                    // The other parity's counter was last used before the previous
                    // barrier and is next used after the next one.
                    // SAFETY: a symmetric u64 of this PE.
                    ok(unsafe {
                        amo::ctx_atomic(
                            ctx,
                            "shmem_ctx_uint64_atomic_set",
                            counter(1 - parity, i),
                            AmoOp::Set(0),
                            me as i64,
                        )
                    });
                    for k in 1..=gn {
                        let d = (gid + k) % gn;
                        let (lo, hi) = (starts[i][d], starts[i][d + 1]);
                        if hi == lo {
                            continue;
                        }
                        let (dpe, dt) = (d / t, d % t);
                        let n = (hi - lo) as u64;
                        // SAFETY: a symmetric u64.
                        let off = ok(unsafe {
                            amo::ctx_atomic(
                                ctx,
                                "shmem_ctx_uint64_atomic_fetch_add",
                                counter(parity, dt),
                                AmoOp::Add(n),
                                dpe as i64,
                            )
                        }) as usize;
                        assert!(off + n as usize <= cap, "ISx receive buffer overflow");
                        // SAFETY: the send buffer holds the bucket and is not changed
                        // (it is read-only during the exchange).
                        ok(unsafe {
                            rma::ctx_put_nbi(
                                ctx,
                                "shmem_ctx_putmem_nbi",
                                recv.at(dt * cap + off).cast(),
                                sends[i].at(lo).cast(),
                                (hi - lo) * 4,
                                dpe as i64,
                            )
                        });
                    }
                    team_sync(bar, i, ctx);
                }
            });
            if sample > 0 {
                time[mi].push(ns / iters as f64);
            }
            it_global += iters;
        }
    }
    ok(sync::barrier_all());
    // The last exchange's keys all belong to their receiver.
    let last = (it_global - 1) % 2;
    for i in 0..t {
        let gid = (me * t + i) as u64;
        // SAFETY: a symmetric u64 of this PE; no exchange is running.
        let n = ok(unsafe {
            amo::ctx_atomic(
                Ctx::default_ctx(),
                "shmem_uint64_atomic_fetch",
                counter(last, i),
                AmoOp::Fetch,
                me as i64,
            )
        }) as usize;
        // SAFETY: our own receive buffer, `n <= cap` keys written by the finished exchange.
        let got = unsafe { std::slice::from_raw_parts(recv.at(i * cap), n) };
        if let Some(k) = got.iter().find(|&&k| u64::from(k) / range != gid) {
            eprintln!(
                "rshmem-bench apps: PE {me} thread {i}: ISx received key {k} of another bucket"
            );
            rshmem_core::setup::global_exit(3);
        }
    }
    ok(sync::barrier_all());
    sym_free(counters.0.cast());
    sym_free(recv.0.cast());
    Row {
        app: "isx".into(),
        params: format!(
            "{keys} keys/thread, {gn} issuers, ~{} msgs",
            report::size(keys * 4 / gn)
        ),
        size: Some(keys * 4),
        time: [median(&time[0]), median(&time[1])],
        rate: None,
    }
}

/// Iterations of z <- z^2 + c before |z| > 2 (at most `max`).
fn escape(cx: f64, cy: f64, max: u32) -> u32 {
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < max && x * x + y * y <= 4.0 {
        let xt = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = xt;
        i += 1;
    }
    i
}

/// Mandelbrot of `size` x `size` pixels with row stealing across PEs.
fn mandel(e: &Effort, me: usize, npes: usize, t: usize, size: usize, max: u32) -> Row {
    let (w, h) = (size, size);
    let first = |p: usize| p * h / npes;
    let rows_of = |p: usize| first(p + 1) - first(p);
    let image = Shared(sym_alloc(w * h * 4, 0).cast::<u32>());
    let ctlw = Shared(sym_alloc(2 * LINE, 0).cast::<u64>());
    let (next, done) = (ctlw, Shared(ctlw.at(LINE / 8)));
    // An off-centre view: the rows near the real axis (low PE numbers) cost most.
    let (x0, x1, y0, y1) = (-2.2f64, 0.8f64, -0.25f64, 1.35f64);
    let mut expected = 0u64;
    let mut time = [Vec::new(), Vec::new()];
    for sample in 0..=e.samples {
        for (mi, &mode) in MODES.iter().enumerate() {
            // SAFETY: a symmetric u64 of this PE; nobody steals before the barrier.
            ok(unsafe {
                amo::ctx_atomic(
                    Ctx::default_ctx(),
                    "shmem_uint64_atomic_set",
                    next.ptr(),
                    AmoOp::Set(0),
                    me as i64,
                )
            });
            let ns = timed_run(me, t, mode, |_, ctx, _| {
                let mut row = vec![0u32; w];
                let mut pixels = 0u64;
                let mut victim = me;
                let mut tried = 0;
                while tried < npes {
                    // SAFETY: a symmetric u64.
                    let c = ok(unsafe {
                        amo::ctx_atomic(
                            ctx,
                            "shmem_ctx_uint64_atomic_fetch_add",
                            next.ptr(),
                            AmoOp::Add(1),
                            victim as i64,
                        )
                    }) as usize;
                    if c >= rows_of(victim) {
                        tried += 1;
                        victim = (victim + 1) % npes;
                        continue;
                    }
                    let y = first(victim) + c;
                    let cy = y0 + (y1 - y0) * y as f64 / h as f64;
                    for (x, px) in row.iter_mut().enumerate() {
                        *px = escape(x0 + (x1 - x0) * x as f64 / w as f64, cy, max);
                    }
                    // SAFETY: `row` holds `w` u32; the image row is symmetric.
                    ok(unsafe {
                        rma::ctx_put(
                            ctx,
                            "shmem_ctx_putmem",
                            image.at(y * w).cast(),
                            row.as_ptr().cast(),
                            w * 4,
                            victim as i64,
                        )
                    });
                    pixels += w as u64;
                }
                // SAFETY: a symmetric u64.
                ok(unsafe {
                    amo::ctx_atomic(
                        ctx,
                        "shmem_ctx_uint64_atomic_add",
                        done.ptr(),
                        AmoOp::Add(pixels),
                        0,
                    )
                });
            });
            if sample > 0 {
                time[mi].push(ns);
            }
            expected += (w * h) as u64;
        }
    }
    if me == 0 {
        // SAFETY: a symmetric u64 of this PE; every thread added before its barrier.
        let got = ok(unsafe {
            amo::ctx_atomic(
                Ctx::default_ctx(),
                "shmem_uint64_atomic_fetch",
                done.ptr(),
                AmoOp::Fetch,
                0,
            )
        });
        if got != expected {
            eprintln!("rshmem-bench apps: Mandelbrot computed {got} pixels, not {expected}");
            rshmem_core::setup::global_exit(3);
        }
    }
    ok(sync::barrier_all());
    sym_free(ctlw.0.cast());
    sym_free(image.0.cast());
    let tm = [median(&time[0]), median(&time[1])];
    let px = (w * h) as f64;
    Row {
        app: "mandelbrot".into(),
        params: format!("{w}x{h}, <= {max} iterations, row stealing"),
        size: Some(w * h),
        time: tm,
        rate: Some(([px / tm[0] * 1e3, px / tm[1] * 1e3], "Mpixel/s")),
    }
}

#[cfg(test)]
mod tests {
    use super::grid3;

    #[test]
    fn grids() {
        assert_eq!(grid3(1), [1, 1, 1]);
        assert_eq!(grid3(2), [2, 1, 1]);
        assert_eq!(grid3(8), [2, 2, 2]);
        assert_eq!(grid3(12), [3, 2, 2]);
    }
}
