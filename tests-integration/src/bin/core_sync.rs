//! Synchronization in rshmem-core, run under `oshrun`: `core_sync <mode>` with mode
//!
//! - `barrier`: many barrier_all and sync_all rounds; counters prove no PE leaves a round
//!   before every PE entered it, and puts before barrier_all are visible after it;
//! - `p2p`: wait_until/test with every comparison on every integer type (intermediate
//!   values that do not satisfy are ignored), and the `_all/_any/_some[_vector]` forms
//!   with status masks and empty sets;
//! - `signal`: put_signal with SET and ADD, signal_wait_until returning the satisfying
//!   value, signal_fetch, signal_op (set/add);
//! - `lock`: set_lock/clear_lock mutual exclusion around a non-atomic read-modify-write
//!   by all PEs, test_lock semantics, and a test_lock spin loop.
//!
//! Each mode prints `ok <mode> pe=<me>`; every check is an assertion.
#![allow(unsafe_code)]

use std::time::Duration;

use rshmem_core::p2p::{self, Values};
use rshmem_core::Ctx;
use rshmem_core::{amo, lock, memory, rma, setup, signal, sync, AmoOp, Cmp, SignalOp, Word};

struct Pes {
    me: usize,
    n: usize,
}

impl Pes {
    fn right(&self) -> usize {
        (self.me + 1) % self.n
    }
    fn left(&self) -> usize {
        (self.me + self.n - 1) % self.n
    }
}

fn barrier() {
    sync::barrier_all().unwrap()
}

fn calloc<W>(count: usize) -> *mut W {
    memory::calloc("shmem_calloc", count, std::mem::size_of::<W>())
        .unwrap()
        .cast()
}

fn free<W>(p: *mut W) {
    memory::free("shmem_free", p.cast()).unwrap()
}

fn amo_op<W: Word>(dest: *const W, op: AmoOp<W>, pe: usize) -> W {
    // SAFETY: callers pass symmetric, aligned words.
    unsafe { amo::ctx_atomic(Ctx::default_ctx(), "shmem_atomic", dest, op, pe as i64).unwrap() }
}

fn put<W: Copy>(dest: *mut W, src: &[W], pe: usize) {
    // SAFETY: `src` is a live slice.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_put",
            dest.cast(),
            src.as_ptr().cast(),
            std::mem::size_of_val(src),
            pe as i64,
        )
        .unwrap()
    }
}

fn get<W: Copy>(dest: &mut [W], src: *const W, pe: usize) {
    // SAFETY: `dest` is a live slice.
    unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            "shmem_get",
            dest.as_mut_ptr().cast(),
            src.cast(),
            std::mem::size_of_val(dest),
            pe as i64,
        )
        .unwrap()
    }
}

/// Reads this PE's own symmetric word.
fn local<W: Word>(p: *const W) -> W {
    // SAFETY: callers pass their own symmetric, aligned words.
    unsafe { W::load(p) }
}

