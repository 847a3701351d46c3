//! The safe Rust API (`rshmem`) under oshrun at 1-4 PEs, through the `api_*` PE
//! programs: the examples' logic (hello, ring, lock counter, signal pipeline), errors
//! returned for bad arguments, collective drops, non-blocking scopes, point-to-point
//! waits, and failure modes.
use std::time::Duration;

use rshmem_tests::{Job, JobOutput};

const NPS: [usize; 4] = [1, 2, 3, 4];
const T: Duration = Duration::from_secs(60);

/// Runs `prog args` on `np` PEs; asserts exit 0 and one `ok <prog> pe=<me>` line per PE.
fn run_ok(np: usize, prog: &str, args: &[&str]) -> JobOutput {
    let out = Job::new(np, prog)
        .args(args.iter().copied())
        .timeout(T)
        .run();
    out.assert_ok();
    let mut pes: Vec<usize> = out
        .lines_with(&format!("ok {prog} pe="))
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
    assert!(
        !out.stderr.contains("panicked"),
        "{prog} on {np} PEs panicked:\n{}",
        out.stderr
    );
    out
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn hello_1_to_4_pes() {
    for np in NPS {
        let out = run_ok(np, "api_hello", &[]);
        let want: Vec<String> = (0..np).map(|p| format!("{p} n={np}")).collect();
        assert_eq!(sorted(out.lines_with("hello pe=")), want);
    }
}

#[test]
fn ring_exchange_wraps_around() {
    for np in NPS {
        let out = run_ok(np, "api_ring", &["100"]);
        let mut lines = out.lines_with("ring pe=");
        lines.sort_by_key(|l| l.split(' ').next().unwrap().parse::<usize>().unwrap());
        for (me, l) in lines.iter().enumerate() {
            let left = (me + np - 1) % np;
            let sum: u64 = (0..100).map(|i| left as u64 * 1_000_000 + i).sum();
            assert_eq!(l, &format!("{me} from={left} sum={sum}"));
        }
        assert_eq!(lines.len(), np);
    }
}

#[test]
fn lock_counter_loses_no_increment() {
    for np in NPS {
        let out = run_ok(np, "api_lock_counter", &["150"]);
        let total = 150 * np;
        assert_eq!(
            out.lines_with("counter total="),
            [format!("{total} atomic={total}")]
        );
    }
}

#[test]
fn signal_pipeline_delivers_data_before_signal() {
    for np in NPS {
        let out = run_ok(np, "api_signal_pipeline", &["40", "257"]);
        let receivers: Vec<String> = if np == 1 {
            vec!["0 chunks=40".into()]
        } else {
            (1..np).map(|p| format!("{p} chunks=40")).collect()
        };
        assert_eq!(sorted(out.lines_with("pipeline pe=")), receivers);
    }
}

#[test]
fn bad_arguments_return_errors() {
    for np in NPS {
        let out = run_ok(np, "api_errors", &[]);
        // Every PE reported every case (the program asserts the variants).
        let cases = out.lines_with("err ").len();
        assert_eq!(cases % np, 0);
        assert!(cases / np >= 20, "{}", out.stdout);
        assert!(out.stdout.contains(&format!(
            "err put to PE n: shmem_put: PE {np} is out of range (valid PEs are 0 to {})",
            np - 1
        )));
        assert!(out.stdout.contains(
            "err put past end: shmem_put: argument dest: elements 5..9 are out of bounds for length 8"
        ));
    }
}

#[test]
fn collective_drops_in_the_same_order_work() {
    for np in NPS {
        let out = run_ok(np, "api_alloc", &["12"]);
        for l in out.lines_with("alloc pe=") {
            let (_, rest) = l.split_once(" free_before=").unwrap();
            let (b, a) = rest.split_once(" free_after=").unwrap();
            assert_eq!(b, a, "heap not returned: {l}");
        }
    }
}

#[test]
fn nbi_scope_completes_operations() {
    for np in NPS {
        run_ok(np, "api_nbi", &["5000", "8"]);
    }
}

#[test]
fn point_to_point_waits() {
    for np in NPS {
        run_ok(np, "api_p2p", &[]);
    }
}

/// Issue 26: a wait whose writer finalized, or died (fault-tolerant mode), returns the
/// error from `wait_until` and `signal_wait_until` instead of panicking.
#[test]
fn waits_return_their_errors() {
    for (mode, np, env, want) in [
        ("finalized", 2, None, "no PE can change any more"),
        (
            "killed",
            3,
            Some(("SHMEM_FAULT_TOLERANT", "1")),
            "PE 2 failed",
        ),
    ] {
        let mut job = Job::new(np, "api_p2p")
            .args([mode])
            .timeout(Duration::from_secs(30));
        if let Some((k, v)) = env {
            job = job.env(k, v).env("SHMEM_TRANSPORT", "shm");
        }
        let out = job.run();
        assert!(out.status.is_some(), "{mode}: hung: {out:?}");
        assert!(!out.stderr.contains("panicked"), "{mode}: {out:?}");
        let errs = out.lines_with("err ");
        assert_eq!(errs.len(), 2 * (np - 1), "{mode}: {out:?}");
        assert!(errs.iter().all(|e| e.contains(want)), "{mode}: {errs:?}");
        assert!(
            errs.iter().any(|e| e.starts_with("shmem_wait_until: "))
                && errs
                    .iter()
                    .any(|e| e.starts_with("shmem_signal_wait_until: ")),
            "{mode}: {errs:?}"
        );
        match mode {
            "finalized" => {
                out.assert_ok();
            }
            _ => assert_eq!(out.code(), 137, "{mode}: {out:?}"),
        };
    }
}

/// Runs an `api_failure` mode on `np` PEs, which must end well within its bound.
fn failure(np: usize, args: &[&str]) -> JobOutput {
    let out = Job::new(np, "api_failure")
        .args(args.iter().copied())
        .timeout(Duration::from_secs(30))
        .run();
    assert!(
        out.elapsed < Duration::from_secs(15),
        "{args:?} on {np} PEs took {:?}",
        out.elapsed
    );
    out
}

#[test]
fn panic_ends_the_job_without_hanging() {
    for np in NPS {
        let out = failure(np, &["panic"]);
        assert_ne!(out.code(), 0, "{}", out.stderr);
        assert!(
            out.stderr.contains("deliberate panic"),
            "stderr: {}",
            out.stderr
        );
        assert!(!out.stdout.contains("after-barrier"), "{}", out.stdout);
    }
}

#[test]
fn global_exit_status_reaches_the_launcher() {
    for np in NPS {
        let out = failure(np, &["exit", "7"]);
        assert_eq!(out.code(), 7, "{}", out.stderr);
        assert!(!out.stdout.contains("after-barrier"), "{}", out.stdout);
    }
}

#[test]
fn error_returned_from_main_fails_the_job() {
    for np in NPS {
        let out = failure(np, &["err"]);
        assert_eq!(out.code(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("PeOutOfRange"), "{}", out.stderr);
    }
}
