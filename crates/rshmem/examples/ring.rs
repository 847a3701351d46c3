//! Ring exchange: every PE sends a block to its right neighbour (PE n-1 wraps around to
//! PE 0) and checks the block it received from its left neighbour.
//!
//! ```text
//! oshrun -np 4 target/debug/examples/ring [block-length]
//! ```

use rshmem::Shmem;

fn main() -> rshmem::Result<()> {
    let len: usize = std::env::args()
        .nth(1)
        .map_or(8, |a| a.parse().expect("block length"));
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;

    let inbox = shmem.alloc(len, u64::MAX)?;
    let block: Vec<u64> = (0..len as u64).map(|i| me as u64 * 1000 + i).collect();
    shmem.put(&inbox, 0, &block, right)?;
    shmem.barrier_all();

    let got = inbox.to_vec();
    let want: Vec<u64> = (0..len as u64).map(|i| left as u64 * 1000 + i).collect();
    assert_eq!(got, want, "PE {me}: wrong block from PE {left}");

    // The other way round: fetch the right neighbour's block with a get.
    let mut fetched = vec![0u64; len];
    shmem.get(&mut fetched, &inbox, 0, right)?;
    let want_right: Vec<u64> = (0..len as u64).map(|i| me as u64 * 1000 + i).collect();
    assert_eq!(
        fetched, want_right,
        "PE {me}: PE {right} did not get my block"
    );

    println!("ring ok: PE {me} of {n} received {len} elements from PE {left}");
    Ok(())
}
