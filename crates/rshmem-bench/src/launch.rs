//! `launch`: start-to-exit time of `oshrun -np k <this binary> hello`, and `hello` itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::report::{Goal, Report};
use crate::stats::Lat;

/// `hello`: init, a greeting, finalize (or nothing at all with `no_init`).
pub(crate) fn hello(no_init: bool, silent: bool) {
    if no_init {
        return;
    }
    crate::pe::init();
    let me = rshmem_core::setup::my_pe().unwrap_or_else(|e| rshmem_core::fatal(&e));
    let n = rshmem_core::setup::n_pes().unwrap_or_else(|e| rshmem_core::fatal(&e));
    if !silent {
        println!("hello from PE {me} of {n}");
    }
    rshmem_core::finalize();
}

/// Wall time (ns) of `cmd` from spawn to exit, with its output discarded; fails on a
/// non-zero exit.
fn time_run(cmd: &mut Command) -> Result<f64, String> {
    let t = Instant::now();
    let st = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let ns = t.elapsed().as_nanos() as f64;
    if !st.success() {
        return Err(format!("{cmd:?} failed: {st}"));
    }
    Ok(ns)
}

/// Median/min of `runs` timed runs after 2 untimed ones.
fn measure(runs: usize, mut make: impl FnMut() -> Command) -> Result<Lat, String> {
    for _ in 0..2 {
        time_run(&mut make())?;
    }
    let mut v = Vec::with_capacity(runs);
    for _ in 0..runs {
        v.push(time_run(&mut make())?);
    }
    Ok(Lat::of(&v))
}

/// `launch`: times `oshrun -np k hello` for each k, against spawning `hello` directly.
pub(crate) fn run_launch(
    oshrun: &Path,
    hello: Option<PathBuf>,
    pes: &[usize],
    runs: usize,
) -> Result<(), String> {
    let exe = match hello {
        Some(p) => p,
        None => std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?,
    };
    let r = Report::new(1);
    r.section(&format!(
        "launch: start-to-exit wall time, median / min of {runs} runs (hello = `{} hello`)",
        exe.display()
    ));
    let plain = measure(runs, || {
        let mut c = Command::new(&exe);
        c.args(["hello", "--no-init"]);
        c
    })?;
    let single = measure(runs, || {
        let mut c = Command::new(&exe);
        c.arg("hello");
        c
    })?;
    r.line(format!("{:<50} {:>21}  {:>6}", "", "median / min", "x"));
    let row = |desc: &str, l: Lat| {
        r.line(format!(
            "{:<50} {:>21}  {:>6.2}",
            desc,
            format!(
                "{} / {}",
                crate::report::ns(l.median),
                crate::report::ns(l.min)
            ),
            l.median / plain.median
        ));
    };
    row("spawn hello --no-init (limit: bare process)", plain);
    row("hello as a singleton (init+finalize, no launcher)", single);
    r.json(
        "launch_bare_process",
        None,
        "wall_median",
        plain.median / 1e6,
        "ms",
    );
    r.json(
        "launch_bare_process",
        None,
        "wall_min",
        plain.min / 1e6,
        "ms",
    );
    r.json(
        "launch_singleton",
        None,
        "wall_median",
        single.median / 1e6,
        "ms",
    );
    r.json("launch_singleton", None, "wall_min", single.min / 1e6, "ms");
    let mut outcome = Vec::new();
    for &k in pes {
        let l = measure(runs, || {
            let mut c = Command::new(oshrun);
            c.arg("-np").arg(k.to_string()).arg(&exe).arg("hello");
            c
        })?;
        row(&format!("oshrun -np {k} hello"), l);
        let rk = Report::new(k);
        rk.json(
            "launch_oshrun_hello",
            None,
            "wall_median",
            l.median / 1e6,
            "ms",
        );
        rk.json("launch_oshrun_hello", None, "wall_min", l.min / 1e6, "ms");
        rk.json(
            "launch_oshrun_hello",
            None,
            "ratio_to_bare_process",
            l.median / plain.median,
            "x",
        );
        outcome.push((k, l, rk));
    }
    for (k, l, rk) in &outcome {
        if *k == 4 {
            rk.target(
                "oshrun_np4_hello_wall",
                &format!(
                    "median of {runs} runs: {}, {:.1}x a bare process",
                    crate::report::ns(l.median),
                    l.median / plain.median
                ),
                l.median / 1e9,
                "s",
                Goal::AtMost(0.1),
            );
            rk.targets();
        }
    }
    Ok(())
}
