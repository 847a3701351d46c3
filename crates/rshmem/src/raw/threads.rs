//! Thread safety: the `Send`/`Sync` impls that rest on the runtime being thread-safe.

use crate::atomic::{AmoExtended, SymAtomic, SymAtomicVec};
use crate::remote::Remote;

// SAFETY: every access a `SymAtomic` makes to its word is atomic (local loads through
// `Word::load`, everything else through the runtime's AMOs and waits), and the runtime is
// thread-safe; the `&Shmem` it holds is `Sync`.
unsafe impl<T: AmoExtended> Sync for SymAtomic<'_, T> {}
// SAFETY: as for `SymAtomic`, element by element.
unsafe impl<T: AmoExtended> Sync for SymAtomicVec<'_, T> {}
// SAFETY: a `SharedSlice` hands only its array's address and length to RMA routines,
// which copy through the runtime exactly as other PEs' accesses do (each a byte copy of
// `Remote` values, for which every bit pattern is valid), and the runtime is
// thread-safe. Conflicting transfers from two threads give unspecified values, as from
// two PEs. It holds its `SymVec` mutably borrowed, so no local `load`/`store`/copy of that
// vector (plain volatile accesses) can run while another thread puts into it; the unsafe
// `local` accessors forbid such writes in their contract.
unsafe impl<T: Remote> Sync for crate::sym::SharedSlice<'_, T> {}
// SAFETY: as for `Sync`: the handle is a shared reference to the `SymSlice`.
unsafe impl<T: Remote> Send for crate::sym::SharedSlice<'_, T> {}
