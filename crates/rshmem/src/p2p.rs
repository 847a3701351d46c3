//! Point-to-point synchronization: waiting on local symmetric words that other PEs
//! update with atomics or signals.

use rshmem_core::Cmp;

use crate::atomic::{AmoStandard, SymAtomic, SymAtomicVec};
use crate::error::{Error, Result};
use crate::raw::{self, SetOp, SetResult, Values};
use crate::shmem::{ok, Shmem};

/// The C status array for an include mask (`true` = take part; C: 0 = take part).
fn status(routine: &'static str, include: Option<&[bool]>, n: usize) -> Result<Option<Vec<i32>>> {
    let Some(m) = include else { return Ok(None) };
    if m.len() != n {
        return Err(Error::LengthMismatch {
            routine,
            arg: "include",
            expected: n,
            got: m.len(),
        });
    }
    Ok(Some(m.iter().map(|&inc| i32::from(!inc)).collect()))
}

fn set<T: AmoStandard>(
    routine: &'static str,
    ivars: &SymAtomicVec<'_, T>,
    include: Option<&[bool]>,
    cmp: Cmp,
    values: Values<'_, T>,
    op: SetOp,
) -> Result<SetResult> {
    let st = status(routine, include, ivars.len())?;
    raw::wait_set(routine, &ivars.region, st.as_deref(), cmp, values, op)
}

fn all(r: SetResult) -> bool {
    matches!(r, SetResult::All(true))
}

fn any(r: SetResult) -> Option<usize> {
    match r {
        SetResult::Any(i) => i,
        _ => None,
    }
}

fn some(r: SetResult) -> Vec<usize> {
    match r {
        SetResult::Some(v) => v,
        _ => Vec::new(),
    }
}

/// Point-to-point synchronization on this PE's copy of symmetric atomic words.
///
/// The `_all`, `_any` and `_some` forms take an optional *include mask*: `None` means
/// every word takes part; `Some(mask)` (of the same length as `ivars`) means word `i`
/// takes part iff `mask[i]`. The `_vector` forms compare word `i` with `values[i]`.
/// Mismatched lengths are [`Error::LengthMismatch`].
impl Shmem {
    /// `shmem_wait_until`: waits until `ivar cmp value` holds on this PE.
    ///
    /// # Errors
    /// [`Error::PeFailed`] when a PE that could still change the word failed, and the
    /// runtime's error ([`Error::Core`]) when no PE can change it any more (every other
    /// PE finalized): the wait could never end.
    ///
    /// ```
    /// use rshmem::Cmp;
    /// let shmem = rshmem::Shmem::init()?;
    /// let (me, n) = (shmem.my_pe(), shmem.n_pes());
    /// let flag = shmem.alloc_atomic(0i32)?;
    /// flag.atomic_set(1, (me + 1) % n)?; // wake the right neighbour
    /// shmem.wait_until(&flag, Cmp::Eq, 1)?; // woken by the left one
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn wait_until<T: AmoStandard>(
        &self,
        ivar: &SymAtomic<'_, T>,
        cmp: Cmp,
        value: T,
    ) -> Result<()> {
        raw::wait_one("shmem_wait_until", &ivar.region, 0, cmp, value, true).map(drop)
    }

    /// `shmem_test`: whether `ivar cmp value` holds on this PE now.
    pub fn test<T: AmoStandard>(&self, ivar: &SymAtomic<'_, T>, cmp: Cmp, value: T) -> bool {
        ok(raw::wait_one(
            "shmem_test",
            &ivar.region,
            0,
            cmp,
            value,
            false,
        ))
    }

