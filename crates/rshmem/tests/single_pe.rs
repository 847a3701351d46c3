//! Single-PE checks of the guard and of the types' thread-safety markers. One test
//! function, because a process holds at most one live guard.

use rshmem::{
    Cmp, Ctx, Error, Serialized, Shared, SharedSlice, Shmem, SymAtomic, SymAtomicVec, SymBox,
    SymLock, SymVec, ThreadLevel,
};

fn is_sync<T: Sync>() {}
fn is_send<T: Send>() {}

#[test]
fn guard_lifecycle_and_markers() {
    is_sync::<Shmem>();
    is_sync::<SymAtomic<'static, u64>>();
    is_sync::<SymAtomicVec<'static, i32>>();
    is_sync::<SharedSlice<'static, u8>>();
    // Context modes (the negative cases are compile_fail doctests of `Ctx`).
    is_send::<Ctx<'static, Shared>>();
    is_sync::<Ctx<'static, Shared>>();
    is_send::<Ctx<'static, Serialized>>();
    // SymVec, SymBox and SymLock are neither Send nor Sync (see the compile_fail doctests).
    let _ = std::mem::size_of::<(SymVec<'static, u8>, SymBox<'static, u8>, SymLock<'static>)>();

    for round in 0..3 {
        let shmem = Shmem::init_thread(ThreadLevel::Serialized).expect("init");
        assert_eq!(shmem.query_thread(), ThreadLevel::Serialized);
        assert!(matches!(
            Shmem::init(),
            Err(Error::AlreadyInitialized { .. })
        ));
        assert_eq!((shmem.my_pe(), shmem.n_pes()), (0, 1));

        let v = shmem.alloc(3, round as u16).unwrap();
        let mut local = [0u16; 3];
        v.copy_to_local(&mut local);
        assert_eq!(local, [round as u16; 3]);
        v.copy_from_local(&[1, 2, 3]);
        assert_eq!(v.to_vec(), [1, 2, 3]);
        // SAFETY: a single PE, and nothing writes `v` while the slice lives.
        assert_eq!(unsafe { v.local() }, &[1, 2, 3]);
        let mut w = shmem.alloc_zeroed::<f64>(2).unwrap();
        // SAFETY: a single PE: no other PE accesses `w`.
        unsafe { w.local_mut()[1] = 4.5 };
        assert_eq!(shmem.g(&w, 1, 0).unwrap(), 4.5);
        w.fill_local(1.0);
        assert_eq!(w.to_vec(), [1.0, 1.0]);

        // Atomic classes on one PE.
        let a = shmem.alloc_atomic(6u32).unwrap();
        assert_eq!(a.atomic_fetch_and(3, 0).unwrap(), 6);
        assert_eq!(a.atomic_fetch_or(8, 0).unwrap(), 2);
        assert_eq!(a.atomic_fetch_xor(1, 0).unwrap(), 10);
        assert_eq!(a.atomic_swap(5, 0).unwrap(), 11);
        assert_eq!(a.atomic_compare_swap(4, 9, 0).unwrap(), 5);
        assert_eq!(a.atomic_compare_swap(5, 9, 0).unwrap(), 5);
        assert_eq!(a.atomic_fetch_inc(0).unwrap(), 9);
        a.atomic_inc(0).unwrap();
        a.atomic_and(0xf, 0).unwrap();
        a.atomic_or(0x10, 0).unwrap();
        a.atomic_xor(0x1, 0).unwrap();
        assert_eq!(a.atomic_fetch(0).unwrap(), 0x1a);
        a.store(3);
        assert!(shmem.test(&a, Cmp::Eq, 3));
        let f = shmem.alloc_atomic(1.5f64).unwrap();
        assert_eq!(f.atomic_swap(2.5, 0).unwrap(), 1.5);
        f.atomic_set(-1.0, 0).unwrap();
        assert_eq!(f.load(), -1.0);

        let lock = shmem.alloc_lock().unwrap();
        let g = lock.try_lock().expect("free lock");
        assert!(lock.try_lock().is_none());
        drop(g);
        drop(lock.lock().unwrap());

        // Explicit frees in any order (one PE: always the same order).
        w.free().unwrap();
        a.free().unwrap();
        drop(v);
        f.free().unwrap();
        lock.free().unwrap();
        shmem.finalize().unwrap();
    }
}
