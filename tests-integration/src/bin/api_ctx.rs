//! Safe API: contexts, thread levels and explicit non-blocking requests, run under
//! `oshrun`: `api_ctx <mode> [arg]` with mode
//!
//! - `basic`: every context method (RMA, blocked/strided RMA, every AMO class, signals,
//!   fence/quiet, nbi and nbe scopes, errors) with its results checked, on the default
//!   context, on world contexts of each mode, and on contexts of split teams (the evens,
//!   and the world reversed) whose PE numbers are team ranks checked against the team;
//! - `level <single|funneled|serialized|multiple>`: what each thread level allows (calls
//!   from another thread, shared contexts);
//! - `threads <t>`: under THREAD_MULTIPLE, `t` threads each with a private context put
//!   into, add to and get from their own region of every PE (blocking, nbi and nbe);
//!   then `t` threads share one `Shared` context, then the default context, then a
//!   serialized context behind a mutex, then team contexts moved into threads; every
//!   value checked;
//! - `isolation`: with the copy engine stopped, a quiet on context B (and on the
//!   default context) returns while a large put_nbi of context A is pending and
//!   undelivered, and an nbe request of B stays incomplete; once resumed, A's quiet and
//!   the request's wait deliver;
//! - `nbe`: put/get/fetching-AMO requests to several PEs merged (typed and as a ReqSet),
//!   operations joining live requests, test until complete, reuse across rounds,
//!   forgotten requests and a panicking scope completed by the scope's exit, nbe on a
//!   team context;
//! - `churn`: 100,000 context create/destroy cycles and 100,000 requests with RSS flat.
//!
//! Each mode prints `ok <mode> pe=<me>`; every check is an assertion.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use rshmem::{
    Ctx, CtxMode, Error, Private, ReqSet, Serialized, Shared, Shmem, SignalOp, SymAtomic,
    SymAtomicVec, SymVec, TeamConfig, ThreadLevel,
};

/// Large enough for the copy engine when SHMEM_COPY_ENGINE_THRESHOLD=4K.
const BIG: usize = 1 << 20;

/// Deterministic contents of a block sent by `pe` in case `case`.
fn fill(pe: usize, case: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(31) ^ (pe as u64) << 3 ^ case) as u8)
        .collect()
}

#[track_caller]
fn same(got: &[u8], want: &[u8], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: first difference at byte {i}: got {}, want {}",
            got[i], want[i]
        );
    }
}

/// The symmetric objects `exercise` works on (allocated collectively on every PE).
struct Bufs<'s> {
    v: SymVec<'s, u64>,
    w: SymVec<'s, i32>,
    a64: SymAtomic<'s, u64>,
    ai32: SymAtomicVec<'s, i32>,
    af: SymAtomic<'s, f64>,
    sig: SymAtomic<'s, u64>,
    sig2: SymAtomic<'s, u64>,
    big: SymVec<'s, u8>,
}

impl<'s> Bufs<'s> {
    fn new(shmem: &'s Shmem) -> rshmem::Result<Self> {
        Ok(Bufs {
            v: shmem.alloc(16, 0u64)?,
            w: shmem.alloc(8, 0i32)?,
            a64: shmem.alloc_atomic(0u64)?,
            ai32: shmem.alloc_atomic_vec(4, 0i32)?,
            af: shmem.alloc_atomic(0.0f64)?,
            sig: shmem.alloc_atomic(0u64)?,
            sig2: shmem.alloc_atomic(0u64)?,
            big: shmem.alloc(BIG / 4, 0u8)?,
        })
    }

    fn reset(&self) {
        self.v.fill_local(0);
        self.w.fill_local(0);
        self.a64.store(0);
        (0..4).for_each(|i| self.ai32.store(i, 0));
        self.af.store(0.0);
        self.sig.store(0);
        self.sig2.store(0);
        self.big.fill_local(0);
    }
}

