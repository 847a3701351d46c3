//! Safe API failure modes, by mode argument:
//! - `panic`: the last PE panics while holding symmetric objects and a lock, the others
//!   wait in a barrier; the job must fail promptly (drops do not synchronize while
//!   panicking).
//! - `exit <status>`: the last PE calls `global_exit(status)` while the others wait.
//! - `err`: the last PE returns an `Err` from `main`; the job fails.
//! - `kill`: the last PE is killed with SIGKILL (no chance to say anything) while the
//!   others wait in a barrier.

use rshmem::Shmem;

fn main() -> rshmem::Result<()> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().expect("mode");
    let shmem = Shmem::init()?;
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let v = shmem.alloc(16, 0u8)?;
    let lock = shmem.alloc_lock()?;
    println!("started pe={me}");
    shmem.barrier_all();
    if me == n - 1 {
        match mode.as_str() {
            "panic" => {
                let _held = lock.lock()?;
                panic!("api_failure: deliberate panic on PE {me}");
            }
            "exit" => {
                let status: i32 = args.next().expect("status").parse().unwrap();
                shmem.global_exit(status);
            }
            "kill" => {
                // SIGKILL from outside the process, as an OOM killer or a node failure.
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &std::process::id().to_string()])
                    .status();
                std::thread::sleep(std::time::Duration::from_secs(60));
            }
            "err" => {
                shmem.p(&v, 0, 1, n)?; // PE out of range
            }
            m => panic!("unknown mode {m}"),
        }
    }
    shmem.barrier_all();
    // The other PEs get here only in `err` mode, where the failing PE's collective drops
    // (a documented hazard of returning early) release their barrier.
    println!("after-barrier pe={me}");
    Ok(())
}
