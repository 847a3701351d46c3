//! Profiling counters: calls, bytes and time in the library per routine family, kept per
//! thread and folded per PE when read; the Sandia OpenSHMEM performance counters
//! (`shmemx_pcntr_*`: issued and completed writes and reads per context).
//!
//! Off by default. The level (`SHMEM_PROFILE` at init, `shmem_pcontrol` at any time) is
//! a plain static, so a disabled hook is one load and one predictable branch. Enabled,
//! a hook adds to its thread's own block with plain loads and stores (one writer per
//! block, so no read-modify-write atomics) and reads the clock only on sampled calls:
//! level 1 times one call in [`SAMPLE`] of each family and scales, level 2 times every
//! call. Blocks are registered once per thread and outlive it, so nothing a finished
//! thread counted is lost.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

use crate::ctx::Ctx;
use crate::error::At;
use crate::runtime::{Internal, Runtime};

/// Routine families counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Family {
    /// Blocking puts (`shmem_put*`, `shmem_p`, `shmem_iput`, `shmem_ibput`).
    Put = 0,
    /// Blocking gets.
    Get,
    /// Non-blocking puts (`_nbi`, `_nbe`).
    PutNbi,
    /// Non-blocking gets.
    GetNbi,
    /// Atomic memory operations.
    Amo,
    /// Put-with-signal and signal set/add/fetch.
    Signal,
    /// `shmem_fence`.
    Fence,
    /// `shmem_quiet`.
    Quiet,
    /// Barriers and syncs.
    Sync,
    /// Collectives other than barriers and syncs.
    Coll,
    /// Point-to-point waits and tests, signal waits.
    Wait,
    /// Distributed locks.
    Lock,
    /// Symmetric heap management.
    Alloc,
}

/// Number of families.
pub const FAMILIES: usize = 13;

impl Family {
    /// Every family, in table order.
    pub const ALL: [Family; FAMILIES] = [
        Family::Put,
        Family::Get,
        Family::PutNbi,
        Family::GetNbi,
        Family::Amo,
        Family::Signal,
        Family::Fence,
        Family::Quiet,
        Family::Sync,
        Family::Coll,
        Family::Wait,
        Family::Lock,
        Family::Alloc,
    ];

    /// Its name in summaries.
    pub fn name(self) -> &'static str {
        [
            "put", "get", "put_nbi", "get_nbi", "amo", "signal", "fence", "quiet", "sync", "coll",
            "wait", "lock", "alloc",
        ][self as usize]
    }
}

/// What an operation adds to the `shmemx_pcntr_*` counters of its context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pc {
    /// Nothing (not a data movement).
    None,
    /// A write (put, non-fetching AMO, signal update).
    Write,
    /// A read (get, fetching AMO).
    Read,
}

/// One call in this many of a family is timed at level 1 (a power of two).
pub const SAMPLE: u64 = 128;

/// 0: off; 1: counting, time sampled; 2: counting, every call timed. On a cache line of
/// its own: every hook reads it, and no write to a neighbour may invalidate it.
static LEVEL: rshmem_util::CachePadded<AtomicU8> = rshmem_util::CachePadded::new(AtomicU8::new(0));

/// Whether counting is on (the one check a disabled hook makes).
#[inline(always)]
pub fn on() -> bool {
    LEVEL.load(Relaxed) != 0
}

/// The level in force.
pub fn level() -> u32 {
    LEVEL.load(Relaxed) as u32
}

/// `shmem_pcontrol`: 0 stops counting (counts so far are kept), 1 counts with sampled
/// time, 2 and above count and time every call. Negative levels are taken as 0.
pub fn set_level(level: i32) {
    LEVEL.store(level.clamp(0, 2) as u8, Relaxed);
}

/// Adds `n` to a counter only its owner thread writes: a plain load and store.
#[inline(always)]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

/// The `shmemx_pcntr_*` words of one context (or of one thread on the default context).
#[derive(Debug, Default)]
pub struct CtxCounters {
    issued_write: AtomicU64,
    issued_read: AtomicU64,
    /// The issued counts at the last quiet on it: what was issued since may be in flight.
    /// A snapshot taken by the quiet, so an operation adds to one word only.
    quiet_write: AtomicU64,
    quiet_read: AtomicU64,
}

impl CtxCounters {
    /// Zeroed.
    pub const fn new() -> CtxCounters {
        CtxCounters {
            issued_write: AtomicU64::new(0),
            issued_read: AtomicU64::new(0),
            quiet_write: AtomicU64::new(0),
            quiet_read: AtomicU64::new(0),
        }
    }

