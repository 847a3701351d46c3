//! Safe API: non-blocking operations inside `nbi_scope` are complete when the scope
//! returns (puts visible after a barrier, gets filled, fetching atomics fetched), and a
//! request's `wait` completes it early. Args: `[length] [rounds]`. Prints
//! `ok api_nbi pe=<me>`.

use rshmem::{Cmp, Shmem, SignalOp};

fn main() -> rshmem::Result<()> {
    let mut args = std::env::args().skip(1);
    let len: usize = args.next().map_or(4096, |a| a.parse().unwrap());
    let rounds: usize = args.next().map_or(10, |a| a.parse().unwrap());
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);

    let dst = shmem.alloc(len, 0u64)?;
    let src_sym = shmem.alloc(len, 0u64)?;
    let counter = shmem.alloc_atomic(0u64)?;
    let bits = shmem.alloc_atomic(0u32)?;
    let sig = shmem.alloc_atomic(0u64)?;
    for r in 0..rounds as u64 {
        let mine: Vec<u64> = (0..len as u64)
            .map(|i| r << 40 | (me as u64) << 20 | i)
            .collect();
        src_sym.copy_from_local(&mine);
        shmem.barrier_all();

        let mut got = vec![0u64; len];
        let mut half = vec![0u64; len / 2];
        let (mut f1, mut f2, mut f3, mut f4) = (0u64, 0u64, 0u32, 0u64);
        let early = shmem.nbi_scope(|s| -> rshmem::Result<u64> {
            s.put_nbi(&dst, 0, &mine, right)?;
            let g = s.get_nbi(&mut got, &src_sym, 0, left)?;
            let _unwaited = s.get_nbi(&mut half, &src_sym, len / 2, right)?;
            s.atomic_fetch_add_nbi(&mut f1, &counter, 1, 0)?;
            s.atomic_fetch_inc_nbi(&mut f2, &counter, 0)?;
            s.atomic_fetch_or_nbi(&mut f3, &bits, 1 << (me % 32), 0)?;
            let fr = s.atomic_fetch_nbi(&mut f4, &counter, 0)?;
            let filled = g.wait();
            assert_eq!(
                filled[len - 1],
                r << 40 | (left as u64) << 20 | (len as u64 - 1)
            );
            s.put_signal_nbi(&dst, 0, &mine[..1], &sig, 1, SignalOp::Add, right)?;
            s.fence();
            s.quiet();
            Ok(fr.wait())
        })?;
        // Everything issued in the scope is complete here.
        assert_eq!(
            got,
            (0..len as u64)
                .map(|i| r << 40 | (left as u64) << 20 | i)
                .collect::<Vec<_>>()
        );
        assert_eq!(half[0], r << 40 | (right as u64) << 20 | (len as u64 / 2));
        assert!(f2 > f1 || n > 1, "fetch_inc after fetch_add on one PE");
        assert!(early >= 2 || n > 1);
        let _ = f3;
        shmem.barrier_all();
        assert_eq!(
            dst.load(len - 1),
            r << 40 | (left as u64) << 20 | (len as u64 - 1)
        );
        assert_eq!(shmem.signal_wait_until(&sig, Cmp::Ge, r + 1)?, r + 1);
        if me == 0 {
            assert_eq!(counter.load(), 2 * n as u64 * (r + 1));
            let want = (0..n.min(32)).fold(0u32, |acc, p| acc | 1 << p);
            assert_eq!(bits.load(), want);
        }
        shmem.barrier_all();
    }
    println!("ok api_nbi pe={me}");
    Ok(())
}
