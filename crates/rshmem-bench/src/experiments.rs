//! `report`: runs the experiments behind the figures as child jobs (the existing
//! subcommands under rshmem's `oshrun`, the C programs of `bench/c` on rshmem and on Open
//! MPI's OSHMEM, and over libfabric on rshmem and on Sandia OpenSHMEM, the Coarray Fortran programs of `bench/fortran` through
//! `scripts/bench-caf.sh` on rshmem and on OpenCoarrays), tags their JSON lines with the experiment (`"exp"`), and hands the
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
    /// Sandia OpenSHMEM's install prefix (default: `SOS_DIR`; built with `--with-ofi`, see
    /// scripts/bench-ucx.sh): the libfabric experiments (ofi, ofi_coll, ofi_barrier) run the C programs
    /// on it beside rshmem, both with `FI_PROVIDER=tcp`; without it, rshmem alone.
    #[arg(long)]
    sos: Option<PathBuf>,
    /// Do not run the Coarray Fortran benchmarks (scripts/bench-caf.sh, seed 003).
    #[arg(long)]
    no_caf: bool,
    /// Run only these experiments (comma-separated tags: pe, cbench, ccoll, cbarrier,
    /// seed004, coll, coll_hosts, threads, cctx, apps, nbe, ofi, ofi_coll, ofi_barrier, caf); the other
    /// figures say they have no records.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The source tree (for `bench/c` and rshmem's install script); default: the one this
    /// binary was built from.
    #[arg(long)]
    source: Option<PathBuf>,
    /// Seconds before a job is killed.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
    /// PE counts of the C collectives and active-set experiments (ccoll, cbarrier,
    /// seed004, ofi_coll, ofi_barrier), comma-separated; default 2,4 with --quick, else
    /// 2,4,8.
    #[arg(long, value_delimiter = ',')]
    pes: Vec<usize>,
}

/// The experiments' tags (`"exp"` of their records), for `--only`.
const EXPS: &[&str] = &[
    "pe",
    "cbench",
    "ccoll",
    "cbarrier",
    "seed004",
    "coll",
    "coll_hosts",
    "threads",
    "cctx",
    "apps",
    "nbe",
    "ofi",
    "ofi_coll",
    "ofi_barrier",
    "caf",
];

impl Opts {
    /// Whether experiment `exp` runs (`--only`).
    fn wants(&self, exp: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|x| x == exp)
    }
}

/// `rshmem-bench report`.
pub(crate) fn run(o: Opts) {
    if let Err(e) = go(&o) {
        eprintln!("rshmem-bench report: {e}");
        std::process::exit(1);
    }
}

