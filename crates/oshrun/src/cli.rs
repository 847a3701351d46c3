//! Command line: `oshrun [options] -np N [--] prog args...`.

use std::ffi::OsString;
use std::time::Duration;

use clap::Parser;

use crate::bind::BindTo;

/// Most PEs one job may start (each costs a process and a few threads here).
pub const MAX_PES: usize = 4096;

/// Starts N processing elements (PEs) of an rshmem program on this node and serves them PMI-1.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "oshrun",
    version,
    override_usage = "oshrun [OPTIONS] -np <N> [--] <PROGRAM> [ARGS]...",
    after_help = "Everything after PROGRAM is passed to the program. `-np N`, `-n N` and \
                  `--np N` are synonyms.\nExit status: the first failing PE's status \
                  (128+signal if it was killed), the status given to shmem_global_exit \
                  (its low byte; 255 when that is 0, so a failure never reads as 0), \
                  1 for a PE that leaves early, 124 on --timeout, 127 if PROGRAM cannot \
                  be executed. Processes the PEs leave running end with the job. \
                  With SHMEM_FAULT_TOLERANT=1 a PE that dies (a signal, or an exit \
                  without shmem_finalize) does not end the job: the others run on, and \
                  oshrun names the failed PEs at the end and exits with the first one's \
                  status."
)]
pub struct Args {
    /// Number of PEs to start.
    #[arg(short = 'n', long = "np", value_name = "N", value_parser = parse_np)]
    pub np: usize,

    /// Prefix every output line with `[PE] `.
    #[arg(long)]
    pub tag_output: bool,

    /// Kill the job after SECS seconds (exit status 124).
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,

    /// Bind each PE to a core (`core`; PE i gets the i-th core of the CPUs oshrun may
    /// use), a hardware thread (`hwthread`) or nothing (`none`); `auto`, the default
    /// unless SHMEM_BIND_TO says otherwise, is `core` when the PEs fit those cores and
    /// `none` when they do not.
    #[arg(long, value_name = "WHAT", value_parser = parse_bind)]
    pub bind_to: Option<BindTo>,

    /// Print the binding of every PE on stderr before the job starts (as does
    /// SHMEM_INFO=1).
    #[arg(long)]
    pub report_bindings: bool,

    /// Test hook: the PMI reader pauses MS milliseconds after reading a PE's abort, as
    /// on a host too loaded to run it.
    #[arg(long, value_name = "MS", hide = true, default_value = "0", value_parser = parse_ms)]
    pub test_slow_pmi: Duration,

    /// The program to run, then its arguments.
    #[arg(
        value_name = "PROGRAM",
        required = true,
        num_args = 1..,
        trailing_var_arg = true
    )]
    pub command: Vec<OsString>,
}

impl Args {
    /// Parses `argv` (including `argv[0]`), accepting the traditional `-np N` spelling.
    pub fn try_parse_argv<I, T>(argv: I) -> Result<Args, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Args::try_parse_from(rewrite_np(argv.into_iter().map(Into::into).collect()))
    }

    /// The program to run.
    pub fn program(&self) -> &OsString {
        &self.command[0]
    }

    /// The program's arguments.
    pub fn program_args(&self) -> &[OsString] {
        &self.command[1..]
    }
}

/// clap has no multi-letter short options: turn `-np` (and `-np=N`) into `--np`, but only
/// among the launcher's own options, never in the program's arguments.
fn rewrite_np(mut argv: Vec<OsString>) -> Vec<OsString> {
    let mut i = 1;
    while i < argv.len() {
        let Some(a) = argv[i].to_str() else { break };
        if a == "--" || !a.starts_with('-') || a == "-" {
            break;
        }
        if a == "-np" {
            argv[i] = "--np".into();
        } else if let Some(v) = a.strip_prefix("-np=") {
            argv[i] = format!("--np={v}").into();
        }
        let takes_value = matches!(
            argv[i].to_str(),
            Some("--np" | "-n" | "--timeout" | "--bind-to")
        );
        i += if takes_value { 2 } else { 1 };
    }
    argv
}

fn parse_np(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_PES).contains(&n) => Ok(n),
        _ => Err(format!("expected a number of PEs from 1 to {MAX_PES}")),
    }
}

fn parse_bind(s: &str) -> Result<BindTo, String> {
    s.parse()
}

fn parse_ms(s: &str) -> Result<Duration, String> {
    s.parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| format!("{s:?} is not a number of milliseconds"))
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| *v > 0.0)
        .and_then(|v| Duration::try_from_secs_f64(v).ok())
        .ok_or_else(|| "expected a positive number of seconds".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_argv(std::iter::once("oshrun").chain(args.iter().copied()))
    }

    #[test]
    fn np_spellings() {
        for a in [
            &["-np", "4", "prog"][..],
            &["-n", "4", "prog"],
            &["--np", "4", "prog"],
            &["-np=4", "prog"],
            &["--np=4", "prog"],
            &["-n4", "prog"],
        ] {
            let p = parse(a).unwrap();
            assert_eq!(p.np, 4, "{a:?}");
            assert_eq!(p.program(), "prog");
        }
    }

    #[test]
    fn program_args_untouched() {
        let p = parse(&[
            "--tag-output",
            "-np",
            "2",
            "prog",
            "-np",
            "3",
            "--bogus",
            "--",
        ])
        .unwrap();
        assert!(p.tag_output);
        assert_eq!(p.program_args(), &["-np", "3", "--bogus", "--"]);
        let p = parse(&["-np", "2", "--", "prog", "--timeout", "1"]).unwrap();
        assert_eq!(p.program(), "prog");
        assert_eq!(p.timeout, None);
        assert_eq!(p.program_args(), &["--timeout", "1"]);
        let p = parse(&["--timeout", "1.5", "-np", "1", "--", "-weird"]).unwrap();
        assert_eq!(p.program(), "-weird");
        assert_eq!(p.timeout, Some(Duration::from_millis(1500)));
    }

    #[test]
    fn bind_to() {
        let p = parse(&["--bind-to", "none", "-np", "2", "prog"]).unwrap();
        assert_eq!(p.bind_to, Some(BindTo::None));
        assert_eq!(p.np, 2);
        let p = parse(&["-np", "2", "--bind-to=core", "--report-bindings", "prog"]).unwrap();
        assert_eq!(p.bind_to, Some(BindTo::Core));
        assert!(p.report_bindings);
        assert_eq!(
            parse(&["--bind-to", "hwthread", "-np", "1", "prog"])
                .unwrap()
                .bind_to,
            Some(BindTo::Hwthread)
        );
        assert_eq!(parse(&["-np", "2", "prog"]).unwrap().bind_to, None);
        assert!(parse(&["--bind-to", "socket", "-np", "2", "prog"]).is_err());
        assert_eq!(
            parse(&["--bind-to", "auto", "-np", "1", "prog"])
                .unwrap()
                .bind_to,
            Some(BindTo::Auto)
        );
    }

    #[test]
    fn errors() {
        assert!(parse(&["--bogus", "-np", "2", "prog"]).is_err());
        assert!(parse(&["-np", "2"]).is_err());
        assert!(parse(&["prog"]).is_err());
        assert!(parse(&["-np", "0", "prog"]).is_err());
        assert!(parse(&["-np", "x", "prog"]).is_err());
        assert!(parse(&["--timeout", "0", "-np", "1", "prog"]).is_err());
    }
}
