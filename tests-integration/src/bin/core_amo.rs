//! Atomic memory operations of rshmem-core under contention, run under `oshrun`:
//! `core_amo <blocking|nbi>`.
//!
//! For every integer [`Word`] (i16, u16, i32, u32, i64, u64, isize, usize) all PEs hammer
//! PE 0 (and their right neighbour) with every [`AmoOp`]: fetch-add (positive, negative and
//! wrapping increments), fetch-inc tickets (all distinct), compare-swap increments and a
//! single-winner compare-swap, swap (the returned values plus the final value are exactly
//! the values swapped in), set, fetch, and/or/xor (each PE owns one bit). For f32/f64:
//! fetch, set, swap, compare-swap and add. Final values are checked exactly.
//! `nbi` runs every fetching operation through the non-blocking form plus `quiet`.
//! Prints `ok <mode> pe=<me>`.
#![allow(unsafe_code)]

use rshmem_core::{amo, memory, order, rma, setup, sync, AmoOp, Word};

/// Iterations of every operation per PE: fewer where some PEs are reached through the
/// network (`SHMEM_TRANSPORT=ucx`, `ofi` or `mixed`, or several hosts: `RSHMEM_TEST_HOSTS`),
/// where each is a network round trip.
fn iters() -> usize {
    static K: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *K.get_or_init(|| {
        let network = matches!(
            std::env::var("SHMEM_TRANSPORT").as_deref(),
            Ok("ucx" | "ofi" | "mixed")
        ) || rshmem_tests::test_hosts(usize::MAX) > 1;
        if network {
            300
        } else {
            2000
        }
    })
}

/// Integer words with the wrapping arithmetic the checks need.
trait Int: Word + Ord + std::hash::Hash {
    const NAME: &'static str;
    const MAX: Self;
    /// `v as Self` (wrapping).
    fn c(v: i64) -> Self;
    fn wadd(self, o: Self) -> Self;
    fn bit(i: usize) -> Self {
        Self::c(1i64 << i)
    }
    fn and(self, o: Self) -> Self;
    fn not(self) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const NAME: &'static str = stringify!($t);
            const MAX: Self = <$t>::MAX;
            fn c(v: i64) -> Self { v as $t }
            fn wadd(self, o: Self) -> Self { self.wrapping_add(o) }
            fn and(self, o: Self) -> Self { self & o }
            fn not(self) -> Self { !self }
        }
    )*};
}
int!(i16, u16, i32, u32, i64, u64, isize, usize);

struct Ctx {
    me: usize,
    n: usize,
    nbi: bool,
}

impl Ctx {
    /// Applies `op` to `dest` on `pe`, through the blocking or the fetching `_nbi` form.
    fn amo<W: Word>(&self, dest: *const W, op: AmoOp<W>, pe: usize) -> W {
        if self.nbi {
            let mut old = W::ZERO;
            // SAFETY: callers pass symmetric, aligned words; `old` is a live local that
            // stays untouched until the quiet below.
            unsafe {
                amo::ctx_atomic_nbi(
                    rshmem_core::Ctx::default_ctx(),
                    "shmem_atomic_fetch_nbi",
                    &mut old,
                    dest,
                    op,
                    pe as i64,
                )
                .unwrap()
            };
            order::quiet().unwrap();
            old
        } else {
            // SAFETY: callers pass symmetric, aligned words.
            unsafe {
                amo::ctx_atomic(
                    rshmem_core::Ctx::default_ctx(),
                    "shmem_atomic",
                    dest,
                    op,
                    pe as i64,
                )
                .unwrap()
            }
        }
    }

    /// A non-fetching operation: always the blocking form, result ignored.
    fn post<W: Word>(&self, dest: *const W, op: AmoOp<W>, pe: usize) {
        // SAFETY: callers pass symmetric, aligned words.
        unsafe {
            amo::ctx_atomic(
                rshmem_core::Ctx::default_ctx(),
                "shmem_atomic_add",
                dest,
                op,
                pe as i64,
            )
            .unwrap()
        };
    }

