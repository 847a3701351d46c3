//! A PE that computes without calling the library still serves its peers' gets and
//! atomics through UCX (its progress thread): `ucx_progress`.
//!
//! PE 0 fills a buffer, then computes, reading its own counter with plain atomic loads
//! (no library call), until every other PE has fetch-added it `ROUNDS` times, bounded at
//! 30 s. The others each get PE 0's buffer and check it, then fetch-add the counter, in a
//! loop. Prints `ok pe=<me>` (PE 0 also how long it computed).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rshmem_core::Ctx;
use rshmem_core::{amo, memory, rma, setup, sync, AmoOp};

const ROUNDS: u64 = 200;
const WORDS: usize = 512;

fn main() {
    rshmem_core::init(rshmem_core::ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let data = memory::malloc("shmem_malloc", WORDS * 8).unwrap() as *mut u64;
    let counter = memory::calloc("shmem_calloc", 1, 8).unwrap() as *mut u64;
    if me == 0 {
        for i in 0..WORDS {
            // SAFETY: our own buffer of WORDS words.
            unsafe { data.add(i).write(i as u64 * 7 + 1) };
        }
    }
    sync::barrier_all().unwrap();
    if me == 0 {
        let target = (n as u64 - 1) * ROUNDS;
        // SAFETY: our own symmetric, aligned word, only changed atomically.
        let seen = unsafe { AtomicU64::from_ptr(counter) };
        let start = Instant::now();
        let mut x = 1u64;
        loop {
            // Computing: no OpenSHMEM call in this loop.
            for _ in 0..10_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
            }
            let v = seen.load(Ordering::Acquire);
            if v >= target {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "PE 0 computed for 30 s without calling the library and its peers' operations were not served: counter {v} of {target}"
            );
        }
        println!(
            "served while computing: {target} fetch-adds and gets in {} ms ({x:x})",
            start.elapsed().as_millis()
        );
    } else {
        let mut buf = vec![0u64; WORDS];
        for r in 0..ROUNDS {
            // SAFETY: `buf` holds WORDS words; `data` is symmetric.
            unsafe {
                rma::ctx_get(
                    Ctx::default_ctx(),
                    "shmem_getmem",
                    buf.as_mut_ptr().cast(),
                    data.cast(),
                    WORDS * 8,
                    0,
                )
                .unwrap()
            };
            for (i, v) in buf.iter().enumerate() {
                assert_eq!(*v, i as u64 * 7 + 1, "round {r}: word {i} of PE 0's buffer");
            }
            // SAFETY: symmetric, aligned word.
            unsafe {
                amo::ctx_atomic(
                    Ctx::default_ctx(),
                    "shmem_atomic_fetch_add",
                    counter,
                    AmoOp::Add(1),
                    0,
                )
                .unwrap()
            };
        }
    }
    sync::barrier_all().unwrap();
    println!("ok pe={me}");
    rshmem_core::finalize();
}
