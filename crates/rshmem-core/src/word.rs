//! Element types that atomic operations and point-to-point waits work on, and the atomic
//! primitives over raw pointers into symmetric memory.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::sync::atomic::{
    AtomicI16, AtomicI32, AtomicI64, AtomicIsize, AtomicU16, AtomicU32, AtomicU64, AtomicUsize,
};

/// One atomic operation on a word; every operation yields the word's previous value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AmoOp<W> {
    /// Read the value.
    Fetch,
    /// Store a value.
    Set(W),
    /// Store a value, returning the old one.
    Swap(W),
    /// Store `value` if the word equals `cond`.
    CompareSwap {
        /// Expected value.
        cond: W,
        /// New value.
        value: W,
    },
    /// Add (wrapping for integers).
    Add(W),
    /// Bitwise and.
    And(W),
    /// Bitwise or.
    Or(W),
    /// Bitwise xor.
    Xor(W),
}

mod sealed {
    pub trait Sealed {}
}

/// A type on which the runtime can operate atomically: fixed-size integers and, for
/// fetch/set/swap/compare-swap, `f32`/`f64` (through their bit patterns).
///
/// # Safety
/// Implemented only here, for types with a lock-free atomic twin of the same size.
pub unsafe trait Word:
    Copy + PartialOrd + Send + Sync + std::fmt::Debug + 'static + sealed::Sealed
{
    /// Size in bytes.
    const SIZE: usize = std::mem::size_of::<Self>();
    /// Zero.
    const ZERO: Self;
    /// One (for increments).
    const ONE: Self;

    /// Atomic load with acquire ordering.
    ///
    /// # Safety
    /// `p` is valid, aligned and only accessed atomically by others.
    unsafe fn load(p: *const Self) -> Self;

    /// Whether it is a floating-point type (network atomics add integers only).
    const FLOAT: bool = false;

    /// The value's bits, zero-extended to 64 (for network atomics of 4 and 8 bytes).
    fn to_bits64(self) -> u64;

    /// The value whose [`Word::to_bits64`] is `v` (higher bits ignored).
    fn from_bits64(v: u64) -> Self;

    /// Applies `op` atomically and returns the previous value (for `Set`, the new one).
    ///
    /// # Safety
    /// As for [`Word::load`], and `p` is writable.
    unsafe fn rmw(p: *mut Self, op: AmoOp<Self>) -> Self;
}

macro_rules! int_word {
    ($($t:ty => $a:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: `$a` is the lock-free atomic of the same size and alignment as `$t`.
        unsafe impl Word for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                // Zero-extended: a network atomic of SIZE bytes uses the low bytes only.
                self as u64 & (u64::MAX >> (64 - 8 * Self::SIZE))
            }
            #[inline(always)]
            fn from_bits64(v: u64) -> Self {
                v as Self
            }
            #[inline(always)]
            unsafe fn load(p: *const Self) -> Self {
                // SAFETY: the caller guarantees `p` is valid and aligned; `from_ptr`
                // needs exactly that, and the atomic only reads through it.
                unsafe { <$a>::from_ptr(p as *mut Self).load(Acquire) }
            }
            #[inline(always)]
            unsafe fn rmw(p: *mut Self, op: AmoOp<Self>) -> Self {
                // SAFETY: the caller guarantees `p` is valid, aligned and writable.
                let a = unsafe { <$a>::from_ptr(p) };
                match op {
                    AmoOp::Fetch => a.load(Acquire),
                    AmoOp::Set(v) => { a.store(v, Release); v }
                    AmoOp::Swap(v) => a.swap(v, AcqRel),
                    AmoOp::CompareSwap { cond, value } => {
                        match a.compare_exchange(cond, value, AcqRel, Acquire) { Ok(x) | Err(x) => x }
                    }
                    AmoOp::Add(v) => a.fetch_add(v, AcqRel),
                    AmoOp::And(v) => a.fetch_and(v, AcqRel),
                    AmoOp::Or(v) => a.fetch_or(v, AcqRel),
                    AmoOp::Xor(v) => a.fetch_xor(v, AcqRel),
                }
            }
        }
    )*};
}

int_word!(
    i16 => AtomicI16, u16 => AtomicU16, i32 => AtomicI32, u32 => AtomicU32,
    i64 => AtomicI64, u64 => AtomicU64, isize => AtomicIsize, usize => AtomicUsize,
);

