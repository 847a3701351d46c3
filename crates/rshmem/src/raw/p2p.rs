//! Point-to-point synchronization: waits and tests on one word or on a set of words.

use rshmem_core::{p2p, Cmp};

use super::{bounds, Region};
use crate::atomic::AmoExtended;
use crate::error::{Error, Result};

/// The value(s) words are compared against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Values<'a, T> {
    One(T),
    Each(&'a [T]),
}

/// What a set wait or test reports.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SetOp {
    WaitAll,
    WaitAny,
    WaitSome,
    TestAll,
    TestAny,
    TestSome,
}

/// Result of a set wait or test.
#[derive(Debug)]
pub(crate) enum SetResult {
    All(bool),
    Any(Option<usize>),
    Some(Vec<usize>),
}

/// Waits for or tests element `i` of `ivars` (`wait` = block until it holds).
pub(crate) fn wait_one<T: AmoExtended>(
    routine: &'static str,
    ivars: &Region<T>,
    i: usize,
    cmp: Cmp,
    value: T,
    wait: bool,
) -> Result<bool> {
    bounds(routine, "ivar", ivars.len, i, 1)?;
    let p = ivars.at(i).cast_const();
    // SAFETY: a symmetric, aligned word.
    unsafe {
        if wait {
            p2p::wait_until(routine, p, cmp, value)?;
            Ok(true)
        } else {
            Ok(p2p::test(routine, p, cmp, value)?)
        }
    }
}

/// The `_all`/`_any`/`_some` waits and tests over every element of `ivars`. `status`
/// is the C mask (0 = take part), `values` one value or one per element.
pub(crate) fn wait_set<T: AmoExtended>(
    routine: &'static str,
    ivars: &Region<T>,
    status: Option<&[i32]>,
    cmp: Cmp,
    values: Values<'_, T>,
    op: SetOp,
) -> Result<SetResult> {
    let n = ivars.len;
    let check = |arg, got: usize| {
        if got == n {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                routine,
                arg,
                expected: n,
                got,
            })
        }
    };
    if let Some(s) = status {
        check("status", s.len())?;
    }
    let vals = match values {
        Values::One(v) => p2p::Values::One(v),
        Values::Each(v) => {
            check("cmp_values", v.len())?;
            p2p::Values::Each(v.as_ptr())
        }
    };
    let st = status.map_or(std::ptr::null(), <[i32]>::as_ptr);
    let iv = ivars.as_ptr().cast_const();
    // SAFETY: `status`, the values and the index buffer hold `n` elements (checked or
    // sized above); `ivars` is a symmetric block of `n` aligned words.
    unsafe {
        Ok(match op {
            SetOp::WaitAll => {
                p2p::wait_until_all(routine, iv, n, st, cmp, vals)?;
                SetResult::All(true)
            }
            SetOp::TestAll => SetResult::All(p2p::test_all(routine, iv, n, st, cmp, vals)?),
            SetOp::WaitAny => SetResult::Any(p2p::wait_until_any(routine, iv, n, st, cmp, vals)?),
            SetOp::TestAny => SetResult::Any(p2p::test_any(routine, iv, n, st, cmp, vals)?),
            SetOp::WaitSome | SetOp::TestSome => {
                let mut idx = vec![0usize; n];
                let k = if matches!(op, SetOp::WaitSome) {
                    p2p::wait_until_some(routine, iv, n, idx.as_mut_ptr(), st, cmp, vals)?
                } else {
                    p2p::test_some(routine, iv, n, idx.as_mut_ptr(), st, cmp, vals)?
                };
                idx.truncate(k);
                SetResult::Some(idx)
            }
        })
    }
}
