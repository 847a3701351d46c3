//! The suites that run as PEs: `pe` (2 PEs: limits, RMA, AMOs, ping-pong, barrier) and
//! `barrier` (any number of PEs). PE 0 measures and prints; the others take part.
//!
//! The raw limits (memmove, CPU atomics and cache-line ping-pongs through `shmem_ptr`) need
//! the peer mapped into this process. When it is not (a network transport, for example
//! `SHMEM_TRANSPORT=ucx`), `pe` skips them and the targets defined against them, and says so.

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::time::Duration;

use rshmem_core::Ctx;
use rshmem_core::{
    amo, memory, order, p2p, rma, setup, signal, sync, AmoOp, Cmp, SignalOp, ThreadLevel,
};

use crate::report::{self, Goal, Report};
use crate::spmd::pages;
use crate::stats::{interleaved, interleaved_fixed, Body, Lat};

/// Ends the job on a runtime error.
pub(crate) fn ok<T>(r: rshmem_core::Result<T>) -> T {
    r.unwrap_or_else(|e| rshmem_core::fatal(&e))
}

/// How long and how thoroughly to measure.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Effort {
    /// Samples of latency batches.
    lat_samples: usize,
    /// Duration of one latency batch.
    lat_batch: Duration,
    /// Trials of bandwidth runs.
    bw_trials: usize,
    /// Duration of one bandwidth trial.
    bw_trial: Duration,
    /// Samples of fixed-size two-PE batches (ping-pongs, barriers).
    sync_samples: usize,
}

impl Effort {
    /// Over a network transport an operation takes microseconds: latency batches of
    /// 500 us instead of 10, so that they still hold tens of operations (the figure is
    /// then the pipelined cost, as on shared memory, not one operation and its quiet).
    pub(crate) fn for_network(self) -> Effort {
        Effort {
            lat_batch: self.lat_batch.max(Duration::from_micros(500)),
            ..self
        }
    }

    pub(crate) fn new(quick: bool) -> Effort {
        if quick {
            Effort {
                lat_samples: 15,
                lat_batch: Duration::from_micros(10),
                bw_trials: 3,
                bw_trial: Duration::from_micros(500),
                sync_samples: 60,
            }
        } else {
            Effort {
                lat_samples: 101,
                lat_batch: Duration::from_micros(10),
                bw_trials: 11,
                bw_trial: Duration::from_millis(2),
                sync_samples: 600,
            }
        }
    }
}

/// Spacing of the control words: two cache lines, so that the adjacent-line prefetcher
/// never couples two of them.
const LINE: usize = 128;
/// Slots of the control block: one word (or data word + flag on one cache line) each.
const RAW: usize = 0;
const RAW_PAUSE: usize = 1;
const PP_PUT: usize = 2;
const PP_FENCE: usize = 3;
const PP_SIG: usize = 4;
const AMO_WORD: usize = 5;
const CTL_LINES: usize = 6;

/// Round trips (or barriers) per timed batch.
const SYNC_BATCH: u64 = 32;

/// A word in one of this PE's control lines.
fn word(ctl: *mut u8, line: usize, w: usize) -> *mut u64 {
    ctl.wrapping_add(line * LINE + w * 8).cast()
}

/// The atomic view of a symmetric word (local or through `shmem_ptr`).
fn atomic(p: *mut u64) -> &'static AtomicU64 {
    assert!(!p.is_null() && p.is_aligned());
    // SAFETY: `p` is an aligned word of a symmetric heap (ours, or a peer's mapped here by
    // the shm transport), which stays mapped until finalize, after every use; all
    // concurrent accesses to it are atomic.
    unsafe { AtomicU64::from_ptr(p) }
}