fn barrier_mode(p: &Pes) {
    const ROUNDS: u64 = 1000;
    // Two counters used on alternate rounds: during round r a PE can be at most one round
    // ahead, so counter r%2 is exact when this PE leaves round r.
    let ctr = calloc::<u64>(2);
    let slots = calloc::<u64>(2 * p.n);
    for r in 0..ROUNDS {
        let c = ctr.wrapping_add((r % 2) as usize);
        for pe in 0..p.n {
            amo_op(c, AmoOp::Add(1), pe);
            // Plain puts too: barrier_all completes them.
            put(
                slots.wrapping_add((r % 2) as usize * p.n + p.me),
                &[r + 1],
                pe,
            );
        }
        barrier();
        let want = (r / 2 + 1) * p.n as u64;
        assert_eq!(
            local(c),
            want,
            "barrier_all round {r}: counter {} should be exact",
            r % 2
        );
        for i in 0..p.n {
            assert_eq!(
                local(slots.wrapping_add((r % 2) as usize * p.n + i)),
                r + 1,
                "barrier_all round {r}: put from PE {i}"
            );
        }
    }
    barrier();
    // sync_all: only synchronizes, so use fetching AMOs (complete when they return).
    let ctr2 = calloc::<u64>(2);
    for r in 0..ROUNDS {
        let c = ctr2.wrapping_add((r % 2) as usize);
        for pe in 0..p.n {
            amo_op(c, AmoOp::Add(1), pe);
        }
        sync::sync_all().unwrap();
        assert_eq!(local(c), (r / 2 + 1) * p.n as u64, "sync_all round {r}");
    }
    // A PE that dawdles holds everyone: nobody leaves before it arrives.
    let late = calloc::<u64>(1);
    for r in 1..=5u64 {
        if p.me == (r as usize) % p.n {
            std::thread::sleep(Duration::from_millis(20));
            for pe in 0..p.n {
                put(late, &[r], pe);
            }
        }
        barrier();
        assert_eq!(
            local(late),
            r,
            "barrier_all left before the late PE arrived"
        );
        barrier();
    }
    barrier();
    free(ctr);
    free(ctr2);
    free(slots);
    free(late);
}

trait Int: Word {
    const NAME: &'static str;
    fn c(v: i64) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const NAME: &'static str = stringify!($t);
            fn c(v: i64) -> Self { v as $t }
        }
    )*};
}
int!(i16, u16, i32, u32, i64, u64, isize, usize);

fn test1<T: Int>(ivar: *const T, cmp: Cmp, v: T) -> bool {
    // SAFETY: `ivar` is a symmetric, aligned word.
    unsafe { p2p::test("shmem_test", ivar, cmp, v).unwrap() }
}

fn wait1<T: Int>(ivar: *const T, cmp: Cmp, v: T) {
    // SAFETY: `ivar` is a symmetric, aligned word.
    unsafe { p2p::wait_until("shmem_wait_until", ivar, cmp, v).unwrap() }
}

/// Single-word waits: for each comparison, the left neighbour first writes a value that
/// does not satisfy it, then (later) one that does.
fn p2p_single<T: Int>(p: &Pes) {
    let ty = T::NAME;
    let ivar = calloc::<T>(1);
    // (cmp, rhs, decoy, final): the word starts at 10.
    let cases: [(Cmp, i64, i64, i64); 6] = [
        (Cmp::Eq, 42, 41, 42),
        (Cmp::Ne, 10, 10, 11),
        (Cmp::Gt, 10, 10, 11),
        (Cmp::Ge, 20, 19, 20),
        (Cmp::Lt, 10, 10, 9),
        (Cmp::Le, 5, 6, 5),
    ];
    for (i, (cmp, rhs, decoy, fin)) in cases.into_iter().enumerate() {
        amo_op(ivar, AmoOp::Set(T::c(10)), p.me);
        barrier();
        assert!(
            !test1(ivar, cmp, T::c(rhs)),
            "{ty}: test {cmp:?} {rhs} held at 10"
        );
        barrier();
        amo_op(ivar, AmoOp::Set(T::c(decoy)), p.right());
        if i & 1 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        amo_op(ivar, AmoOp::Set(T::c(fin)), p.right());
        wait1(ivar, cmp, T::c(rhs));
        assert!(
            cmp.holds(local(ivar), T::c(rhs)),
            "{ty}: wait_until {cmp:?} {rhs} returned early"
        );
        assert!(
            test1(ivar, cmp, T::c(rhs)),
            "{ty}: test {cmp:?} {rhs} after the wait"
        );
        assert_eq!(local(ivar), T::c(fin));
        barrier();
    }
    // test is exact for every comparison around the value.
    amo_op(ivar, AmoOp::Set(T::c(7)), p.me);
    for cmp in [Cmp::Eq, Cmp::Ne, Cmp::Gt, Cmp::Ge, Cmp::Lt, Cmp::Le] {
        for rhs in [6, 7, 8] {
            assert_eq!(
                test1(ivar, cmp, T::c(rhs)),
                cmp.holds(7, rhs),
                "{ty}: test 7 {cmp:?} {rhs}"
            );
        }
    }
    barrier();
    free(ivar);
}

