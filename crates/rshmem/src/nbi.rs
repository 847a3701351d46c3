//! Implicit non-blocking operations (`_nbi`), confined to a scope that completes them
//! (a quiet of its context) on exit.

use std::marker::PhantomData;

use rshmem_core::{AmoOp, SignalOp};

use crate::atomic::{AmoBitwise, AmoExtended, AmoStandard, AtomicElem, SymAtomic};
use crate::ctx::{routine, Ctx, CtxMode, CtxState, Shared};
use crate::error::Result;
use crate::ops_table::amo_table;
use crate::raw::{self, Pending, Quiet};
use crate::remote::Remote;
use crate::shmem::Shmem;
use crate::sym::SymSlice;

impl<M: CtxMode> Ctx<'_, M> {
    /// Runs `f` with an [`NbiScope`] for non-blocking operations on this context, and
    /// completes them all ([`quiet`](Self::quiet)) when `f` returns — or unwinds.
    ///
    /// Local buffers (and symmetric objects) handed to the scope's operations stay
    /// borrowed until the scope ends (or, for gets and fetching atomics, until the
    /// request's `wait`), so the borrow checker rules out reusing a put's source or
    /// reading a get's destination early. The scope has the context's threading rules:
    /// on a [`Shared`] context threads may share it.
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let b = shmem.alloc(4, 0u64)?;
    /// let src = [me as u64; 4];
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// ctx.nbi_scope(|s| s.put_nbi(&b, 0, &src, (me + 1) % n))?; // complete on return
    /// shmem.barrier_all();
    /// assert_eq!(b.load(3), ((me + n - 1) % n) as u64);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn nbi_scope<'env, R>(
        &'env self,
        f: impl for<'sc> FnOnce(&'sc NbiScope<'sc, 'env, M>) -> R,
    ) -> R {
        raw::with_quiet(self.state.raw(), |quiet| {
            f(&NbiScope {
                quiet,
                ctx: &self.state,
                _sc: PhantomData,
                _mode: PhantomData,
            })
        })
    }
}

impl Shmem {
    /// Runs `f` with an [`NbiScope`] for non-blocking operations on the default context,
    /// and completes them all ([`quiet`](Self::quiet)) when `f` returns — or unwinds
    /// ([`Ctx::nbi_scope`] on [`default_ctx`](Self::default_ctx)).
    ///
    /// Local buffers handed to the scope's operations stay borrowed until the scope ends
    /// (or, for gets and fetching atomics, until the request's `wait`), so the borrow
    /// checker rules out reusing a put's source or reading a get's destination early.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let right = (me + 1) % n;
    /// let a = shmem.alloc(4, me as u64)?;
    /// let b = shmem.alloc(4, 0u64)?;
    /// let src = [me as u64 + 10; 4];
    /// let mut back = [0u64; 4];
    /// shmem.nbi_scope(|s| -> rshmem::Result<()> {
    ///     s.put_nbi(&b, 0, &src, right)?; // `src` is frozen until the scope ends
    ///     let g = s.get_nbi(&mut back, &a, 0, right)?;
    ///     let got = g.wait(); // complete: `back` is handed back
    ///     assert_eq!(got, &[right as u64; 4]);
    ///     Ok(())
    /// })?; // quiet: the put is complete
    /// shmem.barrier_all();
    /// assert_eq!(b.load(0), ((me + n - 1) % n) as u64 + 10);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Modifying a put's source inside the scope does not compile:
    ///
    /// ```compile_fail,E0506
    /// let shmem = rshmem::Shmem::init()?;
    /// let b = shmem.alloc(4, 0u64)?;
    /// let mut src = [1u64; 4];
    /// shmem.nbi_scope(|s| {
    ///     s.put_nbi(&b, 0, &src, 0).unwrap();
    ///     src[0] = 2; // error: `src` is borrowed until the scope ends
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Nor does reading a get's destination before `wait`:
    ///
    /// ```compile_fail,E0502
    /// let shmem = rshmem::Shmem::init()?;
    /// let a = shmem.alloc(4, 0u64)?;
    /// let mut back = [0u64; 4];
    /// shmem.nbi_scope(|s| {
    ///     let g = s.get_nbi(&mut back, &a, 0, 0).unwrap();
    ///     println!("{}", back[0]); // error: `back` is mutably borrowed
    ///     g.wait();
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Nor does handing an operation a buffer that dies inside the scope:
    ///
    /// ```compile_fail,E0597
    /// let shmem = rshmem::Shmem::init()?;
    /// let b = shmem.alloc(4, 0u64)?;
    /// shmem.nbi_scope(|s| {
    ///     let src = vec![1u64; 4];
    ///     s.put_nbi(&b, 0, &src, 0).unwrap(); // error: `src` does not live long enough
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn nbi_scope<'env, R>(
        &'env self,
        f: impl for<'sc> FnOnce(&'sc NbiScope<'sc, 'env>) -> R,
    ) -> R {
        self.default_ctx().nbi_scope(f)
    }
}

