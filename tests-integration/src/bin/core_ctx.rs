//! Contexts, the copy engine and explicit non-blocking requests in rshmem-core, run under
//! `oshrun`: `core_ctx <mode> [threads]` with mode
//!
//! - `basic`: contexts on WORLD and on a split team (team-relative PEs and their range
//!   check), every operation family through a context, `get_team`, bad options, and a
//!   team's destruction ending its shareable contexts (but not its private ones);
//! - `engine`: large put_nbi/get_nbi/put_signal_nbi through the copy engine (run with a
//!   small SHMEM_COPY_ENGINE_THRESHOLD), completed by the context's quiet; data arrives
//!   before the signal;
//! - `isolation`: with the engine stopped, quiet and fence on context B return while a
//!   large put_nbi on context A is still pending (and undelivered), quiet on the default
//!   context leaves an _nbe request pending; once resumed, A's quiet delivers;
//! - `nbe`: put/get/AMO _nbe to several PEs in separate requests merged into one, one
//!   handle taking further operations, test until complete, handles emptied, reuse,
//!   free of an in-flight request;
//! - `churn`: 100,000 context create/destroy and request alloc/complete cycles with RSS
//!   flat and no live context left;
//! - `threads`: under THREAD_MULTIPLE, `threads` threads each with a private context put
//!   into their own region of every peer and add to shared counters, while as many
//!   threads use the default context; every value checked;
//! - `threads_coll`: under THREAD_MULTIPLE, each thread runs reductions and syncs on a team
//!   of its own concurrently with the others, then signals its counterpart on the next PE.
//!
//! Each mode prints `ok <mode> pe=<me>`; every check is an assertion.
#![allow(unsafe_code)]

use std::sync::Arc;

use rshmem_core::request::{self, ReqHandle, RequestParams};
use rshmem_core::{amo, ctx, memory, order, rma, signal, sync, team, world};
use rshmem_core::{AmoOp, Cmp, Ctx, Error, SignalOp, ThreadLevel};

fn malloc(len: usize) -> *mut u8 {
    memory::malloc("shmem_malloc", len).unwrap()
}

fn barrier() {
    sync::barrier_all().unwrap()
}

/// Deterministic contents of a block sent by `pe` in case `case`.
fn fill(pe: usize, case: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u64).wrapping_mul(31) ^ (pe as u64) << 3 ^ case) as u8)
        .collect()
}

fn read_local(p: *const u8, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    // SAFETY: callers pass their own symmetric blocks of at least `len` bytes, read
    // between barriers (nobody writes them meanwhile).
    unsafe { std::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), len) };
    v
}

fn zero_local(p: *mut u8, len: usize) {
    // SAFETY: as `read_local`, for writing.
    unsafe { std::ptr::write_bytes(p, 0, len) };
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

fn load_u64(p: *const u64) -> u64 {
    // SAFETY: a live, aligned symmetric word of this PE; remote writers use atomics.
    unsafe {
        (*(p as *const std::sync::atomic::AtomicU64)).load(std::sync::atomic::Ordering::Acquire)
    }
}

fn create(options: i64) -> &'static Ctx {
    // SAFETY: contexts of these tests are destroyed explicitly before finalize.
    unsafe { ctx::create(options).unwrap().as_ref() }
}

fn destroy(c: &Ctx) {
    // SAFETY: `c` came from `create` and is not used afterwards.
    unsafe { ctx::destroy(std::ptr::NonNull::from(c)).unwrap() }
}

