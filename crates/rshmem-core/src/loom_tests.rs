//! loom models of the runtime's concurrency protocols, run on their real code:
//! `RUSTFLAGS="--cfg loom" cargo test -p rshmem-core --lib loom` (scripts/ci-miri-loom.sh).
//!
//! - the copy engine's park/unpark handshake (`engine.rs` over the `conc` shims): a
//!   submission that races with the lane going to sleep is never lost;
//! - the locks' MCS queue protocols (`lock::acquire`/`release` over `LockWords`, here
//!   loom atomics standing for the lock's words), FIFO hand-over and stealing, in both
//!   placements (`shmem_set_lock`'s word per PE, `lock_at`'s lent nodes): mutual
//!   exclusion, hand-over, and the misuse checks;
//! - the request objects' recycling (`request.rs`, with its queue from `conc`).

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

use crate::engine::{Completion, Engine};
use crate::error::Result;
use crate::lock::{acquire, release, Fields, LockWords};
use crate::word::AmoOp;

/// Waits for `comp` without running queued jobs: only the lane can complete it, so a
/// lost wake-up would leave this loop spinning and the model would fail.
fn wait_for_lane(comp: &Completion) {
    while !comp.is_complete() {
        thread::yield_now();
    }
}

#[test]
fn loom_engine_submission_racing_with_park_is_never_lost() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let engine = Engine::new(1, 1, 0);
        let comp = Completion::new();
        let src = [7u8; 8];
        let mut dst = [0u8; 8];
        for round in 0..2u8 {
            // SAFETY: both buffers outlive the wait below and are untouched until then.
            unsafe { engine.submit(0, &comp, dst.as_mut_ptr(), src.as_ptr(), 8, None) };
            wait_for_lane(&comp);
            assert_eq!(dst, [7u8; 8], "round {round}");
            dst = [0; 8];
        }
        drop(engine); // stop + unpark + join of the lane thread
    });
}

#[test]
fn loom_engine_waiter_that_helps_and_lane_share_jobs() {
    loom::model(|| {
        let engine = Engine::new(1, 1, 4);
        let comp = Completion::new();
        let src = [3u8; 8];
        let mut dst = [0u8; 8];
        // Cut into two pieces: the lane and the waiter may each run one.
        // SAFETY: as above.
        unsafe { engine.submit(0, &comp, dst.as_mut_ptr(), src.as_ptr(), 8, None) };
        engine.wait(0, &comp);
        assert_eq!(dst, [3u8; 8]);
        engine.drain();
    });
}

/// A lock's words as loom atomics, in one of the two placements: each PE's word is its
/// node and PE 0's is the home word too (`shmem_set_lock`), or the home word is one more
/// atomic and each PE lends a node of its pool (`lock_at`). PE `me`'s view of them.
struct Words {
    words: Arc<Vec<AtomicU64>>,
    me: usize,
    fields: Fields,
    pool: bool,
}

/// A pool node id's slot bits (as `lock_at`'s).
const SLOT_BITS: u32 = 10;

/// `op` on `a`, with the orderings of `Word::rmw` on shared memory (word.rs).
fn rmw(a: &AtomicU64, op: AmoOp<u64>) -> u64 {
    match op {
        AmoOp::Fetch => a.load(Ordering::Acquire),
        AmoOp::Set(v) => {
            a.store(v, Ordering::Release);
            v
        }
        AmoOp::Swap(v) => a.swap(v, Ordering::AcqRel),
        AmoOp::CompareSwap { cond, value } => {
            match a.compare_exchange(cond, value, Ordering::AcqRel, Ordering::Acquire) {
                Ok(x) | Err(x) => x,
            }
        }
        AmoOp::Add(v) => a.fetch_add(v, Ordering::AcqRel),
        AmoOp::And(v) => a.fetch_and(v, Ordering::AcqRel),
        AmoOp::Or(v) => a.fetch_or(v, Ordering::AcqRel),
        AmoOp::Xor(v) => a.fetch_xor(v, Ordering::AcqRel),
    }
}

impl Words {
    fn own_word(&self) -> &AtomicU64 {
        &self.words[self.me]
    }

    fn home_word(&self) -> &AtomicU64 {
        &self.words[if self.pool { self.words.len() - 1 } else { 0 }]
    }
}

impl LockWords for Words {
    fn me(&self) -> usize {
        self.me
    }

