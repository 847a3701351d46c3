//! Symmetric atomic words and the atomic memory operations (AMOs) on them.
//!
//! Which operations a type gets follows the OpenSHMEM type classes, as sealed traits:
//!
//! | trait | operations | types |
//! |---|---|---|
//! | [`AmoExtended`] | fetch, set, swap | the standard types, `f32`, `f64` |
//! | [`AmoStandard`] | + compare_swap, fetch_inc, inc, fetch_add, add; point-to-point waits | `i32`, `i64`, `u32`, `u64`, `isize`, `usize` |
//! | [`AmoBitwise`] | + fetch_and/or/xor, and/or/xor | `i32`, `i64`, `u32`, `u64` |
//!
//! The C types map onto these: `int`/`int32_t` = `i32`, `long`/`long long`/`int64_t` =
//! `i64`, `unsigned int`/`uint32_t` = `u32`, `unsigned long`/`unsigned long long`/
//! `uint64_t` = `u64`, `size_t` = `usize`, `ptrdiff_t` = `isize`.
//!
//! Atomicity holds among OpenSHMEM atomics (and point-to-point waits) on the same word
//! with the same type. Mixing atomics with puts or gets on the same word is undefined by
//! the specification, so atomic words get no RMA.

use rshmem_core::AmoOp;

use crate::ctx::{routine, Ctx, CtxMode};
use crate::error::Result;
use crate::raw::{self, Region};
use crate::remote::Remote;
use crate::shmem::Shmem;

mod sealed {
    #[allow(unreachable_pub)]
    pub trait Sealed: rshmem_core::Word {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
    impl Sealed for isize {}
    impl Sealed for usize {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Types with the OpenSHMEM *extended* atomics: fetch, set and swap.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no OpenSHMEM atomics",
    label = "not an OpenSHMEM atomic type",
    note = "atomic fetch/set/swap take i32, i64, u32, u64, isize, usize, f32 or f64"
)]
pub trait AmoExtended: Remote + sealed::Sealed {}

/// Types with the OpenSHMEM *standard* atomics (compare-swap, increment, add) and
/// point-to-point waits: the integer [`AmoExtended`] types.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no OpenSHMEM standard atomics (compare_swap, inc, add) or point-to-point waits",
    label = "not an OpenSHMEM standard AMO type",
    note = "standard atomics and waits take i32, i64, u32, u64, isize or usize (not floats)"
)]
pub trait AmoStandard: AmoExtended {}

/// Types with the OpenSHMEM *bitwise* atomics (and, or, xor).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no OpenSHMEM bitwise atomics (and, or, xor)",
    label = "not an OpenSHMEM bitwise AMO type",
    note = "bitwise atomics take i32, i64, u32 or u64"
)]
pub trait AmoBitwise: AmoStandard {}

macro_rules! classes {
    ($($t:ty: $($tr:ident),*;)*) => {$($(impl $tr for $t {})*)*};
}
classes! {
    i32: AmoExtended, AmoStandard, AmoBitwise;
    i64: AmoExtended, AmoStandard, AmoBitwise;
    u32: AmoExtended, AmoStandard, AmoBitwise;
    u64: AmoExtended, AmoStandard, AmoBitwise;
    isize: AmoExtended, AmoStandard;
    usize: AmoExtended, AmoStandard;
    f32: AmoExtended;
    f64: AmoExtended;
}

/// One symmetric word operated on only atomically: a counter, a flag, a signal
/// (`SymAtomic<u64>`), or the `ivar` of [`Shmem::wait_until`].
///
/// Made by [`Shmem::alloc_atomic`] (collective). Other PEs update it with the `atomic_*`
/// methods, which take the PE whose copy to operate on; this PE reads its own copy with
/// [`load`](Self::load). Dropping it frees it, collectively (see [`SymVec`](crate::SymVec)).
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let counter = shmem.alloc_atomic(0u64)?;
/// counter.atomic_add(5, 0)?; // on PE 0
/// shmem.barrier_all();
/// if shmem.my_pe() == 0 {
///     assert_eq!(counter.load(), 5 * shmem.n_pes() as u64);
/// }
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct SymAtomic<'s, T: AmoExtended> {
    pub(crate) region: Region<T>,
    pub(crate) shmem: &'s Shmem,
}

