//! Minimal end-to-end check of the core runtime: init, malloc, put/get to the right
//! neighbour, an atomic, a barrier, finalize. Prints `ok core_smoke pe=<me> n=<n>`.
#![allow(unsafe_code)]

use rshmem_core::Ctx;
use rshmem_core::{amo, memory, rma, setup, sync, AmoOp, ThreadLevel};

fn main() {
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let buf = memory::malloc("shmem_malloc", 64).unwrap() as *mut u64;
    let ctr = memory::calloc("shmem_calloc", 1, 8).unwrap() as *mut u64;
    let right = ((me + 1) % n) as i64;
    let src = [me as u64 * 100 + 7; 8];
    // SAFETY: `src` is a live local array of 64 bytes; `buf` is symmetric.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_putmem",
            buf.cast(),
            src.as_ptr().cast(),
            64,
            right,
        )
        .unwrap()
    };
    // SAFETY: `ctr` is symmetric and aligned.
    unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_add",
            ctr,
            AmoOp::Add(1),
            0,
        )
        .unwrap()
    };
    sync::barrier_all().unwrap();
    let left = (me + n - 1) % n;
    // SAFETY: `buf` is our own symmetric block of 8 u64s, written before the barrier.
    let got = unsafe { std::slice::from_raw_parts(buf, 8) };
    assert!(
        got.iter().all(|&v| v == left as u64 * 100 + 7),
        "got {got:?}"
    );
    if me == 0 {
        // SAFETY: `ctr` is our own symmetric word.
        assert_eq!(unsafe { ctr.read_volatile() }, n as u64);
    }
    println!("ok core_smoke pe={me} n={n}");
    rshmem_core::finalize();
}
