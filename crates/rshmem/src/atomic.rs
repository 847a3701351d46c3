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

use crate::ctx::{Ctx, CtxMode};
use crate::error::Result;
use crate::ops_table::amo_table;
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
///
/// An owner elected with [`atomic_compare_swap`](Self::atomic_compare_swap), and unique
/// tickets from [`atomic_fetch_add`](Self::atomic_fetch_add):
///
/// ```
/// let shmem = rshmem::Shmem::init()?;
/// let owner = shmem.alloc_atomic(-1i64)?;
/// let me = shmem.my_pe() as i64;
/// let old = owner.atomic_compare_swap(-1, me, 0)?;
/// let won = old == -1; // exactly one PE wins
/// # assert!(shmem.n_pes() > 1 || won);
/// let next = shmem.alloc_atomic(0usize)?;
/// let ticket = next.atomic_fetch_add(1, 0)?; // unique across PEs
/// assert!(ticket < shmem.n_pes());
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

/// The default-context methods of [`SymAtomic`], one per [`amo_table!`] row.
macro_rules! sym_amos {
    (
        fetch { $(
            [$fb:ident] $f:ident($($fa:ident),*) = $fop:expr;
                $fverb:literal, $fafter:literal, $fwhat:literal; $fnbi:ident, $fnbe:ident;
        )* }
        post { $([$pb:ident] $p:ident($($pa:ident),*) = $pop:expr; $pverb:literal, $pafter:literal;)* }
    ) => {
        $(
            #[doc = concat!(
                "`shmem_", stringify!($f), "`: ", $fverb, " the value on `pe`", $fafter,
                "; returns ", $fwhat, ". On the default context, as every `atomic_*` method",
                " here: see [`Ctx::", stringify!($f), "`](crate::Ctx::", stringify!($f), ")."
            )]
            pub fn $f(&self, $($fa: T,)* pe: usize) -> Result<T>
            where
                T: $fb,
            {
                self.shmem.default_ctx().$f(self, $($fa,)* pe)
            }
        )*
        $(
            #[doc = concat!(
                "`shmem_", stringify!($p), "`: ", $pverb, " the value on `pe`", $pafter,
                ". On the default context: see [`Ctx::", stringify!($p), "`](crate::Ctx::",
                stringify!($p), ")."
            )]
            pub fn $p(&self, $($pa: T,)* pe: usize) -> Result<()>
            where
                T: $pb,
            {
                self.shmem.default_ctx().$p(self, $($pa,)* pe)
            }
        )*
    };
}

/// The default-context methods of [`SymAtomicVec`] (word `i` first), one per
/// [`amo_table!`] row.
macro_rules! vec_amos {
    (
        fetch { $(
            [$fb:ident] $f:ident($($fa:ident),*) = $fop:expr;
                $fverb:literal, $fafter:literal, $fwhat:literal; $fnbi:ident, $fnbe:ident;
        )* }
        post { $([$pb:ident] $p:ident($($pa:ident),*) = $pop:expr; $pverb:literal, $pafter:literal;)* }
    ) => {
        $(
            #[doc = concat!(
                "`shmem_", stringify!($f), "`: ", $fverb, " word `i` on `pe`", $fafter,
                "; returns ", $fwhat, ". On the default context: see [`Ctx::", stringify!($f),
                "`](crate::Ctx::", stringify!($f), ")."
            )]
            pub fn $f(&self, i: usize, $($fa: T,)* pe: usize) -> Result<T>
            where
                T: $fb,
            {
                self.shmem.default_ctx().$f(self.at(i), $($fa,)* pe)
            }
        )*
        $(
            #[doc = concat!(
                "`shmem_", stringify!($p), "`: ", $pverb, " word `i` on `pe`", $pafter,
                ". On the default context: see [`Ctx::", stringify!($p), "`](crate::Ctx::",
                stringify!($p), ")."
            )]
            pub fn $p(&self, i: usize, $($pa: T,)* pe: usize) -> Result<()>
            where
                T: $pb,
            {
                self.shmem.default_ctx().$p(self.at(i), $($pa,)* pe)
            }
        )*
    };
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

    amo_table!(sym_amos);
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

    amo_table!(vec_amos);
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

/// The [`Ctx`] methods, one per [`amo_table!`] row.
macro_rules! ctx_amos {
    (
        fetch { $(
            [$fb:ident] $f:ident($($fa:ident),*) = $fop:expr;
                $fverb:literal, $fafter:literal, $fwhat:literal; $fnbi:ident, $fnbe:ident;
        )* }
        post { $([$pb:ident] $p:ident($($pa:ident),*) = $pop:expr; $pverb:literal, $pafter:literal;)* }
    ) => {
        $(
            #[doc = concat!(
                "`shmem_ctx_", stringify!($f), "`: ", $fverb, " `dst` on `pe`", $fafter,
                "; returns ", $fwhat, "."
            )]
            pub fn $f<'a, T: $fb>(
                &self,
                dst: impl Into<AtomicElem<'a, T>>,
                $($fa: T,)*
                pe: usize,
            ) -> Result<T> {
                let r = self.state.routine(
                    concat!("shmem_", stringify!($f)),
                    concat!("shmem_ctx_", stringify!($f)),
                );
                self.amo(r, dst.into(), $fop, pe)
            }
        )*
        $(
            #[doc = concat!(
                "`shmem_ctx_", stringify!($p), "`: ", $pverb, " `dst` on `pe`", $pafter, "."
            )]
            pub fn $p<'a, T: $pb>(
                &self,
                dst: impl Into<AtomicElem<'a, T>>,
                $($pa: T,)*
                pe: usize,
            ) -> Result<()> {
                let r = self.state.routine(
                    concat!("shmem_", stringify!($p)),
                    concat!("shmem_ctx_", stringify!($p)),
                );
                self.amo_post(r, dst.into(), $pop, pe)
            }
        )*
    };
}

/// Atomic memory operations (AMOs) on the word `dst` of PE `pe` (a rank in the
/// context's team): `&word` for a [`SymAtomic`], `vec.at(i)` for a [`SymAtomicVec`].
/// Which operations a type has follows its class ([`AmoExtended`], [`AmoStandard`],
/// [`AmoBitwise`]). Every call checks `pe` and the word's index first. The `atomic_*`
/// methods of [`SymAtomic`] and [`SymAtomicVec`] are these on the default context.
/// The non-fetching ones (`atomic_set`, `atomic_add`...) are writes, as in C: through
/// UCX they are posted, and complete at the context's next
/// [`quiet`](Ctx::quiet) (or a barrier); on shared memory they complete at once.
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

    fn amo_post<T: AmoExtended>(
        &self,
        routine: &'static str,
        dst: AtomicElem<'_, T>,
        op: AmoOp<T>,
        pe: usize,
    ) -> Result<()> {
        self.state.check(routine, pe)?;
        let (region, i) = dst.parts();
        raw::amo_post(self.state.raw(), routine, region, i, op, pe)
    }

    amo_table!(ctx_amos);
}