    /// `shmem_wait_until_all`: waits until every included word satisfies
    /// `word cmp value` (returns at once when none is included).
    pub fn wait_until_all<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        value: T,
    ) -> Result<()> {
        set(
            "shmem_wait_until_all",
            ivars,
            include,
            cmp,
            Values::One(value),
            SetOp::WaitAll,
        )
        .map(drop)
    }

    /// `shmem_wait_until_any`: waits until some included word satisfies
    /// `word cmp value` and returns its index; `None` when no word is included.
    ///
    /// ```
    /// use rshmem::Cmp;
    /// let shmem = rshmem::Shmem::init()?;
    /// let n = shmem.n_pes();
    /// let done = shmem.alloc_atomic_vec(n, 0u64)?;
    /// done.atomic_set(shmem.my_pe(), 1, 0)?; // report to PE 0
    /// if shmem.my_pe() == 0 {
    ///     let first = shmem.wait_until_any(&done, None, Cmp::Eq, 1)?;
    ///     assert!(first.is_some_and(|i| i < n));
    ///     let none = vec![false; n];
    ///     assert_eq!(shmem.wait_until_any(&done, Some(&none), Cmp::Eq, 1)?, None);
    /// }
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn wait_until_any<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        value: T,
    ) -> Result<Option<usize>> {
        set(
            "shmem_wait_until_any",
            ivars,
            include,
            cmp,
            Values::One(value),
            SetOp::WaitAny,
        )
        .map(any)
    }

    /// `shmem_wait_until_some`: waits until at least one included word satisfies
    /// `word cmp value`; returns the indices of all that do (empty when no word is
    /// included).
    pub fn wait_until_some<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        value: T,
    ) -> Result<Vec<usize>> {
        set(
            "shmem_wait_until_some",
            ivars,
            include,
            cmp,
            Values::One(value),
            SetOp::WaitSome,
        )
        .map(some)
    }

    /// `shmem_wait_until_all_vector`: [`wait_until_all`](Self::wait_until_all)
    /// comparing word `i` with `values[i]`.
    pub fn wait_until_all_vector<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<()> {
        set(
            "shmem_wait_until_all_vector",
            ivars,
            include,
            cmp,
            Values::Each(values),
            SetOp::WaitAll,
        )
        .map(drop)
    }

    /// `shmem_wait_until_any_vector`: [`wait_until_any`](Self::wait_until_any)
    /// comparing word `i` with `values[i]`.
    pub fn wait_until_any_vector<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<Option<usize>> {
        set(
            "shmem_wait_until_any_vector",
            ivars,
            include,
            cmp,
            Values::Each(values),
            SetOp::WaitAny,
        )
        .map(any)
    }

    /// `shmem_wait_until_some_vector`: [`wait_until_some`](Self::wait_until_some)
    /// comparing word `i` with `values[i]`.
    pub fn wait_until_some_vector<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<Vec<usize>> {
        set(
            "shmem_wait_until_some_vector",
            ivars,
            include,
            cmp,
            Values::Each(values),
            SetOp::WaitSome,
        )
        .map(some)
    }

    /// `shmem_test_all`: whether every included word satisfies `word cmp value` now
    /// (`true` when none is included).
    pub fn test_all<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        value: T,
    ) -> Result<bool> {
        set(
            "shmem_test_all",
            ivars,
            include,
            cmp,
            Values::One(value),
            SetOp::TestAll,
        )
        .map(all)
    }

    /// `shmem_test_any`: the index of an included word satisfying `word cmp value` now,
    /// if any.
    pub fn test_any<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        value: T,
    ) -> Result<Option<usize>> {
        set(
            "shmem_test_any",
            ivars,
            include,
            cmp,
            Values::One(value),
            SetOp::TestAny,
        )
        .map(any)
    }

    /// `shmem_test_some`: the indices of the included words satisfying
    /// `word cmp value` now.
    ///
    /// ```
    /// use rshmem::Cmp;
    /// let shmem = rshmem::Shmem::init()?;
    /// let w = shmem.alloc_atomic_vec(4, 0i64)?;
    /// w.store(1, 5);
    /// w.store(3, 5);
    /// let mut hits = shmem.test_some(&w, None, Cmp::Gt, 0)?;
    /// hits.sort();
    /// assert_eq!(hits, [1, 3]);
    /// assert_eq!(shmem.test_some(&w, Some(&[true, true, false, false]), Cmp::Gt, 0)?, [1]);
    /// assert!(shmem.test_some(&w, Some(&[true]), Cmp::Gt, 0).is_err()); // mask too short
    /// # Ok::<(), rshmem::Error>(())
    /// ```
    pub fn test_some<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        value: T,
    ) -> Result<Vec<usize>> {
        set(
            "shmem_test_some",
            ivars,
            include,
            cmp,
            Values::One(value),
            SetOp::TestSome,
        )
        .map(some)
    }

    /// `shmem_test_all_vector`: [`test_all`](Self::test_all) comparing word `i` with
    /// `values[i]`.
    pub fn test_all_vector<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<bool> {
        set(
            "shmem_test_all_vector",
            ivars,
            include,
            cmp,
            Values::Each(values),
            SetOp::TestAll,
        )
        .map(all)
    }

    /// `shmem_test_any_vector`: [`test_any`](Self::test_any) comparing word `i` with
    /// `values[i]`.
    pub fn test_any_vector<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<Option<usize>> {
        set(
            "shmem_test_any_vector",
            ivars,
            include,
            cmp,
            Values::Each(values),
            SetOp::TestAny,
        )
        .map(any)
    }

    /// `shmem_test_some_vector`: [`test_some`](Self::test_some) comparing word `i` with
    /// `values[i]`.
    pub fn test_some_vector<T: AmoStandard>(
        &self,
        ivars: &SymAtomicVec<'_, T>,
        include: Option<&[bool]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<Vec<usize>> {
        set(
            "shmem_test_some_vector",
            ivars,
            include,
            cmp,
            Values::Each(values),
            SetOp::TestSome,
        )
        .map(some)
    }
}
