//! Safe API: bad arguments return `Err` with a precise error (no panic, no effect), at
//! any number of PEs. Prints `err <case>: <message>` lines and `ok api_errors pe=<me>`.

use rshmem::{Cmp, Error, Shmem, SignalOp};

fn show<T: std::fmt::Debug>(case: &str, r: rshmem::Result<T>) -> Error {
    match r {
        Ok(v) => panic!("{case}: expected an error, got Ok({v:?})"),
        Err(e) => {
            println!("err {case}: {e}");
            e
        }
    }
}

fn main() -> rshmem::Result<()> {
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let right = (me + 1) % n;

    // A second guard while one is live.
    let e = show("double init", Shmem::init());
    assert!(matches!(e, Error::AlreadyInitialized { .. }));

    let v = shmem.alloc(8, 7u32)?;
    let mut buf = [0u32; 8];

    // Bounds.
    let e = show("put past end", shmem.put(&v, 5, &[1, 2, 3, 4], right));
    assert!(
        matches!(e, Error::OutOfBounds { routine: "shmem_put", arg: "dest", len: 8, ref range } if *range == (5..9))
    );
    let e = show("get past end", shmem.get(&mut buf, &v, 1, right));
    assert!(matches!(
        e,
        Error::OutOfBounds {
            routine: "shmem_get",
            len: 8,
            ..
        }
    ));
    let e = show(
        "put offset overflow",
        shmem.put(&v, usize::MAX, &[1], right),
    );
    assert!(matches!(e, Error::OutOfBounds { .. }));
    let e = show("p past end", shmem.p(&v, 8, 1, right));
    assert!(matches!(
        e,
        Error::OutOfBounds {
            routine: "shmem_p",
            ..
        }
    ));
    let e = show("g past end", shmem.g(&v, 8, right));
    assert!(matches!(
        e,
        Error::OutOfBounds {
            routine: "shmem_g",
            ..
        }
    ));
    let e = show(
        "iput dest extent",
        shmem.iput(&v, 0, 3, &buf, 0, 1, 4, right),
    );
    assert!(matches!(e, Error::OutOfBounds { arg: "dest", ref range, .. } if *range == (0..10)));
    let e = show(
        "iput source extent",
        shmem.iput(&v, 0, 1, &buf, 0, 3, 4, right),
    );
    assert!(matches!(e, Error::OutOfBounds { arg: "source", .. }));
    let e = show(
        "iget stride overflow",
        shmem.iget(&mut buf, 0, 1, &v, 0, usize::MAX, 3, right),
    );
    assert!(matches!(e, Error::OutOfBounds { arg: "source", .. }));
    let e = show(
        "iget dest extent",
        shmem.iget(&mut buf, 1, 2, &v, 0, 1, 5, right),
    );
    assert!(matches!(e, Error::OutOfBounds { arg: "dest", .. }));

    // PE numbers, checked before anything else.
    let e = show("put to PE n", shmem.put(&v, 0, &[1], n));
    assert!(
        matches!(e, Error::PeOutOfRange { routine: "shmem_put", pe, npes } if pe == n && npes == n)
    );
    let e = show("get from PE max", shmem.get(&mut buf, &v, 0, usize::MAX));
    assert!(matches!(e, Error::PeOutOfRange { .. }));
    let e = show("g from PE n", shmem.g(&v, 0, n));
    assert!(matches!(e, Error::PeOutOfRange { .. }));
    let e = show("iput to PE n", shmem.iput(&v, 0, 1, &buf, 0, 1, 2, n + 3));
    assert!(matches!(e, Error::PeOutOfRange { .. }));

    // Atomics, signals, p2p.
    let a = shmem.alloc_atomic(0u64)?;
    let e = show("atomic on PE n", a.atomic_fetch_add(1, n));
    assert!(matches!(
        e,
        Error::PeOutOfRange {
            routine: "shmem_atomic_fetch_add",
            ..
        }
    ));
    let av = shmem.alloc_atomic_vec(4, 0i32)?;
    let e = show("atomic vec index", av.atomic_set(4, 1, right));
    assert!(matches!(e, Error::OutOfBounds { .. }));
    let e = show(
        "put_signal bounds",
        shmem.put_signal(&v, 7, &[1, 2], &a, 1, SignalOp::Set, right),
    );
    assert!(matches!(
        e,
        Error::OutOfBounds {
            routine: "shmem_put_signal",
            ..
        }
    ));
    let e = show(
        "put_signal PE",
        shmem.put_signal(&v, 0, &[1, 2], &a, 1, SignalOp::Set, n),
    );
    assert!(matches!(e, Error::PeOutOfRange { .. }));
    let e = show("signal_add PE", shmem.signal_add(&a, 1, n));
    assert!(matches!(e, Error::PeOutOfRange { .. }));
    let e = show(
        "mask too short",
        shmem.wait_until_all(&av, Some(&[true; 3]), Cmp::Eq, 0),
    );
    assert!(matches!(
        e,
        Error::LengthMismatch {
            arg: "include",
            expected: 4,
            got: 3,
            ..
        }
    ));
    let e = show(
        "values too long",
        shmem.test_any_vector(&av, None, Cmp::Eq, &[0; 5]),
    );
    assert!(matches!(
        e,
        Error::LengthMismatch {
            arg: "cmp_values",
            expected: 4,
            got: 5,
            ..
        }
    ));

    // Non-blocking scope.
    let mut dst = [0u32; 4];
    let src = [1u32; 4];
    let e = shmem.nbi_scope(|s| {
        let e1 = show("put_nbi bounds", s.put_nbi(&v, 6, &src, right));
        assert!(matches!(
            e1,
            Error::OutOfBounds {
                routine: "shmem_put_nbi",
                ..
            }
        ));
        show("get_nbi PE", s.get_nbi(&mut dst, &v, 0, n).map(|_| ()))
    });
    assert!(matches!(
        e,
        Error::PeOutOfRange {
            routine: "shmem_get_nbi",
            ..
        }
    ));

    // Failed calls had no effect: nobody wrote into `v`.
    shmem.barrier_all();
    assert_eq!(v.to_vec(), [7; 8]);
    assert_eq!(a.load(), 0);

    // Heap exhaustion is an error on every PE (collective), and the heap stays usable.
    let e = show("huge alloc", shmem.alloc_zeroed::<u8>(1 << 40));
    assert!(matches!(e, Error::Core(_)));
    let e = show("overflowing alloc", shmem.alloc(usize::MAX, 0u64));
    assert!(matches!(e, Error::InvalidArgument { .. }));
    let w = shmem.alloc(4, 1u8)?;
    assert_eq!(w.to_vec(), [1; 4]);

    // Zero-length transfers are no-ops, even at the end.
    shmem.put(&v, 8, &[], right)?;
    shmem.get(&mut [], &v, 8, right)?;
    shmem.iput(&v, 100, 100, &[], 0, 1, 0, right)?;

    println!("ok api_errors pe={me}");
    Ok(())
}
