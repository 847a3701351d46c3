//! `oshrun` end to end, driving the `pmi_probe` PE program. Needs the `oshrun` binary built
//! in the same target directory (`cargo test --workspace`, or `cargo build -p oshrun` first).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rshmem_tests::{bin, run_bounded, shm_objects, Job, JobOutput};

const T: Duration = Duration::from_secs(30);

fn probe(np: usize, args: &[&str]) -> Job {
    Job::new(np, "pmi_probe")
        .args(args.iter().copied())
        .timeout(T)
}

/// `pid rank=R pid=P` lines, as printed by the probe's failure modes.
fn pids(out: &JobOutput) -> BTreeMap<usize, u32> {
    out.lines_with("pid rank=")
        .iter()
        .map(|l| {
            let (r, p) = l.split_once(" pid=").expect("pid line");
            (r.parse().unwrap(), p.parse().unwrap())
        })
        .collect()
}

/// Whether `pid` is a live process (zombies count as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s.rsplit_once(") ").map(|(_, r)| r.chars().next());
            state != Some(Some('Z')) && state != Some(Some('X'))
        }
        Err(_) => false,
    }
}

#[track_caller]
fn assert_all_gone(pids: &BTreeMap<usize, u32>) {
    for (r, p) in pids {
        assert!(!alive(*p), "PE {r} (pid {p}) survived the job");
    }
}

#[track_caller]
fn assert_stderr_has(out: &JobOutput, needle: &str) {
    assert!(
        out.stderr.contains(needle),
        "stderr lacks {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.stdout,
        out.stderr
    );
}

/// oshrun publishes node locality as Hydra and Slurm do: every PE on node 0.
#[test]
fn oshrun_publishes_the_process_mapping() {
    let out = probe(3, &["nodes"]).run();
    out.assert_ok();
    for r in 0..3 {
        let want = format!("nodes rank={r} size=3 [0, 0, 0]");
        assert!(out.stdout.lines().any(|l| l == want), "{}", out.stdout);
    }
}

#[test]
fn kvs_exchange_1_to_4_pes() {
    for np in 1..=4 {
        let out = probe(np, &["kvs"]).run();
        out.assert_ok();
        let lines = out.lines_with("ok kvs ");
        assert_eq!(lines.len(), np, "{}", out.stdout);
        let sum = 7 * np * (np - 1) / 2;
        let mut jobs: Vec<String> = Vec::new();
        for r in 0..np {
            let l = lines
                .iter()
                .find(|l| l.starts_with(&format!("rank={r} ")))
                .unwrap_or_else(|| panic!("no line for rank {r}: {}", out.stdout));
            assert!(l.contains(&format!("size={np} sum={sum} ")), "{l}");
            jobs.push(l.rsplit_once("job=").unwrap().1.to_owned());
        }
        assert!(jobs
            .iter()
            .all(|j| j == &jobs[0] && j.starts_with("rshmem-")));
    }
}

#[test]
fn job_id_in_env_and_unique() {
    let a = probe(2, &["info"]).run();
    let b = probe(2, &["info"]).run();
    let job = |o: &JobOutput| {
        o.assert_ok();
        let ls = o.lines_with("info ");
        assert_eq!(ls.len(), 2);
        for l in &ls {
            let (_, rest) = l.split_once("job=").unwrap();
            let (j, e) = rest.split_once(" env_job=").unwrap();
            assert_eq!(j, e, "OSHRUN_JOBID differs from the kvsname");
        }
        ls[0].split_once("job=").unwrap().1.to_owned()
    };
    assert_ne!(job(&a), job(&b));
}

#[test]
fn many_barriers() {
    let out = probe(4, &["barrier", "300"]).run();
    out.assert_ok();
    assert_eq!(out.lines_with("ok barrier ").len(), 4);
}

#[test]
fn output_lines_are_never_interleaved() {
    let n = 2000;
    let out = probe(4, &["print", &n.to_string()]).run();
    out.assert_ok();
    let mut per_rank = [0usize; 4];
    for l in out.stdout.lines() {
        let rest = l
            .strip_prefix("line rank=")
            .unwrap_or_else(|| panic!("{l:?}"));
        let r: usize = rest[..1].parse().unwrap();
        let pad = "x".repeat(100 + 37 * r);
        assert!(rest.ends_with(&format!(" {pad} end")), "mangled line {l:?}");
        let i: usize = rest[4..].split_once(' ').unwrap().0.parse().unwrap();
        assert_eq!(i, per_rank[r], "rank {r} lines out of order");
        per_rank[r] += 1;
    }
    assert_eq!(per_rank, [n; 4]);
    let elines = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("eline rank="))
        .count();
    assert_eq!(elines, 4 * n, "stderr lines lost");
}