    fn put<W: Word>(&self, dest: *mut W, v: W, pe: usize) {
        // SAFETY: `v` is a live local of `W::SIZE` bytes.
        unsafe {
            rma::ctx_put(
                rshmem_core::Ctx::default_ctx(),
                "shmem_p",
                dest.cast(),
                (&v as *const W).cast(),
                W::SIZE,
                pe as i64,
            )
            .unwrap()
        }
    }
}

/// Reads this PE's own symmetric word (after a barrier).
fn local<W: Word>(p: *const W) -> W {
    // SAFETY: callers pass their own symmetric, aligned words.
    unsafe { p.read_volatile() }
}

fn sorted<W: Copy + PartialOrd>(mut v: Vec<W>) -> Vec<W> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

fn int_suite<T: Int>(cx: &Ctx) {
    let (me, n) = (cx.me, cx.n);
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let ty = T::NAME;
    const SWAP0: i64 = 7;
    let words = memory::calloc("shmem_calloc", 32 + 2 * n * iters(), T::SIZE).unwrap() as *mut T;
    let w = |i: usize| words.wrapping_add(i);
    let (fadd, add, inc, cas, winner, swap, or, and, xor, set, wins, ring, wrap) = (
        w(0),
        w(1),
        w(2),
        w(3),
        w(4),
        w(5),
        w(6),
        w(7),
        w(8),
        w(9),
        w(10),
        w(11),
        w(12),
    );
    let tickets = w(32);
    let olds = w(32 + n * iters());
    if me == 0 {
        cx.amo(and, AmoOp::Set(T::c(-1)), 0);
        cx.amo(swap, AmoOp::Set(T::c(SWAP0)), 0);
        cx.amo(wrap, AmoOp::Set(T::MAX.wadd(T::c(-2))), 0);
    }
    sync::barrier_all().unwrap();

    let mut last_fadd = None;
    for k in 0..iters() {
        // Fetch-add: the values this PE sees only grow (every increment is positive).
        let old = cx.amo(fadd, AmoOp::Add(T::c(me as i64 + 1)), 0);
        if let Some(l) = last_fadd {
            assert!(old > l, "{ty}: fetch_add went back: {old:?} after {l:?}");
        }
        last_fadd = Some(old);
        // Non-fetching add with negative (for unsigned: wrapping) increments.
        cx.post(add, AmoOp::Add(T::c(2 * me as i64 - 3)), 0);
        // Fetch-inc tickets, published to PE 0.
        let t = cx.amo(inc, AmoOp::Add(T::ONE), 0);
        cx.put(tickets.wrapping_add(me * iters() + k), t, 0);
        // Increment by a compare-swap loop.
        let mut cur = cx.amo(cas, AmoOp::Fetch, 0);
        loop {
            let seen = cx.amo(
                cas,
                AmoOp::CompareSwap {
                    cond: cur,
                    value: cur.wadd(T::ONE),
                },
                0,
            );
            if seen == cur {
                break;
            }
            cur = seen;
        }
        // Swap in distinct values; the old ones go to PE 0.
        let old = cx.amo(swap, AmoOp::Swap(T::c(1000 + (me * iters() + k) as i64)), 0);
        cx.put(olds.wrapping_add(me * iters() + k), old, 0);
        // Ring: the right neighbour's word.
        cx.post(ring, AmoOp::Add(T::c(me as i64 + 1)), right);
    }
    // Bitwise: this PE owns bit `me`.
    let b = T::bit(me);
    let old = cx.amo(or, AmoOp::Or(b), 0);
    assert_eq!(
        old.and(b),
        T::ZERO,
        "{ty}: fetch_or saw bit {me} set before PE {me} set it"
    );
    let old = cx.amo(and, AmoOp::And(b.not()), 0);
    assert_eq!(
        old.and(b),
        b,
        "{ty}: fetch_and saw bit {me} clear before PE {me} cleared it"
    );
    for i in 0..3 {
        let old = cx.amo(xor, AmoOp::Xor(b), 0);
        let want = if i & 1 == 0 { T::ZERO } else { b };
        assert_eq!(
            old.and(b),
            want,
            "{ty}: fetch_xor #{i} saw the wrong bit {me}"
        );
    }
    // One compare-swap from 0 wins.
    let old = cx.amo(
        winner,
        AmoOp::CompareSwap {
            cond: T::ZERO,
            value: T::c(me as i64 + 1),
        },
        0,
    );
    if old == T::ZERO {
        cx.post(wins, AmoOp::Add(T::ONE), 0);
    } else {
        assert!(
            old >= T::ONE && old <= T::c(n as i64),
            "{ty}: cswap saw {old:?}"
        );
    }
    // Set race and wrap-around.
    let set_ret = cx.amo(set, AmoOp::Set(T::c(me as i64 + 1)), 0);
    if !cx.nbi {
        assert_eq!(
            set_ret,
            T::c(me as i64 + 1),
            "{ty}: Set returns the value stored"
        );
    }
    cx.post(wrap, AmoOp::Add(T::ONE), 0);
    sync::barrier_all().unwrap();

    // Every PE fetches PE 0's final values.
    let sum_ids: i64 = (1..=n as i64).sum();
    let want_fadd = T::c(iters() as i64 * sum_ids);
    let want_add = T::c(iters() as i64 * (0..n as i64).map(|p| 2 * p - 3).sum::<i64>());
    let bits = T::c((1i64 << n) - 1);
    let fetch = |p: *const T| cx.amo(p, AmoOp::Fetch, 0);
    assert_eq!(fetch(fadd), want_fadd, "{ty}: sum of fetch_adds");
    assert_eq!(fetch(add), want_add, "{ty}: sum of adds (wrapping)");
    assert_eq!(
        fetch(inc),
        T::c((n * iters()) as i64),
        "{ty}: fetch_inc count"
    );
    assert_eq!(
        fetch(cas),
        T::c((n * iters()) as i64),
        "{ty}: compare-swap increments"
    );
    let win = fetch(winner);
    assert!(
        win >= T::ONE && win <= T::c(n as i64),
        "{ty}: cswap winner {win:?}"
    );
    assert_eq!(fetch(wins), T::ONE, "{ty}: exactly one cswap from 0 wins");
    assert_eq!(fetch(or), bits, "{ty}: or of all PE bits");
    assert_eq!(fetch(and), bits.not(), "{ty}: and clearing all PE bits");
    assert_eq!(fetch(xor), bits, "{ty}: three xors per PE");
    let s = fetch(set);
    assert!(
        s >= T::ONE && s <= T::c(n as i64),
        "{ty}: set race left {s:?}"
    );
    assert_eq!(
        fetch(wrap),
        T::MAX.wadd(T::c(n as i64 - 2)),
        "{ty}: wrapping add past MAX"
    );
    assert_eq!(
        local(ring),
        T::c(iters() as i64 * (left as i64 + 1)),
        "{ty}: ring adds from PE {left}"
    );
    if me == 0 {
        // Tickets: exactly 0..n*iters(), each once.
        let t: Vec<T> = (0..n * iters())
            .map(|i| local(tickets.wrapping_add(i)))
            .collect();
        let want: Vec<T> = (0..(n * iters()) as i64).map(T::c).collect();
        assert_eq!(
            sorted(t),
            want,
            "{ty}: fetch_inc tickets are unique and dense"
        );
        // Swap: returned values plus the final value are exactly the values swapped in.
        let mut got: Vec<T> = (0..n * iters())
            .map(|i| local(olds.wrapping_add(i)))
            .collect();
        got.push(local(swap));
        let mut want: Vec<T> = (0..(n * iters()) as i64).map(|v| T::c(1000 + v)).collect();
        want.push(T::c(SWAP0));
        assert_eq!(sorted(got), sorted(want), "{ty}: swap values are conserved");
    }
    sync::barrier_all().unwrap();
    memory::free("shmem_free", words.cast()).unwrap();
}

