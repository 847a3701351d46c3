//! The copy engine: background threads ("lanes") that carry out large non-blocking
//! transfers between node-local segments, so the thread that issued them computes
//! meanwhile.
//!
//! Each context and each request owns a [`Completion`] (operations handed to the engine,
//! operations finished) and is bound to one lane, so completing one never waits for
//! another's work. A lane is a bounded lock-free queue and one thread, started on first
//! use; it parks when idle and is woken by the next submission. A thread that waits for
//! a completion runs queued jobs itself rather than yield: on an oversubscribed host the
//! engine thread may not be running, and the waiter has nothing better to do.

use std::sync::OnceLock;

use crossbeam_utils::CachePadded;

// The lanes' primitives come from `conc`, so the loom model runs this code as it is.
// `Completion` keeps std's atomics: it is built in `const` contexts (statics), which
// loom's atomics do not allow.
use crate::conc::Waiter;
use crate::conc::{fence, thread, Arc, ArrayQueue, AtomicBool, AtomicU64, AtomicUsize, Ordering};
use thread::JoinHandle;

use crate::word::{AmoOp, Word};

/// Jobs a lane holds before submitters copy inline instead.
const QUEUE_DEPTH: usize = 1024;
/// Empty polls (spinning, then yielding) before an idle lane parks.
#[cfg(not(loom))]
const IDLE_POLLS: u32 = 64;
/// The loom model parks at the second empty poll: the handshake is the same, and every
/// poll multiplies the interleavings to explore.
#[cfg(loom)]
const IDLE_POLLS: u32 = 1;
/// Most pieces one transfer is cut into (`SHMEM_COPY_ENGINE_PIECE` sets the smallest).
const PIECES_MAX: usize = 16;

/// Test hook: while set, lanes and waiters run no jobs (so tests can observe what a
/// `quiet` on another context leaves pending).
static PAUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stops (`true`) or resumes the copy engine, for tests of completion isolation: while
/// stopped, transfers handed to the engine stay pending and their waiters wait.
#[doc(hidden)]
pub fn pause_for_tests(paused: bool) {
    PAUSED.store(paused, Ordering::SeqCst);
}

/// Completion state of a context or request: operations handed to the engine, and
/// operations the engine has finished. Complete when the two are equal.
#[derive(Debug)]
pub struct Completion {
    issued: std::sync::atomic::AtomicU64,
    /// Written by lanes: kept off the issuers' cache line.
    done: CachePadded<std::sync::atomic::AtomicU64>,
}

impl Default for Completion {
    fn default() -> Self {
        Completion::new()
    }
}

impl Completion {
    /// Nothing issued.
    pub const fn new() -> Completion {
        Completion {
            issued: std::sync::atomic::AtomicU64::new(0),
            done: CachePadded::new(std::sync::atomic::AtomicU64::new(0)),
        }
    }

    /// Whether every operation issued so far has finished (and its effects are visible).
    #[inline]
    pub fn is_complete(&self) -> bool {
        let issued = self.issued.load(Ordering::Relaxed);
        self.done.load(Ordering::Acquire) >= issued
    }

    /// Whether anything was ever issued (cheap test for the all-inline common case).
    #[inline]
    pub(crate) fn pending(&self) -> bool {
        !self.is_complete()
    }

    /// Counts `n` operations as issued (`finished`: and as done), standing for the
    /// engine in unit tests that need no thread.
    #[cfg(test)]
    pub(crate) fn count_for_tests(&self, n: u64, finished: bool) {
        let c = if finished { &*self.done } else { &self.issued };
        c.fetch_add(n, std::sync::atomic::Ordering::Release);
    }

    /// Counts `n` operations as issued, before they are started (a network transfer's
    /// completion callback may run on another thread at once).
    #[inline]
    pub(crate) fn issue(&self, n: u64) {
        self.issued.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts `n` issued operations as finished (release: their effects are visible).
    #[inline]
    pub(crate) fn finish(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Release);
    }

