//! Process supervision: starts the PEs, watches them, ends the job on the first failure.

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rshmem_util::wait::JOB_CPUS_VAR;
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGKILL, SIGPIPE, SIGTERM};
use signal_hook::iterator::Signals;

use crate::bind::{self, BindTo, Plan};
use crate::output::{self, report, Sink};
use crate::pmi::{PmiEvent, Server};
use crate::sys::{self, signal_name};

/// Exit status when the program cannot be started (as shells use).
pub const EXIT_NOT_EXECUTABLE: i32 = 127;
/// Exit status after `--timeout` fired (as timeout(1) uses).
pub const EXIT_TIMEOUT: i32 = 124;

/// How long after a PE's exit we wait for its PMI socket to close while a process it
/// started keeps the socket open (with nothing in it): only then is the exit judged by a
/// timer. Otherwise a PE is judged once its socket has been read to the end, so a
/// `finalize` or `abort` it sent before exiting is always known, however long a loaded
/// host keeps the reader from running.
const PMI_DRAIN: Duration = Duration::from_secs(2);
/// Grace between SIGTERM and SIGKILL after `shmem_global_exit`.
const GRACE_ABORT: Duration = Duration::from_millis(250);
/// Grace between SIGTERM and SIGKILL after a PE failed.
const GRACE_FAILURE: Duration = Duration::from_millis(500);
/// Grace after a signal forwarded from the user, or a timeout.
const GRACE_SIGNAL: Duration = Duration::from_secs(1);
/// How long to wait for the PEs' output to drain once all PEs are gone (a PE's own
/// children may keep the pipes open).
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);
/// Grace between SIGTERM and SIGKILL for processes the PEs left behind, once the PEs are
/// gone.
const GRACE_LEFTOVERS: Duration = Duration::from_millis(250);
/// Least time between two reaps of the processes the PEs left behind, while the job runs.
const LEFTOVER_REAP_PERIOD: Duration = Duration::from_secs(1);
/// Fallback polling period, in case a SIGCHLD is coalesced or lost.
const TICK: Duration = Duration::from_millis(100);

/// What to run.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// Number of PEs.
    pub np: usize,
    /// Program path (looked up in `PATH` when it has no `/`).
    pub program: OsString,
    /// Program arguments.
    pub args: Vec<OsString>,
    /// Prefix output lines with `[rank] `.
    pub tag_output: bool,
    /// Kill the job after this long.
    pub timeout: Option<Duration>,
    /// Test hook (`--test-slow-pmi`): the PMI reader pauses this long after reading an
    /// `abort`, as on a host too loaded to run it.
    pub slow_pmi: Duration,
    /// `SHMEM_FAULT_TOLERANT=1`: a PE that dies (a signal, or an exit without finalize)
    /// does not end the job; the others run on, and the exit status says it failed.
    pub fault_tolerant: bool,
    /// Where the PEs run (`--bind-to`, `SHMEM_BIND_TO`).
    pub bind: BindTo,
    /// Print the binding before the job starts (`--report-bindings`, `SHMEM_INFO=1`).
    pub report_bindings: bool,
}

/// Whether `SHMEM_FAULT_TOLERANT` (or `SMA_FAULT_TOLERANT`) asks for fault-tolerant
/// mode, with the spellings the PEs accept (1/yes/true/on).
pub fn fault_tolerant_from_env() -> bool {
    flag_from_env("FAULT_TOLERANT")
}

/// Whether `SHMEM_INFO` (or `SMA_INFO`) asks for the configuration to be printed.
pub fn info_from_env() -> bool {
    flag_from_env("INFO")
}

/// Whether the table's flag `row` says yes, as the PEs read flags.
fn flag_from_env(row: &str) -> bool {
    rshmem_util::config::env_value(row).is_some_and(|(_, v)| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "y" | "yes" | "true" | "on"
        )
    })
}

/// A job-unique name: `rshmem-<oshrun pid>-<nanoseconds since the epoch, hex>`.
pub fn new_kvsname() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("rshmem-{}-{nanos:x}", std::process::id())
}

enum Event {
    Signal(i32),
    Pmi(usize, PmiEvent),
    OutputBroken,
}

