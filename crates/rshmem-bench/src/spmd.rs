//! Machinery shared by the multithreaded suites (`threads`, `apps`, `nbe`, `threshold`):
//! initialization at `SHMEM_THREAD_MULTIPLE`, a control block for phases in which only some
//! PEs work while the others sleep (so an idle PE costs no core), per-thread contexts,
//! duration-bounded rate loops and a calibrated busy loop.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rshmem_core::ctx::{self, CtxHandle};
use rshmem_core::{amo, memory, order, rma, setup, sync, AmoOp, Ctx, ThreadLevel};
use rustix::process::Pid;
use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};

pub(crate) use crate::pe::ok;

/// Spacing of control words: two cache lines (no adjacent-line prefetch coupling).
pub(crate) const LINE: usize = 128;

/// How long a sleeping PE naps between looks at the phase word.
const NAP: Duration = Duration::from_micros(500);

/// `shmem_init_thread(SHMEM_THREAD_MULTIPLE)`, or exit; returns (my PE, number of PEs).
pub(crate) fn init_multiple(cmd: &str) -> (usize, usize) {
    allowed_cpus();
    match rshmem_core::init(ThreadLevel::Multiple) {
        Ok(ThreadLevel::Multiple) => {}
        Ok(l) => {
            eprintln!("rshmem-bench {cmd}: asked for SHMEM_THREAD_MULTIPLE, got {l:?}");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("rshmem-bench {cmd}: shmem_init_thread failed: {e}");
            std::process::exit(1);
        }
    }
    (ok(setup::my_pe()), ok(setup::n_pes()))
}

/// The CPUs this process may run on, as found at the first call (made by
/// [`init_multiple`], before any thread is pinned).
fn allowed_cpus() -> &'static [usize] {
    static CPUS: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    CPUS.get_or_init(|| {
        let v: Vec<usize> = sched_getaffinity(None).map_or(Vec::new(), |set| {
            (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect()
        });
        if v.is_empty() {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
        } else {
            v
        }
    })
}

/// Cores this process may use (fixed at start, whatever threads are pinned since).
pub(crate) fn cores() -> usize {
    allowed_cpus().len()
}

/// `"; oversubscribed"` when `busy` threads want more than the machine's cores.
pub(crate) fn oversub(busy: usize) -> &'static str {
    if busy > cores() {
        "; OVERSUBSCRIBED"
    } else {
        ""
    }
}

/// The copy engine's threshold and lane count in force on this PE.
pub(crate) fn engine_config() -> (usize, usize) {
    rshmem_core::runtime::try_runtime().map_or((0, 0), |rt| {
        let c = rt.config();
        (c.copy_engine_threshold, c.copy_engine_lanes)
    })
}

/// Sizes from `min` up to `max` in steps of `step` (a factor), plus `max` itself.
pub(crate) fn sizes(min: usize, max: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(min.max(1)), |n| n.checked_mul(step))
        .take_while(|&n| n <= max)
        .collect();
    if v.last().is_some_and(|&l| l < max) {
        v.push(max);
    }
    v
}

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Effort {
    /// Duration of one rate measurement.
    pub(crate) dur: Duration,
    /// Samples of each measurement (interleaved between the kinds compared).
    pub(crate) samples: usize,
    /// Smoke-test mode.
    pub(crate) quick: bool,
}

impl Effort {
    /// Full measurement, or a smoke test with `quick`.
    pub(crate) fn new(quick: bool) -> Effort {
        if quick {
            Effort {
                dur: Duration::from_millis(1),
                samples: 2,
                quick,
            }
        } else {
            Effort {
                dur: Duration::from_millis(10),
                samples: 5,
                quick,
            }
        }
    }
}

/// Restricts thread `tid` (0: the calling thread) to the CPUs in `cpus`; false if the
/// kernel refused.
fn set_affinity(tid: i32, cpus: impl IntoIterator<Item = usize>) -> bool {
    let mut set = CpuSet::new();
    for c in cpus.into_iter().filter(|&c| c < CpuSet::MAX_CPU) {
        set.set(c);
    }
    sched_setaffinity(Pid::from_raw(tid), &set).is_ok()
}

