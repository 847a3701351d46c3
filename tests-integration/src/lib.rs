//! Harness for multi-PE tests: runs a PE program of this package under `oshrun` with a
//! time bound, so a hang fails the test instead of stalling CI.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a finished (or timed-out) job printed and how it ended.
#[derive(Debug)]
pub struct JobOutput {
    /// Exit status of the launcher (`None` when the time bound killed it).
    pub status: Option<ExitStatus>,
    /// Everything the job wrote to stdout.
    pub stdout: String,
    /// Everything the job wrote to stderr.
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl JobOutput {
    /// Exit code, or -1 for a signal or a timeout.
    pub fn code(&self) -> i32 {
        self.status.and_then(|s| s.code()).unwrap_or(-1)
    }

    /// Panics with the whole output unless the job exited 0.
    #[track_caller]
    pub fn assert_ok(&self) -> &Self {
        assert_eq!(
            self.code(),
            0,
            "job failed (status {:?}, {:?})\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.elapsed,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Panics unless the job exited 0 and each of its `np` PEs printed `ok <prog>`.
    #[track_caller]
    pub fn assert_all_ok(&self, np: usize, prog: &str) -> &Self {
        self.assert_ok();
        let oks = self.lines_with(&format!("ok {prog}")).len();
        assert_eq!(oks, np, "{np} PEs: {self:?}");
        self
    }

    /// Panics unless `api_ring` ran as one job of `np` PEs: each PE received from its left
    /// neighbour in a ring of `np` (N jobs of one PE would each receive from itself).
    #[track_caller]
    pub fn assert_ring(&self, np: usize) -> &Self {
        self.assert_all_ok(np, "api_ring");
        for me in 0..np {
            let want = format!("ring pe={me} from={} ", (me + np - 1) % np);
            assert!(self.stdout.contains(&want), "no {want:?}: {self:?}");
        }
        self
    }

    /// Lines of stdout that start with `prefix`, with the prefix removed.
    pub fn lines_with(&self, prefix: &str) -> Vec<String> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(prefix).map(str::to_owned))
            .collect()
    }
}

/// The directory holding this build's binaries (`target/<profile>`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test>-<hash>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Path of a binary built in this workspace (`oshrun`, or a PE program of this package).
pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} is not built; run the tests with `cargo test --workspace`",
        p.display()
    );
    p
}

/// A job to run under `oshrun`.
#[derive(Debug, Clone)]
pub struct Job {
    np: usize,
    program: PathBuf,
    args: Vec<String>,
    launcher_args: Vec<String>,
    env: Vec<(String, String)>,
    timeout: Duration,
    stdin: Option<Vec<u8>>,
}

impl Job {
    /// `oshrun -np <np> <program>`, where `program` is a PE program of this package.
    pub fn new(np: usize, program: &str) -> Self {
        Job {
            np,
            program: bin(program),
            args: Vec::new(),
            launcher_args: Vec::new(),
            env: Vec::new(),
            timeout: Duration::from_secs(60),
            stdin: None,
        }
    }

    /// Arguments for the PE program.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Extra options for `oshrun` itself (before the program).
    pub fn launcher_args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.launcher_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// An environment variable for every PE.
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    /// The time bound (default 60 s); past it the job is killed and the test fails.
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    /// Bytes fed to the job's stdin.
    pub fn stdin(mut self, data: &[u8]) -> Self {
        self.stdin = Some(data.to_vec());
        self
    }

    /// The command line that `run` executes.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(bin("oshrun"));
        cmd.arg("-np").arg(self.np.to_string());
        cmd.args(&self.launcher_args);
        cmd.arg("--").arg(&self.program).args(&self.args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        // A job that forces one transport leaves out the network choice a pass of the suite
        // sets for `auto` and `mixed` (the two would disagree at init).
        let set = |k: &str| self.env.iter().rev().find(|(key, _)| key == k);
        if set("SHMEM_TRANSPORT").is_some_and(|(_, t)| t != "auto" && t != "mixed")
            && set("SHMEM_NETWORK").is_none()
        {
            cmd.env_remove("SHMEM_NETWORK");
        }
        cmd
    }

    /// Runs the job to completion or to its time bound.
    pub fn run(&self) -> JobOutput {
        run_bounded(
            self.command(),
            self.stdin.as_deref(),
            self.timeout * time_scale(),
        )
    }
}

