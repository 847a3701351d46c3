//! Point-to-point synchronization: `wait_until` and `test` with their `_all`, `_any`,
//! `_some` and `_vector` forms, on local symmetric words updated by other PEs.

use crate::ops::user_wait::UserWait;

use crate::ops::user_wait::user_wait_check;

use crate::error::Result;
use crate::profile::{self, Family};
use crate::runtime::rt;
use crate::word::{Cmp, Word};

/// The value(s) a set of words is compared against.
#[derive(Debug, Clone, Copy)]
pub enum Values<W> {
    /// One value for every word.
    One(W),
    /// Element `i` is compared with `values[i]` (the `_vector` forms).
    Each(*const W),
}

/// A validated set of local symmetric words with their mask and comparison.
struct Set<W: Word> {
    ivars: *const W,
    n: usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
}

impl<W: Word> Set<W> {
    /// # Safety
    /// `status` is null or readable for `n` ints; `Each` values are readable for `n`.
    unsafe fn new(
        routine: &'static str,
        ivars: *const W,
        n: usize,
        status: *const i32,
        cmp: Cmp,
        values: Values<W>,
    ) -> Result<Self> {
        if n > 0 {
            let rt = rt(routine)?;
            rt.aligned(routine, "ivars", ivars as usize, W::SIZE)?;
            rt.sym(routine, "ivars", ivars as usize, n.saturating_mul(W::SIZE))?;
        }
        Ok(Set {
            ivars,
            n,
            status,
            cmp,
            values,
        })
    }

    /// Whether element `i` takes part (status 0 or no status array).
    #[inline]
    fn included(&self, i: usize) -> bool {
        // SAFETY: `i < n` and `status` is null or readable for `n` (constructor contract).
        self.status.is_null() || unsafe { *self.status.add(i) } == 0
    }

    /// Whether element `i` satisfies the comparison now.
    #[inline]
    fn satisfied(&self, i: usize) -> bool {
        // SAFETY: `i < n`; the words were checked symmetric and aligned; vector values
        // are readable by the constructor contract.
        unsafe {
            let v = W::load(self.ivars.add(i));
            let rhs = match self.values {
                Values::One(x) => x,
                Values::Each(p) => *p.add(i),
            };
            self.cmp.holds(v, rhs)
        }
    }

    fn any_included(&self) -> bool {
        (0..self.n).any(|i| self.included(i))
    }

    /// One satisfied, included index, scanning from a rotating start so that every
    /// satisfied element is eventually reported.
    fn find_one(&self) -> Option<usize> {
        // Per thread, so waiting threads do not contend on one shared counter.
        thread_local! {
            static ROTOR: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        let start = ROTOR.with(|r| {
            let v = r.get();
            r.set(v.wrapping_add(1));
            v
        }) % self.n.max(1);
        (0..self.n)
            .map(|k| (start + k) % self.n)
            .find(|&i| self.included(i) && self.satisfied(i))
    }

    /// Writes every satisfied, included index to `out`; returns how many.
    ///
    /// # Safety
    /// `out` is writable for `n` indices.
    unsafe fn collect(&self, out: *mut usize) -> usize {
        let mut k = 0;
        for i in 0..self.n {
            if self.included(i) && self.satisfied(i) {
                // SAFETY: at most `n` writes, by the contract.
                unsafe { out.add(k).write(i) };
                k += 1;
            }
        }
        k
    }
}

/// `shmem_wait_until`: waits until `*ivar cmp value`.
///
/// # Safety
/// `ivar` is a raw address (checked here).
#[inline]
pub unsafe fn wait_until<W: Word>(
    routine: &'static str,
    ivar: *const W,
    cmp: Cmp,
    value: W,
) -> Result<()> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded; `Set::new` checks the word.
    let s = unsafe { Set::new(routine, ivar, 1, std::ptr::null(), cmp, Values::One(value))? };
    let mut w = UserWait::new();
    while !s.satisfied(0) {
        user_wait_check(routine, &mut w, || s.satisfied(0))?;
        w.snooze();
    }
    Ok(())
}

/// A wait inside a collective built on point-to-point words (the C face's active-set
/// collectives): waits until `*ivar cmp value`, where PE `from` is the one that raises
/// the word; fails naming `routine` and `from` if `from` finalizes without satisfying it.
///
/// # Safety
/// `ivar` is a raw address (checked here).
pub unsafe fn wait_until_from<W: Word>(
    routine: &'static str,
    ivar: *const W,
    cmp: Cmp,
    value: W,
    from: usize,
) -> Result<()> {
    // SAFETY: forwarded; `Set::new` checks the word.
    let s = unsafe { Set::new(routine, ivar, 1, std::ptr::null(), cmp, Values::One(value))? };
    let rt = rt(routine)?;
    let from = rt.pe(routine, from as i64)?;
    rt.wait_peer(routine, from, || s.satisfied(0))
}

