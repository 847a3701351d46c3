//! oshrun's process binding (`--bind-to`, `SHMEM_BIND_TO`), seen from inside the PEs:
//! each PE of `bind_probe` prints its own affinity and whether the runtime counts the
//! job as oversubscribed. Needs `oshrun` built (`cargo build -p oshrun`).

use std::collections::BTreeSet;
use std::time::Duration;

use rshmem_tests::{Job, JobOutput};

const T: Duration = Duration::from_secs(60);

/// One test of this file at a time: where a PE runs is what they check, and the test
/// harness would otherwise run their jobs side by side on the same CPUs.
fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The CPUs this test may run on, as oshrun will see them.
fn allowed() -> BTreeSet<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    cpu_set(list)
}

fn cpu_set(list: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    for part in list.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => {
                out.insert(part.parse().unwrap());
            }
        }
    }
    out
}

/// Cores among `cpus` (CPUs that share `core_cpus_list` are one core).
fn cores(cpus: &BTreeSet<usize>) -> usize {
    let mut seen: Vec<String> = Vec::new();
    for c in cpus {
        let sib = std::fs::read_to_string(format!(
            "/sys/devices/system/cpu/cpu{c}/topology/core_cpus_list"
        ))
        .unwrap_or_else(|_| c.to_string());
        if !seen.contains(&sib) {
            seen.push(sib);
        }
    }
    seen.len()
}

/// Runs `bind_probe` and returns each PE's CPUs and oversubscription, by PE.
fn probe(np: usize, launcher: &[&str], env: &[(&str, &str)]) -> Vec<(BTreeSet<usize>, bool)> {
    let mut job = Job::new(np, "bind_probe")
        .launcher_args(launcher.iter().copied())
        .timeout(T);
    for (k, v) in env {
        job = job.env(k, v);
    }
    let out = job.run();
    out.assert_all_ok(np, "bind_probe");
    parse(&out, np)
}

fn parse(out: &JobOutput, np: usize) -> Vec<(BTreeSet<usize>, bool)> {
    let mut by_pe = vec![None; np];
    for l in out.lines_with("affinity pe=") {
        let f: Vec<&str> = l.split_whitespace().collect();
        let pe: usize = f[0].parse().unwrap();
        let cpus = cpu_set(f[1].strip_prefix("cpus=").unwrap());
        let over = f[2] == "oversubscribed=true";
        by_pe[pe] = Some((cpus, over));
    }
    by_pe
        .into_iter()
        .map(|p| p.expect("every PE reports its affinity"))
        .collect()
}

/// By default, PEs that fit the cores get one core each, in order, and still count as
/// having cores of their own (not oversubscribed).
#[test]
fn pes_that_fit_get_a_core_each() {
    let _alone = alone();
    let all = allowed();
    let np = cores(&all).min(4);
    if np < 2 {
        eprintln!("skipped: fewer than 2 cores available");
        return;
    }
    for (launcher, env) in [
        (&[][..], &[("SHMEM_BIND_TO", "auto")][..]),
        (&["--bind-to", "core"][..], &[][..]),
    ] {
        let pes = probe(np, launcher, env);
        let mut used = BTreeSet::new();
        for (pe, (cpus, over)) in pes.iter().enumerate() {
            assert!(
                !cpus.is_empty() && cpus.is_subset(&all),
                "PE {pe}: {cpus:?}"
            );
            assert!(cpus.len() < all.len(), "PE {pe} is not bound: {cpus:?}");
            assert!(used.is_disjoint(cpus), "PE {pe} shares a core: {pes:?}");
            used.extend(cpus.iter().copied());
            assert!(
                !over,
                "PE {pe} of {np} on {} CPUs thinks it is oversubscribed",
                all.len()
            );
        }
        // PE 0 has the first core.
        assert!(pes[0].0.contains(all.first().unwrap()), "{pes:?}");
    }
}

/// `--bind-to hwthread`: one logical CPU each.
#[test]
fn hwthread_binding() {
    let _alone = alone();
    let all = allowed();
    if all.len() < 2 {
        return;
    }
    let pes = probe(2, &["--bind-to", "hwthread"], &[]);
    let first: Vec<usize> = all.iter().copied().take(2).collect();
    for (pe, (cpus, _)) in pes.iter().enumerate() {
        assert_eq!(cpus.iter().copied().collect::<Vec<_>>(), [first[pe]]);
    }
}