    fn own(&self) -> u64 {
        if self.pool {
            (self.me as u64 + 1) << SLOT_BITS
        } else {
            self.me as u64 + 1
        }
    }

    fn pe_of(&self, id: u64) -> usize {
        (if self.pool { id >> SLOT_BITS } else { id }) as usize - 1
    }

    fn fields(&self) -> Fields {
        self.fields
    }

    fn tracks_holder(&self) -> bool {
        !self.pool
    }

    fn home(&self, op: AmoOp<u64>) -> Result<u64> {
        Ok(rmw(self.home_word(), op))
    }

    fn node(&self, id: u64, op: AmoOp<u64>) -> Result<u64> {
        Ok(rmw(&self.words[self.pe_of(id)], op))
    }

    fn load_own(&self) -> u64 {
        self.own_word().load(Ordering::Acquire)
    }

    fn wait_own(&self, _ahead: Option<usize>, ready: impl Fn(u64) -> bool) -> Result<u64> {
        loop {
            let v = self.load_own();
            if ready(v) {
                return Ok(v);
            }
            thread::yield_now();
        }
    }

    fn wait_home(&self, free: impl Fn(u64) -> bool, _holder: impl Fn(u64) -> usize) -> Result<u64> {
        loop {
            let v = self.home_word().load(Ordering::Acquire);
            if free(v) {
                return Ok(v);
            }
            thread::yield_now();
        }
    }

    fn quiet(&self) {
        loom::sync::atomic::fence(Ordering::SeqCst);
    }
}

/// `shmem_set_lock`'s placement, FIFO and stealing (as `ops::lock`'s fields).
const WORD_FIFO: (Fields, bool) = (
    Fields {
        tail: 0xffff_ffff,
        holder_shift: 0,
    },
    false,
);
const WORD_STEAL: (Fields, bool) = (
    Fields {
        tail: 0xffff,
        holder_shift: 16,
    },
    false,
);
/// `lock_at`'s placement, FIFO and stealing.
const POOL_FIFO: (Fields, bool) = (
    Fields {
        tail: u64::MAX,
        holder_shift: 0,
    },
    true,
);
const POOL_STEAL: (Fields, bool) = (
    Fields {
        tail: 0xffff_ffff,
        holder_shift: 32,
    },
    true,
);

/// `n` PEs (threads) each run `body` on their view of the lock's words (`layout`: the
/// fields and whether nodes come from a pool), with a shared non-atomic counter that
/// only the lock protects.
fn lock_model(n: usize, layout: (Fields, bool), body: fn(&Words, &UnsafeCell<u64>, &AtomicUsize)) {
    let (fields, pool) = layout;
    let mut b = loom::model::Builder::new();
    // Three PEs (two spinning waiters) are explored with fewer preemptions, and need
    // longer executions than loom's default.
    b.preemption_bound = Some(if n > 2 { 1 } else { 3 });
    b.max_branches = 20_000;
    b.check(move || {
        let nwords = n + usize::from(pool);
        let words: Arc<Vec<AtomicU64>> = Arc::new((0..nwords).map(|_| AtomicU64::new(0)).collect());
        let data = Arc::new((UnsafeCell::new(0u64), AtomicUsize::new(0)));
        let pes: Vec<_> = (0..n)
            .map(|me| {
                let (words, data) = (words.clone(), data.clone());
                thread::spawn(move || {
                    let l = Words {
                        words,
                        me,
                        fields,
                        pool,
                    };
                    body(&l, &data.0, &data.1)
                })
            })
            .collect();
        for p in pes {
            p.join().unwrap();
        }
        let taken = data.1.load(Ordering::Relaxed) as u64;
        // SAFETY: every PE thread has been joined.
        assert_eq!(data.0.with(|p| unsafe { *p }), taken);
        // The lock is free and its queue empty again; the nodes that track their PE say
        // it holds nothing (a pool's lent nodes keep what they were left with).
        let w = Words {
            words,
            me: 0,
            fields,
            pool,
        };
        assert_eq!(w.home_word().load(Ordering::Relaxed), 0);
        if !pool {
            for w in w.words.iter() {
                assert_eq!(w.load(Ordering::Relaxed), 0);
            }
        }
    });
}

/// The critical section: a non-atomic increment (loom reports a data race if two PEs
/// are ever inside at once, or if the hand-over does not order them).
fn inside(data: &UnsafeCell<u64>, taken: &AtomicUsize) {
    // SAFETY: only under the lock; loom checks it.
    data.with_mut(|p| unsafe { *p += 1 });
    taken.fetch_add(1, Ordering::Relaxed);
}