#[test]
fn tag_output_prefixes_every_line() {
    let out = probe(3, &["info"]).launcher_args(["--tag-output"]).run();
    out.assert_ok();
    for r in 0..3 {
        let l = out.lines_with(&format!("[{r}] info rank={r} "));
        assert_eq!(l.len(), 1, "{}", out.stdout);
    }
    assert_eq!(out.stdout.lines().count(), 3);
}

#[test]
fn last_line_without_newline_is_printed() {
    let out = probe(2, &["tail"]).run();
    out.assert_ok();
    for r in 0..2 {
        assert!(
            out.stdout
                .lines()
                .any(|l| l == format!("tail rank={r} no newline")),
            "{:?}",
            out.stdout
        );
    }
}

#[test]
fn stdin_goes_to_pe0_only() {
    let out = probe(3, &["echo-stdin"]).stdin(b"alpha\nbeta\n").run();
    out.assert_ok();
    assert_eq!(out.lines_with("echo rank=0 "), ["alpha", "beta"]);
    assert_eq!(out.lines_with("stdin-eof rank=0 "), ["lines=2"]);
    assert_eq!(out.lines_with("stdin-eof rank=1 "), ["lines=0"]);
    assert_eq!(out.lines_with("stdin-eof rank=2 "), ["lines=0"]);
}

#[test]
fn program_arguments_pass_through() {
    let out = probe(1, &["args", "-np", "7", "--timeout", "x y", "--"]).run();
    out.assert_ok();
    assert_eq!(
        out.lines_with("arg="),
        ["-np", "7", "--timeout", "x y", "--"]
    );
}

#[test]
fn exit_code_of_failing_pe_propagates() {
    let out = probe(3, &["exit", "3", "1"]).run();
    assert_eq!(out.code(), 3, "{out:?}");
    assert_stderr_has(&out, "oshrun: PE 1 exited with status 3");
    let p = pids(&out);
    assert_eq!(p.len(), 3);
    assert_all_gone(&p);
    assert!(out.elapsed < Duration::from_secs(5), "{:?}", out.elapsed);
    assert!(!out.stdout.contains("survivor"));
}

#[test]
fn abort_code_propagates_and_ends_others_fast() {
    let out = probe(3, &["abort", "42", "2"]).run();
    assert_eq!(out.code(), 42, "{out:?}");
    // An abort with a message is a fatal error, not shmem_global_exit: oshrun prints the
    // PE's message once, then its summary.
    assert_stderr_has(
        &out,
        "pmi_probe: abort requested\noshrun: PE 2 aborted the job (status 42)\n",
    );
    assert_eq!(out.stderr.matches("abort requested").count(), 1, "{out:?}");
    assert!(out.elapsed < Duration::from_secs(2), "{:?}", out.elapsed);
    assert_all_gone(&pids(&out));
}

#[test]
fn killed_pe_ends_the_job() {
    let out = probe(3, &["kill", "1"]).run();
    assert_eq!(out.code(), 128 + 9, "{out:?}");
    let p = pids(&out);
    assert_stderr_has(
        &out,
        &format!(
            "oshrun: PE 1 (pid {}) was killed by signal 9 (SIGKILL)",
            p[&1]
        ),
    );
    assert!(out.elapsed < Duration::from_secs(3), "{:?}", out.elapsed);
    assert_all_gone(&p);
    let left = out.lines_with("shm rank=1 ");
    assert_eq!(left.len(), 1, "{}", out.stdout);
    assert!(
        !shm_objects().contains(&left[0]),
        "/dev/shm/{} left behind",
        left[0]
    );
}

#[test]
fn panicking_pe_fails_the_job() {
    let out = probe(2, &["panic", "0"]).run();
    assert_eq!(out.code(), 101, "{out:?}");
    assert_stderr_has(&out, "oshrun: PE 0 exited with status 101");
    assert_all_gone(&pids(&out));
}