/// `shmem_test`: whether `*ivar cmp value` holds now.
///
/// # Safety
/// `ivar` is a raw address (checked here).
#[inline]
pub unsafe fn test<W: Word>(
    routine: &'static str,
    ivar: *const W,
    cmp: Cmp,
    value: W,
) -> Result<bool> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded; `Set::new` checks the word.
    let s = unsafe { Set::new(routine, ivar, 1, std::ptr::null(), cmp, Values::One(value))? };
    Ok(s.satisfied(0))
}

/// `shmem_wait_until_all[_vector]`: waits until every included word satisfies the
/// comparison (returns at once for an empty set).
///
/// # Safety
/// `status` is null or readable for `n` ints; vector values are readable for `n`.
pub unsafe fn wait_until_all<W: Word>(
    routine: &'static str,
    ivars: *const W,
    n: usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
) -> Result<()> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    let s = unsafe { Set::new(routine, ivars, n, status, cmp, values)? };
    for i in (0..n).filter(|&i| s.included(i)) {
        let mut w = UserWait::new();
        while !s.satisfied(i) {
            user_wait_check(routine, &mut w, || s.satisfied(i))?;
            w.snooze();
        }
    }
    Ok(())
}

/// `shmem_wait_until_any[_vector]`: waits until some included word satisfies the
/// comparison and returns its index; `None` (C: `SIZE_MAX`) for an empty set.
///
/// # Safety
/// As [`wait_until_all`].
pub unsafe fn wait_until_any<W: Word>(
    routine: &'static str,
    ivars: *const W,
    n: usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
) -> Result<Option<usize>> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    let s = unsafe { Set::new(routine, ivars, n, status, cmp, values)? };
    if !s.any_included() {
        return Ok(None);
    }
    let mut w = UserWait::new();
    loop {
        if let Some(i) = s.find_one() {
            return Ok(Some(i));
        }
        user_wait_check(routine, &mut w, || false)?;
        w.snooze();
    }
}

/// `shmem_wait_until_some[_vector]`: waits until at least one included word satisfies
/// the comparison, writes all satisfied indices to `indices`, returns their count
/// (0 for an empty set).
///
/// # Safety
/// As [`wait_until_all`], and `indices` is writable for `n` entries.
pub unsafe fn wait_until_some<W: Word>(
    routine: &'static str,
    ivars: *const W,
    n: usize,
    indices: *mut usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
) -> Result<usize> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    let s = unsafe { Set::new(routine, ivars, n, status, cmp, values)? };
    if !s.any_included() {
        return Ok(0);
    }
    let mut w = UserWait::new();
    loop {
        // SAFETY: forwarded contract on `indices`.
        let k = unsafe { s.collect(indices) };
        if k > 0 {
            return Ok(k);
        }
        user_wait_check(routine, &mut w, || false)?;
        w.snooze();
    }
}

/// `shmem_test_all[_vector]`: whether every included word satisfies the comparison
/// (true for an empty set).
///
/// # Safety
/// As [`wait_until_all`].
pub unsafe fn test_all<W: Word>(
    routine: &'static str,
    ivars: *const W,
    n: usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
) -> Result<bool> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    let s = unsafe { Set::new(routine, ivars, n, status, cmp, values)? };
    Ok((0..n).all(|i| !s.included(i) || s.satisfied(i)))
}

/// `shmem_test_any[_vector]`: a satisfied, included index, if any.
///
/// # Safety
/// As [`wait_until_all`].
pub unsafe fn test_any<W: Word>(
    routine: &'static str,
    ivars: *const W,
    n: usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
) -> Result<Option<usize>> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    let s = unsafe { Set::new(routine, ivars, n, status, cmp, values)? };
    Ok(s.find_one())
}

/// `shmem_test_some[_vector]`: writes the satisfied, included indices; returns how many.
///
/// # Safety
/// As [`wait_until_some`].
pub unsafe fn test_some<W: Word>(
    routine: &'static str,
    ivars: *const W,
    n: usize,
    indices: *mut usize,
    status: *const i32,
    cmp: Cmp,
    values: Values<W>,
) -> Result<usize> {
    let _p = profile::span(Family::Wait, 0);
    // SAFETY: forwarded contract.
    let s = unsafe { Set::new(routine, ivars, n, status, cmp, values)? };
    // SAFETY: forwarded contract on `indices`.
    Ok(unsafe { s.collect(indices) })
}