trait Float: Word {
    const NAME: &'static str;
    fn f(v: f64) -> Self;
    fn bits(self) -> u64;
}
impl Float for f32 {
    const NAME: &'static str = "f32";
    fn f(v: f64) -> Self {
        v as f32
    }
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
}
impl Float for f64 {
    const NAME: &'static str = "f64";
    fn f(v: f64) -> Self {
        v
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

fn float_suite<F: Float>(cx: &Ctx) {
    let (me, n) = (cx.me, cx.n);
    let ty = F::NAME;
    let words = memory::calloc("shmem_calloc", 16 + n * iters(), F::SIZE).unwrap() as *mut F;
    let w = |i: usize| words.wrapping_add(i);
    let (swap, set, add, winner, fetched) = (w(0), w(1), w(2), w(3), w(4));
    let olds = w(16);
    if me == 0 {
        cx.amo(swap, AmoOp::Set(F::f(-0.25)), 0);
    }
    sync::barrier_all().unwrap();
    for k in 0..iters() {
        let v = F::f((me * iters() + k) as f64 + 0.5);
        let old = cx.amo(swap, AmoOp::Swap(v), 0);
        cx.put(olds.wrapping_add(me * iters() + k), old, 0);
        cx.amo(add, AmoOp::Add(F::f(me as f64 + 1.0)), 0);
    }
    cx.amo(set, AmoOp::Set(F::f(me as f64 * 1.5 + 0.75)), 0);
    cx.amo(
        winner,
        AmoOp::CompareSwap {
            cond: F::ZERO,
            value: F::f(me as f64 + 2.0),
        },
        0,
    );
    // Set on the own word of the right neighbour, then everyone fetches it back.
    cx.amo(fetched, AmoOp::Set(F::f(me as f64 - 10.0)), (me + 1) % n);
    sync::barrier_all().unwrap();
    let fetch = |p: *const F, pe: usize| cx.amo(p, AmoOp::Fetch, pe);
    for pe in 0..n {
        let from = (pe + n - 1) % n;
        assert_eq!(
            fetch(fetched, pe).bits(),
            F::f(from as f64 - 10.0).bits(),
            "{ty}: set/fetch on PE {pe}"
        );
    }
    let s = fetch(set, 0);
    assert!(
        (0..n).any(|p| F::f(p as f64 * 1.5 + 0.75).bits() == s.bits()),
        "{ty}: set race left {s:?}"
    );
    let sum: f64 = (1..=n).map(|p| p as f64).sum::<f64>() * iters() as f64;
    assert_eq!(fetch(add, 0).bits(), F::f(sum).bits(), "{ty}: float adds");
    let win = fetch(winner, 0);
    assert!(
        (0..n).any(|p| F::f(p as f64 + 2.0).bits() == win.bits()),
        "{ty}: cswap winner {win:?}"
    );
    if me == 0 {
        let mut got: Vec<F> = (0..n * iters())
            .map(|i| local(olds.wrapping_add(i)))
            .collect();
        got.push(local(swap));
        let mut want: Vec<F> = (0..n * iters()).map(|v| F::f(v as f64 + 0.5)).collect();
        want.push(F::f(-0.25));
        let bits = |v: Vec<F>| sorted(v.into_iter().map(F::bits).collect::<Vec<_>>());
        assert_eq!(bits(got), bits(want), "{ty}: swap values are conserved");
    }
    sync::barrier_all().unwrap();
    memory::free("shmem_free", words.cast()).unwrap();
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let nbi = match mode.as_str() {
        "blocking" => false,
        "nbi" => true,
        other => panic!("usage: core_amo blocking|nbi (got {other:?})"),
    };
    rshmem_core::init(rshmem_core::ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let cx = Ctx {
        me: setup::my_pe().unwrap(),
        n: setup::n_pes().unwrap(),
        nbi,
    };
    int_suite::<i16>(&cx);
    int_suite::<u16>(&cx);
    int_suite::<i32>(&cx);
    int_suite::<u32>(&cx);
    int_suite::<i64>(&cx);
    int_suite::<u64>(&cx);
    int_suite::<isize>(&cx);
    int_suite::<usize>(&cx);
    float_suite::<f32>(&cx);
    float_suite::<f64>(&cx);
    println!("ok {mode} pe={}", cx.me);
    rshmem_core::finalize();
}