/// Every operation of `ctx` towards the next rank of its team, results checked; `sync`
/// completes and synchronizes the members (who all run this together).
fn exercise<M: CtxMode>(ctx: &Ctx<'_, M>, b: &Bufs<'_>, sync: &dyn Fn(), tag: u64) {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    // The routine named in errors: the C name of the default or the created context.
    let named = |default: &'static str, created: &'static str| {
        if ctx.is_default() {
            default
        } else {
            created
        }
    };
    b.reset();
    sync();

    // RMA towards the right neighbour.
    ctx.put(&b.v, 0, &[tag, me as u64, 1, 2], right).unwrap();
    ctx.p(&b.v, 4, tag + 100 + me as u64, right).unwrap();
    ctx.iput(&b.v, 5, 2, &[7, 8, 9], 0, 1, 3, right).unwrap();
    ctx.ibput(&b.w, 0, 4, &[1, 2, 3, 4], 0, 2, 2, 2, right)
        .unwrap();

    // Every AMO on the right neighbour's words (which only this PE touches), mirrored.
    let a = &b.a64;
    let mut x = 10u64;
    ctx.atomic_set(a, x, right).unwrap();
    assert_eq!(ctx.atomic_fetch(a, right).unwrap(), x);
    assert_eq!(ctx.atomic_swap(a, 20, right).unwrap(), x);
    x = 20;
    assert_eq!(ctx.atomic_compare_swap(a, 20, 30, right).unwrap(), x);
    x = 30;
    assert_eq!(ctx.atomic_compare_swap(a, 0, 99, right).unwrap(), x);
    assert_eq!(ctx.atomic_fetch_inc(a, right).unwrap(), x);
    x += 1;
    ctx.atomic_inc(a, right).unwrap();
    x += 1;
    assert_eq!(ctx.atomic_fetch_add(a, 5, right).unwrap(), x);
    x += 5;
    ctx.atomic_add(a, tag, right).unwrap();
    x += tag;
    assert_eq!(ctx.atomic_fetch_and(a, !0xf, right).unwrap(), x);
    x &= !0xf;
    ctx.atomic_and(a, !0x10, right).unwrap();
    x &= !0x10;
    assert_eq!(ctx.atomic_fetch_or(a, 0x100, right).unwrap(), x);
    x |= 0x100;
    ctx.atomic_or(a, 0x3, right).unwrap();
    x |= 0x3;
    assert_eq!(ctx.atomic_fetch_xor(a, 0x1, right).unwrap(), x);
    x ^= 0x1;
    ctx.atomic_xor(a, 0x1000, right).unwrap();
    x ^= 0x1000;
    // A word of a vector, signed.
    let w2 = b.ai32.at(2);
    assert_eq!(ctx.atomic_fetch_add(w2, -5, right).unwrap(), 0);
    assert_eq!(ctx.atomic_fetch_xor(w2, 1, right).unwrap(), -5);
    ctx.atomic_add(b.ai32.at(3), me as i32 + 1, right).unwrap();
    // Floats: the extended class.
    ctx.atomic_set(&b.af, 1.5, right).unwrap();
    assert_eq!(ctx.atomic_swap(&b.af, 2.5, right).unwrap(), 1.5);
    assert_eq!(ctx.atomic_fetch(&b.af, right).unwrap(), 2.5);

    // Signals, ordered by fences.
    ctx.signal_set(&b.sig, 5, right).unwrap();
    ctx.fence();
    ctx.put_signal(
        &b.v,
        10,
        &[tag + 1, tag + 2],
        &b.sig,
        1,
        SignalOp::Add,
        right,
    )
    .unwrap();
    ctx.fence();
    ctx.signal_add(&b.sig, 2, right).unwrap();

    // Gets of what this PE put (complete after the context's quiet).
    ctx.quiet();
    let mut got = [0u64; 4];
    ctx.get(&mut got, &b.v, 0, right).unwrap();
    assert_eq!(got, [tag, me as u64, 1, 2]);
    assert_eq!(ctx.g(&b.v, 4, right).unwrap(), tag + 100 + me as u64);
    let mut got3 = [0u64; 3];
    ctx.iget(&mut got3, 0, 1, &b.v, 5, 2, 3, right).unwrap();
    assert_eq!(got3, [7, 8, 9]);
    let mut got4 = [0i32; 4];
    ctx.ibget(&mut got4, 0, 2, &b.w, 0, 4, 2, 2, right).unwrap();
    assert_eq!(got4, [1, 2, 3, 4]);

    // Implicit non-blocking operations, completed by the scope.
    let bigsrc = fill(me, tag, b.big.len());
    let sigdata = [tag + 4];
    let mut back = [0u64; 2];
    let mut f = [0i32; 8];
    ctx.nbi_scope(|s| {
        s.put_nbi(&b.big, 0, &bigsrc, right).unwrap();
        let g = s.get_nbi(&mut back, &b.v, 0, right).unwrap();
        assert_eq!(g.wait(), &[tag, me as u64]);
        let [f0, f1, f2, f3, f4, f5, f6, f7] = &mut f;
        let w0 = b.ai32.at(0);
        let r0 = s.atomic_fetch_nbi(f0, w0, right).unwrap();
        assert_eq!(r0.wait(), 0);
        s.atomic_swap_nbi(f1, w0, 4, right).unwrap();
        s.atomic_compare_swap_nbi(f2, w0, 4, 6, right).unwrap();
        s.atomic_fetch_inc_nbi(f3, w0, right).unwrap();
        s.atomic_fetch_add_nbi(f4, w0, 3, right).unwrap();
        s.atomic_fetch_and_nbi(f5, w0, 0xe, right).unwrap();
        s.atomic_fetch_or_nbi(f6, w0, 0x10, right).unwrap();
        s.atomic_fetch_xor_nbi(f7, w0, 0x1, right).unwrap();
        s.fence();
        s.put_signal_nbi(&b.v, 12, &sigdata, &b.sig2, 3, SignalOp::Set, right)
            .unwrap();
        s.quiet();
    });
    assert_eq!(f, [0, 0, 4, 6, 7, 10, 10, 0x1a]);

    // Explicit non-blocking operations.
    let one = [tag + 3];
    let mut two = [0u64; 2];
    ctx.nbe_scope(|s| {
        let r = s.put_nbe(&b.v, 13, &one, right).unwrap();
        let g = s.get_nbe(&mut two, &b.v, 10, right).unwrap();
        let f = s.atomic_fetch_add_nbe(b.ai32.at(1), 7, right).unwrap();
        let (((), got), old) = r.merge(g).merge(f).wait();
        assert_eq!(got, &[tag + 1, tag + 2]);
        assert_eq!(old, 0);
    });

    // Errors: nothing is done, the routine is named, PEs are the context's.
    let e = ctx.put(&b.v, 0, &[0], n).unwrap_err();
    assert!(
        matches!(e, Error::PeOutOfRange { routine, pe, npes } if routine == named("shmem_put", "shmem_ctx_put") && pe == n && npes == n),
        "{e}"
    );
    let e = ctx.put(&b.v, 15, &[0, 0], right).unwrap_err();
    assert!(
        matches!(e, Error::OutOfBounds { routine, arg: "dest", len: 16, .. } if routine == named("shmem_put", "shmem_ctx_put")),
        "{e}"
    );
    let e = ctx.atomic_add(b.ai32.at(4), 1, right).unwrap_err();
    assert!(
        matches!(e, Error::OutOfBounds { routine, .. } if routine == named("shmem_atomic_add", "shmem_ctx_atomic_add")),
        "{e}"
    );
    let e = ctx
        .ibget(&mut got4, 0, 2, &b.w, 0, 4, 2, 3, right)
        .unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e}");
    assert!(ctx.atomic_fetch(&b.a64, n + 7).is_err());
    ctx.nbe_scope(|s| {
        let e = s.get_nbe(&mut two, &b.v, 0, n).unwrap_err();
        assert!(
            matches!(e, Error::PeOutOfRange { routine, .. } if routine == named("shmemx_get_nbe", "shmemx_ctx_get_nbe")),
            "{e}"
        );
    });

    ctx.quiet();
    sync();
    // What the left neighbour did to this PE.
    let v = b.v.to_vec();
    assert_eq!(v[..5], [tag, left as u64, 1, 2, tag + 100 + left as u64]);
    assert_eq!([v[5], v[7], v[9]], [7, 8, 9]);
    assert_eq!(v[10..14], [tag + 1, tag + 2, tag + 4, tag + 3]);
    assert_eq!(b.w.to_vec(), [1, 2, 0, 0, 3, 4, 0, 0]);
    assert_eq!(b.a64.load(), x);
    assert_eq!(b.ai32.to_vec(), [0x1b, 7, -6, left as i32 + 1]);
    assert_eq!(b.af.load(), 2.5);
    assert_eq!(b.sig.load(), 8);
    assert_eq!(b.sig2.load(), 3);
    let mut big = vec![0u8; b.big.len()];
    b.big.copy_to_local(&mut big);
    same(&big, &fill(left, tag, big.len()), "nbi put");
    sync();
}

