//! PE program exercising the bootstrap layer and the launcher; the first argument picks
//! what it does (see `usage`). Uses only `rshmem_boot` and std, so it runs under `oshrun`,
//! under `mpiexec.hydra`, or alone.

use std::io::{BufRead, Write};
use std::process::{exit, Command};
use std::thread::sleep;
use std::time::Duration;

use rshmem_boot::Bootstrap;

const USAGE: &str = "usage: pmi_probe MODE [ARGS]
  info | kvs | nodes | barrier N | echo-stdin | print N | tail | shm | args ARGS...
  sleep SECS            every PE prints its pid, then sleeps SECS and finalizes
  exit CODE RANK        RANK exits with CODE, the others sleep
  abort CODE RANK       RANK calls Bootstrap::abort(CODE), the others sleep
  kill RANK | panic RANK | no-finalize RANK";

/// How long PEs that should be ended by the launcher wait before giving up.
const LONG: Duration = Duration::from_secs(30);

fn die(msg: &str) -> ! {
    eprintln!("pmi_probe: {msg}");
    exit(3)
}

fn num<T: std::str::FromStr>(args: &[String], i: usize) -> T {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| die(&format!("argument {i} missing or not a number\n{USAGE}")))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args
        .first()
        .map(String::as_str)
        .unwrap_or_else(|| die(USAGE));
    let boot = rshmem_boot::from_env().unwrap_or_else(|e| die(&format!("bootstrap: {e}")));
    let (rank, size) = (boot.rank(), boot.size());
    let b = boot.as_ref();
    match mode {
        "info" => {
            let env_job = std::env::var("OSHRUN_JOBID").unwrap_or_default();
            println!(
                "info rank={rank} size={size} job={} env_job={env_job}",
                b.job_id()
            );
        }
        "kvs" => kvs(b),
        "nodes" => match b.nodes() {
            Some(n) => println!("nodes rank={rank} size={size} {n:?}"),
            None => println!("nodes rank={rank} size={size} none"),
        },
        "barrier" => {
            let n: usize = num(&args, 1);
            for _ in 0..n {
                b.barrier().unwrap_or_else(|e| die(&e.to_string()));
            }
            println!("ok barrier rank={rank} n={n}");
        }
        "echo-stdin" => {
            let mut lines = 0;
            for line in std::io::stdin().lock().lines() {
                let line = line.unwrap_or_else(|e| die(&e.to_string()));
                println!("echo rank={rank} {line}");
                lines += 1;
            }
            println!("stdin-eof rank={rank} lines={lines}");
        }
        "print" => {
            let n: usize = num(&args, 1);
            let pad = "x".repeat(100 + 37 * rank);
            let out = std::io::stdout();
            for i in 0..n {
                // Separate writes per piece, so a launcher merging by chunks would interleave.
                let mut o = out.lock();
                let _ = write!(o, "line rank={rank} i={i} ");
                let _ = o.flush();
                let _ = writeln!(o, "{pad} end");
                drop(o);
                eprintln!("eline rank={rank} i={i}");
            }
        }
        "tail" => {
            print!("tail rank={rank} no newline");
            let _ = std::io::stdout().flush();
        }
        "shm" => {
            for name in [
                format!("rshmem-{}-probe-{rank}", b.job_id()),
                format!("{}-probe2-{rank}", b.job_id()),
            ] {
                std::fs::write(format!("/dev/shm/{name}"), b"x")
                    .unwrap_or_else(|e| die(&format!("/dev/shm/{name}: {e}")));
                println!("shm rank={rank} {name}");
            }
        }
        "args" => {
            for a in &args[1..] {
                println!("arg={a}");
            }
        }
        "sleep" => {
            started(b);
            sleep(Duration::from_secs_f64(num(&args, 1)));
            println!("done rank={rank}");
        }
        "exit" | "abort" | "kill" | "panic" | "no-finalize" => {
            let target: usize = num(
                &args,
                if matches!(mode, "exit" | "abort") {
                    2
                } else {
                    1
                },
            );
            started(b);
            if rank == target {
                let _ = std::io::stdout().flush();
                match mode {
                    "exit" => exit(num(&args, 1)),
                    "abort" => b.abort(num(&args, 1), "pmi_probe: abort requested"),
                    "kill" => {
                        // Leave a shared-memory object behind, as a killed runtime would.
                        let name = format!("rshmem-{}-heap-{rank}", b.job_id());
                        std::fs::write(format!("/dev/shm/{name}"), b"x")
                            .unwrap_or_else(|e| die(&format!("/dev/shm/{name}: {e}")));
                        println!("shm rank={rank} {name}");
                        let _ = std::io::stdout().flush();
                        let me = std::process::id().to_string();
                        let _ = Command::new("kill").args(["-KILL", &me]).status();
                        sleep(LONG);
                        die("still alive after SIGKILL");
                    }
                    "panic" => panic!("pmi_probe: panic requested"),
                    _ => exit(0), // no-finalize
                }
            }
            sleep(LONG);
            println!("survivor rank={rank} was not stopped");
        }
        _ => die(&format!("unknown mode {mode:?}\n{USAGE}")),
    }
    b.finalize().unwrap_or_else(|e| die(&e.to_string()));
}

/// Prints this PE's pid, then waits until every PE has, so tests know all pids.
fn started(b: &dyn Bootstrap) {
    println!("pid rank={} pid={}", b.rank(), std::process::id());
    let _ = std::io::stdout().flush();
    b.barrier().unwrap_or_else(|e| die(&e.to_string()));
}

/// Every PE publishes `rank*7`, then reads everybody's value.
fn kvs(b: &dyn Bootstrap) {
    let (rank, size) = (b.rank(), b.size());
    b.put("v", &(rank * 7).to_string())
        .unwrap_or_else(|e| die(&format!("put: {e}")));
    b.put("long", &format!("{rank}-{}", "y".repeat(400)))
        .unwrap_or_else(|e| die(&format!("put long: {e}")));
    b.fence().unwrap_or_else(|e| die(&format!("fence: {e}")));
    let mut sum = 0;
    for r in 0..size {
        let v: usize = b
            .get(r, "v")
            .unwrap_or_else(|e| die(&format!("get {r}: {e}")))
            .parse()
            .unwrap_or_else(|_| die("bad value"));
        if v != r * 7 {
            die(&format!("rank {r} published {v}, expected {}", r * 7));
        }
        let long = b.get(r, "long").unwrap_or_else(|e| die(&e.to_string()));
        if long != format!("{r}-{}", "y".repeat(400)) {
            die(&format!("long value of rank {r} corrupted"));
        }
        sum += v;
    }
    if b.get((rank + 1) % size, "missing").is_ok() {
        die("get of a missing key succeeded");
    }
    b.barrier().unwrap_or_else(|e| die(&e.to_string()));
    println!(
        "ok kvs rank={rank} size={size} sum={sum} job={}",
        b.job_id()
    );
}
