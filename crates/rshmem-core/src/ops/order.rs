//! Memory ordering: `shmem_fence` and `shmem_quiet` on the default context, and the
//! completion of the puts to one PE at the cost its route needs.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::profile::{self, Family};
use crate::runtime::rt;

/// `shmem_fence`: puts and AMOs to each PE issued before it on the default context are
/// delivered before those issued after it.
#[inline]
pub fn fence() -> Result<()> {
    let _p = profile::span(Family::Fence, 0);
    Ctx::default_ctx().fence(rt("shmem_fence")?);
    Ok(())
}

/// `shmem_ctx_fence`: [`fence`] on a context.
#[inline]
pub fn ctx_fence(ctx: &Ctx) -> Result<()> {
    let _p = profile::span(Family::Fence, 0);
    ctx.fence(rt("shmem_ctx_fence")?);
    Ok(())
}

/// `shmem_ctx_quiet`: every operation issued on the context before it is complete and
/// visible (explicit non-blocking operations excepted: their requests complete them).
#[inline]
pub fn ctx_quiet(ctx: &Ctx) -> Result<()> {
    let _p = profile::span(Family::Quiet, 0);
    ctx.quiet(rt("shmem_ctx_quiet")?)?;
    Ok(())
}

/// `shmem_quiet`: every put, AMO and non-blocking operation issued before it on the
/// default context is complete and visible.
#[inline]
pub fn quiet() -> Result<()> {
    let _p = profile::span(Family::Quiet, 0);
    rt("shmem_quiet")?.quiet_all();
    Ok(())
}

/// Makes the blocking puts issued on `ctx` to `pe` (a PE of the context's team) complete
/// at `pe`, visible to its loads, at the cost of the route to it: nothing when this PE
/// reaches `pe` by load and store (a blocking put there is a finished copy), a quiet of
/// the context through the network (which completes per context, not per target).
#[inline]
pub fn ctx_complete_puts(ctx: &Ctx, routine: &'static str, pe: i64) -> Result<()> {
    let rt = rt(routine)?;
    let pe = ctx.pe(rt, routine, pe)?;
    if rt.fabric.maps(pe) {
        return Ok(());
    }
    let _p = profile::span(Family::Quiet, 0);
    ctx.quiet(rt)
}
