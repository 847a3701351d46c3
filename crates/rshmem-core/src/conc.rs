//! The concurrency primitives of the copy engine's lanes: std's (and crossbeam's queue,
//! `rshmem_util`'s `Waiter`) in a normal build, loom's under `cfg(loom)`, so the loom
//! models in `loom_tests` check the engine's real code. Only the names are swapped here;
//! nothing else differs between the two builds.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::thread;

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::Arc;
#[cfg(loom)]
pub(crate) use loom::thread;

/// A bounded multi-producer multi-consumer queue.
#[cfg(not(loom))]
pub(crate) use crossbeam_queue::ArrayQueue;

/// Spin-then-yield backoff of a wait loop.
#[cfg(not(loom))]
pub(crate) use rshmem_util::wait::Waiter;

/// loom's stand-in for crossbeam's `ArrayQueue` (same methods): a bounded queue behind a
/// loom mutex, so the model sees every push and pop as a synchronization point.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct ArrayQueue<T> {
    cap: usize,
    q: loom::sync::Mutex<std::collections::VecDeque<T>>,
}

#[cfg(loom)]
impl<T> ArrayQueue<T> {
    pub(crate) fn new(cap: usize) -> Self {
        ArrayQueue {
            cap,
            q: loom::sync::Mutex::new(std::collections::VecDeque::new()),
        }
    }

    pub(crate) fn push(&self, v: T) -> Result<(), T> {
        let mut q = self.q.lock().unwrap();
        if q.len() == self.cap {
            return Err(v);
        }
        q.push_back(v);
        Ok(())
    }

    pub(crate) fn pop(&self) -> Option<T> {
        self.q.lock().unwrap().pop_front()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.q.lock().unwrap().is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.q.lock().unwrap().len()
    }
}

/// loom's stand-in for `Waiter`: every snooze lets another modelled thread run.
#[cfg(loom)]
#[derive(Debug, Default)]
pub(crate) struct Waiter;

#[cfg(loom)]
impl Waiter {
    pub(crate) fn new() -> Self {
        Waiter
    }

    pub(crate) fn snooze(&mut self) {
        loom::thread::yield_now();
    }
}