/// The handle for non-blocking operations inside [`Ctx::nbi_scope`] (or
/// [`Shmem::nbi_scope`], on the default context). PE numbers are ranks in the context's
/// team, checked as in [`Ctx::put`].
///
/// `'env` is the lifetime of the buffers the operations borrow: it outlives the scope,
/// which quiets before returning. `M` is the context's mode: the scope is `Sync` only on
/// a [`Shared`] context.
///
/// Fetching atomics hand the value before to a `fetch` buffer, borrowed until the
/// request's [`wait`](FetchNbi::wait) or the scope's end:
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let x = shmem.alloc_atomic(3i32)?;
/// let (mut a, mut b) = (0, 0);
/// shmem.nbi_scope(|s| -> rshmem::Result<()> {
///     let ra = s.atomic_fetch_nbi(&mut a, &x, 0)?;
///     let _rb = s.atomic_fetch_add_nbi(&mut b, &x, 1, shmem.my_pe())?;
///     assert_eq!(ra.wait(), 3);
///     Ok(())
/// })?;
/// assert!(b >= 3); // completed by the scope
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct NbiScope<'sc, 'env, M: CtxMode = Shared> {
    quiet: &'sc Quiet<'env>,
    ctx: &'env CtxState,
    _sc: PhantomData<&'sc mut &'sc ()>,
    _mode: PhantomData<&'env Ctx<'env, M>>,
}

/// A non-blocking get in flight; [`wait`](Self::wait) completes it.
///
/// Dropping it is harmless: the scope completes the get on exit, and the destination
/// stays borrowed until then. It stays on the thread that issued it.
#[derive(Debug)]
pub struct GetNbi<'env, T> {
    pending: Pending<'env, [T]>,
}

impl<'env, T> GetNbi<'env, T> {
    /// Completes the get (a quiet of the scope's context) and hands the destination
    /// back, filled.
    pub fn wait(self) -> &'env mut [T] {
        self.pending.complete()
    }
}

/// A fetching non-blocking atomic in flight; [`wait`](Self::wait) completes it.
///
/// Dropping it is harmless: the scope completes the atomic on exit, and the fetched
/// value is in the fetch buffer after the scope. It stays on the thread that issued it.
#[derive(Debug)]
pub struct FetchNbi<'env, T> {
    pending: Pending<'env, T>,
}

impl<T: Copy> FetchNbi<'_, T> {
    /// Completes the atomic (a quiet of the scope's context) and returns the fetched
    /// value.
    pub fn wait(self) -> T {
        *self.pending.complete()
    }
}

