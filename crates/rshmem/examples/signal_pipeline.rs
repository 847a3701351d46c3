//! A put-with-signal pipeline: PE i streams chunks to PE i+1. Each chunk goes into its
//! own slot with `put_signal`, which adds 1 to the receiver's signal once the data is in
//! place; the receiver waits until the signal reaches c+1 and then checks chunk c.
//! PE n-1 only receives; with one PE, it sends to itself.
//!
//! ```text
//! oshrun -np 4 target/debug/examples/signal_pipeline [chunks] [chunk-length]
//! ```

use rshmem::{Cmp, Shmem, SignalOp};

fn chunk(pe: usize, c: usize, len: usize) -> Vec<u32> {
    (0..len)
        .map(|i| (pe * 1_000_000 + c * 1000 + i) as u32)
        .collect()
}

fn main() -> rshmem::Result<()> {
    let mut args = std::env::args().skip(1);
    let chunks: usize = args.next().map_or(16, |a| a.parse().expect("chunks"));
    let len: usize = args.next().map_or(64, |a| a.parse().expect("chunk length"));
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());

    let slots = shmem.alloc_zeroed::<u32>(chunks * len)?;
    let arrived = shmem.alloc_atomic(0u64)?;

    let next = if n == 1 {
        Some(0)
    } else {
        (me + 1 < n).then_some(me + 1)
    };
    let prev = if n == 1 { Some(0) } else { me.checked_sub(1) };

    for c in 0..chunks {
        if let Some(to) = next {
            shmem.put_signal(
                &slots,
                c * len,
                &chunk(me, c, len),
                &arrived,
                1,
                SignalOp::Add,
                to,
            )?;
        }
        if let Some(from) = prev {
            let seen = shmem.signal_wait_until(&arrived, Cmp::Ge, c as u64 + 1)?;
            assert!(seen > c as u64);
            let mut got = vec![0u32; len];
            shmem.get(&mut got, &slots, c * len, me)?;
            assert_eq!(
                got,
                chunk(from, c, len),
                "PE {me}: chunk {c} from PE {from} is wrong"
            );
        }
    }
    shmem.barrier_all();
    if prev.is_some() {
        assert_eq!(shmem.signal_fetch(&arrived), chunks as u64);
        println!("signal_pipeline ok: PE {me} received {chunks} chunks of {len}");
    } else {
        println!("signal_pipeline ok: PE {me} sent {chunks} chunks of {len}");
    }
    Ok(())
}
