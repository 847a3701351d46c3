//! The context layer's part of the PE's state (recycled requests, the collective worker),
//! and the runtime's own traffic, which goes on [`super::runtime_ctx`].

use super::request::{new_pool, Pool};
use super::worker::Worker;
use super::Ctx;
use crate::error::{At, Result};
use crate::runtime::published::Published;
use crate::runtime::Runtime;
use crate::transport::SymAddr;
use crate::word::{AmoOp, Word};

/// The context layer's state, published by `world::init`.
#[derive(Debug)]
pub(crate) struct Contexts {
    /// Recycled request objects.
    requests: Pool,
    /// Runs this PE's non-blocking collectives.
    worker: Worker,
}

static CONTEXTS: Published<Contexts> = Published::new();

impl Contexts {
    /// Publishes a fresh state (init, before the runtime).
    pub(crate) fn publish() {
        CONTEXTS.publish(Box::new(Contexts {
            requests: new_pool(),
            worker: Worker::default(),
        }));
    }

    /// Takes it back (the last finalize, after the runtime).
    pub(crate) fn unpublish() -> Option<Box<Contexts>> {
        CONTEXTS.take()
    }
}

impl Runtime {
    /// Recycled request objects.
    #[inline(always)]
    pub(crate) fn requests(&self) -> &'static Pool {
        &CONTEXTS.expect().requests
    }

    /// The collective worker.
    #[inline(always)]
    pub(crate) fn worker(&self) -> &'static Worker {
        &CONTEXTS.expect().worker
    }

    /// An atomic on a runtime or user word of `pe`, on the runtime's context.
    ///
    /// `addr` was produced by `sym` (range-checked) or is a runtime word; callers check
    /// alignment for user words.
    #[inline(always)]
    pub(crate) fn amo<W: Word>(
        &self,
        routine: &'static str,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<W> {
        self.fabric
            .amo(super::runtime_ctx(), pe, addr, op)
            .at(routine)
    }

    /// An atomic whose previous value is not needed (flags, counters), on the runtime's
    /// context.
    #[inline(always)]
    pub(crate) fn amo_post<W: Word>(
        &self,
        routine: &'static str,
        pe: usize,
        addr: SymAddr,
        op: AmoOp<W>,
    ) -> Result<()> {
        self.fabric
            .amo_post(super::runtime_ctx(), pe, addr, op)
            .at(routine)
    }

    /// Raises by one a runtime counter on `pe` that only this PE raises, on the runtime's
    /// context (see `Fabric::raise`).
    #[inline(always)]
    pub(crate) fn raise(&self, routine: &'static str, pe: usize, addr: SymAddr) -> Result<()> {
        self.fabric
            .raise(super::runtime_ctx(), pe, addr, 1)
            .at(routine)
    }

    /// Completes this PE's outstanding operations on the default context.
    pub(crate) fn quiet_all(&self) {
        if let Err(e) = Ctx::default_ctx().quiet(self) {
            self.fatal(&e);
        }
    }
}