/// Pins the calling thread to the `i`-th allowed core (modulo their number), as seed 001
/// pins threads and PEs.
pub(crate) fn pin(i: usize) {
    let c = allowed_cpus();
    set_affinity(0, [c[i % c.len()]]);
}

/// Lets the calling thread run on every allowed core again.
pub(crate) fn unpin() {
    set_affinity(0, allowed_cpus().iter().copied());
}

/// Thread ids of this process's copy-engine lanes (threads named `rshmem-copy-*`).
fn engine_threads() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        let tid = e.file_name().to_str()?.parse().ok()?;
        comm.starts_with("rshmem-copy-").then_some(tid)
    })
    .collect()
}

/// Pins every copy-engine lane thread to the allowed cores other than the `i`-th (a
/// diagnostic: it gives the engine cores the issuing thread pinned with `pin(i)` does not
/// use); `None` restores them to every allowed core. Returns how many lane threads were
/// found.
pub(crate) fn pin_engine_away_from(i: Option<usize>) -> usize {
    let c = allowed_cpus();
    let ts = engine_threads();
    for &t in &ts {
        match i {
            Some(i) if c.len() > 1 => {
                let skip = c[i % c.len()];
                set_affinity(t, c.iter().copied().filter(|&x| x != skip))
            }
            _ => set_affinity(t, c.iter().copied()),
        };
    }
    ts.len()
}

/// Starts every copy-engine lane from the calling thread before anything is pinned (a
/// lane thread inherits the affinity of the thread whose transfer starts it): one
/// context per lane, each with one transfer of `threshold` bytes to this PE. Collective.
pub(crate) fn start_engine() {
    let (thr, lanes) = engine_config();
    if lanes == 0 || thr == 0 || thr > 64 << 20 {
        return;
    }
    let me = ok(setup::my_pe()) as i64;
    let buf = sym_alloc(2 * thr, 0);
    for _ in 0..lanes {
        let h = ok(ctx::create(0));
        // SAFETY: `h` is live until the destroy below, used by this thread only.
        let c = unsafe { h.as_ref() };
        // SAFETY: both halves of `buf` are ours, `thr` bytes each, untouched until the quiet.
        ok(unsafe { rma::ctx_put_nbi(c, "shmem_ctx_putmem_nbi", buf, buf.add(thr), thr, me) });
        ok(order::ctx_quiet(c));
        // SAFETY: created above, destroyed once, by its only user.
        ok(unsafe { ctx::destroy(h) });
    }
    sym_free(buf);
}

/// A page of private memory: buffers made of pages are page aligned like the symmetric
/// ones, so that memcpy, put and get see the same 4 KiB aliasing between source and
/// destination.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
pub(crate) struct Page([u8; 4096]);

/// `bytes` of private memory (rounded up to pages), every page touched.
pub(crate) fn pages(bytes: usize, fill: u8) -> Vec<Page> {
    vec![Page([fill; 4096]); bytes.div_ceil(4096).max(1)]
}

/// A symmetric block of `bytes` (collective), filled with `fill`. Every page of it, on
/// every PE, is then touched through this PE's mapping (an atomic add of 0 per page), so
/// that no measurement pays the first-touch page faults of a peer's pages.
pub(crate) fn sym_alloc(bytes: usize, fill: u8) -> *mut u8 {
    let len = bytes.max(LINE);
    let p = ok(memory::align("shmem_align", 4096, len));
    // SAFETY: just allocated in our own heap with at least this size.
    unsafe { std::ptr::write_bytes(p, fill, len) };
    ok(sync::barrier_all());
    for pe in 0..ok(setup::n_pes()) {
        let r = ok(setup::ptr(p as usize, pe as i64));
        if r.is_null() {
            continue;
        }
        for off in (0..len).step_by(4096) {
            // SAFETY: an aligned word inside the peer's block, mapped here until
            // finalize; adding 0 changes nothing any other access could see.
            unsafe { AtomicU64::from_ptr(r.add(off).cast()) }.fetch_add(0, Ordering::Relaxed);
        }
    }
    ok(sync::barrier_all());
    p
}

/// A barrier for the threads of one PE that spins (then yields) instead of sleeping, so
/// that threads restart within nanoseconds of each other.
#[derive(Debug)]
pub(crate) struct SpinBarrier {
    n: usize,
    count: Padded<AtomicUsize>,
    gen: Padded<AtomicUsize>,
}

