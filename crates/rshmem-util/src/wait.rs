//! The waiting policy of every wait in rshmem (waits, barriers, locks, quiet, requests).
//!
//! A wait goes through three phases, measured in time since it started:
//! 1. **spin** with `spin_loop` hints for [`Policy::spin`]: the answer usually comes
//!    from a PE running on another core within a few microseconds, and giving the core
//!    away costs a time slice on a busy machine;
//! 2. **yield** (`sched_yield`) until [`Policy::spin`] + [`Policy::yield_for`]: PEs of
//!    this job that share a core (more PEs than cores) get to run. With PEs on cores of
//!    their own, a yield that took longer than [`SLOW_YIELD`] (other programs in this
//!    PE's scheduling group: the yield gave one of them a whole time slice) makes the
//!    yield phase of every wait spin instead for [`SPIN_INSTEAD_FOR`]. Only a PE bound to
//!    one CPU does so: an unbound one may share a core with the very peer it waits for
//!    (the scheduler packs a job's PEs onto one core when another program's session holds
//!    the other), and spinning there costs that peer a whole time slice per wait;
//! 3. **sleep** in naps of a sixteenth of the time waited so far (at least
//!    [`NAP_MIN`], at most [`NAP_MAX`]): a long wait gives its core to whoever can use it
//!    (the copy engine, a PE that computes, another process) and adds at most about 6%
//!    to its own length.
//!
//! Spinning costs no clock reads for the first [`SPIN_UNTIMED`] checks (a wait that ends
//! within a few hundred nanoseconds is what it always was); after that a check reads the
//! clock (a vDSO call of about 20 ns) once every [`CLOCK_EVERY`] spins and at every yield
//! or nap. `rshmem-bench wait` measures the policy idle and under background load.
//!
//! A wait that has gone on for [`OVERDUE_AFTER`] may be waiting for a PE that will never
//! come (it finalized, or failed): [`Waiter::overdue`] tells the runtime when to look.

use std::hint::spin_loop;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a wait spins, then yields, before it sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Time spent spinning before the first yield.
    pub spin: Duration,
    /// Time spent yielding after the spin, before the first nap.
    pub yield_for: Duration,
}

impl Policy {
    /// The default with PEs on their own cores: spin long enough to cover a peer's answer
    /// when both run, a short yield phase, then sleep (`rshmem-bench wait` figures in
    /// docs/decisions/0036-waiting-policy.md).
    pub const DEDICATED: Policy = Policy {
        spin: Duration::from_micros(5),
        yield_for: Duration::from_millis(2),
    };
    /// The default with more PEs of the job than cores on the machine: a PE that spins only
    /// delays the one that would answer, so yield at once, and sleep after a while.
    pub const OVERSUBSCRIBED: Policy = Policy {
        spin: Duration::ZERO,
        yield_for: Duration::from_millis(2),
    };
}

/// Spins that read no clock at the start of a wait.
pub const SPIN_UNTIMED: u32 = 16;
/// Spins between two clock readings after that.
pub const CLOCK_EVERY: u32 = 8;
/// `spin_loop` hints per spin (about 25 ns each on current x86 cores).
const HINTS_PER_SPIN: u32 = 2;
/// Shortest nap of the sleep phase (the kernel adds its timer slack, about 50 µs).
pub const NAP_MIN: Duration = Duration::from_micros(20);
/// Longest nap: bounds how late a long wait notices its condition.
pub const NAP_MAX: Duration = Duration::from_millis(2);
/// How long a wait runs before [`Waiter::overdue`] starts reporting it.
pub const OVERDUE_AFTER: Duration = Duration::from_millis(100);
/// Time between two overdue reports. By time, not by count of checks: a wait kept hot by
/// its peers (a PE that serves a network peer's gets from inside a barrier) reads the
/// clock at every check, so 32 checks (the rule before) could be 30 us; each report hands
/// the network back to the progress thread for the checks, and at that rate the thread
/// served most requests (a wake-up each: UCX TCP put + quiet 1.3-1.8x OSHMEM's).
pub const OVERDUE_PERIOD: Duration = Duration::from_millis(10);

/// A yield that took longer than this gave the core to another program for a whole
/// time slice: other runnable tasks share this PE's scheduling group (on Linux's EEVDF a
/// yield then costs about 4 ms under a load of 5 on 2 cores, against 0.5 us idle or with
/// the load in other sessions).
pub const SLOW_YIELD: Duration = Duration::from_micros(50);
/// After a slow yield, the yield phase of every wait spins instead for this long; then
/// one wait tries a yield again (at most one slice lost per period).
pub const SPIN_INSTEAD_FOR: Duration = Duration::from_millis(100);

