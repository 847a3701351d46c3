//! Team collectives on the core runtime, checked against locally computed references on
//! WORLD, a strided sub-team and a reversed team, back to back with no barrier between:
//! broadcast from every root, fcollect, collect with uneven sizes, alltoall, alltoalls,
//! reductions (every operator, several types, in place and disjoint, element counts below
//! and above the team size, and around the network algorithms' 16 and 32 KiB thresholds), sum
//! scans. Prints `ok coll_basic pe=<me>`.
#![allow(unsafe_code)]

use std::sync::Arc;

use rshmem_core::coll::{self, Complex, ReduceOp};
use rshmem_core::team::{self, Team, TeamConfig};
use rshmem_core::{memory, setup, ThreadLevel};

const N: usize = 257;

fn sym<T>(n: usize) -> *mut T {
    memory::malloc("shmem_malloc", n * std::mem::size_of::<T>()).unwrap() as *mut T
}

/// Value contributed by team rank `r` at element `i`.
fn v(r: usize, i: usize) -> i64 {
    (r as i64 + 1) * 1000 + i as i64 % 97 - 40
}

fn check_team(t: &Team, bufs: &Bufs) {
    let (me, n) = (t.my_pe(), t.n_pes());
    // SAFETY: every buffer below is a symmetric allocation large enough for the counts
    // used (sized for N * 8 elements and up to 8 PEs per team... see Bufs::new).
    unsafe {
        let (a, b) = (bufs.a, bufs.b);
        // Broadcast from each root, back to back.
        for root in 0..n {
            for i in 0..N {
                *a.add(i) = v(me, i);
            }
            coll::broadcast(
                "shmem_broadcastmem",
                t,
                b.cast(),
                a.cast(),
                N * 8,
                root as i64,
            )
            .unwrap();
            for i in 0..N {
                assert_eq!(*b.add(i), v(root, i), "broadcast root {root} elem {i}");
            }
        }
        // fcollect.
        for i in 0..N {
            *a.add(i) = v(me, i);
        }
        coll::fcollect("shmem_fcollectmem", t, b.cast(), a.cast(), N * 8).unwrap();
        for r in 0..n {
            for i in 0..N {
                assert_eq!(*b.add(r * N + i), v(r, i), "fcollect");
            }
        }
        // collect with rank-dependent sizes (rank r gives r + 1 elements).
        coll::collect(
            "shmem_collectmem",
            t,
            b.cast(),
            a.cast(),
            (me + 1) * 8,
            usize::MAX,
        )
        .unwrap();
        // A dest smaller than the total fails on every member alike.
        let total = n * (n + 1) / 2 * 8;
        assert!(coll::collect(
            "shmem_collectmem",
            t,
            b.cast(),
            a.cast(),
            (me + 1) * 8,
            total - 1
        )
        .is_err());
        let mut k = 0;
        for r in 0..n {
            for i in 0..=r {
                assert_eq!(*b.add(k), v(r, i), "collect");
                k += 1;
            }
        }
        // alltoall: block j of rank i -> block i of rank j.
        for j in 0..n {
            for i in 0..N {
                *a.add(j * N + i) = v(me, i) * 10 + j as i64;
            }
        }
        coll::alltoall("shmem_alltoallmem", t, b.cast(), a.cast(), N * 8).unwrap();
        for r in 0..n {
            for i in 0..N {
                assert_eq!(*b.add(r * N + i), v(r, i) * 10 + me as i64, "alltoall");
            }
        }
        // alltoalls with strides 2 (dest) and 3 (source), 5 elements per block.
        for j in 0..n * 5 {
            *a.add(j * 3) = (me * 100 + j) as i64;
        }
        coll::alltoalls("shmem_alltoalls", t, b.cast(), a.cast(), 2, 3, 5, 8).unwrap();
        for r in 0..n {
            for k in 0..5 {
                assert_eq!(
                    *b.add((r * 5 + k) * 2),
                    (r * 100 + me * 5 + k) as i64,
                    "alltoalls"
                );
            }
        }
        // Reductions on i64, every operator, disjoint and in place; small and large counts.
        for count in [1usize, n.saturating_sub(1).max(1), N] {
            for op in [
                ReduceOp::And,
                ReduceOp::Or,
                ReduceOp::Xor,
                ReduceOp::Min,
                ReduceOp::Max,
                ReduceOp::Sum,
                ReduceOp::Prod,
            ] {
                let reference = |i: usize| {
                    (1..n).fold(v(0, i), |acc, r| {
                        let x = v(r, i);
                        match op {
                            ReduceOp::And => acc & x,
                            ReduceOp::Or => acc | x,
                            ReduceOp::Xor => acc ^ x,
                            ReduceOp::Min => acc.min(x),
                            ReduceOp::Max => acc.max(x),
                            ReduceOp::Sum => acc.wrapping_add(x),
                            ReduceOp::Prod => acc.wrapping_mul(x),
                        }
                    })
                };
                for i in 0..count {
                    *a.add(i) = v(me, i);
                }
                coll::reduce("shmem_long_reduce", t, b, a, count, op).unwrap();
                coll::reduce("shmem_long_reduce", t, a, a, count, op).unwrap();
                for i in 0..count {
                    assert_eq!(
                        *b.add(i),
                        reference(i),
                        "{op:?} disjoint count {count} elem {i}"
                    );
                    assert_eq!(
                        *a.add(i),
                        reference(i),
                        "{op:?} in place count {count} elem {i}"
                    );
                }
            }
        }
        // f64 sum and u8 max, complex prod.
        let f = bufs.a as *mut f64;
        for i in 0..N {
            *f.add(i) = me as f64 + i as f64 * 0.5;
        }
        coll::reduce("shmem_double_sum_reduce", t, f, f, N, ReduceOp::Sum).unwrap();
        for i in 0..N {
            let want = (0..n).map(|r| r as f64 + i as f64 * 0.5).sum::<f64>();
            assert_eq!(*f.add(i), want);
        }
        let u = bufs.a as *mut u8;
        let ub = bufs.b as *mut u8;
        for i in 0..N {
            *u.add(i) = ((me * 37 + i) % 251) as u8;
        }
        coll::reduce("shmem_uchar_max_reduce", t, ub, u, N, ReduceOp::Max).unwrap();
        for i in 0..N {
            assert_eq!(
                *ub.add(i),
                (0..n).map(|r| ((r * 37 + i) % 251) as u8).max().unwrap()
            );
        }
        let c = bufs.a as *mut Complex<f64>;
        *c = Complex { re: 0.0, im: 1.0 };
        coll::reduce("shmem_complexd_prod_reduce", t, c, c, 1, ReduceOp::Prod).unwrap();
        let want = (0..n).fold(Complex { re: 1.0, im: 0.0 }, |acc: Complex<f64>, _| {
            Complex {
                re: -acc.im,
                im: acc.re,
            }
        });
        assert_eq!(*c, want);
        // Scans.
        for i in 0..N {
            *a.add(i) = v(me, i);
        }
        coll::sum_scan("shmem_long_sum_inscan", t, b, a, N, true).unwrap();
        for i in 0..N {
            assert_eq!(*b.add(i), (0..=me).map(|r| v(r, i)).sum::<i64>(), "inscan");
        }
        coll::sum_scan("shmem_long_sum_exscan", t, b, a, N, false).unwrap();
        for i in 0..N {
            assert_eq!(*b.add(i), (0..me).map(|r| v(r, i)).sum::<i64>(), "exscan");
        }
        // Large broadcasts from two roots (several 64 KiB pipeline chunks for the tree).
        for root in [0, n - 1] {
            for i in 0..BIG {
                *bufs.big_a.add(i) = (me * 7 + i) as i64;
            }
            coll::broadcast(
                "shmem_broadcastmem",
                t,
                bufs.big_b.cast(),
                bufs.big_a.cast(),
                BIG * 8,
                root as i64,
            )
            .unwrap();
            for i in 0..BIG {
                assert_eq!(
                    *bufs.big_b.add(i),
                    (root * 7 + i) as i64,
                    "big broadcast root {root} elem {i}"
                );
            }
        }
        // Large reductions, disjoint then in place, back to back.
        let (ba, bb) = (bufs.big_a, bufs.big_b);
        for i in 0..BIG {
            *ba.add(i) = v(me, i) * (i as i64 % 7 + 1);
        }
        coll::reduce("shmem_long_sum_reduce", t, bb, ba, BIG, ReduceOp::Sum).unwrap();
        coll::reduce("shmem_long_max_reduce", t, ba, ba, BIG, ReduceOp::Max).unwrap();
        for i in 0..BIG {
            let want_sum: i64 = (0..n).map(|r| v(r, i) * (i as i64 % 7 + 1)).sum();
            let want_max = (0..n).map(|r| v(r, i) * (i as i64 % 7 + 1)).max().unwrap();
            assert_eq!(*bb.add(i), want_sum, "big sum elem {i}");
            assert_eq!(*ba.add(i), want_max, "big max elem {i}");
        }
        // A large broadcast: over UCX, a pipeline of about ten pushed chunks, the last short.
        for i in 0..BIG {
            *ba.add(i) = (me * 7 + i) as i64;
        }
        let root = n / 2;
        coll::broadcast(
            "shmem_broadcastmem",
            t,
            bb.cast(),
            ba.cast(),
            BIG * 8,
            root as i64,
        )
        .unwrap();
        for i in 0..BIG {
            assert_eq!(*bb.add(i), (root * 7 + i) as i64, "big broadcast elem {i}");
        }
        // Around the network algorithms' thresholds (16 KiB: one channel message; 32 KiB:
        // Rabenseifner's last size on more than 2 PEs), from the last rank, counts that do
        // not divide among the members.
        for elems in [2048, 2049, 2 * 2048, 2 * 2048 + 3, 4 * 2048 + 1] {
            for i in 0..elems {
                *ba.add(i) = (me * 13 + i) as i64;
            }
            let root = n - 1;
            coll::broadcast(
                "shmem_broadcastmem",
                t,
                bb.cast(),
                ba.cast(),
                elems * 8,
                root as i64,
            )
            .unwrap();
            for i in 0..elems {
                assert_eq!(
                    *bb.add(i),
                    (root * 13 + i) as i64,
                    "broadcast {elems} elem {i}"
                );
            }
            coll::reduce("shmem_long_xor_reduce", t, bb, ba, elems, ReduceOp::Xor).unwrap();
            coll::reduce("shmem_long_sum_reduce", t, ba, ba, elems, ReduceOp::Sum).unwrap();
            for i in 0..elems {
                let xor = (0..n).fold(0, |acc, r| acc ^ (r * 13 + i) as i64);
                let sum: i64 = (0..n).map(|r| (r * 13 + i) as i64).sum();
                assert_eq!(*bb.add(i), xor, "xor {elems} elem {i}");
                assert_eq!(*ba.add(i), sum, "sum {elems} elem {i}");
            }
        }
        // Zero elements: no-ops.
        coll::reduce("shmem_long_sum_reduce", t, b, a, 0, ReduceOp::Sum).unwrap();
        coll::broadcast("shmem_broadcastmem", t, b.cast(), a.cast(), 0, 0).unwrap();
        // Bad arguments.
        assert!(coll::broadcast("shmem_broadcastmem", t, b.cast(), a.cast(), 8, n as i64).is_err());
        assert!(coll::reduce("shmem_long_sum_reduce", t, b, b.add(1), 4, ReduceOp::Sum).is_err());
        assert!(coll::reduce(
            "shmem_float_xor_reduce",
            t,
            f as *mut f32,
            f as *mut f32,
            4,
            ReduceOp::Xor
        )
        .is_err());
    }
}