/// A value on its own pair of cache lines.
#[derive(Debug)]
#[repr(align(128))]
struct Padded<T>(T);

impl SpinBarrier {
    /// A barrier of `n` threads.
    pub(crate) fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n: n.max(1),
            count: Padded(AtomicUsize::new(0)),
            gen: Padded(AtomicUsize::new(0)),
        }
    }

    /// Waits until all `n` threads have called it.
    pub(crate) fn wait(&self) {
        let g = self.gen.0.load(Ordering::Acquire);
        if self.count.0.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.0.store(0, Ordering::Relaxed);
            self.gen.0.fetch_add(1, Ordering::Release);
            return;
        }
        let mut spins = 0u32;
        while self.gen.0.load(Ordering::Acquire) == g {
            if spins < 200 {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Frees a block from [`sym_alloc`] (collective).
pub(crate) fn sym_free(p: *mut u8) {
    ok(memory::free("shmem_free", p));
}

/// A raw pointer that threads may share: each thread touches only its own part, or the
/// memory is only read, as every use says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shared<T>(pub(crate) *mut T);
// SAFETY: a plain address; every dereference states why it does not race.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The address.
    pub(crate) fn ptr(self) -> *mut T {
        self.0
    }

    /// The address `i` elements on.
    pub(crate) fn at(self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }
}

/// Which context the threads of a PE issue on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CtxMode {
    /// All threads on `SHMEM_CTX_DEFAULT`.
    Shared,
    /// Each thread on a `SHMEM_CTX_PRIVATE` context of its own.
    Private,
}

/// A private context of the calling thread, destroyed on drop.
#[derive(Debug)]
struct PrivateCtx(CtxHandle);

impl PrivateCtx {
    fn new() -> PrivateCtx {
        PrivateCtx(ok(ctx::create(ctx::PRIVATE)))
    }