fn basic(shmem: &Shmem) -> rshmem::Result<()> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let mut b = Bufs::new(shmem)?;
    let world_sync = || shmem.barrier_all();

    exercise(shmem.default_ctx(), &b, &world_sync, 1000);
    let c = shmem.create_ctx::<Private>(false)?;
    assert!(!c.is_default() && !c.is_nostore() && (c.my_pe(), c.n_pes()) == (me, n));
    exercise(&c, &b, &world_sync, 2000);
    drop(c);
    let c = shmem.create_ctx::<Serialized>(true)?;
    assert!(c.is_nostore());
    exercise(&c, &b, &world_sync, 3000);
    drop(c);
    let e = shmem.create_ctx::<Shared>(false).unwrap_err();
    assert!(matches!(
        e,
        Error::ThreadLevel {
            routine: "shmem_ctx_create",
            required: ThreadLevel::Multiple,
            provided: ThreadLevel::Single,
            ..
        }
    ));

    // A context of the world team (no translation) and of the world reversed.
    let world = shmem.world();
    let c = world.create_ctx::<Private>(false)?;
    exercise(&c, &b, &world_sync, 4000);
    drop(c);
    let rev = world
        .split_strided(n - 1, -1, n, &TeamConfig::default())?
        .unwrap();
    {
        let c = rev.create_ctx::<Serialized>(false)?;
        assert_eq!((c.my_pe(), c.n_pes()), (n - 1 - me, n));
        exercise(&c, &b, &world_sync, 5000);
        // Team rank 0 is world PE n - 1.
        b.v.store(15, me as u64);
        shmem.barrier_all();
        assert_eq!(c.g(&b.v, 15, 0)?, n as u64 - 1);
        shmem.barrier_all();
    }

    // The even PEs: odd ones are not members and sit out (but allocate with everyone).
    let evens = world.split_strided(0, 2, n.div_ceil(2), &TeamConfig::default())?;
    if let Some(t) = &evens {
        let c = t.create_ctx::<Private>(false)?;
        assert_eq!((c.my_pe(), c.n_pes()), (me / 2, n.div_ceil(2)));
        let sync = || {
            c.quiet();
            t.sync().unwrap();
        };
        exercise(&c, &b, &sync, 6000);
        let e = c.p(&b.v, 0, 1, t.n_pes()).unwrap_err();
        assert!(matches!(
            e,
            Error::PeOutOfRange { routine: "shmem_ctx_p", npes, .. } if npes == t.n_pes()
        ));
        // A shareable and a private context, then the team is destroyed (after them:
        // they borrow it).
        let s = t.create_ctx::<Serialized>(false)?;
        s.quiet();
        drop((s, c));
    }
    drop(evens);
    drop(rev);
    shmem.barrier_all();

    // Under SINGLE only this thread communicates: another one gets errors, and no
    // context; purely local calls are fine.
    let vs = &b.v.share();
    let moved = shmem.create_ctx::<Serialized>(false)?;
    std::thread::scope(|s| {
        s.spawn(move || {
            let e = shmem.p(vs, 0, 1, me).unwrap_err();
            assert!(matches!(
                e,
                Error::ThreadLevel {
                    routine: "shmem_p",
                    required: ThreadLevel::Serialized,
                    ..
                }
            ));
            assert!(matches!(
                shmem.create_ctx::<Private>(false),
                Err(Error::ThreadLevel { .. })
            ));
            assert!(matches!(
                moved.put(vs, 0, &[1], me),
                Err(Error::ThreadLevel {
                    routine: "shmem_ctx_put",
                    ..
                })
            ));
            shmem.quiet();
            moved.quiet();
        });
    });
    shmem.p(vs, 0, 1, me)?;
    Ok(())
}