static SPIN_NS: AtomicU64 = AtomicU64::new(5_000);
/// Whether this process may run on one CPU only (a launcher bound it to a core of its own),
/// read when the policy is set.
static BOUND: AtomicBool = AtomicBool::new(false);
/// Until when (nanoseconds since [`epoch`]) yields are known to be slow.
static SPIN_INSTEAD_UNTIL: AtomicU64 = AtomicU64::new(0);

/// The process's reference instant for [`SPIN_INSTEAD_UNTIL`].
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds from [`epoch`] to `t`.
fn since_epoch(t: Instant) -> u64 {
    as_ns(t.saturating_duration_since(epoch()))
}

/// Whether, at `now`, the yield phase spins instead (a slow yield was seen lately).
fn spin_instead(now: Instant) -> bool {
    since_epoch(now) < SPIN_INSTEAD_UNTIL.load(Ordering::Relaxed)
}

/// Records a yield made at `at` that took `took`. A slow yield counts only when no other
/// thread of this process is runnable: then the slice went to another program, and
/// spinning keeps the core from it; a thread of ours (a user thread, the copy engine)
/// may be what the wait is for. The threads are looked at once per [`SPIN_INSTEAD_FOR`]
/// at most: while a thread of ours keeps every yield slow, each yield would pay the
/// look again.
fn note_yield(at: Instant, took: Duration) {
    if took <= SLOW_YIELD {
        return;
    }
    let now = since_epoch(at);
    if now < NEXT_THREAD_LOOK.load(Ordering::Relaxed) {
        return;
    }
    NEXT_THREAD_LOOK.store(
        now.saturating_add(as_ns(SPIN_INSTEAD_FOR)),
        Ordering::Relaxed,
    );
    if !other_threads_runnable() {
        spin_instead_from(at);
    }
}

/// Before when (nanoseconds since [`epoch`]) a slow yield does not look at the threads.
static NEXT_THREAD_LOOK: AtomicU64 = AtomicU64::new(0);

/// Makes yield phases spin for [`SPIN_INSTEAD_FOR`] from `at`.
/// (A later period never shortens one already set: threads of one PE may race here.)
fn spin_instead_from(at: Instant) {
    SPIN_INSTEAD_UNTIL.fetch_max(
        since_epoch(at).saturating_add(as_ns(SPIN_INSTEAD_FOR)),
        Ordering::Relaxed,
    );
}

/// Whether another thread of this process is running or runnable (state `R` in
/// `/proc/self/task/*/stat`). Read only after a slow yield, which has already cost
/// milliseconds; without /proc the answer is yes, which keeps yielding.
fn other_threads_runnable() -> bool {
    if cfg!(miri) {
        return true; // no /proc under Miri's isolation
    }
    let me = std::fs::read_link("/proc/thread-self")
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_os_string()));
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return true;
    };
    tasks.flatten().any(|t| {
        Some(t.file_name()) != me
            && std::fs::read_to_string(t.path().join("stat")).is_ok_and(|stat| {
                // The state follows the command name, which may hold ") ".
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('R'))
            })
    })
}

static YIELD_NS: AtomicU64 = AtomicU64::new(2_000_000);

/// Sets the policy of every wait started afterwards in this process.
pub fn set_policy(p: Policy) {
    SPIN_NS.store(as_ns(p.spin), Ordering::Relaxed);
    YIELD_NS.store(as_ns(p.yield_for), Ordering::Relaxed);
    BOUND.store(crate::cpus::allowed_count() == Some(1), Ordering::Relaxed);
}

/// The variable in which oshrun tells its PEs how many CPUs the job may use (its own
/// allowed set): a PE it bound to one core sees only that core in its own affinity.
pub const JOB_CPUS_VAR: &str = "OSHRUN_JOB_CPUS";

/// How many CPUs this machine's PEs of the job share: [`JOB_CPUS_VAR`] under oshrun,
/// else what this process may use (its affinity and CPU quota).
pub fn job_cpus() -> usize {
    crate::config::env_value(JOB_CPUS_VAR)
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |c| c.get()))
}