/// How much longer a job may take than its bound says: 3 when the environment sends every
/// PE through the network (`SHMEM_TRANSPORT=ucx`, the CI's second pass, or `ofi`), where each remote operation is a network round trip of tens of microseconds
/// instead of a memory access.
pub fn time_scale() -> u32 {
    if std::env::var("SHMEM_TRANSPORT").is_ok_and(|t| t == "ucx" || t == "ofi") {
        3
    } else {
        1
    }
}

/// Runs `cmd` with piped output, killing it (and failing) past `timeout`.
pub fn run_bounded(mut cmd: Command, stdin: Option<&[u8]>, timeout: Duration) -> JobOutput {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let start = Instant::now();
    let mut child = cmd.spawn().expect("spawn job");
    if let Some(data) = stdin {
        use std::io::Write;
        let mut w = child.stdin.take().expect("stdin");
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
    }
    let out = reader(&mut child, true);
    let err = reader(&mut child, false);
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break Some(s);
        }
        if start.elapsed() > timeout {
            // SIGTERM first so the launcher can clean up its PEs, then SIGKILL.
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            std::thread::sleep(Duration::from_secs(2));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if status.is_none() {
        panic!(
            "job exceeded its time bound of {timeout:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
    }
    JobOutput {
        status,
        stdout,
        stderr,
        elapsed,
    }
}

fn reader(child: &mut Child, stdout: bool) -> std::thread::JoinHandle<String> {
    let mut src: Box<dyn Read + Send> = if stdout {
        Box::new(child.stdout.take().expect("stdout"))
    } else {
        Box::new(child.stderr.take().expect("stderr"))
    };
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = src.read_to_string(&mut s);
        s
    })
}

/// Runs `prog args` on `np` PEs with `env`, bounded by 60 s; asserts exit 0 and that
/// every PE printed `ok <mode> pe=<me>` (`mode` = `args[0]`) exactly once.
pub fn run_ok(np: usize, prog: &str, args: &[&str], env: &[(&str, &str)]) -> JobOutput {
    let mut job = Job::new(np, prog)
        .args(args.iter().copied())
        .timeout(Duration::from_secs(60));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_ok();
    let mode = args[0];
    let mut pes: Vec<usize> = out
        .lines_with(&format!("ok {mode} pe="))
        .iter()
        .map(|s| s.trim().parse().expect("PE number"))
        .collect();
    pes.sort_unstable();
    assert_eq!(
        pes,
        (0..np).collect::<Vec<_>>(),
        "{prog} {args:?} on {np} PEs: every PE must print its ok line once\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
    out
}

/// Names in `/dev/shm` that contain `rshmem` (leftovers of a job).
pub fn shm_objects() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("rshmem"))
                .collect()
        })
        .unwrap_or_default()
}

/// Pids of the processes still running the program `exe` (a job's leftovers).
pub fn running(exe: &Path) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let target = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
            let target = target.to_str()?.trim_end_matches(" (deleted)");
            (Path::new(target) == exe).then_some(pid)
        })
        .collect()
}

/// Asserts that a job of `exe` left nothing behind: no process still running it, and no
/// `/dev/shm` object that was not there before (`shm_before`, from [`shm_objects`]).
#[track_caller]
pub fn assert_left_nothing(exe: &Path, shm_before: &[String], ctx: &str) {
    assert!(running(exe).is_empty(), "{ctx}: leftover PEs");
    let after = shm_objects();
    assert!(
        after.iter().all(|o| shm_before.contains(o)),
        "{ctx}: {after:?}"
    );
}

/// Whether the tests run as root (launchers that need it: `mpirun --allow-run-as-root`,
/// slurmd, network namespaces).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Whether this is the suite's default pass (no `SHMEM_TRANSPORT` in the environment). CI
/// runs the suite again under `SHMEM_TRANSPORT=ucx`, `mixed` and `ofi`; a test whose jobs
/// all choose their transport themselves (tests/ofi.rs, tests/ucx.rs) or across simulated
/// hosts (tests/hosts.rs) would repeat itself unchanged there, so it runs in this pass only
/// and says so in the others.
pub fn default_pass() -> bool {
    let default = std::env::var_os("SHMEM_TRANSPORT").is_none_or(|t| t.is_empty());
    if !default {
        eprintln!("runs in the default pass only (its jobs choose their transport themselves)");
    }
    default
}

