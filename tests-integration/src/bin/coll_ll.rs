//! Small team reductions, broadcasts and fcollects back to back, the ground of the
//! algorithms that do not sync (LL, staged broadcasts): WORLD, the even ranks, a pair and
//! the reversed world in turn with no barrier between; every operator on several types, in
//! place and disjoint, at sizes around the LL limits (1 B to 1 KiB, odd word counts);
//! values change every call, so stale words of an earlier call would show; broadcasts from
//! rotating roots (more calls than the LL broadcast has buffers, and sizes around the
//! staging chunks up to beyond all of them, so chunks wrap and roots wait for members), the
//! root's dest kept or written; fcollects sharing the reductions' LL lanes; a team
//! destroyed and made again (its slot's words must not leak into the new team). Prints
//! `ok coll_ll pe=<me>`. Argument: iterations of the back-to-back loop (default 300).
#![allow(unsafe_code)]

use std::fmt::Debug;
use std::sync::Arc;

use rshmem_core::coll::{self, Complex, Elem, ReduceOp};
use rshmem_core::team::{self, Team, TeamConfig};
use rshmem_core::{memory, setup, ThreadLevel};

/// Largest count of elements of any reduction (1 KiB of u8 plus slack).
const CAP: usize = 1100;
/// Bytes of each buffer: the largest broadcast (more than a root's staging chunks hold).
const BYTES: usize = 80 << 10;
/// Broadcast sizes around the staging chunks (8 KiB, 8 of them).
const STAGED_SIZES: [usize; 7] = [4095, 8191, 8192, 8193, 20000, 32 << 10, 70001];

fn sym<T>(n: usize) -> *mut T {
    memory::malloc("shmem_malloc", n * std::mem::size_of::<T>()).unwrap() as *mut T
}

/// Two symmetric buffers of [`BYTES`] (at least CAP 16-byte elements).
struct Bufs {
    a: *mut u8,
    b: *mut u8,
}

const INT_OPS: [ReduceOp; 7] = [
    ReduceOp::And,
    ReduceOp::Or,
    ReduceOp::Xor,
    ReduceOp::Min,
    ReduceOp::Max,
    ReduceOp::Sum,
    ReduceOp::Prod,
];

/// Reduces `count` elements of `val(rank, i)` over `t`, disjoint then in place, and
/// checks both against the rank-order fold `f` of every member's values.
fn reduce<T: Elem + PartialEq + Debug>(
    t: &Team,
    bufs: &Bufs,
    count: usize,
    op: ReduceOp,
    val: impl Fn(usize, usize) -> T,
    f: impl Fn(T, T) -> T,
    what: &str,
) {
    let (me, n) = (t.my_pe(), t.n_pes());
    let (a, b) = (bufs.a.cast::<T>(), bufs.b.cast::<T>());
    // SAFETY: both buffers hold CAP 16-byte elements; counts stay below CAP.
    unsafe {
        for i in 0..count {
            *a.add(i) = val(me, i);
            *b.add(i) = val(n + 7, i);
        }
        coll::reduce("shmem_reduce", t, b, a, count, op).unwrap();
        coll::reduce("shmem_reduce", t, a, a, count, op).unwrap();
        for i in 0..count {
            let want = (1..n).fold(val(0, i), |acc, r| f(acc, val(r, i)));
            assert_eq!(*b.add(i), want, "{what} {op:?} x{count} disjoint elem {i}");
            assert_eq!(*a.add(i), want, "{what} {op:?} x{count} in place elem {i}");
        }
    }
}

/// The operator `op` on two values of integer type `$t`.
macro_rules! int_f {
    ($t:ty, $op:expr) => {
        match $op {
            ReduceOp::And => (|a, b| a & b) as fn($t, $t) -> $t,
            ReduceOp::Or => |a, b| a | b,
            ReduceOp::Xor => |a, b| a ^ b,
            ReduceOp::Min => |a: $t, b| a.min(b),
            ReduceOp::Max => |a: $t, b| a.max(b),
            ReduceOp::Sum => |a: $t, b| a.wrapping_add(b),
            ReduceOp::Prod => |a: $t, b| a.wrapping_mul(b),
        }
    };
}