const NV: usize = 8;

struct Set<T: Int> {
    ivars: *mut T,
}

impl<T: Int> Set<T> {
    fn all(&self, status: Option<&[i32]>, cmp: Cmp, v: Values<T>, n: usize) {
        // SAFETY: `ivars` holds NV symmetric words; `status` and vector values hold NV.
        unsafe {
            p2p::wait_until_all("shmem_wait_until_all", self.ivars, n, st(status), cmp, v).unwrap()
        }
    }
    fn any(&self, status: Option<&[i32]>, cmp: Cmp, v: Values<T>, n: usize) -> Option<usize> {
        // SAFETY: as `all`.
        unsafe {
            p2p::wait_until_any("shmem_wait_until_any", self.ivars, n, st(status), cmp, v).unwrap()
        }
    }
    fn some(&self, status: Option<&[i32]>, cmp: Cmp, v: Values<T>, n: usize) -> Vec<usize> {
        let mut idx = [usize::MAX; NV];
        // SAFETY: as `all`; `idx` holds NV entries.
        let k = unsafe {
            p2p::wait_until_some(
                "shmem_wait_until_some",
                self.ivars,
                n,
                idx.as_mut_ptr(),
                st(status),
                cmp,
                v,
            )
            .unwrap()
        };
        let mut r = idx[..k].to_vec();
        r.sort();
        r
    }
    fn test_all(&self, status: Option<&[i32]>, cmp: Cmp, v: Values<T>, n: usize) -> bool {
        // SAFETY: as `all`.
        unsafe { p2p::test_all("shmem_test_all", self.ivars, n, st(status), cmp, v).unwrap() }
    }
    fn test_any(&self, status: Option<&[i32]>, cmp: Cmp, v: Values<T>, n: usize) -> Option<usize> {
        // SAFETY: as `all`.
        unsafe { p2p::test_any("shmem_test_any", self.ivars, n, st(status), cmp, v).unwrap() }
    }
    fn test_some(&self, status: Option<&[i32]>, cmp: Cmp, v: Values<T>, n: usize) -> Vec<usize> {
        let mut idx = [usize::MAX; NV];
        // SAFETY: as `some`.
        let k = unsafe {
            p2p::test_some(
                "shmem_test_some",
                self.ivars,
                n,
                idx.as_mut_ptr(),
                st(status),
                cmp,
                v,
            )
            .unwrap()
        };
        let mut r = idx[..k].to_vec();
        r.sort();
        r
    }
    fn set_remote(&self, i: usize, v: i64, pe: usize) {
        amo_op(self.ivars.wrapping_add(i), AmoOp::Set(T::c(v)), pe);
    }
    fn reset(&self) {
        for i in 0..NV {
            amo_op(
                self.ivars.wrapping_add(i),
                AmoOp::Set(T::ZERO),
                setup::my_pe().unwrap(),
            );
        }
    }
}

fn st(status: Option<&[i32]>) -> *const i32 {
    status.map_or(std::ptr::null(), <[i32]>::as_ptr)
}

