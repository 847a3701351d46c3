//! Distributed locks.

use std::cell::Cell;

use crate::error::{Error, Result};
use crate::raw::{self, Region};
use crate::shmem::{ok, Shmem};

/// A distributed mutual-exclusion lock over all PEs (`shmem_set_lock`,
/// `shmem_test_lock`, `shmem_clear_lock` on a symmetric `long`).
///
/// Made by [`Shmem::alloc_lock`] (collective). At most one PE holds it at a time; waiters
/// are served first come, first served. Releasing (dropping the [`LockGuard`]) first
/// completes this PE's outstanding operations ([`Shmem::quiet`]), so puts made under the
/// lock are visible to the next holder. Locks are not reentrant. Not `Sync`: one thread
/// of a PE uses a given lock.
///
/// Dropping it frees it, collectively (see [`SymVec`](crate::SymVec)).
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let lock = shmem.alloc_lock()?;
/// let total = shmem.alloc_box(0u64)?;
/// {
///     let _held = lock.lock()?;
///     let t = shmem.g(&total, 0, 0)?; // read-modify-write on PE 0, under the lock
///     shmem.p(&total, 0, t + 1, 0)?;
/// } // released here
/// shmem.barrier_all();
/// if shmem.my_pe() == 0 {
///     assert_eq!(total.read(), shmem.n_pes() as u64);
/// }
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct SymLock<'s> {
    region: Region<i64>,
    held: Cell<bool>,
    _shmem: &'s Shmem,
}

/// Holds a [`SymLock`]; releases it when dropped.
#[derive(Debug)]
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct LockGuard<'l, 's> {
    lock: &'l SymLock<'s>,
}

impl<'s> SymLock<'s> {
    pub(crate) fn new(region: Region<i64>, shmem: &'s Shmem) -> Self {
        SymLock {
            region,
            held: Cell::new(false),
            _shmem: shmem,
        }
    }

    /// `shmem_set_lock`: waits until this PE holds the lock.
    ///
    /// # Errors
    /// [`Error::LockHeld`] if this PE holds it already (waiting would deadlock).
    pub fn lock(&self) -> Result<LockGuard<'_, 's>> {
        if self.held.get() {
            return Err(Error::LockHeld {
                routine: "shmem_set_lock",
            });
        }
        rshmem_core::lock::set_lock("shmem_set_lock", self.region.as_ptr())?;
        self.held.set(true);
        Ok(LockGuard { lock: self })
    }

    /// `shmem_test_lock`: takes the lock if no PE holds it; `None` if one does (this PE
    /// included).
    pub fn try_lock(&self) -> Option<LockGuard<'_, 's>> {
        if self.held.get() {
            return None;
        }
        let got = ok(rshmem_core::lock::test_lock(
            "shmem_test_lock",
            self.region.as_ptr(),
        ));
        got.then(|| {
            self.held.set(true);
            LockGuard { lock: self }
        })
    }

    /// Whether this PE holds the lock.
    pub fn is_held(&self) -> bool {
        self.held.get()
    }

    /// Frees the lock now (collective); the same as dropping it, but reports errors.
    pub fn free(mut self) -> Result<()> {
        raw::free("shmem_free", self.region.take())
    }
}

impl Drop for SymLock<'_> {
    fn drop(&mut self) {
        raw::drop_region(self.region.take());
    }
}

impl LockGuard<'_, '_> {
    /// Releases the lock now (the same as dropping the guard).
    pub fn unlock(self) {}
}

impl Drop for LockGuard<'_, '_> {
    fn drop(&mut self) {
        ok(rshmem_core::lock::clear_lock(
            "shmem_clear_lock",
            self.lock.region.as_ptr(),
        ));
        self.lock.held.set(false);
    }
}