    /// The finished count, for completion callbacks that add to it.
    #[inline]
    pub(crate) fn done_counter(&self) -> &std::sync::atomic::AtomicU64 {
        &self.done
    }

    /// Forgets history (the object is being recycled; it must be complete).
    pub(crate) fn reset(&mut self) {
        debug_assert!(self.is_complete());
        *self.issued.get_mut() = 0;
        *self.done.get_mut() = 0;
    }
}

/// One transfer: copy `len` bytes, then optionally update a signal word.
struct Job {
    dst: *mut u8,
    src: *const u8,
    len: usize,
    signal: Option<(*mut u64, AmoOp<u64>)>,
    comp: *const Completion,
}

// SAFETY: a job holds addresses of mapped segments, of user buffers the issuer promised
// to keep untouched until completion, and of a `Completion` kept alive until complete;
// any thread may carry it out.
unsafe impl Send for Job {}

impl Job {
    /// Carries the job out and marks it finished.
    ///
    /// # Safety
    /// The pointers of the job are still valid (the submit contract).
    unsafe fn run(self, lane: &Lane) {
        // SAFETY: submit's contract: both ranges valid for `len`, and the issuer does not
        // touch them until completion. `copy` keeps a transfer to oneself well defined.
        unsafe { std::ptr::copy(self.src, self.dst, self.len) };
        if let Some((sig, op)) = self.signal {
            // SAFETY: a checked, aligned signal word in a mapped segment; the atomic
            // publishes the copy before the signal.
            unsafe { u64::rmw(sig, op) };
        }
        // SAFETY: the completion outlives its unfinished jobs (submit's contract).
        unsafe { (*self.comp).done.fetch_add(1, Ordering::Release) };
        lane.done.fetch_add(1, Ordering::Release);
    }
}

/// One background copy thread and its queue.
struct Lane {
    queue: ArrayQueue<Job>,
    sleeping: AtomicBool,
    stop: AtomicBool,
    /// Jobs ever submitted to / finished by this lane (for [`Engine::drain`]).
    issued: CachePadded<AtomicU64>,
    done: CachePadded<AtomicU64>,
}

impl Lane {
    fn work(&self) {
        let mut idle = 0u32;
        let mut w = Waiter::new();
        loop {
            if PAUSED.load(Ordering::Relaxed) {
                w.snooze();
                continue;
            }
            if let Some(job) = self.queue.pop() {
                // SAFETY: jobs in the queue satisfy submit's contract.
                unsafe { job.run(self) };
                idle = 0;
                w = Waiter::new();
                continue;
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            if idle < IDLE_POLLS {
                idle += 1;
                w.snooze();
                continue;
            }
            // Announce the nap, then look once more: a submitter either sees `sleeping`
            // or its job is seen here (both sides order with SeqCst).
            self.sleeping.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.queue.is_empty() && !self.stop.load(Ordering::SeqCst) {
                thread::park();
            }
            self.sleeping.store(false, Ordering::Relaxed);
            idle = 0;
        }
    }

    /// Runs one queued job on the calling thread, if there is one.
    fn help(&self) -> bool {
        if PAUSED.load(Ordering::Relaxed) {
            return false;
        }
        match self.queue.pop() {
            Some(job) => {
                // SAFETY: jobs in the queue satisfy submit's contract.
                unsafe { job.run(self) };
                true
            }
            None => false,
        }
    }
}

/// The copy engine of one PE.
#[derive(Debug)]
pub(crate) struct Engine {
    lanes: Box<[Arc<LaneBox>]>,
    threads: Box<[OnceLock<JoinHandle<()>>]>,
    threshold: usize,
    /// Smallest piece of a cut transfer (0: never cut). A large transfer is queued as
    /// several jobs so that a thread waiting for it takes a share of what is left
    /// instead of idling while the lane finishes.
    piece: usize,
    next_lane: AtomicUsize,
}

/// A lane behind an `Arc` shared with its thread.
struct LaneBox(Lane);

impl std::fmt::Debug for LaneBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane")
            .field("queued", &self.0.queue.len())
            .field("issued", &self.0.issued.load(Ordering::Relaxed))
            .field("done", &self.0.done.load(Ordering::Relaxed))
            .finish()
    }
}