#[test]
fn exit_without_finalize_is_abnormal() {
    let out = probe(3, &["no-finalize", "1"]).run();
    assert_eq!(out.code(), 1, "{out:?}");
    assert_stderr_has(&out, "oshrun: PE 1 exited without calling shmem_finalize");
    assert_all_gone(&pids(&out));
}

#[test]
fn shm_leftovers_of_the_job_are_removed() {
    let decoy = "/dev/shm/rshmem-launcher-test-decoy";
    std::fs::write(decoy, b"x").unwrap();
    let out = probe(2, &["shm"]).run();
    out.assert_ok();
    let made = out.lines_with("shm rank=");
    assert_eq!(made.len(), 4, "{}", out.stdout);
    for m in &made {
        let name = m.split_once(' ').unwrap().1;
        assert!(
            !std::path::Path::new(&format!("/dev/shm/{name}")).exists(),
            "{name} left behind"
        );
    }
    assert!(
        std::path::Path::new(decoy).exists(),
        "removed another job's object"
    );
    std::fs::remove_file(decoy).unwrap();
}

#[test]
fn sigterm_is_forwarded_to_pes() {
    let job = probe(3, &["sleep", "30"]);
    let mut cmd = job.command();
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut pids = Vec::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let start = Instant::now();
    while pids.len() < 3 {
        let mut l = String::new();
        assert!(out.read_line(&mut l).unwrap() > 0, "oshrun ended early");
        if let Some(p) = l.trim().split_once(" pid=") {
            pids.push(p.1.parse::<u32>().unwrap());
        }
        assert!(start.elapsed() < T);
    }
    let signalled = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if signalled.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("oshrun did not end after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.code(), Some(128 + 15));
    assert!(signalled.elapsed() < Duration::from_secs(2));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("caught SIGTERM"), "{err}");
    for p in pids {
        assert!(!alive(p), "PE pid {p} survived");
    }
}

#[test]
fn pes_ignoring_sigterm_are_killed() {
    let mut cmd = Command::new(bin("oshrun"));
    cmd.args(["--timeout", "0.3", "-np", "2", "sh", "-c"])
        .arg("trap '' TERM; echo pid rank=$PMI_RANK pid=$$; exec sleep 30");
    let out = run_bounded(cmd, None, T);
    assert_eq!(out.code(), 124, "{out:?}");
    assert_stderr_has(&out, "timed out");
    assert!(out.elapsed < Duration::from_secs(3), "{:?}", out.elapsed);
    let p = pids(&out);
    assert_eq!(p.len(), 2, "{out:?}");
    assert_all_gone(&p);
}

#[test]
fn timeout_kills_the_job() {
    let out = probe(2, &["sleep", "30"])
        .launcher_args(["--timeout", "1"])
        .run();
    assert_eq!(out.code(), 124, "{out:?}");
    assert_stderr_has(&out, "oshrun: job timed out after 1 s");
    assert!(out.elapsed < Duration::from_secs(4), "{:?}", out.elapsed);
    assert_all_gone(&pids(&out));
}

#[test]
fn bad_program_path_is_reported() {
    let mut cmd = Command::new(bin("oshrun"));
    cmd.args(["-np", "2", "/nonexistent/dir/prog"]);
    let out = run_bounded(cmd, None, T);
    assert_eq!(out.code(), 127, "{out:?}");
    assert_stderr_has(&out, "/nonexistent/dir/prog");
    assert!(out.elapsed < Duration::from_secs(2));
}

#[test]
fn usage_errors() {
    for args in [
        &["--bogus", "-np", "2", "true"][..],
        &["-np", "2"],
        &["true"],
        &["-np", "0", "true"],
    ] {
        let mut cmd = Command::new(bin("oshrun"));
        cmd.args(args);
        let out = run_bounded(cmd, None, T);
        assert_eq!(out.code(), 2, "{args:?}: {out:?}");
        assert!(
            out.stderr.contains("Usage: oshrun") || out.stderr.contains("invalid value"),
            "{args:?}: {}",
            out.stderr
        );
    }
    let mut cmd = Command::new(bin("oshrun"));
    cmd.arg("--help");
    let out = run_bounded(cmd, None, T);
    out.assert_ok();
    assert!(out.stdout.contains("--tag-output") && out.stdout.contains("--timeout"));
    let mut cmd = Command::new(bin("oshrun"));
    cmd.arg("-V");
    let out = run_bounded(cmd, None, T);
    out.assert_ok();
    assert!(out.stdout.starts_with("oshrun "));
}

