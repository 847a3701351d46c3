//! The core operations Coarray Fortran's image control is made of, run under `oshrun`:
//! `core_image_control <mode>` with mode
//!
//! - `barrier`: rounds of the barrier that goes on without departed members
//!   (`coll::tolerant_sync`) on WORLD and on the reversed team; counters prove no PE
//!   leaves a round before every member entered it, and puts before it are visible after;
//! - `pairs`: pairwise synchronization (`ops::pair_sync`) with the ring neighbours and
//!   with everyone, each round's puts visible after it; a PE named twice is refused before
//!   anything is sent;
//! - `events`: every PE posts to PE 0 (`ops::events`), which waits for the count, queries
//!   and consumes it; then a ring of posts and waits;
//! - `put`: puts complete at their target on return (`rma::ctx_put_complete`,
//!   `order::ctx_complete_puts`), seen by the target after a fetching atomic says so;
//! - `departed`: the last PE finalizes; the others' barrier, departure checks, status
//!   probe and pairwise synchronization with it report it (`Error::PeGone`), and the job
//!   ends normally.
//!
//! Each mode prints `ok <mode> pe=<me>`; every check is an assertion.
#![allow(unsafe_code)]

use rshmem_core::coll::tolerant_sync::{check_departed, tolerant_sync_all, ArrivalWords};
use rshmem_core::ops::events;
use rshmem_core::ops::pair_sync::PairCounters;
use rshmem_core::team::{self, Team, TeamConfig};
use rshmem_core::{amo, ft, memory, order, rma, setup, sync, AmoOp, Ctx, Departure, Error, Word};

const R: &str = "core_image_control";

struct Pes {
    me: usize,
    n: usize,
}

fn calloc<W>(count: usize) -> *mut W {
    memory::calloc("shmem_calloc", count, std::mem::size_of::<W>())
        .unwrap()
        .cast()
}

fn amo_op<W: Word>(dest: *const W, op: AmoOp<W>, pe: usize) -> W {
    // SAFETY: callers pass symmetric, aligned words.
    unsafe { amo::ctx_atomic(Ctx::default_ctx(), R, dest, op, pe as i64).unwrap() }
}

