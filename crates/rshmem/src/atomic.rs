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
    fn amo(&self, routine: &'static str, op: AmoOp<T>, pe: usize) -> Result<T> {
        self.shmem.check_pe(routine, pe)?;
        raw::amo(routine, &self.region, 0, op, pe)
    }

    /// Reads this PE's copy atomically.
    pub fn load(&self) -> T {
        self.region.atomic_load(0)
    }

    /// Sets this PE's copy atomically (an atomic set on this PE).
    pub fn store(&self, value: T) {
        let me = self.shmem.my_pe();
        if let Err(e) = self.amo("shmem_atomic_set", AmoOp::Set(value), me) {
            panic!("{e}");
        }
    }

    /// Frees the word now (collective); the same as dropping it, but reports errors.
    pub fn free(mut self) -> Result<()> {
        raw::free("shmem_free", self.region.take())
    }

    /// `shmem_atomic_fetch`: the value on `pe`.
    pub fn atomic_fetch(&self, pe: usize) -> Result<T> {
        self.amo("shmem_atomic_fetch", AmoOp::Fetch, pe)
    }

    /// `shmem_atomic_set`: sets the value on `pe`.
    pub fn atomic_set(&self, value: T, pe: usize) -> Result<()> {
        self.amo("shmem_atomic_set", AmoOp::Set(value), pe)
            .map(drop)
    }

    /// `shmem_atomic_swap`: sets the value on `pe`, returning the old one.
    pub fn atomic_swap(&self, value: T, pe: usize) -> Result<T> {
        self.amo("shmem_atomic_swap", AmoOp::Swap(value), pe)
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
        self.amo(
            "shmem_atomic_compare_swap",
            AmoOp::CompareSwap { cond, value },
            pe,
        )
    }

    /// `shmem_atomic_fetch_inc`: adds one on `pe`, returning the old value.
    pub fn atomic_fetch_inc(&self, pe: usize) -> Result<T>
    where
        T: AmoStandard,
    {
        self.amo("shmem_atomic_fetch_inc", AmoOp::Add(T::ONE), pe)
    }

    /// `shmem_atomic_inc`: adds one on `pe`.
    pub fn atomic_inc(&self, pe: usize) -> Result<()>
    where
        T: AmoStandard,
    {
        self.amo("shmem_atomic_inc", AmoOp::Add(T::ONE), pe)
            .map(drop)
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
        self.amo("shmem_atomic_fetch_add", AmoOp::Add(value), pe)
    }

    /// `shmem_atomic_add`: adds `value` on `pe` (wrapping).
    pub fn atomic_add(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoStandard,
    {
        self.amo("shmem_atomic_add", AmoOp::Add(value), pe)
            .map(drop)
    }

    /// `shmem_atomic_fetch_and`: bitwise and on `pe`, returning the old value.
    pub fn atomic_fetch_and(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoBitwise,
    {
        self.amo("shmem_atomic_fetch_and", AmoOp::And(value), pe)
    }

    /// `shmem_atomic_and`: bitwise and on `pe`.
    pub fn atomic_and(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoBitwise,
    {
        self.amo("shmem_atomic_and", AmoOp::And(value), pe)
            .map(drop)
    }

    /// `shmem_atomic_fetch_or`: bitwise or on `pe`, returning the old value.
    pub fn atomic_fetch_or(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoBitwise,
    {
        self.amo("shmem_atomic_fetch_or", AmoOp::Or(value), pe)
    }

    /// `shmem_atomic_or`: bitwise or on `pe`.
    pub fn atomic_or(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoBitwise,
    {
        self.amo("shmem_atomic_or", AmoOp::Or(value), pe).map(drop)
    }

    /// `shmem_atomic_fetch_xor`: bitwise xor on `pe`, returning the old value.
    pub fn atomic_fetch_xor(&self, value: T, pe: usize) -> Result<T>
    where
        T: AmoBitwise,
    {
        self.amo("shmem_atomic_fetch_xor", AmoOp::Xor(value), pe)
    }

    /// `shmem_atomic_xor`: bitwise xor on `pe`.
    pub fn atomic_xor(&self, value: T, pe: usize) -> Result<()>
    where
        T: AmoBitwise,
    {
        self.amo("shmem_atomic_xor", AmoOp::Xor(value), pe)
            .map(drop)
    }
}

macro_rules! vec_amos {
    () => {};
    ($(#[$b:ident])? fn $name:ident($($arg:ident),*) -> T = $routine:literal, $op:expr; $($rest:tt)*) => {
        #[doc = concat!("`", $routine, "` on word `i`: see [`SymAtomic::", stringify!($name), "`].")]
        pub fn $name(&self, i: usize, $($arg: T,)* pe: usize) -> Result<T>
        $(where T: $b)?
        {
            self.amo($routine, i, $op, pe)
        }
        vec_amos!($($rest)*);
    };
    ($(#[$b:ident])? fn $name:ident($($arg:ident),*) = $routine:literal, $op:expr; $($rest:tt)*) => {
        #[doc = concat!("`", $routine, "` on word `i`: see [`SymAtomic::", stringify!($name), "`].")]
        pub fn $name(&self, i: usize, $($arg: T,)* pe: usize) -> Result<()>
        $(where T: $b)?
        {
            self.amo($routine, i, $op, pe).map(drop)
        }
        vec_amos!($($rest)*);
    };
}

impl<'s, T: AmoExtended> SymAtomicVec<'s, T> {
    fn amo(&self, routine: &'static str, i: usize, op: AmoOp<T>, pe: usize) -> Result<T> {
        self.shmem.check_pe(routine, pe)?;
        raw::amo(routine, &self.region, i, op, pe)
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
        if let Err(e) = self.amo("shmem_atomic_set", i, AmoOp::Set(value), me) {
            panic!("{e}");
        }
    }

    /// Frees the words now (collective); the same as dropping them, but reports errors.
    pub fn free(mut self) -> Result<()> {
        raw::free("shmem_free", self.region.take())
    }

    vec_amos! {
        fn atomic_fetch() -> T = "shmem_atomic_fetch", AmoOp::Fetch;
        fn atomic_set(value) = "shmem_atomic_set", AmoOp::Set(value);
        fn atomic_swap(value) -> T = "shmem_atomic_swap", AmoOp::Swap(value);
        #[AmoStandard] fn atomic_compare_swap(cond, value) -> T = "shmem_atomic_compare_swap", AmoOp::CompareSwap { cond, value };
        #[AmoStandard] fn atomic_fetch_inc() -> T = "shmem_atomic_fetch_inc", AmoOp::Add(T::ONE);
        #[AmoStandard] fn atomic_inc() = "shmem_atomic_inc", AmoOp::Add(T::ONE);
        #[AmoStandard] fn atomic_fetch_add(value) -> T = "shmem_atomic_fetch_add", AmoOp::Add(value);
        #[AmoStandard] fn atomic_add(value) = "shmem_atomic_add", AmoOp::Add(value);
        #[AmoBitwise] fn atomic_fetch_and(value) -> T = "shmem_atomic_fetch_and", AmoOp::And(value);
        #[AmoBitwise] fn atomic_and(value) = "shmem_atomic_and", AmoOp::And(value);
        #[AmoBitwise] fn atomic_fetch_or(value) -> T = "shmem_atomic_fetch_or", AmoOp::Or(value);
        #[AmoBitwise] fn atomic_or(value) = "shmem_atomic_or", AmoOp::Or(value);
        #[AmoBitwise] fn atomic_fetch_xor(value) -> T = "shmem_atomic_fetch_xor", AmoOp::Xor(value);
        #[AmoBitwise] fn atomic_xor(value) = "shmem_atomic_xor", AmoOp::Xor(value);
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