/// The `_all/_any/_some` forms and their `_vector` twins, written by the left neighbour.
fn p2p_sets<T: Int>(p: &Pes) {
    let ty = T::NAME;
    let s = Set::<T> {
        ivars: calloc::<T>(NV),
    };
    let one = Values::One(T::c(5));
    let mask: [i32; NV] = [0, 1, 0, 0, 1, 0, 0, 1]; // 1, 4, 7 excluded
    let included: Vec<usize> = (0..NV).filter(|&i| mask[i] == 0).collect();

    // Nothing satisfied yet.
    assert!(!s.test_all(None, Cmp::Eq, one, NV), "{ty}");
    assert_eq!(s.test_any(None, Cmp::Eq, one, NV), None, "{ty}");
    assert_eq!(
        s.test_some(None, Cmp::Eq, one, NV),
        Vec::<usize>::new(),
        "{ty}"
    );
    // Empty sets: n = 0 (even with a null array), or every element masked out.
    let none = [1i32; NV];
    for (n, status) in [(0, None), (NV, Some(&none[..]))] {
        let ss = if n == 0 {
            Set::<T> {
                ivars: std::ptr::null_mut(),
            }
        } else {
            Set { ivars: s.ivars }
        };
        ss.all(status, Cmp::Eq, one, n);
        assert_eq!(
            ss.any(status, Cmp::Eq, one, n),
            None,
            "{ty}: wait_until_any on an empty set"
        );
        assert_eq!(
            ss.some(status, Cmp::Eq, one, n),
            Vec::<usize>::new(),
            "{ty}: wait_until_some on an empty set"
        );
        assert!(
            ss.test_all(status, Cmp::Eq, one, n),
            "{ty}: test_all on an empty set"
        );
        assert_eq!(
            ss.test_any(status, Cmp::Eq, one, n),
            None,
            "{ty}: test_any on an empty set"
        );
        assert_eq!(
            ss.test_some(status, Cmp::Eq, one, n),
            Vec::<usize>::new(),
            "{ty}: test_some on an empty set"
        );
    }
    barrier();

    // wait_until_all with a mask: only the included words get written.
    for &i in &included {
        s.set_remote(i, 5, p.right());
    }
    s.all(Some(&mask), Cmp::Eq, one, NV);
    assert!(
        s.test_all(Some(&mask), Cmp::Eq, one, NV),
        "{ty}: test_all with mask"
    );
    assert!(
        !s.test_all(None, Cmp::Eq, one, NV),
        "{ty}: test_all without mask sees the excluded words"
    );
    assert_eq!(
        s.some(Some(&mask), Cmp::Eq, one, NV),
        included,
        "{ty}: wait_until_some with mask"
    );
    assert_eq!(
        s.test_some(None, Cmp::Eq, one, NV),
        included,
        "{ty}: test_some"
    );
    assert_eq!(
        s.test_some(Some(&none), Cmp::Eq, one, NV),
        Vec::<usize>::new(),
        "{ty}"
    );
    let a = s.any(Some(&mask), Cmp::Eq, one, NV).unwrap();
    assert!(included.contains(&a), "{ty}: wait_until_any returned {a}");
    // Masked to the excluded words only: none of them is satisfied.
    let only_excl: [i32; NV] = std::array::from_fn(|i| 1 - mask[i]);
    assert_eq!(s.test_any(Some(&only_excl), Cmp::Eq, one, NV), None, "{ty}");
    assert!(!s.test_all(Some(&only_excl), Cmp::Eq, one, NV), "{ty}");
    barrier();
    s.reset();
    barrier();

    // wait_until_any ignores a satisfied but excluded word: the writer sets excluded word
    // 4 first, then (later) included word 6.
    s.set_remote(4, 5, p.right());
    std::thread::sleep(Duration::from_millis(2));
    s.set_remote(6, 5, p.right());
    assert_eq!(
        s.any(Some(&mask), Cmp::Eq, one, NV),
        Some(6),
        "{ty}: wait_until_any with mask"
    );
    assert_eq!(
        s.test_any(Some(&mask), Cmp::Eq, one, NV),
        Some(6),
        "{ty}: test_any with mask"
    );
    assert_eq!(
        s.some(Some(&mask), Cmp::Eq, one, NV),
        vec![6],
        "{ty}: wait_until_some with mask"
    );
    assert_eq!(
        s.some(None, Cmp::Eq, one, NV),
        vec![4, 6],
        "{ty}: wait_until_some without mask"
    );
    // Fairness: with two satisfied words, repeated test_any reports both.
    let mut seen = [false; NV];
    for _ in 0..4 * NV {
        seen[s.test_any(None, Cmp::Eq, one, NV).unwrap()] = true;
    }
    assert!(seen[4] && seen[6], "{ty}: test_any is not fair: {seen:?}");
    barrier();
    s.reset();
    barrier();

    // _vector forms: word i is compared with its own value.
    let want: [T; NV] = std::array::from_fn(|i| T::c(3 * i as i64 + 1));
    let vec = Values::Each(want.as_ptr());
    assert!(!s.test_all(None, Cmp::Eq, vec, NV), "{ty}");
    assert_eq!(s.test_any(None, Cmp::Eq, vec, NV), None, "{ty}");
    barrier();
    for i in (0..NV).rev() {
        s.set_remote(i, 3 * i as i64 + 1, p.right());
    }
    s.all(None, Cmp::Eq, vec, NV);
    assert!(s.test_all(None, Cmp::Eq, vec, NV), "{ty}: test_all_vector");
    assert_eq!(
        s.some(None, Cmp::Ge, vec, NV),
        (0..NV).collect::<Vec<_>>(),
        "{ty}: wait_until_some_vector"
    );
    assert_eq!(
        s.test_some(Some(&mask), Cmp::Eq, vec, NV),
        included,
        "{ty}: test_some_vector with mask"
    );
    assert_eq!(
        s.test_any(None, Cmp::Gt, vec, NV),
        None,
        "{ty}: test_any_vector none greater"
    );
    let lt: [T; NV] = std::array::from_fn(|i| T::c(if i == 3 { 100 } else { 0 }));
    assert_eq!(
        s.any(None, Cmp::Lt, Values::Each(lt.as_ptr()), NV),
        Some(3),
        "{ty}: wait_until_any_vector"
    );
    assert_eq!(
        s.test_any(None, Cmp::Lt, Values::Each(lt.as_ptr()), NV),
        Some(3),
        "{ty}"
    );
    assert!(
        s.test_all(None, Cmp::Ne, Values::Each(lt.as_ptr()), NV),
        "{ty}: test_all_vector Ne"
    );
    barrier();
    free(s.ivars);
}

