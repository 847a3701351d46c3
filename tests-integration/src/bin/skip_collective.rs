//! A PE that skips a collective and finalizes, while the others make the call:
//! `skip_collective <what> <skipper>`. `what` is barrier, team_sync, broadcast, reduce,
//! split, kill (the skipper is killed by SIGKILL instead) or wait (`skipper` waits with
//! `wait_until` for a value no PE writes while every other PE finalizes). The others must fail, naming the routine and
//! the skipper; none of them gets past the call (they print `passed` if they do).
#![allow(unsafe_code)]

use rshmem_core::coll::{self, ReduceOp};
use rshmem_core::team::{self, TeamConfig};
use rshmem_core::{memory, p2p, setup, sync, Cmp, ThreadLevel};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args[1].as_str();
    let skipper: usize = args[2].parse().unwrap_or_else(|e| rshmem_core::fatal(&e));
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap_or_else(|e| rshmem_core::fatal(&e));
    let n = setup::n_pes().unwrap_or_else(|e| rshmem_core::fatal(&e));
    let buf = memory::malloc("shmem_malloc", 64 * 8).unwrap() as *mut i64;
    let out = memory::malloc("shmem_malloc", 64 * 8).unwrap() as *mut i64;
    // One collective that every PE makes, so the skip is not the first call.
    let world = team::world().unwrap_or_else(|e| rshmem_core::fatal(&e));
    // SAFETY: `buf` and `out` are symmetric allocations of 64 i64s.
    unsafe {
        buf.write_bytes(0, 64);
        coll::reduce("shmem_long_sum_reduce", &world, out, buf, 64, ReduceOp::Sum)
            .unwrap_or_else(|e| rshmem_core::fatal(&e));
    }
    if what == "wait" {
        // Here `skipper` is the PE that waits; every other PE finalizes.
        if me == skipper {
            // SAFETY: `buf` is a symmetric, aligned i64.
            unsafe {
                p2p::wait_until::<i64>("shmem_long_wait_until", buf, Cmp::Eq, 42)
                    .unwrap_or_else(|e| rshmem_core::fatal(&e))
            };
            println!("passed pe={me}");
        }
        rshmem_core::finalize();
        return;
    }
    if me == skipper {
        if what == "kill" {
            let _ = std::process::Command::new("kill")
                .args(["-9", &std::process::id().to_string()])
                .status();
            // No `kill` tool: die by a signal all the same.
            std::process::abort();
        }
        println!("skipper {me} finalizes");
        rshmem_core::finalize();
        return;
    }
    let world = team::world().unwrap_or_else(|e| rshmem_core::fatal(&e));
    // SAFETY: as above; every buffer is symmetric and large enough.
    unsafe {
        match what {
            "barrier" | "kill" => sync::barrier_all().unwrap_or_else(|e| rshmem_core::fatal(&e)),
            "team_sync" => team::sync(&world).unwrap_or_else(|e| rshmem_core::fatal(&e)),
            "broadcast" => coll::broadcast(
                "shmem_broadcastmem",
                &world,
                out.cast(),
                buf.cast(),
                64 * 8,
                skipper as i64,
            )
            .unwrap_or_else(|e| rshmem_core::fatal(&e)),
            "reduce" => coll::reduce("shmem_long_sum_reduce", &world, out, buf, 64, ReduceOp::Sum)
                .unwrap_or_else(|e| rshmem_core::fatal(&e)),
            "split" => {
                team::split_strided(&world, 0, 1, n as i64, TeamConfig::default())
                    .unwrap_or_else(|e| rshmem_core::fatal(&e));
            }
            _ => panic!("unknown {what}"),
        }
    }
    println!("passed pe={me}");
    rshmem_core::finalize();
}