/// The policy in force.
pub fn policy() -> Policy {
    Policy {
        spin: Duration::from_nanos(SPIN_NS.load(Ordering::Relaxed)),
        yield_for: Duration::from_nanos(YIELD_NS.load(Ordering::Relaxed)),
    }
}

/// Sets the default policy for a host with or without more PEs than cores.
pub fn set_oversubscribed(oversubscribed: bool) {
    set_policy(if oversubscribed {
        Policy::OVERSUBSCRIBED
    } else {
        Policy::DEDICATED
    });
}

fn as_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One wait's backoff. Create one per wait; call [`Waiter::snooze`] each time the awaited
/// condition is found false.
#[derive(Debug)]
pub struct Waiter {
    /// Checks so far.
    checks: u32,
    /// When the wait started (read at the first clocked check).
    since: Option<Instant>,
    /// Time waited at the last clock reading.
    waited: Duration,
    /// Time waited at which [`Waiter::overdue`] next reports.
    next_report: Duration,
    /// Time waited when the phases last restarted ([`Waiter::keep_hot`]).
    hot_from: Duration,
}

impl Default for Waiter {
    fn default() -> Self {
        Waiter::new()
    }
}

impl Waiter {
    /// A fresh waiter.
    #[inline]
    pub fn new() -> Self {
        Waiter {
            checks: 0,
            since: None,
            waited: Duration::ZERO,
            next_report: OVERDUE_AFTER,
            hot_from: Duration::ZERO,
        }
    }

    /// Backs off once, as the policy says for the time waited so far.
    #[inline]
    pub fn snooze(&mut self) {
        self.snooze_with(std::thread::sleep);
    }

    /// [`Waiter::snooze`], sleeping (in the sleep phase) with `sleep(nap)` rather than a
    /// timed sleep: a wait that something else can end early (an event file descriptor
    /// that the network signals) blocks on it with the nap as its timeout.
    #[inline]
    pub fn snooze_with(&mut self, sleep: impl FnOnce(Duration)) {
        self.checks = self.checks.wrapping_add(1);
        if self.checks <= SPIN_UNTIMED && SPIN_NS.load(Ordering::Relaxed) != 0 {
            spin(1);
            return;
        }
        if let Some(nap) = self.snooze_timed() {
            sleep(nap);
        }
    }

    /// Restarts the spin and yield phases (not the overdue clock): the wait just saw work
    /// arrive (it served a peer's operation), so the answer it waits for is likely near and
    /// a nap now would delay it.
    #[inline]
    pub fn keep_hot(&mut self) {
        self.hot_from = self.waited;
    }

    /// The clocked part of [`Waiter::snooze`]: out of line, so a short wait inlines only
    /// the untimed spin. Returns the nap to take, in the sleep phase.
    #[inline(never)]
    fn snooze_timed(&mut self) -> Option<Duration> {
        let spin_ns = SPIN_NS.load(Ordering::Relaxed);
        let in_spin = self.waited.saturating_sub(self.hot_from).as_nanos() < u128::from(spin_ns);
        if in_spin && !self.checks.is_multiple_of(CLOCK_EVERY) {
            spin(HINTS_PER_SPIN);
            return None;
        }
        let now = Instant::now();
        let since = *self.since.get_or_insert(now);
        self.waited = now.duration_since(since);
        let waited = as_ns(self.waited.saturating_sub(self.hot_from));
        if waited < spin_ns {
            spin(HINTS_PER_SPIN);
        } else if waited < spin_ns.saturating_add(YIELD_NS.load(Ordering::Relaxed)) {
            // Only PEs bound to cores of their own spin instead: unbound, or with more PEs
            // than cores (spin 0), a yield is how the PE that would answer gets to run.
            let own_core = spin_ns != 0 && BOUND.load(Ordering::Relaxed);
            if own_core && spin_instead(now) {
                spin(HINTS_PER_SPIN);
            } else {
                std::thread::yield_now();
                if own_core {
                    note_yield(now, now.elapsed());
                }
            }
        } else {
            return Some((self.waited / 16).clamp(NAP_MIN, NAP_MAX));
        }
        None
    }

    /// Whether this wait has gone on for at least [`OVERDUE_AFTER`]: the moment to check
    /// whether what it waits for can still happen. True at most once every
    /// [`OVERDUE_PERIOD`] after that, so calling it before each [`Waiter::snooze`] costs
    /// a compare on the fast path.
    #[inline]
    pub fn overdue(&mut self) -> bool {
        if self.waited < self.next_report {
            return false;
        }
        self.next_report = self.waited + OVERDUE_PERIOD;
        true
    }

