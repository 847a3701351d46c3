//! The waiting policy of every spin in rshmem (waits, barriers, locks, quiet).
//!
//! PEs are often oversubscribed (4 PEs on 2 cores), so a waiter must give its core away
//! quickly: spin a little with `spin_loop` hints, then `yield` on every further check.
//!
//! A wait that has gone on for a long time ([`OVERDUE_AFTER`]) may be waiting for a PE
//! that will never come (it finalized, or skipped a collective): [`Waiter::overdue`] tells
//! the runtime when to look. It reads the clock only while yielding, once every
//! [`CLOCK_EVERY`] yields (a vDSO read next to a `sched_yield`), so the spinning fast path
//! is exactly what it was.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Spin-then-yield backoff for one wait loop. Create one per wait; call [`Waiter::snooze`]
/// each time the awaited condition is found false.
#[derive(Debug, Default)]
pub struct Waiter {
    step: u32,
    /// Yields since the clock was last read.
    yields: u32,
    /// First clock reading of this wait (taken after its first [`CLOCK_EVERY`] yields).
    since: Option<Instant>,
}

/// How long a wait runs before [`Waiter::overdue`] starts reporting it.
pub const OVERDUE_AFTER: Duration = Duration::from_millis(100);
/// Yields between two clock readings.
pub const CLOCK_EVERY: u32 = 32;

/// Steps that only spin (2^step hints each) before yielding starts.
const DEFAULT_SPIN_STEPS: u32 = 6;
static SPIN_STEPS: AtomicU32 = AtomicU32::new(DEFAULT_SPIN_STEPS);

/// Sets how long waiters spin before yielding: when there are more PEs on the host than
/// cores, spinning only delays the PE that would make progress, so yield at once.
pub fn set_oversubscribed(oversubscribed: bool) {
    let steps = if oversubscribed {
        0
    } else {
        DEFAULT_SPIN_STEPS
    };
    SPIN_STEPS.store(steps, Ordering::Relaxed);
}

impl Waiter {
    /// A fresh waiter.
    #[inline]
    pub fn new() -> Self {
        Waiter {
            step: 0,
            yields: 0,
            since: None,
        }
    }

    /// Backs off once: a short exponential spin first, then a `sched_yield` per call.
    #[inline]
    pub fn snooze(&mut self) {
        if self.step < SPIN_STEPS.load(Ordering::Relaxed) {
            for _ in 0..(1u32 << self.step) {
                spin_loop();
            }
            self.step += 1;
        } else {
            self.yields += 1;
            std::thread::yield_now();
        }
    }

    /// Whether this wait has yielded for at least [`OVERDUE_AFTER`]: the moment to check
    /// whether what it waits for can still happen. Returns true at most once every
    /// [`CLOCK_EVERY`] yields, and never during the spin phase, so calling it before each
    /// [`Waiter::snooze`] costs a compare on the fast path.
    #[inline]
    pub fn overdue(&mut self) -> bool {
        if self.yields < CLOCK_EVERY {
            return false;
        }
        self.overdue_slow()
    }

    #[cold]
    fn overdue_slow(&mut self) -> bool {
        self.yields = 0;
        let now = Instant::now();
        match self.since {
            None => {
                self.since = Some(now);
                false
            }
            Some(t) => now.duration_since(t) >= OVERDUE_AFTER,
        }
    }

    /// Waits until `ready()` is true.
    #[inline]
    pub fn wait_for(mut ready: impl FnMut() -> bool) {
        let mut w = Waiter::new();
        while !ready() {
            w.snooze();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_until_ready() {
        let mut n = 0;
        Waiter::wait_for(|| {
            n += 1;
            n > 100
        });
        assert_eq!(n, 101);
    }

    #[test]
    fn overdue_only_after_yielding_long_enough() {
        let mut w = Waiter::new();
        for _ in 0..(DEFAULT_SPIN_STEPS + CLOCK_EVERY - 1) {
            w.snooze();
            assert!(!w.overdue());
        }
        let start = Instant::now();
        let mut seen = false;
        while start.elapsed() < OVERDUE_AFTER * 20 {
            w.snooze();
            if w.overdue() {
                seen = true;
                break;
            }
        }
        assert!(seen);
        assert!(start.elapsed() >= OVERDUE_AFTER);
    }
}
