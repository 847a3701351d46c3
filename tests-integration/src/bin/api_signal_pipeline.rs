//! Safe API: a put-with-signal pipeline PE i -> PE i+1 (PE 0 -> itself with one PE).
//! Args: `[chunks] [chunk-length]`. Receivers print `pipeline pe=<me> chunks=<c>`;
//! every PE prints `ok api_signal_pipeline pe=<me>`.

use rshmem::{Cmp, Shmem, SignalOp};

fn chunk(pe: usize, c: usize, len: usize) -> Vec<u32> {
    (0..len)
        .map(|i| (pe * 1_000_000 + c * 1000 + i) as u32)
        .collect()
}

fn main() -> rshmem::Result<()> {
    let mut args = std::env::args().skip(1);
    let chunks: usize = args.next().map_or(32, |a| a.parse().unwrap());
    let len: usize = args.next().map_or(100, |a| a.parse().unwrap());
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let next = if n == 1 {
        Some(0)
    } else {
        (me + 1 < n).then_some(me + 1)
    };
    let prev = if n == 1 { Some(0) } else { me.checked_sub(1) };

    let slots = shmem.alloc_zeroed::<u32>(chunks * len)?;
    let arrived = shmem.alloc_atomic(0u64)?;
    for c in 0..chunks {
        if let Some(to) = next {
            let data = chunk(me, c, len);
            if c % 2 == 0 {
                shmem.put_signal(&slots, c * len, &data, &arrived, 1, SignalOp::Add, to)?;
            } else {
                shmem.nbi_scope(|s| {
                    s.put_signal_nbi(&slots, c * len, &data, &arrived, 1, SignalOp::Add, to)
                })?;
            }
        }
        if let Some(from) = prev {
            let seen = shmem.signal_wait_until(&arrived, Cmp::Ge, c as u64 + 1)?;
            assert!(seen > c as u64);
            let mut got = vec![0u32; len];
            shmem.get(&mut got, &slots, c * len, me)?;
            assert_eq!(
                got,
                chunk(from, c, len),
                "PE {me}: chunk {c} from PE {from}"
            );
        }
    }
    shmem.barrier_all();
    if prev.is_some() {
        assert_eq!(shmem.signal_fetch(&arrived), chunks as u64);
        println!("pipeline pe={me} chunks={chunks}");
    }
    // signal_set / signal_add, then a final handshake around the ring
    shmem.barrier_all();
    shmem.signal_set(&arrived, 100, (me + 1) % n)?;
    shmem.fence(); // orders the add after the set
    shmem.signal_add(&arrived, 5, (me + 1) % n)?;
    assert_eq!(shmem.signal_wait_until(&arrived, Cmp::Eq, 105)?, 105);
    println!("ok api_signal_pipeline pe={me}");
    Ok(())
}
