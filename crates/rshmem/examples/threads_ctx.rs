//! Threads with their own contexts: under `ThreadLevel::Multiple`, each thread of each PE
//! opens a private context, puts a block into its own slot on the right neighbour and
//! counts it there with an atomic, then reads the slot back with an explicit
//! non-blocking get merged with a fetching atomic. A thread's quiet (here: its context's
//! destruction) waits for its own operations only.
//!
//! ```text
//! oshrun -np 4 target/debug/examples/threads_ctx [threads]
//! ```

use rshmem::{Private, Shmem, ThreadLevel};

const LEN: usize = 1024;

fn main() -> rshmem::Result<()> {
    let threads: usize = std::env::args()
        .nth(1)
        .map_or(4, |a| a.parse().expect("thread count"));
    let shmem = Shmem::init_thread(ThreadLevel::Multiple)?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);

    let mut slots = shmem.alloc(threads * LEN, 0u64)?; // one slot per thread
    let arrived = shmem.alloc_atomic(0usize)?;
    let remote = &slots.share(); // a SymVec is not Sync; its shared remote face is
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (shmem, arrived) = (&shmem, &arrived);
                s.spawn(move || -> rshmem::Result<()> {
                    let ctx = shmem.create_ctx::<Private>(false)?;
                    let block: Vec<u64> = (0..LEN as u64)
                        .map(|i| (me * 1000 + t) as u64 + i)
                        .collect();
                    ctx.put(remote, t * LEN, &block, right)?;
                    ctx.atomic_inc(arrived, right)?;
                    ctx.quiet();
                    let mut back = vec![0u64; LEN];
                    ctx.nbe_scope(|sc| -> rshmem::Result<()> {
                        let get = sc.get_nbe(&mut back, remote, t * LEN, right)?;
                        let count = sc.atomic_fetch_nbe(arrived, right)?;
                        let (got, count) = get.merge(count).wait();
                        assert_eq!(got, &block[..], "thread {t}: my block on PE {right}");
                        assert!(count >= 1);
                        Ok(())
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a thread panicked"))
    })?;
    shmem.barrier_all();

    assert_eq!(arrived.load(), threads, "every thread of PE {left} arrived");
    for t in 0..threads {
        let want = (left * 1000 + t) as u64;
        assert_eq!(slots.load(t * LEN), want, "slot {t} from PE {left}");
    }
    println!("threads_ctx ok: PE {me} got {threads} blocks from PE {left}");
    Ok(())
}