/// Why the job is being ended; the first one wins and decides the exit status.
#[derive(Debug)]
enum Failure {
    Abort {
        rank: usize,
        code: i32,
        msg: Option<String>,
    },
    Signaled {
        rank: usize,
        pid: u32,
        sig: i32,
    },
    Exited {
        rank: usize,
        code: i32,
    },
    NoFinalize {
        rank: usize,
    },
    /// Left (exited with `status`, or closed its PMI connection while running: `None`)
    /// before `shmem_init` while others wait for it in a PMI barrier.
    LeftBeforeInit {
        rank: usize,
        status: Option<i32>,
    },
    /// Closed its PMI connection after init while still running, and others wait for it.
    ClosedPmi {
        rank: usize,
    },
    /// Finalized and left while others wait for it in a PMI barrier.
    LeftBarrier {
        rank: usize,
    },
    Interrupted(i32),
    Timeout(Duration),
    OutputBroken,
}

impl Failure {
    fn exit_code(&self) -> i32 {
        match *self {
            Failure::Abort { code, .. } => rshmem_boot::exit_status(code),
            Failure::Exited { code, .. } => code,
            Failure::Signaled { sig, .. } | Failure::Interrupted(sig) => 128 + sig,
            Failure::NoFinalize { .. }
            | Failure::LeftBeforeInit { .. }
            | Failure::ClosedPmi { .. }
            | Failure::LeftBarrier { .. } => 1,
            Failure::Timeout(_) => EXIT_TIMEOUT,
            Failure::OutputBroken => 128 + SIGPIPE,
        }
    }

    fn message(&self) -> String {
        match self {
            Failure::Abort {
                rank,
                code,
                msg: None,
            } => {
                let status = self.exit_code();
                if status == *code {
                    format!("PE {rank} called global_exit({code})")
                } else {
                    format!(
                        "PE {rank} called global_exit({code}); the job exits with status {status}"
                    )
                }
            }
            Failure::Abort { rank, .. } => {
                format!("PE {rank} aborted the job (status {})", self.exit_code())
            }
            Failure::Signaled { rank, pid, sig } => format!(
                "PE {rank} (pid {pid}) was killed by signal {sig} ({})",
                signal_name(*sig)
            ),
            Failure::Exited { rank, code } => format!("PE {rank} exited with status {code}"),
            Failure::NoFinalize { rank } => {
                format!("PE {rank} exited without calling shmem_finalize")
            }
            Failure::LeftBeforeInit { rank, status } => {
                let what = match status {
                    Some(s) => format!("exited (status {s})"),
                    None => "closed its PMI connection".to_owned(),
                };
                format!(
                    "PE {rank} {what} before shmem_init; the other PEs wait for it in shmem_init"
                )
            }
            Failure::ClosedPmi { rank } => format!(
                "PE {rank} closed its PMI connection without calling shmem_finalize; \
                 the other PEs wait for it"
            ),
            Failure::LeftBarrier { rank } => format!(
                "PE {rank} finalized and left while the other PEs wait for it in a PMI barrier"
            ),
            Failure::Interrupted(sig) => {
                format!("caught {}, terminating the job", signal_name(*sig))
            }
            Failure::Timeout(t) => format!("job timed out after {} s", t.as_secs_f64()),
            Failure::OutputBroken => "output closed, terminating the job".to_owned(),
        }
    }

    /// The PE's own report that comes before the summary (a fatal error's message).
    fn detail(&self) -> Option<&str> {
        match self {
            Failure::Abort { msg: Some(m), .. } => Some(m),
            _ => None,
        }
    }

    /// Whether this is one PE's death, which fault-tolerant mode survives.
    fn is_pe_death(&self) -> bool {
        matches!(
            self,
            Failure::Signaled { .. } | Failure::Exited { .. } | Failure::NoFinalize { .. }
        )
    }

    /// The PE a death names.
    fn rank(&self) -> Option<usize> {
        match *self {
            Failure::Signaled { rank, .. }
            | Failure::Exited { rank, .. }
            | Failure::NoFinalize { rank } => Some(rank),
            _ => None,
        }
    }

    /// The signal sent to the remaining PEs, and how long they get before SIGKILL.
    fn termination(&self) -> (i32, Duration) {
        match *self {
            Failure::Abort { .. } => (SIGTERM, GRACE_ABORT),
            Failure::Interrupted(sig) => (sig, GRACE_SIGNAL),
            Failure::Timeout(_) => (SIGTERM, GRACE_SIGNAL),
            _ => (SIGTERM, GRACE_FAILURE),
        }
    }
}