    /// Counts one operation; `shared`: other threads may count here at the same time.
    #[inline(always)]
    fn add(&self, pc: Pc, shared: bool) {
        let issued = match pc {
            Pc::None => return,
            Pc::Write => &self.issued_write,
            Pc::Read => &self.issued_read,
        };
        if shared {
            issued.fetch_add(1, Relaxed);
        } else {
            bump(issued, 1);
        }
    }

    fn quieted(&self) {
        self.quiet_write
            .store(self.issued_write.load(Relaxed), Relaxed);
        self.quiet_read
            .store(self.issued_read.load(Relaxed), Relaxed);
    }

    /// Zeroes every word.
    pub fn reset(&self) {
        for w in [
            &self.issued_write,
            &self.issued_read,
            &self.quiet_write,
            &self.quiet_read,
        ] {
            w.store(0, Relaxed);
        }
    }

    /// Issued writes and reads, and of them those issued since the last quiet.
    fn read(&self) -> [u64; 4] {
        let (w, r) = (
            self.issued_write.load(Relaxed),
            self.issued_read.load(Relaxed),
        );
        [
            w,
            r,
            w.saturating_sub(self.quiet_write.load(Relaxed)),
            r.saturating_sub(self.quiet_read.load(Relaxed)),
        ]
    }
}

/// One thread's counters. Aligned so that two threads' blocks share no cache line.
#[repr(align(128))]
struct Block {
    calls: [AtomicU64; FAMILIES],
    bytes: [AtomicU64; FAMILIES],
    /// Timed calls and their nanoseconds.
    timed: [AtomicU64; FAMILIES],
    nanos: [AtomicU64; FAMILIES],
    /// This thread's operations on the default context.
    default_ctx: CtxCounters,
}

impl Block {
    fn new() -> Block {
        Block {
            calls: Default::default(),
            bytes: Default::default(),
            timed: Default::default(),
            nanos: Default::default(),
            default_ctx: CtxCounters::new(),
        }
    }

    fn reset(&self) {
        for a in [&self.calls, &self.bytes, &self.timed, &self.nanos] {
            for c in a {
                c.store(0, Relaxed);
            }
        }
        self.default_ctx.reset();
    }
}

/// Every thread's block, for folding. Blocks are leaked: a thread's counts outlive it,
/// and a block is reached through a plain thread-local pointer.
static BLOCKS: Mutex<Vec<&'static Block>> = Mutex::new(Vec::new());

thread_local! {
    // Const-initialized and without a destructor: an access is one TLS load.
    static MINE: Cell<*const Block> = const { Cell::new(std::ptr::null()) };
}

/// This thread's block (registered on first use; `None` while the thread exits).
#[inline(always)]
fn mine() -> Option<&'static Block> {
    let p = MINE.try_with(|c| c.get()).ok()?;
    if p.is_null() {
        return Some(register());
    }
    // SAFETY: a non-null pointer came from `register`, which leaked the block.
    Some(unsafe { &*p })
}

#[cold]
#[inline(never)]
fn register() -> &'static Block {
    let b: &'static Block = Box::leak(Box::new(Block::new()));
    BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).push(b);
    let _ = MINE.try_with(|c| c.set(b));
    b
}

/// Zeroes every counter (at init) and sets the level.
pub(crate) fn start(level: usize) {
    for b in BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        b.reset();
    }
    set_level(level.min(2) as i32);
}

/// Counts one call of `fam` moving `bytes` (and, on `ctx`, one `pc` operation); when
/// this call is sampled, the returned timer is running, and [`done`] stops it:
///
/// ```ignore
/// let t = profile::count(Family::Put, nbytes, ctx, Pc::Write);
/// let r = body();
/// profile::done(t);
/// r
/// ```
///
/// Neither a wrapper taking the body as a closure nor a guard with `Drop` (both measured on
/// the 8-byte put with counting off: the closure ran out of line and returned its `Result`
/// through memory, a store-forward stall of about 8 ns; the guard's unwinding cleanup kept
/// the `Result` in memory too, 0.42 of the raw copy rate where the bare put makes 0.59).
#[inline(always)]
pub fn count(fam: Family, bytes: usize, ctx: &Ctx, pc: Pc) -> Timer {
    if !on() {
        return Timer(None, fam);
    }
    Timer(begin(fam, bytes, ctx, pc), fam)
}