    /// How long this wait has lasted, as of its last clock reading (zero while it has
    /// read no clock).
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Waits until `ready()` is true.
    #[inline]
    pub fn wait_for(mut ready: impl FnMut() -> bool) {
        let mut w = Waiter::new();
        while !ready() {
            w.snooze();
        }
    }
}

#[inline(always)]
fn spin(hints: u32) {
    for _ in 0..hints {
        spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "reads /proc")]
    fn a_runnable_thread_of_ours_is_seen() {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        let busy = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                spin_loop();
            }
        });
        let seen = (0..1000).any(|_| other_threads_runnable());
        stop.store(true, Ordering::Relaxed);
        busy.join().unwrap();
        assert!(seen, "a spinning thread is runnable");
    }

    #[test]
    fn a_slow_yield_makes_yield_phases_spin_for_a_while() {
        // An hour ahead: after the epoch (set on first use, which may come after a plain
        // `now`, as under Miri's slow clock) and past any period another test's waits set.
        let t = epoch() + Duration::from_secs(3600);
        note_yield(t, Duration::from_micros(1));
        assert!(!spin_instead(t), "a fast yield changes nothing");
        spin_instead_from(t);
        assert!(spin_instead(t + Duration::from_millis(1)));
        assert!(spin_instead(
            t + SPIN_INSTEAD_FOR - Duration::from_millis(1)
        ));
        assert!(!spin_instead(
            t + SPIN_INSTEAD_FOR + Duration::from_millis(1)
        ));
        SPIN_INSTEAD_UNTIL.store(0, Ordering::Relaxed);
    }

    #[test]
    fn only_a_pe_bound_to_one_cpu_may_spin_instead_of_yielding() {
        set_policy(policy());
        let bound = crate::cpus::allowed_count() == Some(1);
        assert_eq!(BOUND.load(Ordering::Relaxed), bound);
    }

    #[test]
    fn job_cpus_prefers_what_oshrun_says() {
        // This process is no PE of oshrun's unless the variable is set.
        let n = job_cpus();
        match std::env::var(JOB_CPUS_VAR) {
            Ok(v) => assert_eq!(Some(n), v.trim().parse().ok()),
            Err(_) => assert!(n >= 1),
        }
    }

    #[test]
    fn waits_until_ready() {
        let mut n = 0;
        Waiter::wait_for(|| {
            n += 1;
            n > 100
        });
        assert_eq!(n, 101);
    }

    #[test]
    fn overdue_only_after_waiting_long_enough() {
        let mut w = Waiter::new();
        let start = Instant::now();
        let mut seen = false;
        while start.elapsed() < OVERDUE_AFTER * 20 {
            w.snooze();
            if w.overdue() {
                seen = true;
                break;
            }
        }
        assert!(seen);
        assert!(start.elapsed() >= OVERDUE_AFTER);
        assert!(w.waited() >= OVERDUE_AFTER);
        // Not again at once.
        assert!(!w.overdue());
    }

    #[test]
    fn overdue_reports_are_spaced_while_the_wait_is_kept_hot() {
        // By the waiter's own clock: under Miri, and on a loaded machine, the time between
        // two of its readings is not the test's to choose. The bound only stops a hang.
        let mut w = Waiter::new();
        let start = Instant::now();
        let mut reports = Vec::new();
        while reports.len() < 3 && start.elapsed() < Duration::from_secs(60) {
            w.keep_hot();
            w.snooze();
            if w.overdue() {
                reports.push(w.waited());
            }
        }
        assert_eq!(reports.len(), 3, "{reports:?}");
        assert!(reports[0] >= OVERDUE_AFTER, "{reports:?}");
        for p in reports.windows(2) {
            assert!(p[1] - p[0] >= OVERDUE_PERIOD, "{reports:?}");
        }
    }

    #[test]
    fn a_long_wait_sleeps() {
        // Past spin and yield, a check takes at least a nap.
        let mut w = Waiter::new();
        let start = Instant::now();
        let limit = policy().spin + policy().yield_for + Duration::from_millis(5);
        while start.elapsed() < limit {
            w.snooze();
        }
        let t = Instant::now();
        w.snooze();
        assert!(t.elapsed() >= NAP_MIN);
    }
}
