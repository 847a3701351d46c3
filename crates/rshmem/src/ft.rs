//! Fault tolerance (issue 13 §3): which PEs failed, and a team of the survivors.
//!
//! With `SHMEM_FAULT_TOLERANT=1`, `oshrun` keeps a job running when a PE dies (killed by
//! a signal, or exited without finalizing). A collective or wait that involves the dead
//! PE then returns [`Error::PeFailed`](crate::Error::PeFailed) within about a second;
//! the survivors list the failed PEs ([`Shmem::failed_pes`]), build a team of the
//! survivors ([`TeamRef::survivors`](crate::TeamRef::survivors)) and go on with it.
//! Dropping the [`Shmem`] guard finalizes without waiting for the dead. Shared memory
//! only (one host): the PEs refuse the mode at init when a peer is reached through UCX.
//!
//! ```no_run
//! let shmem = rshmem::Shmem::init()?;
//! let world = shmem.world();
//! if let Err(rshmem::Error::PeFailed { pe, .. }) = world.sync() {
//!     assert!(shmem.pe_failed(pe));
//!     assert!(shmem.failed_pes().contains(&pe));
//!     let survivors = world.survivors()?;
//!     survivors.sync()?;
//! }
//! # Ok::<(), rshmem::Error>(())
//! ```

use crate::shmem::{ok, Shmem};

impl Shmem {
    /// `shmemx_failed_pes`: the PEs (world numbers, in order) that died without
    /// finalizing, as far as this PE can tell now. Acknowledges them: a point-to-point
    /// wait ([`SymAtomic::wait_until`](crate::SymAtomic) and friends) fails with
    /// [`Error::PeFailed`](crate::Error::PeFailed) while a failure is unacknowledged,
    /// since any PE could have been the writer it waits for; collectives keep failing
    /// over failed members of their team.
    pub fn failed_pes(&self) -> Vec<usize> {
        ok(rshmem_core::ft::failed_pes())
    }

    /// `shmemx_pe_failed`: whether world PE `pe` died without finalizing (false for a
    /// PE number out of range).
    pub fn pe_failed(&self, pe: usize) -> bool {
        ok(rshmem_core::ft::pe_failed(pe))
    }
}