#[derive(Debug)]
struct Pe {
    rank: usize,
    pid: u32,
    child: Child,
    status: Option<ExitStatus>,
    exited_at: Option<Instant>,
    /// Whether another PE was still running when this one was reaped.
    others_running: bool,
    judged: bool,
    inited: bool,
    finalized: bool,
    pmi_closed: bool,
    /// Whether its `abort` came (held back or recorded).
    aborted: bool,
    /// oshrun's end of the PE's PMI socket (the reader thread owns another handle), to
    /// look whether anything holds the other end open.
    pmi: UnixStream,
}

/// The running PEs; dropping it kills and reaps whatever is left, so no exit path (a
/// panic included) leaves orphans.
#[derive(Debug, Default)]
struct Pes(Vec<Pe>);

impl Pes {
    fn signal_all(&self, sig: i32) {
        for pe in self.0.iter().filter(|p| p.status.is_none()) {
            // The child is unreaped, so its pid is still ours; ESRCH-like races are harmless.
            let _ = sys::send_signal(pe.pid, sig);
        }
    }

    /// Reaps every PE that has exited.
    fn reap(&mut self) {
        let now = Instant::now();
        for i in 0..self.0.len() {
            if self.0[i].status.is_some() {
                continue;
            }
            if let Ok(Some(st)) = self.0[i].child.try_wait() {
                let others = self
                    .0
                    .iter()
                    .enumerate()
                    .any(|(j, p)| j != i && p.status.is_none());
                let pe = &mut self.0[i];
                pe.status = Some(st);
                pe.exited_at = Some(now);
                pe.others_running = others;
            }
        }
    }
}

impl Drop for Pes {
    fn drop(&mut self) {
        for pe in self.0.iter_mut().filter(|p| p.status.is_none()) {
            let _ = pe.child.kill();
            let _ = pe.child.wait();
        }
    }
}

/// Runs the job to its end and returns oshrun's exit status.
pub fn run(spec: &JobSpec) -> i32 {
    let (tx, rx) = mpsc::channel::<Event>();
    // Handlers go in before any child exists, so no SIGCHLD or SIGINT is missed.
    let mut signals = match Signals::new([SIGCHLD, SIGINT, SIGTERM, SIGHUP]) {
        Ok(s) => s,
        Err(e) => {
            report(&format!("cannot install signal handlers: {e}"));
            return 1;
        }
    };
    let sig_tx = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for s in signals.forever() {
                if sig_tx.send(Event::Signal(s)).is_err() {
                    break;
                }
            }
        });
    if let Err(e) = spawned {
        report(&format!("cannot start a thread: {e}"));
        return 1;
    }

    // Before any child exists, so every process the PEs leave behind is adopted by us.
    let _ = sys::become_subreaper();

    let kvsname = new_kvsname();
    let pmi_tx = tx.clone();
    let server = Server::new(&kvsname, spec.np, move |rank, ev| {
        let _ = pmi_tx.send(Event::Pmi(rank, ev));
    })
    .with_abort_delay(spec.slow_pmi);

    let plan = match binding(spec) {
        Ok(p) => p,
        Err(e) => {
            report(&e);
            return 1;
        }
    };
    let mut pes = Pes::default();
    let mut outputs = Vec::new();
    for rank in 0..spec.np {
        match start_pe(spec, rank, &server, &tx, &plan) {
            Ok((pe, outs)) => {
                pes.0.push(pe);
                outputs.extend(outs);
            }
            Err(code) => {
                drop(pes);
                end_leftovers();
                shm_cleanup(&kvsname);
                return code;
            }
        }
    }

    let code = supervise(spec, &mut pes, &rx);
    debug_assert!(pes.0.iter().all(|p| p.status.is_some()));
    drop(pes);
    // Also lets the output drain: leftovers may hold the PEs' pipes.
    end_leftovers();
    let drain_until = Instant::now() + OUTPUT_DRAIN;
    for h in outputs {
        while !h.is_finished() && Instant::now() < drain_until {
            std::thread::sleep(Duration::from_millis(1));
        }
        if h.is_finished() {
            let _ = h.join();
        }
    }
    shm_cleanup(&kvsname);
    code
}

/// Decides where the PEs run, among the CPUs oshrun may use, and reports it if asked.
fn binding(spec: &JobSpec) -> Result<Plan, String> {
    let allowed =
        bind::allowed_cpus().map_err(|e| format!("cannot read the CPUs oshrun may use: {e}"))?;
    let plan = bind::plan(spec.bind, spec.np, &allowed, &bind::cores_of(&allowed))?;
    if spec.report_bindings {
        report(&plan.summary(spec.np));
        for (rank, cpus) in plan.cpus.iter().enumerate() {
            report(&format!(
                "PE {rank} bound to CPU(s) {}",
                bind::cpu_list(cpus)
            ));
        }
    }
    Ok(plan)
}

