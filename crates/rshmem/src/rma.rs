//! Remote memory access and signals: on any context ([`Ctx`]), and on the default one
//! through the guard ([`Shmem`], which delegates to [`Shmem::default_ctx`]).

use rshmem_core::{Cmp, SignalOp};

use crate::atomic::SymAtomic;
use crate::ctx::{routine, Ctx, CtxMode};
use crate::error::Result;
use crate::raw::{self, Strided};
use crate::remote::Remote;
use crate::shmem::{ok, Shmem};
use crate::sym::SymSlice;

fn strided(start: usize, stride: usize) -> Strided {
    Strided { start, stride }
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
    /// `shmem_ctx_put`: copies `src` into elements `offset..offset + src.len()` of `dst`
    /// on PE `pe`. Returns when `src` may be reused; the data is delivered at the latest
    /// by this context's next [`quiet`](Self::quiet) (or its destruction).
    ///
    /// ```
    /// use rshmem::Serialized;
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let dst = shmem.alloc(4, 0u64)?;
    /// let ctx = shmem.create_ctx::<Serialized>(false)?;
    /// ctx.put(&dst, 1, &[me as u64; 3], (me + 1) % n)?;
    /// ctx.quiet();
    /// shmem.barrier_all();
    /// assert_eq!(dst.load(3), ((me + n - 1) % n) as u64);
    /// assert!(ctx.put(&dst, 2, &[0; 3], me).is_err()); // 2..5 is out of bounds
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn put<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        offset: usize,
        src: &[T],
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "put");
        self.state.check(r, pe)?;
        raw::put(self.state.raw(), r, &dst.region, offset, src, pe)
    }

    /// `shmem_ctx_get`: copies elements `offset..offset + dst.len()` of `src` on PE `pe`
    /// into `dst`. Returns with the data in `dst`.
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let src = shmem.alloc(4, me as u32)?;
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// let mut got = [0u32; 2];
    /// ctx.get(&mut got, &src, 2, (me + 1) % n)?;
    /// assert_eq!(got, [((me + 1) % n) as u32; 2]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn get<T: Remote>(
        &self,
        dst: &mut [T],
        src: &SymSlice<T>,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "get");
        self.state.check(r, pe)?;
        raw::get(self.state.raw(), r, dst, &src.region, offset, pe)
    }

    /// `shmem_ctx_p`: writes `value` to element `index` of `dst` on PE `pe`.
    pub fn p<T: Remote>(&self, dst: &SymSlice<T>, index: usize, value: T, pe: usize) -> Result<()> {
        let r = routine!(self.state, "p");
        self.state.check(r, pe)?;
        raw::put(
            self.state.raw(),
            r,
            &dst.region,
            index,
            std::slice::from_ref(&value),
            pe,
        )
    }

    /// `shmem_ctx_g`: reads element `index` of `src` on PE `pe`.
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let v = shmem.alloc(3, 9i16)?;
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// assert_eq!(ctx.g(&v, 2, 0)?, 9);
    /// assert!(ctx.g(&v, 3, 0).is_err());
    /// assert!(ctx.g(&v, 0, shmem.n_pes()).is_err()); // no such PE
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn g<T: Remote>(&self, src: &SymSlice<T>, index: usize, pe: usize) -> Result<T> {
        let r = routine!(self.state, "g");
        self.state.check(r, pe)?;
        raw::g(self.state.raw(), r, &src.region, index, pe)
    }

    /// `shmem_ctx_iput`: strided put of `nelems` elements: element `k` of the transfer
    /// goes from `src[src_start + k * src_stride]` to `dst[dst_start + k * dst_stride]` on
    /// PE `pe`. Bounds are checked for the whole extent of both sides.
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let me = shmem.my_pe();
    /// let m = shmem.alloc_zeroed::<i32>(9)?; // a 3x3 matrix
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// ctx.iput(&m, 0, 4, &[1, 2, 3], 0, 1, 3, me)?; // the diagonal
    /// assert_eq!(m.to_vec(), [1, 0, 0, 0, 2, 0, 0, 0, 3]);
    /// assert!(ctx.iput(&m, 1, 4, &[1, 2, 3], 0, 1, 3, me).is_err()); // 1, 5, 9: out of bounds
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn iput<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        dst_start: usize,
        dst_stride: usize,
        src: &[T],
        src_start: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "iput");
        self.state.check(r, pe)?;
        let (d, s) = (
            strided(dst_start, dst_stride),
            strided(src_start, src_stride),
        );
        raw::iput(self.state.raw(), r, &dst.region, d, src, s, nelems, pe)
    }

    /// `shmem_ctx_iget`: strided get of `nelems` elements: element `k` of the transfer
    /// goes from `src[src_start + k * src_stride]` on PE `pe` to `dst[dst_start + k *
    /// dst_stride]`.
    #[allow(clippy::too_many_arguments)]
    pub fn iget<T: Remote>(
        &self,
        dst: &mut [T],
        dst_start: usize,
        dst_stride: usize,
        src: &SymSlice<T>,
        src_start: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "iget");
        self.state.check(r, pe)?;
        let (d, s) = (
            strided(dst_start, dst_stride),
            strided(src_start, src_stride),
        );
        raw::iget(self.state.raw(), r, dst, d, &src.region, s, nelems, pe)
    }

    /// `shmem_ctx_ibput` (OpenSHMEM 1.6): blocked put of `nblocks` blocks of `bsize`
    /// elements: block `k` goes from `src[src_start + k * src_stride..][..bsize]` to
    /// `dst[dst_start + k * dst_stride..][..bsize]` on PE `pe`.
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let me = shmem.my_pe();
    /// let m = shmem.alloc_zeroed::<u8>(8)?;
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// // Two blocks of two: source blocks every 2 elements, destination blocks every 4.
    /// ctx.ibput(&m, 0, 4, &[1, 2, 3, 4], 0, 2, 2, 2, me)?;
    /// assert_eq!(m.to_vec(), [1, 2, 0, 0, 3, 4, 0, 0]);
    /// assert!(ctx.ibput(&m, 1, 4, &[1, 2, 3, 4], 0, 2, 4, 2, me).is_err()); // 5..9
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn ibput<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        dst_start: usize,
        dst_stride: usize,
        src: &[T],
        src_start: usize,
        src_stride: usize,
        bsize: usize,
        nblocks: usize,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "ibput");
        self.state.check(r, pe)?;
        let (d, s) = (
            strided(dst_start, dst_stride),
            strided(src_start, src_stride),
        );
        raw::ibput(
            self.state.raw(),
            r,
            &dst.region,
            d,
            src,
            s,
            bsize,
            nblocks,
            pe,
        )
    }

    /// `shmem_ctx_ibget` (OpenSHMEM 1.6): blocked get of `nblocks` blocks of `bsize`
    /// elements: block `k` goes from `src[src_start + k * src_stride..][..bsize]` on PE
    /// `pe` to `dst[dst_start + k * dst_stride..][..bsize]`.
    #[allow(clippy::too_many_arguments)]
    pub fn ibget<T: Remote>(
        &self,
        dst: &mut [T],
        dst_start: usize,
        dst_stride: usize,
        src: &SymSlice<T>,
        src_start: usize,
        src_stride: usize,
        bsize: usize,
        nblocks: usize,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "ibget");
        self.state.check(r, pe)?;
        let (d, s) = (
            strided(dst_start, dst_stride),
            strided(src_start, src_stride),
        );
        raw::ibget(
            self.state.raw(),
            r,
            dst,
            d,
            &src.region,
            s,
            bsize,
            nblocks,
            pe,
        )
    }

    /// `shmem_ctx_put_signal`: puts `src` into `dst[offset..]` on PE `pe`, then updates
    /// `sig` there with `op` and `signal`. The data is delivered before the signal is
    /// visible, so a PE waiting on the signal ([`Shmem::signal_wait_until`]) then finds
    /// the data in place.
    ///
    /// ```
    /// use rshmem::{Cmp, Private, SignalOp};
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let data = shmem.alloc(2, 0u32)?;
    /// let ready = shmem.alloc_atomic(0u64)?;
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// ctx.put_signal(&data, 0, &[7, 8], &ready, 1, SignalOp::Add, (me + 1) % n)?;
    /// shmem.signal_wait_until(&ready, Cmp::Eq, 1);
    /// assert_eq!(data.to_vec(), [7, 8]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn put_signal<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        offset: usize,
        src: &[T],
        sig: &SymAtomic<'_, u64>,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        let r = routine!(self.state, "put_signal");
        self.state.check(r, pe)?;
        raw::put_signal(
            self.state.raw(),
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

    /// `shmem_ctx_signal_set`: sets the signal `sig` on PE `pe` to `signal`.
    pub fn signal_set(&self, sig: &SymAtomic<'_, u64>, signal: u64, pe: usize) -> Result<()> {
        let r = routine!(self.state, "signal_set");
        self.state.check(r, pe)?;
        raw::signal_op(self.state.raw(), r, &sig.region, signal, SignalOp::Set, pe)
    }

    /// `shmem_ctx_signal_add`: adds `signal` to the signal `sig` on PE `pe`.
    ///
    /// ```
    /// use rshmem::{Cmp, Private};
    /// let shmem = rshmem::Shmem::init()?;
    /// let n = shmem.n_pes();
    /// let sig = shmem.alloc_atomic(0u64)?;
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// ctx.signal_add(&sig, 1, 0)?;
    /// if shmem.my_pe() == 0 {
    ///     shmem.signal_wait_until(&sig, Cmp::Eq, n as u64);
    /// }
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn signal_add(&self, sig: &SymAtomic<'_, u64>, signal: u64, pe: usize) -> Result<()> {
        let r = routine!(self.state, "signal_add");
        self.state.check(r, pe)?;
        raw::signal_op(self.state.raw(), r, &sig.region, signal, SignalOp::Add, pe)
    }
}

