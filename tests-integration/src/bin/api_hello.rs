//! Safe API: init, hello, finalize. Prints `hello pe=<me> n=<n>` and `ok api_hello pe=<me>`.

fn main() -> rshmem::Result<()> {
    let shmem = rshmem::Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    println!("hello pe={me} n={n}");
    let info = rshmem::Shmem::info();
    assert_eq!((info.major, info.minor, info.name), (1, 5, "rshmem"));
    assert!((0..n).all(|pe| shmem.pe_accessible(pe)));
    assert!(!shmem.pe_accessible(n));
    shmem.barrier_all();
    shmem.sync_all();
    println!("ok api_hello pe={me}");
    shmem.finalize()
}