fn level(shmem: &Shmem, arg: &str) -> rshmem::Result<()> {
    let me = shmem.my_pe();
    let mut v = shmem.alloc(4, 0u32)?;
    let vs = &v.share();
    let provided = shmem.query_thread();
    let other_ok = provided >= ThreadLevel::Serialized;
    let shared = shmem.create_ctx::<Shared>(false);
    assert_eq!(shared.is_ok(), provided == ThreadLevel::Multiple, "{arg}");
    drop(shared);
    std::thread::scope(|s| {
        s.spawn(|| {
            let r = shmem.p(vs, 1, 7, me);
            assert_eq!(r.is_ok(), other_ok, "{arg}: {r:?}");
            let c = shmem.create_ctx::<Private>(false);
            assert_eq!(c.is_ok(), other_ok, "{arg}");
            if let Ok(c) = c {
                c.p(vs, 2, 8, me).unwrap();
            }
        });
    });
    let c = shmem.create_ctx::<Private>(false)?;
    c.p(vs, 3, 9, me)?;
    drop(c);
    shmem.p(vs, 0, 6, me)?;
    let want = if other_ok { [6, 7, 8, 9] } else { [6, 0, 0, 9] };
    assert_eq!(v.to_vec(), want, "{arg}");
    shmem.barrier_all();
    Ok(())
}