/// One round of every reduction on `t`; `it` varies the values call to call.
fn reductions(t: &Team, bufs: &Bufs, it: usize, full: bool) {
    // i64: every operator, 1, 63, 64 (512 B, the LL limit) and 65 elements.
    let counts: &[usize] = if full {
        &[1, 2, 63, 64, 65, 128]
    } else {
        &[1, 64]
    };
    for &count in counts {
        for op in INT_OPS {
            let val =
                |r: usize, i: usize| ((r as i64 + 1) * 1000 + (i % 97) as i64 - 40) ^ it as i64;
            reduce::<i64>(t, bufs, count, op, val, int_f!(i64, op), "i64");
        }
    }
    // i32 with odd word counts, every operator.
    let counts: &[usize] = if full { &[1, 3, 127, 128, 129] } else { &[3] };
    for &count in counts {
        for op in INT_OPS {
            let val = |r: usize, i: usize| (r as i32 * 77 - i as i32 * 3 + it as i32) | 1;
            reduce::<i32>(t, bufs, count, op, val, int_f!(i32, op), "i32");
        }
    }
    // u8 and i16: byte counts that do not fill a 4-byte data word.
    let counts: &[usize] = if full {
        &[1, 2, 3, 5, 511, 512, 513, 1024]
    } else {
        &[3]
    };
    for &count in counts {
        for op in [ReduceOp::Max, ReduceOp::Sum, ReduceOp::Xor] {
            let val = |r: usize, i: usize| ((r * 37 + i + it) % 251) as u8;
            reduce::<u8>(t, bufs, count, op, val, int_f!(u8, op), "u8");
            let val = |r: usize, i: usize| (r as i16 - 2) * (i as i16 % 13 + 1) - it as i16;
            reduce::<i16>(t, bufs, count / 2 + 1, op, val, int_f!(i16, op), "i16");
        }
    }
    // Floats: values whose sums and products are exact in any order.
    let counts: &[usize] = if full { &[1, 7, 64, 65] } else { &[2] };
    for &count in counts {
        let fv = |r: usize, i: usize| r as f64 + (i % 5) as f64 * 0.5 + (it % 8) as f64;
        reduce::<f64>(t, bufs, count, ReduceOp::Sum, fv, |a, b| a + b, "f64");
        reduce::<f64>(t, bufs, count, ReduceOp::Min, fv, f64::min, "f64");
        reduce::<f64>(t, bufs, count, ReduceOp::Max, fv, f64::max, "f64");
        let pv =
            |r: usize, i: usize| (r % 3 + 1) as f64 * if i.is_multiple_of(2) { 1.0 } else { -0.5 };
        reduce::<f64>(t, bufs, count, ReduceOp::Prod, pv, |a, b| a * b, "f64");
        let gv = |r: usize, i: usize| (r as f32 - 1.0) * 0.25 + (i % 3) as f32 + it as f32;
        reduce::<f32>(t, bufs, count * 2, ReduceOp::Sum, gv, |a, b| a + b, "f32");
        reduce::<f32>(t, bufs, count * 2, ReduceOp::Min, gv, f32::min, "f32");
        let cv = |r: usize, i: usize| Complex {
            re: (r % 2) as f64,
            im: ((r + i) % 2) as f64 + 1.0,
        };
        let cmul = |a: Complex<f64>, b: Complex<f64>| Complex {
            re: a.re * b.re - a.im * b.im,
            im: a.re * b.im + a.im * b.re,
        };
        reduce::<Complex<f64>>(t, bufs, count, ReduceOp::Prod, cv, cmul, "complex f64");
        let cadd = |a: Complex<f32>, b: Complex<f32>| Complex {
            re: a.re + b.re,
            im: a.im + b.im,
        };
        let cf = |r: usize, i: usize| Complex {
            re: r as f32,
            im: i as f32 - it as f32,
        };
        reduce::<Complex<f32>>(t, bufs, count, ReduceOp::Sum, cf, cadd, "complex f32");
    }
}

/// An fcollect of `nbytes` per member: every block lands in rank order.
fn fcollect(t: &Team, bufs: &Bufs, nbytes: usize, it: usize) {
    let (me, n) = (t.my_pe(), t.n_pes());
    let val = |r: usize, i: usize| (r * 57 + i * 3 + it * 11) as u8;
    // SAFETY: both buffers hold BYTES; nbytes × n stays below that.
    unsafe {
        for i in 0..nbytes {
            *bufs.a.add(i) = val(me, i);
        }
        std::ptr::write_bytes(bufs.b, 0xee, nbytes * n);
        coll::fcollect("shmem_fcollectmem", t, bufs.b, bufs.a, nbytes).unwrap();
        for r in 0..n {
            for i in 0..nbytes {
                assert_eq!(
                    *bufs.b.add(r * nbytes + i),
                    val(r, i),
                    "fcollect {nbytes} B block {r} byte {i}"
                );
            }
        }
    }
}

