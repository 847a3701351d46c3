//! Safe API: explicit active sets (the four constructors, made by their members alone,
//! long-lived, overlapping, WORLD-shaped) running blocking and non-blocking collectives,
//! several non-blocking ones in flight on one team and completed in any order, merged
//! with RMA requests, and errors for bad members.
//!
//! Modes: `run` (default) prints `ok api_aset pe=<me>`; `finalized` has the last PE
//! finalize while the others run a non-blocking reduce over every PE: their `wait`
//! returns an error naming it (printed as `err <message>`), then they finalize.

use rshmem::{Max, Shmem, Sum, SymVec, TeamRef};

/// Symmetric buffers, allocated by every PE up front (allocation is collective over
/// WORLD, so a set's members alone cannot allocate).
struct Bufs<'s> {
    src: SymVec<'s, i64>,
    dst: SymVec<'s, i64>,
    big_src: SymVec<'s, u64>,
    big_dst: SymVec<'s, u64>,
    a: SymVec<'s, i64>,
    b: SymVec<'s, i64>,
    c: SymVec<'s, i64>,
    boxed: SymVec<'s, i64>,
}

fn exercise(shmem: &Shmem, bufs: &Bufs<'_>, set: &TeamRef<'_>, pes: &[usize]) {
    let Bufs {
        src,
        dst,
        big_src,
        big_dst,
        a,
        b,
        c,
        boxed,
    } = bufs;
    let me = shmem.my_pe();
    let n = pes.len();
    let rank = pes.iter().position(|&p| p == me).expect("a member");
    assert_eq!((set.my_pe(), set.n_pes()), (rank, n));
    for (r, &p) in pes.iter().enumerate() {
        assert_eq!(set.world_pe(r), Some(p));
    }
    set.sync().unwrap();
    for it in 0..20i64 {
        src.store(0, me as i64 + it);
        set.reduce(Sum, dst, src, 1).unwrap();
        let want: i64 = pes.iter().map(|&p| p as i64 + it).sum();
        assert_eq!(dst.load(0), want);
    }
    src.store(0, rank as i64);
    set.fcollect(dst, src, 1).unwrap();
    assert_eq!(dst.to_vec()[..n], (0..n as i64).collect::<Vec<_>>()[..]);
    for i in 0..5000 {
        big_src.store(i, (i * (rank + 1)) as u64);
    }
    // Non-blocking: three in flight, completed in reverse order, one merged with a put.
    for i in 0..8 {
        a.store(i, rank as i64);
    }
    let right = pes[(rank + 1) % n];
    let mine = [me as i64];
    shmem
        .nbe_scope(|s| -> rshmem::Result<()> {
            let r1 = s.reduce_nbe(set, Sum, big_dst, big_src, 5000)?;
            let r2 = s.reduce_nbe(set, Max, b, a, 8)?;
            let r3 = s.broadcast_nbe(set, c, a, 8, n - 1)?;
            let mut x = 0.0f64;
            for i in 0..10_000 {
                x += (i as f64).sqrt();
            }
            assert!(x > 0.0);
            let mut merged = r3.into_request();
            merged.add(s.put_nbe(boxed, 0, &mine, right)?);
            merged.wait();
            r2.wait()?;
            r1.wait()?;
            Ok(())
        })
        .unwrap();
    assert_eq!(b.to_vec(), [n as i64 - 1; 8]);
    assert_eq!(c.to_vec(), [n as i64 - 1; 8]);
    let tri = (n * (n + 1) / 2) as u64;
    for i in (0..5000).step_by(97) {
        assert_eq!(big_dst.load(i), i as u64 * tri);
    }
    shmem.nbe_scope(|s| s.sync_nbe(set)?.wait()).unwrap();
    assert_eq!(boxed.load(0), pes[(rank + n - 1) % n] as i64);
    // Strided alltoall, non-blocking: logical element k of the block for rank j is
    // src[2k], landing in dst[3k] of rank j (issue 26).
    for i in 0..2 * n {
        src.store(i, (rank * 100 + i) as i64);
    }
    for i in 0..3 * n {
        dst.store(i, -1);
    }
    shmem
        .nbe_scope(|s| s.alltoalls_nbe(set, dst, src, 3, 2, 1)?.wait())
        .unwrap();
    for j in 0..n {
        assert_eq!(
            dst.load(3 * j),
            (j * 100 + 2 * rank) as i64,
            "from rank {j}"
        );
        assert_eq!(dst.load(3 * j + 1), -1);
    }
    set.sync().unwrap();
}