fn threads(shmem: &Shmem, t: usize) -> rshmem::Result<()> {
    const PER: usize = 64;
    const ADDS: u64 = 50;
    const CHUNK: usize = 16 << 10;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    assert_eq!(shmem.query_thread(), ThreadLevel::Multiple);
    let vals = |w: usize, tid: usize, case: u64| -> Vec<u64> {
        (0..PER as u64)
            .map(|i| case << 56 | (w as u64) << 40 | (tid as u64) << 32 | i)
            .collect()
    };
    let slot = |w: usize, tid: usize| (w * t + tid) * PER;
    // Region (writer, thread) of every PE, per case; one counter per thread; large
    // blocks per (writer, thread) for nbi puts through the copy engine.
    let mut region = shmem.alloc(4 * n * t * PER, 0u64)?;
    let counters = shmem.alloc_atomic_vec(t, 0u64)?;
    let shared_counter = shmem.alloc_atomic(0u64)?;
    let mut big = shmem.alloc(n * t * CHUNK, 0u8)?;
    shmem.barrier_all();
    let (rs, bs) = (&region.share(), &big.share());
    // This PE's copy of a region (through `rs`: `region` is shared with the threads).
    let mine_at = |off: usize| {
        let mut got = vec![0u64; PER];
        shmem.get(&mut got, rs, off, me).unwrap();
        got
    };
    let counters = &counters;
    let case_off = |case: usize| case * n * t * PER;

    // Case 0: a private context per thread; blocking, nbi and nbe operations.
    std::thread::scope(|s| {
        for tid in 0..t {
            s.spawn(move || {
                let ctx = shmem.create_ctx::<Private>(false).unwrap();
                let chunk = fill(me, tid as u64, CHUNK);
                for pe in 0..n {
                    let mine = vals(me, tid, 0);
                    ctx.put(rs, case_off(0) + slot(me, tid), &mine, pe).unwrap();
                    for _ in 0..ADDS {
                        ctx.atomic_add(counters.at(tid), 1, pe).unwrap();
                    }
                    ctx.nbi_scope(|sc| {
                        sc.put_nbi(bs, (me * t + tid) * CHUNK, &chunk, pe).unwrap();
                    });
                    ctx.quiet();
                    let mut got = vec![0u64; PER];
                    ctx.get(&mut got, rs, case_off(0) + slot(me, tid), pe)
                        .unwrap();
                    assert_eq!(got, mine);
                    let mut back = vec![0u8; CHUNK];
                    ctx.nbe_scope(|sc| {
                        let g = sc
                            .get_nbe(&mut back, bs, (me * t + tid) * CHUNK, pe)
                            .unwrap();
                        let f = sc.atomic_fetch_nbe(counters.at(tid), pe).unwrap();
                        let (got, c) = g.merge(f).wait();
                        same(got, &chunk, "private nbe get");
                        assert!(c >= ADDS);
                    });
                }
            });
        }
    });
    shmem.barrier_all();
    for w in 0..n {
        for tid in 0..t {
            let mut got = vec![0u64; PER];
            shmem.get(&mut got, rs, case_off(0) + slot(w, tid), me)?;
            assert_eq!(got, vals(w, tid, 0), "private: writer {w} thread {tid}");
            let mut chunk = vec![0u8; CHUNK];
            shmem.get(&mut chunk, bs, (w * t + tid) * CHUNK, me)?;
            same(&chunk, &fill(w, tid as u64, CHUNK), "private nbi put");
        }
    }
    assert_eq!(counters.to_vec(), vec![ADDS * n as u64; t]);
    shmem.barrier_all();

    // Case 1: one shared context, used by every thread at once.
    let sctx = shmem.create_ctx::<Shared>(false)?;
    let sref = &sctx;
    let shared_counter = &shared_counter;
    std::thread::scope(|s| {
        for tid in 0..t {
            s.spawn(move || {
                for pe in 0..n {
                    let mine = vals(me, tid, 1);
                    sref.nbi_scope(|sc| {
                        sc.put_nbi(rs, case_off(1) + slot(me, tid), &mine, pe)
                            .unwrap();
                    });
                    for _ in 0..ADDS {
                        sref.atomic_fetch_add(shared_counter, 1, pe).unwrap();
                    }
                }
            });
        }
    });
    sctx.quiet();
    shmem.barrier_all();
    drop(sctx);
    for w in 0..n {
        for tid in 0..t {
            assert_eq!(mine_at(case_off(1) + slot(w, tid)), vals(w, tid, 1));
        }
    }
    assert_eq!(shared_counter.load(), ADDS * (n * t) as u64);
    shmem.barrier_all();

    // Case 2: the default context, from every thread (the guard shared by reference).
    std::thread::scope(|s| {
        for tid in 0..t {
            s.spawn(move || {
                for pe in 0..n {
                    let mine = vals(me, tid, 2);
                    shmem.nbe_scope(|sc| {
                        let mut set = ReqSet::new();
                        for (k, half) in mine.chunks(PER / 2).enumerate() {
                            let off = case_off(2) + slot(me, tid) + k * PER / 2;
                            set.add(sc.put_nbe(rs, off, half, pe).unwrap());
                        }
                        set.wait();
                    });
                    counters.atomic_add(tid, 1, pe).unwrap();
                }
            });
        }
    });
    shmem.barrier_all();
    for w in 0..n {
        for tid in 0..t {
            assert_eq!(mine_at(case_off(2) + slot(w, tid)), vals(w, tid, 2));
        }
    }
    assert_eq!(counters.to_vec(), vec![(ADDS + 1) * n as u64; t]);
    shmem.barrier_all();

    // Case 3: a serialized context shared behind a mutex, and serialized contexts of a
    // team (the world reversed: PE numbers are team ranks) moved into the threads.
    let locked = Mutex::new(shmem.create_ctx::<Serialized>(false)?);
    let locked = &locked;
    let world = shmem.world();
    let rev = world
        .split_strided(n - 1, -1, n, &TeamConfig::default())?
        .unwrap();
    let team_ctxs = (0..t)
        .map(|_| rev.create_ctx::<Serialized>(false))
        .collect::<rshmem::Result<Vec<_>>>()?;
    std::thread::scope(|s| {
        for (tid, c) in team_ctxs.into_iter().enumerate() {
            s.spawn(move || {
                assert_eq!(c.my_pe(), n - 1 - me);
                for rank in 0..n {
                    let pe = n - 1 - rank; // the world PE of team rank `rank`
                    let mine = vals(me, tid, 3);
                    c.put(rs, case_off(3) + slot(me, tid), &mine, rank).unwrap();
                    locked
                        .lock()
                        .unwrap()
                        .atomic_add(counters.at(tid), 1, pe)
                        .unwrap();
                }
                assert!(c.put(rs, 0, &[0], n).is_err());
            }); // each context is destroyed on its thread's exit: its puts are complete
        }
    });
    locked.lock().unwrap().quiet();
    shmem.barrier_all();
    for w in 0..n {
        for tid in 0..t {
            assert_eq!(
                region.to_vec()[case_off(3) + slot(w, tid)..][..PER],
                vals(w, tid, 3)
            );
        }
    }
    assert_eq!(counters.to_vec(), vec![(ADDS + 2) * n as u64; t]);
    shmem.barrier_all();

    // Case 4: each thread creates its own private context on the team (through the
    // team's Sync context source) and adds to its counter on every team rank.
    let source = rev.ctx_source();
    std::thread::scope(|s| {
        for tid in 0..t {
            let source = &source;
            s.spawn(move || {
                let c = source.create_ctx::<Private>(false).unwrap();
                assert_eq!(c.my_pe(), n - 1 - me);
                for rank in 0..n {
                    c.atomic_add(counters.at(tid), 1, rank).unwrap();
                }
            });
        }
    });
    shmem.barrier_all();
    assert_eq!(counters.to_vec(), vec![(ADDS + 3) * n as u64; t]);
    shmem.barrier_all();
    Ok(())
}