/// An array of symmetric words operated on only atomically, e.g. one flag per PE for the
/// `_all`/`_any`/`_some` waits ([`Shmem::wait_until_all`] and friends).
///
/// Made by [`Shmem::alloc_atomic_vec`] (collective). It has the methods of
/// [`SymAtomic`] with an element index first.
///
/// ```
/// use rshmem::Cmp;
/// let shmem = rshmem::Shmem::init()?;
/// let n = shmem.n_pes();
/// let arrived = shmem.alloc_atomic_vec(n, 0i32)?;
/// for pe in 0..n {
///     arrived.atomic_set(shmem.my_pe(), 1, pe)?; // "I am here", on every PE
/// }
/// shmem.wait_until_all(&arrived, None, Cmp::Eq, 1)?;
/// # Ok::<(), rshmem::Error>(())
/// ```
#[derive(Debug)]
pub struct SymAtomicVec<'s, T: AmoExtended> {
    pub(crate) region: Region<T>,
    pub(crate) shmem: &'s Shmem,
}

impl<'s, T: AmoExtended> SymAtomic<'s, T> {
    /// Reads this PE's copy atomically.
    pub fn load(&self) -> T {
        self.region.atomic_load(0)
    }

    /// Sets this PE's copy atomically (an atomic set on this PE).
    ///
    /// # Panics
    /// When the thread level does not allow this thread to communicate (see
    /// [`Shmem`'s threads section](crate::Shmem#threads)).
    #[track_caller]
    pub fn store(&self, value: T) {
        let me = self.shmem.my_pe();
        if let Err(e) = self.shmem.default_ctx().atomic_set(self, value, me) {
            panic!("{e}");
        }
    }

    /// Frees the word now (collective); the same as dropping it, but reports errors.
    pub fn free(mut self) -> Result<()> {
        raw::free("shmem_free", self.region.take())
    }

    /// `shmem_atomic_fetch`: the value on `pe` (on the default context, as every
    /// `atomic_*` method here: see [`Ctx::atomic_fetch`]).
    pub fn atomic_fetch(&self, pe: usize) -> Result<T> {
        self.shmem.default_ctx().atomic_fetch(self, pe)
    }

    /// `shmem_atomic_set`: sets the value on `pe`.
    pub fn atomic_set(&self, value: T, pe: usize) -> Result<()> {
        self.shmem.default_ctx().atomic_set(self, value, pe)
    }

    /// `shmem_atomic_swap`: sets the value on `pe`, returning the old one.
    pub fn atomic_swap(&self, value: T, pe: usize) -> Result<T> {
        self.shmem.default_ctx().atomic_swap(self, value, pe)
    }

    /// `shmem_atomic_compare_swap`: sets the value on `pe` to `value` if it equals
    /// `cond`; returns the old value either way.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let owner = shmem.alloc_atomic(-1i64)?;
    /// let me = shmem.my_pe() as i64;
    /// let old = owner.atomic_compare_swap(-1, me, 0)?;
    /// let won = old == -1; // exactly one PE wins
    /// # assert!(shmem.n_pes() > 1 || won);
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn atomic_compare_swap(&self, cond: T, value: T, pe: usize) -> Result<T>
    where
        T: AmoStandard,
    {
        self.shmem
            .default_ctx()
            .atomic_compare_swap(self, cond, value, pe)
    }

    /// `shmem_atomic_fetch_inc`: adds one on `pe`, returning the old value.
    pub fn atomic_fetch_inc(&self, pe: usize) -> Result<T>
    where
        T: AmoStandard,
    {
        self.shmem.default_ctx().atomic_fetch_inc(self, pe)
    }

    /// `shmem_atomic_inc`: adds one on `pe`.
    pub fn atomic_inc(&self, pe: usize) -> Result<()>
    where
        T: AmoStandard,
    {
        self.shmem.default_ctx().atomic_inc(self, pe)
    }

    /// `shmem_atomic_fetch_add`: adds `value` on `pe` (wrapping), returning the old value.
    ///
    /// ```
    /// let shmem = rshmem::Shmem::init()?;
    /// let next = shmem.alloc_atomic(0usize)?;
    /// let ticket = next.atomic_fetch_add(1, 0)?; // unique across PEs
    /// assert!(ticket < shmem.n_pes());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn atomic_fetch_add(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoStandard,
    {
        self.shmem.default_ctx().atomic_fetch_add(self, value, pe)
    }

