//! Zero-copy access: this PE's copy of a `SymVec` borrowed as a slice.

use crate::remote::Remote;
use crate::sym::SymVec;

impl<T: Remote> SymVec<'_, T> {
    /// This PE's copy as a slice, without copying.
    ///
    /// # Safety
    /// While the slice lives, no PE — this one included, from any thread, through
    /// [`store`](Self::store) or RMA to itself — may write this object's memory on this
    /// PE. A barrier after the
    /// last remote write and before the next one is the usual way to ensure it.
    pub unsafe fn local(&self) -> &[T] {
        // SAFETY: forwarded contract.
        unsafe { self.slice.region.slice() }
    }

    /// This PE's copy as a mutable slice, without copying.
    ///
    /// # Safety
    /// While the slice lives, no other PE may read or write this object's memory on
    /// this PE.
    pub unsafe fn local_mut(&mut self) -> &mut [T] {
        // SAFETY: forwarded contract.
        unsafe { self.slice.region.slice_mut() }
    }
}
