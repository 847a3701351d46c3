//! The `oshrun` binary: parses the command line and runs the job.
#![deny(unsafe_code)]

use oshrun::bind;
use oshrun::cli::Args;
use oshrun::job::{self, JobSpec};

fn main() {
    let args = match Args::try_parse_argv(std::env::args_os()) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    let bind = match args.bind_to.map_or_else(bind::from_env, Ok) {
        Ok(b) => b,
        Err(e) => {
            oshrun::output::report(&e);
            std::process::exit(1);
        }
    };
    let spec = JobSpec {
        np: args.np,
        program: args.program().clone(),
        args: args.program_args().to_vec(),
        tag_output: args.tag_output,
        timeout: args.timeout,
        slow_pmi: args.test_slow_pmi,
        fault_tolerant: job::fault_tolerant_from_env(),
        bind,
        report_bindings: args.report_bindings || job::info_from_env(),
    };
    std::process::exit(job::run(&spec));
}