fn basic(me: usize, n: usize) {
    let buf = malloc(64) as *mut u64;
    zero_local(buf.cast(), 64);
    barrier();
    // A world context: RMA, AMO, signal, fence and quiet, to the right neighbour.
    let c = create(ctx::SERIALIZED);
    let right = ((me + 1) % n) as i64;
    let v = [me as u64 + 100];
    // SAFETY: `v` is a live local array; `buf` is symmetric.
    unsafe {
        rma::ctx_put(
            c,
            "shmem_ctx_putmem",
            buf.cast(),
            v.as_ptr().cast(),
            8,
            right,
        )
        .unwrap();
        order::ctx_fence(c).unwrap();
        amo::ctx_atomic(
            c,
            "shmem_ctx_atomic_add",
            buf.add(1),
            AmoOp::Add(me as u64 + 1),
            right,
        )
        .unwrap();
        signal::ctx_signal_op(
            c,
            "shmem_ctx_signal_set",
            buf.add(2),
            7,
            SignalOp::Set,
            right,
        )
        .unwrap();
        signal::ctx_put_signal(
            c,
            "shmem_ctx_putmem_signal",
            false,
            buf.add(3).cast(),
            v.as_ptr().cast(),
            8,
            buf.add(4),
            1,
            SignalOp::Add,
            right,
        )
        .unwrap();
        let mut f = 0u64;
        amo::ctx_atomic_nbi(
            c,
            "shmem_ctx_atomic_fetch_nbi",
            &mut f,
            buf.add(1),
            AmoOp::Fetch,
            me as i64,
        )
        .unwrap();
    }
    order::ctx_quiet(c).unwrap();
    assert!(Arc::ptr_eq(
        &team::ctx_team(c).unwrap(),
        &team::world().unwrap()
    ));
    barrier();
    let left = (me + n - 1) % n;
    for (i, want) in [left as u64 + 100, left as u64 + 1, 7, left as u64 + 100, 1]
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            load_u64(buf.wrapping_add(i)),
            want,
            "word {i} after context ops"
        );
    }
    let mut got = [0u64; 2];
    // SAFETY: `got` is a live local array of two words.
    unsafe {
        rma::ctx_strided(
            c,
            "shmem_ctx_iget64",
            false,
            rma::Blocks {
                dest: got.as_mut_ptr().cast(),
                src: buf.cast(),
                dst: 1,
                sst: 3,
                block: 1,
                count: 2,
                size: 8,
            },
            right,
        )
        .unwrap();
    }
    // The right neighbour's words 0 and 3 hold what this PE put there.
    assert_eq!(
        got,
        [me as u64 + 100, me as u64 + 100],
        "strided get through a context"
    );
    destroy(c);
    assert!(matches!(
        ctx::create(1 << 20),
        Err(Error::InvalidArgument { arg: "options", .. })
    ));

    // A context on the even PEs: PE numbers are team ranks.
    let world = team::world().unwrap();
    barrier();
    zero_local(buf.cast(), 64);
    barrier();
    let evens =
        team::split_strided(&world, 0, 2, n.div_ceil(2) as i64, Default::default()).unwrap();
    if let Some(t) = &evens {
        let tn = t.n_pes();
        let tme = t.my_pe();
        // SAFETY: freshly created, destroyed below (or with the team).
        let shared_ctx = unsafe { team::create_ctx(t, 0).unwrap().as_ref() };
        // SAFETY: as above.
        let private_ctx = unsafe { team::create_ctx(t, ctx::PRIVATE).unwrap().as_ref() };
        assert!(Arc::ptr_eq(&team::ctx_team(shared_ctx).unwrap(), t));
        assert_eq!(ctx::live_count(), 2);
        let tr = ((tme + 1) % tn) as i64;
        let v = [1000 + tme as u64];
        // SAFETY: `v` is live; `buf` symmetric.
        unsafe {
            rma::ctx_put(
                shared_ctx,
                "shmem_ctx_putmem",
                buf.cast(),
                v.as_ptr().cast(),
                8,
                tr,
            )
            .unwrap();
            amo::ctx_atomic(
                private_ctx,
                "shmem_ctx_atomic_inc",
                buf.add(1),
                AmoOp::Add(1),
                tr,
            )
            .unwrap();
            let e = rma::ctx_put(
                shared_ctx,
                "shmem_ctx_putmem",
                buf.cast(),
                v.as_ptr().cast(),
                8,
                tn as i64,
            );
            assert!(
                matches!(e, Err(Error::PeOutOfRange { npes, .. }) if npes == tn),
                "team rank {tn} must be out of range: {e:?}"
            );
        }
        order::ctx_quiet(shared_ctx).unwrap();
        team::sync(t).unwrap();
        let from = (tme + tn - 1) % tn;
        assert_eq!(
            load_u64(buf),
            1000 + from as u64,
            "team context put landed at team rank"
        );
        assert_eq!(load_u64(buf.wrapping_add(1)), 1);
        // Destroying the team ends its shareable context, not its private one.
        team::destroy(t).unwrap();
        assert_eq!(ctx::live_count(), 1);
        assert!(!shared_ctx.is_live() && private_ctx.is_live());
        destroy(private_ctx);
    }
    assert_eq!(ctx::live_count(), 0);
    barrier();
}

