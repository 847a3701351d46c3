//! Contexts: the owned runtime context behind the safe `Ctx`.

use std::ptr::NonNull;
use std::sync::Arc;

use rshmem_core::ctx::{self as core_ctx, CtxHandle};
use rshmem_core::team::Team as CoreTeam;
use rshmem_core::Ctx as CoreCtx;

use crate::error::Result;

/// A runtime context, owned: the default context (never destroyed) or one made by
/// [`RawCtx::create`] and destroyed when dropped.
///
/// Invariant: the handle is the static default context, or a live context from
/// `rshmem_core::ctx::create`/`team_create` that nothing but this value destroys. (A
/// team's destruction also ends its shareable contexts; the safe `Ctx` borrows its team,
/// so a team cannot be destroyed while one of its contexts lives.)
#[derive(Debug)]
pub(crate) struct RawCtx(CtxHandle);

// SAFETY: a runtime context is a thread-safe object (its state is atomics, and every
// operation on it is thread-safe at every thread level). Which threads may use a context
// is decided by the safe `Ctx`'s mode marker, not by this handle.
unsafe impl Send for RawCtx {}
// SAFETY: as for `Send`.
unsafe impl Sync for RawCtx {}

impl RawCtx {
    /// The default context (`SHMEM_CTX_DEFAULT`).
    pub(crate) fn default_ctx() -> RawCtx {
        RawCtx(NonNull::from(CoreCtx::default_ctx()))
    }

    /// A new context with `options`, on `team` (`None`: the world).
    pub(crate) fn create(team: Option<&Arc<CoreTeam>>, options: i64) -> Result<RawCtx> {
        let h = match team {
            None => core_ctx::create(options)?,
            Some(t) => rshmem_core::team::create_ctx(t, options)?,
        };
        Ok(RawCtx(h))
    }

    /// The runtime's context object.
    #[inline(always)]
    pub(crate) fn get(&self) -> &CoreCtx {
        // SAFETY: the static default context, or a live context that only our `Drop`
        // destroys (the type's invariant).
        unsafe { self.0.as_ref() }
    }
}

impl Drop for RawCtx {
    fn drop(&mut self) {
        if self.get().is_default() {
            return;
        }
        // SAFETY: a live context from `create`, not the default one, destroyed once, here;
        // no other thread uses it (the safe `Ctx` is being dropped, so it is not borrowed).
        // It fails only for the default context, excluded above.
        let _ = unsafe { core_ctx::destroy(self.0) };
    }
}
