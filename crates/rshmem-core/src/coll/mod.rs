//! Team collectives without pSync: broadcast, collect, fcollect, alltoall(s), reductions
//! and scans over a [`Team`].
//!
//! The algorithms here are the *single-copy* family: after a team sync each PE reads its
//! peers' source buffers and writes results straight into their destinations, in place
//! where it maps them (shared memory), by get and put through UCX where it does not. A broadcast costs one copy
//! per PE; a reduction is a reduce-scatter in which each PE folds one chunk of all sources
//! (one pass over memory in all) and stores it into every destination. Each collective
//! starts with a team sync (sources ready, earlier results consumed) and ends with one
//! (results complete); nothing else is needed between consecutive collectives.

use std::cell::RefCell;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Acquire;

pub mod algo;
mod allreduce;
mod broadcast;
mod collect;
pub mod ll;
pub(crate) mod msg;
mod net;
pub mod nonblocking;
mod reduce;
pub mod staged;
pub mod sync;
mod team_sync;
pub mod tolerant_sync;

pub use broadcast::{broadcast, broadcast_keep_root, broadcast_with};
pub use collect::{alltoall, alltoalls, collect, fcollect};
pub use reduce::{reduce, reduce_staged, reduce_with, sum_scan};

use crate::error::{At, Error, Result};
use crate::runtime::Runtime;
use crate::team::Team;
use crate::transport::SymAddr;
use crate::transport::{Dir, Xfer};

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Sum (wrapping for integers).
    Sum,
    /// Product (wrapping for integers).
    Prod,
}

impl ReduceOp {
    fn name(self) -> &'static str {
        match self {
            ReduceOp::And => "and",
            ReduceOp::Or => "or",
            ReduceOp::Xor => "xor",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
        }
    }
}

/// A complex number as C lays out `float _Complex` / `double _Complex`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub struct Complex<F> {
    /// Real part.
    pub re: F,
    /// Imaginary part.
    pub im: F,
}

/// An element type of reductions: folds a source slice into an accumulator.
pub trait Elem: Copy + Send + Sync + 'static {
    /// The type's name in `SHMEM_DEBUG` reports (`i64`, `complex f64`...); types of the
    /// faces' own (C `long double`) share the default.
    const TYPE: &'static str = "a type of the C face";
    /// `acc[i] = acc[i] op src[i]`; `Err` names why `op` does not apply to this type.
    fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str>;
}

#[inline(always)]
fn zip<T: Copy>(acc: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
    for (a, s) in acc.iter_mut().zip(src) {
        *a = f(*a, *s);
    }
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const TYPE: &'static str = stringify!($t);
            fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
                match op {
                    ReduceOp::And => zip(acc, src, |a, b| a & b),
                    ReduceOp::Or => zip(acc, src, |a, b| a | b),
                    ReduceOp::Xor => zip(acc, src, |a, b| a ^ b),
                    ReduceOp::Min => zip(acc, src, |a, b| a.min(b)),
                    ReduceOp::Max => zip(acc, src, |a, b| a.max(b)),
                    ReduceOp::Sum => zip(acc, src, |a, b| a.wrapping_add(b)),
                    ReduceOp::Prod => zip(acc, src, |a, b| a.wrapping_mul(b)),
                }
                Ok(())
            }
        }
    )*};
}
int_elem!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const TYPE: &'static str = stringify!($t);
            fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
                match op {
                    ReduceOp::Min => zip(acc, src, |a, b| if b < a { b } else { a }),
                    ReduceOp::Max => zip(acc, src, |a, b| if b > a { b } else { a }),
                    ReduceOp::Sum => zip(acc, src, |a, b| a + b),
                    ReduceOp::Prod => zip(acc, src, |a, b| a * b),
                    _ => return Err("bitwise reductions are for integer types only"),
                }
                Ok(())
            }
        }
        impl Elem for Complex<$t> {
            const TYPE: &'static str = concat!("complex ", stringify!($t));
            fn fold(op: ReduceOp, acc: &mut [Self], src: &[Self]) -> std::result::Result<(), &'static str> {
                match op {
                    ReduceOp::Sum => zip(acc, src, |a, b| Complex { re: a.re + b.re, im: a.im + b.im }),
                    ReduceOp::Prod => zip(acc, src, |a, b| Complex {
                        re: a.re * b.re - a.im * b.im,
                        im: a.re * b.im + a.im * b.re,
                    }),
                    _ => return Err("complex types take only sum and prod reductions"),
                }
                Ok(())
            }
        }
    )*};
}
float_elem!(f32, f64);