const BIG: usize = 1 << 20;

fn engine(me: usize, n: usize) {
    let dst = malloc(BIG);
    let src = malloc(BIG);
    let sig = malloc(8) as *mut u64;
    zero_local(dst, BIG);
    zero_local(sig.cast(), 8);
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let mine = fill(me, 1, BIG);
    // SAFETY: `src` is this PE's own block of BIG bytes.
    unsafe { std::ptr::copy_nonoverlapping(mine.as_ptr(), src, BIG) };
    barrier();
    let c = create(0);
    let data = fill(me, 2, BIG);
    // SAFETY: `data` lives until the quiet below.
    unsafe {
        rma::ctx_put_nbi(
            c,
            "shmem_ctx_putmem_nbi",
            dst,
            data.as_ptr(),
            BIG,
            right as i64,
        )
        .unwrap()
    };
    let mut got = vec![0u8; BIG];
    // SAFETY: `got` lives and is untouched until the quiet below.
    unsafe {
        rma::ctx_get_nbi(
            c,
            "shmem_ctx_getmem_nbi",
            got.as_mut_ptr(),
            src,
            BIG,
            right as i64,
        )
        .unwrap()
    };
    order::ctx_quiet(c).unwrap();
    same(&got, &fill(right, 1, BIG), "large get_nbi");
    barrier();
    same(&read_local(dst, BIG), &fill(left, 2, BIG), "large put_nbi");
    barrier();
    // put_signal_nbi: whoever sees the signal sees the data.
    let data = fill(me, 3, BIG);
    // SAFETY: `data` lives until the quiet below.
    unsafe {
        signal::ctx_put_signal(
            c,
            "shmem_ctx_putmem_signal_nbi",
            true,
            dst,
            data.as_ptr(),
            BIG,
            sig,
            1,
            SignalOp::Set,
            right as i64,
        )
        .unwrap()
    };
    // SAFETY: `sig` is a symmetric signal word of this PE.
    unsafe { signal::signal_wait_until("shmem_signal_wait_until", sig, Cmp::Eq, 1).unwrap() };
    same(
        &read_local(dst, BIG),
        &fill(left, 3, BIG),
        "data before its signal",
    );
    order::ctx_quiet(c).unwrap();
    destroy(c);
    barrier();
}

fn isolation(me: usize, n: usize) {
    let dst = malloc(BIG);
    zero_local(dst, BIG);
    barrier();
    let right = (me + 1) % n;
    let a = create(ctx::PRIVATE);
    let b = create(ctx::PRIVATE);
    let data = fill(me, 4, BIG);
    rshmem_core::pause_for_tests(true);
    // SAFETY: `data` lives until A's quiet below.
    unsafe {
        rma::ctx_put_nbi(
            a,
            "shmem_ctx_putmem_nbi",
            dst,
            data.as_ptr(),
            BIG,
            right as i64,
        )
        .unwrap()
    };
    let mut slot: Option<ReqHandle> = None;
    let data2 = fill(me, 5, BIG);
    let dst2 = malloc_local_pair();
    // SAFETY: `data2` lives until the request completes below.
    unsafe {
        rma::put_nbe(
            b,
            "shmemx_ctx_putmem_nbe",
            dst2,
            data2.as_ptr(),
            BIG,
            right as i64,
            &mut slot,
        )
        .unwrap()
    };
    order::ctx_quiet(b).unwrap();
    order::ctx_fence(b).unwrap();
    order::quiet().unwrap();
    assert!(
        a.pending(),
        "quiet on B (and on the default context) must not complete A's put_nbi"
    );
    // SAFETY: the slot holds a live handle.
    let done = unsafe { request::is_complete(&slot) };
    assert!(!done, "quiet must not complete an _nbe request");
    let mut peek = vec![0u8; 64];
    // SAFETY: `peek` is a live local buffer; a blocking get on the default context.
    unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            "shmem_getmem",
            peek.as_mut_ptr(),
            dst.wrapping_add(BIG - 64),
            64,
            right as i64,
        )
        .unwrap()
    };
    assert!(
        peek.iter().all(|&x| x == 0),
        "A's pending put must not have landed yet"
    );
    rshmem_core::pause_for_tests(false);
    order::ctx_quiet(a).unwrap();
    assert!(!a.pending());
    // SAFETY: the slot holds a live handle owned by this thread.
    unsafe { request::wait(&mut slot).unwrap() };
    assert!(slot.is_none(), "wait empties the handle");
    barrier();
    let left = (me + n - 1) % n;
    same(
        &read_local(dst, BIG),
        &fill(left, 4, BIG),
        "A's put after A's quiet",
    );
    same(
        &read_local(dst2, BIG),
        &fill(left, 5, BIG),
        "the nbe put after its wait",
    );
    destroy(a);
    destroy(b);
    barrier();
}