/// Evaluates `$body` (an expression, the routine's work) counted as one call of `$fam`
/// moving `$bytes` on `$ctx` (a [`Pc`] `$pc` operation), timed when sampled. The body is
/// written out twice, once per branch, so the disabled branch carries no timer past it:
/// measured on the 8-byte put with counting off, a timer live across the body kept its
/// `Result` in memory (0.52 of the raw copy rate where the bare put makes 0.59).
macro_rules! counted {
    ($fam:expr, $bytes:expr, $ctx:expr, $pc:expr, $body:expr) => {
        if !$crate::profile::on() {
            $body
        } else {
            let t = $crate::profile::count($fam, $bytes, $ctx, $pc);
            let r = $body;
            $crate::profile::done(t);
            r
        }
    };
}
pub(crate) use counted;

/// A call's timer from [`count`]: running only on sampled calls.
#[derive(Debug, Clone, Copy)]
#[must_use = "pass it to profile::done"]
pub struct Timer(Option<Instant>, Family);

/// Stops a [`count`] timer, adding its time to its family.
#[inline(always)]
pub fn done(t: Timer) {
    if let Some(start) = t.0 {
        finish(t.1, start);
    }
}

/// Counts the call; returns the start time when this call is timed.
#[inline(always)]
fn begin(fam: Family, bytes: usize, ctx: &Ctx, pc: Pc) -> Option<Instant> {
    let f = fam as usize;
    let b = mine()?;
    let n = b.calls[f].load(Relaxed);
    b.calls[f].store(n.wrapping_add(1), Relaxed);
    bump(&b.bytes[f], bytes as u64);
    if pc != Pc::None {
        if ctx.is_default() {
            b.default_ctx.add(pc, false);
        } else {
            let shared = ctx.options() & (crate::ctx::PRIVATE | crate::ctx::SERIALIZED) == 0;
            ctx.prof.add(pc, shared);
        }
    }
    if n % SAMPLE == 0 || LEVEL.load(Relaxed) >= 2 {
        Some(clock())
    } else {
        None
    }
}

#[cold]
#[inline(never)]
fn clock() -> Instant {
    Instant::now()
}

#[cold]
#[inline(never)]
fn finish(fam: Family, t: Instant) {
    let ns = t.elapsed().as_nanos() as u64;
    if let Some(b) = mine() {
        bump(&b.timed[fam as usize], 1);
        bump(&b.nanos[fam as usize], ns);
    }
}

/// A counted call in progress: timed (when sampled) until dropped.
#[must_use]
#[derive(Debug)]
pub struct Span {
    fam: Family,
    start: Option<Instant>,
}

impl Drop for Span {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(t) = self.start {
            finish(self.fam, t);
        }
    }
}

/// [`count`] as a guard, timed (when sampled) until dropped: for routines with many
/// returns and no hot path (strided transfers, waits, heap management, ordering).
#[inline(always)]
pub fn scope(fam: Family, bytes: usize, ctx: &Ctx, pc: Pc) -> Option<Span> {
    if !on() {
        return None;
    }
    Some(Span {
        fam,
        start: begin(fam, bytes, ctx, pc),
    })
}

/// [`scope`] for routines that move nothing on a context.
#[inline(always)]
pub fn span(fam: Family, bytes: usize) -> Option<Span> {
    scope(fam, bytes, Ctx::default_ctx(), Pc::None)
}

/// A collective in progress, counted as one call of its family with its bytes and timed
/// when it ends (dropped, also on an error return). Collectives are always timed: one
/// clock read is small beside them.
#[must_use]
#[derive(Debug)]
pub(crate) struct CollCount {
    fam: Family,
    bytes: usize,
    start: Instant,
}

impl Drop for CollCount {
    fn drop(&mut self) {
        let f = self.fam as usize;
        if let Some(b) = mine() {
            bump(&b.calls[f], 1);
            bump(&b.bytes[f], self.bytes as u64);
            bump(&b.timed[f], 1);
            bump(&b.nanos[f], self.start.elapsed().as_nanos() as u64);
        }
    }
}

/// Starts counting a collective of `fam` moving `bytes`; `None` (and nothing at its end)
/// when counting is off.
#[inline(always)]
pub(crate) fn coll(fam: Family, bytes: usize) -> Option<CollCount> {
    if !on() {
        return None;
    }
    Some(CollCount {
        fam,
        bytes,
        start: Instant::now(),
    })
}

/// A quiet on `ctx` (or on every context: `None`) finished: nothing issued before it is
/// in flight.
#[inline(always)]
pub(crate) fn quieted(ctx: Option<&Ctx>) {
    if !on() {
        return;
    }
    match ctx {
        Some(c) if !c.is_default() => c.prof.quieted(),
        _ => {
            if let Some(b) = mine() {
                b.default_ctx.quieted();
            }
        }
    }
}

