//! Explicit non-blocking operations (`_nbe`, seed 002's merged requests): each returns a
//! [`Request`] that completes it, confined to a scope that completes everything on exit.

use std::marker::PhantomData;

use rshmem_core::AmoOp;

use crate::atomic::{AmoBitwise, AmoExtended, AmoStandard, AtomicElem};
use crate::ctx::{routine, Ctx, CtxMode, CtxState};
use crate::error::Result;
use crate::ops_table::amo_table;
use crate::raw::{self, Drain, Fetch, Req, ReqOutput};
use crate::remote::Remote;
use crate::shmem::Shmem;
use crate::sym::SymSlice;

impl<M: CtxMode> Ctx<'_, M> {
    /// Runs `f` with an [`NbeScope`] for explicit non-blocking operations on this
    /// context, and completes every one of them when `f` returns — or unwinds —
    /// including those whose requests were dropped or forgotten (`std::mem::forget`).
    ///
    /// Each operation returns a [`Request`]: [`test`](Request::test) polls it,
    /// [`wait`](Request::wait) completes it and hands its output back (the filled
    /// destination of a get, the old value of a fetching atomic). Requests merge
    /// ([`Request::merge`], [`Request::add`], [`ReqSet`]) and take further operations
    /// (the `_with` forms), as in seed 002. Unlike `_nbi` operations, a context's
    /// [`quiet`](Self::quiet) does not complete them: only their requests (and the scope's
    /// exit) do. A request is bound to one copy-engine lane, so completing it waits for
    /// its own transfers only.
    ///
    /// Buffers handed to the operations are borrowed for `'env`, beyond the scope: a
    /// put's source cannot be modified, nor a get's destination read, until the scope
    /// ends or (for a get) its request's `wait` hands the destination back. Requests
    /// cannot leave the scope, and stay on the thread that issued them.
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let right = (me + 1) % n;
    /// let dst = shmem.alloc(4, 0u64)?;
    /// let src_sym = shmem.alloc(4, me as u64)?;
    /// let counter = shmem.alloc_atomic(0u64)?;
    /// let src = [me as u64 + 10; 4];
    /// let mut buf = [0u64; 4];
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// ctx.nbe_scope(|s| -> rshmem::Result<()> {
    ///     let r = s.put_nbe(&dst, 0, &src, right)?; // `src` frozen until the scope ends
    ///     let g = s.get_nbe(&mut buf, &src_sym, 0, right)?;
    ///     let f = s.atomic_fetch_add_nbe(&counter, 1, 0)?;
    ///     let (((), got), old) = r.merge(g).merge(f).wait(); // one request for all three
    ///     assert_eq!(got, &[right as u64; 4]);
    ///     assert!(old < n as u64);
    ///     Ok(())
    /// })?;
    /// shmem.barrier_all();
    /// assert_eq!(dst.load(0), ((me + n - 1) % n) as u64 + 10);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Modifying a put's source inside the scope does not compile:
    ///
    /// ```compile_fail,E0506
    /// let shmem = rshmem::Shmem::init()?;
    /// let b = shmem.alloc(4, 0u64)?;
    /// let mut src = [1u64; 4];
    /// shmem.nbe_scope(|s| {
    ///     let r = s.put_nbe(&b, 0, &src, 0).unwrap();
    ///     r.wait();
    ///     src[0] = 2; // error: `src` is borrowed until the scope ends
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Nor does reading a get's destination before its `wait`:
    ///
    /// ```compile_fail,E0502
    /// let shmem = rshmem::Shmem::init()?;
    /// let a = shmem.alloc(4, 0u64)?;
    /// let mut back = [0u64; 4];
    /// shmem.nbe_scope(|s| {
    ///     let g = s.get_nbe(&mut back, &a, 0, 0).unwrap();
    ///     println!("{}", back[0]); // error: `back` is mutably borrowed
    ///     g.wait();
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Nor does letting a request escape its scope:
    ///
    /// ```compile_fail,E0521
    /// let shmem = rshmem::Shmem::init()?;
    /// let a = shmem.alloc(4, 0u64)?;
    /// let src = [1u64; 4];
    /// let mut keep = None;
    /// shmem.nbe_scope(|s| {
    ///     keep = Some(s.put_nbe(&a, 0, &src, 0).unwrap()); // error: borrowed data escapes
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    ///
    /// Nor does sending one to another thread:
    ///
    /// ```compile_fail,E0277
    /// let shmem = rshmem::Shmem::init_thread(rshmem::ThreadLevel::Multiple)?;
    /// let a = shmem.alloc(4, 0u64)?;
    /// let src = [1u64; 4];
    /// shmem.nbe_scope(|s| {
    ///     let r = s.put_nbe(&a, 0, &src, 0).unwrap();
    ///     std::thread::scope(|t| {
    ///         t.spawn(move || r.wait()); // error: `*const ()` cannot be sent between threads
    ///     });
    /// });
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn nbe_scope<'env, R>(
        &'env self,
        f: impl for<'sc> FnOnce(&'sc NbeScope<'sc, 'env>) -> R,
    ) -> R {
        raw::with_drain(|drain| {
            f(&NbeScope {
                ctx: &self.state,
                drain,
                _sc: PhantomData,
            })
        })
    }
}