fn p2p_mode(p: &Pes) {
    p2p_single::<i16>(p);
    p2p_single::<u16>(p);
    p2p_single::<i32>(p);
    p2p_single::<u32>(p);
    p2p_single::<i64>(p);
    p2p_single::<u64>(p);
    p2p_single::<isize>(p);
    p2p_single::<usize>(p);
    p2p_sets::<i16>(p);
    p2p_sets::<u16>(p);
    p2p_sets::<i32>(p);
    p2p_sets::<u32>(p);
    p2p_sets::<i64>(p);
    p2p_sets::<u64>(p);
    p2p_sets::<isize>(p);
    p2p_sets::<usize>(p);
}

#[allow(clippy::too_many_arguments)]
fn put_signal(dest: *mut u8, src: &[u8], sig: *const u64, v: u64, op: SignalOp, pe: usize) {
    // SAFETY: `src` is a live slice.
    unsafe {
        signal::ctx_put_signal(
            Ctx::default_ctx(),
            "shmem_putmem_signal",
            false,
            dest,
            src.as_ptr(),
            src.len(),
            sig,
            v,
            op,
            pe as i64,
        )
        .unwrap()
    }
}

fn sig_wait(sig: *const u64, cmp: Cmp, v: u64) -> u64 {
    // SAFETY: `sig` is a symmetric, aligned u64.
    unsafe { signal::signal_wait_until("shmem_signal_wait_until", sig, cmp, v).unwrap() }
}

fn sig_fetch(sig: *const u64) -> u64 {
    // SAFETY: `sig` is a symmetric, aligned u64.
    unsafe { signal::signal_fetch("shmem_signal_fetch", sig).unwrap() }
}

fn data_of(pe: usize, round: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (pe as u64 * 37 + round * 11 + i as u64 * 7) as u8)
        .collect()
}

