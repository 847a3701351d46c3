//! Team collectives: broadcast, collect, fcollect, alltoall(s), typed reductions and sum
//! scans, as methods of [`TeamRef`] (and so of [`Team`](crate::Team)).
//!
//! Every collective is called by every member of the team, in the same order, with
//! symmetric [`SymVec`]s. There are no pSync/pWrk arrays and no barrier is needed between
//! consecutive collectives: each one returns only when its results are complete on this
//! PE and no other member still reads this PE's buffers.
//!
//! Sizes are checked on each PE before anything is sent; a call that fails its checks has
//! no effect. (The other members, if they passed theirs, wait for it: give every member
//! consistent arguments.)

use rshmem_core::coll::ReduceOp;

pub use rshmem_core::coll::Complex;

use crate::error::Result;
use crate::raw;
use crate::remote::Remote;
use crate::sym::SymVec;
use crate::team::TeamRef;

// SAFETY: `Complex<F>` is `repr(C)` with two `F` fields and no padding; every bit pattern
// of two `f32`s or two `f64`s is a valid value.
#[allow(unsafe_code)]
unsafe impl Remote for Complex<f32> {}
// SAFETY: as for `Complex<f32>`.
#[allow(unsafe_code)]
unsafe impl Remote for Complex<f64> {}

pub(crate) mod sealed {
    /// The runtime operator behind a marker type.
    pub trait Op: Copy {
        const OP: rshmem_core::coll::ReduceOp;
    }

    /// The C routine names of the reductions and scans of one element type.
    pub trait Reduce<Op>: rshmem_core::coll::Elem + Default {
        const ROUTINE: &'static str;
        const INSCAN: &'static str;
        const EXSCAN: &'static str;
    }
}

/// A reduction operator: [`Sum`], [`Prod`], [`Min`], [`Max`], [`And`], [`Or`], [`Xor`].
/// Sealed; pass a value of one to [`TeamRef::reduce`].
pub trait Operator: sealed::Op {}

macro_rules! operators {
    ($($name:ident $doc:literal),* $(,)?) => {$(
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Op for $name {
            const OP: ReduceOp = ReduceOp::$name;
        }
        impl Operator for $name {}
    )*};
}

operators!(
    Sum "Sum (`shmem_TYPENAME_sum_reduce`); integers wrap. Integers, floats, complex.",
    Prod "Product (`shmem_TYPENAME_prod_reduce`); integers wrap. Integers, floats, complex.",
    Min "Minimum (`shmem_TYPENAME_min_reduce`). Integers and floats.",
    Max "Maximum (`shmem_TYPENAME_max_reduce`). Integers and floats.",
    And "Bitwise and (`shmem_TYPENAME_and_reduce`). Integers only.",
    Or "Bitwise or (`shmem_TYPENAME_or_reduce`). Integers only.",
    Xor "Bitwise xor (`shmem_TYPENAME_xor_reduce`). Integers only.",
);

/// Element types that reduce with operator `Op`, checked at compile time as the
/// specification's tables have it:
///
/// * [`And`], [`Or`], [`Xor`]: the integers (`i8`..`i64`, `u8`..`u64`, `isize`, `usize`);
/// * [`Min`], [`Max`]: the integers, `f32` and `f64`;
/// * [`Sum`], [`Prod`]: the integers, `f32`, `f64`, `Complex<f32>` and `Complex<f64>`.
///
/// Sealed: it cannot be implemented outside this crate.
///
/// ```compile_fail,E0277
/// use rshmem::{Shmem, Xor};
/// let shmem = Shmem::init()?;
/// let v = shmem.alloc(1, 1.0f64)?;
/// shmem.world().reduce_in_place(Xor, &v, 1)?; // error: `f64: Reducible<Xor>` is not satisfied
/// # Ok::<(), rshmem::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be reduced with `{Op}`",
    note = "And/Or/Xor take integers; Min/Max integers and floats; Sum/Prod integers, floats and Complex"
)]
pub trait Reducible<Op: Operator>: Remote + sealed::Reduce<Op> {}

macro_rules! reducible {
    ($t:ty, $tn:literal: $($op:ident $on:literal),*) => {$(
        impl sealed::Reduce<$op> for $t {
            const ROUTINE: &'static str = concat!("shmem_", $tn, "_", $on, "_reduce");
            const INSCAN: &'static str = concat!("shmem_", $tn, "_sum_inscan");
            const EXSCAN: &'static str = concat!("shmem_", $tn, "_sum_exscan");
        }
        impl Reducible<$op> for $t {}
    )*};
}

