//! Safe API: team collectives on WORLD and on a split team (even / odd world PEs, each
//! running the same suite), every reduction operator on i32, u64, f64 and Complex<f64>
//! (in place and disjoint), zero elements, size-check errors, and back-to-back
//! collectives on the same and on overlapping teams with no barrier in between.
//! Set `SHMEM_REDUCE_ALGORITHM` etc. to pick algorithms.
//!
//! Prints `ok api_coll pe=<me>`.

use rshmem::{
    And, Complex, Error, Max, Min, Or, Prod, Shmem, Sum, SymVec, TeamConfig, TeamRef, Xor,
};

type C = Complex<f64>;

fn c(re: f64, im: f64) -> C {
    Complex { re, im }
}

fn assert_oob<T: std::fmt::Debug>(r: rshmem::Result<T>, routine: &str, arg: &str) {
    match r {
        Err(Error::OutOfBounds {
            routine: r, arg: a, ..
        }) if r == routine && a == arg => {}
        other => panic!("{routine}: expected OutOfBounds on {arg}, got {other:?}"),
    }
}

fn assert_invalid<T: std::fmt::Debug>(r: rshmem::Result<T>, routine: &str) {
    match r {
        Err(Error::InvalidArgument { routine: r, .. }) if r == routine => {}
        other => panic!("{routine}: expected InvalidArgument, got {other:?}"),
    }
}

/// Buffers sized for the world (so every PE allocates the same), used by `team`.
struct Bufs<'s> {
    a: SymVec<'s, i64>,
    b: SymVec<'s, i64>,
    bytes: SymVec<'s, u8>,
    i: SymVec<'s, i32>,
    i2: SymVec<'s, i32>,
    u: SymVec<'s, u64>,
    u2: SymVec<'s, u64>,
    f: SymVec<'s, f64>,
    f2: SymVec<'s, f64>,
    c: SymVec<'s, C>,
    c2: SymVec<'s, C>,
}

const K: usize = 3;

fn bufs(shmem: &Shmem) -> rshmem::Result<Bufs<'_>> {
    let w = shmem.n_pes();
    let big = 3 * K * w * (w + 1);
    Ok(Bufs {
        a: shmem.alloc(big, 0)?,
        b: shmem.alloc(big, 0)?,
        bytes: shmem.alloc(w, 0)?,
        i: shmem.alloc(K, 0)?,
        i2: shmem.alloc(K, 0)?,
        u: shmem.alloc(K, 0)?,
        u2: shmem.alloc(K, 0)?,
        f: shmem.alloc(K, 0.0)?,
        f2: shmem.alloc(K, 0.0)?,
        c: shmem.alloc(K, c(0.0, 0.0))?,
        c2: shmem.alloc(K, c(0.0, 0.0))?,
    })
}

