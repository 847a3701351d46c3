//! Typed symmetric memory: [`SymVec`], [`SymBox`], and the collective allocation
//! methods of [`Shmem`].

use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use crate::atomic::{AmoExtended, SymAtomic, SymAtomicVec};
use crate::error::Result;
use crate::lock::SymLock;
use crate::raw::{self, Region};
use crate::remote::Remote;
use crate::shmem::Shmem;

/// A symmetric array: `len` elements of `T` at the same place in every PE's symmetric
/// heap, which other PEs read and write with [`Shmem::put`], [`Shmem::get`] and friends.
///
/// Made by [`Shmem::alloc`] or [`Shmem::alloc_zeroed`], collectively. Because remote PEs
/// write into it at any time, it behaves like a `Cell`: local access goes through copies
/// ([`load`](Self::load), [`store`](Self::store), [`copy_to_local`](Self::copy_to_local),
/// [`to_vec`](Self::to_vec), ...), with `unsafe` [`local`](Self::local) /
/// [`local_mut`](Self::local_mut) for zero-copy access when no PE can be writing.
///
/// # Freeing is collective
///
/// Dropping a `SymVec` (or calling [`free`](Self::free)) is a collective operation with
/// a barrier: every PE must drop its symmetric objects **in the same order**. Drop them
/// explicitly (or keep them in the same scopes on every PE) when the order matters. While
/// a thread panics, drops leak instead of synchronizing.
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let (me, n) = (shmem.my_pe(), shmem.n_pes());
/// let inbox = shmem.alloc(n, 0u32)?; // one slot per PE, collective
/// for pe in 0..n {
///     shmem.p(&inbox, me, me as u32 + 100, pe)?; // my slot on every PE
/// }
/// shmem.barrier_all();
/// assert_eq!(inbox.to_vec(), (0..n as u32).map(|p| p + 100).collect::<Vec<_>>());
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Local accesses are not atomic, so a `SymVec` is not `Sync` (use [`SymAtomicVec`]
/// to share words between threads):
///
/// ```compile_fail,E0277
/// let shmem = rshmem::Shmem::init()?;
/// let v = shmem.alloc(1, 0u64)?;
/// std::thread::scope(|s| {
///     s.spawn(|| v.store(0, 1)); // error: `SymVec` cannot be shared between threads
/// });
/// # Ok::<(), rshmem::Error>(())
/// ```
pub struct SymVec<'s, T: Remote> {
    pub(crate) slice: SymSlice<T>,
    pub(crate) shmem: &'s Shmem,
    /// Neither `Send` nor `Sync`: local accesses are not atomic.
    _local: PhantomData<*const ()>,
}

/// The remote face of a symmetric array: its address and length, which RMA operations
/// take as their symmetric side. A [`SymVec`] dereferences to it (`&vec` passes where a
/// `&SymSlice` is asked for).
///
/// It is not `Sync` itself: a `&SymSlice` borrowed from a `SymVec` must not reach another
/// thread while this one still uses the vector's local accessors, since a put to this PE
/// from that thread would race with them. Share it between threads through
/// [`SymVec::share`], which keeps the vector borrowed while the threads use it.
///
/// ```compile_fail,E0277
/// let shmem = rshmem::Shmem::init_thread(rshmem::ThreadLevel::Multiple)?;
/// let me = shmem.my_pe();
/// let v = shmem.alloc(1, 0u32)?;
/// let remote: &rshmem::SymSlice<u32> = &v;
/// std::thread::scope(|s| {
///     s.spawn(|| shmem.p(remote, 0, 1, me).unwrap()); // error: `SymSlice` is not `Sync`
///     v.load(0); // ... because it would race with this
/// });
/// # Ok::<(), rshmem::Error>(())
/// ```
pub struct SymSlice<T: Remote> {
    pub(crate) region: Region<T>,
}