impl Engine {
    /// An engine of `lanes` lanes taking transfers of at least `threshold` bytes, cut
    /// into pieces of at least `piece` bytes (0: never cut); no thread starts until the
    /// first submission.
    pub(crate) fn new(lanes: usize, threshold: usize, piece: usize) -> Engine {
        Engine {
            lanes: (0..lanes)
                .map(|_| {
                    Arc::new(LaneBox(Lane {
                        queue: ArrayQueue::new(QUEUE_DEPTH),
                        sleeping: AtomicBool::new(false),
                        stop: AtomicBool::new(false),
                        issued: CachePadded::new(AtomicU64::new(0)),
                        done: CachePadded::new(AtomicU64::new(0)),
                    }))
                })
                .collect(),
            threads: (0..lanes).map(|_| OnceLock::new()).collect(),
            threshold: threshold.max(1),
            piece,
            next_lane: AtomicUsize::new(0),
        }
    }

    /// Whether a transfer of `len` bytes goes to the engine.
    #[inline(always)]
    pub(crate) fn takes(&self, len: usize) -> bool {
        len >= self.threshold && !self.lanes.is_empty()
    }

    /// The lane for a new context (round robin).
    pub(crate) fn pick_lane(&self) -> usize {
        match self.lanes.len() {
            0 | 1 => 0,
            n => self.next_lane.fetch_add(1, Ordering::Relaxed) % n,
        }
    }

    /// The lane of the calling thread's requests: picked round robin on the thread's
    /// first request, then kept, so threads issuing requests share no counter.
    #[inline]
    pub(crate) fn thread_lane(&self) -> usize {
        thread_local! {
            static LANE: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
        }
        if self.lanes.len() <= 1 {
            return 0;
        }
        LANE.with(|c| {
            if c.get() == usize::MAX {
                c.set(self.pick_lane());
            }
            c.get()
        })
    }

    fn thread(&self, i: usize) -> &JoinHandle<()> {
        self.threads[i].get_or_init(|| {
            let lane = Arc::clone(&self.lanes[i]);
            thread::Builder::new()
                .name(format!("rshmem-copy-{i}"))
                .spawn(move || lane.0.work())
                .unwrap_or_else(|e| crate::error::fatal(&format!("cannot start the copy engine thread ({e}); set SHMEM_COPY_ENGINE_LANES=0 to go without")))
        })
    }

    /// Hands a copy of `len` bytes from `src` to `dst` (then the signal update, if any)
    /// to lane `lane`, counted in `comp`; a large plain copy is queued as several pieces.
    /// Pieces that do not fit in the lane's queue run inline.
    ///
    /// # Safety
    /// `src` and `dst` are valid for `len` bytes and untouched by the caller until `comp`
    /// is complete; `signal` is a valid aligned word; `comp` outlives the job.
    pub(crate) unsafe fn submit(
        &self,
        lane: usize,
        comp: &Completion,
        dst: *mut u8,
        src: *const u8,
        len: usize,
        signal: Option<(*mut u64, AmoOp<u64>)>,
    ) {
        let i = lane % self.lanes.len();
        let l = &self.lanes[i].0;
        // Pieces may run at once on different threads: only a plain copy between
        // disjoint ranges may be cut (a signal must follow the whole transfer).
        debug_assert!(len > 0, "the engine takes transfers above its threshold");
        let disjoint = (dst as usize).abs_diff(src as usize) >= len;
        let piece = if signal.is_none() && disjoint && self.piece > 0 {
            len.div_ceil((len / self.piece).clamp(1, PIECES_MAX))
        } else {
            len
        };
        let pieces = len.div_ceil(piece) as u64;
        comp.issued.fetch_add(pieces, Ordering::Relaxed);
        l.issued.fetch_add(pieces, Ordering::Relaxed);
        let mut queued = false;
        for off in (0..len).step_by(piece) {
            let job = Job {
                dst: dst.wrapping_add(off),
                src: src.wrapping_add(off),
                len: piece.min(len - off),
                signal,
                comp,
            };
            match l.queue.push(job) {
                Ok(()) => queued = true,
                // SAFETY: the caller's contract.
                Err(job) => unsafe { job.run(l) },
            }
        }
        if queued {
            let t = self.thread(i);
            fence(Ordering::SeqCst);
            if l.sleeping.load(Ordering::SeqCst) {
                t.thread().unpark();
            }
        }
    }