/// Bytes of a block of the single-copy reduction: the accumulator stays in L1/L2 while
/// every member's part of the block is folded into it.
const FOLD_BLOCK: usize = 32 << 10;

thread_local! {
    /// Reused accumulator for in-place reductions, so steady-state calls do not allocate.
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// Copies of peers' buffers that this process does not map (fetched through UCX).
    static VIEW: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's reusable accumulator, `len` elements long (steady-state calls
/// do not allocate).
fn with_acc<T: Elem, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    SCRATCH.with(|cell| {
        let mut buf = cell.borrow_mut();
        let words = (len * std::mem::size_of::<T>()).div_ceil(8);
        if buf.len() < words {
            buf.resize(words, 0);
        }
        // SAFETY: `buf` holds at least `len` elements' bytes, 8-byte aligned, and `T`
        // (integers, floats, complex) needs no more alignment and has no invalid bit
        // patterns.
        f(unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), len) })
    })
}

/// Folds elements `at..at + acc.len()` of every rank's buffer `s` into `acc`, in rank
/// order (every member gets the same bits); `own`, when given, stands for this PE's part.
///
/// # Safety
/// The range lies inside every rank's checked buffer and nobody writes it during the
/// call; `own` holds `acc.len()` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn fold_block<T: Elem>(
    rt: &Runtime,
    routine: &'static str,
    team: &Team,
    s: &Buf,
    at: usize,
    acc: &mut [T],
    op: ReduceOp,
    own: Option<*const T>,
) -> Result<()> {
    let (len, me) = (acc.len(), team.my_pe());
    for r in 0..team.n_pes() {
        let mut step = |part: &[T]| {
            if r == 0 {
                acc.copy_from_slice(part);
            } else {
                T::fold(op, acc, part).expect("operator checked by the caller");
            }
        };
        match own {
            // SAFETY: contract.
            Some(p) if r == me => step(unsafe { std::slice::from_raw_parts(p, len) }),
            // SAFETY: contract.
            _ => unsafe {
                let off = at * std::mem::size_of::<T>();
                rt.coll_view(routine, team, r, s, off, len, step)?
            },
        }
    }
    Ok(())
}

/// Checked view of one symmetric buffer of a collective.
struct Buf {
    addr: SymAddr,
}

impl Buf {
    /// The location `off` bytes into the buffer.
    fn at(&self, off: usize) -> SymAddr {
        SymAddr {
            seg: self.addr.seg,
            off: self.addr.off + off,
        }
    }
}

impl Runtime {
    fn coll_buf(
        &self,
        routine: &'static str,
        arg: &'static str,
        p: *const u8,
        len: usize,
    ) -> Result<Buf> {
        Ok(Buf {
            addr: self.sym(routine, arg, p as usize, len)?,
        })
    }

    /// Moves `len` bytes between local `local` and `buf + off` on team rank `r`: a load
    /// or store on the peer's mapping on the node, a get or put through UCX elsewhere.
    ///
    /// # Safety
    /// `local` is readable (put) or writable (get) for `len` bytes; the range lies inside
    /// the checked buffer.
    #[allow(clippy::too_many_arguments)]
    unsafe fn coll_xfer(
        &self,
        routine: &'static str,
        team: &Team,
        dir: Dir,
        r: usize,
        buf: &Buf,
        off: usize,
        local: *const u8,
        len: usize,
    ) -> Result<()> {
        let pe = team.members().pe(r);
        let ctx = crate::ctx::runtime_ctx();
        // SAFETY: forwarded contract.
        unsafe {
            self.fabric
                .xfer(Xfer {
                    ctx,
                    dir,
                    pe,
                    remote: buf.at(off),
                    local: local as *mut u8,
                    len,
                })
                .at(routine)
        }
    }