/// The raw counterpart of an AMO: the same CPU atomic with the same orderings, straight
/// on a pointer.
#[inline(always)]
fn raw_amo(a: &AtomicU64, op: AmoOp<u64>) -> u64 {
    match op {
        AmoOp::Fetch => a.load(Acquire),
        AmoOp::Set(v) => {
            a.store(v, Release);
            v
        }
        AmoOp::Swap(v) => a.swap(v, AcqRel),
        AmoOp::CompareSwap { cond, value } => {
            match a.compare_exchange(cond, value, AcqRel, Acquire) {
                Ok(x) | Err(x) => x,
            }
        }
        AmoOp::Add(v) => a.fetch_add(v, AcqRel),
        AmoOp::And(v) => a.fetch_and(v, AcqRel),
        AmoOp::Or(v) => a.fetch_or(v, AcqRel),
        AmoOp::Xor(v) => a.fetch_xor(v, AcqRel),
    }
}

/// `shmem_init`, or exit with its error.
pub(crate) fn init() {
    if let Err(e) = rshmem_core::init(ThreadLevel::Single) {
        eprintln!("rshmem-bench: shmem_init failed: {e}");
        std::process::exit(1);
    }
}

/// `pe`: the 2-PE suite.
pub(crate) fn run_pe(quick: bool, max_size: usize) {
    init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    if npes != 2 {
        if me == 0 {
            eprintln!("rshmem-bench pe: run me on exactly 2 PEs (oshrun -np 2), not {npes}");
        }
        setup::global_exit(2);
    }
    let peer = 1 - me as i64;
    let mut e = Effort::new(quick);
    let max_size = max_size.next_power_of_two();

    // Symmetric memory: a large buffer (put destination, get source) and control lines.
    let sym = ok(memory::align("shmem_align", 4096, max_size));
    let ctl = ok(memory::align("shmem_align", LINE, CTL_LINES * LINE));
    // SAFETY: both blocks were just allocated in our own heap with these sizes; touching
    // every page now keeps page faults out of the measurements.
    unsafe {
        std::ptr::write_bytes(sym, 0x5a, max_size);
        std::ptr::write_bytes(ctl, 0, CTL_LINES * LINE);
    }
    ok(sync::barrier_all());
    // Load/store access to the peer (shared memory) or none (a network transport).
    let mapped = !ok(setup::ptr(ctl as usize, peer)).is_null();
    if !mapped {
        e = e.for_network();
    }

    let r = Report::new(npes);
    if me == 0 {
        r.line(format!(
            "rshmem-bench pe: {npes} PEs, PE 0 measures against PE 1; {} mode",
            if quick { "quick" } else { "full" }
        ));
        if !mapped {
            r.line(
                "PE 1 is not mapped here (shmem_ptr is NULL: a network transport such as \
                 SHMEM_TRANSPORT=ucx): the raw shmem_ptr limits and the shared-memory targets \
                 are skipped; latency batches of 500 us",
            );
        }
        r.line(
            "latency = median / min over batches of the per-op mean; bandwidth = median of trials; \
             ratio = figure / limit measured in this run (for bandwidth: fraction of memcpy reached)",
        );
        one_sided(&r, &e, sym, ctl, peer, max_size, mapped);
    }
    ok(sync::barrier_all());
    two_sided(&r, &e, me, ctl, peer, mapped);
    ok(sync::barrier_all());
    if me == 0 {
        r.targets();
    }
    ok(memory::free("shmem_free", ctl));
    ok(memory::free("shmem_free", sym));
    rshmem_core::finalize();
}

