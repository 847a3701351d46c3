//! `threshold`: where handing a non-blocking put to the copy engine starts to pay.
//!
//! Run as `oshrun -np 2 rshmem-bench threshold`. Unless `SHMEM_COPY_ENGINE_THRESHOLD` is
//! set, the command sets it to 1 for its own PEs so that every `put_nbi` goes to the
//! engine. PE 0 puts to PE 1 (PE 1 naps), for each size:
//!
//! Puts go from one private buffer (hot in the issuer's cache, like freshly produced
//! data) to consecutive slots of a 64 MiB symmetric pool (not in the issuer's cache, like
//! a remote buffer):
//!
//! * `inline`: `shmem_putmem` (the issuing thread copies);
//! * `engine`: `shmem_putmem_nbi` + `shmem_quiet` (post + wait, nothing to overlap: the
//!   engine's cost; the waiting thread runs the copy itself if the engine has not started);
//! * with work equal to the inline copy time: `inline + work` (sequential) against
//!   `put_nbi, work, quiet` (overlapped); `hidden` is the share of the copy time saved.
//!
//! Crossovers: the smallest size from which on (every larger size included) the engine
//! gains anything behind equal work, hides at least half the copy, and costs at most
//! 1.1x an inline copy without work. The recommended default threshold is the last (the
//! engine then never costs a program more than copying itself, work or none; rshmem's
//! default, 128K, was set from it); programs that always compute between post and wait
//! may go down to the first. Both are rounded up to a power of two.

use rshmem_core::Ctx;
use rshmem_core::{order, rma};
use serde_json::json;

use crate::report::{self, Report};
use crate::spmd::{
    cores, engine_config, init_multiple, median, ok, pages, pin, pin_engine_away_from, sizes,
    start_engine, sym_alloc, sym_free, unpin, work, work_ns_per_iter, Ctl,
};
use crate::stats::{interleaved_fixed, Body};

/// The variable the command sets for itself.
const VAR: &str = "SHMEM_COPY_ENGINE_THRESHOLD";

/// Medians for one size (ns per operation).
#[derive(Debug, Clone, Copy)]
struct Row {
    n: usize,
    inline: f64,
    engine: f64,
    work: f64,
    seq: f64,
    ovl: f64,
}

impl Row {
    /// Engine post + wait over an inline copy.
    fn cost(&self) -> f64 {
        self.engine / self.inline
    }

    /// Share of the copy time hidden behind equal work.
    fn hidden(&self) -> f64 {
        (self.seq - self.ovl) / self.inline
    }
}

/// The two thread placements measured.
const PLACEMENTS: [&str; 2] = ["default", "pinned"];