fn signal_mode(p: &Pes) {
    const DL: usize = 4096 + 3;
    const ROUNDS: u64 = 50;
    let data = memory::malloc("shmem_malloc", p.n * DL).unwrap();
    let sig = calloc::<u64>(4);
    let (s_set, s_add, s_op, ack) = (
        sig,
        sig.wrapping_add(1),
        sig.wrapping_add(2),
        sig.wrapping_add(3),
    );

    // SET: round r's data behind signal r to the right neighbour.
    for r in 1..=ROUNDS {
        // SAFETY: `ack` is a symmetric, aligned u64.
        unsafe { p2p::wait_until("shmem_wait_until", ack, Cmp::Ge, r - 1).unwrap() };
        put_signal(
            data,
            &data_of(p.me, r, DL),
            s_set,
            r,
            SignalOp::Set,
            p.right(),
        );
        let got = sig_wait(s_set, Cmp::Ge, r);
        assert_eq!(got, r, "signal_wait_until returns the satisfying value");
        // SAFETY: our own block, written before the signal.
        let d = unsafe { std::slice::from_raw_parts(data, DL) };
        assert_eq!(
            d,
            &data_of(p.left(), r, DL)[..],
            "put_signal SET round {r}: data behind the signal"
        );
        assert_eq!(sig_fetch(s_set), r);
        amo_op(ack, AmoOp::Set(r), p.left());
    }
    barrier();

    // ADD: every PE puts its slot on PE 0 with +1 (and +me*1000 to tell them apart).
    put_signal(
        data.wrapping_add(p.me * DL),
        &data_of(p.me, 999, DL),
        s_add,
        1 + 1000 * p.me as u64,
        SignalOp::Add,
        0,
    );
    if p.me == 0 {
        let want: u64 = (0..p.n as u64).map(|i| 1 + 1000 * i).sum();
        // Wait for the count in the low digits, then the whole value must be exact.
        let got = sig_wait(s_add, Cmp::Eq, want);
        assert_eq!(got, want);
        for i in 0..p.n {
            // SAFETY: our own block, written before the signals (all of which arrived).
            let d = unsafe { std::slice::from_raw_parts(data.wrapping_add(i * DL), DL) };
            assert_eq!(
                d,
                &data_of(i, 999, DL)[..],
                "put_signal ADD: slot of PE {i}"
            );
        }
        assert_eq!(sig_fetch(s_add), want);
    }
    barrier();

    // signal_op (1.6 shmem_signal_add / shmem_signal_set) and wait returning the value.
    // SAFETY: `s_op` is a symmetric, aligned u64.
    unsafe {
        signal::ctx_signal_op(
            Ctx::default_ctx(),
            "shmem_signal_add",
            s_op,
            p.me as u64 + 1,
            SignalOp::Add,
            0,
        )
        .unwrap()
    };
    if p.me == 0 {
        let want = (p.n * (p.n + 1) / 2) as u64;
        assert_eq!(sig_wait(s_op, Cmp::Ge, want), want);
    }
    barrier();
    // SAFETY: as above.
    unsafe {
        signal::ctx_signal_op(
            Ctx::default_ctx(),
            "shmem_signal_set",
            s_op,
            700 + p.me as u64,
            SignalOp::Set,
            p.right() as i64,
        )
        .unwrap()
    };
    // The satisfying value is what was set, not the threshold.
    assert_eq!(sig_wait(s_op, Cmp::Gt, 650), 700 + p.left() as u64);
    assert_eq!(sig_wait(s_op, Cmp::Ne, 0), 700 + p.left() as u64);
    assert_eq!(sig_wait(s_op, Cmp::Le, 10_000), 700 + p.left() as u64);
    barrier();
    assert!(SignalOp::from_c("shmem_put_signal", 0) == Ok(SignalOp::Set));
    assert!(SignalOp::from_c("shmem_put_signal", 1) == Ok(SignalOp::Add));
    let e = SignalOp::from_c("shmem_put_signal", 2).unwrap_err();
    assert!(
        e.to_string().contains("shmem_put_signal") && e.to_string().contains("sig_op"),
        "{e}"
    );
    memory::free("shmem_free", data).unwrap();
    free(sig);
}

