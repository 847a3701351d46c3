//! World synchronization: `shmem_sync_all` (and, with a quiet first, `shmem_barrier_all`).
//! The waits on peers these are made of live with the teams (`team::peers`).

use crate::coll::check::Kind;
use crate::error::Result;
use crate::runtime::rt;

/// `shmem_barrier_all`: completes this PE's outstanding operations, then waits for all PEs.
pub fn barrier_all() -> Result<()> {
    const R: &str = "shmem_barrier_all";
    let rt = rt(R)?;
    rt.check_coll(R, &rt.world, Kind::BarrierAll, &[])?;
    rt.try_barrier_all(R)
}

/// `shmem_sync_all`: waits for all PEs (does not complete outstanding operations).
pub fn sync_all() -> Result<()> {
    const R: &str = "shmem_sync_all";
    let rt = rt(R)?;
    rt.check_coll(R, &rt.world, Kind::SyncAll, &[])?;
    rt.try_sync_in(R, &rt.world)
}