/// Each PE takes the lock, runs the critical section and releases it.
fn take_and_release(l: &Words, data: &UnsafeCell<u64>, taken: &AtomicUsize) {
    assert!(acquire(l, "shmem_set_lock", false).unwrap());
    inside(data, taken);
    release(l, "shmem_clear_lock").unwrap();
}

/// PE 0 tries the lock once while PE 1 waits for it.
fn try_against_wait(l: &Words, data: &UnsafeCell<u64>, taken: &AtomicUsize) {
    let got = if l.me == 0 {
        acquire(l, "shmem_test_lock", true).unwrap()
    } else {
        acquire(l, "shmem_set_lock", false).unwrap()
    };
    if got {
        inside(data, taken);
        release(l, "shmem_clear_lock").unwrap();
    }
}

/// Misuse is refused whatever the other PE is doing, and leaves the lock working.
fn misuse_then_use(l: &Words, data: &UnsafeCell<u64>, taken: &AtomicUsize) {
    assert!(release(l, "shmem_clear_lock").is_err());
    assert!(acquire(l, "shmem_set_lock", false).unwrap());
    assert!(acquire(l, "shmem_set_lock", false).is_err());
    assert!(acquire(l, "shmem_test_lock", true).is_err());
    inside(data, taken);
    release(l, "shmem_clear_lock").unwrap();
}

#[test]
fn loom_lock_two_pes_exclude_each_other_and_hand_over() {
    lock_model(2, WORD_FIFO, take_and_release);
}

#[test]
fn loom_lock_test_lock_against_set_lock() {
    lock_model(2, WORD_FIFO, try_against_wait);
}

#[test]
fn loom_lock_misuse_is_reported_and_leaves_the_lock_working() {
    lock_model(2, WORD_FIFO, misuse_then_use);
}

#[test]
fn loom_lock_three_pes_queue_behind_each_other() {
    lock_model(3, WORD_FIFO, take_and_release);
}

#[test]
fn loom_lock_steal_two_pes_exclude_each_other() {
    lock_model(2, WORD_STEAL, take_and_release);
}

#[test]
fn loom_lock_steal_test_lock_against_set_lock() {
    lock_model(2, WORD_STEAL, try_against_wait);
}

#[test]
fn loom_lock_steal_misuse_is_reported_and_leaves_the_lock_working() {
    lock_model(2, WORD_STEAL, misuse_then_use);
}

#[test]
fn loom_lock_steal_three_pes_queue_and_head_takes_over() {
    lock_model(3, WORD_STEAL, take_and_release);
}

#[test]
fn loom_lock_pool_fifo_two_pes_exclude_each_other() {
    lock_model(2, POOL_FIFO, take_and_release);
}

#[test]
fn loom_lock_pool_steal_two_pes_exclude_each_other() {
    lock_model(2, POOL_STEAL, take_and_release);
}

#[test]
fn loom_lock_pool_steal_three_pes_queue_and_head_takes_over() {
    lock_model(3, POOL_STEAL, take_and_release);
}

/// The request objects' recycling (`request.rs`: a per-thread cache of one under loom,
/// then the PE's pool, here loom's stand-in queue): two threads allocating, using and
/// releasing requests at once never hold the same object, and every object is freed.
#[test]
fn loom_request_pool_never_hands_one_object_to_two_threads() {
    use crate::request::{alloc_from, new_pool, release};
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(|| {
        let pool = Arc::new(new_pool());
        let users: Vec<_> = (0..2usize)
            .map(|t| {
                let pool = pool.clone();
                thread::spawn(move || {
                    for _ in 0..2 {
                        // Two at once, so one goes past the cache of one into the pool.
                        let hs = [alloc_from(&pool, 10 + t), alloc_from(&pool, 20 + t)];
                        assert_ne!(hs[0], hs[1]);
                        thread::yield_now();
                        for (h, lane) in hs.into_iter().zip([10 + t, 20 + t]) {
                            // SAFETY: live: allocated above, released below.
                            let (comp, l) = unsafe { h.get() }.completion();
                            assert_eq!(l, lane, "another thread took this object");
                            assert!(comp.is_complete());
                            // SAFETY: complete; this handle is not used again.
                            unsafe { release(&pool, h) };
                        }
                    }
                })
            })
            .collect();
        for u in users {
            u.join().unwrap();
        }
    });
}