/// Measures every size on PE 0: puts from one private buffer (hot in the issuer's cache,
/// like freshly produced data) to consecutive slots of the `pool` bytes at `sym` on
/// `target` (so the destination is not in the issuer's cache, like a remote buffer).
fn measure(sizes: &[usize], sym: *mut u8, pool: usize, target: i64, samples: usize) -> Vec<Row> {
    let max = *sizes.last().unwrap_or(&1);
    let mut buf = pages(max, 0xa5);
    let src = buf.as_mut_ptr().cast::<u8>().cast_const();
    let ns_iter = work_ns_per_iter();
    let mut rows = Vec::new();
    for &n in sizes {
        let batch = ((256 << 10) / n).clamp(1, 64) as u64;
        let slots = (pool / n).max(1);
        let next = std::cell::Cell::new(0usize);
        let dst = || {
            let j = next.get();
            next.set((j + 1) % slots);
            sym.wrapping_add(j * n)
        };
        let put = || {
            // SAFETY: `src` is readable for `max >= n` bytes.
            ok(unsafe { rma::ctx_put(Ctx::default_ctx(), "shmem_putmem", dst(), src, n, target) })
        };
        let nbi = || {
            // SAFETY: as above, and unchanged until the quiet that follows every call.
            ok(unsafe {
                rma::ctx_put_nbi(
                    Ctx::default_ctx(),
                    "shmem_putmem_nbi",
                    dst(),
                    src,
                    n,
                    target,
                )
            })
        };
        let quiet = || ok(order::quiet());
        let mut inline = |k: u64| (0..k).for_each(|_| put());
        let mut engine = |k: u64| {
            for _ in 0..k {
                nbi();
                quiet();
            }
        };
        let mut bodies: [Body<'_>; 2] = [&mut inline, &mut engine];
        let s = interleaved_fixed(&mut bodies, batch, 3, samples);
        let (ti, te) = (median(&s[0]), median(&s[1]));
        let iters = (ti / ns_iter).round() as u64;
        let mut alone = |k: u64| {
            for _ in 0..k {
                work(iters);
            }
        };
        let mut seq = |k: u64| {
            for _ in 0..k {
                put();
                work(iters);
            }
        };
        let mut ovl = |k: u64| {
            for _ in 0..k {
                nbi();
                work(iters);
                quiet();
            }
        };
        let mut bodies: [Body<'_>; 3] = [&mut alone, &mut seq, &mut ovl];
        let s = interleaved_fixed(&mut bodies, batch, 3, samples);
        rows.push(Row {
            n,
            inline: ti,
            engine: te,
            work: median(&s[0]),
            seq: median(&s[1]),
            ovl: median(&s[2]),
        });
    }
    drop(buf);
    rows
}

/// The smallest size from which on every larger size satisfies `ok`.
fn from(rows: &[Row], ok: impl Fn(&Row) -> bool) -> Option<usize> {
    let mut at = None;
    for row in rows.iter().rev() {
        if ok(row) {
            at = Some(row.n);
        } else {
            break;
        }
    }
    at
}

/// `threshold`: the suite.
pub(crate) fn run(quick: bool, min_size: usize, max_size: usize) {
    if std::env::var_os(VAR).is_none() {
        // Before init, while this process has one thread: every put_nbi to the engine.
        std::env::set_var(VAR, "1");
    }
    let (me, npes) = init_multiple("threshold");
    start_engine();
    let (thr, lanes) = engine_config();
    let sizes = sizes(min_size.max(1), max_size.max(min_size), 2);
    let max = *sizes.last().unwrap_or(&1);
    // Destination pool: far larger than a core's caches.
    let pool = (8 * max).max(64 << 20);
    let sym = sym_alloc(pool, 0x5a);
    let mut ctl = Ctl::new(me, npes);
    let target = i64::from(npes > 1);
    let samples = if quick { 5 } else { 31 };

    let mut all = Vec::new();
    for placement in PLACEMENTS {
        ctl.sync(me == 0);
        if me == 0 {
            let pinned = placement == "pinned";
            if pinned {
                pin(0);
                pin_engine_away_from(Some(0));
            }
            all.push(measure(&sizes, sym, pool, target, samples));
            if pinned {
                unpin();
                pin_engine_away_from(None);
            }
        }
        ctl.sync(false);
    }

    if me == 0 {
        let r = Report::new(npes);
        r.line(format!(
            "rshmem-bench threshold: {npes} PEs on {} cores, PE 0 -> PE {target}; engine threshold in force {} ({VAR}), {lanes} lane(s); {} mode",
            cores(),
            report::size(thr),
            if quick { "quick" } else { "full" }
        ));
        r.line("placement: default = issuer and engine placed by the OS; pinned = issuer on core 0, engine lanes on the other cores");
        for (rows, placement) in all.iter().zip(PLACEMENTS) {
            r.section(&format!(
                "copy engine vs inline copy for put_nbi, {placement} placement (ns per put; work = the inline copy time)"
            ));
            r.line(format!(
                "{:>8}  {:>10}  {:>10}  {:>7}  {:>10}  {:>12}  {:>12}  {:>7}",
                "size", "inline", "nbi+quiet", "cost", "work", "put+work", "nbi+work+q", "hidden"
            ));
            let extra = [("placement", json!(placement))];
            for row in rows {
                r.line(format!(
                    "{:>8}  {:>10}  {:>10}  {:>7.2}  {:>10}  {:>12}  {:>12}  {:>6.0}%",
                    report::size(row.n),
                    report::ns(row.inline),
                    report::ns(row.engine),
                    row.cost(),
                    report::ns(row.work),
                    report::ns(row.seq),
                    report::ns(row.ovl),
                    100.0 * row.hidden()
                ));
                let n = Some(row.n);
                r.json_with("engine_inline_put", n, "latency", row.inline, "ns", &extra);
                r.json_with("engine_nbi_quiet", n, "latency", row.engine, "ns", &extra);
                r.json_with(
                    "engine_nbi_quiet",
                    n,
                    "ratio_to_inline",
                    row.cost(),
                    "x",
                    &extra,
                );
                r.json_with("engine_put_then_work", n, "latency", row.seq, "ns", &extra);
                r.json_with("engine_nbi_work_quiet", n, "latency", row.ovl, "ns", &extra);
                r.json_with(
                    "engine_nbi_work_quiet",
                    n,
                    "hidden_share",
                    100.0 * row.hidden(),
                    "%",
                    &extra,
                );
            }
            if thr > rows.first().map_or(0, |x| x.n) {
                r.line(format!(
                    "(sizes below the threshold in force, {}, were copied inline by put_nbi too; unset {VAR} to measure the engine at every size)",
                    report::size(thr)
                ));
            }
            let pays = from(rows, |x| x.hidden() > 0.0);
            let half = from(rows, |x| x.hidden() >= 0.5);
            let cheap = from(rows, |x| x.cost() <= 1.1);
            let show = |v: Option<usize>| v.map_or("none in range".to_string(), report::size);
            r.line(format!(
                "crossover ({placement}): with equal work the engine gains from {} on and hides >= 50% of the copy from {} on; post+wait alone costs <= 1.1x an inline copy from {} on",
                show(pays),
                show(half),
                show(cheap)
            ));
            let rec = cheap.map(|p| p.next_power_of_two());
            let rec_overlap = pays.map(|p| p.next_power_of_two());
            for (metric, v) in [
                ("gain_crossover", pays),
                ("half_hidden_crossover", half),
                ("cost_crossover", cheap),
                ("recommended", rec),
                ("recommended_overlapping", rec_overlap),
            ] {
                r.json_with(
                    "engine_threshold",
                    None,
                    metric,
                    v.map_or(f64::NAN, |x| x as f64),
                    "B",
                    &[
                        ("threshold_in_force", json!(thr)),
                        ("placement", json!(placement)),
                    ],
                );
            }
            r.line(format!(
                "recommended SHMEM_COPY_ENGINE_THRESHOLD ({placement}): {} (the cost crossover: from it on the engine never costs more than an inline copy); {} for programs that always compute between post and wait (the gain crossover)",
                show(rec),
                show(rec_overlap)
            ));
        }
    }
    ctl.free();
    sym_free(sym);
    rshmem_core::finalize();
}
