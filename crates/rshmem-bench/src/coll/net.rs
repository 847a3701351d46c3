//! `coll --net`: network collectives against the one-way latency of their routes.

use rshmem_core::coll::{self as core_coll, ReduceOp};
use rshmem_core::team;
use rshmem_core::{memory, setup, sync};

use crate::report::Report;
use crate::stats::{interleaved_fixed, Body, Lat};

use super::{fill_f64, med_min, ok};

/// A ping-pong of `send`s between PEs 0 and 1 (`in_pair`), each raising the other's
/// symmetric `word` by one: a body for [`interleaved_fixed`].
fn pingpong<'a>(
    in_pair: bool,
    me: usize,
    word: *mut u64,
    send: &'a dyn Fn(),
) -> impl FnMut(u64) + 'a {
    let mut got = 0u64;
    move |k: u64| {
        if !in_pair {
            return;
        }
        for _ in 0..k {
            got += 1;
            if me == 0 {
                send();
            }
            // SAFETY: `word` is a symmetric word that only the peer's `send` raises.
            ok(unsafe {
                rshmem_core::p2p::wait_until("shmem_wait_until", word, rshmem_core::Cmp::Ge, got)
            });
            if me == 1 {
                send();
            }
        }
    }
}

/// `coll --net`: what the network collectives cost against the one-way latency of the
/// routes they cross (run over UCX: `SHMEM_TRANSPORT=ucx UCX_TLS=tcp`). The one-way
/// latency is half a ping-pong between PEs 0 and 1, of a put with signal and of a posted
/// atomic add; each collective is shown as a multiple of it (its ideal is its messages
/// on the critical path).
pub(crate) fn run_net(quick: bool) {
    use rshmem_core::{amo, ctx::Ctx, signal, AmoOp, SignalOp};
    crate::pe::init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    let world = ok(team::world());
    const BIG: usize = 1 << 20;
    let src = ok(memory::align("shmem_align", 4096, BIG));
    let dst = ok(memory::align("shmem_align", 4096, BIG));
    let words = ok(memory::align("shmem_align", 4096, 4096)).cast::<u64>();
    // SAFETY: all three blocks were just allocated in our heap with these sizes.
    unsafe {
        fill_f64(src, BIG, 1.0);
        std::ptr::write_bytes(dst, 0, BIG);
        std::ptr::write_bytes(words.cast::<u8>(), 0, 4096);
    }
    ok(sync::barrier_all());
    let (samples, warm) = if quick { (15, 2) } else { (61, 4) };
    let ctx = Ctx::default_ctx();
    let peer = (me ^ 1) as i64;
    let in_pair = me < 2 && npes >= 2;
    // Word 0: put-with-signal count; word 8: posted-add count; 64..: put payload.
    let (sig, cnt) = (words, words.wrapping_add(8));
    let payload = words.wrapping_add(64).cast::<u8>();
    let put_signal = || {
        // SAFETY: `payload` and `sig` are symmetric words of our block.
        ok(unsafe {
            signal::ctx_put_signal(
                ctx,
                "shmem_putmem_signal",
                false,
                payload,
                payload,
                8,
                sig,
                1,
                SignalOp::Add,
                peer,
            )
        })
    };
    let posted_add = || {
        // SAFETY: `cnt` is a symmetric word of our block.
        ok(unsafe { amo::ctx_atomic_post(ctx, "shmem_atomic_add", cnt, AmoOp::Add(1u64), peer) })
    };
    let mut ping = pingpong(in_pair, me, sig, &put_signal);
    let mut post = pingpong(in_pair, me, cnt, &posted_add);
    // The bandwidth the large collectives meet: 1 MiB put then quiet, PE 0 to PE 1.
    let mut bulk = |k: u64| {
        for _ in 0..k {
            if me == 0 && npes >= 2 {
                // SAFETY: `dst` is a symmetric block of `BIG` bytes that only this test
                // writes, `src` ours.
                ok(unsafe { rshmem_core::rma::ctx_put(ctx, "shmem_putmem", dst, src, BIG, 1) });
                ok(rshmem_core::order::quiet());
            }
            ok(sync::barrier_all());
        }
    };
    let mut pp: [Body<'_>; 3] = [&mut ping, &mut post, &mut bulk];
    let t = interleaved_fixed(&mut pp, 32, warm, samples);
    let bulk = Lat::of(&t[2]);
    let one_way: Vec<Lat> = t[..2]
        .iter()
        .map(|x| Lat::of(&x.iter().map(|v| v / 2.0).collect::<Vec<_>>()))
        .collect();
    ok(sync::barrier_all());
    let mut barrier = |k: u64| {
        for _ in 0..k {
            ok(sync::barrier_all());
        }
    };
    let mut tsync = |k: u64| {
        for _ in 0..k {
            ok(team::sync(&world));
        }
    };
    let bcast = |n: usize| {
        let world = &world;
        move |k: u64| {
            for _ in 0..k {
                // SAFETY: `src` and `dst` are distinct symmetric blocks of `BIG >= n` bytes
                // that only these collectives touch; every PE runs the same calls.
                ok(unsafe { core_coll::broadcast("shmem_broadcastmem", world, dst, src, n, 0) });
            }
        }
    };
    let reduce = |n: usize| {
        let world = &world;
        move |k: u64| {
            for _ in 0..k {
                // SAFETY: as for `bcast`; `n / 8` f64 fit in `n` bytes.
                ok(unsafe {
                    core_coll::reduce::<f64>(
                        "shmem_double_sum_reduce",
                        world,
                        dst.cast(),
                        src.cast(),
                        n / 8,
                        ReduceOp::Sum,
                    )
                });
            }
        }
    };
    let (mut b8, mut b64k, mut b1m) = (bcast(8), bcast(64 << 10), bcast(BIG));
    let (mut r8, mut r64k, mut r1m) = (reduce(8), reduce(64 << 10), reduce(BIG));
    let small: Vec<Vec<f64>> = {
        let mut bodies: [Body<'_>; 4] = [&mut barrier, &mut tsync, &mut b8, &mut r8];
        interleaved_fixed(&mut bodies, 16, warm, samples)
    };
    let large: Vec<Vec<f64>> = {
        let mut bodies: [Body<'_>; 4] = [&mut b64k, &mut r64k, &mut b1m, &mut r1m];
        interleaved_fixed(&mut bodies, 2, warm.min(2), samples)
    };
    // The reductions above must have summed exactly: every source element is 1.0.
    // SAFETY: `dst` holds the last reduction's `BIG` bytes of f64.
    let sums = unsafe { std::slice::from_raw_parts(dst.cast::<f64>(), BIG / 8) };
    assert!(
        sums.iter().all(|&v| v == npes as f64),
        "reduction result is wrong"
    );
    if me == 0 {
        let r = Report::new(npes);
        r.section(&format!(
            "network collectives, {npes} PEs: latency median / min; x1w = median / one-way latency (put+signal)"
        ));
        let w = one_way[0].median;
        for (name, lat) in [
            ("one-way put+signal", one_way[0]),
            ("one-way posted add", one_way[1]),
        ] {
            r.line(format!("{name:<24} {:>21}", med_min(lat)));
            r.json("net_one_way", None, name, lat.median, "ns");
        }
        r.line(format!(
            "{:<24} {:>21}   ({:.2} GB/s at the minimum)",
            "put 1 MiB + quiet + barrier",
            med_min(bulk),
            BIG as f64 / bulk.min
        ));
        r.json(
            "net_bulk",
            None,
            "put_1MiB_quiet_barrier",
            bulk.median,
            "ns",
        );
        let names = [
            "barrier_all",
            "team_sync",
            "bcast 8 B",
            "reduce f64 8 B",
            "bcast 64 KiB",
            "reduce f64 64 KiB",
            "bcast 1 MiB",
            "reduce f64 1 MiB",
        ];
        for (name, x) in names.iter().zip(small.iter().chain(large.iter())) {
            let lat = Lat::of(x);
            r.line(format!(
                "{name:<24} {:>21}   x1w {:>6.1}",
                med_min(lat),
                lat.median / w
            ));
            r.json("net_coll", None, name, lat.median, "ns");
        }
    }
    ok(sync::barrier_all());
    ok(memory::free("shmem_free", words.cast()));
    ok(memory::free("shmem_free", dst));
    ok(memory::free("shmem_free", src));
    rshmem_core::finalize();
}
