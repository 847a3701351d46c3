//! OpenSHMEM for Rust: a safe, typed API over the rshmem runtime.
//!
//! OpenSHMEM runs one copy of a program per *processing element* (PE). PEs share data
//! through *symmetric memory*: objects allocated collectively, so that each exists at
//! the same place on every PE, and each PE can read and write any other PE's copy
//! directly (one-sided: the other PE does not take part).
//!
//! * [`Shmem`] is the library, initialized: [`Shmem::init`] starts it, dropping the
//!   guard (or [`Shmem::finalize`]) ends it. Everything else borrows it, so nothing
//!   outlives finalization.
//! * Symmetric memory is typed and collective: [`SymVec`] (an array), [`SymBox`] (one
//!   value), [`SymAtomic`] / [`SymAtomicVec`] (words for atomics, waits and signals),
//!   [`SymLock`]. Remote PEs write into them at any time, so they behave like `Cell`s:
//!   local access copies values in and out. Element types implement [`Remote`].
//! * Remote memory access (RMA) — [`Shmem::put`], [`Shmem::get`], [`Shmem::p`],
//!   [`Shmem::g`], [`Shmem::iput`], [`Shmem::iget`], [`Shmem::ibput`],
//!   [`Shmem::ibget`], [`Shmem::put_signal`] — checks bounds and PE numbers and returns a
//!   [`Result`]. The symmetric side is a [`SymSlice`] (what a `SymVec` dereferences to),
//!   which threads may share. Implicit non-blocking forms live in [`Shmem::nbi_scope`],
//!   which completes them before its borrowed buffers are free; explicit ones, with
//!   per-operation [`Request`]s that merge, in [`Shmem::nbe_scope`].
//! * Atomics exist only for the types the specification allows: [`AmoExtended`],
//!   [`AmoStandard`], [`AmoBitwise`].
//! * Point-to-point synchronization: [`Shmem::wait_until`] and friends, with [`Cmp`].
//! * Teams: [`Shmem::world`] and the other predefined teams are [`TeamRef`]s; splits make
//!   [`Team`]s, destroyed (collectively) when dropped.
//!
//! * Contexts: [`Ctx`] is an independent stream of operations with its own `fence` and
//!   `quiet`, made from the guard or a team ([`Shmem::create_ctx`],
//!   [`TeamRef::create_ctx`]); its mode ([`Private`], [`Serialized`], [`Shared`]) decides
//!   in the type which threads may use it. The guard's own operations use the *default
//!   context* ([`Shmem::default_ctx`]).
//! * Threads: request a level with [`Shmem::init_thread`]; under
//!   [`ThreadLevel::Multiple`] threads share `&Shmem` (see [Threads](Shmem#threads)).
//!
//! PE numbers are plain `usize` indices: world PEs `0..n_pes()` for the guard, team ranks
//! for a team's contexts.
//!
//! Run a program on N PEs with the launcher: `oshrun -np N ./program`. Started without
//! it, a program runs as a single PE (so the examples below run as one PE).
//!
//! ```
//! use rshmem::{Cmp, Shmem};
//!
//! fn main() -> rshmem::Result<()> {
//!     let shmem = Shmem::init()?;
//!     let (me, n) = (shmem.my_pe(), shmem.n_pes());
//!     let right = (me + 1) % n;
//!
//!     // Ring exchange: send my number to the right neighbour.
//!     let inbox = shmem.alloc(1, 0usize)?; // collective
//!     shmem.put(&inbox, 0, &[me], right)?;
//!     shmem.barrier_all();
//!     assert_eq!(inbox.load(0), (me + n - 1) % n);
//!
//!     // Count arrivals on PE 0 with an atomic, and wait for them there.
//!     let arrived = shmem.alloc_atomic(0u64)?;
//!     arrived.atomic_inc(0)?;
//!     if me == 0 {
//!         shmem.wait_until(&arrived, Cmp::Eq, n as u64)?;
//!     }
//!     Ok(()) // frees `arrived` and `inbox`, then finalizes
//! }
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod aset;
mod atomic;
mod coll;
mod ctx;
mod error;
mod ft;
mod lock;
mod nbcoll;
mod nbe;
mod nbi;
mod ops_table;
mod p2p;
mod raw;
mod remote;
mod rma;
mod shmem;
mod sym;
mod team;

pub use atomic::{AmoBitwise, AmoExtended, AmoStandard, AtomicElem, SymAtomic, SymAtomicVec};
pub use coll::{And, Complex, Max, Min, Operator, Or, Prod, Reducible, Sum, Xor};
pub use ctx::{Ctx, CtxMode, Private, Serialized, Shared, TeamCtxSource};
pub use error::{Error, Result};
pub use lock::{LockGuard, SymLock};
pub use nbcoll::CollRequest;
pub use nbe::{FetchReq, NbeScope, ReqSet, Request};
pub use nbi::{FetchNbi, GetNbi, NbiScope};
pub use raw::{Fetch, ReqOutput};
pub use remote::Remote;
pub use rshmem_core::profile::{Counts as ProfileCounts, Family as ProfileFamily, Pcntr};
/// The runtime's error, carried by [`Error::Core`].
pub use rshmem_core::Error as CoreError;
pub use rshmem_core::{Cmp, SignalOp, ThreadLevel};
pub use shmem::{Info, Shmem};
pub use sym::{SharedSlice, SymBox, SymSlice, SymVec};
pub use team::{Team, TeamConfig, TeamRef};
