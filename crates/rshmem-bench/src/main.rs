//! rshmem-bench: rshmem on one node against the machine's limits.
//!
//! * `oshrun -np 2 rshmem-bench pe`: memcpy and raw cache-line ping-pong limits, put/get
//!   latency and bandwidth (1 B to 4 MiB), 8 B put message rate, every AMO, put-then-flag
//!   ping-pongs and the 2-PE barrier, each with its ratio to its limit.
//! * `oshrun -np 4 rshmem-bench barrier`: barrier latency at any PE count.
//! * `oshrun -np k rshmem-bench coll`: team creation, barriers and team collectives against
//!   memcpy; flat vs hierarchical reduction with several (virtual) hosts.
//! * `oshrun -np 2T rshmem-bench threads --threads T`: multithreaded message rate (put,
//!   get, atomic post/fetch) of T threads on the default context, on one serialized
//!   context under a lock, on private contexts and T single-threaded PEs; ping-pong latency with threads (seed 001).
//! * `oshrun -np P rshmem-bench apps --threads T`: 3-D halo exchange, ISx-style all-to-all
//!   and Mandelbrot with work stealing, single vs multiple contexts (seed 001).
//! * `oshrun -np 2 rshmem-bench nbe --threads T`: put_nbe vs put_nbi rates, fetch_add_nbe,
//!   bandwidth with threads, COMB overlap, multithreaded broadcast, GUPS (seed 002).
//! * `oshrun -np 2 rshmem-bench threshold`: where the copy engine starts to pay.
//! * `rshmem-bench launch --oshrun PATH`: `oshrun -np k rshmem-bench hello` wall time.
//! * `oshrun -np 2 rshmem-bench profile`: the 8 B put rate with the profiling counters
//!   off, on (time sampled) and on with every call timed, and the ratios.
//! * `oshrun -np 2 rshmem-bench api`: per-call cost of the safe Rust API's put/get, p/g
//!   and atomics on each receiver, beside the core's put.
//! * `rshmem-bench summary < output`: the targets of earlier runs, again.
//! * `rshmem-bench report [--quick] [--out DIR] [--from FILE.jsonl]`: runs the seeds'
//!   experiments as child jobs (or reads earlier records) and draws SVG/PNG figures with
//!   an `index.html` (`figures/`).
//!
//! Table lines never start with `{`; JSON lines always do.

mod api;
mod apps;
mod coll;
mod experiments;
mod figures;
mod launch;
mod nbe;
mod pe;
mod profile;
mod report;
mod spmd;
mod stats;
mod threads;
mod threshold;
mod wait;

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
        /// Only the network suite: one-way latency, then barrier, broadcast and reduce
        /// (8 B, 64 KiB, 1 MiB) as multiples of it (run over UCX).
        #[arg(long)]
        net: bool,
    },
    /// Multithreaded message rate and ping-pong: T threads (shared / serialized / private
    /// contexts)
    /// against T PEs (run under `oshrun -np 2T`).
    Threads {
        /// Fewer samples, shorter runs.
        #[arg(long)]
        quick: bool,
        /// Threads per PE (T).
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// Largest put/get size in bytes (sizes go up by 4x from 1 B).
        #[arg(long, default_value_t = 1 << 20)]
        max_size: usize,
    },
    /// Halo exchange, ISx all-to-all and Mandelbrot: single vs multiple contexts (any -np).
    Apps(apps::Opts),
    /// Explicit non-blocking operations and merged requests (run under `oshrun -np 2`).
    Nbe(nbe::Opts),
    /// Copy engine vs inline copy for put_nbi: the crossover size (run under `oshrun -np 2`).
    Threshold {
        /// Fewer samples.
        #[arg(long)]
        quick: bool,
        /// Smallest size.
        #[arg(long, default_value_t = 1 << 10)]
        min_size: usize,
        /// Largest size.
        #[arg(long, default_value_t = 8 << 20)]
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
    /// Small collectives and a put/wait ping-pong, idle and beside busy processes, under
    /// the waiting policy (run under `oshrun -np 2`).
    Wait(wait::Opts),
    /// Spins for a while (the busy processes of `wait`).
    #[command(hide = true)]
    Burn {
        /// Seconds to spin.
        #[arg(long, default_value_t = 60)]
        secs: u64,
        /// Start a session of its own (setsid).
        #[arg(long)]
        own_session: bool,
    },
    /// The cost of the profiling counters on the 8-byte put rate: off, on, every call
    /// timed (run under `oshrun -np 2`).
    Profile {
        /// Fewer samples.
        #[arg(long)]
        quick: bool,
    },
    /// The safe Rust API's per-call cost: put/get, p/g and atomics on each receiver
    /// (run under `oshrun -np 2`).
    Api {
        /// Fewer samples.
        #[arg(long)]
        quick: bool,
    },
    /// Reads earlier output on stdin and prints the table of targets.
    Summary,
    /// Runs the experiments of the seeds (or reads `--from`) and draws the figures: SVG,
    /// PNG and `index.html` in `--out` (run without a launcher).
    Report(experiments::Opts),
}

fn main() {
    match Cli::parse().cmd {
        Cmd::Pe { quick, max_size } => pe::run_pe(quick, max_size),
        Cmd::Barrier { quick } => pe::run_barrier(quick),
        Cmd::Coll {
            quick, net: true, ..
        } => coll::run_net(quick),
        Cmd::Coll {
            quick, max_size, ..
        } => coll::run_coll(quick, max_size),
        Cmd::Threads {
            quick,
            threads,
            max_size,
        } => threads::run(quick, threads, max_size),
        Cmd::Apps(o) => apps::run(o),
        Cmd::Nbe(o) => nbe::run(o),
        Cmd::Threshold {
            quick,
            min_size,
            max_size,
        } => threshold::run(quick, min_size, max_size),
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
        Cmd::Profile { quick } => profile::run(quick),
        Cmd::Wait(o) => wait::run(o),
        Cmd::Burn { secs, own_session } => wait::burn(secs, own_session),
        Cmd::Api { quick } => api::run(quick),
        Cmd::Summary => report::summary(),
        Cmd::Report(o) => experiments::run(o),
    }
}
