//! Remote memory access and signals: on any context ([`Ctx`]), and on the default one
//! through the guard ([`Shmem`], which delegates to [`Shmem::default_ctx`]).

use rshmem_core::{Cmp, SignalOp};

use crate::atomic::SymAtomic;
use crate::ctx::{Ctx, CtxMode};
use crate::error::Result;
use crate::ops_table::{rma_example, rma_table};
use crate::raw;
use crate::remote::Remote;
use crate::shmem::Shmem;
use crate::sym::SymSlice;

/// The Ctx methods of an [`rma_table!`] row: check the thread and `pe`, then the body.
macro_rules! ctx_rma {
    ($(
        $name:ident { $(#[doc = $doc:literal])* } example { $(#[doc = $ex:literal])* }
        fn [$($gen:tt)*] ($($arg:ident: $ty:ty),* $(,)?) -> $out:ty =
            |$st:ident, $r:ident, $pe:ident| $body:expr;
    )*) => {$(
        #[doc = concat!("`shmem_ctx_", stringify!($name), "`:")]
        $(#[doc = $doc])*
        #[doc = rma_example!("let ops = shmem.create_ctx::<rshmem::Private>(false)?;"; $($ex)*)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<$($gen)*>(&self, $($arg: $ty,)* $pe: usize) -> Result<$out> {
            let $st = &self.state;
            let $r = $st.routine(
                concat!("shmem_", stringify!($name)),
                concat!("shmem_ctx_", stringify!($name)),
            );
            $st.check($r, $pe)?;
            $body
        }
    )*};
}

/// The Shmem methods of an [`rma_table!`] row: the Ctx method on the default context.
macro_rules! shmem_rma {
    ($(
        $name:ident { $(#[doc = $doc:literal])* } example { $(#[doc = $ex:literal])* }
        fn [$($gen:tt)*] ($($arg:ident: $ty:ty),* $(,)?) -> $out:ty =
            |$st:ident, $r:ident, $pe:ident| $body:expr;
    )*) => {$(
        #[doc = concat!("`shmem_", stringify!($name), "`:")]
        $(#[doc = $doc])*
        #[doc = concat!(
            "\nOn the default context: [`Ctx::", stringify!($name), "`](crate::Ctx::",
            stringify!($name), ") on [`default_ctx`](Self::default_ctx)."
        )]
        #[doc = rma_example!("let ops = &shmem;"; $($ex)*)]
        #[allow(clippy::too_many_arguments)]
        pub fn $name<$($gen)*>(&self, $($arg: $ty,)* $pe: usize) -> Result<$out> {
            self.default_ctx().$name($($arg,)* $pe)
        }
    )*};
}

/// Remote memory access (RMA) and signals. Offsets, lengths, strides and block sizes
/// count elements of `T`. Every call checks that `pe` is below [`n_pes`](Self::n_pes)
/// (a rank in the context's team) and the bounds of both sides first, and returns an
/// error, having done nothing, when they do not hold. Transfers of zero elements do
/// nothing.
///
/// The symmetric side is a [`SymSlice`]: pass `&vec` for a [`SymVec`](crate::SymVec) or
/// [`SymBox`](crate::SymBox).
impl<M: CtxMode> Ctx<'_, M> {
    rma_table!(ctx_rma);
}

/// Remote memory access (RMA) and signals on the default context: each method is the
/// [`Ctx`] method of the same name on [`default_ctx`](Self::default_ctx), with the same
/// checks (PE numbers are world PEs `0..n_pes()`).
impl Shmem {
    rma_table!(shmem_rma);

    /// `shmem_signal_fetch`: this PE's value of the signal, read atomically.
    pub fn signal_fetch(&self, sig: &SymAtomic<'_, u64>) -> u64 {
        sig.load()
    }

    /// `shmem_signal_wait_until`: waits until this PE's signal satisfies
    /// `signal cmp value` and returns the value that did.
    ///
    /// # Errors
    /// As [`wait_until`](Self::wait_until): the wait could never end.
    pub fn signal_wait_until(&self, sig: &SymAtomic<'_, u64>, cmp: Cmp, value: u64) -> Result<u64> {
        raw::signal_wait_until("shmem_signal_wait_until", &sig.region, cmp, value)
    }
}