impl Shmem {
    /// [`Ctx::nbe_scope`] on the default context.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let dst = shmem.alloc(n, 0u32)?;
    /// let mine = [me as u32 + 1];
    /// shmem.nbe_scope(|s| -> rshmem::Result<()> {
    ///     let mut all = rshmem::ReqSet::new();
    ///     for pe in 0..n {
    ///         all.add(s.put_nbe(&dst, me, &mine, pe)?); // my slot on every PE
    ///     }
    ///     all.wait();
    ///     Ok(())
    /// })?;
    /// shmem.barrier_all();
    /// assert_eq!(dst.to_vec(), (1..=n as u32).collect::<Vec<_>>());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn nbe_scope<'env, R>(
        &'env self,
        f: impl for<'sc> FnOnce(&'sc NbeScope<'sc, 'env>) -> R,
    ) -> R {
        self.default_ctx().nbe_scope(f)
    }
}

/// The handle for explicit non-blocking operations inside [`Ctx::nbe_scope`] (or
/// [`Shmem::nbe_scope`]). PE numbers are ranks in the context's team, checked as in
/// [`Ctx::put`].
///
/// `'env` is the lifetime of the buffers the operations borrow (it outlives the scope);
/// `'sc` that of the scope, which the requests cannot outlive. Neither `Send` nor `Sync`:
/// each thread opens its own scope (on its own context, or on a shared one).
///
/// Fetching atomics hand the value before back through their request:
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let me = shmem.my_pe();
/// let x = shmem.alloc_atomic(5u32)?;
/// shmem.nbe_scope(|s| -> rshmem::Result<()> {
///     let a = s.atomic_fetch_nbe(&x, me)?;
///     let b = s.atomic_swap_nbe(&x, 7, me)?;
///     let c = s.atomic_compare_swap_nbe(&x, 7, 9, me)?;
///     assert_eq!(a.merge(b).merge(c).wait(), ((5, 5), 7));
///     let d = s.atomic_fetch_inc_nbe(&x, me)?;
///     let e = s.atomic_fetch_and_nbe(&x, 0xe, me)?;
///     let f = s.atomic_fetch_or_nbe(&x, 0x10, me)?;
///     let g = s.atomic_fetch_xor_nbe(&x, 0x1, me)?;
///     assert_eq!((d.wait(), e.wait(), f.wait(), g.wait()), (9, 10, 10, 0x1a));
///     Ok(())
/// })?;
/// assert_eq!(x.load(), 0x1b);
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct NbeScope<'sc, 'env> {
    ctx: &'env CtxState,
    pub(crate) drain: &'sc Drain<'env>,
    _sc: PhantomData<&'sc mut &'sc ()>,
}

