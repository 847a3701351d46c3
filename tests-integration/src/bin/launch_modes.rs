//! PE program for the launcher's failure and cleanup paths (`launch_modes <mode> ...`):
//!
//! - `early-exit RANK [STATUS]`: RANK exits with STATUS (default 0; 256 reaches the
//!   launcher as 0) before `shmem_init`; the others init.
//! - `close-pmi RANK`: RANK closes its PMI socket before `shmem_init` and sleeps; the
//!   others init.
//! - `spawn-child`: after init, every PE runs a copy of this program (`child-report`)
//!   and prints `ok spawn-child pe=<me> child=<what the child printed>`.
//! - `child-report`: inits and prints `child npes=<n> me=<me>`.
//! - `grandchild END`: after init every PE leaves two `sleep 300` behind (one orphaned at
//!   once through `sh -c '... &'`, one its own child holding stdout) and prints
//!   `grandchild rank=<me> pid=<pid>` for each; then END is `ok` (finalize), `fail` (the
//!   last PE exits with status 3, the others wait in a barrier) or `hang` (sleep 30 s).
//!
//! - `hold SECS`: after init and a barrier every PE prints `holding pe=<me>`, sleeps SECS
//!   and finalizes (a running job for a launcher to cancel).
//!
//! Modes that fail print `pid rank=<r> pid=<pid>` first (rank from `PMI_RANK`).
#![allow(unsafe_code)]

use std::io::Write;
use std::process::{exit, Command, Stdio};
use std::thread::sleep;
use std::time::Duration;

use rshmem_core::{setup, sync, ThreadLevel};

const LONG: Duration = Duration::from_secs(30);

fn arg<T: std::str::FromStr>(args: &[String], i: usize) -> T {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("launch_modes: argument {i} missing or bad"))
}

fn init() -> (usize, usize) {
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    (setup::my_pe().unwrap(), setup::n_pes().unwrap())
}

fn flush() {
    let _ = std::io::stdout().flush();
}

/// The rank the launcher gave, read before init (the bootstrap removes it at init).
fn env_rank() -> usize {
    std::env::var("PMI_RANK")
        .ok()
        .and_then(|r| r.parse().ok())
        .expect("PMI_RANK")
}

fn print_pid(rank: usize) {
    println!("pid rank={rank} pid={}", std::process::id());
    flush();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("");
    match mode {
        "early-exit" | "close-pmi" => {
            let rank = env_rank();
            print_pid(rank);
            if rank == arg::<usize>(&args, 1) {
                if mode == "early-exit" {
                    exit(args.get(2).map_or(0, |_| arg(&args, 2)));
                }
                let fd: i32 = std::env::var("PMI_FD").unwrap().parse().unwrap();
                // SAFETY: the launcher handed this descriptor to us and nothing else in this
                // process uses it (no bootstrap client exists); closing it is the point.
                drop(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
                println!("closed rank={rank}");
                flush();
                sleep(LONG);
                println!("survivor rank={rank} was not stopped");
                exit(0);
            }
            let (me, _) = init();
            sync::barrier_all().unwrap();
            println!("passed init pe={me}");
            rshmem_core::finalize();
        }
        "hold" => {
            let (me, _) = init();
            sync::barrier_all().unwrap();
            println!("holding pe={me}");
            flush();
            sleep(Duration::from_secs(arg(&args, 1)));
            rshmem_core::finalize();
        }
        "spawn-child" => {
            let (me, _) = init();
            let exe = std::env::current_exe().unwrap();
            let out = Command::new(exe)
                .arg("child-report")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text
                .lines()
                .find(|l| l.starts_with("child "))
                .unwrap_or_else(|| {
                    panic!(
                        "PE {me}: child failed ({}): {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr)
                    )
                });
            assert!(out.status.success(), "PE {me}: child {}", out.status);
            println!("ok spawn-child pe={me} child={line}");
            sync::barrier_all().unwrap();
            rshmem_core::finalize();
        }
        "child-report" => {
            let (me, n) = init();
            println!("child npes={n} me={me}");
            rshmem_core::finalize();
        }
        "grandchild" => {
            let (me, n) = init();
            let out = Command::new("sh")
                .args(["-c", "sleep 300 </dev/null >/dev/null 2>&1 & echo $!"])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let orphan = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            println!("grandchild rank={me} pid={orphan}");
            // Deliberately never waited for: the launcher must end it.
            #[allow(clippy::zombie_processes)]
            let child = Command::new("sleep")
                .arg("300")
                .stdin(Stdio::null())
                .spawn()
                .unwrap();
            println!("grandchild rank={me} pid={}", child.id());
            print_pid(me);
            sync::barrier_all().unwrap();
            match args.get(1).map(String::as_str) {
                Some("ok") => {}
                Some("fail") => {
                    if me == n - 1 {
                        exit(3);
                    }
                    sync::barrier_all().unwrap();
                }
                Some("hang") => sleep(LONG),
                other => panic!("launch_modes grandchild: bad END {other:?}"),
            }
            rshmem_core::finalize();
        }
        m => panic!("launch_modes: unknown mode {m:?}"),
    }
}
