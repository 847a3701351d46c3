//! Safe API: a lock-protected counter on PE 0 (get + put under `SymLock`), an atomic
//! counter and ticket dispenser, and `try_lock`. Args: `[K]`. PE 0 prints
//! `counter total=<t> atomic=<a>`; every PE prints `ok api_lock_counter pe=<me>`.

use rshmem::{Error, Shmem};

fn main() -> rshmem::Result<()> {
    let k: u64 = std::env::args().nth(1).map_or(200, |a| a.parse().unwrap());
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());

    let lock = shmem.alloc_lock()?;
    let counter = shmem.alloc_box(0u64)?;
    let atomic = shmem.alloc_atomic(0i64)?;
    let tickets = shmem.alloc_atomic(0usize)?;
    let mut mine = Vec::new();
    for i in 0..k {
        {
            let _held = lock.lock()?;
            assert!(lock.is_held());
            assert!(matches!(lock.lock(), Err(Error::LockHeld { .. })));
            let v = shmem.g(&counter, 0, 0)?;
            shmem.p(&counter, 0, v + 1, 0)?;
        }
        assert!(!lock.is_held());
        atomic.atomic_add(1, 0)?;
        if i % 10 == 0 {
            mine.push(tickets.atomic_fetch_add(1, 0)?);
        }
    }
    // try_lock: spin until taken, then release
    let g = loop {
        if let Some(g) = lock.try_lock() {
            break g;
        }
        std::hint::spin_loop();
    };
    assert!(lock.try_lock().is_none(), "not reentrant");
    g.unlock();
    shmem.barrier_all();

    // tickets are unique: gather them on PE 0
    let per = mine.len();
    let all = shmem.alloc(per * n, usize::MAX)?;
    shmem.put(&all, me * per, &mine, 0)?;
    shmem.barrier_all();
    if me == 0 {
        let total = counter.read();
        let a = atomic.load();
        println!("counter total={total} atomic={a}");
        assert_eq!(total, k * n as u64);
        assert_eq!(a, (k * n as u64) as i64);
        let mut t = all.to_vec();
        t.sort_unstable();
        assert_eq!(t, (0..per * n).collect::<Vec<_>>());
    }
    println!("ok api_lock_counter pe={me}");
    Ok(())
}