    fn get(&self) -> &Ctx {
        // SAFETY: the handle came from `create` and is destroyed only by `drop`.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for PrivateCtx {
    fn drop(&mut self) {
        // SAFETY: created by this thread, not the default context, destroyed once, and
        // used by no other thread.
        ok(unsafe { ctx::destroy(self.0) });
    }
}

/// Runs `f` with the context `mode` gives the calling thread.
pub(crate) fn with_ctx<R>(mode: CtxMode, f: impl FnOnce(&Ctx) -> R) -> R {
    match mode {
        CtxMode::Shared => f(Ctx::default_ctx()),
        CtxMode::Private => {
            let c = PrivateCtx::new();
            f(c.get())
        }
    }
}

/// Runs `f(i)` on `t` scoped threads (i = 0..t) and returns their results in order.
pub(crate) fn on_threads<R: Send>(t: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let hs: Vec<_> = (0..t).map(|i| s.spawn(move || f(i))).collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// [`on_threads`] with thread `i` pinned to core `first + i` (modulo the cores).
pub(crate) fn on_pinned<R: Send>(t: usize, first: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    on_threads(t, |i| {
        pin(first + i);
        f(i)
    })
}

/// Calls `window()` (which issues and completes some operations and returns how many)
/// for about `dur`, looking at the clock every `check` windows; returns operations per
/// second.
#[inline(never)]
pub(crate) fn rate_for(dur: Duration, check: u64, mut window: impl FnMut() -> u64) -> f64 {
    let t0 = Instant::now();
    let mut ops = 0u64;
    loop {
        for _ in 0..check.max(1) {
            ops += window();
        }
        let e = t0.elapsed();
        if e >= dur {
            return ops as f64 / e.as_secs_f64();
        }
    }
}

/// Median of some samples (NaN when empty).
pub(crate) fn median(v: &[f64]) -> f64 {
    crate::stats::Lat::of(v).median
}

/// Geometric mean of positive figures (NaN when empty).
pub(crate) fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// A busy loop of `iters` dependent multiply-adds: computation that touches no memory,
/// so it competes with a concurrent copy for nothing but a core.
#[inline(never)]
pub(crate) fn work(iters: u64) -> u64 {
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..iters {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    black_box(x)
}

/// Nanoseconds per [`work`] iteration (median of a few 200 us runs).
pub(crate) fn work_ns_per_iter() -> f64 {
    let n = 100_000u64;
    let mut v = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        work(n);
        v.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    median(&v)
}

/// A xorshift64* generator (deterministic per seed).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Control words of the phase protocol (symmetric; PE 0's copy is the one used).
const ARRIVE: usize = 0;
const GEN: usize = 1;
const RESULTS: usize = 2;
/// Result slots (f64 each, one per issuer or PE).
pub(crate) const SLOTS: usize = 1024;

/// Phases in which some PEs work and the others nap: a central barrier on PE 0's words
/// where waiting PEs either spin (they are about to work, and must start together) or
/// sleep (they are idle and must not take a core), plus result slots on PE 0.
#[derive(Debug)]
pub(crate) struct Ctl {
    base: *mut u64,
    me: usize,
    npes: usize,
    gen: u64,
}

impl Ctl {
    /// Allocates the control block (collective).
    pub(crate) fn new(me: usize, npes: usize) -> Ctl {
        let bytes = (RESULTS * LINE).max(LINE) + SLOTS * 8;
        let base = sym_alloc(bytes, 0).cast::<u64>();
        ok(sync::barrier_all());
        Ctl {
            base,
            me,
            npes,
            gen: 0,
        }
    }

    fn word(&self, w: usize) -> *mut u64 {
        self.base.wrapping_add(w * LINE / 8)
    }

    fn slot(&self, i: usize) -> *mut u64 {
        assert!(i < SLOTS, "result slot {i} out of range");
        self.base.wrapping_add(RESULTS * LINE / 8 + i)
    }

    fn amo(&self, w: *mut u64, op: AmoOp<u64>) -> u64 {
        // SAFETY: `w` is an aligned word of the symmetric control block.
        ok(unsafe { amo::ctx_atomic::<u64>(Ctx::default_ctx(), "shmem_uint64_atomic", w, op, 0) })
    }

    /// A barrier of every PE. PEs that are about to work pass `spin` (they leave within
    /// nanoseconds of each other); idle ones nap between looks and use no core.
    pub(crate) fn sync(&mut self, spin: bool) {
        ok(order::quiet());
        let next = self.gen + 1;
        let old = self.amo(self.word(ARRIVE), AmoOp::Add(1));
        if old + 1 == next * self.npes as u64 {
            self.amo(self.word(GEN), AmoOp::Set(next));
        }
        let mut polls = 0u32;
        while self.amo(self.word(GEN), AmoOp::Fetch) < next {
            if spin {
                polls += 1;
                if polls < 200 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            } else {
                std::thread::sleep(NAP);
            }
        }
        self.gen = next;
    }

    /// Stores `v` in result slot `i` of PE 0 (read there after the next [`Ctl::sync`]).
    pub(crate) fn post(&self, i: usize, v: f64) {
        let bits = v.to_bits();
        let p = self.slot(i);
        // SAFETY: `bits` is a live local u64; the slot is a symmetric word.
        ok(unsafe {
            rma::ctx_put(
                Ctx::default_ctx(),
                "shmem_putmem",
                p.cast(),
                (&bits as *const u64).cast(),
                8,
                0,
            )
        });
    }

    /// Result slot `i` on PE 0 (after a [`Ctl::sync`] that followed the posts).
    pub(crate) fn take(&self, i: usize) -> f64 {
        assert_eq!(self.me, 0, "results are read on PE 0");
        // SAFETY: an aligned word of our own symmetric block; writers finished before
        // the sync that preceded this call.
        f64::from_bits(unsafe { AtomicU64::from_ptr(self.slot(i)) }.load(Ordering::Acquire))
    }

    /// Frees the block (collective).
    pub(crate) fn free(self) {
        ok(sync::barrier_all());
        sym_free(self.base.cast());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_lists() {
        assert_eq!(sizes(1, 64, 4), [1, 4, 16, 64]);
        assert_eq!(sizes(1, 100, 4), [1, 4, 16, 64, 100]);
        assert_eq!(sizes(8, 8, 4), [8]);
        assert!((geomean(&[1.0, 4.0]) - 2.0).abs() < 1e-12);
        let mut r = Rng::new(1);
        assert_ne!(r.next(), r.next());
    }
}
