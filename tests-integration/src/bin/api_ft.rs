//! Fault tolerance from Rust (issue 13 §3): PE 1 raises SIGKILL in the middle of a loop
//! of collectives. Under `SHMEM_FAULT_TOLERANT=1` every survivor gets
//! `Error::PeFailed` naming PE 1 within a bound, finds exactly PE 1 failed, builds the
//! survivors' team, reduces and syncs on it, prints `ok ft pe=<me>` and finalizes (the
//! guard's drop, which skips the dead PE). Without the variable `oshrun` ends the job.

use std::time::{Duration, Instant};

use rshmem::{Error, Shmem, Sum};

const VICTIM: usize = 1;
const FATAL_AT: usize = 50;

fn main() -> rshmem::Result<()> {
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let world = shmem.world();
    let src = shmem.alloc(1, 0i64)?;
    let dest = shmem.alloc(1, 0i64)?;
    shmem.barrier_all();
    let mut seen = None;
    for i in 0..1000 {
        if me == VICTIM && i == FATAL_AT {
            // SAFETY: raise takes an integer and touches no memory of ours.
            unsafe { libc::raise(libc::SIGKILL) };
        }
        src.store(0, (me + i) as i64);
        let t = Instant::now();
        let r = world
            .reduce(Sum, &dest, &src, 1)
            .and_then(|()| world.sync());
        match r {
            Ok(()) => {
                let want = (n * (n - 1) / 2 + n * i) as i64;
                assert_eq!(dest.load(0), want, "sum at iteration {i}");
            }
            Err(e) => {
                seen = Some((i, t.elapsed(), e));
                break;
            }
        }
    }
    let (i, took, e) = seen.expect("the failure must be seen");
    assert_eq!(i, FATAL_AT, "{e}");
    assert!(took < Duration::from_secs(3), "seen after {took:?}: {e}");
    match e {
        Error::PeFailed { pe, waiter, .. } => {
            assert_eq!((pe, waiter), (VICTIM, me), "{e}");
            assert!(e.to_string().contains("PE 1 failed"), "{e}");
        }
        other => panic!("expected PeFailed, got {other}"),
    }
    assert_eq!(shmem.failed_pes(), [VICTIM]);
    assert!(shmem.pe_failed(VICTIM) && !shmem.pe_failed(me) && !shmem.pe_failed(n + 5));

    let surv = world.survivors()?;
    assert_eq!(surv.n_pes(), n - 1);
    assert_eq!(surv.my_pe(), if me < VICTIM { me } else { me - 1 });
    let members: Vec<usize> = surv.world_pes().collect();
    let want: Vec<usize> = (0..n).filter(|&p| p != VICTIM).collect();
    assert_eq!(members, want);
    for k in 0..20 {
        src.store(0, (me * 10 + k) as i64);
        surv.reduce(Sum, &dest, &src, 1)?;
        let want = 10 * (n * (n - 1) / 2 - VICTIM) + (n - 1) * k;
        assert_eq!(dest.load(0), want as i64, "survivors' sum {k}");
        surv.sync()?;
    }
    println!("ok ft pe={me}");
    surv.destroy()?;
    // Freeing is collective over the world, which holds the dead PE: leave the memory
    // to the end of the job.
    std::mem::forget(src);
    std::mem::forget(dest);
    Ok(())
}
