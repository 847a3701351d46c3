//! `report`: runs the experiments behind the figures as child jobs (the existing
//! subcommands under rshmem's `oshrun`, the C programs of `bench/c` on rshmem and on Open
//! MPI's OSHMEM), tags their JSON lines with the experiment (`"exp"`), and hands the
//! records to [`crate::figures`]. Nothing here is timed twice: every figure comes from a
//! benchmark's own JSON line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Options of `rshmem-bench report`.
#[derive(Debug, clap::Args)]
pub(crate) struct Opts {
    /// Fewer samples and PE counts: minutes on 2 cores (a look, not a measurement).
    #[arg(long)]
    quick: bool,
    /// Where the figures, `index.html` and `results.jsonl` go.
    #[arg(long, default_value = "rshmem-report")]
    out: PathBuf,
    /// Draw the records of an earlier run (JSON lines) instead of measuring.
    #[arg(long)]
    from: Option<PathBuf>,
    /// Do not run Open MPI's OSHMEM even when it is installed.
    #[arg(long)]
    no_oshmem: bool,
    /// The source tree (for `bench/c` and rshmem's install script); default: the one this
    /// binary was built from.
    #[arg(long)]
    source: Option<PathBuf>,
    /// Seconds before a job is killed.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

/// `rshmem-bench report`.
pub(crate) fn run(o: Opts) {
    if let Err(e) = go(&o) {
        eprintln!("rshmem-bench report: {e}");
        std::process::exit(1);
    }
}

fn go(o: &Opts) -> Result<(), String> {
    let from = match &o.from {
        Some(f) => f.clone(),
        None => measure(o)?,
    };
    let figs = crate::figures::render_file(&from, &o.out)?;
    let series: usize = figs.iter().map(|f| f.series.len()).sum();
    eprintln!(
        "rshmem-bench report: {} figures ({series} series) in {}",
        figs.len(),
        o.out.join("index.html").display()
    );
    Ok(())
}

/// The `machine` record: CPU model, cores, kernel, OSHMEM version.
fn machine(quick: bool, oshmem: Option<&str>) -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    json!({"bench": "machine", "size": null, "pes": 0, "metric": "cores", "value": cores,
           "unit": "", "cpu": cpu, "cores": cores, "kernel": kernel,
           "oshmem": oshmem.unwrap_or(""), "quick": quick})
    .to_string()
}

/// One child job.
struct Job {
    /// Tag given to its records.
    exp: &'static str,
    /// What the progress line says.
    what: String,
    cmd: Command,
}

/// Open MPI's oshcc/oshrun and version, when installed and wanted.
fn oshmem(o: &Opts) -> Option<(PathBuf, PathBuf, String)> {
    if o.no_oshmem {
        return None;
    }
    let cc = PathBuf::from(std::env::var_os("OMPI_OSHCC").unwrap_or("/usr/bin/oshcc".into()));
    let run = PathBuf::from(std::env::var_os("OMPI_OSHRUN").unwrap_or("/usr/bin/oshrun".into()));
    if !cc.exists() || !run.exists() {
        return None;
    }
    let v = Command::new(&run).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&v.stdout)
        .lines()
        .next()
        .unwrap_or("Open MPI")
        .trim()
        .to_string();
    Some((cc, run, version))
}

