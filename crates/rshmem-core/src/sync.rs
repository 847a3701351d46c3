//! World synchronization: `shmem_sync_all` (and, with a quiet first, `shmem_barrier_all`).

use crate::error::Result;
use crate::runtime::rt;

/// `shmem_barrier_all`: completes this PE's outstanding operations, then waits for all PEs.
pub fn barrier_all() -> Result<()> {
    rt("shmem_barrier_all")?.barrier_all();
    Ok(())
}

/// `shmem_sync_all`: waits for all PEs (does not complete outstanding operations).
pub fn sync_all() -> Result<()> {
    rt("shmem_sync_all")?.sync_all();
    Ok(())
}