fn put_u64(dest: *mut u64, v: u64, pe: usize) {
    // SAFETY: `v` is a live value; `dest` symmetric.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            R,
            dest.cast(),
            (&v as *const u64).cast(),
            8,
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

/// Arrival words for a team of up to `n` members (collective over WORLD).
fn words(n: usize) -> ArrivalWords {
    let base = memory::calloc(R, n, ArrivalWords::STRIDE).unwrap();
    sync::barrier_all().unwrap();
    ArrivalWords::new(base as usize)
}

/// Rounds of the tolerant barrier on `team`: each member adds one to a counter at every
/// member and puts its round number into its slot there.
fn barrier_rounds(p: &Pes, team: &Team, w: &ArrivalWords) {
    const ROUNDS: u64 = 300;
    let n = team.n_pes();
    let ctr = calloc::<u64>(2);
    let slots = calloc::<u64>(2 * p.n);
    for r in 0..ROUNDS {
        let c = ctr.wrapping_add((r % 2) as usize);
        for k in 0..n {
            let pe = team.members().pe(k);
            amo_op(c, AmoOp::Add(1), pe);
            put_u64(slots.wrapping_add((r % 2) as usize * p.n + p.me), r + 1, pe);
        }
        tolerant_sync_all(R, w, team).unwrap();
        assert_eq!(local(c), (r / 2 + 1) * n as u64, "round {r}: counter");
        for k in 0..n {
            let pe = team.members().pe(k);
            let got = local(slots.wrapping_add((r % 2) as usize * p.n + pe));
            assert_eq!(got, r + 1, "round {r}: put from PE {pe}");
        }
    }
    check_departed(R, team).unwrap();
}

fn barrier_mode(p: &Pes) {
    let world = team::world().unwrap();
    barrier_rounds(p, &world, &words(p.n));
    let rev = team::split_strided(
        &world,
        p.n as i64 - 1,
        -1,
        p.n as i64,
        TeamConfig::default(),
    )
    .unwrap()
    .expect("every PE is in the reversed team");
    barrier_rounds(p, &rev, &words(p.n));
    sync::barrier_all().unwrap();
}

fn pairs_mode(p: &Pes) {
    const ROUNDS: u64 = 300;
    let counters = PairCounters::new(
        memory::calloc(R, p.n, PairCounters::STRIDE).unwrap() as usize,
        p.n,
    );
    let slots = calloc::<u64>(p.n);
    sync::barrier_all().unwrap();
    let (left, right) = ((p.me + p.n - 1) % p.n, (p.me + 1) % p.n);
    let all: Vec<usize> = (0..p.n).collect();
    // At 1 and 2 PEs the neighbours are one PE: named once.
    let ring: Vec<usize> = if left == right {
        vec![right]
    } else {
        vec![left, right]
    };
    for r in 1..=ROUNDS {
        put_u64(slots.wrapping_add(p.me), r, right);
        counters.sync_with(R, &ring).unwrap();
        if p.n > 1 {
            assert_eq!(local(slots.wrapping_add(left)), r, "round {r}: left's put");
        }
        // Everyone (this PE included, which is skipped).
        counters.sync_with(R, &all).unwrap();
    }
    if p.n > 1 {
        let e = counters.sync_with(R, &[right, right]).unwrap_err();
        assert!(
            matches!(e, Error::RepeatedPe { pe, .. } if pe == right),
            "a repeated partner: {e}"
        );
        let many: Vec<usize> = (0..100).map(|i| i % p.n).collect();
        let e = counters.sync_with(R, &many).unwrap_err();
        assert!(
            matches!(e, Error::RepeatedPe { .. }),
            "a long repeated list: {e}"
        );
    }
    // Nothing was sent by the refused calls: the counts still pair up.
    counters.sync_with(R, &all).unwrap();
    sync::barrier_all().unwrap();
}

fn events_mode(p: &Pes) {
    let ev = calloc::<i64>(1);
    sync::barrier_all().unwrap();
    const POSTS: i64 = 5;
    // SAFETY: `ev` is a symmetric, aligned word on every PE.
    unsafe {
        for _ in 0..POSTS {
            events::post(R, ev, 0).unwrap();
        }
        if p.me == 0 {
            let all = POSTS * p.n as i64;
            events::wait(R, ev, all).unwrap();
            assert_eq!(
                events::query(R, ev, 0).unwrap(),
                0,
                "the wait consumed every post"
            );
        }
        sync::barrier_all().unwrap();
        // A ring: each PE posts to its right neighbour and waits for its left one's post.
        for round in 0..50 {
            events::post(R, ev, (p.me + 1) % p.n).unwrap();
            events::wait(R, ev, 1).unwrap();
            assert!(events::query(R, ev, p.me).unwrap() >= 0, "round {round}");
        }
    }
    sync::barrier_all().unwrap();
}

fn put_mode(p: &Pes) {
    const ROUNDS: u64 = 200;
    let data = calloc::<u64>(4);
    let flag = calloc::<u64>(1);
    sync::barrier_all().unwrap();
    let right = (p.me + 1) % p.n;
    for r in 1..=ROUNDS {
        let v = [r, r * 2, r * 3, r * 4];
        // Odd rounds: a put, then the completion of the puts to the target.
        let put = if r % 2 == 0 {
            rma::ctx_put_complete
        } else {
            rma::ctx_put
        };
        // SAFETY: `v` is live; `data` symmetric, 32 bytes.
        unsafe {
            put(
                Ctx::default_ctx(),
                R,
                data.cast(),
                v.as_ptr().cast(),
                32,
                right as i64,
            )
        }
        .unwrap();
        if r % 2 == 1 {
            order::ctx_complete_puts(Ctx::default_ctx(), R, right as i64).unwrap();
        }
        // A fetching atomic: the flag says the data is there.
        amo_op(flag, AmoOp::Set(r), right);
        while local(flag) < r {
            std::hint::spin_loop();
        }
        for (k, want) in [r, r * 2, r * 3, r * 4].into_iter().enumerate() {
            assert_eq!(local(data.wrapping_add(k)), want, "round {r}: word {k}");
        }
        sync::barrier_all().unwrap();
    }
    let e = order::ctx_complete_puts(Ctx::default_ctx(), R, p.n as i64).unwrap_err();
    assert!(matches!(e, Error::PeOutOfRange { .. }), "{e}");
}

fn departed_mode(p: &Pes) {
    assert!(p.n >= 2, "departed needs 2 PEs at least");
    let world = team::world().unwrap();
    let w = words(p.n);
    let counters = PairCounters::new(
        memory::calloc(R, p.n, PairCounters::STRIDE).unwrap() as usize,
        p.n,
    );
    sync::barrier_all().unwrap();
    let last = p.n - 1;
    tolerant_sync_all(R, &w, &world).unwrap();
    if p.me == last {
        println!("ok departed pe={}", p.me);
        rshmem_core::finalize();
        std::process::exit(0);
    }
    // The barrier ends without the finalized PE, naming it; so does every one after it.
    for _ in 0..3 {
        let e = tolerant_sync_all(R, &w, &world).unwrap_err();
        assert!(
            matches!(e, Error::PeGone { pe, rank, how: Departure::Finalized, .. } if pe == last && rank == last),
            "{e}"
        );
    }
    let e = check_departed(R, &world).unwrap_err();
    assert!(matches!(e, Error::PeGone { pe, .. } if pe == last), "{e}");
    assert_eq!(ft::departure(R, last).unwrap(), Some(Departure::Finalized));
    assert_eq!(ft::departure(R, p.me).unwrap(), None);
    let e = counters.sync_with(R, &[last]).unwrap_err();
    assert!(matches!(e, Error::PeGone { pe, .. } if pe == last), "{e}");
    // The running PEs still synchronize among themselves.
    let running: Vec<usize> = (0..last).collect();
    counters.sync_with(R, &running).unwrap();
    println!("ok departed pe={}", p.me);
    rshmem_core::finalize();
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
        "pairs" => pairs_mode(&p),
        "events" => events_mode(&p),
        "put" => put_mode(&p),
        "departed" => return departed_mode(&p),
        other => {
            panic!("usage: core_image_control barrier|pairs|events|put|departed (got {other:?})")
        }
    }
    println!("ok {mode} pe={}", p.me);
    rshmem_core::finalize();
}
