//! `SHMEM_DEBUG=1` collective checks: `debug_checks <case>` makes the last PE call a
//! collective differently from the others (different root, nelems, operator, type, a
//! different collective, different split arguments); every PE must fail with the
//! routine, the argument and the PEs named. `ok` runs every collective consistently and
//! prints `ok debug_checks pe=<me>`.
#![allow(unsafe_code)]

use rshmem_core::coll::{self, ReduceOp};
use rshmem_core::team::{self, TeamConfig};
use rshmem_core::{memory, setup, sync, ThreadLevel};

fn main() {
    let case = std::env::args().nth(1).expect("case");
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let odd = me == n - 1;
    let a = memory::malloc("shmem_malloc", 64 * 8).unwrap() as *mut i64;
    let b = memory::malloc("shmem_malloc", 64 * 8 * n).unwrap() as *mut i64;
    let world = team::world().unwrap();
    let die = |e: rshmem_core::Error| -> ! { rshmem_core::fatal(&e) };
    // SAFETY: `a` holds 64 i64s and `b` 64 * n, all symmetric.
    unsafe {
        match case.as_str() {
            "ok" => {
                coll::broadcast("shmem_broadcastmem", &world, b.cast(), a.cast(), 64, 0)
                    .unwrap_or_else(|e| die(e));
                coll::fcollect("shmem_fcollectmem", &world, b.cast(), a.cast(), 64)
                    .unwrap_or_else(|e| die(e));
                // Collect sizes may differ.
                coll::collect(
                    "shmem_collectmem",
                    &world,
                    b.cast(),
                    a.cast(),
                    me * 8,
                    usize::MAX,
                )
                .unwrap_or_else(|e| die(e));
                coll::alltoall("shmem_alltoallmem", &world, b.cast(), a.cast(), 8)
                    .unwrap_or_else(|e| die(e));
                coll::reduce("shmem_long_sum_reduce", &world, b, a, 64, ReduceOp::Sum)
                    .unwrap_or_else(|e| die(e));
                coll::sum_scan("shmem_long_sum_inscan", &world, b, a, 64, true)
                    .unwrap_or_else(|e| die(e));
                let t = team::split_strided(&world, 0, 1, n as i64, TeamConfig::default())
                    .unwrap_or_else(|e| die(e))
                    .unwrap();
                team::sync(&t).unwrap_or_else(|e| die(e));
                team::destroy(&t).unwrap_or_else(|e| die(e));
                sync::sync_all().unwrap_or_else(|e| die(e));
                sync::barrier_all().unwrap_or_else(|e| die(e));
                println!("ok debug_checks pe={me}");
            }
            "root" => coll::broadcast(
                "shmem_broadcastmem",
                &world,
                b.cast(),
                a.cast(),
                64,
                if odd { 1 } else { 0 },
            )
            .unwrap_or_else(|e| die(e)),
            "nelems" => coll::reduce(
                "shmem_long_sum_reduce",
                &world,
                b,
                a,
                if odd { 32 } else { 64 },
                ReduceOp::Sum,
            )
            .unwrap_or_else(|e| die(e)),
            "op" => coll::reduce(
                "shmem_long_reduce",
                &world,
                b,
                a,
                64,
                if odd { ReduceOp::Max } else { ReduceOp::Sum },
            )
            .unwrap_or_else(|e| die(e)),
            "type" => if odd {
                coll::reduce(
                    "shmem_int_sum_reduce",
                    &world,
                    b.cast::<i32>(),
                    a.cast(),
                    64,
                    ReduceOp::Sum,
                )
            } else {
                coll::reduce("shmem_long_sum_reduce", &world, b, a, 64, ReduceOp::Sum)
            }
            .unwrap_or_else(|e| die(e)),
            "routine" => if odd {
                coll::reduce("shmem_long_sum_reduce", &world, b, a, 8, ReduceOp::Sum)
            } else {
                coll::broadcast("shmem_broadcastmem", &world, b.cast(), a.cast(), 64, 0)
            }
            .unwrap_or_else(|e| die(e)),
            "barrier" => if odd {
                coll::fcollect("shmem_fcollectmem", &world, b.cast(), a.cast(), 8)
            } else {
                sync::barrier_all()
            }
            .unwrap_or_else(|e| die(e)),
            "split" => {
                let start = if odd { 1 } else { 0 };
                team::split_strided(&world, start, 1, n as i64 - 1, TeamConfig::default())
                    .unwrap_or_else(|e| die(e));
            }
            other => panic!("unknown case {other}"),
        }
    }
    rshmem_core::finalize();
}
