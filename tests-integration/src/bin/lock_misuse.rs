//! Lock misuse through the Rust faces, at 2+ PEs: the safe API makes
//! it an `Err` (or `None`), and the core's routines return `InvalidArgument` naming the
//! routine and `lock` instead of hanging. Prints `ok lock_misuse pe=<me>`.

use rshmem::{Error, Shmem};
use rshmem_core::{lock, memory};

fn main() -> rshmem::Result<()> {
    let shmem = Shmem::init()?;
    let me = shmem.my_pe();

    // Safe API: a second lock() is an Err, try_lock() while held is None.
    let l = shmem.alloc_lock()?;
    {
        let _held = l.lock()?;
        assert!(matches!(l.lock(), Err(Error::LockHeld { .. })));
        assert!(l.try_lock().is_none());
    }
    assert!(!l.is_held());
    shmem.barrier_all();

    // Core: misuse is an error naming the routine and the argument.
    let lk = memory::calloc("shmem_calloc", 1, 8).unwrap().cast::<i64>();
    let msg = |r: rshmem_core::Result<()>| r.unwrap_err().to_string();
    assert_eq!(
        msg(lock::clear_lock("shmem_clear_lock", lk)),
        "shmem_clear_lock: argument lock: this PE does not hold this lock"
    );
    if me == 0 {
        lock::set_lock("shmem_set_lock", lk).unwrap();
        assert!(msg(lock::set_lock("shmem_set_lock", lk))
            .starts_with("shmem_set_lock: argument lock: this PE already holds this lock"));
        assert!(msg(lock::test_lock("shmem_test_lock", lk).map(drop))
            .starts_with("shmem_test_lock: argument lock: this PE already holds this lock"));
    }
    shmem.barrier_all();
    if me != 0 {
        // Held by PE 0: busy for us, and not ours to clear.
        assert!(!lock::test_lock("shmem_test_lock", lk).unwrap());
        assert_eq!(
            msg(lock::clear_lock("shmem_clear_lock", lk)),
            "shmem_clear_lock: argument lock: this PE does not hold this lock"
        );
    }
    shmem.barrier_all();
    if me == 0 {
        lock::clear_lock("shmem_clear_lock", lk).unwrap();
    }
    // Still a working lock after all that: every PE takes it once more.
    lock::set_lock("shmem_set_lock", lk).unwrap();
    lock::clear_lock("shmem_clear_lock", lk).unwrap();
    shmem.barrier_all();
    memory::free("shmem_free", lk.cast()).unwrap();
    println!("ok lock_misuse pe={me}");
    Ok(())
}