/// A [`SymSlice`] that threads share (`Copy`, `Send` and `Sync`), made by
/// [`SymVec::share`]: threads put into and get from one symmetric array at once (under
/// [`ThreadLevel::Multiple`](crate::ThreadLevel::Multiple)), each on its own region or
/// with its own synchronization, as PEs do. It dereferences to the `SymSlice`, so it
/// passes wherever one is asked for.
///
/// It keeps its `SymVec` mutably borrowed, so no thread reads or writes the vector's
/// local copy through [`load`](SymVec::load), [`store`](SymVec::store) and friends while
/// another may be putting into it: local accesses and transfers to this PE never race.
///
/// ```
/// use rshmem::{Shmem, ThreadLevel};
/// let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
/// let me = shmem.my_pe();
/// let mut v = shmem.alloc(4, 0u32)?;
/// let remote = v.share();
/// std::thread::scope(|s| {
///     for t in 0..4 {
///         let shmem = &shmem;
///         s.spawn(move || shmem.p(&remote, t, t as u32 + 1, me).unwrap());
///     }
/// });
/// assert_eq!(v.to_vec(), [1, 2, 3, 4]); // the threads are done: `v` is usable again
/// # Ok::<(), rshmem::Error>(())
/// ```
pub struct SharedSlice<'v, T: Remote> {
    slice: &'v SymSlice<T>,
}

impl<T: Remote> Clone for SharedSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Remote> Copy for SharedSlice<'_, T> {}

impl<T: Remote> Deref for SharedSlice<'_, T> {
    type Target = SymSlice<T>;
    fn deref(&self) -> &SymSlice<T> {
        self.slice
    }
}

impl<T: Remote> fmt::Debug for SharedSlice<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.slice.fmt(f)
    }
}

impl<T: Remote> fmt::Debug for SymSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymSlice")
            .field("addr", &self.region.as_ptr())
            .field("len", &self.len())
            .finish()
    }
}

impl<T: Remote> SymSlice<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.region.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.region.len() == 0
    }
}

impl<T: Remote> Deref for SymVec<'_, T> {
    type Target = SymSlice<T>;
    fn deref(&self) -> &SymSlice<T> {
        &self.slice
    }
}

impl<T: Remote> fmt::Debug for SymVec<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymVec")
            .field("addr", &self.region.as_ptr())
            .field("len", &self.len())
            .finish()
    }
}

impl<'s, T: Remote> SymVec<'s, T> {
    fn new(region: Region<T>, shmem: &'s Shmem) -> Self {
        SymVec {
            slice: SymSlice { region },
            shmem,
            _local: PhantomData,
        }
    }

    /// The guard this object belongs to.
    pub fn shmem(&self) -> &'s Shmem {
        self.shmem
    }

    /// The remote face of this array, for threads to share (see [`SharedSlice`]). It
    /// borrows the vector mutably: its local accessors are unusable until every copy of
    /// the returned handle is gone, so they never race with a thread's put to this PE.
    pub fn share(&mut self) -> SharedSlice<'_, T> {
        SharedSlice { slice: &self.slice }
    }

    /// Reads element `i` of this PE's copy.
    ///
    /// A volatile read: other PEs may write the element at any time (they are other
    /// processes, outside this program's memory model; every bit pattern is a valid
    /// `Remote` value). No thread of this PE can write it meanwhile: a `SymVec` is not
    /// `Sync`, its `&SymSlice` is not `Sync` either, and [`share`](Self::share) borrows
    /// it mutably.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[track_caller]
    pub fn load(&self, i: usize) -> T {
        self.region.load(i)
    }

    /// Writes element `i` of this PE's copy.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[track_caller]
    pub fn store(&self, i: usize, value: T) {
        self.region.store(i, value)
    }

    /// Copies this PE's copy into `dst`.
    ///
    /// # Panics
    /// If `dst.len() != len()`.
    #[track_caller]
    pub fn copy_to_local(&self, dst: &mut [T]) {
        self.region.copy_to(dst)
    }

    /// Overwrites this PE's copy with `src`.
    ///
    /// # Panics
    /// If `src.len() != len()`.
    #[track_caller]
    pub fn copy_from_local(&self, src: &[T]) {
        self.region.copy_from(src)
    }

    /// This PE's copy, copied into a `Vec`.
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len()).map(|i| self.load(i)).collect()
    }

    /// Sets every element of this PE's copy to `value`.
    pub fn fill_local(&self, value: T) {
        (0..self.len()).for_each(|i| self.store(i, value))
    }

    /// `shmem_realloc`: changes the length to `len`, keeping the first
    /// `min(len, old len)` elements and setting new ones to `fill`. Collective: every PE
    /// passes the same `len`. The memory may move; on failure it is unchanged.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let mut v = shmem.alloc(2, 7u8)?;
    /// v.resize(4, 0)?;
    /// assert_eq!(v.to_vec(), [7, 7, 0, 0]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn resize(&mut self, len: usize, fill: T) -> Result<()> {
        raw::resize("shmem_realloc", &mut self.slice.region, len, fill)
    }

    /// `shmem_free`: frees the object now. Collective (with a barrier); the same as
    /// dropping it, but reports errors.
    pub fn free(mut self) -> Result<()> {
        raw::free("shmem_free", self.slice.region.take())
    }
}

