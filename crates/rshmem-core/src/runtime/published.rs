//! A layer's part of the PE's state, published for the life of the runtime.
//!
//! Each layer owns the state it needs (the runtime its segments and fabric, `ctx` its
//! request pool and collective worker, `team` the predefined teams, `coll` the algorithms)
//! in a `Published` of its own, so no layer's state names a type of a layer above it.
//! `world::init` publishes them bottom up, the runtime last: a caller that reached the
//! runtime (`rt`) finds every layer's part. `world::finalize` takes them back in reverse.

use std::sync::atomic::{AtomicPtr, Ordering};

/// A `T` published by `world::init` and taken back by the last `world::finalize`.
pub(crate) struct Published<T>(AtomicPtr<T>);

impl<T> Published<T> {
    /// Nothing published.
    pub(crate) const fn new() -> Self {
        Published(AtomicPtr::new(std::ptr::null_mut()))
    }

    /// Publishes `v` (init).
    pub(crate) fn publish(&self, v: Box<T>) {
        let old = self.0.swap(Box::into_raw(v), Ordering::AcqRel);
        debug_assert!(old.is_null(), "published twice");
    }

    /// The published value, if any.
    #[inline(always)]
    pub(crate) fn get(&self) -> Option<&'static T> {
        let p = self.0.load(Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Box::into_raw` in `publish` and is freed
        // only after `take`, by the last finalize; OpenSHMEM forbids calls racing with it.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// The published value of a layer below the runtime's caller: present whenever the
    /// runtime is (see the module's comment).
    #[inline(always)]
    pub(crate) fn expect(&self) -> &'static T {
        match self.get() {
            Some(v) => v,
            None => unpublished(),
        }
    }

    /// Unpublishes the value and hands it back to be dropped (finalize).
    pub(crate) fn take(&self) -> Option<Box<T>> {
        let p = self.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: `p` came from `Box::into_raw` in `publish`, and it is unpublished now.
        (!p.is_null()).then(|| unsafe { Box::from_raw(p) })
    }
}

#[cold]
fn unpublished() -> ! {
    panic!("rshmem: a layer's state was used outside init..finalize")
}
