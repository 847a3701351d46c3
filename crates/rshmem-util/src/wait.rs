//! The waiting policy of every spin in rshmem (waits, barriers, locks, quiet).
//!
//! PEs are often oversubscribed (4 PEs on 2 cores), so a waiter must give its core away
//! quickly: spin a little with `spin_loop` hints, then `yield` on every further check.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicU32, Ordering};

/// Spin-then-yield backoff for one wait loop. Create one per wait; call [`Waiter::snooze`]
/// each time the awaited condition is found false.
#[derive(Debug, Default)]
pub struct Waiter {
    step: u32,
}

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
        Waiter { step: 0 }
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
            std::thread::yield_now();
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
}