fn go(o: &Opts) -> Result<(), String> {
    if let Some(bad) = o.only.iter().find(|x| !EXPS.contains(&x.as_str())) {
        return Err(format!(
            "--only: no experiment {bad:?} (the experiments: {})",
            EXPS.join(", ")
        ));
    }
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

/// The `machine` record: CPU model, cores, kernel, OSHMEM's and SOS's versions, and when
/// the Coarray Fortran benchmarks are tried, gfortran's and OpenCoarrays' versions (empty:
/// missing).
fn machine(quick: bool, oshmem: Option<&str>, sos: Option<&str>, caf: Option<&Caf>) -> String {
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
    let mut m = json!({"bench": "machine", "size": null, "pes": 0, "metric": "cores",
           "value": cores, "unit": "", "cpu": cpu, "cores": cores, "kernel": kernel,
           "oshmem": oshmem.unwrap_or(""), "sos": sos.unwrap_or(""), "quick": quick});
    if let (Some(c), Some(o)) = (caf, m.as_object_mut()) {
        o.insert("gfortran".into(), json!(c.gfortran));
        o.insert("opencoarrays".into(), json!(c.opencoarrays));
    }
    m.to_string()
}

/// The Coarray Fortran tools found: version lines, empty when missing.
#[derive(Debug)]
struct Caf {
    gfortran: String,
    opencoarrays: String,
}

/// The first line of `cmd --version` that is not blank, when it runs and succeeds.
fn version(cmd: &std::ffi::OsStr) -> Option<String> {
    let out = Command::new(cmd)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// gfortran (`RSHMEM_FC`, as rshmem's `caf` uses) and OpenCoarrays (`OPENCOARRAYS_CAF`,
/// `OPENCOARRAYS_CAFRUN`, as `scripts/bench-caf.sh` looks for them); `None` with `--no-caf`.
fn caf_tools(o: &Opts) -> Option<Caf> {
    if o.no_caf || !o.wants("caf") {
        return None;
    }
    let fc = std::env::var_os("RSHMEM_FC").unwrap_or("gfortran".into());
    // RSHMEM_FC may carry arguments ("gfortran-12 -g"): ask its first word.
    let fc_cmd = fc
        .to_string_lossy()
        .split_whitespace()
        .next()
        .unwrap_or("gfortran")
        .to_string();
    let gfortran = version(fc_cmd.as_ref()).unwrap_or_default();
    let oc_caf = std::env::var_os("OPENCOARRAYS_CAF").unwrap_or("/usr/bin/caf".into());
    let oc_run = std::env::var_os("OPENCOARRAYS_CAFRUN").unwrap_or("/usr/bin/cafrun".into());
    let opencoarrays = if Path::new(&oc_run).exists() {
        version(&oc_caf)
            .filter(|v| v.to_lowercase().contains("opencoarrays"))
            .unwrap_or_default()
    } else {
        String::new()
    };
    Some(Caf {
        gfortran,
        opencoarrays,
    })
}

/// One child job.
struct Job {
    /// Tag given to its records.
    exp: &'static str,
    /// What the progress line says.
    what: String,
    cmd: Command,
    /// Where the job writes its JSON lines, when not on stdout.
    json: Option<PathBuf>,
    /// Its own time limit, when longer than `--timeout`.
    limit: Option<Duration>,
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

/// Sandia OpenSHMEM's oshcc and version (`Sandia OpenSHMEM 1.5.3 (PREFIX)`), when given
/// (`--sos`, `SOS_DIR`) and the libfabric experiments are wanted.
fn sos(o: &Opts) -> Option<(PathBuf, String)> {
    if !["ofi", "ofi_coll", "ofi_barrier"]
        .iter()
        .any(|e| o.wants(e))
    {
        return None;
    }
    let dir = o
        .sos
        .clone()
        .or_else(|| std::env::var_os("SOS_DIR").map(PathBuf::from))
        .filter(|d| !d.as_os_str().is_empty())?;
    let cc = dir.join("bin/oshcc");
    if !cc.exists() {
        eprintln!(
            "rshmem-bench report: no Sandia OpenSHMEM at {} (no bin/oshcc): rshmem alone over libfabric",
            dir.display()
        );
        return None;
    }
    let pc =
        std::fs::read_to_string(dir.join("lib/pkgconfig/sandia-openshmem.pc")).unwrap_or_default();
    let v = pc
        .lines()
        .find_map(|l| l.strip_prefix("Version:"))
        .map_or("?", str::trim);
    Some((cc, format!("Sandia OpenSHMEM {v} ({})", dir.display())))
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
    let c_wanted = [
        "cbench",
        "ccoll",
        "cbarrier",
        "seed004",
        "cctx",
        "ofi",
        "ofi_coll",
        "ofi_barrier",
    ]
    .iter()
    .any(|e| o.wants(e));
    let osh = oshmem(o);
    let sos = sos(o);
    let caf = caf_tools(o);
    let results = o.out.join("results.jsonl");
    let mut file = std::fs::File::create(&results)
        .map_err(|e| format!("cannot create {}: {e}", results.display()))?;
    let _ = writeln!(
        file,
        "{}",
        machine(
            o.quick,
            osh.as_ref().map(|x| x.2.as_str()),
            sos.as_ref().map(|x| x.1.as_str()),
            caf.as_ref()
        )
    );
    let oshrun = bin.join("oshrun");
    if !oshrun.exists() {
        return Err(format!(
            "{} is missing: cargo build --release -p oshrun -p rshmem-bench -p rshmem-capi -p rshmem-caf",
            oshrun.display()
        ));
    }

    // The C programs: rshmem's oshcc from a private install, OSHMEM's from the system.
    let prefix = build.join("rshmem");
    let mut c_rs = None;
    if !c_wanted {
        // --only without a C experiment: nothing to compile.
    } else if bin.join("librshmem_c.so").exists() || bin.join("deps/librshmem_c.so").exists() {
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
        .and_then(|()| compile(&prefix.join("bin/oshcc"), &src, &build, "rshmem", C_ALL));
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
    if let Some((cc, run, v)) = osh.as_ref().filter(|_| c_wanted) {
        eprintln!("rshmem-bench report: compiling bench/c on OSHMEM ({v})");
        match compile(cc, &src, &build, "oshmem", C_NO_TEAMS) {
            Ok(()) => osh_run = Some(run.clone()),
            Err(e) => eprintln!("rshmem-bench report: OSHMEM skipped: {e}"),
        }
    } else if !o.no_oshmem && c_wanted {
        eprintln!("rshmem-bench report: Open MPI's OSHMEM not installed: rshmem only");
    }
    let mut sos_built = false;
    if let Some((cc, v)) = &sos {
        eprintln!("rshmem-bench report: compiling bench/c on {v}");
        match compile(cc, &src, &build, "sos", &["shmem_bench", "shmem_coll"]) {
            Ok(()) => sos_built = true,
            Err(e) => eprintln!("rshmem-bench report: SOS skipped: {e}"),
        }
    }

    let mut jobs = plan(
        o,
        &exe,
        &oshrun,
        c_rs.as_deref(),
        osh_run.as_deref(),
        sos_built,
        &build,
    );
    jobs.retain(|j| o.wants(j.exp));
    match &caf {
        Some(c) if !c.gfortran.is_empty() => jobs.push(caf_job(o, &bin, &src, &build, c)),
        Some(_) => eprintln!(
            "rshmem-bench report: gfortran not installed: Coarray Fortran benchmarks skipped"
        ),
        None => {}
    }
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
        if let Some(j) = &job.json {
            let _ = std::fs::remove_file(j);
        }
        let limit = job.limit.unwrap_or(Duration::from_secs(o.timeout));
        match run_job(&mut job.cmd, limit, &log) {
            Ok(out) => {
                let out = match &job.json {
                    Some(j) => std::fs::read_to_string(j).unwrap_or_default(),
                    None => out,
                };
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

/// Seed 003: `scripts/bench-caf.sh` (2 and 4 images, rshmem and OpenCoarrays when
/// installed), its JSON lines written to `build/caf.jsonl`.
fn caf_job(o: &Opts, bin: &Path, src: &Path, build: &Path, c: &Caf) -> Job {
    let json = build.join("caf.jsonl");
    let mut cmd = Command::new("sh");
    cmd.arg(src.join("scripts/bench-caf.sh"))
        .args(["--images", "2 4", "--json"])
        .arg(&json);
    if o.quick {
        cmd.arg("--quick");
    }
    // The script installs rshmem from TARGET/release: this binary's own when it is a
    // release build (with libcaf_rshmem already there, nothing to build); otherwise it
    // builds one under CARGO_TARGET_DIR.
    if bin.file_name() == Some("release".as_ref()) {
        if let Some(target) = bin.parent() {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        if bin.join("libcaf_rshmem.so").exists() || bin.join("deps/libcaf_rshmem.so").exists() {
            cmd.arg("--no-build");
        }
    }
    let peer = if c.opencoarrays.is_empty() {
        "rshmem only: OpenCoarrays not installed"
    } else {
        "rshmem and OpenCoarrays"
    };
    Job {
        exp: "caf",
        what: format!("2, 4 images: scripts/bench-caf.sh (bench/fortran, {peer})"),
        cmd,
        json: Some(json),
        // Six programs per image count; the script bounds each run itself.
        limit: Some(Duration::from_secs(o.timeout.saturating_mul(3))),
    }
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

/// Every C program of `bench/c`.
const C_ALL: &[&str] = &["shmem_bench", "shmem_coll", "shmem_ctx", "shmem_seed004"];
/// OSHMEM 4.1 has no teams nor active-set objects: seed004.c does not build there.
const C_NO_TEAMS: &[&str] = &["shmem_bench", "shmem_coll", "shmem_ctx"];

/// Compiles the C programs `progs` with `cc` into `build/NAME.IMPL`, their records tagged
/// `"impl":IMPL`.
fn compile(cc: &Path, src: &Path, build: &Path, imp: &str, progs: &[&str]) -> Result<(), String> {
    for p in progs {
        check(
            Command::new(cc)
                .args(["-O2", "-std=c11", "-Wall", "-pthread"])
                .arg(format!("-DBENCH_IMPL=\"{imp}\""))
                .arg("-o")
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
    sos: bool,
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
    let coll_pes: &[usize] = if o.quick { &[2, 3, 4] } else { &[2, 3, 4, 8] };
    let c_pes: &[usize] = match (&o.pes[..], o.quick) {
        ([], true) => &[2, 4],
        ([], false) => &[2, 4, 8],
        (pes, _) => pes,
    };
    let threads: &[usize] = if o.quick { &[1, 2] } else { &[1, 2, 4] };

    // OSU-style: the Rust suite (limits) and the C programs on both implementations.
    jobs.push(Job {
        exp: "pe",
        what: "2 PEs: rshmem-bench pe (limits, put/get, AMOs, barrier)".into(),
        cmd: rs(2, &["pe"], &[]),
        json: None,
        limit: None,
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
        // More oshrun flags, as the scripts take them.
        if let Some(extra) = std::env::var_os("OMPI_OSHRUN_ARGS") {
            c.args(extra.to_string_lossy().split_whitespace());
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
            json: None,
            limit: None,
        });
    }
    if osh.is_some() {
        jobs.push(Job {
            exp: "cbench",
            what: "2 PEs: bench/c/shmem_bench.c on OSHMEM".into(),
            cmd: osh_cmd(2, "shmem_bench", &[]),
            json: None,
            limit: None,
        });
    }
    for &n in c_pes {
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "ccoll",
                what: format!("{n} PEs: bench/c/shmem_coll.c --sweep on rshmem"),
                cmd: crs_cmd(n, "shmem_coll", &["--sweep"]),
                json: None,
                limit: None,
            });
        }
        if osh.is_some() {
            jobs.push(Job {
                exp: "ccoll",
                what: format!("{n} PEs: bench/c/shmem_coll.c --sweep on OSHMEM"),
                cmd: osh_cmd(n, "shmem_coll", &["--sweep"]),
                json: None,
                limit: None,
            });
        }
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "cbarrier",
                what: format!("{n} PEs: bench/c/shmem_coll.c (barrier) on rshmem"),
                cmd: crs_cmd(n, "shmem_coll", &[]),
                json: None,
                limit: None,
            });
        }
        if osh.is_some() {
            jobs.push(Job {
                exp: "cbarrier",
                what: format!("{n} PEs: bench/c/shmem_coll.c (barrier) on OSHMEM"),
                cmd: osh_cmd(n, "shmem_coll", &[]),
                json: None,
                limit: None,
            });
        }
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "seed004",
                what: format!("{n} PEs: bench/c/shmem_seed004.c on rshmem"),
                cmd: crs_cmd(n, "shmem_seed004", &[]),
                json: None,
                limit: None,
            });
        }
    }
    // Seed 000: team creation by PE count, flat against hierarchical reductions.
    for &n in coll_pes {
        jobs.push(Job {
            exp: "coll",
            what: format!("{n} PEs: rshmem-bench coll --max-size 64K"),
            cmd: rs(n, &["coll", "--max-size", "65536"], &[]),
            json: None,
            limit: None,
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
        json: None,
        limit: None,
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
            json: None,
            limit: None,
        });
    }
    // The same on both libraries: bench/c/shmem_ctx.c.
    for &t in threads {
        let ts = t.to_string();
        let args = ["--threads", ts.as_str()];
        if c_rs.is_some() {
            jobs.push(Job {
                exp: "cctx",
                what: format!("{} PEs: bench/c/shmem_ctx.c --threads {t} on rshmem", 2 * t),
                cmd: crs_cmd(2 * t, "shmem_ctx", &args),
                json: None,
                limit: None,
            });
        }
        if osh.is_some() {
            jobs.push(Job {
                exp: "cctx",
                what: format!("{} PEs: bench/c/shmem_ctx.c --threads {t} on OSHMEM", 2 * t),
                cmd: osh_cmd(2 * t, "shmem_ctx", &args),
                json: None,
                limit: None,
            });
        }
    }
    for &t in threads {
        let ts = t.to_string();
        jobs.push(Job {
            exp: "apps",
            what: format!("1 PE: rshmem-bench apps --threads {t}"),
            cmd: rs(1, &["apps", "--threads", &ts], &[]),
            json: None,
            limit: None,
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
        json: None,
        limit: None,
    });
    // The C programs over libfabric (tcp;ofi_rxm): rshmem with every peer through it, SOS
    // (no on-node transport in an --with-ofi build) the same way, under mpiexec.hydra.
    let ofi_jobs = |exp: &'static str, np: usize, prog: &str, extra: &[&str]| {
        let args: String = extra.iter().map(|a| format!(" {a}")).collect();
        let mut v = Vec::new();
        if let Some(run) = c_rs {
            let mut c = Command::new(run);
            c.args(["--timeout", &limit, "-np", &np.to_string()])
                .arg(build.join(format!("{prog}.rshmem")))
                .args(extra)
                .args(q)
                .env("SHMEM_TRANSPORT", "ofi")
                .env("FI_PROVIDER", "tcp");
            v.push(Job {
                exp,
                what: format!("{np} PEs: bench/c/{prog}.c{args} on rshmem over libfabric tcp"),
                cmd: c,
                json: None,
                limit: None,
            });
        }
        if sos {
            // timeout(1) ends hydra with SIGTERM, which it passes on to the PEs (a SIGKILL at
            // the job's limit would leave them running).
            let mut c = Command::new("timeout");
            c.args(["-k", "10", &limit, "mpiexec.hydra", "-n", &np.to_string()])
                .arg(build.join(format!("{prog}.sos")))
                .args(extra)
                .args(q)
                .env("FI_PROVIDER", "tcp");
            v.push(Job {
                exp,
                what: format!("{np} PEs: bench/c/{prog}.c{args} on SOS over libfabric tcp"),
                cmd: c,
                json: None,
                limit: Some(Duration::from_secs(o.timeout + 20)),
            });
        }
        v
    };
    jobs.extend(ofi_jobs("ofi", 2, "shmem_bench", &[]));
    for &n in c_pes {
        jobs.extend(ofi_jobs("ofi_coll", n, "shmem_coll", &["--sweep"]));
        jobs.extend(ofi_jobs("ofi_barrier", n, "shmem_coll", &[]));
    }
    jobs
}