/// Every collective on `t` with asserted values. Only collectives (no allocation).
fn suite(t: &TeamRef, b: &Bufs, salt: i64) -> rshmem::Result<()> {
    let (me, n) = (t.my_pe(), t.n_pes());
    let mi = me as i64;
    let ni = n as i64;
    let val = |r: i64, i: i64| salt * 1_000_000 + r * 1000 + i;

    // Broadcast from every root, disjoint and in place; elements past nelems untouched.
    for root in 0..n {
        (0..K).for_each(|i| b.a.store(i, val(mi, i as i64)));
        b.b.fill_local(-7);
        t.broadcast(&b.b, &b.a, K, root)?;
        for i in 0..K {
            assert_eq!(
                b.b.load(i),
                val(root as i64, i as i64),
                "broadcast root {root}"
            );
        }
        assert_eq!(b.b.load(K), -7, "broadcast wrote past nelems");
        t.broadcast(&b.a, &b.a, K - 1, root)?;
        assert_eq!(b.a.load(1), val(root as i64, 1), "in-place broadcast");
        assert_eq!(b.a.load(K - 1), val(mi, K as i64 - 1));
    }

    // Fcollect.
    (0..K).for_each(|i| b.a.store(i, val(mi, i as i64)));
    b.b.fill_local(-1);
    t.fcollect(&b.b, &b.a, K)?;
    for r in 0..n {
        for i in 0..K {
            assert_eq!(b.b.load(r * K + i), val(r as i64, i as i64), "fcollect");
        }
    }
    assert_eq!(b.b.load(n * K), -1);

    // Collect: rank r contributes r % 3 elements (some contribute none).
    let cnt = |r: usize| r % 3;
    (0..cnt(me)).for_each(|i| b.a.store(i, val(mi, i as i64)));
    b.b.fill_local(-1);
    t.collect(&b.b, &b.a, cnt(me))?;
    let mut at = 0;
    for r in 0..n {
        for i in 0..cnt(r) {
            assert_eq!(b.b.load(at), val(r as i64, i as i64), "collect");
            at += 1;
        }
    }
    assert_eq!(b.b.load(at), -1);
    // Alltoall: block j of rank i → block i of rank j.
    let blk = |i: i64, j: i64, e: i64| val(i, j * 10 + e);
    for j in 0..n {
        for e in 0..K {
            b.a.store(j * K + e, blk(mi, j as i64, e as i64));
        }
    }
    b.b.fill_local(-1);
    t.alltoall(&b.b, &b.a, K)?;
    for i in 0..n {
        for e in 0..K {
            assert_eq!(b.b.load(i * K + e), blk(i as i64, mi, e as i64), "alltoall");
        }
    }
    assert_eq!(b.b.load(n * K), -1);

    // Alltoalls, strides dst 3, sst 2, 2 elements per block.
    let per = 2;
    for k in 0..n * per {
        b.a.store(k * 2, val(mi, k as i64));
        b.a.store(k * 2 + 1, -5);
    }
    b.b.fill_local(-1);
    t.alltoalls(&b.b, &b.a, 3, 2, per)?;
    for i in 0..n {
        for e in 0..per {
            let k = i * per + e;
            assert_eq!(
                b.b.load(k * 3),
                val(i as i64, (me * per + e) as i64),
                "alltoalls"
            );
            assert_eq!(b.b.load(k * 3 + 1), -1, "alltoalls gap");
        }
    }

    // Reductions, i32: every operator, disjoint then in place.
    let iv = |r: i64, i: usize| ((r + 1) * (i as i64 + 2) + salt) as i32;
    let ranks = || 0..ni;
    let fold = |f: &dyn Fn(i32, i32) -> i32, i: usize| ranks().map(|r| iv(r, i)).reduce(f).unwrap();
    type IOp = fn(i32, i32) -> i32;
    let int_ops: [(&str, IOp); 7] = [
        ("sum", |a, b| a.wrapping_add(b)),
        ("prod", |a, b| a.wrapping_mul(b)),
        ("min", |a, b| a.min(b)),
        ("max", |a, b| a.max(b)),
        ("and", |a, b| a & b),
        ("or", |a, b| a | b),
        ("xor", |a, b| a ^ b),
    ];
    for (k, (name, f)) in int_ops.iter().enumerate() {
        for in_place in [false, true] {
            (0..K).for_each(|i| b.i.store(i, iv(mi, i)));
            b.i2.fill_local(-99);
            let dest = if in_place { &b.i } else { &b.i2 };
            match k {
                0 => t.reduce(Sum, dest, &b.i, K)?,
                1 => t.reduce(Prod, dest, &b.i, K)?,
                2 => t.reduce(Min, dest, &b.i, K)?,
                3 => t.reduce(Max, dest, &b.i, K)?,
                4 => t.reduce(And, dest, &b.i, K)?,
                5 => t.reduce(Or, dest, &b.i, K)?,
                _ => t.reduce(Xor, dest, &b.i, K)?,
            }
            for i in 0..K {
                assert_eq!(dest.load(i), fold(f, i), "i32 {name} in_place={in_place}");
            }
            if !in_place {
                assert_eq!(b.i.load(0), iv(mi, 0), "source changed by {name}");
            }
        }
    }

    // u64: every operator, in place via reduce_in_place.
    let uv = |r: u64, i: usize| (r + 3) << (i * 7) | (salt as u64 & 0xf);
    let nu = n as u64;
    let ufold = |f: fn(u64, u64) -> u64, i: usize| (0..nu).map(|r| uv(r, i)).reduce(f).unwrap();
    type UOp = fn(u64, u64) -> u64;
    let u_ops: [UOp; 7] = [
        |a, b| a.wrapping_add(b),
        |a, b| a.wrapping_mul(b),
        |a, b| a.min(b),
        |a, b| a.max(b),
        |a, b| a & b,
        |a, b| a | b,
        |a, b| a ^ b,
    ];
    for (k, f) in u_ops.iter().enumerate() {
        (0..K).for_each(|i| b.u.store(i, uv(me as u64, i)));
        match k {
            0 => t.reduce_in_place(Sum, &b.u, K)?,
            1 => t.reduce_in_place(Prod, &b.u, K)?,
            2 => t.reduce_in_place(Min, &b.u, K)?,
            3 => t.reduce_in_place(Max, &b.u, K)?,
            4 => t.reduce_in_place(And, &b.u, K)?,
            5 => t.reduce_in_place(Or, &b.u, K)?,
            _ => t.reduce_in_place(Xor, &b.u, K)?,
        }
        for i in 0..K {
            assert_eq!(b.u.load(i), ufold(*f, i), "u64 op {k}");
        }
        // Disjoint too.
        (0..K).for_each(|i| b.u.store(i, uv(me as u64, i)));
        match k {
            0 => t.reduce(Sum, &b.u2, &b.u, K)?,
            3 => t.reduce(Max, &b.u2, &b.u, K)?,
            6 => t.reduce(Xor, &b.u2, &b.u, K)?,
            _ => continue,
        }
        for i in 0..K {
            assert_eq!(b.u2.load(i), ufold(*f, i), "u64 disjoint op {k}");
        }
    }

    // f64: sum, prod, min, max (small integers and halves: exact in any order).
    let fv = |r: f64, i: usize| (r - 1.5) * (i as f64 + 1.0) + salt as f64;
    let ffold =
        |f: fn(f64, f64) -> f64, i: usize| (0..n).map(|r| fv(r as f64, i)).reduce(f).unwrap();
    type FOp = fn(f64, f64) -> f64;
    let f_ops: [FOp; 4] = [|a, b| a + b, |a, b| a * b, f64::min, f64::max];
    for (k, f) in f_ops.iter().enumerate() {
        for in_place in [false, true] {
            (0..K).for_each(|i| b.f.store(i, fv(me as f64, i)));
            let dest = if in_place { &b.f } else { &b.f2 };
            match k {
                0 => t.reduce(Sum, dest, &b.f, K)?,
                1 => t.reduce(Prod, dest, &b.f, K)?,
                2 => t.reduce(Min, dest, &b.f, K)?,
                _ => t.reduce(Max, dest, &b.f, K)?,
            }
            for i in 0..K {
                assert_eq!(dest.load(i), ffold(*f, i), "f64 op {k} in_place={in_place}");
            }
        }
    }

    // Complex<f64>: sum and prod.
    let cv = |r: usize, i: usize| c(r as f64 + 1.0, (i as f64) - (r % 2) as f64);
    let cmul = |a: C, b: C| c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
    let cadd = |a: C, b: C| c(a.re + b.re, a.im + b.im);
    for in_place in [false, true] {
        for prod in [false, true] {
            (0..K).for_each(|i| b.c.store(i, cv(me, i)));
            let dest = if in_place { &b.c } else { &b.c2 };
            if prod {
                t.reduce(Prod, dest, &b.c, K)?;
            } else {
                t.reduce(Sum, dest, &b.c, K)?;
            }
            for i in 0..K {
                let want = (0..n)
                    .map(|r| cv(r, i))
                    .reduce(|a, b| if prod { cmul(a, b) } else { cadd(a, b) })
                    .unwrap();
                assert_eq!(
                    dest.load(i),
                    want,
                    "complex prod={prod} in_place={in_place}"
                );
            }
        }
    }

    // Scans.
    (0..K).for_each(|i| b.a.store(i, val(mi, i as i64)));
    b.b.fill_local(-1);
    t.sum_inscan(&b.b, &b.a, K)?;
    for i in 0..K {
        let want: i64 = (0..=mi).map(|r| val(r, i as i64)).sum();
        assert_eq!(b.b.load(i), want, "inscan");
    }
    t.sum_exscan(&b.b, &b.a, K)?;
    for i in 0..K {
        let want: i64 = (0..mi).map(|r| val(r, i as i64)).sum();
        assert_eq!(b.b.load(i), want, "exscan");
    }
    (0..K).for_each(|i| b.c.store(i, cv(me, i)));
    t.sum_inscan(&b.c2, &b.c, K)?;
    let want = (0..=me).map(|r| cv(r, 1)).fold(c(0.0, 0.0), cadd);
    assert_eq!(b.c2.load(1), want, "complex inscan");

    // Zero elements: no effect, no error.
    b.b.fill_local(-3);
    t.broadcast(&b.b, &b.a, 0, 0)?;
    t.fcollect(&b.b, &b.a, 0)?;
    t.collect(&b.b, &b.a, 0)?;
    t.alltoall(&b.b, &b.a, 0)?;
    t.alltoalls(&b.b, &b.a, 1, 1, 0)?;
    t.reduce(Sum, &b.b, &b.a, 0)?;
    t.sum_inscan(&b.b, &b.a, 0)?;
    t.sum_exscan(&b.b, &b.a, 0)?;
    assert!(
        b.b.to_vec().iter().all(|&x| x == -3),
        "zero-element call wrote"
    );

    // Size checks: every member fails the same way, before any communication.
    let big = b.a.len();
    assert_oob(
        t.broadcast(&b.b, &b.i2.shmem().alloc(0, 0i64)?, 1, 0),
        "shmem_broadcast",
        "source",
    );
    assert_oob(
        t.broadcast(&b.b, &b.a, big + 1, 0),
        "shmem_broadcast",
        "source",
    );
    match t.broadcast(&b.b, &b.a, 1, n) {
        Err(Error::PeOutOfRange {
            routine: "shmem_broadcast",
            pe,
            npes,
        }) => {
            assert_eq!((pe, npes), (n, n))
        }
        other => panic!("broadcast root n: {other:?}"),
    }
    if n > 1 {
        assert_oob(t.fcollect(&b.i2, &b.i, K), "shmem_fcollect", "dest");
        assert_oob(
            t.alltoalls(&b.i2, &b.i, 1, K, 1),
            "shmem_alltoalls",
            "source",
        );
    }
    assert_invalid(t.fcollect(&b.a, &b.a, 1), "shmem_fcollect");
    assert_invalid(t.alltoall(&b.a, &b.a, 1), "shmem_alltoall");
    assert_invalid(t.alltoalls(&b.b, &b.a, 0, 1, 1), "shmem_alltoalls");
    assert_oob(
        t.reduce(Sum, &b.i2, &b.i, K + 1),
        "shmem_int32_sum_reduce",
        "source",
    );
    assert_oob(
        t.reduce(Xor, &b.u2, &b.u, K + 1),
        "shmem_uint64_xor_reduce",
        "source",
    );
    assert_oob(
        t.reduce_in_place(Prod, &b.c, K + 1),
        "shmem_complexd_prod_reduce",
        "source",
    );
    assert_invalid(t.sum_inscan(&b.a, &b.a, 1), "shmem_int64_sum_inscan");
    assert_oob(
        t.sum_exscan(&b.f2, &b.f, K + 1),
        "shmem_double_sum_exscan",
        "source",
    );
    assert_oob(t.collect(&b.i2, &b.i, K + 1), "shmem_collect", "source");
    // A collect dest too short for the total: all members agree on the error.
    if n > 1 {
        (0..K).for_each(|i| b.i.store(i, 1));
        match t.collect(&b.i2, &b.i, 2) {
            Err(Error::InvalidArgument {
                routine: "shmem_collect",
                arg: "dest",
                ..
            }) => {}
            other => panic!("shmem_collect: expected a dest error on every member, got {other:?}"),
        }
    }
    // And the team still works.
    b.i.store(0, 1);
    t.reduce_in_place(Sum, &b.i, 1)?;
    assert_eq!(b.i.load(0), n as i32);
    Ok(())
}