/// Runs `cmd` to completion, failing with its stderr.
fn check(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// Runs every experiment, writing `OUT/results.jsonl`; returns its path.
fn measure(o: &Opts) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let bin = exe.parent().unwrap_or(Path::new(".")).to_path_buf();
    let src = o
        .source
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let build = o.out.join("build");
    let logs = o.out.join("logs");
    for d in [&build, &logs] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let osh = oshmem(o);
    let results = o.out.join("results.jsonl");
    let mut file = std::fs::File::create(&results)
        .map_err(|e| format!("cannot create {}: {e}", results.display()))?;
    let _ = writeln!(
        file,
        "{}",
        machine(o.quick, osh.as_ref().map(|x| x.2.as_str()))
    );
    let oshrun = bin.join("oshrun");
    if !oshrun.exists() {
        return Err(format!(
            "{} is missing: cargo build --release -p oshrun -p rshmem-bench -p rshmem-capi",
            oshrun.display()
        ));
    }

    // The C programs: rshmem's oshcc from a private install, OSHMEM's from the system.
    let prefix = build.join("rshmem");
    let mut c_rs = None;
    if bin.join("librshmem_c.so").exists() || bin.join("deps/librshmem_c.so").exists() {
        eprintln!("rshmem-bench report: compiling bench/c on rshmem");
        let r = check(
            Command::new("sh")
                .arg(src.join("crates/rshmem-capi/scripts/install.sh"))
                .arg("--prefix")
                .arg(&prefix)
                .arg("--build-dir")
                .arg(&bin),
            "installing rshmem",
        )
        .and_then(|()| compile(&prefix.join("bin/oshcc"), &src, &build, "rshmem", true));
        match r {
            Ok(()) => c_rs = Some(prefix.join("bin/oshrun")),
            Err(e) => eprintln!("rshmem-bench report: C programs on rshmem skipped: {e}"),
        }
    } else {
        eprintln!(
            "rshmem-bench report: no librshmem_c.so beside {}: C programs skipped (cargo build --release -p rshmem-capi)",
            exe.display()
        );
    }
    let mut osh_run = None;
    if let Some((cc, run, v)) = &osh {
        eprintln!("rshmem-bench report: compiling bench/c on OSHMEM ({v})");
        match compile(cc, &src, &build, "oshmem", false) {
            Ok(()) => osh_run = Some(run.clone()),
            Err(e) => eprintln!("rshmem-bench report: OSHMEM skipped: {e}"),
        }
    } else if !o.no_oshmem {
        eprintln!("rshmem-bench report: Open MPI's OSHMEM not installed: rshmem only");
    }

    let jobs = plan(
        o,
        &exe,
        &oshrun,
        c_rs.as_deref(),
        osh_run.as_deref(),
        &build,
    );
    let t0 = Instant::now();
    let n = jobs.len();
    for (i, mut job) in jobs.into_iter().enumerate() {
        eprintln!(
            "[{}/{n}] {:>4}s  {}",
            i + 1,
            t0.elapsed().as_secs(),
            job.what
        );
        let log = logs.join(format!("{:02}-{}", i + 1, job.exp));
        match run_job(&mut job.cmd, Duration::from_secs(o.timeout), &log) {
            Ok(out) => {
                let mut kept = 0;
                for line in out.lines() {
                    if let Some(tagged) = tag(line, job.exp) {
                        let _ = writeln!(file, "{tagged}");
                        kept += 1;
                    }
                }
                if kept == 0 {
                    eprintln!("      no records (see {}.err)", log.display());
                }
            }
            Err(e) => eprintln!("      failed: {e} (see {}.err)", log.display()),
        }
    }
    eprintln!("[{n}/{n}] {:>4}s  done", t0.elapsed().as_secs());
    Ok(results)
}

/// Adds `"exp"` to a JSON record line.
fn tag(line: &str, exp: &str) -> Option<String> {
    if !line.starts_with('{') {
        return None;
    }
    let mut v: Value = serde_json::from_str(line).ok()?;
    v.as_object_mut()?.insert("exp".into(), json!(exp));
    Some(v.to_string())
}

/// Compiles the C programs with `cc` into `build/NAME.IMPL`.
fn compile(cc: &Path, src: &Path, build: &Path, imp: &str, all: bool) -> Result<(), String> {
    let progs: &[&str] = if all {
        &["shmem_bench", "shmem_coll", "shmem_seed004"]
    } else {
        // OSHMEM 4.1 has no teams nor active-set objects: seed004.c does not build there.
        &["shmem_bench", "shmem_coll"]
    };
    for p in progs {
        check(
            Command::new(cc)
                .args(["-O2", "-std=c11", "-Wall", "-o"])
                .arg(build.join(format!("{p}.{imp}")))
                .arg(src.join(format!("bench/c/{p}.c"))),
            &format!("compiling {p}.c with {}", cc.display()),
        )?;
    }
    Ok(())
}