/// Remote memory access (RMA) and signals on the default context: each method is the
/// [`Ctx`] method of the same name on [`default_ctx`](Self::default_ctx), with the same
/// checks (PE numbers are world PEs `0..n_pes()`).
impl Shmem {
    /// `shmem_put`: copies `src` into elements `offset..offset + src.len()` of `dst` on
    /// PE `pe`. Returns when `src` may be reused; the data is delivered at the latest by
    /// the next [`quiet`](Self::quiet) or [`barrier_all`](Self::barrier_all). See
    /// [`Ctx::put`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let dst = shmem.alloc(4, 0u64)?;
    /// shmem.put(&dst, 1, &[me as u64; 3], (me + 1) % n)?; // elements 1..4 of the right neighbour
    /// shmem.barrier_all();
    /// assert_eq!(dst.load(3), ((me + n - 1) % n) as u64);
    /// assert!(shmem.put(&dst, 2, &[0; 3], me).is_err()); // 2..5 is out of bounds
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn put<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        offset: usize,
        src: &[T],
        pe: usize,
    ) -> Result<()> {
        self.default_ctx().put(dst, offset, src, pe)
    }

    /// `shmem_get`: copies elements `offset..offset + dst.len()` of `src` on PE `pe` into
    /// `dst`. Returns with the data in `dst`. See [`Ctx::get`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let src = shmem.alloc(4, me as u32)?;
    /// let mut got = [0u32; 2];
    /// shmem.get(&mut got, &src, 2, (me + 1) % n)?;
    /// assert_eq!(got, [((me + 1) % n) as u32; 2]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn get<T: Remote>(
        &self,
        dst: &mut [T],
        src: &SymSlice<T>,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        self.default_ctx().get(dst, src, offset, pe)
    }

    /// `shmem_p`: writes `value` to element `index` of `dst` on PE `pe`. See [`Ctx::p`].
    pub fn p<T: Remote>(&self, dst: &SymSlice<T>, index: usize, value: T, pe: usize) -> Result<()> {
        self.default_ctx().p(dst, index, value, pe)
    }

    /// `shmem_g`: reads element `index` of `src` on PE `pe`. See [`Ctx::g`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let v = shmem.alloc(3, 9i16)?;
    /// assert_eq!(shmem.g(&v, 2, 0)?, 9);
    /// assert!(shmem.g(&v, 3, 0).is_err());
    /// assert!(shmem.g(&v, 0, shmem.n_pes()).is_err()); // no such PE
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn g<T: Remote>(&self, src: &SymSlice<T>, index: usize, pe: usize) -> Result<T> {
        self.default_ctx().g(src, index, pe)
    }

    /// `shmem_iput`: strided put of `nelems` elements: element `k` of the transfer goes
    /// from `src[src_start + k * src_stride]` to `dst[dst_start + k * dst_stride]` on PE
    /// `pe`. Bounds are checked for the whole extent of both sides. See [`Ctx::iput`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let me = shmem.my_pe();
    /// let m = shmem.alloc_zeroed::<i32>(9)?; // a 3x3 matrix
    /// shmem.iput(&m, 0, 4, &[1, 2, 3], 0, 1, 3, me)?; // the diagonal
    /// assert_eq!(m.to_vec(), [1, 0, 0, 0, 2, 0, 0, 0, 3]);
    /// assert!(shmem.iput(&m, 1, 4, &[1, 2, 3], 0, 1, 3, me).is_err()); // 1, 5, 9: out of bounds
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn iput<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        dst_start: usize,
        dst_stride: usize,
        src: &[T],
        src_start: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        self.default_ctx().iput(
            dst, dst_start, dst_stride, src, src_start, src_stride, nelems, pe,
        )
    }

    /// `shmem_iget`: strided get of `nelems` elements: element `k` of the transfer goes
    /// from `src[src_start + k * src_stride]` on PE `pe` to `dst[dst_start + k *
    /// dst_stride]`. See [`Ctx::iget`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let v = shmem.alloc(6, 0u8)?;
    /// v.copy_from_local(&[0, 1, 2, 3, 4, 5]);
    /// shmem.barrier_all();
    /// let mut evens = [0u8; 3];
    /// shmem.iget(&mut evens, 0, 1, &v, 0, 2, 3, 0)?;
    /// assert_eq!(evens, [0, 2, 4]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn iget<T: Remote>(
        &self,
        dst: &mut [T],
        dst_start: usize,
        dst_stride: usize,
        src: &SymSlice<T>,
        src_start: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        self.default_ctx().iget(
            dst, dst_start, dst_stride, src, src_start, src_stride, nelems, pe,
        )
    }

    /// `shmem_ibput` (OpenSHMEM 1.6): blocked put of `nblocks` blocks of `bsize`
    /// elements. See [`Ctx::ibput`].
    #[allow(clippy::too_many_arguments)]
    pub fn ibput<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        dst_start: usize,
        dst_stride: usize,
        src: &[T],
        src_start: usize,
        src_stride: usize,
        bsize: usize,
        nblocks: usize,
        pe: usize,
    ) -> Result<()> {
        self.default_ctx().ibput(
            dst, dst_start, dst_stride, src, src_start, src_stride, bsize, nblocks, pe,
        )
    }

    /// `shmem_ibget` (OpenSHMEM 1.6): blocked get of `nblocks` blocks of `bsize`
    /// elements. See [`Ctx::ibget`].
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let v = shmem.alloc(6, 0u8)?;
    /// v.copy_from_local(&[0, 1, 2, 3, 4, 5]);
    /// shmem.barrier_all();
    /// let mut got = [0u8; 4];
    /// shmem.ibget(&mut got, 0, 2, &v, 1, 3, 2, 2, 0)?; // blocks 1..3 and 4..6
    /// assert_eq!(got, [1, 2, 4, 5]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn ibget<T: Remote>(
        &self,
        dst: &mut [T],
        dst_start: usize,
        dst_stride: usize,
        src: &SymSlice<T>,
        src_start: usize,
        src_stride: usize,
        bsize: usize,
        nblocks: usize,
        pe: usize,
    ) -> Result<()> {
        self.default_ctx().ibget(
            dst, dst_start, dst_stride, src, src_start, src_stride, bsize, nblocks, pe,
        )
    }

    /// `shmem_put_signal`: puts `src` into `dst[offset..]` on PE `pe`, then updates
    /// `sig` there with `op` and `signal`. The data is delivered before the signal is
    /// visible, so a PE waiting on the signal ([`signal_wait_until`](Self::signal_wait_until))
    /// then finds the data in place. See [`Ctx::put_signal`].
    ///
    /// ```
    /// use rshmem::{Cmp, SignalOp};
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let data = shmem.alloc(4, 0u32)?;
    /// let ready = shmem.alloc_atomic(0u64)?;
    /// shmem.put_signal(&data, 0, &[7, 8, 9, 10], &ready, 1, SignalOp::Set, (me + 1) % n)?;
    /// shmem.signal_wait_until(&ready, Cmp::Eq, 1);
    /// assert_eq!(data.to_vec(), [7, 8, 9, 10]);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn put_signal<T: Remote>(
        &self,
        dst: &SymSlice<T>,
        offset: usize,
        src: &[T],
        sig: &SymAtomic<'_, u64>,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        self.default_ctx()
            .put_signal(dst, offset, src, sig, signal, op, pe)
    }

    /// `shmem_signal_set`: sets the signal `sig` on PE `pe` to `signal`. See
    /// [`Ctx::signal_set`].
    pub fn signal_set(&self, sig: &SymAtomic<'_, u64>, signal: u64, pe: usize) -> Result<()> {
        self.default_ctx().signal_set(sig, signal, pe)
    }

    /// `shmem_signal_add`: adds `signal` to the signal `sig` on PE `pe`. See
    /// [`Ctx::signal_add`].
    pub fn signal_add(&self, sig: &SymAtomic<'_, u64>, signal: u64, pe: usize) -> Result<()> {
        self.default_ctx().signal_add(sig, signal, pe)
    }

    /// `shmem_signal_fetch`: this PE's value of the signal, read atomically.
    pub fn signal_fetch(&self, sig: &SymAtomic<'_, u64>) -> u64 {
        sig.load()
    }

    /// `shmem_signal_wait_until`: waits until this PE's signal satisfies
    /// `signal cmp value` and returns the value that did.
    pub fn signal_wait_until(&self, sig: &SymAtomic<'_, u64>, cmp: Cmp, value: u64) -> u64 {
        ok(raw::signal_wait_until(
            "shmem_signal_wait_until",
            &sig.region,
            cmp,
            value,
        ))
    }
}