macro_rules! int_reducible {
    ($($t:ty, $tn:literal);* $(;)?) => {$(
        reducible!($t, $tn: And "and", Or "or", Xor "xor", Min "min", Max "max", Sum "sum", Prod "prod");
    )*};
}

int_reducible!(
    i8, "int8"; i16, "int16"; i32, "int32"; i64, "int64"; isize, "ptrdiff";
    u8, "uint8"; u16, "uint16"; u32, "uint32"; u64, "uint64"; usize, "size";
);
reducible!(f32, "float": Min "min", Max "max", Sum "sum", Prod "prod");
reducible!(f64, "double": Min "min", Max "max", Sum "sum", Prod "prod");
reducible!(Complex<f32>, "complexf": Sum "sum", Prod "prod");
reducible!(Complex<f64>, "complexd": Sum "sum", Prod "prod");

/// Team collectives. Element counts (`nelems`) and strides are in elements of `T`;
/// `root` and block numbers are team ranks.
///
/// # Errors
///
/// [`Error::OutOfBounds`](crate::Error::OutOfBounds) naming the routine and the argument
/// (`dest` or `source`) when a buffer is shorter than the call needs;
/// [`Error::PeOutOfRange`](crate::Error::PeOutOfRange) for a `root` not below `n_pes()`;
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when one object is passed
/// as both `dest` and `source` where they must be disjoint, or for a zero stride.
impl<'s> TeamRef<'s> {
    /// `shmem_broadcast`: copies `nelems` elements of `src` on team rank `root` into
    /// `dest` on **every** member, the root included. `dest` and `src` may be the same
    /// object. Needs `dest` and `src` of at least `nelems`.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let src = shmem.alloc(3, world.my_pe() as i32)?;
    /// let dest = shmem.alloc(3, -1i32)?;
    /// world.broadcast(&dest, &src, 3, 0)?;
    /// assert_eq!(dest.to_vec(), [0, 0, 0]); // rank 0's values everywhere
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn broadcast<T: Remote>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
        root: usize,
    ) -> Result<()> {
        raw::broadcast(
            "shmem_broadcast",
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            root,
            None,
        )
    }

    /// `shmem_collect`: concatenates every member's first `nelems` elements of `src`, in
    /// rank order, into `dest` on every member. `nelems` may differ between members;
    /// `dest` must hold their total.
    ///
    /// The members first agree on the total (an extra small reduction in `dest`'s first
    /// bytes, which it then restores), so that a `dest` too short fails with the same
    /// error everywhere instead of overflowing. Use [`fcollect`](Self::fcollect) when every member contributes the
    /// same count.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let src = shmem.alloc(n, me as u64)?;
    /// let dest = shmem.alloc(n * (n + 1) / 2, 0u64)?;
    /// world.collect(&dest, &src, me + 1)?; // rank r sends r + 1 copies of r
    /// assert_eq!(dest.load(0), 0);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn collect<T: Remote>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        raw::collect(
            "shmem_collect",
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            None,
        )
    }

    /// `shmem_fcollect`: concatenates every member's first `nelems` elements of `src`, in
    /// rank order, into `dest` on every member. Every member passes the same `nelems`;
    /// `dest` needs `nelems * n_pes()` elements and must be another object than `src`.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let src = shmem.alloc(1, world.my_pe() as u32 * 10)?;
    /// let dest = shmem.alloc(world.n_pes(), 0u32)?;
    /// world.fcollect(&dest, &src, 1)?;
    /// assert_eq!(dest.to_vec(), (0..world.n_pes() as u32).map(|r| r * 10).collect::<Vec<_>>());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn fcollect<T: Remote>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        raw::fcollect_or_alltoall(
            "shmem_fcollect",
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            false,
            None,
        )
    }

    /// `shmem_alltoall`: block `j` (of `nelems` elements) of `src` on rank `i` goes to
    /// block `i` of `dest` on rank `j`. Both need `nelems * n_pes()` elements and must be
    /// different objects.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let (me, n) = (world.my_pe(), world.n_pes());
    /// let src = shmem.alloc(n, 0usize)?;
    /// (0..n).for_each(|j| src.store(j, me * 100 + j)); // block j is for rank j
    /// let dest = shmem.alloc(n, 0usize)?;
    /// world.alltoall(&dest, &src, 1)?;
    /// assert_eq!(dest.to_vec(), (0..n).map(|i| i * 100 + me).collect::<Vec<_>>());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn alltoall<T: Remote>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        raw::fcollect_or_alltoall(
            "shmem_alltoall",
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            true,
            None,
        )
    }

    /// `shmem_alltoalls`: [`alltoall`](Self::alltoall) in which element `k` of the
    /// `nelems * n_pes()` logical elements is `src[k * src_stride]` and lands in
    /// `dest[k * dst_stride]` (strides ≥ 1, in elements).
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let n = world.n_pes();
    /// let src = shmem.alloc(2 * n, world.my_pe() as i16)?;
    /// let dest = shmem.alloc(3 * n, -1i16)?;
    /// world.alltoalls(&dest, &src, 3, 2, 1)?; // every 3rd of dest from every 2nd of src
    /// assert_eq!(dest.load(0), 0);
    /// assert_eq!(dest.load(1), -1);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn alltoalls<T: Remote>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        dst_stride: usize,
        src_stride: usize,
        nelems: usize,
    ) -> Result<()> {
        raw::alltoalls(
            "shmem_alltoalls",
            &self.team,
            &dest.region,
            &src.region,
            dst_stride,
            src_stride,
            nelems,
            None,
        )
    }

    /// `shmem_TYPENAME_OP_reduce`: `dest[i]` on every member becomes `op` folded over
    /// `src[i]` of every member, for `i < nelems`. `dest` and `src` are different objects
    /// (disjoint) or the same one (in place, as [`reduce_in_place`](Self::reduce_in_place)).
    /// The element type must support the operator ([`Reducible`]).
    ///
    /// ```
    /// use rshmem::{Max, Sum};
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let src = shmem.alloc(2, world.my_pe() as i64 + 1)?;
    /// let dest = shmem.alloc(2, 0i64)?;
    /// world.reduce(Sum, &dest, &src, 2)?;
    /// let n = world.n_pes() as i64;
    /// assert_eq!(dest.to_vec(), [n * (n + 1) / 2; 2]);
    /// world.reduce(Max, &dest, &src, 1)?;
    /// assert_eq!(dest.load(0), n);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn reduce<Op: Operator, T: Reducible<Op>>(
        &self,
        op: Op,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        let _ = op;
        raw::reduce(
            <T as sealed::Reduce<Op>>::ROUTINE,
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            Op::OP,
            None,
        )
    }

    /// [`reduce`](Self::reduce) in place: the first `nelems` elements of `buf` on every
    /// member become `op` folded over all members' values.
    ///
    /// ```
    /// use rshmem::{Complex, Prod};
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let buf = shmem.alloc(1, Complex { re: 0.0f64, im: 1.0 })?; // i
    /// world.reduce_in_place(Prod, &buf, 1)?; // i to the n
    /// if world.n_pes() == 1 {
    ///     assert_eq!(buf.load(0), Complex { re: 0.0, im: 1.0 });
    /// }
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn reduce_in_place<Op: Operator, T: Reducible<Op>>(
        &self,
        op: Op,
        buf: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        self.reduce(op, buf, buf, nelems)
    }

    /// `shmem_TYPENAME_sum_inscan` (OpenSHMEM 1.6): `dest[i]` on rank `r` becomes the sum
    /// of `src[i]` over ranks `0..=r`. `dest` and `src` must be different objects.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let src = shmem.alloc(1, 1u32)?;
    /// let dest = shmem.alloc(1, 0u32)?;
    /// world.sum_inscan(&dest, &src, 1)?;
    /// assert_eq!(dest.load(0), world.my_pe() as u32 + 1);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn sum_inscan<T: Reducible<Sum>>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        raw::sum_scan(
            <T as sealed::Reduce<Sum>>::INSCAN,
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            true,
        )
    }

    /// `shmem_TYPENAME_sum_exscan` (OpenSHMEM 1.6): `dest[i]` on rank `r` becomes the sum
    /// of `src[i]` over ranks `0..r` (zero on rank 0). `dest` and `src` must be different
    /// objects.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let world = shmem.world();
    /// let src = shmem.alloc(1, 2.0f64)?;
    /// let dest = shmem.alloc(1, -1.0f64)?;
    /// world.sum_exscan(&dest, &src, 1)?;
    /// assert_eq!(dest.load(0), 2.0 * world.my_pe() as f64);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn sum_exscan<T: Reducible<Sum>>(
        &self,
        dest: &SymVec<'_, T>,
        src: &SymVec<'_, T>,
        nelems: usize,
    ) -> Result<()> {
        raw::sum_scan(
            <T as sealed::Reduce<Sum>>::EXSCAN,
            &self.team,
            &dest.region,
            &src.region,
            nelems,
            false,
        )
    }
}