/// Runs a job with a time limit; stdout is returned, both streams kept under `log`.
fn run_job(cmd: &mut Command, limit: Duration, log: &Path) -> Result<String, String> {
    let out = std::fs::File::create(log.with_extension("out")).map_err(|e| e.to_string())?;
    let err = std::fs::File::create(log.with_extension("err")).map_err(|e| e.to_string())?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if t.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("timed out after {}s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(log.with_extension("out")).unwrap_or_default();
    if !status.success() {
        // Keep what it printed before failing: earlier sections are still records.
        eprintln!("      exited with {status}");
    }
    Ok(text)
}

/// The experiments, in order.
fn plan(
    o: &Opts,
    exe: &Path,
    oshrun: &Path,
    c_rs: Option<&Path>,
    osh: Option<&Path>,
    build: &Path,
) -> Vec<Job> {
    let q: &[&str] = if o.quick { &["--quick"] } else { &[] };
    let limit = o.timeout.to_string();
    let mut jobs = Vec::new();
    let rs = |np: usize, args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(oshrun);
        c.args(["--timeout", &limit, "-np", &np.to_string()])
            .arg(exe)
            .args(args)
            .args(q);
        for (k, v) in env {
            c.env(k, v);
        }
        c
    };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let coll_pes: &[usize] = if o.quick { &[2, 4] } else { &[2, 3, 4, 8] };
    let c_pes: &[usize] = if o.quick { &[2, 4] } else { &[2, 4, 8] };
    let threads: &[usize] = if o.quick { &[1, 2] } else { &[1, 2, 4] };

    // OSU-style: the Rust suite (limits) and the C programs on both implementations.
    jobs.push(Job {
        exp: "pe",
        what: "2 PEs: rshmem-bench pe (limits, put/get, AMOs, barrier)".into(),
        cmd: rs(2, &["pe"], &[]),
    });
    let osh_cmd = |np: usize, prog: &str, extra: &[&str]| {
        let mut c = Command::new(osh.unwrap_or(Path::new("oshrun")));
        c.args(["-np", &np.to_string(), "--mca", "osc", "^rdma"]);
        if rustix::process::geteuid().is_root() {
            c.arg("--allow-run-as-root")
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        }
        if np > cores {
            c.arg("--oversubscribe");
        }
        c.arg(build.join(format!("{prog}.oshmem")))
            .args(extra)
            .args(q);
        c
    };
    let crs_cmd = |np: usize, prog: &str, extra: &[&str]| {
        let mut c = Command::new(c_rs.unwrap_or(Path::new("oshrun")));
        c.args(["--timeout", &limit, "-np", &np.to_string()])
            .arg(build.join(format!("{prog}.rshmem")))
            .args(extra)
            .args(q);
        c
    };
    if c_rs.is_some() {
        jobs.push(Job {
            exp: "cbench",
            what: "2 PEs: bench/c/shmem_bench.c on rshmem".into(),
            cmd: crs_cmd(2, "shmem_bench", &[]),
        });
    }
    if osh.is_some() {
        jobs.push(Job {
            exp: "cbench",
            what: "2 PEs: bench/c/shmem_bench.c on OSHMEM".into(),
            cmd: osh_cmd(2, "shmem_bench", &[]),
        });
    }
    for &n in c_pes {
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "ccoll",
                what: format!("{n} PEs: bench/c/shmem_coll.c --sweep on rshmem"),
                cmd: crs_cmd(n, "shmem_coll", &["--sweep"]),
            });
        }
        if osh.is_some() {
            jobs.push(Job {
                exp: "ccoll",
                what: format!("{n} PEs: bench/c/shmem_coll.c --sweep on OSHMEM"),
                cmd: osh_cmd(n, "shmem_coll", &["--sweep"]),
            });
        }
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "cbarrier",
                what: format!("{n} PEs: bench/c/shmem_coll.c (barrier) on rshmem"),
                cmd: crs_cmd(n, "shmem_coll", &[]),
            });
        }
        if osh.is_some() {
            jobs.push(Job {
                exp: "cbarrier",
                what: format!("{n} PEs: bench/c/shmem_coll.c (barrier) on OSHMEM"),
                cmd: osh_cmd(n, "shmem_coll", &[]),
            });
        }
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "seed004",
                what: format!("{n} PEs: bench/c/shmem_seed004.c on rshmem"),
                cmd: crs_cmd(n, "shmem_seed004", &[]),
            });
        }
    }
    // Seed 000: team creation by PE count, flat against hierarchical reductions.
    for &n in coll_pes {
        jobs.push(Job {
            exp: "coll",
            what: format!("{n} PEs: rshmem-bench coll --max-size 64K"),
            cmd: rs(n, &["coll", "--max-size", "65536"], &[]),
        });
    }
    jobs.push(Job {
        exp: "coll_hosts",
        what: "4 PEs on 2 simulated hosts (SHMEM_TRANSPORT=mixed): rshmem-bench coll".into(),
        cmd: rs(
            4,
            &["coll"],
            &[("SHMEM_TRANSPORT", "mixed"), ("SHMEM_VIRTUAL_HOSTS", "2")],
        ),
    });
    // Seed 001: threads against PEs; the application kernels.
    for &t in threads {
        let ts = t.to_string();
        jobs.push(Job {
            exp: "threads",
            what: format!("{} PEs: rshmem-bench threads --threads {t}", 2 * t),
            cmd: rs(
                2 * t,
                &["threads", "--threads", &ts, "--max-size", "8"],
                &[],
            ),
        });
    }
    for &t in threads {
        let ts = t.to_string();
        jobs.push(Job {
            exp: "apps",
            what: format!("1 PE: rshmem-bench apps --threads {t}"),
            cmd: rs(1, &["apps", "--threads", &ts], &[]),
        });
    }
    // Seed 002.
    jobs.push(Job {
        exp: "nbe",
        what: "2 PEs: rshmem-bench nbe --threads 2".into(),
        cmd: rs(
            2,
            &[
                "nbe",
                "--threads",
                "2",
                "--overlap-sizes",
                if o.quick {
                    "64,65536,6291456"
                } else {
                    "64,4096,65536,1048576,6291456"
                },
            ],
            &[],
        ),
    });
    jobs
}