#[test]
fn singleton_without_launcher() {
    let mut cmd = Command::new(bin("pmi_probe"));
    cmd.arg("kvs").env_remove("PMI_FD").env_remove("PMI_PORT");
    let out = run_bounded(cmd, None, T);
    out.assert_ok();
    let l = out.lines_with("ok kvs rank=0 size=1 sum=0 job=");
    assert_eq!(l.len(), 1, "{}", out.stdout);
    assert!(l[0].starts_with("single-"), "{}", l[0]);
}

#[test]
fn trivial_job_starts_fast() {
    // Warm the page cache, then time a trivial 4-PE job (a loose bound: CI machines vary).
    probe(4, &["info"]).run().assert_ok();
    let out = probe(4, &["info"]).run();
    out.assert_ok();
    assert!(out.elapsed < Duration::from_secs(1), "{:?}", out.elapsed);
}

fn modes(np: usize, args: &[&str]) -> Job {
    Job::new(np, "launch_modes")
        .args(args.iter().copied())
        .timeout(T)
}

#[test]
fn global_exit_status_never_becomes_success() {
    // A status whose low byte is 0 would read as success after the OS truncates it.
    for (status, want) in [
        (256, 255),
        (512, 255),
        (-256, 255),
        (-1, 255),
        (257, 1),
        (3, 3),
    ] {
        let out = Job::new(2, "api_failure")
            .args(["exit".to_owned(), status.to_string()])
            .timeout(T)
            .run();
        assert_eq!(out.code(), want, "global_exit({status}): {out:?}");
        assert_stderr_has(&out, &format!("oshrun: PE 1 called global_exit({status})"));
    }
}

#[test]
fn pe_exit_256_after_init_is_not_success() {
    // exit(256) reaches oshrun as status 0; the missing finalize still fails the job.
    let out = probe(2, &["exit", "256", "1"]).run();
    assert_eq!(out.code(), 1, "{out:?}");
    assert_stderr_has(&out, "oshrun: PE 1 exited without calling shmem_finalize");
    assert_all_gone(&pids(&out));
}

#[test]
fn pe_exiting_before_init_ends_the_job() {
    for np in [2, 3] {
        let out = modes(np, &["early-exit", "1"]).run();
        assert_eq!(out.code(), 1, "{out:?}");
        assert_stderr_has(
            &out,
            "oshrun: PE 1 exited (status 0) before shmem_init; \
             the other PEs wait for it in shmem_init",
        );
        assert!(!out.stdout.contains("passed init"), "{out:?}");
        // PE 1 and a PE that entered the barrier printed their pids; a third may have
        // been ended before it printed.
        let p = pids(&out);
        assert!(p.len() >= 2 && p.contains_key(&1), "{out:?}");
        assert_all_gone(&p);
    }
}

#[test]
fn pe_calling_exit_256_before_init_ends_the_job() {
    let out = modes(2, &["early-exit", "1", "256"]).run();
    assert_eq!(out.code(), 1, "{out:?}");
    assert_stderr_has(
        &out,
        "oshrun: PE 1 exited (status 0) before shmem_init; \
         the other PEs wait for it in shmem_init",
    );
}

#[test]
fn pe_closing_pmi_before_init_ends_the_job() {
    let out = modes(3, &["close-pmi", "1"]).run();
    assert_eq!(out.code(), 1, "{out:?}");
    assert_stderr_has(
        &out,
        "oshrun: PE 1 closed its PMI connection before shmem_init; \
         the other PEs wait for it in shmem_init",
    );
    assert_eq!(out.lines_with("closed rank="), ["1"]);
    assert!(!out.stdout.contains("survivor"), "{out:?}");
    assert!(!out.stdout.contains("passed init"), "{out:?}");
    let p = pids(&out);
    assert!(p.len() >= 2 && p.contains_key(&1), "{out:?}");
    assert_all_gone(&p);
}

