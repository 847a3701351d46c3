//! Counting events, as Coarray Fortran's EVENT POST / EVENT WAIT / EVENT_QUERY: an event
//! is a symmetric 64-bit counter; a post adds one at the event's PE after this PE's
//! earlier transfers are complete, a wait (on one's own event only) waits for a count and
//! consumes it.

use crate::amo;
use crate::ctx::Ctx;
use crate::error::Result;
use crate::p2p;
use crate::word::{AmoOp, Cmp};

/// Adds one to the event counter `event` (symmetric, 8-aligned) on `pe`, after this PE's
/// earlier puts are complete there (a release: what the poster wrote is visible to the
/// PE that waits).
///
/// # Safety
/// `event` is a raw address (checked to be a symmetric, aligned word).
pub unsafe fn post(routine: &'static str, event: *const i64, pe: usize) -> Result<()> {
    crate::order::quiet()?;
    // SAFETY: forwarded contract.
    unsafe { amo::ctx_atomic(Ctx::default_ctx(), routine, event, AmoOp::Add(1), pe as i64)? };
    Ok(())
}

/// Waits until this PE's event counter `event` reaches `until` (at least 1), then consumes
/// that many posts.
///
/// # Safety
/// As [`post`].
pub unsafe fn wait(routine: &'static str, event: *const i64, until: i64) -> Result<()> {
    let until = until.max(1);
    // SAFETY: forwarded contract.
    unsafe {
        p2p::wait_until(routine, event, Cmp::Ge, until)?;
        let me = crate::runtime::rt(routine)?.me;
        amo::ctx_atomic(
            Ctx::default_ctx(),
            routine,
            event,
            AmoOp::Add(-until),
            me as i64,
        )?;
    }
    Ok(())
}

/// The count of the event counter `event` on `pe` (posts not yet consumed).
///
/// # Safety
/// As [`post`].
pub unsafe fn query(routine: &'static str, event: *const i64, pe: usize) -> Result<i64> {
    // SAFETY: forwarded contract.
    unsafe { amo::ctx_atomic(Ctx::default_ctx(), routine, event, AmoOp::Fetch, pe as i64) }
}