/// A second symmetric block of BIG bytes, zeroed (collective).
fn malloc_local_pair() -> *mut u8 {
    let p = malloc(BIG);
    zero_local(p, BIG);
    barrier();
    p
}

fn nbe(me: usize, n: usize) {
    let dst = malloc(BIG);
    let src = malloc(BIG);
    let counter = malloc(8) as *mut u64;
    zero_local(dst, BIG);
    zero_local(counter.cast(), 8);
    let mine = fill(me, 6, BIG);
    // SAFETY: own block.
    unsafe { std::ptr::copy_nonoverlapping(mine.as_ptr(), src, BIG) };
    barrier();
    let d = Ctx::default_ctx();
    let right = (me + 1) % n;
    let far = (me + 2) % n;
    let data = fill(me, 7, BIG);
    let mut got = vec![0u8; BIG];
    let mut small = [0u8; 16];
    let mut old = u64::MAX;
    let (mut r1, mut r2, mut r3, mut r4) = (None, None, None, None);
    // SAFETY: the buffers live and are untouched until the merged request completes.
    unsafe {
        rma::put_nbe(
            d,
            "shmemx_putmem_nbe",
            dst,
            data.as_ptr(),
            BIG,
            right as i64,
            &mut r1,
        )
        .unwrap();
        rma::get_nbe(
            d,
            "shmemx_getmem_nbe",
            got.as_mut_ptr(),
            src,
            BIG,
            far as i64,
            &mut r2,
        )
        .unwrap();
        rma::get_nbe(
            d,
            "shmemx_getmem_nbe",
            small.as_mut_ptr(),
            src,
            16,
            right as i64,
            &mut r3,
        )
        .unwrap();
        amo::atomic_nbe(
            d,
            "shmemx_uint64_fadd_nbe",
            &mut old,
            counter,
            AmoOp::Add(1),
            0,
            &mut r4,
        )
        .unwrap();
    }
    assert!(
        r1.is_some() && r2.is_some() && r3.is_some() && r4.is_some(),
        "an op allocates a handle"
    );
    let mut merged = None;
    // r1 (an engine transfer) becomes the merged request; r2 is linked under it.
    let stale = r2;
    for r in [&mut r1, &mut r2, &mut r3, &mut r4] {
        // SAFETY: live handles owned by this thread.
        unsafe { request::merge(&mut merged, r).unwrap() };
        assert!(r.is_none(), "merging consumes the handle");
    }
    // A kept copy of a consumed handle is refused, not linked twice.
    // SAFETY: `stale` points at a request still held (merged) under `merged`.
    let e = unsafe { request::merge(&mut merged, &mut stale.clone()) };
    assert!(
        matches!(
            e,
            Err(Error::InvalidArgument {
                arg: "requests",
                ..
            })
        ),
        "merging a consumed handle again: {e:?}"
    );
    // Further operations join the merged handle.
    let mut old2 = u64::MAX;
    // SAFETY: as above.
    unsafe {
        amo::atomic_nbe(
            d,
            "shmemx_uint64_fadd_nbe",
            &mut old2,
            counter,
            AmoOp::Add(1),
            0,
            &mut merged,
        )
        .unwrap()
    };
    // SAFETY: a live handle.
    while !unsafe { request::test(&mut merged).unwrap() } {
        std::thread::yield_now();
    }
    assert!(merged.is_none(), "test releases a completed handle");
    same(&got, &fill(far, 6, BIG), "merged get_nbe (far PE)");
    same(&small, &fill(right, 6, 16), "merged small get_nbe");
    assert!(
        old < 2 * n as u64 && old2 < 2 * n as u64 && old != old2,
        "fadd_nbe fetched {old}, {old2}"
    );
    barrier();
    let left = (me + n - 1) % n;
    same(&read_local(dst, BIG), &fill(left, 7, BIG), "merged put_nbe");
    if me == 0 {
        assert_eq!(load_u64(counter), 2 * n as u64, "every fadd_nbe landed");
    }
    barrier();
    // One handle for many operations, then reused after completion.
    for round in 0..3u64 {
        let mut h: Option<ReqHandle> = None;
        let vals: Vec<u64> = (0..64).map(|i| round * 1000 + i + me as u64).collect();
        for (i, v) in vals.iter().enumerate() {
            // SAFETY: `vals` lives until the wait.
            unsafe {
                rma::put_nbe(
                    d,
                    "shmemx_uint64_put_nbe",
                    dst.wrapping_add(8 * i),
                    (v as *const u64).cast(),
                    8,
                    right as i64,
                    &mut h,
                )
                .unwrap()
            };
        }
        // SAFETY: a live handle.
        unsafe { request::wait(&mut h).unwrap() };
        assert!(h.is_none());
        barrier();
        for i in 0..64 {
            assert_eq!(
                load_u64(dst.wrapping_add(8 * i) as *const u64),
                round * 1000 + i as u64 + left as u64
            );
        }
        barrier();
    }
    // An explicit allocation, freed while a large transfer is in flight: free completes it.
    let mut h = Some(request::alloc(RequestParams::default()).unwrap());
    // SAFETY: a live handle; `data` lives past the free.
    unsafe {
        rma::put_nbe(
            d,
            "shmemx_putmem_nbe",
            dst,
            data.as_ptr(),
            BIG,
            right as i64,
            &mut h,
        )
        .unwrap();
        request::free(&mut h).unwrap();
    }
    assert!(h.is_none());
    // Empty handles: test is complete, wait returns.
    let mut none: Option<ReqHandle> = None;
    // SAFETY: an empty slot.
    unsafe {
        assert!(request::test(&mut none).unwrap());
        request::wait(&mut none).unwrap();
    }
    barrier();
    same(
        &read_local(dst, BIG),
        &fill(left, 7, BIG),
        "put_nbe completed by free",
    );
    barrier();
}