/// A request: explicit non-blocking operations that complete together, and what their
/// completion hands back (`O`: `()` for puts, the destination `&mut [T]` for gets, a
/// [`Fetch`] for fetching atomics, pairs for merged requests).
///
/// * [`test`](Self::test) polls it; [`wait`](Self::wait) blocks until it completes and
///   returns the output; [`complete`](Self::complete) waits but keeps it for reuse.
/// * [`merge`](Self::merge) makes one request of two, keeping both outputs;
///   [`add`](Self::add) merges another in and drops its output (a [`ReqSet`] collects
///   any number of requests this way).
/// * The `_with` operations of [`NbeScope`] add further operations to it.
///
/// Dropping it waits for its operations (an empty or completed request returns at once);
/// forgetting it is harmless, as the scope completes everything on exit.
#[must_use = "a request completes its operations when waited for or dropped"]
#[derive(Debug)]
pub struct Request<'sc, O: ReqOutput = ()> {
    pub(crate) req: Req<O>,
    _sc: PhantomData<&'sc ()>,
    /// Completed on the thread that issued it.
    _thread: PhantomData<*const ()>,
}

/// A request that gathers any number of others ([`Request::add`]) and further operations
/// (the `_with` forms of [`NbeScope`]), completing when all of them do.
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let v = shmem.alloc(8, 0u16)?;
/// let src = [1u16, 2, 3, 4];
/// let me = shmem.my_pe();
/// shmem.nbe_scope(|s| -> rshmem::Result<()> {
///     let mut set = rshmem::ReqSet::new();
///     s.put_nbe_with(&mut set, &v, 0, &src, me)?;
///     s.put_nbe_with(&mut set, &v, 4, &src, me)?;
///     set.complete(); // both are done; `set` is empty again, for more
///     assert!(set.test());
///     Ok(())
/// })?;
/// assert_eq!(v.to_vec(), [1, 2, 3, 4, 1, 2, 3, 4]);
/// # Ok::<(), rshmem::Error>(())
/// ```
pub type ReqSet<'sc> = Request<'sc, ()>;

impl<'sc> Request<'sc, ()> {
    /// An empty request: complete, with nothing to hand back; operations and requests
    /// join it later.
    pub fn new() -> Self {
        Request::from_req(raw::req_empty())
    }
}

impl Default for Request<'_, ()> {
    fn default() -> Self {
        Request::new()
    }
}

impl<'sc, O: ReqOutput> Request<'sc, O> {
    pub(crate) fn from_req(req: Req<O>) -> Self {
        Request {
            req,
            _sc: PhantomData,
            _thread: PhantomData,
        }
    }

    /// `shmemx_request_test`: whether every operation of the request is complete,
    /// without blocking. A complete request releases its runtime resources (and is
    /// empty until an operation joins it again); its output is still handed back by
    /// [`wait`](Self::wait), which then returns at once.
    pub fn test(&mut self) -> bool {
        self.req.test()
    }

    /// `shmemx_request_wait`: blocks until every operation of the request is complete,
    /// and hands the output back.
    pub fn wait(self) -> O::Value {
        self.req.wait()
    }

    /// Blocks until every operation of the request is complete, keeping the request
    /// (empty, for further operations); [`wait`](Self::wait) then returns the output at
    /// once.
    pub fn complete(&mut self) {
        self.req.complete()
    }

