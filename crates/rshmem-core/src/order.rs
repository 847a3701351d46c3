//! Memory ordering: `shmem_fence` and `shmem_quiet` on the default context.

use crate::error::Result;
use crate::runtime::rt;
use crate::transport::Transport;

/// `shmem_fence`: puts and AMOs to each PE issued before it are delivered before those
/// issued after it.
#[inline]
pub fn fence() -> Result<()> {
    rt("shmem_fence")?.shm.fence();
    Ok(())
}

/// `shmem_quiet`: every put, AMO and non-blocking operation issued before it is complete
/// and visible.
#[inline]
pub fn quiet() -> Result<()> {
    rt("shmem_quiet")?.quiet_all();
    Ok(())
}
