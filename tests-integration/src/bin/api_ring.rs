//! Safe API: ring exchange with wrap-around through every RMA form (put, get, p, g, iput,
//! iget). Args: `[block-length]`. Prints `ring pe=<me> from=<left> sum=<sum>` and
//! `ok api_ring pe=<me>`.

use rshmem::Shmem;

fn tag(pe: usize, i: usize) -> u64 {
    pe as u64 * 1_000_000 + i as u64
}

fn main() -> rshmem::Result<()> {
    let len: usize = std::env::args().nth(1).map_or(100, |a| a.parse().unwrap());
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);

    // put to the right, check what came from the left
    let inbox = shmem.alloc(len, 0u64)?;
    let block: Vec<u64> = (0..len).map(|i| tag(me, i)).collect();
    shmem.put(&inbox, 0, &block, right)?;
    shmem.barrier_all();
    let got = inbox.to_vec();
    assert_eq!(got, (0..len).map(|i| tag(left, i)).collect::<Vec<_>>());

    // get the right neighbour's inbox: my own block
    let mut back = vec![0u64; len];
    shmem.get(&mut back, &inbox, 0, right)?;
    assert_eq!(back, block);

    // p/g element by element, in the other direction
    let cells = shmem.alloc(n, u32::MAX)?;
    shmem.p(&cells, me, me as u32, left)?;
    shmem.barrier_all();
    assert_eq!(cells.load(right), right as u32);
    assert_eq!(shmem.g(&cells, me, left)?, me as u32);

    // iput: every 2nd element of my block into every 3rd slot of the right neighbour
    let k = len / 3;
    let strided = shmem.alloc(len, 0u64)?;
    shmem.iput(&strided, 0, 3, &block, 0, 2, k, right)?;
    shmem.barrier_all();
    for j in 0..k {
        assert_eq!(strided.load(3 * j), tag(left, 2 * j), "iput element {j}");
    }
    // iget them back into every other local slot
    let mut local = vec![0u64; 2 * k];
    shmem.iget(&mut local, 1, 2, &strided, 0, 3, k, right)?;
    for j in 0..k {
        assert_eq!(local[1 + 2 * j], tag(me, 2 * j), "iget element {j}");
    }

    let sum: u64 = got.iter().sum();
    println!("ring pe={me} from={left} sum={sum}");
    shmem.barrier_all();
    println!("ok api_ring pe={me}");
    Ok(())
}