/// Everything PE 0 measures alone while PE 1 waits in a barrier: memcpy, put, get,
/// message rate, AMOs. `mapped`: PE 1 is load/store accessible (the raw limits exist).
fn one_sided(
    r: &Report,
    e: &Effort,
    sym: *mut u8,
    ctl: *mut u8,
    peer: i64,
    max_size: usize,
    mapped: bool,
) {
    let src = pages(max_size, 0xa5);
    let mut dst = pages(max_size, 0x3c);
    let (s, d) = (src.as_ptr().cast::<u8>(), dst.as_mut_ptr().cast::<u8>());

    let sizes: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|&n| n <= max_size)
        .collect();

    // Per size: [memcpy, put, get] latency and bandwidth, interleaved.
    let mut lat = Vec::new();
    let mut bw = Vec::new();
    for &n in &sizes {
        let mut memcpy = |k: u64| {
            for _ in 0..k {
                // SAFETY: both private buffers hold `max_size >= n` bytes and do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(black_box(s), black_box(d), black_box(n)) }
            }
        };
        let mut put = |k: u64| {
            for _ in 0..k {
                // SAFETY: `s` is readable for `n <= max_size` bytes.
                ok(unsafe {
                    rma::ctx_put(
                        Ctx::default_ctx(),
                        "shmem_putmem",
                        black_box(sym),
                        black_box(s),
                        black_box(n),
                        peer,
                    )
                });
            }
            // Completes the batch's puts (nothing to wait for on shared memory; over a
            // network they would otherwise still be in flight in the next batch).
            ok(order::quiet());
        };
        let mut get = |k: u64| {
            for _ in 0..k {
                // SAFETY: `d` is writable for `n <= max_size` bytes.
                ok(unsafe {
                    rma::ctx_get(
                        Ctx::default_ctx(),
                        "shmem_getmem",
                        black_box(d),
                        black_box(sym),
                        black_box(n),
                        peer,
                    )
                });
            }
        };
        let mut bodies: [Body<'_>; 3] = [&mut memcpy, &mut put, &mut get];
        let l = interleaved(&mut bodies, e.lat_batch, e.lat_samples);
        let b = interleaved(&mut bodies, e.bw_trial, e.bw_trials);
        lat.push(l.iter().map(|x| Lat::of(x)).collect::<Vec<_>>());
        // bytes per ns = GB/s
        bw.push(
            b.iter()
                .map(|x| n as f64 / Lat::of(x).median)
                .collect::<Vec<_>>(),
        );
    }
    drop(dst);
    drop(src);

    r.section("put / get latency, PE 0 -> PE 1 (limit: memcpy of the same size)");
    r.line(format!(
        "{:>8}  {:>19}  {:>19}  {:>6}  {:>19}  {:>6}",
        "size", "memcpy med / min", "put med / min", "x", "get med / min", "x"
    ));
    for (i, &n) in sizes.iter().enumerate() {
        let [m, p, g] = [lat[i][0], lat[i][1], lat[i][2]];
        r.line(format!(
            "{:>8}  {:>19}  {:>19}  {:>6.2}  {:>19}  {:>6.2}",
            report::size(n),
            format!("{} / {}", report::ns(m.median), report::ns(m.min)),
            format!("{} / {}", report::ns(p.median), report::ns(p.min)),
            p.median / m.median,
            format!("{} / {}", report::ns(g.median), report::ns(g.min)),
            g.median / m.median,
        ));
    }
    r.section("put / get bandwidth, PE 0 -> PE 1 (GB/s = 1e9 B/s; x = fraction of memcpy)");
    r.line(format!(
        "{:>8}  {:>10}  {:>10}  {:>6}  {:>10}  {:>6}",
        "size", "memcpy", "put", "x", "get", "x"
    ));
    for (i, &n) in sizes.iter().enumerate() {
        let [m, p, g] = [bw[i][0], bw[i][1], bw[i][2]];
        r.line(format!(
            "{:>8}  {:>10.2}  {:>10.2}  {:>6.3}  {:>10.2}  {:>6.3}",
            report::size(n),
            m,
            p,
            p / m,
            g,
            g / m
        ));
    }
    for (i, &n) in sizes.iter().enumerate() {
        for (k, bench) in ["memcpy", "put", "get"].into_iter().enumerate() {
            r.json(bench, Some(n), "latency_median", lat[i][k].median, "ns");
            r.json(bench, Some(n), "latency_min", lat[i][k].min, "ns");
            r.json(bench, Some(n), "bandwidth", bw[i][k], "GB/s");
            if k > 0 {
                r.json(
                    bench,
                    Some(n),
                    "latency_ratio_to_memcpy",
                    lat[i][k].median / lat[i][0].median,
                    "x",
                );
                r.json(
                    bench,
                    Some(n),
                    "bandwidth_ratio_to_memcpy",
                    bw[i][k] / bw[i][0],
                    "x",
                );
            }
        }
    }
    if let Some(i) = sizes.iter().position(|&n| n == 1 << 20).filter(|_| mapped) {
        r.target(
            "put_1MiB_bandwidth_vs_memcpy",
            &format!("put {:.2} GB/s / memcpy {:.2} GB/s", bw[i][1], bw[i][0]),
            bw[i][1] / bw[i][0],
            "x",
            Goal::AtLeast(0.9),
        );
    }

    message_rate(r, e, sym, peer, mapped);
    amos(r, e, ctl, peer, mapped);
}

