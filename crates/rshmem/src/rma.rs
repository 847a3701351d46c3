//! Remote memory access and signals on the default context.

use rshmem_core::{Cmp, SignalOp};

use crate::atomic::SymAtomic;
use crate::error::Result;
use crate::raw::{self, Strided};
use crate::remote::Remote;
use crate::shmem::{ok, Shmem};
use crate::sym::SymVec;

/// Remote memory access (RMA). Offsets, lengths and strides count elements of `T`.
/// Every call checks `pe < n_pes()` and the bounds of both sides first and returns an
/// error, having done nothing, when they do not hold. Transfers of zero elements do
/// nothing.
impl Shmem {
    /// `shmem_put`: copies `src` into elements `offset..offset + src.len()` of `dst` on
    /// PE `pe`. Returns when `src` may be reused; the data is delivered at the latest by
    /// the next [`quiet`](Self::quiet) or [`barrier_all`](Self::barrier_all).
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
        dst: &SymVec<'_, T>,
        offset: usize,
        src: &[T],
        pe: usize,
    ) -> Result<()> {
        self.check_pe("shmem_put", pe)?;
        raw::put("shmem_put", &dst.region, offset, src, pe)
    }

    /// `shmem_get`: copies elements `offset..offset + dst.len()` of `src` on PE `pe` into
    /// `dst`. Returns with the data in `dst`.
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
        src: &SymVec<'_, T>,
        offset: usize,
        pe: usize,
    ) -> Result<()> {
        self.check_pe("shmem_get", pe)?;
        raw::get("shmem_get", dst, &src.region, offset, pe)
    }

    /// `shmem_p`: writes `value` to element `index` of `dst` on PE `pe`.
    pub fn p<T: Remote>(
        &self,
        dst: &SymVec<'_, T>,
        index: usize,
        value: T,
        pe: usize,
    ) -> Result<()> {
        self.check_pe("shmem_p", pe)?;
        raw::put(
            "shmem_p",
            &dst.region,
            index,
            std::slice::from_ref(&value),
            pe,
        )
    }

    /// `shmem_g`: reads element `index` of `src` on PE `pe`.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let v = shmem.alloc(3, 9i16)?;
    /// assert_eq!(shmem.g(&v, 2, 0)?, 9);
    /// assert!(shmem.g(&v, 3, 0).is_err());
    /// assert!(shmem.g(&v, 0, shmem.n_pes()).is_err()); // no such PE
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn g<T: Remote>(&self, src: &SymVec<'_, T>, index: usize, pe: usize) -> Result<T> {
        self.check_pe("shmem_g", pe)?;
        raw::g("shmem_g", &src.region, index, pe)
    }

    /// `shmem_iput`: strided put of `nelems` elements: element `k` of the transfer goes
    /// from `src[src_start + k * src_stride]` to `dst[dst_start + k * dst_stride]` on PE
    /// `pe`. Bounds are checked for the whole extent of both sides.
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
        dst: &SymVec<'_, T>,
        dst_start: usize,
        dst_stride: usize,
        src: &[T],
        src_start: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        self.check_pe("shmem_iput", pe)?;
        let d = Strided {
            start: dst_start,
            stride: dst_stride,
        };
        let s = Strided {
            start: src_start,
            stride: src_stride,
        };
        raw::iput("shmem_iput", &dst.region, d, src, s, nelems, pe)
    }

    /// `shmem_iget`: strided get of `nelems` elements: element `k` of the transfer goes
    /// from `src[src_start + k * src_stride]` on PE `pe` to `dst[dst_start + k *
    /// dst_stride]`.
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
        src: &SymVec<'_, T>,
        src_start: usize,
        src_stride: usize,
        nelems: usize,
        pe: usize,
    ) -> Result<()> {
        self.check_pe("shmem_iget", pe)?;
        let d = Strided {
            start: dst_start,
            stride: dst_stride,
        };
        let s = Strided {
            start: src_start,
            stride: src_stride,
        };
        raw::iget("shmem_iget", dst, d, &src.region, s, nelems, pe)
    }

    /// `shmem_put_signal`: puts `src` into `dst[offset..]` on PE `pe`, then updates
    /// `sig` there with `op` and `signal`. The data is delivered before the signal is
    /// visible, so a PE waiting on the signal ([`signal_wait_until`](Self::signal_wait_until))
    /// then finds the data in place.
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
        dst: &SymVec<'_, T>,
        offset: usize,
        src: &[T],
        sig: &SymAtomic<'_, u64>,
        signal: u64,
        op: SignalOp,
        pe: usize,
    ) -> Result<()> {
        self.check_pe("shmem_put_signal", pe)?;
        raw::put_signal(
            "shmem_put_signal",
            &dst.region,
            offset,
            src,
            &sig.region,
            signal,
            op,
            pe,
        )
    }

    /// `shmem_signal_set`: sets the signal `sig` on PE `pe` to `signal`.
    pub fn signal_set(&self, sig: &SymAtomic<'_, u64>, signal: u64, pe: usize) -> Result<()> {
        self.check_pe("shmem_signal_set", pe)?;
        raw::signal_op("shmem_signal_set", &sig.region, signal, SignalOp::Set, pe)
    }

    /// `shmem_signal_add`: adds `signal` to the signal `sig` on PE `pe`.
    pub fn signal_add(&self, sig: &SymAtomic<'_, u64>, signal: u64, pe: usize) -> Result<()> {
        self.check_pe("shmem_signal_add", pe)?;
        raw::signal_op("shmem_signal_add", &sig.region, signal, SignalOp::Add, pe)
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