fn lock_mode(p: &Pes) {
    const K: u64 = 1000;
    let lk = calloc::<i64>(1);
    let ctr = calloc::<u64>(1);
    let inside = calloc::<u64>(1);
    let won = calloc::<u64>(1);
    let rmw = || {
        // Nobody else may be inside.
        let before = amo_op(inside, AmoOp::Add(1), 0);
        assert_eq!(before, 0, "two PEs inside the lock");
        let mut v = [0u64];
        get(&mut v, ctr, 0);
        std::thread::yield_now();
        put(ctr, &[v[0] + 1], 0);
        amo_op(inside, AmoOp::Add(u64::MAX), 0);
    };
    // set_lock/clear_lock around a non-atomic get+put increment.
    for _ in 0..K {
        lock::set_lock("shmem_set_lock", lk).unwrap();
        rmw();
        lock::clear_lock("shmem_clear_lock", lk).unwrap();
    }
    barrier();
    let mut v = [0u64];
    get(&mut v, ctr, 0);
    assert_eq!(v[0], K * p.n as u64, "lost updates under set_lock");
    barrier();

    // test_lock: false while another PE holds the lock, true when free.
    if p.me == 0 {
        lock::set_lock("shmem_set_lock", lk).unwrap();
    }
    barrier();
    if p.me != 0 {
        for _ in 0..10 {
            assert!(
                !lock::test_lock("shmem_test_lock", lk).unwrap(),
                "test_lock took a held lock"
            );
        }
    }
    barrier();
    if p.me == 0 {
        lock::clear_lock("shmem_clear_lock", lk).unwrap();
    }
    barrier();
    // All PEs try at once: exactly one wins.
    if lock::test_lock("shmem_test_lock", lk).unwrap() {
        amo_op(won, AmoOp::Add(1), 0);
        barrier();
        lock::clear_lock("shmem_clear_lock", lk).unwrap();
    } else {
        barrier();
    }
    barrier();
    assert_eq!(
        amo_op(won, AmoOp::Fetch, 0),
        1,
        "exactly one test_lock wins"
    );
    barrier();

    // Mixed: half the acquisitions spin on test_lock, half queue in set_lock.
    for k in 0..K {
        if (k + p.me as u64) & 1 == 0 {
            while !lock::test_lock("shmem_test_lock", lk).unwrap() {
                std::thread::yield_now();
            }
        } else {
            lock::set_lock("shmem_set_lock", lk).unwrap();
        }
        rmw();
        lock::clear_lock("shmem_clear_lock", lk).unwrap();
    }
    barrier();
    get(&mut v, ctr, 0);
    assert_eq!(
        v[0],
        2 * K * p.n as u64,
        "lost updates under test_lock/set_lock"
    );
    // The lock is free again: this PE takes it with test_lock, in turn.
    for turn in 0..p.n {
        if turn == p.me {
            assert!(
                lock::test_lock("shmem_test_lock", lk).unwrap(),
                "free lock not taken"
            );
            lock::clear_lock("shmem_clear_lock", lk).unwrap();
        }
        barrier();
    }
    free(lk);
    free(ctr);
    free(inside);
    free(won);
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    rshmem_core::init(rshmem_core::ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let p = Pes {
        me: setup::my_pe().unwrap(),
        n: setup::n_pes().unwrap(),
    };
    match mode.as_str() {
        "barrier" => barrier_mode(&p),
        "p2p" => p2p_mode(&p),
        "signal" => signal_mode(&p),
        "lock" => lock_mode(&p),
        other => panic!("usage: core_sync barrier|p2p|signal|lock (got {other:?})"),
    }
    println!("ok {mode} pe={}", p.me);
    rshmem_core::finalize();
}