/// One family's totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Calls.
    pub calls: u64,
    /// Bytes moved (payload; for AMOs, the word size).
    pub bytes: u64,
    /// Nanoseconds in the library, estimated from the timed calls.
    pub nanos: u64,
}

/// Every family's totals on one PE, in [`Family::ALL`] order.
pub type Summary = [Counts; FAMILIES];

/// Folds every thread's counters of this PE.
pub fn snapshot() -> Summary {
    let mut calls = [0u64; FAMILIES];
    let mut bytes = [0u64; FAMILIES];
    let mut timed = [0u64; FAMILIES];
    let mut nanos = [0u64; FAMILIES];
    for b in BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        for f in 0..FAMILIES {
            calls[f] += b.calls[f].load(Relaxed);
            bytes[f] += b.bytes[f].load(Relaxed);
            timed[f] += b.timed[f].load(Relaxed);
            nanos[f] += b.nanos[f].load(Relaxed);
        }
    }
    let mut out = [Counts::default(); FAMILIES];
    for f in 0..FAMILIES {
        // Scale the timed calls' time to every call of the family.
        let est = if timed[f] == 0 {
            0
        } else {
            (nanos[f] as u128 * calls[f] as u128 / timed[f] as u128) as u64
        };
        out[f] = Counts {
            calls: calls[f],
            bytes: bytes[f],
            nanos: est,
        };
    }
    out
}

/// The Sandia OpenSHMEM performance counters of one context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Pcntr {
    /// Writes issued (SOS's `pending_put` field: cumulative, as SOS reports it).
    pub issued_write: u64,
    /// Reads issued.
    pub issued_read: u64,
    /// Writes completed.
    pub completed_write: u64,
    /// Reads completed.
    pub completed_read: u64,
    /// Operations completed with this PE as target: always 0 (puts on the node are the
    /// initiator's stores; no target-side counter is kept, as in SOS without one).
    pub target: u64,
}

/// The counters of `ctx` now. Operations count as completed once nothing is in flight on
/// the context; while something is, those issued since the last quiet on it (by this
/// thread, on the default context) count as pending.
pub fn pcntr(ctx: &Ctx) -> Pcntr {
    let [iw, ir, mut sw, mut sr] = if ctx.is_default() {
        let mut sum = [0u64; 4];
        for b in BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            for (s, v) in sum.iter_mut().zip(b.default_ctx.read()) {
                *s += v;
            }
        }
        // Only this thread's own "since quiet" words describe what it may have in flight.
        let own = mine().map_or([0; 4], |b| b.default_ctx.read());
        [sum[0], sum[1], own[2], own[3]]
    } else {
        ctx.prof.read()
    };
    if !ctx.pending() {
        sw = 0;
        sr = 0;
    }
    Pcntr {
        issued_write: iw,
        issued_read: ir,
        completed_write: iw - sw.min(iw),
        completed_read: ir - sr.min(ir),
        target: 0,
    }
}

/// Words of one PE's summary in the runtime area finalize gathers: a header (0: never
/// published; otherwise 1 + the PE's `SHMEM_PROFILE` level), then calls, bytes and nanos
/// per family.
pub(crate) const WORDS: usize = 1 + FAMILIES * 3;
// The runtime area holds the summary at a size of its own.
const _: () = assert!(WORDS == Internal::PROFILE_WORDS);

/// A summary as words (calls, bytes, nanos per family) after the header `head`.
pub(crate) fn to_words(head: u64, s: &Summary) -> [u64; WORDS] {
    let mut w = [0u64; WORDS];
    w[0] = head;
    for (f, c) in s.iter().enumerate() {
        w[1 + 3 * f] = c.calls;
        w[2 + 3 * f] = c.bytes;
        w[3 + 3 * f] = c.nanos;
    }
    w
}

/// The inverse of [`to_words`]: the header and the summary.
pub(crate) fn from_words(w: &[u64; WORDS]) -> (u64, Summary) {
    let mut s = [Counts::default(); FAMILIES];
    for (f, c) in s.iter_mut().enumerate() {
        *c = Counts {
            calls: w[1 + 3 * f],
            bytes: w[2 + 3 * f],
            nanos: w[3 + 3 * f],
        };
    }
    (w[0], s)
}