fn rss_kib() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn churn(me: usize, n: usize) {
    let buf = malloc(8) as *mut u64;
    zero_local(buf.cast(), 8);
    barrier();
    let right = ((me + 1) % n) as i64;
    let cycle = |i: usize| {
        let c = create(if i.is_multiple_of(2) { ctx::PRIVATE } else { 0 });
        // SAFETY: `buf` is symmetric and aligned.
        unsafe { amo::ctx_atomic(c, "shmem_ctx_atomic_add", buf, AmoOp::Add(1), right).unwrap() };
        destroy(c);
        let mut h = None;
        let mut f = 0u64;
        // SAFETY: `f` lives until the wait.
        unsafe {
            amo::atomic_nbe(
                Ctx::default_ctx(),
                "shmemx_uint64_fetch_nbe",
                &mut f,
                buf,
                AmoOp::Fetch,
                right,
                &mut h,
            )
            .unwrap();
            request::wait(&mut h).unwrap();
        }
    };
    for i in 0..2_000 {
        cycle(i);
    }
    let before = rss_kib();
    for i in 0..100_000 {
        cycle(i);
    }
    let after = rss_kib();
    assert!(
        after <= before + 1024,
        "100,000 context and request cycles grew RSS from {before} KiB to {after} KiB"
    );
    assert_eq!(ctx::live_count(), 0);
    barrier();
    assert_eq!(load_u64(buf), 102_000);
    barrier();
}