/// Resumes the copy engine when dropped (so a failed check cannot leave a scope waiting
/// for a stopped engine).
struct Resume;
impl Drop for Resume {
    fn drop(&mut self) {
        rshmem_core::pause_for_tests(false);
    }
}

fn isolation(shmem: &Shmem) -> rshmem::Result<()> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let dst = shmem.alloc(BIG, 0u8)?;
    let dst2 = shmem.alloc(BIG, 0u8)?;
    let a = shmem.create_ctx::<Private>(false)?;
    let b = shmem.create_ctx::<Private>(false)?;
    let data = fill(me, 4, BIG);
    let data2 = fill(me, 5, BIG);
    let peek = |ctx: &Ctx<'_, Private>, v: &SymVec<'_, u8>| {
        let mut p = [0u8; 64];
        ctx.get(&mut p, v, BIG - 64, right).unwrap();
        p
    };
    rshmem_core::pause_for_tests(true);
    a.nbi_scope(|sa| {
        let _resume = Resume;
        sa.put_nbi(&dst, 0, &data, right).unwrap();
        assert!(a.pending(), "a large put_nbi goes to the (stopped) engine");
        b.nbe_scope(|sb| {
            let _resume = Resume;
            let mut r = sb.put_nbe(&dst2, 0, &data2, right).unwrap();
            let _resume_before_r = Resume;
            b.quiet();
            b.fence();
            shmem.quiet();
            shmem.fence();
            assert!(!b.pending());
            assert!(
                a.pending(),
                "quiet on B and on the default context leave A pending"
            );
            assert!(!r.test(), "quiet does not complete an nbe request");
            assert_eq!(peek(&b, &dst), [0; 64], "A's put has not landed");
            assert_eq!(peek(&b, &dst2), [0; 64], "the nbe put has not landed");
            rshmem_core::pause_for_tests(false);
            r.wait();
        });
        a.quiet();
        assert!(!a.pending());
    });
    shmem.barrier_all();
    let mut got = vec![0u8; BIG];
    dst.copy_to_local(&mut got);
    same(&got, &fill(left, 4, BIG), "A's put after A's quiet");
    dst2.copy_to_local(&mut got);
    same(&got, &fill(left, 5, BIG), "the nbe put after its wait");
    shmem.barrier_all();
    Ok(())
}

