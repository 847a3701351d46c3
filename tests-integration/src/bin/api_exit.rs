//! Safe API: leaving the program with a live guard. argv[1]:
//! - `exit0`: PE 0 calls `std::process::exit(0)` with its guard live while the others
//!   still work, then drop theirs: the job ends 0 (the runtime is finalized at exit);
//! - `panic`: PE 1 (0 alone) panics with its guard live while the others wait: the job
//!   ends with the panic's status 101, without waiting for a finalize.

use std::time::Duration;

fn main() -> rshmem::Result<()> {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let shmem = rshmem::Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    shmem.barrier_all();
    match mode.as_str() {
        "exit0" => {
            println!("ok exit0 pe={me}");
            if me == 0 {
                std::process::exit(0);
            }
            std::thread::sleep(Duration::from_millis(200));
            drop(shmem);
        }
        "panic" => {
            if me == n.min(2) - 1 {
                panic!("api_exit: panic requested on PE {me}");
            }
            std::thread::sleep(Duration::from_secs(30));
            println!("survivor pe={me} was not stopped");
        }
        other => panic!("usage: api_exit exit0|panic (got {other:?})"),
    }
    Ok(())
}