/// Ends the processes the PEs left behind (adopted by oshrun, see `become_subreaper`):
/// SIGTERM, SIGKILL after a grace, until none is left. Runs once every PE is reaped, so
/// every child of oshrun is such a leftover (or a descendant of one, adopted in turn).
fn end_leftovers() {
    let start = Instant::now();
    let mut termed: Vec<u32> = Vec::new();
    loop {
        let live: Vec<u32> = sys::children()
            .into_iter()
            .filter(|&p| !sys::try_reap(p))
            .collect();
        if live.is_empty() {
            return;
        }
        let late = start.elapsed() >= GRACE_LEFTOVERS;
        for p in live {
            // `p` is our unreaped child, so the number is still its own.
            if late {
                let _ = sys::send_signal(p, SIGKILL);
            } else if !termed.contains(&p) {
                let _ = sys::send_signal(p, SIGTERM);
                termed.push(p);
            }
        }
        if start.elapsed() > GRACE_LEFTOVERS + Duration::from_secs(5) {
            report("some processes started by the PEs could not be ended");
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn shm_cleanup(kvsname: &str) {
    crate::shm::cleanup(Path::new("/dev/shm"), kvsname);
}

/// Starts PE `rank` with its PMI socket and output forwarders; on error reports it and
/// returns the exit status for oshrun.
fn start_pe(
    spec: &JobSpec,
    rank: usize,
    server: &Server,
    tx: &Sender<Event>,
    plan: &Plan,
) -> Result<(Pe, Vec<JoinHandle<()>>), i32> {
    let fail = |what: &str, e: std::io::Error| {
        report(&format!("{what}: {e}"));
        1
    };
    let (ours, theirs) = UnixStream::pair().map_err(|e| fail("cannot create a socket", e))?;
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_remove("PMI_PORT")
        .env_remove("PMI_ID")
        .env("PMI_FD", fd.to_string())
        .env("PMI_RANK", rank.to_string())
        .env("PMI_SIZE", spec.np.to_string())
        .env("MPI_LOCALRANKID", rank.to_string())
        .env("MPI_LOCALNRANKS", spec.np.to_string())
        .env("OSHRUN_JOBID", server.kvsname())
        .env(JOB_CPUS_VAR, plan.allowed.len().to_string())
        .stdin(if rank == 0 {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    sys::inherit_fd_and_die_with_parent(&mut cmd, fd);
    if let Some(cpus) = plan.cpus_of(rank) {
        sys::bind_child(&mut cmd, cpus);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            report(&format!(
                "cannot execute {:?}: {e}",
                spec.program.to_string_lossy()
            ));
            return Err(EXIT_NOT_EXECUTABLE);
        }
    };
    // Only the child may hold its end: our copy would hide the PE's exit from the server.
    drop(theirs);
    let pe_stdout = child.stdout.take();
    let pe_stderr = child.stderr.take();
    let pmi = match ours.try_clone() {
        Ok(s) => s,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail("cannot serve PMI", e));
        }
    };
    let pe = Pe {
        pmi,
        rank,
        pid: child.id(),
        child,
        status: None,
        exited_at: None,
        others_running: false,
        judged: false,
        inited: false,
        finalized: false,
        pmi_closed: false,
        aborted: false,
    };
    // From here on `pe` must not be lost: on error, kill and reap it before returning.
    let bail = |mut pe: Pe, what: &str, e: std::io::Error| {
        let _ = pe.child.kill();
        let _ = pe.child.wait();
        fail(what, e)
    };
    if let Err(e) = server.serve(rank, ours) {
        return Err(bail(pe, "cannot serve PMI", e));
    }
    let mut outs = Vec::new();
    let streams = [
        (
            pe_stdout.map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            Sink::Stdout,
        ),
        (
            pe_stderr.map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            Sink::Stderr,
        ),
    ];
    for (src, sink) in streams {
        let Some(src) = src else { continue };
        let btx = tx.clone();
        let on_broken = move || {
            let _ = btx.send(Event::OutputBroken);
        };
        match output::forward(rank, src, sink, spec.tag_output, on_broken) {
            Ok(h) => outs.push(h),
            Err(e) => return Err(bail(pe, "cannot start a thread", e)),
        }
    }
    Ok((pe, outs))
}

/// The first failure and the pending SIGKILL deadline.
#[derive(Debug, Default)]
struct Ending {
    failure: Option<Failure>,
    kill_at: Option<Instant>,
    /// Fault-tolerant mode: PE deaths do not end the job.
    fault_tolerant: bool,
    /// The PE deaths survived in fault-tolerant mode, in order.
    deaths: Vec<Failure>,
}

impl Ending {
    /// Records `f` unless a failure is already known, reports it and starts ending the PEs
    /// (in fault-tolerant mode a PE's death is only recorded and reported).
    fn fail(&mut self, f: Failure, pes: &Pes) {
        if self.failure.is_some() {
            return;
        }
        if self.fault_tolerant && f.is_pe_death() {
            report(&format!(
                "{}; SHMEM_FAULT_TOLERANT=1: the other PEs go on",
                f.message()
            ));
            self.deaths.push(f);
            return;
        }
        if let Some(d) = f.detail() {
            // The PE's line as it wrote it (it names the PE), then oshrun's summary.
            output::report_pe_line(d);
        }
        report(&f.message());
        let (sig, grace) = f.termination();
        pes.signal_all(sig);
        self.kill_at = Some(Instant::now() + grace);
        self.failure = Some(f);
    }
}

/// The event loop: returns once every PE is reaped and judged.
fn supervise(spec: &JobSpec, pes: &mut Pes, rx: &mpsc::Receiver<Event>) -> i32 {
    let started = Instant::now();
    let timeout_at = spec.timeout.map(|t| started + t);
    let mut end = Ending {
        fault_tolerant: spec.fault_tolerant,
        ..Ending::default()
    };
    // A PE others wait for in a PMI barrier although its connection is gone, and when we
    // learned it: judged once its exit is known, or after PMI_DRAIN if it keeps running.
    let mut stranded: Option<(usize, Instant)> = None;
    // Leftovers are reaped at most this often: a scan of /proc per SIGCHLD would cost
    // O(PEs) for each PE's exit.
    let mut leftovers_reaped = started;
    // Aborts that came while a PE that had died of a failure was not judged yet (its
    // socket not read to the end): most likely the abort is about it (a peer's wait saw
    // it gone), so its own verdict (its abort, or its exit status) goes first, as if its
    // socket had been read before the abort came. Recorded once no such PE is left
    // (within PMI_DRAIN); aborts with no death before them go first come, first served.
    let mut held: Vec<(usize, Failure)> = Vec::new();

    loop {
        pes.reap();
        let now = Instant::now();
        let mut next_judgement: Option<Instant> = None;
        for i in 0..pes.0.len() {
            let pe = &pes.0[i];
            let (Some(st), Some(at)) = (pe.status, pe.exited_at) else {
                continue;
            };
            if pe.judged {
                continue;
            }
            let due = at + PMI_DRAIN;
            // Until its socket is read to the end (what it sent before exiting is in
            // there), unless a process it left holds the socket open past PMI_DRAIN.
            if !pe.pmi_closed
                && !pe.finalized
                && (now < due || !sys::peer_holds_open(pe.pmi.as_raw_fd()))
            {
                next_judgement = Some(next_judgement.map_or(due, |t| t.min(due)));
                continue;
            }
            let verdict = judge(pe, st);
            let rank = pe.rank;
            pes.0[i].judged = true;
            // Its own abort, if held back, says more than its exit status.
            if let Some(k) = held.iter().position(|(r, _)| *r == rank) {
                let (_, f) = held.remove(k);
                end.fail(f, pes);
            }
            if let Some(f) = verdict {
                end.fail(f, pes);
            }
        }
        if !held.is_empty() && !pes.0.iter().any(Pe::unjudged_death) {
            for (_, f) in held.drain(..) {
                end.fail(f, pes);
            }
        }
        if let Some((rank, at)) = stranded {
            if let Some(pe) = pes.0.iter().find(|p| p.rank == rank) {
                let exited = pe.status.is_some();
                if pe.judged || (!exited && now >= at + PMI_DRAIN) {
                    stranded = None;
                    let code = pe.status.and_then(|st| st.code());
                    let f = match (pe.inited, pe.finalized, exited) {
                        (false, _, _) => Failure::LeftBeforeInit { rank, status: code },
                        (true, true, _) => Failure::LeftBarrier { rank },
                        (true, false, true) => Failure::NoFinalize { rank },
                        (true, false, false) => Failure::ClosedPmi { rank },
                    };
                    // A PE killed by a signal was reported as such when judged.
                    if !exited || code.is_some() {
                        end.fail(f, pes);
                    }
                } else if !exited {
                    let due = at + PMI_DRAIN;
                    next_judgement = Some(next_judgement.map_or(due, |t| t.min(due)));
                }
            }
        }
        if pes.0.iter().all(|p| p.judged) {
            break;
        }
        if let (Some(t), Some(d)) = (timeout_at, spec.timeout) {
            if now >= t {
                end.fail(Failure::Timeout(d), pes);
            }
        }
        if let Some(k) = end.kill_at {
            if now >= k {
                pes.signal_all(SIGKILL);
                end.kill_at = None;
            }
        }

        let mut wake = now + TICK;
        let timeout_pending = timeout_at.filter(|_| end.failure.is_none());
        for t in [end.kill_at, next_judgement, timeout_pending]
            .into_iter()
            .flatten()
        {
            wake = wake.min(t);
        }
        let ev = match rx.recv_timeout(wake.saturating_duration_since(now)) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => continue,
            // Cannot happen while `run` holds a sender; fall back to polling.
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        // Every queued event before the next judgement: on a loaded host this loop may not
        // run for longer than PMI_DRAIN, and a PE's finalize, queued before it exited, must
        // not be judged missing.
        for ev in std::iter::once(ev).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
            match ev {
                Event::Signal(SIGCHLD) => {
                    if leftovers_reaped.elapsed() >= LEFTOVER_REAP_PERIOD {
                        reap_leftovers(pes);
                        leftovers_reaped = Instant::now();
                    }
                }
                Event::Signal(sig) => {
                    if end.failure.is_some() {
                        // A second interrupt: stop waiting.
                        pes.signal_all(SIGKILL);
                    } else {
                        end.fail(Failure::Interrupted(sig), pes);
                    }
                }
                Event::Pmi(rank, ev) => {
                    let Some(pe) = pes.0.iter_mut().find(|p| p.rank == rank) else {
                        continue;
                    };
                    match ev {
                        PmiEvent::Init => pe.inited = true,
                        PmiEvent::Finalize => pe.finalized = true,
                        PmiEvent::Closed => pe.pmi_closed = true,
                        PmiEvent::Stranded => stranded = Some((rank, Instant::now())),
                        PmiEvent::Abort { code, msg } => {
                            pe.aborted = true;
                            let f = Failure::Abort { rank, code, msg };
                            pes.reap();
                            if pes.0.iter().any(Pe::unjudged_death) {
                                held.push((rank, f));
                            } else {
                                end.fail(f, pes);
                            }
                        }
                    }
                }
                Event::OutputBroken => end.fail(Failure::OutputBroken, pes),
            }
        }
    }
    if let Some(f) = end.failure {
        return f.exit_code();
    }
    match end.deaths.first() {
        None => 0,
        Some(first) => {
            let ranks: Vec<String> = end
                .deaths
                .iter()
                .filter_map(|d| d.rank().map(|r| r.to_string()))
                .collect();
            report(&format!(
                "the job ran on in fault-tolerant mode, but {} PE(s) failed: {}",
                ranks.len(),
                ranks.join(", ")
            ));
            first.exit_code()
        }
    }
}

/// Reaps the processes the PEs left behind that have ended, so they do not pile up as
/// zombies while the job runs.
fn reap_leftovers(pes: &Pes) {
    for p in sys::children() {
        // Only our other children: a PE is reaped through its `Child`.
        if !pes.0.iter().any(|pe| pe.pid == p) {
            sys::try_reap(p);
        }
    }
}

impl Pe {
    /// Dead of a failure it has not reported itself (no abort, no finalize), and not
    /// judged yet.
    fn unjudged_death(&self) -> bool {
        match self.status {
            Some(st) if !self.judged && !self.aborted && !self.finalized => {
                judge(self, st).is_some()
            }
            _ => false,
        }
    }
}

/// The failure a reaped PE's exit amounts to, if any.
fn judge(pe: &Pe, st: ExitStatus) -> Option<Failure> {
    if let Some(sig) = st.signal() {
        return Some(Failure::Signaled {
            rank: pe.rank,
            pid: pe.pid,
            sig,
        });
    }
    match st.code() {
        Some(0) | None => {}
        Some(code) => {
            return Some(Failure::Exited {
                rank: pe.rank,
                code,
            })
        }
    }
    // A PE that left cleanly but early leaves its peers waiting for it in collectives.
    if pe.inited && !pe.finalized && pe.others_running {
        return Some(Failure::NoFinalize { rank: pe.rank });
    }
    None
}
