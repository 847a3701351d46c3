//! Every PE says hello.
//!
//! ```text
//! oshrun -np 4 target/debug/examples/hello
//! ```

fn main() -> rshmem::Result<()> {
    let shmem = rshmem::Shmem::init()?;
    println!("Hello from PE {} of {}", shmem.my_pe(), shmem.n_pes());
    shmem.finalize()
}