fn main() {
    let shmem = Shmem::init().unwrap();
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let mode = std::env::args().nth(1).unwrap_or_else(|| "run".into());
    if mode == "finalized" {
        let src = shmem.alloc(4, 1i64).unwrap();
        let dst = shmem.alloc(4, 0i64).unwrap();
        shmem.barrier_all();
        if me == n - 1 {
            // Not freed: a free is collective, and would match the others' reduce.
            std::mem::forget((src, dst));
            drop(shmem);
            return;
        }
        let world = shmem.world();
        let r = shmem.nbe_scope(|s| s.reduce_nbe(&world, Sum, &dst, &src, 4)?.wait());
        match r {
            // Then finalize, as a program that handled the error would.
            Err(e) => println!("err {e}"),
            Ok(()) => panic!("a reduce over a finalized PE succeeded"),
        }
        // Not freed: a free is collective, and a PE has left.
        std::mem::forget((src, dst));
        return;
    }
    let bufs = Bufs {
        src: shmem.alloc(64, 0i64).unwrap(),
        dst: shmem.alloc(64, 0i64).unwrap(),
        big_src: shmem.alloc(5000, 0u64).unwrap(),
        big_dst: shmem.alloc(5000, 0u64).unwrap(),
        a: shmem.alloc(8, 0i64).unwrap(),
        b: shmem.alloc(8, 0i64).unwrap(),
        c: shmem.alloc(8, 0i64).unwrap(),
        boxed: shmem.alloc(1, -1i64).unwrap(),
    };
    // Strided, made by the evens alone.
    if me % 2 == 0 {
        let evens = shmem
            .active_set_strided(0, 2, n.div_ceil(2))
            .unwrap()
            .unwrap();
        let pes: Vec<usize> = (0..n).step_by(2).collect();
        exercise(&shmem, &bufs, &evens, &pes);
    }
    shmem.barrier_all();
    // Log-strided (base 2): the odds.
    if n >= 2 {
        let odds = shmem.active_set_log_strided(1, 1, n / 2, 2).unwrap();
        assert_eq!(odds.is_some(), me % 2 == 1);
        if let Some(odds) = odds {
            let pes: Vec<usize> = (1..n).step_by(2).collect();
            exercise(&shmem, &bufs, &odds, &pes);
        }
    }
    shmem.barrier_all();
    // A function: WORLD reversed; a list: {last, 0}.
    let rev = shmem.active_set_from_fn(n, |i| n - 1 - i).unwrap().unwrap();
    let pes: Vec<usize> = (0..n).rev().collect();
    exercise(&shmem, &bufs, &rev, &pes);
    drop(rev);
    if n >= 2 && (me == 0 || me == n - 1) {
        let pair = shmem.active_set_from_list(&[n - 1, 0]).unwrap().unwrap();
        exercise(&shmem, &bufs, &pair, &[n - 1, 0]);
    }
    shmem.barrier_all();
    // WORLD's members: WORLD itself; dropping it leaves WORLD alone.
    let all = shmem.active_set_strided(0, 1, n).unwrap().unwrap();
    let pes: Vec<usize> = (0..n).collect();
    exercise(&shmem, &bufs, &all, &pes);
    drop(all);
    assert_eq!(shmem.world().n_pes(), n);
    // Bad members.
    let refused = |r: rshmem::Result<Option<rshmem::Team<'_>>>, why: &str| match r {
        Err(e) => {
            assert!(e.to_string().contains(why), "{e}");
            e
        }
        Ok(_) => panic!("accepted: {why}"),
    };
    // The documented variants (issue 26), not `Error::Core`.
    let e = refused(
        shmem.active_set_from_list(&[0, n]),
        &format!("out of range (valid PEs are 0 to {})", n - 1),
    );
    assert!(matches!(e, rshmem::Error::PeOutOfRange { .. }), "{e:?}");
    let e = refused(shmem.active_set_strided(0, 1, 0), "at least one PE");
    assert!(
        matches!(e, rshmem::Error::InvalidArgument { arg: "PE_size", .. }),
        "{e:?}"
    );
    if n >= 2 {
        let e = refused(shmem.active_set_from_list(&[1, 1]), "names a PE twice");
        assert!(matches!(e, rshmem::Error::InvalidArgument { .. }), "{e:?}");
    }
    // barrier_all_nbe: a put before it is delivered once it completes (issue 26).
    bufs.boxed.store(0, -1);
    shmem.barrier_all();
    let right = (me + 1) % n;
    let mine = [me as i64 + 1000];
    shmem
        .nbe_scope(|s| {
            s.put_nbe(&bufs.boxed, 0, &mine, right)?.wait();
            s.barrier_all_nbe()?.wait()
        })
        .unwrap();
    assert_eq!(bufs.boxed.load(0), ((me + n - 1) % n) as i64 + 1000);
    shmem.barrier_all();
    println!("ok api_aset pe={me}");
}