    /// Waits until `comp` is complete, running queued jobs of `lane` meanwhile.
    pub(crate) fn wait(&self, lane: usize, comp: &Completion) {
        if comp.is_complete() {
            return;
        }
        let l = &self.lanes[lane % self.lanes.len()].0;
        let mut w = Waiter::new();
        while !comp.is_complete() {
            if !l.help() {
                w.snooze();
            }
        }
    }

    /// Runs one job of `lane` on this thread if one is queued (for waiters of requests).
    pub(crate) fn help(&self, lane: usize) -> bool {
        !self.lanes.is_empty() && self.lanes[lane % self.lanes.len()].0.help()
    }

    /// Waits until every job submitted before the call, on every lane, has finished.
    pub(crate) fn drain(&self) {
        for lb in self.lanes.iter() {
            let l = &lb.0;
            let target = l.issued.load(Ordering::Acquire);
            let mut w = Waiter::new();
            while l.done.load(Ordering::Acquire) < target {
                if !l.help() {
                    w.snooze();
                }
            }
        }
    }

    /// Finishes every queued job and stops the lane threads.
    pub(crate) fn shutdown(&mut self) {
        for (lb, t) in self.lanes.iter().zip(self.threads.iter_mut()) {
            lb.0.stop.store(true, Ordering::SeqCst);
            if let Some(t) = t.take() {
                t.thread().unpark();
                let _ = t.join();
            }
            while lb.0.help() {}
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn pattern(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// Copies of awkward sizes arrive whole, cut or not, with every piece counted.
    #[test]
    fn cut_and_uncut_copies_arrive_whole() {
        for piece in [0, 64 << 10, 1000] {
            let engine = Engine::new(2, 1, piece);
            for (k, n) in [1usize, 4095, 65_537, 1_000_003, 4 << 20]
                .into_iter()
                .enumerate()
            {
                let src = pattern(n, k as u8);
                let mut dst = vec![0u8; n];
                let comp = Completion::new();
                // SAFETY: both buffers live and untouched until the wait below.
                unsafe { engine.submit(k, &comp, dst.as_mut_ptr(), src.as_ptr(), n, None) };
                engine.wait(k, &comp);
                assert!(comp.is_complete());
                assert!(dst == src, "{n} bytes, piece {piece}");
            }
            engine.drain();
        }
    }

    /// A copy between overlapping ranges keeps memmove semantics (it is never cut), and
    /// a signal follows the whole copy.
    #[test]
    fn overlapping_copy_and_signal() {
        let engine = Engine::new(1, 1, 4096);
        let n = 1 << 20;
        let mut buf = pattern(n + 4096, 7);
        let want: Vec<u8> = buf[..n].to_vec();
        let comp = Completion::new();
        let base = buf.as_mut_ptr();
        // SAFETY: both ranges lie in `buf`, untouched until the wait.
        unsafe { engine.submit(0, &comp, base.wrapping_add(4096), base, n, None) };
        engine.wait(0, &comp);
        assert!(buf[4096..] == want[..]);

        let src = pattern(n, 3);
        let mut dst = vec![0u8; n];
        let mut sig = 0u64;
        // SAFETY: as above; `sig` is an aligned word.
        unsafe {
            engine.submit(
                0,
                &comp,
                dst.as_mut_ptr(),
                src.as_ptr(),
                n,
                Some((&mut sig, AmoOp::Set(9))),
            )
        };
        engine.wait(0, &comp);
        assert_eq!(sig, 9);
        assert!(dst == src);
    }
}
