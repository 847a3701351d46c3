//! Profiling counters through the safe API. Each PE turns counting on with
//! `pcontrol(1)` (unless `SHMEM_PROFILE` already did), then issues `10 + me` puts and
//! `5 + me` gets of 8 bytes to its right neighbour, 3 fences, 2 quiets, one barrier and
//! `4 + me` puts and a quiet on a private context, and checks its own counts and `pcntr` exactly;
//! after `pcontrol(0)` more calls change nothing. Prints `ok api_profile pe=<me>`.
//! With `API_PROFILE_ON_PES=even|odd`, only those PEs run with `SHMEM_PROFILE=1` (PEs
//! that disagree must still finalize, and PE 0 reports who did not count).

use rshmem::{Private, ProfileFamily, Shmem};

fn count(shmem: &Shmem, fam: ProfileFamily) -> (u64, u64) {
    shmem
        .profile()
        .into_iter()
        .find(|(f, _)| *f == fam)
        .map_or((0, 0), |(_, c)| (c.calls, c.bytes))
}

fn main() -> rshmem::Result<()> {
    if let Ok(which) = std::env::var("API_PROFILE_ON_PES") {
        let rank: usize = std::env::var("PMI_RANK").map_or(0, |r| r.parse().unwrap_or(0));
        if rank.is_multiple_of(2) == (which == "even") {
            std::env::set_var("SHMEM_PROFILE", "1");
        } else {
            std::env::remove_var("SHMEM_PROFILE");
        }
    }
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let right = (me + 1) % n;
    let buf = shmem.alloc(4, 0u64)?;
    let ctx = shmem.create_ctx::<Private>(false)?;
    shmem.barrier_all();
    let env_on = std::env::var("SHMEM_PROFILE").is_ok_and(|v| v != "0");
    let before_put = count(&shmem, ProfileFamily::Put);
    let before_sync = count(&shmem, ProfileFamily::Sync);
    if !env_on {
        assert_eq!(before_put, (0, 0), "nothing counted before pcontrol(1)");
        shmem.pcontrol(1);
    }
    let (puts, gets, ctx_puts) = (10 + me as u64, 5 + me as u64, 4 + me as u64);
    for i in 0..puts {
        shmem.put(&buf, (i % 4) as usize, &[i], right)?;
    }
    let mut out = [0u64];
    for _ in 0..gets {
        shmem.get(&mut out, &buf, 0, right)?;
    }
    for _ in 0..3 {
        shmem.fence();
    }
    for _ in 0..2 {
        shmem.quiet();
    }
    for i in 0..ctx_puts {
        ctx.put(&buf, 0, &[i], right)?;
    }
    ctx.quiet();
    shmem.barrier_all();

    let put = count(&shmem, ProfileFamily::Put);
    assert_eq!(
        (put.0 - before_put.0, put.1 - before_put.1),
        (puts + ctx_puts, 8 * (puts + ctx_puts)),
        "put calls and bytes"
    );
    assert_eq!(count(&shmem, ProfileFamily::Get), (gets, 8 * gets));
    assert_eq!(count(&shmem, ProfileFamily::Fence).0, 3);
    assert_eq!(
        count(&shmem, ProfileFamily::Quiet).0,
        3,
        "2 quiets and a ctx quiet"
    );
    assert_eq!(count(&shmem, ProfileFamily::Sync).0 - before_sync.0, 1);

    let p = shmem.default_ctx().pcntr();
    assert_eq!((p.issued_write, p.issued_read), (puts, gets), "{p:?}");
    assert_eq!((p.completed_write, p.completed_read), (puts, gets), "{p:?}");
    assert_eq!(p.target, 0);
    let c = ctx.pcntr();
    assert_eq!(
        (c.issued_write, c.completed_write, c.issued_read),
        (ctx_puts, ctx_puts, 0)
    );

    // Issue 26: non-fetching atomics are writes, fetching ones reads (as in C).
    let word = shmem.alloc_atomic(0u64)?;
    let actx = shmem.create_ctx::<Private>(false)?;
    for _ in 0..3 {
        actx.atomic_add(&word, 1, right)?;
    }
    actx.atomic_set(&word, 7, right)?;
    for _ in 0..2 {
        actx.atomic_fetch(&word, right)?;
    }
    actx.quiet();
    let a = actx.pcntr();
    assert_eq!((a.issued_write, a.completed_write), (4, 4), "{a:?}");
    assert_eq!((a.issued_read, a.completed_read), (2, 2), "{a:?}");
    drop(actx);
    // And `_nbe` collectives are counted when issued, as C counts them.
    let coll = count(&shmem, ProfileFamily::Coll);
    let sync = count(&shmem, ProfileFamily::Sync);
    let src = shmem.alloc(3, me as u64)?;
    let dst = shmem.alloc(3, 0u64)?;
    let world = shmem.world();
    shmem.nbe_scope(|s| -> rshmem::Result<()> {
        s.reduce_nbe(&world, rshmem::Sum, &dst, &src, 3)?.wait()?;
        s.sync_nbe(&world)?.wait()
    })?;
    let coll2 = count(&shmem, ProfileFamily::Coll);
    assert_eq!((coll2.0 - coll.0, coll2.1 - coll.1), (1, 24), "reduce_nbe");
    assert_eq!(count(&shmem, ProfileFamily::Sync).0 - sync.0, 1, "sync_nbe");
    assert_eq!(dst.to_vec(), [(n * (n - 1) / 2) as u64; 3]);
    // Frees are collective: every PE frees the same blocks, in order.
    drop((dst, src, word));

    if !env_on {
        // Level 0 stops counting; what was counted stays.
        shmem.pcontrol(0);
        for i in 0..7 {
            shmem.put(&buf, 0, &[i], right)?;
        }
        shmem.quiet();
        assert_eq!(count(&shmem, ProfileFamily::Put).0, puts + ctx_puts);
        assert_eq!(
            count(&shmem, ProfileFamily::Quiet).0,
            4,
            "2 quiets, a ctx quiet and the atomics' ctx quiet"
        );
        assert_eq!(shmem.default_ctx().pcntr().issued_write, puts);
    }
    drop(ctx);
    shmem.barrier_all();
    println!("ok api_profile pe={me}");
    Ok(())
}