    /// `shmem_atomic_add`: adds `value` on `pe` (wrapping).
    pub fn atomic_add(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoStandard,
    {
        self.shmem.default_ctx().atomic_add(self, value, pe)
    }

    /// `shmem_atomic_fetch_and`: bitwise and on `pe`, returning the old value.
    pub fn atomic_fetch_and(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoBitwise,
    {
        self.shmem.default_ctx().atomic_fetch_and(self, value, pe)
    }

    /// `shmem_atomic_and`: bitwise and on `pe`.
    pub fn atomic_and(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoBitwise,
    {
        self.shmem.default_ctx().atomic_and(self, value, pe)
    }

    /// `shmem_atomic_fetch_or`: bitwise or on `pe`, returning the old value.
    pub fn atomic_fetch_or(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoBitwise,
    {
        self.shmem.default_ctx().atomic_fetch_or(self, value, pe)
    }

    /// `shmem_atomic_or`: bitwise or on `pe`.
    pub fn atomic_or(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoBitwise,
    {
        self.shmem.default_ctx().atomic_or(self, value, pe)
    }

    /// `shmem_atomic_fetch_xor`: bitwise xor on `pe`, returning the old value.
    pub fn atomic_fetch_xor(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoBitwise,
    {
        self.shmem.default_ctx().atomic_fetch_xor(self, value, pe)
    }

    /// `shmem_atomic_xor`: bitwise xor on `pe`.
    pub fn atomic_xor(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoBitwise,
    {
        self.shmem.default_ctx().atomic_xor(self, value, pe)
    }
}

macro_rules! vec_amos {
    () => {};
    ($(#[$b:ident])? fn $name:ident($($arg:ident),*) -> T = $routine:literal; $($rest:tt)*) => {
        #[doc = concat!("`", $routine, "` on word `i`: see [`SymAtomic::", stringify!($name), "`].")]
        pub fn $name(&self, i: usize, $($arg: T,)* pe: usize) -> Result<T>
        $(where T: $b)?
        {
            self.shmem.default_ctx().$name(self.at(i), $($arg,)* pe)
        }
        vec_amos!($($rest)*);
    };
    ($(#[$b:ident])? fn $name:ident($($arg:ident),*) = $routine:literal; $($rest:tt)*) => {
        #[doc = concat!("`", $routine, "` on word `i`: see [`SymAtomic::", stringify!($name), "`].")]
        pub fn $name(&self, i: usize, $($arg: T,)* pe: usize) -> Result<()>
        $(where T: $b)?
        {
            self.shmem.default_ctx().$name(self.at(i), $($arg,)* pe)
        }
        vec_amos!($($rest)*);
    };
}

impl<'s, T: AmoExtended> SymAtomicVec<'s, T> {
    /// Word `i`, as the target of an atomic operation on any context (e.g.
    /// [`Ctx::atomic_add`]). An `i` out of bounds makes the operation return
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds).
    ///
    /// ```
    /// use rshmem::Private;
    /// let shmem = rshmem::Shmem::init()?;
    /// let words = shmem.alloc_atomic_vec(4, 0u32)?;
    /// let ctx = shmem.create_ctx::<Private>(false)?;
    /// ctx.atomic_add(words.at(2), 5, shmem.my_pe())?;
    /// assert_eq!(words.load(2), 5);
    /// assert!(ctx.atomic_add(words.at(4), 5, shmem.my_pe()).is_err());
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn at(&self, i: usize) -> AtomicElem<'_, T> {
        AtomicElem {
            region: &self.region,
            index: i,
        }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.region.len()
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.region.len() == 0
    }

    /// Reads word `i` of this PE's copy atomically.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[track_caller]
    pub fn load(&self, i: usize) -> T {
        self.region.atomic_load(i)
    }

    /// This PE's copy, read word by word.
    pub fn to_vec(&self) -> Vec<T> {
        (0..self.len()).map(|i| self.load(i)).collect()
    }

    /// Sets word `i` of this PE's copy atomically.
    ///
    /// # Panics
    /// If `i >= len()`.
    #[track_caller]
    pub fn store(&self, i: usize, value: T) {
        let me = self.shmem.my_pe();
        if let Err(e) = self.shmem.default_ctx().atomic_set(self.at(i), value, me) {
            panic!("{e}");
        }
    }

    /// Frees the words now (collective); the same as dropping them, but reports errors.
    pub fn free(mut self) -> Result<()> {
        raw::free("shmem_free", self.region.take())
    }

    vec_amos! {
        fn atomic_fetch() -> T = "shmem_atomic_fetch";
        fn atomic_set(value) = "shmem_atomic_set";
        fn atomic_swap(value) -> T = "shmem_atomic_swap";
        #[AmoStandard] fn atomic_compare_swap(cond, value) -> T = "shmem_atomic_compare_swap";
        #[AmoStandard] fn atomic_fetch_inc() -> T = "shmem_atomic_fetch_inc";
        #[AmoStandard] fn atomic_inc() = "shmem_atomic_inc";
        #[AmoStandard] fn atomic_fetch_add(value) -> T = "shmem_atomic_fetch_add";
        #[AmoStandard] fn atomic_add(value) = "shmem_atomic_add";
        #[AmoBitwise] fn atomic_fetch_and(value) -> T = "shmem_atomic_fetch_and";
        #[AmoBitwise] fn atomic_and(value) = "shmem_atomic_and";
        #[AmoBitwise] fn atomic_fetch_or(value) -> T = "shmem_atomic_fetch_or";
        #[AmoBitwise] fn atomic_or(value) = "shmem_atomic_or";
        #[AmoBitwise] fn atomic_fetch_xor(value) -> T = "shmem_atomic_fetch_xor";
        #[AmoBitwise] fn atomic_xor(value) = "shmem_atomic_xor";
    }
}

impl<T: AmoExtended> Drop for SymAtomic<'_, T> {
    fn drop(&mut self) {
        raw::drop_region(self.region.take());
    }
}

impl<T: AmoExtended> Drop for SymAtomicVec<'_, T> {
    fn drop(&mut self) {
        raw::drop_region(self.region.take());
    }
}

/// One symmetric word as the target of an atomic operation: a [`SymAtomic`] (`&word`
/// converts) or word `i` of a [`SymAtomicVec`] ([`SymAtomicVec::at`]).
#[derive(Debug, Clone, Copy)]
pub struct AtomicElem<'a, T: AmoExtended> {
    region: &'a Region<T>,
    index: usize,
}

impl<'a, T: AmoExtended> From<&'a SymAtomic<'_, T>> for AtomicElem<'a, T> {
    fn from(word: &'a SymAtomic<'_, T>) -> Self {
        AtomicElem {
            region: &word.region,
            index: 0,
        }
    }
}

impl<'a, T: AmoExtended> AtomicElem<'a, T> {
    /// The word's block and index (bounds-checked by the operation).
    pub(crate) fn parts(self) -> (&'a Region<T>, usize) {
        (self.region, self.index)
    }
}

macro_rules! ctx_amos {
    () => {};
    ($(#[doc = $doc:literal])* [$b:ident] fn $name:ident($($arg:ident),*) -> T = $routine:literal, $op:expr; $($rest:tt)*) => {
        $(#[doc = $doc])*
        pub fn $name<'a, T: $b>(&self, dst: impl Into<AtomicElem<'a, T>>, $($arg: T,)* pe: usize) -> Result<T> {
            self.amo(routine!(self.state, $routine), dst.into(), $op, pe)
        }
        ctx_amos!($($rest)*);
    };
    ($(#[doc = $doc:literal])* [$b:ident] fn $name:ident($($arg:ident),*) = $routine:literal, $op:expr; $($rest:tt)*) => {
        $(#[doc = $doc])*
        pub fn $name<'a, T: $b>(&self, dst: impl Into<AtomicElem<'a, T>>, $($arg: T,)* pe: usize) -> Result<()> {
            self.amo(routine!(self.state, $routine), dst.into(), $op, pe).map(drop)
        }
        ctx_amos!($($rest)*);
    };
}

/// Atomic memory operations (AMOs) on the word `dst` of PE `pe` (a rank in the
/// context's team): `&word` for a [`SymAtomic`], `vec.at(i)` for a [`SymAtomicVec`].
/// Which operations a type has follows its class ([`AmoExtended`], [`AmoStandard`],
/// [`AmoBitwise`]). Every call checks `pe` and the word's index first. The `atomic_*`
/// methods of [`SymAtomic`] and [`SymAtomicVec`] are these on the default context.
///
/// ```
/// use rshmem::Serialized;
/// let shmem = rshmem::Shmem::init()?;
/// let n = shmem.n_pes();
/// let counter = shmem.alloc_atomic(0u64)?;
/// let ctx = shmem.create_ctx::<Serialized>(false)?;
/// let ticket = ctx.atomic_fetch_add(&counter, 1, 0)?; // unique across PEs
/// assert!(ticket < n as u64);
/// ctx.atomic_or(&counter, 1 << 32, 0)?;
/// ctx.quiet();
/// shmem.barrier_all();
/// assert_eq!(ctx.atomic_fetch(&counter, 0)?, 1 << 32 | n as u64);
/// # Ok::<(), rshmem::Error>(())
/// ```
///
/// Floats have only the extended operations:
///
/// ```compile_fail,E0277
/// let shmem = rshmem::Shmem::init()?;
/// let x = shmem.alloc_atomic(1.0f64)?;
/// shmem.default_ctx().atomic_add(&x, 1.0, 0)?; // error: `f64` has no standard atomics
/// # Ok::<(), rshmem::Error>(())
/// ```
impl<M: CtxMode> Ctx<'_, M> {
    fn amo<T: AmoExtended>(
        &self,
        routine: &'static str,
        dst: AtomicElem<'_, T>,
        op: AmoOp<T>,
        pe: usize,
    ) -> Result<T> {
        self.state.check(routine, pe)?;
        let (region, i) = dst.parts();
        raw::amo(self.state.raw(), routine, region, i, op, pe)
    }

    ctx_amos! {
        /// `shmem_ctx_atomic_fetch`: the value of `dst` on `pe`.
        [AmoExtended] fn atomic_fetch() -> T = "atomic_fetch", AmoOp::Fetch;
        /// `shmem_ctx_atomic_set`: sets `dst` on `pe` to `value`.
        [AmoExtended] fn atomic_set(value) = "atomic_set", AmoOp::Set(value);
        /// `shmem_ctx_atomic_swap`: sets `dst` on `pe` to `value`, returning the old value.
        [AmoExtended] fn atomic_swap(value) -> T = "atomic_swap", AmoOp::Swap(value);
        /// `shmem_ctx_atomic_compare_swap`: sets `dst` on `pe` to `value` if it equals
        /// `cond`; returns the old value either way.
        [AmoStandard] fn atomic_compare_swap(cond, value) -> T = "atomic_compare_swap", AmoOp::CompareSwap { cond, value };
        /// `shmem_ctx_atomic_fetch_inc`: adds one to `dst` on `pe`, returning the old value.
        [AmoStandard] fn atomic_fetch_inc() -> T = "atomic_fetch_inc", AmoOp::Add(T::ONE);
        /// `shmem_ctx_atomic_inc`: adds one to `dst` on `pe`.
        [AmoStandard] fn atomic_inc() = "atomic_inc", AmoOp::Add(T::ONE);
        /// `shmem_ctx_atomic_fetch_add`: adds `value` to `dst` on `pe` (wrapping),
        /// returning the old value.
        [AmoStandard] fn atomic_fetch_add(value) -> T = "atomic_fetch_add", AmoOp::Add(value);
        /// `shmem_ctx_atomic_add`: adds `value` to `dst` on `pe` (wrapping).
        [AmoStandard] fn atomic_add(value) = "atomic_add", AmoOp::Add(value);
        /// `shmem_ctx_atomic_fetch_and`: bitwise and on `dst` on `pe`, returning the old
        /// value.
        [AmoBitwise] fn atomic_fetch_and(value) -> T = "atomic_fetch_and", AmoOp::And(value);
        /// `shmem_ctx_atomic_and`: bitwise and on `dst` on `pe`.
        [AmoBitwise] fn atomic_and(value) = "atomic_and", AmoOp::And(value);
        /// `shmem_ctx_atomic_fetch_or`: bitwise or on `dst` on `pe`, returning the old
        /// value.
        [AmoBitwise] fn atomic_fetch_or(value) -> T = "atomic_fetch_or", AmoOp::Or(value);
        /// `shmem_ctx_atomic_or`: bitwise or on `dst` on `pe`.
        [AmoBitwise] fn atomic_or(value) = "atomic_or", AmoOp::Or(value);
        /// `shmem_ctx_atomic_fetch_xor`: bitwise xor on `dst` on `pe`, returning the old
        /// value.
        [AmoBitwise] fn atomic_fetch_xor(value) -> T = "atomic_fetch_xor", AmoOp::Xor(value);
        /// `shmem_ctx_atomic_xor`: bitwise xor on `dst` on `pe`.
        [AmoBitwise] fn atomic_xor(value) = "atomic_xor", AmoOp::Xor(value);
    }
}
