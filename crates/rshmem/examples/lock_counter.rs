//! A lock-protected counter: every PE increments a counter that lives on PE 0, K times,
//! with a plain get and put under a distributed lock (no atomics), and PE 0 checks that
//! no increment was lost.
//!
//! ```text
//! oshrun -np 4 target/debug/examples/lock_counter [K]
//! ```

use rshmem::Shmem;

fn main() -> rshmem::Result<()> {
    let k: u64 = std::env::args()
        .nth(1)
        .map_or(100, |a| a.parse().expect("iterations"));
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());

    let lock = shmem.alloc_lock()?;
    let counter = shmem.alloc_box(0u64)?;
    for _ in 0..k {
        let _held = lock.lock()?;
        let v = shmem.g(&counter, 0, 0)?;
        shmem.p(&counter, 0, v + 1, 0)?;
        // Dropping the guard quiets, so the next holder sees the new value.
    }
    shmem.barrier_all();

    if me == 0 {
        let total = counter.read();
        assert_eq!(total, k * n as u64, "lost increments");
        println!("lock_counter ok: {n} PEs x {k} increments = {total}");
    }
    Ok(())
}