/// Whether a `scripts/simhosts.sh` run was skipped because this machine does not permit
/// network namespaces (exit status 77; the reason is printed). A failure when
/// `RSHMEM_TESTS_REQUIRE_NETNS=1` (CI).
#[track_caller]
pub fn simhosts_skipped(out: &JobOutput) -> bool {
    if out.code() != 77 {
        return false;
    }
    assert!(
        std::env::var("RSHMEM_TESTS_REQUIRE_NETNS").as_deref() != Ok("1"),
        "simulated hosts are required here but were skipped: {out:?}"
    );
    eprintln!("skipping: {}", out.stderr.trim());
    true
}

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Installs the C face (library, headers, `oshcc`, `oshrun`) with
/// `crates/rshmem-capi/scripts/install.sh` into `<build dir>/<name>` and returns that
/// prefix. Each test file uses a prefix of its own, so test processes never replace files
/// another one runs.
pub fn install_c_face(name: &str) -> PathBuf {
    let build = bin_dir();
    assert!(
        build.join("librshmem_c.so").exists() || build.join("deps/librshmem_c.so").exists(),
        "{} has no librshmem_c.so: run `cargo test --workspace`, or `cargo build -p rshmem-capi -p oshrun` before this test",
        build.display()
    );
    let prefix = build.join(name);
    let out = Command::new("sh")
        .arg(workspace().join("crates/rshmem-capi/scripts/install.sh"))
        .arg("--prefix")
        .arg(&prefix)
        .arg("--build-dir")
        .arg(&build)
        .output()
        .expect("run install.sh");
    assert!(
        out.status.success(),
        "install.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    prefix
}

/// Installs the C face into `<build dir>/<prefix>` and compiles
/// `tests-integration/c/<src>` there with `oshcc` (C11, every warning an error, `extra`
/// flags added); returns the program's path. For a test file's one C program: call it
/// once (a `OnceLock`), so a running job's executable is never replaced.
pub fn compile_c_program(prefix: &str, src: &str, extra: &[&str]) -> String {
    let prefix = install_c_face(prefix);
    let exe = prefix.join(src.trim_end_matches(".c"));
    let out = Command::new(prefix.join("bin/oshcc"))
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-O1",
        ])
        .args(extra)
        .arg("-o")
        .arg(&exe)
        .arg(workspace().join("tests-integration/c").join(src))
        .output()
        .expect("run oshcc");
    assert!(
        out.status.success(),
        "oshcc {src} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe.to_str().expect("a UTF-8 path").to_string()
}

/// The size of `SHMEM_TEAM_SHARED` that PE `me` of `n` should see under the transport the
/// environment selects: the world on one host, this PE alone under `SHMEM_TRANSPORT=ucx`,
/// its virtual host under `SHMEM_TRANSPORT=mixed`.
pub fn expected_shared_size(me: usize, n: usize) -> usize {
    (0..n).filter(|&p| expected_maps(me, p, n)).count()
}

/// The hosts the test runs on, as the harness says: `RSHMEM_TEST_HOSTS=h` when
/// `scripts/simhosts.sh` (or a cluster) places the PEs in `h` contiguous blocks, else one.
pub fn test_hosts(n: usize) -> usize {
    std::env::var("RSHMEM_TEST_HOSTS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&h| h > 0)
        .map_or(1, |h| h.min(n.max(1)))
}

/// How many HOST teams the job should have: `SHMEM_VIRTUAL_HOSTS` blocks when set, else
/// the real hosts of [`test_hosts`].
pub fn expected_hosts(n: usize) -> usize {
    match std::env::var("SHMEM_VIRTUAL_HOSTS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        Some(k) if k > 0 => k.min(n),
        _ => test_hosts(n),
    }
}

/// Whether PE `me` of `n` should map PE `pe`'s memory under the environment's
/// `SHMEM_TRANSPORT` and `SHMEM_VIRTUAL_HOSTS`, with the PEs on [`test_hosts`] real hosts
/// (a PE always maps itself).
pub fn expected_maps(me: usize, pe: usize, n: usize) -> bool {
    let vhosts = std::env::var("SHMEM_VIRTUAL_HOSTS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&k| k > 0)
        .map(|k| k.min(n));
    let h = test_hosts(n);
    let same_host = pe * h / n == me * h / n;
    pe == me
        || same_host
            && match (std::env::var("SHMEM_TRANSPORT").as_deref(), vhosts) {
                (Ok("ucx" | "ofi"), _) => false,
                (Ok("mixed"), Some(k)) => pe * k / n == me * k / n,
                _ => true,
            }
}
