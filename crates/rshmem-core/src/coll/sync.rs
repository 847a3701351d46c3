//! World synchronization: `shmem_sync_all` (and, with a quiet first, `shmem_barrier_all`).
//! The waits on peers these are made of live with the teams (`team::peers`).

use crate::ctx::Ctx;
use crate::error::Result;
use crate::runtime::Runtime;
use crate::team::call_check::Kind;
use crate::team::frame::Frame;

/// `shmem_barrier_all`: completes this PE's outstanding operations, then waits for all PEs.
pub fn barrier_all() -> Result<()> {
    barrier_all_counted(true)
}

/// [`barrier_all`] as a step of a face's own routine (the safe API's initialized
/// allocation): not counted in the profile as a barrier of the program.
pub fn barrier_all_uncounted() -> Result<()> {
    barrier_all_counted(false)
}

#[inline(always)]
fn barrier_all_counted(counted: bool) -> Result<()> {
    const R: &str = "shmem_barrier_all";
    let f = Frame::begin_world(R, Kind::BarrierAll, counted)?;
    f.rt().try_barrier_all(R)
}

/// `shmem_sync_all`: waits for all PEs (does not complete outstanding operations).
pub fn sync_all() -> Result<()> {
    const R: &str = "shmem_sync_all";
    let f = Frame::begin_world(R, Kind::SyncAll, true)?;
    f.rt().try_sync_in(R, &f.rt().teams().world)
}

impl Runtime {
    /// `shmem_barrier_all` as a step of `routine`: quiet, then a world synchronization.
    pub(crate) fn try_barrier_all(&self, routine: &'static str) -> Result<()> {
        Ctx::default_ctx().quiet(self)?;
        self.try_sync_in(routine, &self.teams().world)
    }

    /// [`Runtime::try_barrier_all`], ending the job on failure (for the heap routines
    /// and nested finalize, which have no way to report one).
    pub fn barrier_all(&self) {
        if let Err(e) = self.try_barrier_all("shmem_barrier_all") {
            self.fatal(&e);
        }
    }
}