/// At finalize, on every PE whatever its `SHMEM_PROFILE`: stops counting and writes this
/// PE's summary into its runtime area, before it says it is finalizing (the state word's
/// release makes the summary visible to whoever sees that). No synchronization of its
/// own, so PEs that disagree on `SHMEM_PROFILE` cannot hang each other.
pub(crate) fn publish(rt: &Runtime) {
    let words = to_words(1 + rt.cfg.profile.min(2) as u64, &snapshot());
    set_level(0);
    let base = std::mem::offset_of!(Internal, profile);
    for (i, w) in words.iter().enumerate() {
        rt.set_own(Runtime::internal_addr(base + 8 * i), *w);
    }
}

/// On PE 0 with `SHMEM_PROFILE` set, after finalize's barrier saw every PE finalizing
/// (so every summary is published) and before the peers can be gone (shared-memory
/// peers' segments stay mapped here; UCX peers wait in one more world sync): reads every
/// PE's summary and prints the report to stderr.
pub(crate) fn print_gathered(rt: &Runtime) {
    const R: &str = "shmem_finalize";
    let base = std::mem::offset_of!(Internal, profile);
    let mut all = Vec::with_capacity(rt.npes);
    let mut off = Vec::new();
    for pe in 0..rt.npes {
        let mut w = [0u64; WORDS];
        if let Err(e) = rt
            .fabric
            .get_words(
                crate::ctx::Ctx::default_ctx().state(),
                pe,
                Runtime::internal_addr(base),
                &mut w,
            )
            .at(R)
        {
            eprintln!("rshmem: PE {}: profile: {e}", rt.me);
            return;
        }
        let (head, s) = from_words(&w);
        if head == 1 {
            off.push(pe);
        }
        all.push(s);
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let mut text = report(&all);
    if !off.is_empty() {
        text.push_str(&format!(
            "rshmem profile: SHMEM_PROFILE was not set on PE(s) {off:?}: they counted only while shmem_pcontrol turned counting on\n"
        ));
    }
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// The finalize report: a table per PE, then the job's (sums, and the per-PE range of
/// time), for every family with at least one call.
pub fn report(per_pe: &[Summary]) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let us = |ns: u64| ns as f64 / 1000.0;
    for (pe, s) in per_pe.iter().enumerate() {
        let _ = writeln!(o, "rshmem profile: PE {pe}");
        let _ = writeln!(
            o,
            "  {:<8} {:>12} {:>16} {:>14}",
            "family", "calls", "bytes", "time_us"
        );
        for f in Family::ALL {
            let c = s[f as usize];
            if c.calls > 0 {
                let _ = writeln!(
                    o,
                    "  {:<8} {:>12} {:>16} {:>14.1}",
                    f.name(),
                    c.calls,
                    c.bytes,
                    us(c.nanos)
                );
            }
        }
    }
    let _ = writeln!(o, "rshmem profile: job ({} PEs)", per_pe.len());
    let _ = writeln!(
        o,
        "  {:<8} {:>12} {:>16} {:>14} {:>12} {:>12}",
        "family", "calls", "bytes", "time_us", "min_pe_us", "max_pe_us"
    );
    for f in Family::ALL {
        let i = f as usize;
        let calls: u64 = per_pe.iter().map(|s| s[i].calls).sum();
        if calls == 0 {
            continue;
        }
        let bytes: u64 = per_pe.iter().map(|s| s[i].bytes).sum();
        let nanos: u64 = per_pe.iter().map(|s| s[i].nanos).sum();
        let min = per_pe.iter().map(|s| s[i].nanos).min().unwrap_or(0);
        let max = per_pe.iter().map(|s| s[i].nanos).max().unwrap_or(0);
        let _ = writeln!(
            o,
            "  {:<8} {:>12} {:>16} {:>14.1} {:>12.1} {:>12.1}",
            f.name(),
            calls,
            bytes,
            us(nanos),
            us(min),
            us(max)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_report_sums() {
        let mut s = [Counts::default(); FAMILIES];
        s[Family::Put as usize] = Counts {
            calls: 3,
            bytes: 24,
            nanos: 900,
        };
        let w = to_words(2, &s);
        assert_eq!(from_words(&w), (2, s));
        let r = report(&[s, s]);
        assert!(r.contains("rshmem profile: PE 1"));
        let job = r.split("job (2 PEs)").nth(1).unwrap();
        let put = job
            .lines()
            .find(|l| l.trim_start().starts_with("put"))
            .unwrap();
        let cols: Vec<&str> = put.split_whitespace().collect();
        assert_eq!(&cols[..4], &["put", "6", "48", "1.8"]);
        assert!(!job.contains("get"));
    }
}