impl<T: Remote> Drop for SymVec<'_, T> {
    fn drop(&mut self) {
        raw::drop_region(self.slice.region.take());
    }
}

/// One symmetric value: a [`SymVec`] of length 1 with single-value accessors.
///
/// It dereferences to its `SymVec`, so every RMA method takes it (at index 0).
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let temperature = shmem.alloc_box(0.0f64)?;
/// shmem.p(&temperature, 0, 21.5, 0)?; // PE 0's copy
/// shmem.barrier_all();
/// if shmem.my_pe() == 0 {
///     assert_eq!(temperature.read(), 21.5);
/// }
/// # Ok::<(), rshmem::Error>(())
/// ```
pub struct SymBox<'s, T: Remote> {
    vec: SymVec<'s, T>,
}

impl<T: Remote> fmt::Debug for SymBox<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymBox")
            .field("addr", &self.vec.region.as_ptr())
            .finish()
    }
}

impl<'s, T: Remote> SymBox<'s, T> {
    /// Reads this PE's copy.
    pub fn read(&self) -> T {
        self.vec.load(0)
    }

    /// Writes this PE's copy.
    pub fn write(&self, value: T) {
        self.vec.store(0, value)
    }

    /// Frees it now (collective); the same as dropping it, but reports errors.
    pub fn free(self) -> Result<()> {
        self.vec.free()
    }
}

impl<'s, T: Remote> Deref for SymBox<'s, T> {
    type Target = SymVec<'s, T>;
    fn deref(&self) -> &SymVec<'s, T> {
        &self.vec
    }
}

/// Collective allocation. Every PE must make the same calls with the same arguments in
/// the same order; each call synchronizes like a barrier (a zero-length one does
/// nothing). With `SHMEM_DEBUG=1` mismatched arguments are reported as errors.
impl Shmem {
    /// `shmem_malloc`: a symmetric array of `len` copies of `init`.
    ///
    /// # Errors
    /// [`Error::Core`](crate::Error::Core) with `HeapExhausted` when
    /// `SHMEM_SYMMETRIC_SIZE` is too small.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let v = shmem.alloc(8, -1i64)?;
    /// assert_eq!(v.len(), 8);
    /// assert_eq!(v.load(7), -1);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn alloc<T: Remote>(&self, len: usize, init: T) -> Result<SymVec<'_, T>> {
        Ok(SymVec::new(
            raw::alloc("shmem_malloc", len, Some(init))?,
            self,
        ))
    }

    /// `shmem_calloc`: a symmetric array of `len` all-zero elements.
    pub fn alloc_zeroed<T: Remote>(&self, len: usize) -> Result<SymVec<'_, T>> {
        Ok(SymVec::new(raw::alloc("shmem_calloc", len, None)?, self))
    }

    /// A single symmetric value.
    pub fn alloc_box<T: Remote>(&self, init: T) -> Result<SymBox<'_, T>> {
        Ok(SymBox {
            vec: self.alloc(1, init)?,
        })
    }

    /// A symmetric word for atomics, point-to-point waits or signals.
    pub fn alloc_atomic<T: AmoExtended>(&self, init: T) -> Result<SymAtomic<'_, T>> {
        Ok(SymAtomic {
            region: raw::alloc("shmem_malloc", 1, Some(init))?,
            shmem: self,
        })
    }

    /// A symmetric array of `len` words for atomics and the `_all`/`_any`/`_some`
    /// waits.
    pub fn alloc_atomic_vec<T: AmoExtended>(
        &self,
        len: usize,
        init: T,
    ) -> Result<SymAtomicVec<'_, T>> {
        Ok(SymAtomicVec {
            region: raw::alloc("shmem_malloc", len, Some(init))?,
            shmem: self,
        })
    }

    /// A distributed lock (`shmem_set_lock` and friends), initially free.
    pub fn alloc_lock(&self) -> Result<SymLock<'_>> {
        Ok(SymLock::new(raw::alloc("shmem_calloc", 1, None)?, self))
    }
}