/// Collect of single bytes into a dest of exactly `n` bytes (the smallest exchange).
fn byte_collect(t: &TeamRef, src: &SymVec<u8>, dest: &SymVec<u8>) -> rshmem::Result<()> {
    src.store(0, 10 + t.my_pe() as u8);
    t.collect(dest, src, 1)?;
    let n = t.n_pes();
    for r in 0..n {
        assert_eq!(dest.load(r), 10 + r as u8, "byte collect");
    }
    Ok(())
}

fn main() -> rshmem::Result<()> {
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let world = shmem.world();
    let cfg = TeamConfig::default();

    let b = bufs(&shmem)?;
    suite(&world, &b, 1)?;
    let bsrc = shmem.alloc(1, 0u8)?;
    byte_collect(&world, &bsrc, &b.bytes)?;

    // Even and odd world PEs: each team runs the same suite at once.
    let parity = world
        .split_color((me % 2) as i32, 0, &cfg)?
        .expect("every PE has a color");
    assert_eq!(parity.my_pe(), me / 2);
    suite(&parity, &b, 2)?;
    byte_collect(&parity, &bsrc, &b.bytes)?;

    // Back to back, same team and overlapping teams (world, parity, reversed world),
    // no barriers: values change every round so stale results would show.
    let rev = world.split_strided(n - 1, -1, n, &cfg)?.expect("everyone");
    let (p1, p2) = (shmem.alloc(2, 0i64)?, shmem.alloc(2, 0i64)?);
    let (q1, q2) = (shmem.alloc(n, 0u64)?, shmem.alloc(n, 0u64)?);
    let (r1, r2) = (shmem.alloc(1, 0u32)?, shmem.alloc(1, 0u32)?);
    for round in 0..30i64 {
        // World: sum of (me + round).
        p1.store(0, me as i64 + round);
        world.reduce(Sum, &p2, &p1, 1)?;
        let ni = n as i64;
        assert_eq!(p2.load(0), ni * (ni - 1) / 2 + ni * round, "round {round}");
        // Reversed world: fcollect of world PE numbers, in reversed order.
        q1.store(0, (me as u64) << 8 | round as u64);
        rev.fcollect(&q2, &q1, 1)?;
        for r in 0..n {
            assert_eq!(q2.load(r), ((n - 1 - r) as u64) << 8 | round as u64);
        }
        // Parity team: broadcast from a root that moves.
        let root = round as usize % parity.n_pes();
        r1.store(0, (me as u32) * 100 + round as u32);
        parity.broadcast(&r2, &r1, 1, root)?;
        let root_world = parity.world_pe(root).unwrap();
        assert_eq!(r2.load(0), root_world as u32 * 100 + round as u32);
        // World again, in place, right after.
        world.reduce_in_place(Max, &p1, 1)?;
        assert_eq!(p1.load(0), ni - 1 + round);
    }

    drop((p1, p2, q1, q2, r1, r2));
    drop(rev);
    drop(parity);
    drop(bsrc);
    drop(b);
    println!("ok api_coll pe={me}");
    Ok(())
}