    /// Waits until the count `word(r)` of every other member `r` has reached `need`, and
    /// returns the lowest count seen: what a root that reuses its buffers (LL, staged
    /// broadcasts) may cache as every member's progress.
    fn members_past<'w>(
        &self,
        routine: &'static str,
        team: &Team,
        need: u64,
        word: impl Fn(usize) -> &'w AtomicU64,
    ) -> Result<u64> {
        let mut low = u64::MAX;
        for r in (0..team.n_pes()).filter(|&r| r != team.my_pe()) {
            let w = word(r);
            let pe = team.members().pe(r);
            self.wait_peer_in(routine, team, pe, || w.load(Acquire) >= need)?;
            low = low.min(w.load(Acquire));
        }
        Ok(low)
    }

    /// Runs `f` on the `len` elements at `buf + off` on team rank `r`: in place where
    /// mapped (single copy), else on a copy fetched through UCX.
    ///
    /// # Safety
    /// The range lies inside the checked buffer, which nobody writes during the call.
    #[allow(clippy::too_many_arguments)]
    unsafe fn coll_view<T: Elem, R>(
        &self,
        routine: &'static str,
        team: &Team,
        r: usize,
        buf: &Buf,
        off: usize,
        len: usize,
        f: impl FnOnce(&[T]) -> R,
    ) -> Result<R> {
        let pe = team.members().pe(r);
        let ctx = crate::ctx::runtime_ctx();
        VIEW.with(|cell| {
            let mut scratch = cell.borrow_mut();
            // SAFETY: forwarded contract.
            unsafe {
                self.fabric
                    .view(
                        ctx,
                        pe,
                        buf.at(off),
                        len * std::mem::size_of::<T>(),
                        &mut scratch,
                        |bytes| {
                            // SAFETY: `bytes` is a peer's element buffer or 8-byte aligned
                            // scratch; element types need no more alignment and have no
                            // invalid bit patterns.
                            f(std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), len))
                        },
                    )
                    .at(routine)
            }
        })
    }
}

fn disjoint_or_same(routine: &'static str, a: usize, b: usize, len: usize) -> Result<bool> {
    if a == b {
        return Ok(false);
    }
    if a + len <= b || b + len <= a {
        return Ok(true);
    }
    Err(Error::InvalidArgument {
        routine,
        arg: "dest",
        reason: "dest and source overlap partially (they must be identical or disjoint)",
    })
}

/// The collectives' name for an operator, for routine names built at run time.
pub fn op_name(op: ReduceOp) -> &'static str {
    op.name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds() {
        let mut a = [1i32, 5, -3];
        i32::fold(ReduceOp::Max, &mut a, &[2, 4, -1]).unwrap();
        assert_eq!(a, [2, 5, -1]);
        let mut f = [1.5f64, 2.0];
        f64::fold(ReduceOp::Prod, &mut f, &[2.0, 0.5]).unwrap();
        assert_eq!(f, [3.0, 1.0]);
        assert!(f32::fold(ReduceOp::Xor, &mut [], &[]).is_err());
        let mut c = [Complex {
            re: 1.0f32,
            im: 1.0,
        }];
        Complex::<f32>::fold(ReduceOp::Prod, &mut c, &[Complex { re: 0.0, im: 1.0 }]).unwrap();
        assert_eq!(c, [Complex { re: -1.0, im: 1.0 }]);
        let mut u = [0xf0u8];
        u8::fold(ReduceOp::Sum, &mut u, &[0x20]).unwrap();
        assert_eq!(u, [0x10]);
    }
}