#[test]
fn programs_that_never_init_may_end_at_any_time() {
    // Not SHMEM programs: nobody waits for anybody, so an early exit is no failure.
    let mut cmd = Command::new(bin("oshrun"));
    cmd.args(["-np", "3", "sh", "-c"])
        .arg("[ $PMI_RANK = 1 ] || sleep 0.3; echo done $PMI_RANK");
    let out = run_bounded(cmd, None, T);
    out.assert_ok();
    assert_eq!(out.lines_with("done ").len(), 3, "{out:?}");
    // A one-PE job whose PE never inits.
    modes(1, &["early-exit", "0"]).run().assert_ok();
}

#[test]
fn fatal_error_is_reported_once_with_a_summary() {
    let out = Job::new(2, "core_errors").args(["fatal"]).timeout(T).run();
    assert_eq!(out.code(), 1, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "rshmem: PE 1: shmem_putmem: argument pe: PE 2 is out of range (valid PEs are 0 to 1)",
            "oshrun: PE 1 aborted the job (status 1)",
        ],
        "{out:?}"
    );
}

#[test]
fn global_exit_is_reported_as_such() {
    let out = Job::new(2, "core_errors").args(["exit3"]).timeout(T).run();
    assert_eq!(out.code(), 3, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines, ["oshrun: PE 1 called global_exit(3)"], "{out:?}");
}

#[test]
fn program_started_by_a_pe_is_a_singleton() {
    let out = modes(2, &["spawn-child"]).run();
    out.assert_ok();
    for r in 0..2 {
        assert_eq!(
            out.lines_with(&format!("ok spawn-child pe={r} child=")),
            ["child npes=1 me=0"],
            "{out:?}"
        );
    }
}

/// Pids of the `sleep 300` processes the PEs of `launch_modes grandchild` left behind.
fn grandchildren(out: &JobOutput, np: usize) -> Vec<u32> {
    let g: Vec<u32> = out
        .lines_with("grandchild rank=")
        .iter()
        .map(|l| l.split_once(" pid=").expect("pid").1.parse().unwrap())
        .collect();
    assert_eq!(g.len(), 2 * np, "{out:?}");
    g
}

/// Asserts every pid is gone once oshrun has returned; kills survivors so a failing test
/// leaves nothing behind.
#[track_caller]
fn assert_grandchildren_gone(pids: &[u32], what: &str) {
    let survivors: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for p in &survivors {
        let _ = Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .status();
    }
    assert!(
        survivors.is_empty(),
        "{what}: processes {survivors:?} started by PEs outlived oshrun"
    );
}

#[test]
fn grandchildren_end_with_a_normal_job() {
    let out = modes(2, &["grandchild", "ok"]).run();
    let g = grandchildren(&out, 2);
    assert_grandchildren_gone(&g, "normal end");
    out.assert_ok();
}

#[test]
fn grandchildren_end_with_a_failed_job() {
    let out = modes(3, &["grandchild", "fail"]).run();
    let g = grandchildren(&out, 3);
    assert_grandchildren_gone(&g, "failure");
    assert_eq!(out.code(), 3, "{out:?}");
    assert_stderr_has(&out, "oshrun: PE 2 exited with status 3");
    assert_all_gone(&pids(&out));
}

#[test]
fn grandchildren_end_with_a_timed_out_job() {
    let out = modes(2, &["grandchild", "hang"])
        .launcher_args(["--timeout", "1"])
        .run();
    let g = grandchildren(&out, 2);
    assert_grandchildren_gone(&g, "timeout");
    assert_eq!(out.code(), 124, "{out:?}");
    assert_all_gone(&pids(&out));
}

#[test]
fn grandchildren_end_when_oshrun_is_terminated() {
    let mut cmd = modes(2, &["grandchild", "hang"]).command();
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let (mut pes, mut grand) = (0, Vec::new());
    let start = Instant::now();
    while pes < 2 {
        let mut l = String::new();
        assert!(out.read_line(&mut l).unwrap() > 0, "oshrun ended early");
        if let Some((_, p)) = l.trim().split_once(" pid=") {
            if l.starts_with("grandchild ") {
                grand.push(p.parse::<u32>().unwrap());
            } else {
                pes += 1;
            }
        }
        assert!(start.elapsed() < T, "PEs did not start");
    }
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > T {
            let _ = child.kill();
            panic!("oshrun did not end after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(grand.len(), 4);
    assert_grandchildren_gone(&grand, "SIGTERM");
    assert_eq!(status.code(), Some(128 + 15));
}