macro_rules! float_word {
    ($($t:ty => $bits:ty, $a:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: `$a` has the size and alignment of `$t`; values move as bit patterns.
        unsafe impl Word for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const FLOAT: bool = true;
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline(always)]
            fn from_bits64(v: u64) -> Self {
                <$t>::from_bits(v as $bits)
            }
            #[inline(always)]
            unsafe fn load(p: *const Self) -> Self {
                // SAFETY: the caller guarantees `p` is valid and aligned.
                <$t>::from_bits(unsafe { <$a>::from_ptr(p as *mut $bits).load(Acquire) })
            }
            #[inline(always)]
            unsafe fn rmw(p: *mut Self, op: AmoOp<Self>) -> Self {
                // SAFETY: the caller guarantees `p` is valid, aligned and writable.
                let a = unsafe { <$a>::from_ptr(p as *mut $bits) };
                let cas_loop = |f: &dyn Fn($t) -> $t| {
                    let mut old = a.load(Acquire);
                    loop {
                        let new = f(<$t>::from_bits(old)).to_bits();
                        match a.compare_exchange_weak(old, new, AcqRel, Acquire) {
                            Ok(x) => return <$t>::from_bits(x),
                            Err(x) => old = x,
                        }
                    }
                };
                match op {
                    AmoOp::Fetch => <$t>::from_bits(a.load(Acquire)),
                    AmoOp::Set(v) => { a.store(v.to_bits(), Release); v }
                    AmoOp::Swap(v) => <$t>::from_bits(a.swap(v.to_bits(), AcqRel)),
                    AmoOp::CompareSwap { cond, value } => {
                        match a.compare_exchange(cond.to_bits(), value.to_bits(), AcqRel, Acquire) {
                            Ok(x) | Err(x) => <$t>::from_bits(x),
                        }
                    }
                    AmoOp::Add(v) => cas_loop(&|x| x + v),
                    AmoOp::And(v) => <$t>::from_bits(a.fetch_and(v.to_bits(), AcqRel)),
                    AmoOp::Or(v) => <$t>::from_bits(a.fetch_or(v.to_bits(), AcqRel)),
                    AmoOp::Xor(v) => <$t>::from_bits(a.fetch_xor(v.to_bits(), AcqRel)),
                }
            }
        }
    )*};
}

float_word!(f32 => u32, AtomicU32, f64 => u64, AtomicU64);

/// The comparison of a point-to-point wait (`SHMEM_CMP_*`; values as in the C header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum Cmp {
    /// `==`
    Eq = 1,
    /// `!=`
    Ne = 2,
    /// `>`
    Gt = 3,
    /// `>=`
    Ge = 4,
    /// `<`
    Lt = 5,
    /// `<=`
    Le = 6,
}

impl Cmp {
    /// Parses a C `SHMEM_CMP_*` value.
    pub fn from_c(v: i32) -> Option<Cmp> {
        Some(match v {
            1 => Cmp::Eq,
            2 => Cmp::Ne,
            3 => Cmp::Gt,
            4 => Cmp::Ge,
            5 => Cmp::Lt,
            6 => Cmp::Le,
            _ => return None,
        })
    }

    /// `lhs <cmp> rhs`.
    #[inline(always)]
    pub fn holds<W: PartialOrd>(self, lhs: W, rhs: W) -> bool {
        match self {
            Cmp::Eq => lhs == rhs,
            Cmp::Ne => lhs != rhs,
            Cmp::Gt => lhs > rhs,
            Cmp::Ge => lhs >= rhs,
            Cmp::Lt => lhs < rhs,
            Cmp::Le => lhs <= rhs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmw_returns_old_values() {
        let mut x: i32 = 5;
        let p = &mut x as *mut i32;
        // SAFETY: `p` points at a live local.
        unsafe {
            assert_eq!(i32::rmw(p, AmoOp::Add(-7)), 5);
            assert_eq!(i32::load(p), -2);
            assert_eq!(i32::rmw(p, AmoOp::CompareSwap { cond: -2, value: 9 }), -2);
            assert_eq!(i32::rmw(p, AmoOp::CompareSwap { cond: 0, value: 1 }), 9);
            assert_eq!(i32::rmw(p, AmoOp::Xor(1)), 9);
            assert_eq!(i32::load(p), 8);
        }
        let mut f: f64 = 1.5;
        let q = &mut f as *mut f64;
        // SAFETY: `q` points at a live local.
        unsafe {
            assert_eq!(f64::rmw(q, AmoOp::Swap(2.5)), 1.5);
            assert_eq!(f64::rmw(q, AmoOp::Add(1.0)), 2.5);
            assert_eq!(f64::load(q), 3.5);
        }
        assert!(Cmp::Ge.holds(3, 3) && !Cmp::Lt.holds(3, 3) && Cmp::Ne.holds(1.0, 2.0));
    }
}