fn nbe(shmem: &Shmem) -> rshmem::Result<()> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let dst = shmem.alloc(BIG, 0u8)?;
    let src = shmem.alloc(BIG, 0u8)?;
    src.copy_from_local(&fill(me, 6, BIG));
    let lost_dst = shmem.alloc(BIG, 0u8)?;
    let panic_dst = shmem.alloc(BIG, 0u8)?;
    let words = shmem.alloc(n * 64, 0u64)?;
    let counter = shmem.alloc_atomic(0u64)?;
    let flags = shmem.alloc_atomic_vec(n, 0u32)?;
    shmem.barrier_all();
    let data = fill(me, 7, BIG);

    // Kinds and PEs merged into one request, and further operations joining it, on the
    // default context and on a private one.
    let bufs = NbeBufs {
        dst: &dst,
        src: &src,
        counter: &counter,
        flags: &flags,
        data: &data,
    };
    merged_round(shmem.default_ctx(), &bufs, shmem);
    let private = shmem.create_ctx::<Private>(false)?;
    merged_round(&private, &bufs, shmem);
    drop(private);
    if me == 0 {
        assert_eq!(counter.load(), 2 * n as u64, "every fetch_add_nbe landed");
    }
    let from_left = flags.load(left);
    let from_far = flags.load((me + 2 * n - 2) % n);
    if n >= 2 {
        assert_eq!((from_left, from_far), (2, 0x100));
    }

    // Puts to every PE in one set, reused over rounds (complete empties it).
    let rounds: Vec<Vec<u64>> = (0..3u64)
        .map(|r| (0..64).map(|i| r << 32 | (me as u64) << 16 | i).collect())
        .collect();
    shmem.nbe_scope(|s| {
        let mut set = ReqSet::new();
        for (r, vals) in rounds.iter().enumerate() {
            for pe in 0..n {
                for (i, v) in vals.iter().enumerate() {
                    s.put_nbe_with(&mut set, &words, me * 64 + i, std::slice::from_ref(v), pe)
                        .unwrap();
                }
            }
            set.complete();
            assert!(set.test(), "a completed set is empty");
            let mut back = [0u64; 64];
            shmem.get(&mut back, &words, me * 64, right).unwrap();
            assert_eq!(back[..], vals[..], "round {r}");
        }
    });
    shmem.barrier_all();
    for w in 0..n {
        let got: Vec<u64> = words.to_vec()[w * 64..][..64].to_vec();
        assert_eq!(
            got,
            (0..64)
                .map(|i| 2 << 32 | (w as u64) << 16 | i)
                .collect::<Vec<_>>()
        );
    }
    shmem.barrier_all();

    // Forgotten requests are completed by the scope's exit.
    let mut lost = vec![0u8; BIG];
    shmem.nbe_scope(|s| {
        std::mem::forget(s.get_nbe(&mut lost, &src, 0, right).unwrap());
        std::mem::forget(s.put_nbe(&lost_dst, 0, &data, right).unwrap());
        std::mem::forget(s.atomic_fetch_nbe(&counter, 0).unwrap());
    });
    same(&lost, &fill(right, 6, BIG), "a forgotten get");
    // And so are those of a scope that panics.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(|| {
        shmem.nbe_scope(|s| {
            let _r = s.put_nbe(&panic_dst, 0, &data, right).unwrap();
            std::mem::forget(s.put_nbe(&panic_dst, 0, &data, right).unwrap());
            panic!("boom");
        })
    }));
    std::panic::set_hook(hook);
    assert!(r.is_err());
    shmem.barrier_all();
    let mut mine = vec![0u8; BIG];
    lost_dst.copy_to_local(&mut mine);
    same(&mine, &fill(left, 7, BIG), "a forgotten put");
    panic_dst.copy_to_local(&mut mine);
    same(&mine, &fill(left, 7, BIG), "a put of a panicking scope");
    shmem.barrier_all();

    // A team context: PE numbers are ranks of the world reversed.
    let world = shmem.world();
    let rev = world
        .split_strided(n - 1, -1, n, &TeamConfig::default())?
        .unwrap();
    let c = rev.create_ctx::<Private>(false)?;
    let mut got = vec![0u8; 64];
    c.nbe_scope(|s| {
        let g = s.get_nbe(&mut got, &src, 0, 0).unwrap(); // team rank 0 = world PE n - 1
        same(g.wait(), &fill(n - 1, 6, 64), "team nbe get");
        assert!(matches!(
            s.atomic_fetch_nbe(&counter, n),
            Err(Error::PeOutOfRange {
                routine: "shmemx_ctx_atomic_fetch_nbe",
                ..
            })
        ));
    });
    drop(c);
    drop(rev);
    shmem.barrier_all();
    Ok(())
}

/// What `merged_round` works on.
struct NbeBufs<'a, 's> {
    dst: &'a SymVec<'s, u8>,
    src: &'a SymVec<'s, u8>,
    counter: &'a SymAtomic<'s, u64>,
    flags: &'a SymAtomicVec<'s, u32>,
    data: &'a [u8],
}