/// 8-byte puts back to back (to a 512-byte window), one quiet per batch; the limit (raw
/// memmove through `shmem_ptr`) only when `mapped`.
fn message_rate(r: &Report, e: &Effort, sym: *mut u8, peer: i64, mapped: bool) {
    const WINDOW: u64 = 64;
    let val = [7u8; 8];
    let s = val.as_ptr();
    let remote = ok(setup::ptr(sym as usize, peer));
    let mut raw = |k: u64| {
        for j in 0..k {
            let off = ((j % WINDOW) * 8) as usize;
            // SAFETY: `remote` maps the peer's symmetric buffer of at least 512 bytes (this
            // body only runs when `mapped`, i.e. `remote` is not null).
            unsafe { std::ptr::copy(black_box(s), remote.add(off), black_box(8)) }
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    };
    let mut put = |k: u64| {
        for j in 0..k {
            let off = ((j % WINDOW) * 8) as usize;
            // SAFETY: `s` is readable for 8 bytes.
            ok(unsafe {
                rma::ctx_put(
                    Ctx::default_ctx(),
                    "shmem_putmem",
                    sym.wrapping_add(off),
                    black_box(s),
                    black_box(8),
                    peer,
                )
            });
        }
        ok(order::quiet());
    };
    let mut nbi = |k: u64| {
        for j in 0..k {
            let off = ((j % WINDOW) * 8) as usize;
            // SAFETY: `s` is readable for 8 bytes and unchanged until the quiet below.
            ok(unsafe {
                rma::ctx_put_nbi(
                    Ctx::default_ctx(),
                    "shmem_putmem_nbi",
                    sym.wrapping_add(off),
                    black_box(s),
                    black_box(8),
                    peer,
                )
            });
        }
        ok(order::quiet());
    };
    let samples = e.lat_samples.min(31);
    // [raw, put, put_nbi]; NaN for a limit that cannot be measured.
    let rate: Vec<f64> = if mapped && !remote.is_null() {
        let mut bodies: [Body<'_>; 3] = [&mut raw, &mut put, &mut nbi];
        let t = interleaved(&mut bodies, e.bw_trial, samples);
        t.iter().map(|x| 1e3 / Lat::of(x).median).collect()
    } else {
        let mut bodies: [Body<'_>; 2] = [&mut put, &mut nbi];
        let t = interleaved(&mut bodies, e.bw_trial, samples);
        std::iter::once(f64::NAN)
            .chain(t.iter().map(|x| 1e3 / Lat::of(x).median))
            .collect()
    };
    r.section("8-byte put message rate (limit: raw 8-byte memmove through shmem_ptr)");
    r.line(format!("{:<26} {:>12} {:>8}", "", "Mmsg/s", "x"));
    for (k, name) in ["raw memmove (limit)", "shmem_putmem", "shmem_putmem_nbi"]
        .into_iter()
        .enumerate()
    {
        if rate[k].is_nan() {
            r.line(format!("{name:<26} {:>12} {:>8}", "n/a", "-"));
        } else if rate[0].is_nan() {
            r.line(format!("{:<26} {:>12.3} {:>8}", name, rate[k], "-"));
        } else {
            r.line(format!(
                "{:<26} {:>12.1} {:>8.3}",
                name,
                rate[k],
                rate[k] / rate[0]
            ));
        }
    }
    for (k, bench) in ["raw_memmove", "put", "put_nbi"].into_iter().enumerate() {
        if rate[k].is_nan() {
            continue;
        }
        r.json(
            &format!("{bench}_msgrate"),
            Some(8),
            "rate",
            rate[k],
            "Mmsg/s",
        );
        if k > 0 && !rate[0].is_nan() {
            r.json(
                &format!("{bench}_msgrate"),
                Some(8),
                "ratio_to_raw_memmove",
                rate[k] / rate[0],
                "x",
            );
        }
    }
    // The 50 M/s target is a shared-memory one.
    if mapped {
        r.target(
            "put_8B_message_rate",
            &format!(
                "shmem_putmem, {:.3}x the raw memmove rate",
                rate[1] / rate[0]
            ),
            rate[1],
            "M/s",
            Goal::AtLeast(50.0),
        );
    }
}

/// Every AMO on a u64 of PE 1, against the same CPU atomic through `shmem_ptr` (when
/// `mapped`).
fn amos(r: &Report, e: &Effort, ctl: *mut u8, peer: i64, mapped: bool) {
    let w = word(ctl, AMO_WORD, 0);
    let raw_word = if mapped {
        Some(atomic(ok(setup::ptr(w as usize, peer)).cast()))
    } else {
        None
    };
    let ops: [(&str, &str, AmoOp<u64>); 14] = [
        ("fetch", "shmem_uint64_atomic_fetch", AmoOp::Fetch),
        ("set", "shmem_uint64_atomic_set", AmoOp::Set(1)),
        ("swap", "shmem_uint64_atomic_swap", AmoOp::Swap(1)),
        (
            "compare_swap",
            "shmem_uint64_atomic_compare_swap",
            AmoOp::CompareSwap { cond: 0, value: 0 },
        ),
        ("fetch_inc", "shmem_uint64_atomic_fetch_inc", AmoOp::Add(1)),
        ("inc", "shmem_uint64_atomic_inc", AmoOp::Add(1)),
        ("fetch_add", "shmem_uint64_atomic_fetch_add", AmoOp::Add(3)),
        ("add", "shmem_uint64_atomic_add", AmoOp::Add(3)),
        ("fetch_and", "shmem_uint64_atomic_fetch_and", AmoOp::And(!0)),
        ("and", "shmem_uint64_atomic_and", AmoOp::And(!0)),
        ("fetch_or", "shmem_uint64_atomic_fetch_or", AmoOp::Or(0)),
        ("or", "shmem_uint64_atomic_or", AmoOp::Or(0)),
        ("fetch_xor", "shmem_uint64_atomic_fetch_xor", AmoOp::Xor(1)),
        ("xor", "shmem_uint64_atomic_xor", AmoOp::Xor(1)),
    ];
    r.section("AMO latency on a u64 of PE 1 (limit: the same CPU atomic through shmem_ptr)");
    r.line(format!(
        "{:<14} {:>19}  {:>19}  {:>6}",
        "op", "raw med / min", "shmem med / min", "x"
    ));
    for (name, routine, op) in ops {
        let mut api = |k: u64| {
            for _ in 0..k {
                // SAFETY: `w` is a symmetric, aligned u64 (checked again by the call).
                black_box(ok(unsafe {
                    amo::ctx_atomic::<u64>(
                        Ctx::default_ctx(),
                        routine,
                        black_box(w),
                        black_box(op),
                        peer,
                    )
                }));
            }
        };
        let (l0, l1) = if let Some(raw_word) = raw_word {
            raw_word.store(0, Release);
            let mut raw = |k: u64| {
                for _ in 0..k {
                    black_box(raw_amo(raw_word, black_box(op)));
                }
            };
            let mut bodies: [Body<'_>; 2] = [&mut raw, &mut api];
            let t = interleaved(&mut bodies, e.lat_batch, e.lat_samples);
            (Some(Lat::of(&t[0])), Lat::of(&t[1]))
        } else {
            let mut bodies: [Body<'_>; 1] = [&mut api];
            let t = interleaved(&mut bodies, e.lat_batch, e.lat_samples);
            (None, Lat::of(&t[0]))
        };
        r.line(format!(
            "{:<14} {:>19}  {:>19}  {:>6}",
            name,
            l0.map_or("n/a".to_string(), |l0| format!(
                "{} / {}",
                report::ns(l0.median),
                report::ns(l0.min)
            )),
            format!("{} / {}", report::ns(l1.median), report::ns(l1.min)),
            l0.map_or("-".to_string(), |l0| format!(
                "{:.2}",
                l1.median / l0.median
            ))
        ));
        if let Some(l0) = l0 {
            r.json(
                &format!("raw_atomic_{name}"),
                Some(8),
                "latency_median",
                l0.median,
                "ns",
            );
            r.json(
                &format!("raw_atomic_{name}"),
                Some(8),
                "latency_min",
                l0.min,
                "ns",
            );
        }
        r.json(
            &format!("amo_{name}"),
            Some(8),
            "latency_median",
            l1.median,
            "ns",
        );
        r.json(&format!("amo_{name}"), Some(8), "latency_min", l1.min, "ns");
        if let Some(l0) = l0 {
            r.json(
                &format!("amo_{name}"),
                Some(8),
                "ratio_to_raw_atomic",
                l1.median / l0.median,
                "x",
            );
        }
    }
}

/// One raw round trip `v` through `shmem_ptr` words: the initiator stores into the peer's
/// word and spins on its own; the other answers once it sees `v`.
#[inline(always)]
pub(crate) fn raw_round(
    mine: &AtomicU64,
    theirs: &AtomicU64,
    v: u64,
    initiator: bool,
    pause: bool,
) {
    if initiator {
        theirs.store(v, Release);
    }
    while mine.load(Acquire) != v {
        if pause {
            std::hint::spin_loop();
        }
    }
    if !initiator {
        theirs.store(v, Release);
    }
}

/// One shmem round trip `v`: put it into the peer's symmetric `flag`, `wait_until` ours
/// reaches it (the other PE waits first, then answers).
pub(crate) fn put_wait_round(flag: *mut u64, v: u64, peer: i64, initiator: bool) {
    let send = || {
        // SAFETY: `v` is a live local u64, readable for 8 bytes; `flag` is checked by the
        // call.
        ok(unsafe {
            rma::ctx_put(
                rshmem_core::ctx::Ctx::default_ctx(),
                "shmem_putmem",
                flag.cast(),
                (&raw const v).cast(),
                8,
                peer,
            )
        })
    };
    // SAFETY: `flag` is a symmetric u64 (checked again by the call).
    let wait = || ok(unsafe { p2p::wait_until("shmem_uint64_wait_until", flag, Cmp::Ge, v) });
    if initiator {
        send();
        wait();
    } else {
        wait();
        send();
    }
}

/// Round trips between PE 0 and PE 1 (raw cache-line ping-pong, then three shmem
/// flavours) and the 2-PE barrier, interleaved batch by batch. The raw ping-pongs only
/// when `mapped` (on both PEs alike: the transport is chosen for the whole job).
fn two_sided(r: &Report, e: &Effort, me: usize, ctl: *mut u8, peer: i64, mapped: bool) {
    let initiator = me == 0;

    // Raw: plain atomics on `shmem_ptr` words, pure spinning (with and without a pause
    // hint in the loop; the faster is the limit).
    let raw_pp = |slot: usize, pause: bool| {
        let mine = atomic(word(ctl, slot, 0));
        let theirs =
            mapped.then(|| atomic(ok(setup::ptr(word(ctl, slot, 0) as usize, peer)).cast()));
        let mut i = 0u64;
        move |k: u64| {
            let Some(theirs) = theirs else { return };
            for _ in 0..k {
                i += 1;
                raw_round(mine, theirs, i, initiator, pause);
            }
        }
    };
    let mut raw = raw_pp(RAW, false);
    let mut raw_pause = raw_pp(RAW_PAUSE, true);

    // shmem 1: put the value straight into the peer's flag word, wait_until on ours.
    let flag_put = word(ctl, PP_PUT, 0);
    let mut i_put = 0u64;
    let mut pp_put = |k: u64| {
        for _ in 0..k {
            i_put += 1;
            put_wait_round(flag_put, i_put, peer, initiator);
        }
    };

    // shmem 2: put 8 B of data, fence, atomic set of a flag on the same line.
    let (data_f, flag_f) = (word(ctl, PP_FENCE, 0), word(ctl, PP_FENCE, 1));
    let mut i_fence = 0u64;
    let mut pp_fence = |k: u64| {
        for _ in 0..k {
            i_fence += 1;
            let v = i_fence;
            let send = || {
                // SAFETY: `v` is a live local u64; `data_f`/`flag_f` are symmetric words.
                unsafe {
                    ok(rma::ctx_put(
                        Ctx::default_ctx(),
                        "shmem_putmem",
                        data_f.cast(),
                        (&v as *const u64).cast(),
                        8,
                        peer,
                    ));
                    ok(order::fence());
                    ok(amo::ctx_atomic::<u64>(
                        Ctx::default_ctx(),
                        "shmem_uint64_atomic_set",
                        flag_f,
                        AmoOp::Set(v),
                        peer,
                    ));
                }
            };
            // SAFETY: `flag_f` is a symmetric u64.
            let wait =
                || ok(unsafe { p2p::wait_until("shmem_uint64_wait_until", flag_f, Cmp::Ge, v) });
            if initiator {
                send();
                wait();
            } else {
                wait();
                send();
            }
        }
    };

    // shmem 3: put-with-signal, signal_wait_until (data and signal on one line).
    let (data_s, sig_s) = (word(ctl, PP_SIG, 0), word(ctl, PP_SIG, 1));
    let mut i_sig = 0u64;
    let mut pp_sig = |k: u64| {
        for _ in 0..k {
            i_sig += 1;
            let v = i_sig;
            let send = || {
                // SAFETY: `v` is a live local u64; `data_s`/`sig_s` are symmetric words.
                ok(unsafe {
                    signal::ctx_put_signal(
                        Ctx::default_ctx(),
                        "shmem_putmem_signal",
                        false,
                        data_s.cast(),
                        (&v as *const u64).cast(),
                        8,
                        sig_s,
                        v,
                        SignalOp::Set,
                        peer,
                    )
                })
            };
            let wait = || {
                // SAFETY: `sig_s` is a symmetric u64.
                let r = unsafe {
                    signal::signal_wait_until("shmem_signal_wait_until", sig_s, Cmp::Ge, v)
                };
                ok(r)
            };
            if initiator {
                send();
                wait();
            } else {
                wait();
                send();
            }
        }
    };

    let mut barrier = |k: u64| {
        for _ in 0..k {
            ok(sync::barrier_all());
        }
    };

    let t = if mapped {
        let mut bodies: [Body<'_>; 6] = [
            &mut raw,
            &mut raw_pause,
            &mut pp_put,
            &mut pp_fence,
            &mut pp_sig,
            &mut barrier,
        ];
        interleaved_fixed(&mut bodies, SYNC_BATCH, 20, e.sync_samples)
    } else {
        let mut bodies: [Body<'_>; 4] = [&mut pp_put, &mut pp_fence, &mut pp_sig, &mut barrier];
        let mut t = interleaved_fixed(&mut bodies, SYNC_BATCH, 20, e.sync_samples);
        t.splice(0..0, [Vec::new(), Vec::new()]);
        t
    };
    if !initiator {
        return;
    }
    // No samples (raw ping-pongs without a mapping): NaN, shown as n/a.
    let lats: Vec<Lat> = t.iter().map(|x| Lat::of(x)).collect();
    let base = lats[0].median.min(lats[1].median);
    r.section(&format!(
        "round trips and barrier, 2 PEs (limit: the faster raw cache-line ping-pong; {} batches of {SYNC_BATCH})",
        e.sync_samples
    ));
    r.line(format!("{:<44} {:>19}  {:>6}", "", "median / min", "x"));
    let rows = [
        ("pingpong_raw", "raw cache-line ping-pong, bare spin"),
        (
            "pingpong_raw_pause",
            "raw cache-line ping-pong, spin with pause",
        ),
        ("pingpong_put", "put 8 B into flag + wait_until"),
        (
            "pingpong_put_fence_set",
            "put 8 B + fence + atomic_set + wait_until",
        ),
        ("pingpong_put_signal", "put_signal 8 B + signal_wait_until"),
        ("barrier_all", "shmem_barrier_all"),
    ];
    for (k, (bench, desc)) in rows.into_iter().enumerate() {
        let l = lats[k];
        if l.median.is_nan() {
            r.line(format!("{desc:<44} {:>19}  {:>6}", "n/a", "-"));
            continue;
        }
        r.line(format!(
            "{:<44} {:>19}  {:>6}",
            desc,
            format!("{} / {}", report::ns(l.median), report::ns(l.min)),
            if mapped {
                format!("{:.2}", l.median / base)
            } else {
                "-".to_string()
            }
        ));
        let metric = if bench == "barrier_all" {
            "latency"
        } else {
            "rtt"
        };
        r.json(bench, None, &format!("{metric}_median"), l.median, "ns");
        r.json(bench, None, &format!("{metric}_min"), l.min, "ns");
        if mapped {
            r.json(bench, None, "ratio_to_raw_rtt", l.median / base, "x");
        }
    }
    if !mapped {
        return;
    }
    r.json("pingpong_raw_limit", None, "rtt_median", base, "ns");
    r.target(
        "pingpong_put_signal_vs_raw_rtt",
        &format!("{} / raw {}", report::ns(lats[4].median), report::ns(base)),
        lats[4].median / base,
        "x",
        Goal::AtMost(1.3),
    );
    r.target(
        "barrier_2pe_vs_raw_rtt",
        &format!("{} / raw {}", report::ns(lats[5].median), report::ns(base)),
        lats[5].median / base,
        "x",
        Goal::AtMost(1.5),
    );
}

/// `barrier`: `shmem_barrier_all` and `shmem_sync_all` latency on however many PEs run.
pub(crate) fn run_barrier(quick: bool) {
    init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    let e = Effort::new(quick);
    let mut barrier = |k: u64| {
        for _ in 0..k {
            ok(sync::barrier_all());
        }
    };
    let mut sync_all = |k: u64| {
        for _ in 0..k {
            ok(sync::sync_all());
        }
    };
    let mut bodies: [Body<'_>; 2] = [&mut barrier, &mut sync_all];
    let samples = (e.sync_samples / 3).max(20);
    let t = interleaved_fixed(&mut bodies, 16, 5, samples);
    if me == 0 {
        let r = Report::new(npes);
        let cores = rshmem_util::wait::job_cpus();
        r.section(&format!(
            "barrier latency, {npes} PEs on {cores} cores ({samples} batches of 16{})",
            if npes > cores { "; oversubscribed" } else { "" }
        ));
        for (k, (bench, desc)) in [
            ("barrier_all", "shmem_barrier_all"),
            ("sync_all", "shmem_sync_all"),
        ]
        .into_iter()
        .enumerate()
        {
            let l = Lat::of(&t[k]);
            r.line(format!(
                "{:<44} {:>19}",
                desc,
                format!("{} / {}", report::ns(l.median), report::ns(l.min))
            ));
            r.json(bench, None, "latency_median", l.median, "ns");
            r.json(bench, None, "latency_min", l.min, "ns");
        }
    }
    rshmem_core::finalize();
}
