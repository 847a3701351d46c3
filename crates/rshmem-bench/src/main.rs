//! rshmem-bench: rshmem on one node against the machine's limits.
//!
//! * `oshrun -np 2 rshmem-bench pe`: memcpy and raw cache-line ping-pong limits, put/get
//!   latency and bandwidth (1 B to 4 MiB), 8 B put message rate, every AMO, put-then-flag
//!   ping-pongs and the 2-PE barrier, each with its ratio to its limit.
//! * `oshrun -np 4 rshmem-bench barrier`: barrier latency at any PE count.
//! * `oshrun -np k rshmem-bench coll`: team creation, barriers and team collectives against
//!   memcpy; flat vs hierarchical reduction with several (virtual) hosts.
//! * `rshmem-bench launch --oshrun PATH`: `oshrun -np k rshmem-bench hello` wall time.
//! * `rshmem-bench summary < output`: the targets of earlier runs, again.
//!
//! Table lines never start with `{`; JSON lines always do.

mod coll;
mod launch;
mod pe;
mod report;
mod stats;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rshmem-bench",
    version,
    about = "rshmem benchmarks against the machine's limits"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// The 2-PE suite (run under `oshrun -np 2`).
    Pe {
        /// Fewer samples (a smoke test, not a measurement).
        #[arg(long)]
        quick: bool,
        /// Largest put/get size in bytes (rounded up to a power of two).
        #[arg(long, default_value_t = 4 << 20)]
        max_size: usize,
    },
    /// Barrier latency on however many PEs run (e.g. `oshrun -np 4`).
    Barrier {
        /// Fewer samples.
        #[arg(long)]
        quick: bool,
    },
    /// Teams and team collectives on however many PEs run (e.g. `oshrun -np 4`).
    Coll {
        /// Fewer samples.
        #[arg(long)]
        quick: bool,
        /// Largest collective size in bytes (rounded up to a power of two).
        #[arg(long, default_value_t = 1 << 20)]
        max_size: usize,
    },
    /// Times `oshrun -np k <hello> hello` from start to exit (run without a launcher).
    Launch {
        /// The launcher.
        #[arg(long)]
        oshrun: PathBuf,
        /// The program to launch with the `hello` argument (default: this binary).
        #[arg(long)]
        hello: Option<PathBuf>,
        /// PE counts, comma separated.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
        pes: Vec<usize>,
        /// Timed runs per PE count.
        #[arg(long, default_value_t = 20)]
        runs: usize,
    },
    /// A trivial PE: init, print a greeting, finalize.
    Hello {
        /// Do not even initialize (a bare process, for the launch limit).
        #[arg(long)]
        no_init: bool,
        /// Print nothing.
        #[arg(long)]
        silent: bool,
    },
    /// Reads earlier output on stdin and prints the table of targets.
    Summary,
}

fn main() {
    match Cli::parse().cmd {
        Cmd::Pe { quick, max_size } => pe::run_pe(quick, max_size),
        Cmd::Barrier { quick } => pe::run_barrier(quick),
        Cmd::Coll { quick, max_size } => coll::run_coll(quick, max_size),
        Cmd::Launch {
            oshrun,
            hello,
            pes,
            runs,
        } => {
            if let Err(e) = launch::run_launch(&oshrun, hello, &pes, runs.max(1)) {
                eprintln!("rshmem-bench launch: {e}");
                std::process::exit(1);
            }
        }
        Cmd::Hello { no_init, silent } => launch::hello(no_init, silent),
        Cmd::Summary => report::summary(),
    }
}