struct Bufs {
    a: *mut i64,
    b: *mut i64,
    /// Large buffers: reductions past the message-channel size (chunking, ring blocks).
    big_a: *mut i64,
    big_b: *mut i64,
}

/// Elements of the large reductions and broadcast (640 KB: many 16 KiB messages, and
/// several pushed chunks for the network ring and broadcast: `Fabric::push_chunk`).
const BIG: usize = 80_000;

fn main() {
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let bufs = Bufs {
        a: sym::<i64>(N * 3 * n.max(2)),
        b: sym::<i64>(N * 3 * n.max(2)),
        big_a: sym::<i64>(BIG),
        big_b: sym::<i64>(BIG),
    };
    let world = team::world().unwrap();
    let cfg = TeamConfig::default();
    check_team(&world, &bufs);
    let even: Option<Arc<Team>> =
        team::split_strided(&world, 0, 2, n.div_ceil(2) as i64, cfg).unwrap();
    if let Some(t) = &even {
        check_team(t, &bufs);
    }
    let rev = team::split_strided(&world, n as i64 - 1, -1, n as i64, cfg)
        .unwrap()
        .unwrap();
    check_team(&rev, &bufs);
    rshmem_core::sync::barrier_all().unwrap();
    println!("ok coll_basic pe={me}");
    rshmem_core::finalize();
}