/// Broadcasts of `nbytes` from every root in turn, the root's dest written or kept.
fn broadcasts(t: &Team, bufs: &Bufs, nbytes: usize, it: usize) {
    let (me, n) = (t.my_pe(), t.n_pes());
    let val = |r: usize, i: usize| (r * 31 + i * 7 + it) as u8;
    for root in 0..n {
        // SAFETY: both buffers hold BYTES; nbytes stays below that.
        unsafe {
            for i in 0..nbytes {
                *bufs.a.add(i) = val(me, i);
                *bufs.b.add(i) = 0xee;
            }
            let keep = (it + root).is_multiple_of(3);
            if keep {
                coll::broadcast_keep_root("shmem_broadcast", t, bufs.b, bufs.a, nbytes, root as i64)
            } else {
                coll::broadcast("shmem_broadcastmem", t, bufs.b, bufs.a, nbytes, root as i64)
            }
            .unwrap();
            for i in 0..nbytes {
                let want = if keep && me == root {
                    0xee
                } else {
                    val(root, i)
                };
                assert_eq!(
                    *bufs.b.add(i),
                    want,
                    "broadcast {nbytes} B root {root} byte {i}"
                );
            }
            // In place from the root's dest.
            for i in 0..nbytes {
                *bufs.a.add(i) = val(me + 1, i);
            }
            coll::broadcast("shmem_broadcastmem", t, bufs.a, bufs.a, nbytes, root as i64).unwrap();
            for i in 0..nbytes {
                assert_eq!(
                    *bufs.a.add(i),
                    val(root + 1, i),
                    "in-place broadcast {nbytes} B"
                );
            }
        }
    }
}

fn main() {
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let iters: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("iterations"))
        .unwrap_or(300);
    const { assert!(CAP * 16 <= BYTES) };
    let bufs = Bufs {
        a: sym::<u8>(BYTES),
        b: sym::<u8>(BYTES),
    };
    let world = team::world().unwrap();
    let cfg = TeamConfig::default();
    let even: Option<Arc<Team>> =
        team::split_strided(&world, 0, 2, n.div_ceil(2) as i64, cfg).unwrap();
    let pair = team::split_strided(&world, 0, 1, n.min(2) as i64, cfg).unwrap();
    let rev = team::split_strided(&world, n as i64 - 1, -1, n as i64, cfg)
        .unwrap()
        .unwrap();
    let mut teams: Vec<&Team> = vec![&world];
    teams.extend(even.as_deref());
    teams.extend(pair.as_deref());
    teams.push(&rev);
    // Every size on every team once.
    for t in &teams {
        reductions(t, &bufs, 0, true);
        for nbytes in [1, 3, 4, 8, 13, 256, 511, 512, 513, 1024] {
            broadcasts(t, &bufs, nbytes, 0);
        }
        for nbytes in STAGED_SIZES {
            broadcasts(t, &bufs, nbytes, 0);
        }
        for nbytes in [1, 3, 8, 13, 255, 256, 257, 511, 512, 513, 1024] {
            fcollect(t, &bufs, nbytes, 0);
        }
    }
    // Back to back, teams alternating (teams are disjoint or nested, so every PE meets
    // its teams in one order).
    for it in 1..=iters {
        for t in &teams {
            reductions(t, &bufs, it, false);
            broadcasts(t, &bufs, 8 + it % 9, it);
            fcollect(t, &bufs, 4 + it % 13, it);
            if it % 10 == 0 {
                broadcasts(t, &bufs, STAGED_SIZES[it / 10 % STAGED_SIZES.len()], it);
            }
        }
    }
    // A team destroyed and made again (likely on the same slot) starts clean.
    for round in 0..3 {
        let t = team::split_strided(&world, 0, 1, n as i64, cfg)
            .unwrap()
            .unwrap();
        for it in 0..5 + round {
            reductions(&t, &bufs, it, false);
            broadcasts(&t, &bufs, 8, it);
            broadcasts(&t, &bufs, 8193, it);
            fcollect(&t, &bufs, 12, it);
        }
        team::destroy(&t).unwrap();
    }
    rshmem_core::sync::barrier_all().unwrap();
    println!("ok coll_ll pe={me}");
    rshmem_core::finalize();
}