    /// `shmemx_merge_request`: one request that completes when both do, handing both
    /// outputs back as a pair.
    pub fn merge<P: ReqOutput>(self, other: Request<'sc, P>) -> Request<'sc, (O, P)> {
        Request::from_req(self.req.merge(other.req))
    }

    /// Merges `other` into this request, which then completes when both do. `other`'s
    /// output is not handed back: a get's destination stays borrowed until the scope
    /// ends, a fetched value is lost.
    pub fn add<P: ReqOutput>(&mut self, other: Request<'sc, P>) {
        self.req.absorb(other.req)
    }
}

/// A fetching request's output (see [`NbeScope::atomic_fetch_add_nbe`] and friends).
pub type FetchReq<'sc, T> = Request<'sc, Fetch<'sc, T>>;

/// The fetching `_nbe` atomics of [`NbeScope`], one per `fetch` row of [`amo_table!`].
macro_rules! nbe_amos {
    (
        fetch { $(
            [$fb:ident] $f:ident($($fa:ident),*) = $fop:expr;
                $fverb:literal, $fafter:literal, $fwhat:literal; $fnbi:ident, $fnbe:ident;
        )* }
        post { $($post:tt)* }
    ) => {
        $(
            #[doc = concat!(
                "`shmemx_", stringify!($fnbe), "`: ", $fverb, " `dst` on `pe`", $fafter, "; ",
                $fwhat, " is the request's output (its [`wait`](Request::wait))."
            )]
            pub fn $fnbe<T: $fb>(
                &self,
                dst: impl Into<AtomicElem<'env, T>>,
                $($fa: T,)*
                pe: usize,
            ) -> Result<FetchReq<'sc, T>> {
                let r = self.ctx.routine(
                    concat!("shmemx_", stringify!($fnbe)),
                    concat!("shmemx_ctx_", stringify!($fnbe)),
                );
                self.fetch_nbe(r, dst.into(), $fop, pe)
            }
        )*
    };
}

impl<'sc, 'env> NbeScope<'sc, 'env> {
    /// `shmemx_put_nbe`: like [`Ctx::put`], completed by the returned request; `src`
    /// stays borrowed until the scope ends.
    pub fn put_nbe<T: Remote>(
        &self,
        dst: &'env SymSlice<T>,
        offset: usize,
        src: &'env [T],
        pe: usize,
    ) -> Result<Request<'sc, ()>> {
        let mut req = Request::new();
        self.put_nbe_with(&mut req, dst, offset, src, pe)?;
        Ok(req)
    }

    /// `shmemx_put_nbe` with a live request: the put joins `req` ("the same merged
    /// request handle for additional operations").
    pub fn put_nbe_with<T: Remote, O: ReqOutput>(
        &self,
        req: &mut Request<'sc, O>,
        dst: &'env SymSlice<T>,
        offset: usize,
        src: &'env [T],
        pe: usize,
    ) -> Result<()> {
        let r = routine!(x self.ctx, "put_nbe");
        self.ctx.check(r, pe)?;
        raw::put_nbe(
            self.drain,
            self.ctx.raw(),
            r,
            &dst.region,
            offset,
            src,
            pe,
            &mut req.req,
        )
    }

    /// `shmemx_get_nbe`: like [`Ctx::get`], completed by the returned request, whose
    /// [`wait`](Request::wait) hands `dst` back filled.
    pub fn get_nbe<T: Remote>(
        &self,
        dst: &'env mut [T],
        src: &'env SymSlice<T>,
        offset: usize,
        pe: usize,
    ) -> Result<Request<'sc, &'env mut [T]>> {
        let r = routine!(x self.ctx, "get_nbe");
        self.ctx.check(r, pe)?;
        let req = raw::get_nbe(self.drain, self.ctx.raw(), r, dst, &src.region, offset, pe)?;
        Ok(Request::from_req(req))
    }

    /// `shmemx_get_nbe` with a live request: the get joins `req`. `dst` is not handed
    /// back: read it after the scope.
    pub fn get_nbe_with<T: Remote, O: ReqOutput>(
        &self,
        req: &mut Request<'sc, O>,
        dst: &'env mut [T],
        src: &'env SymSlice<T>,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(x self.ctx, "get_nbe");
        self.ctx.check(r, pe)?;
        raw::get_nbe_join(
            self.drain,
            self.ctx.raw(),
            r,
            dst,
            &src.region,
            offset,
            pe,
            &mut req.req,
        )
    }

    fn fetch_nbe<T: AmoExtended>(
        &self,
        routine: &'static str,
        dst: AtomicElem<'env, T>,
        op: AmoOp<T>,
        pe: usize,
    ) -> Result<FetchReq<'sc, T>> {
        self.ctx.check(routine, pe)?;
        let (region, i) = dst.parts();
        let req = raw::amo_nbe(self.drain, self.ctx.raw(), routine, region, i, op, pe)?;
        Ok(Request::from_req(req))
    }

    amo_table!(nbe_amos);
}