/// `--bind-to none` (or `SHMEM_BIND_TO=none`): every PE may run on all of oshrun's CPUs.
#[test]
fn bind_to_none_leaves_the_whole_set() {
    let _alone = alone();
    let all = allowed();
    let np = all.len().clamp(1, 2);
    for (launcher, env) in [
        (&["--bind-to", "none"][..], &[][..]),
        (&[][..], &[("SHMEM_BIND_TO", "none")][..]),
        // The command line wins over the environment.
        (&["--bind-to", "none"][..], &[("SHMEM_BIND_TO", "core")][..]),
    ] {
        for (pe, (cpus, over)) in probe(np, launcher, env).iter().enumerate() {
            assert_eq!(cpus, &all, "PE {pe} ({launcher:?} {env:?})");
            assert!(!over, "PE {pe}");
        }
    }
}

/// Unbound PEs that a launcher started on one CPU leave init on different CPUs, PE i on the
/// i-th of their CPUs, and keep all of them (a start, not a binding). In 7 jobs out of 8:
/// the scheduler may still move a PE between init's end and its report (once in 3 jobs
/// while this file's other tests ran beside it, hence `alone`). Left to the scheduler, PE i
/// was on the i-th CPU in 5 jobs of 20 one hour and 14 of 30 the next, which would pass
/// 3.5% of the time at worst; placed, in 30 jobs of 30 beside a busy loop.
#[test]
fn unbound_pes_leave_init_on_cpus_of_their_own() {
    let _alone = alone();
    let all: Vec<usize> = allowed().into_iter().collect();
    if all.len() < 2 {
        return;
    }
    let mut seen = Vec::new();
    for _ in 0..8 {
        let out = Job::new(2, "bind_probe")
            .launcher_args(["--bind-to", "none"])
            .args([format!("start-on={}", all[0])])
            .timeout(T)
            .run();
        out.assert_all_ok(2, "bind_probe");
        let mut cpus = [usize::MAX; 2];
        for l in out.lines_with("affinity pe=") {
            let f: Vec<&str> = l.split_whitespace().collect();
            let pe: usize = f[0].parse().unwrap();
            assert_eq!(
                cpu_set(f[1].strip_prefix("cpus=").unwrap()),
                allowed(),
                "{l}"
            );
            cpus[pe] = f[3].strip_prefix("cpu=").unwrap().parse().unwrap();
        }
        seen.push(cpus);
    }
    assert!(
        seen.iter().filter(|c| *c == &[all[0], all[1]]).count() >= 7,
        "PEs 0 and 1 should leave init on CPUs {} and {}: {seen:?}",
        all[0],
        all[1]
    );
}

/// More PEs than CPUs: not bound, and the runtime knows it is oversubscribed.
#[test]
fn oversubscribed_jobs_are_not_bound() {
    let _alone = alone();
    let all = allowed();
    for extra in [1, 2] {
        let np = all.len() + extra;
        if np > 8 {
            return;
        }
        for (pe, (cpus, over)) in probe(np, &[], &[("SHMEM_BIND_TO", "auto")])
            .iter()
            .enumerate()
        {
            assert_eq!(cpus, &all, "PE {pe} of {np}");
            assert!(over, "PE {pe} of {np} on {} CPUs", all.len());
        }
    }
}

/// Binding more PEs than cores on request is an error naming the option, before any PE
/// starts; a bad SHMEM_BIND_TO is named too. `--report-bindings` says where PEs run.
#[test]
fn bad_requests_and_reports() {
    let _alone = alone();
    let all = allowed();
    let np = all.len() + 1;
    let out = Job::new(np, "bind_probe")
        .launcher_args(["--bind-to", "core"])
        .timeout(T)
        .run();
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("--bind-to core"), "{}", out.stderr);
    assert!(out.stderr.contains("do not fit"), "{}", out.stderr);
    assert!(out.lines_with("affinity").is_empty(), "no PE started");

    let out = Job::new(1, "bind_probe")
        .env("SHMEM_BIND_TO", "socket")
        .timeout(T)
        .run();
    assert_eq!(out.code(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("SHMEM_BIND_TO"), "{}", out.stderr);

    let out = Job::new(1, "bind_probe")
        .launcher_args(["--report-bindings", "--bind-to", "hwthread"])
        .timeout(T)
        .run();
    out.assert_all_ok(1, "bind_probe");
    let first = all.first().unwrap();
    assert!(
        out.stderr
            .contains(&format!("oshrun: PE 0 bound to CPU(s) {first}")),
        "{}",
        out.stderr
    );
}