fn threads(me: usize, n: usize, t: usize) {
    const PER: usize = 256;
    // Region [tid] of every PE belongs to (writer PE, thread) pairs: n * t slots of PER words.
    let region = malloc(n * t * PER * 8) as *mut u64;
    let counters = malloc(8 * 2) as *mut u64;
    zero_local(region.cast(), n * t * PER * 8);
    zero_local(counters.cast(), 16);
    let big = malloc(t * BIG);
    zero_local(big, t * BIG);
    barrier();
    // Addresses cross into the threads as integers (raw pointers are not Send).
    let (region_a, counters_a, big_a) = (region as usize, counters as usize, big as usize);
    std::thread::scope(|s| {
        for tid in 0..t {
            // Private-context threads.
            s.spawn(move || {
                let (region, counters, big) = (
                    region_a as *mut u64,
                    counters_a as *mut u64,
                    big_a as *mut u8,
                );
                let c = create(ctx::PRIVATE);
                let slot = (me * t + tid) * PER;
                for pe in 0..n {
                    let vals: Vec<u64> = (0..PER as u64)
                        .map(|i| (me as u64) << 40 | (tid as u64) << 32 | i)
                        .collect();
                    // SAFETY: `vals` is live; the region is symmetric.
                    unsafe {
                        rma::ctx_put(
                            c,
                            "shmem_ctx_putmem",
                            region.wrapping_add(slot).cast(),
                            vals.as_ptr().cast(),
                            PER * 8,
                            pe as i64,
                        )
                        .unwrap();
                        for _ in 0..100 {
                            amo::ctx_atomic(
                                c,
                                "shmem_ctx_atomic_add",
                                counters,
                                AmoOp::Add(1u64),
                                pe as i64,
                            )
                            .unwrap();
                        }
                    }
                }
                let data = fill(me * 16 + tid, 8, BIG);
                let right = (me + 1) % n;
                // SAFETY: `data` lives until the quiet.
                unsafe {
                    rma::ctx_put_nbi(
                        c,
                        "shmem_ctx_putmem_nbi",
                        big.wrapping_add(tid * BIG),
                        data.as_ptr(),
                        BIG,
                        right as i64,
                    )
                    .unwrap()
                };
                order::ctx_quiet(c).unwrap();
                destroy(c);
            });
            // Default-context threads.
            s.spawn(move || {
                let counters = counters_a as *mut u64;
                let mut seen = Vec::with_capacity(100 * n);
                for pe in 0..n {
                    for _ in 0..100 {
                        // SAFETY: symmetric, aligned counter.
                        let old = unsafe {
                            amo::ctx_atomic(
                                Ctx::default_ctx(),
                                "shmem_atomic_fetch_inc",
                                counters.wrapping_add(1),
                                AmoOp::Add(1u64),
                                pe as i64,
                            )
                            .unwrap()
                        };
                        seen.push(old);
                    }
                }
                let mut h = None;
                let mut f = 0u64;
                // SAFETY: `f` lives until the wait.
                unsafe {
                    amo::atomic_nbe(
                        Ctx::default_ctx(),
                        "shmemx_uint64_fetch_nbe",
                        &mut f,
                        counters,
                        AmoOp::Fetch,
                        0,
                        &mut h,
                    )
                    .unwrap();
                    request::wait(&mut h).unwrap();
                }
                order::quiet().unwrap();
                assert!(seen.len() == 100 * n);
            });
        }
    });
    barrier();
    for w in 0..n {
        for tid in 0..t {
            let slot = (w * t + tid) * PER;
            for i in [0, PER / 2, PER - 1] {
                let want = (w as u64) << 40 | (tid as u64) << 32 | i as u64;
                assert_eq!(
                    load_u64(region.wrapping_add(slot + i)),
                    want,
                    "writer PE {w} thread {tid} word {i}"
                );
            }
        }
    }
    let total = (n * t * 100) as u64;
    assert_eq!(load_u64(counters), total, "private-context adds");
    assert_eq!(
        load_u64(counters.wrapping_add(1)),
        total,
        "default-context fetch-incs"
    );
    let left = (me + n - 1) % n;
    for tid in 0..t {
        same(
            &read_local(big.wrapping_add(tid * BIG), BIG),
            &fill(left * 16 + tid, 8, BIG),
            "thread's large put_nbi",
        );
    }
    barrier();
}