/// A large put, a large and a small get and a fetch-add, to three PEs, merged into one
/// request; a get joining it; two fetching atomics in a set; checked.
fn merged_round<M: CtxMode>(ctx: &Ctx<'_, M>, b: &NbeBufs<'_, '_>, shmem: &Shmem) {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let (right, left, far) = ((me + 1) % n, (me + n - 1) % n, (me + 2) % n);
    let mut got = vec![0u8; BIG];
    let mut small = [0u8; 16];
    let mut joined = [0u8; 8];
    ctx.nbe_scope(|s| {
        let r1 = s.put_nbe(b.dst, 0, b.data, right).unwrap();
        let r2 = s.get_nbe(&mut got, b.src, 0, far).unwrap();
        let r3 = s.get_nbe(&mut small, b.src, 16, right).unwrap();
        let r4 = s.atomic_fetch_add_nbe(b.counter, 1, 0).unwrap();
        let mut m = r1.merge(r2).merge(r3).merge(r4);
        s.get_nbe_with(&mut m, &mut joined, b.src, 0, left).unwrap();
        let mut set = ReqSet::new();
        set.add(s.atomic_fetch_inc_nbe(b.flags.at(me), right).unwrap());
        set.add(s.atomic_fetch_or_nbe(b.flags.at(me), 0x100, far).unwrap());
        while !m.test() {
            std::thread::yield_now();
        }
        let ((((), got), small), old) = m.wait();
        same(got, &fill(far, 6, BIG), "merged big get (far PE)");
        same(small, &fill(right, 6, 32)[16..], "merged small get");
        assert!(old < 2 * n as u64, "fetch_add_nbe fetched {old}");
        set.wait();
    });
    same(&joined, &fill(left, 6, 8), "a get joined to a live request");
    shmem.barrier_all();
    let mut mine = vec![0u8; BIG];
    b.dst.copy_to_local(&mut mine);
    same(&mine, &fill(left, 7, BIG), "merged big put");
    shmem.barrier_all();
}

fn rss_kib() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn churn(shmem: &Shmem) -> rshmem::Result<()> {
    // Through the network (SHMEM_TRANSPORT=ucx or ofi over TCP) every operation is a round
    // trip of tens of microseconds: fewer cycles, still far more than any per-cycle leak
    // could hide in.
    let over_ucx = std::env::var("SHMEM_TRANSPORT").is_ok_and(|t| t == "ucx" || t == "ofi");
    let cycles: u64 = if over_ucx { 10_000 } else { 100_000 };
    const WARM: u64 = 2_000;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let right = (me + 1) % n;
    let word = shmem.alloc_atomic(0u64)?;
    let v = shmem.alloc(4, 0u64)?;
    shmem.barrier_all();
    let one = [1u64];
    let cycle = |i: u64| {
        // A context created, used and destroyed.
        if i.is_multiple_of(2) {
            let c = shmem.create_ctx::<Private>(i.is_multiple_of(4)).unwrap();
            c.atomic_add(&word, 1, right).unwrap();
        } else {
            let c = shmem.create_ctx::<Serialized>(false).unwrap();
            c.atomic_inc(&word, right).unwrap();
        }
        // A scope with a merged request.
        shmem.nbe_scope(|s| {
            let f = s.atomic_fetch_nbe(&word, right).unwrap();
            let p = s.put_nbe(&v, 0, &one, right).unwrap();
            let (old, ()) = f.merge(p).wait();
            assert!(old > 0);
        });
    };
    (0..WARM).for_each(cycle);
    // Requests in one long scope: their fetch slots and handles are recycled.
    let requests = |count: u64| {
        shmem.nbe_scope(|s| {
            for i in 0..count {
                let mut r = s.atomic_fetch_add_nbe(&word, 1, right).unwrap();
                if i.is_multiple_of(3) {
                    while !r.test() {}
                }
                let g = s.put_nbe(&v, 1, &one, right).unwrap();
                if i.is_multiple_of(2) {
                    drop(g); // dropping waits
                    assert!(r.wait() > 0);
                } else {
                    let (old, ()) = r.merge(g).wait();
                    assert!(old > 0);
                }
            }
        })
    };
    requests(WARM);
    let before = rss_kib();
    (0..cycles).for_each(cycle);
    requests(cycles);
    let after = rss_kib();
    assert!(
        after <= before + 1024,
        "{cycles} context cycles and {} requests grew RSS from {before} KiB to {after} KiB",
        2 * cycles
    );
    shmem.barrier_all();
    // The left neighbour added one per cycle and one per long-scope request.
    assert_eq!(word.load(), 2 * (cycles + WARM));
    shmem.barrier_all();
    Ok(())
}

fn main() -> rshmem::Result<()> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().expect("mode");
    let arg = args.next();
    let requested = match (mode.as_str(), arg.as_deref()) {
        ("threads", _) => ThreadLevel::Multiple,
        ("level", Some("single")) => ThreadLevel::Single,
        ("level", Some("funneled")) => ThreadLevel::Funneled,
        ("level", Some("serialized")) => ThreadLevel::Serialized,
        ("level", Some("multiple")) => ThreadLevel::Multiple,
        ("level", a) => panic!("level: unknown level {a:?}"),
        _ => ThreadLevel::Single,
    };
    let shmem = Shmem::init_thread(requested)?;
    match mode.as_str() {
        "basic" => basic(&shmem)?,
        "level" => level(&shmem, arg.as_deref().unwrap_or(""))?,
        "threads" => threads(&shmem, arg.map_or(2, |a| a.parse().expect("threads")))?,
        "isolation" => isolation(&shmem)?,
        "nbe" => nbe(&shmem)?,
        "churn" => churn(&shmem)?,
        m => panic!("unknown mode {m}"),
    }
    println!("ok {mode} pe={}", shmem.my_pe());
    Ok(())
}