/// The fetching `_nbi` atomics of [`NbiScope`], one per `fetch` row of [`amo_table!`].
macro_rules! nbi_amos {
    (
        fetch { $(
            [$fb:ident] $f:ident($($fa:ident),*) = $fop:expr;
                $fverb:literal, $fafter:literal, $fwhat:literal; $fnbi:ident, $fnbe:ident;
        )* }
        post { $($post:tt)* }
    ) => {
        $(
            #[doc = concat!(
                "`shmem_", stringify!($fnbi), "`: ", $fverb, " `dst` on `pe`", $fafter, "; ",
                $fwhat, " goes to `fetch` (see [`FetchNbi`])."
            )]
            pub fn $fnbi<T: $fb>(
                &self,
                fetch: &'env mut T,
                dst: impl Into<AtomicElem<'env, T>>,
                $($fa: T,)*
                pe: usize,
            ) -> Result<FetchNbi<'env, T>> {
                let r = self.ctx.routine(
                    concat!("shmem_", stringify!($fnbi)),
                    concat!("shmem_ctx_", stringify!($fnbi)),
                );
                self.fetch_nbi(r, fetch, dst.into(), $fop, pe)
            }
        )*
    };
}

impl<'sc, 'env, M: CtxMode> NbiScope<'sc, 'env, M> {
    /// `shmem_ctx_fence` on the scope's context.
    pub fn fence(&self) {
        crate::shmem::ok(raw::fence(self.ctx.raw()))
    }

    /// `shmem_ctx_quiet` on the scope's context: completes every operation issued so far
    /// (buffers stay borrowed until the scope ends all the same).
    pub fn quiet(&self) {
        crate::shmem::ok(raw::quiet(self.ctx.raw()))
    }

    /// `shmem_put_nbi`: like [`Ctx::put`], but may return before `src` has been read;
    /// `src` stays borrowed until the scope ends.
    pub fn put_nbi<T: Remote>(
        &self,
        dst: &'env SymSlice<T>,
        offset: usize,
        src: &'env [T],
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.ctx, "put_nbi");
        self.ctx.check(r, pe)?;
        raw::put_nbi(self.quiet, r, &dst.region, offset, src, pe)
    }

    /// `shmem_get_nbi`: like [`Ctx::get`], but the data is in `dst` only once the
    /// returned request's [`wait`](GetNbi::wait) returns, or the scope ends.
    pub fn get_nbi<T: Remote>(
        &self,
        dst: &'env mut [T],
        src: &'env SymSlice<T>,
        offset: usize,
        pe: usize,
    ) -> Result<GetNbi<'env, T>> {
        let r = routine!(self.ctx, "get_nbi");
        self.ctx.check(r, pe)?;
        let pending = raw::get_nbi(self.quiet, r, dst, &src.region, offset, pe)?;
        Ok(GetNbi { pending })
    }

    /// `shmem_put_signal_nbi`: like [`Ctx::put_signal`], but may return before `src`
    /// has been read; `src` stays borrowed until the scope ends. The signal is still
    /// never visible before the data.
    #[allow(clippy::too_many_arguments)]
    pub fn put_signal_nbi<T: Remote>(
        &self,
        dst: &'env SymSlice<T>,
        offset: usize,
        src: &'env [T],
        sig: &'env SymAtomic<'_, u64>,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.ctx, "put_signal_nbi");
        self.ctx.check(r, pe)?;
        raw::put_signal_nbi(
            self.quiet,
            r,
            &dst.region,
            offset,
            src,
            &sig.region,
            signal,
            op,
            pe,
        )
    }

    fn fetch_nbi<T: AmoExtended>(
        &self,
        routine: &'static str,
        fetch: &'env mut T,
        dst: AtomicElem<'env, T>,
        op: AmoOp<T>,
        pe: usize,
    ) -> Result<FetchNbi<'env, T>> {
        self.ctx.check(routine, pe)?;
        let (region, i) = dst.parts();
        let pending = raw::amo_nbi(self.quiet, routine, fetch, region, i, op, pe)?;
        Ok(FetchNbi { pending })
    }

    amo_table!(nbi_amos);
}