/// Under THREAD_MULTIPLE, thread `tid` of every PE owns team `tid` (a copy of WORLD) and
/// runs reductions and syncs on it while the other threads do the same on theirs; then
/// thread `tid` of PE `p` signals thread `tid` of PE `p + 1`, which waits for it.
fn threads_coll(me: usize, n: usize, t: usize) {
    let world = team::world().unwrap();
    let teams: Vec<_> = (0..t)
        .map(|_| {
            team::split_strided(&world, 0, 1, n as i64, Default::default())
                .unwrap()
                .unwrap()
        })
        .collect();
    const LEN: usize = 300;
    let bufs = malloc(t * 2 * LEN * 8) as *mut u64;
    let flags = malloc(t * 8) as *mut u64;
    zero_local(flags.cast(), t * 8);
    barrier();
    let (bufs_a, flags_a) = (bufs as usize, flags as usize);
    std::thread::scope(|s| {
        for (tid, tm) in teams.iter().enumerate() {
            s.spawn(move || {
                let src = (bufs_a as *mut u64).wrapping_add(tid * 2 * LEN);
                let dst = src.wrapping_add(LEN);
                let flags = flags_a as *mut u64;
                for round in 0..20u64 {
                    for i in 0..LEN {
                        // SAFETY: this thread's own part of its own symmetric block.
                        unsafe {
                            src.add(i)
                                .write(me as u64 * 7 + i as u64 + round + tid as u64)
                        };
                    }
                    // SAFETY: both blocks are symmetric, LEN words, disjoint.
                    unsafe {
                        rshmem_core::coll::reduce(
                            "shmem_uint64_sum_reduce",
                            tm,
                            dst,
                            src,
                            LEN,
                            rshmem_core::coll::ReduceOp::Sum,
                        )
                        .unwrap()
                    };
                    let pes = n as u64;
                    let base = 7 * pes * (pes - 1) / 2;
                    for i in [0, LEN / 2, LEN - 1] {
                        // SAFETY: own block, written by the reduction that returned.
                        let got = unsafe { dst.add(i).read() };
                        assert_eq!(
                            got,
                            base + pes * (i as u64 + round + tid as u64),
                            "thread {tid} round {round} element {i}"
                        );
                    }
                    team::sync(tm).unwrap();
                }
                // Thread-to-thread signal across PEs.
                let right = (me + 1) % n;
                // SAFETY: the flag words are symmetric and aligned.
                unsafe {
                    signal::ctx_signal_op(
                        Ctx::default_ctx(),
                        "shmem_signal_add",
                        flags.wrapping_add(tid),
                        1,
                        SignalOp::Add,
                        right as i64,
                    )
                    .unwrap();
                    rshmem_core::p2p::wait_until(
                        "shmem_uint64_wait_until",
                        flags.wrapping_add(tid),
                        Cmp::Eq,
                        1u64,
                    )
                    .unwrap();
                }
            });
        }
    });
    barrier();
    for tm in &teams {
        team::destroy(tm).unwrap();
    }
    barrier();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("basic");
    let level = if mode.starts_with("threads") {
        ThreadLevel::Multiple
    } else {
        ThreadLevel::Single
    };
    let provided = world::init(level).unwrap();
    assert_eq!(provided, level);
    let me = rshmem_core::setup::my_pe().unwrap();
    let n = rshmem_core::setup::n_pes().unwrap();
    match mode {
        "basic" => basic(me, n),
        "engine" => engine(me, n),
        "isolation" => isolation(me, n),
        "nbe" => nbe(me, n),
        "churn" => churn(me, n),
        "threads" => threads(me, n, args.get(2).map_or(2, |s| s.parse().unwrap())),
        "threads_coll" => threads_coll(me, n, args.get(2).map_or(2, |s| s.parse().unwrap())),
        _ => panic!("unknown mode {mode}"),
    }
    println!("ok {mode} pe={me}");
    world::finalize();
}
