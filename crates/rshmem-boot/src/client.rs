//! PMI-1 simple client over the socket a launcher passes in `PMI_FD`, or over TCP to the
//! `PMI_PORT` it names (`mpiexec.hydra -pmi-port`).

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::mapping::parse_process_mapping;
use crate::wire::{self, Message, WireError, ENDS_STRANDED_JOBS, PRINTS_ABORT_MSG};
use crate::{BootError, Bootstrap};

/// Set once the launcher's variables were read (and removed): `PMI_FD` must have a single
/// owner.
static FD_TAKEN: AtomicBool = AtomicBool::new(false);

/// The variables a launcher describes this PE with; removed from the environment once read.
const LAUNCHER_VARS: [&str; 5] = ["PMI_FD", "PMI_RANK", "PMI_SIZE", "PMI_PORT", "PMI_ID"];

/// Whether an earlier [`PmiClient::from_env`] took the launcher's variables.
pub(crate) fn launcher_env_taken() -> bool {
    FD_TAKEN.load(Ordering::SeqCst)
}

/// How long a PE that prints its own abort message waits before the abort, so that a
/// launcher killing the job at once (hydra) still forwards the message.
const ABORT_MSG_GRACE: Duration = Duration::from_millis(100);

/// The launcher's variables as read, before they are removed from the environment.
struct LauncherEnv {
    fd: String,
    rank: Result<String, std::env::VarError>,
    size: Result<String, std::env::VarError>,
    port: Option<String>,
    id: Result<String, std::env::VarError>,
}

/// Reads the launcher's variables and removes them from the environment, once per process.
///
/// `remove_var` is not synchronized with `getenv` calls that do not go through Rust's
/// `std::env` (C code, another language's runtime), so it must run before this process has
/// other threads. It does: `shmem_init` is where a program connects, OpenSHMEM requires it
/// before any other call, and rshmem's own threads (copy engine) start after this. A
/// program that starts threads reading the environment before `shmem_init` takes that
/// risk with any library that sets up its environment at init.
fn take_launcher_env() -> Result<LauncherEnv, BootError> {
    if FD_TAKEN.swap(true, Ordering::SeqCst) {
        return Err(BootError::AlreadyConnected);
    }
    let env = LauncherEnv {
        fd: std::env::var("PMI_FD").unwrap_or_default(),
        rank: std::env::var("PMI_RANK"),
        size: std::env::var("PMI_SIZE"),
        port: std::env::var("PMI_PORT").ok(),
        id: std::env::var("PMI_ID"),
    };
    for var in LAUNCHER_VARS {
        std::env::remove_var(var);
    }
    Ok(env)
}

/// The socket to the process manager: inherited (`PMI_FD`, a Unix socket pair with
/// `oshrun`, or whatever Hydra or Slurm passed) or connected over TCP (`PMI_PORT`).
#[derive(Debug)]
pub enum PmiStream {
    /// A Unix-domain stream.
    Unix(UnixStream),
    /// A TCP connection.
    Tcp(TcpStream),
}

impl PmiStream {
    fn try_clone(&self) -> std::io::Result<PmiStream> {
        Ok(match self {
            PmiStream::Unix(s) => PmiStream::Unix(s.try_clone()?),
            PmiStream::Tcp(s) => PmiStream::Tcp(s.try_clone()?),
        })
    }
}

impl PmiStream {
    fn set_read_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            PmiStream::Unix(s) => s.set_read_timeout(t),
            PmiStream::Tcp(s) => s.set_read_timeout(t),
        }
    }
}

impl From<UnixStream> for PmiStream {
    fn from(s: UnixStream) -> Self {
        PmiStream::Unix(s)
    }
}

impl From<TcpStream> for PmiStream {
    fn from(s: TcpStream) -> Self {
        PmiStream::Tcp(s)
    }
}

impl Read for PmiStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            PmiStream::Unix(s) => s.read(buf),
            PmiStream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for &PmiStream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            PmiStream::Unix(s) => (&*s).write(buf),
            PmiStream::Tcp(s) => (&*s).write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A PE's connection to a PMI-1 process manager (`oshrun`, `mpiexec.hydra`, Slurm's
/// `srun --mpi=pmi2`).
///
/// Thread-safe: one request/reply at a time under a mutex (bootstrap is not a hot path).
/// User key `k` of rank `r` is stored as the PMI key `"r/k"`.
#[derive(Debug)]
pub struct PmiClient {
    rank: usize,
    size: usize,
    kvsname: String,
    appnum: i32,
    /// The launcher prints an abort's message (see [`PRINTS_ABORT_MSG`]).
    launcher_prints_abort: bool,
    keylen_max: usize,
    vallen_max: usize,
    /// The node of every rank, from `PMI_process_mapping` (None if the launcher gave none).
    nodes: Option<Vec<usize>>,
    conn: Mutex<Conn>,
    /// Separate handle so `abort` never waits for the mutex (another thread may sit in a
    /// barrier holding it).
    abort_tx: PmiStream,
}

#[derive(Debug)]
struct Conn {
    reader: BufReader<PmiStream>,
    writer: PmiStream,
    finalized: bool,
    /// Warn on stderr once a barrier has waited this long (see [`Conn::await_barrier`]).
    barrier_warn: Option<BarrierWarn>,
}

/// When and as whom to warn about a barrier that does not complete.
#[derive(Debug)]
struct BarrierWarn {
    rank: usize,
    after: Duration,
}

/// Environment variable: seconds a PMI barrier waits before the warning of
/// [`Conn::await_barrier`] (a row of `rshmem_util`'s table, default 30; `0` = never warn).
pub const BARRIER_WARN_VAR: &str = "RSHMEM_BOOT_WARN_SECS";

/// The warning delay from the environment (`None`: never warn). `shmem_init` has
/// refused a value that does not parse before it connects; the default stands in for
/// one here only for other callers.
fn barrier_warn_after() -> Option<Duration> {
    match rshmem_util::Config::from_env() {
        Ok(c) => c.boot_warn_secs,
        Err(_) => Some(Duration::from_secs(30)),
    }
}

impl Conn {
    /// Waits for the reply of a barrier, warning on stderr (once) if it takes longer than
    /// `barrier_warn`. PMI-1 cannot tell a PE that a peer left: under a launcher that does
    /// not end such a job (hydra) a PE that exited before `shmem_init` leaves the others
    /// waiting here with no other sign. The wait itself is unchanged (a slow peer is not
    /// an error): `fill_buf` with a receive timeout consumes nothing.
    fn await_barrier(&mut self, cmd: &'static str) -> Result<(), BootError> {
        let Some(w) = &self.barrier_warn else {
            return Ok(());
        };
        if !self.reader.buffer().is_empty() {
            return Ok(());
        }
        let io = |source| BootError::Io { cmd, source };
        let after = w.after;
        let rank = w.rank;
        self.reader
            .get_ref()
            .set_read_timeout(Some(after))
            .map_err(io)?;
        // Buffers what arrives (nothing is lost on a timeout) for the read that follows.
        let waited = self.reader.fill_buf().map(drop);
        self.reader.get_ref().set_read_timeout(None).map_err(io)?;
        match waited {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                eprintln!(
                    "rshmem: PE {}: shmem_init has waited {} s in a PMI barrier for the other \
                     PEs; a PE that exited before calling shmem_init leaves the others \
                     waiting, and this launcher does not end the job (oshrun does)",
                    rank,
                    after.as_secs_f64()
                );
            }
            // Data, end of file or an error: the read that follows reports it.
            _ => {}
        }
        Ok(())
    }

    /// Sends `msg` and reads the reply, which must be `cmd=<expect>`; a reply with a
    /// non-zero `rc` becomes [`BootError::Failed`] unless `allow_rc` is set.
    fn call(
        &mut self,
        cmd: &'static str,
        msg: &Message,
        expect: &str,
        allow_rc: bool,
    ) -> Result<Message, BootError> {
        if self.finalized {
            return Err(BootError::Finalized { cmd });
        }
        (&self.writer)
            .write_all(msg.to_line().as_bytes())
            .map_err(|source| BootError::Io { cmd, source })?;
        if expect == "barrier_out" {
            self.await_barrier(cmd)?;
        }
        let reply = match wire::read_message(&mut self.reader) {
            Ok(Some(m)) => m,
            Ok(None) => return Err(BootError::Closed { cmd }),
            Err(WireError::Io(source)) => return Err(BootError::Io { cmd, source }),
            Err(e) => {
                return Err(BootError::Protocol {
                    cmd,
                    reply: String::new(),
                    reason: e.to_string(),
                })
            }
        };
        if reply.cmd() != expect {
            return Err(BootError::Protocol {
                cmd,
                reply: reply.to_string(),
                reason: format!("expected cmd={expect}"),
            });
        }
        match reply.rc() {
            None | Some(Ok(0)) => Ok(reply),
            Some(Ok(_)) if allow_rc => Ok(reply),
            Some(Ok(rc)) => Err(BootError::Failed {
                cmd,
                rc,
                reply: reply.to_string(),
            }),
            Some(Err(_)) => Err(BootError::Protocol {
                cmd,
                reply: reply.to_string(),
                reason: "rc is not a number".into(),
            }),
        }
    }
}

fn env_usize(
    var: &'static str,
    value: Result<String, std::env::VarError>,
) -> Result<usize, BootError> {
    let value = value.map_err(|e| BootError::Env {
        var,
        value: String::new(),
        reason: e.to_string(),
    })?;
    value.trim().parse().map_err(|_| BootError::Env {
        var,
        value,
        reason: "not a non-negative integer".into(),
    })
}

/// Takes ownership of the inherited descriptor `value` (of `PMI_FD`). Called at most once
/// per process ([`take_launcher_env`] guarantees it).
#[allow(unsafe_code)]
fn adopt_pmi_fd(value: String) -> Result<UnixStream, BootError> {
    use std::os::fd::{FromRawFd, RawFd};
    let var = "PMI_FD";
    let fd: RawFd = value.trim().parse().map_err(|_| BootError::Env {
        var,
        value: value.clone(),
        reason: "not a file descriptor number".into(),
    })?;
    if fd < 0 {
        return Err(BootError::Env {
            var,
            value,
            reason: "negative".into(),
        });
    }
    // The kernel says what the number refers to; refuse anything but an open socket, so we
    // never take ownership of a closed or unrelated descriptor.
    if cfg!(target_os = "linux") {
        match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(t) if t.to_string_lossy().starts_with("socket:") => {}
            Ok(t) => {
                return Err(BootError::Env {
                    var,
                    value,
                    reason: format!("descriptor refers to {}, not a socket", t.display()),
                })
            }
            Err(e) => {
                return Err(BootError::Env {
                    var,
                    value,
                    reason: format!("not an open descriptor ({e})"),
                })
            }
        }
    }
    // SAFETY: `fd` is open and a socket (checked above, on Linux), the launcher handed it to
    // this process for PMI, and FD_TAKEN (set by take_launcher_env, which read this value)
    // guarantees we create at most one owner for it.
    let inherited = unsafe { UnixStream::from_raw_fd(fd) };
    // A close-on-exec duplicate keeps the socket out of programs the PE runs; the
    // inherited number is closed when `inherited` drops.
    inherited.try_clone().map_err(|source| BootError::Io {
        cmd: "init",
        source,
    })
}

impl PmiClient {
    /// Sends the launcher an abort with status `code` and one-line report `msg` (printed
    /// here when the launcher does not print it); the caller then exits.
    fn send_abort(&self, code: i32, msg: &str) {
        let status = crate::exit_status(code);
        // One line on the wire: the protocol is line based.
        let one_line: String = msg
            .trim_end()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if !self.launcher_prints_abort && !one_line.is_empty() {
            crate::print_abort_msg(&one_line);
            std::thread::sleep(ABORT_MSG_GRACE);
        }
        // `exitcode` is what hydra ends the job with, so it is the mapped status; oshrun
        // reports the status as given (`rshmem_status`). The message goes last: the server
        // takes the rest of the line, so it may hold blanks and `=`.
        let mut m = Message::new("abort")
            .with("exitcode", status)
            .with("rshmem_status", code);
        if !one_line.is_empty() {
            m = m.with("error_msg", abort_msg_on_wire(&one_line));
        }
        // Best effort: if the launcher is gone, exiting is all that is left.
        let _ = (&self.abort_tx).write_all(m.to_line().as_bytes());
    }

    /// Connects using `PMI_FD`, `PMI_RANK` and `PMI_SIZE` (or `PMI_PORT` and `PMI_ID`) and
    /// performs the PMI-1 handshake. The variables are removed from the environment (so
    /// programs this PE starts are single PEs); a second call fails with
    /// [`BootError::AlreadyConnected`].
    pub fn from_env() -> Result<Self, BootError> {
        let env = take_launcher_env()?;
        if env.fd.is_empty() {
            if let Some(port) = env.port {
                return Self::connect_port(&port, env.id);
            }
        }
        let rank = env_usize("PMI_RANK", env.rank)?;
        let size = env_usize("PMI_SIZE", env.size)?;
        if size == 0 || rank >= size {
            return Err(BootError::Env {
                var: "PMI_RANK",
                value: rank.to_string(),
                reason: format!("not below PMI_SIZE={size}"),
            });
        }
        let stream = adopt_pmi_fd(env.fd)?;
        Self::new(stream, rank, size)
    }

    /// Connects over TCP to `port` (`host:port`), introduces itself with `initack` and
    /// `PMI_ID`, and learns its rank and the job size from the `set` lines the server
    /// answers with (Hydra's `-pmi-port` mode), before the usual handshake.
    fn connect_port(port: &str, id: Result<String, std::env::VarError>) -> Result<Self, BootError> {
        let id = env_usize("PMI_ID", id)?;
        let bad_port = |reason: String| BootError::Env {
            var: "PMI_PORT",
            value: port.to_owned(),
            reason,
        };
        if !port.contains(':') {
            return Err(bad_port("not host:port".into()));
        }
        let tcp = TcpStream::connect(port).map_err(|e| bad_port(format!("cannot connect: {e}")))?;
        // Request/response lines are tiny; do not let Nagle hold them back.
        let _ = tcp.set_nodelay(true);
        let stream = PmiStream::Tcp(tcp);
        let writer = stream.try_clone().map_err(|source| BootError::Io {
            cmd: "initack",
            source,
        })?;
        let mut reader = BufReader::new(stream);
        let line = Message::new("initack").with("pmiid", id);
        (&writer)
            .write_all(line.to_line().as_bytes())
            .map_err(|source| BootError::Io {
                cmd: "initack",
                source,
            })?;
        let mut next = |expect: &str| -> Result<Message, BootError> {
            match wire::read_message(&mut reader) {
                Ok(Some(m)) if m.cmd() == expect => Ok(m),
                Ok(Some(m)) => Err(BootError::Protocol {
                    cmd: "initack",
                    reply: m.to_string(),
                    reason: format!("expected cmd={expect}"),
                }),
                Ok(None) => Err(BootError::Closed { cmd: "initack" }),
                Err(WireError::Io(source)) => Err(BootError::Io {
                    cmd: "initack",
                    source,
                }),
                Err(e) => Err(BootError::Protocol {
                    cmd: "initack",
                    reply: String::new(),
                    reason: e.to_string(),
                }),
            }
        };
        next("initack")?;
        let (mut rank, mut size, mut debug) = (None, None, false);
        // `set size=`, `set rank=`, `set debug=`, in that order on Hydra; any order here.
        while rank.is_none() || size.is_none() || !debug {
            let m = next("set")?;
            let num = |k: &str| m.get(k).and_then(|v| v.parse::<usize>().ok());
            if let Some(v) = num("size") {
                size = Some(v);
            } else if let Some(v) = num("rank") {
                rank = Some(v);
            } else if m.get("debug").is_some() {
                debug = true;
            } else {
                return Err(BootError::Protocol {
                    cmd: "initack",
                    reply: m.to_string(),
                    reason: "expected set size=, rank= or debug=".into(),
                });
            }
        }
        let (rank, size) = (rank.unwrap_or(0), size.unwrap_or(0));
        if size == 0 || rank >= size {
            return Err(BootError::Protocol {
                cmd: "initack",
                reply: format!("rank={rank} size={size}"),
                reason: "rank not below size".into(),
            });
        }
        Self::handshake(reader, writer, rank, size)
    }

    /// Performs the PMI-1 handshake (`init`, `get_maxes`, `get_appnum`, `get_my_kvsname`) on
    /// an already connected stream, as rank `rank` of `size`.
    pub fn new(stream: impl Into<PmiStream>, rank: usize, size: usize) -> Result<Self, BootError> {
        let stream = stream.into();
        let writer = stream.try_clone().map_err(|source| BootError::Io {
            cmd: "init",
            source,
        })?;
        Self::handshake(BufReader::new(stream), writer, rank, size)
    }

    fn handshake(
        reader: BufReader<PmiStream>,
        writer: PmiStream,
        rank: usize,
        size: usize,
    ) -> Result<Self, BootError> {
        let io = |cmd| move |source| BootError::Io { cmd, source };
        let abort_tx = writer.try_clone().map_err(io("init"))?;
        let mut conn = Conn {
            reader,
            writer,
            finalized: false,
            barrier_warn: None,
        };
        let init = Message::new("init")
            .with("pmi_version", 1)
            .with("pmi_subversion", 1);
        let r = conn.call("init", &init, "response_to_init", false)?;
        if r.get("pmi_version") != Some("1") {
            return Err(BootError::Protocol {
                cmd: "init",
                reply: r.to_string(),
                reason: "process manager does not speak PMI version 1".into(),
            });
        }
        let launcher_prints_abort = r.get(PRINTS_ABORT_MSG) == Some("1");
        if r.get(ENDS_STRANDED_JOBS) != Some("1") {
            conn.barrier_warn = barrier_warn_after().map(|after| BarrierWarn { rank, after });
        }
        let maxes = conn.call("get_maxes", &Message::new("get_maxes"), "maxes", false)?;
        let max_of = |name: &str| -> Result<usize, BootError> {
            maxes
                .get(name)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| BootError::Protocol {
                    cmd: "get_maxes",
                    reply: maxes.to_string(),
                    reason: format!("missing or bad {name}"),
                })
        };
        // The limits count a C string's terminating NUL.
        let keylen_max = max_of("keylen_max")?.saturating_sub(1);
        let vallen_max = max_of("vallen_max")?.saturating_sub(1);
        let a = conn.call("get_appnum", &Message::new("get_appnum"), "appnum", false)?;
        let appnum = a.get("appnum").and_then(|v| v.parse().ok()).unwrap_or(0);
        let k = conn.call(
            "get_my_kvsname",
            &Message::new("get_my_kvsname"),
            "my_kvsname",
            false,
        )?;
        let kvsname = match k.get("kvsname") {
            Some(n) if !n.is_empty() => n.to_owned(),
            _ => {
                return Err(BootError::Protocol {
                    cmd: "get_my_kvsname",
                    reply: k.to_string(),
                    reason: "no kvsname".into(),
                })
            }
        };
        // Node locality, where the launcher publishes it (Hydra, Slurm, oshrun): a missing or
        // unreadable mapping only costs the runtime that hint.
        let m = Message::new("get")
            .with("kvsname", &kvsname)
            .with("key", "PMI_process_mapping");
        let nodes = conn
            .call("get", &m, "get_result", true)
            .ok()
            .filter(|r| matches!(r.rc(), None | Some(Ok(0))))
            .and_then(|r| r.get("value").and_then(|v| parse_process_mapping(v, size)));
        Ok(PmiClient {
            rank,
            size,
            kvsname,
            appnum,
            nodes,
            launcher_prints_abort,
            keylen_max,
            vallen_max,
            conn: Mutex::new(conn),
            abort_tx,
        })
    }

    /// The application number within an MPMD launch (0 for a plain launch).
    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    fn conn(&self) -> MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wire_key(&self, rank: usize, key: &str) -> Result<String, BootError> {
        crate::check_key(key)?;
        let k = format!("{rank}/{key}");
        wire::check_token("key", &k, self.keylen_max)?;
        Ok(k)
    }

    fn barrier_in(&self, cmd: &'static str) -> Result<(), BootError> {
        self.conn()
            .call(cmd, &Message::new("barrier_in"), "barrier_out", false)
            .map(drop)
    }
}

impl Bootstrap for PmiClient {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn job_id(&self) -> &str {
        &self.kvsname
    }

    fn nodes(&self) -> Option<&[usize]> {
        self.nodes.as_deref()
    }

    fn put(&self, key: &str, value: &str) -> Result<(), BootError> {
        let k = self.wire_key(self.rank, key)?;
        crate::check_value(value, crate::MAX_VALUE_LEN.min(self.vallen_max))?;
        let m = Message::new("put")
            .with("kvsname", &self.kvsname)
            .with("key", k)
            .with("value", value);
        self.conn().call("put", &m, "put_result", false).map(drop)
    }

    fn fence(&self) -> Result<(), BootError> {
        // PMI-1 has no separate commit on the wire: puts are sent eagerly.
        self.barrier_in("fence")
    }

    fn get(&self, rank: usize, key: &str) -> Result<String, BootError> {
        crate::check_rank(rank, self.size)?;
        let k = self.wire_key(rank, key)?;
        let m = Message::new("get")
            .with("kvsname", &self.kvsname)
            .with("key", k);
        let r = self.conn().call("get", &m, "get_result", true)?;
        match r.rc() {
            Some(Ok(0)) | None => match r.get("value") {
                Some(v) => Ok(v.to_owned()),
                None => Err(BootError::Protocol {
                    cmd: "get",
                    reply: r.to_string(),
                    reason: "no value".into(),
                }),
            },
            _ => Err(BootError::NotFound {
                rank,
                key: key.to_owned(),
                msg: r.get("msg").unwrap_or("no message").to_owned(),
            }),
        }
    }

    fn barrier(&self) -> Result<(), BootError> {
        self.barrier_in("barrier")
    }

    fn abort(&self, code: i32, msg: &str) -> ! {
        self.send_abort(code, msg);
        std::process::exit(crate::exit_status(code))
    }

    fn exiting(&self, status: i32, msg: &str) {
        // oshrun sees the exit status itself (and reports it as an exit, not an abort).
        if !self.launcher_prints_abort {
            self.send_abort(status, msg);
        }
    }

    fn finalize(&self) -> Result<(), BootError> {
        let mut c = self.conn();
        if c.finalized {
            return Ok(());
        }
        c.call("finalize", &Message::new("finalize"), "finalize_ack", false)?;
        c.finalized = true;
        Ok(())
    }
}

/// `msg` cut (at a character boundary) so the abort line stays within what every PMI-1
/// server reads.
fn abort_msg_on_wire(msg: &str) -> &str {
    let max = wire::MAX_LINE - 100;
    if msg.len() <= max {
        return msg;
    }
    let mut end = max;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    &msg[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::BufRead;
    use std::sync::Arc;
    use std::thread;

    /// A one-client PMI server good enough for unit tests: records each request line.
    fn fake_server(stream: UnixStream, log: Arc<Mutex<Vec<String>>>) -> thread::JoinHandle<()> {
        let w = stream.try_clone().unwrap();
        thread::spawn(move || serve(BufReader::new(stream), w, Flavor::Hydra, log))
    }

    /// Which process manager the fake server imitates.
    #[derive(Clone, Copy, PartialEq)]
    enum Flavor {
        Hydra,
        /// Slurm's `--mpi=pmi2` plugin: appnum -1, a kvsname with a dot, a missing key
        /// answered with rc=1 and no value, a cyclic two-node mapping.
        Slurm,
    }

    fn serve(
        reader: impl BufRead,
        mut w: impl Write,
        flavor: Flavor,
        log: Arc<Mutex<Vec<String>>>,
    ) {
        let slurm = flavor == Flavor::Slurm;
        let mut kvs: HashMap<String, String> = HashMap::new();
        kvs.insert(
            "PMI_process_mapping".into(),
            if slurm {
                "(vector,(0,2,1))"
            } else {
                "(vector,(0,2,2))"
            }
            .into(),
        );
        for line in reader.lines() {
            let Ok(line) = line else { return };
            log.lock().unwrap().push(line.clone());
            let m = Message::parse(&line).unwrap();
            let reply = match m.cmd() {
                "init" => Some(
                    Message::new("response_to_init")
                        .with("pmi_version", 1)
                        .with("pmi_subversion", 1)
                        .with("rc", 0),
                ),
                "get_maxes" => Some(
                    Message::new("maxes")
                        .with("kvsname_max", 256)
                        .with("keylen_max", 64)
                        .with("vallen_max", 1024),
                ),
                "get_appnum" => {
                    Some(Message::new("appnum").with("appnum", if slurm { -1 } else { 0 }))
                }
                "get_my_kvsname" => Some(
                    Message::new("my_kvsname")
                        .with("kvsname", if slurm { "4242.0" } else { "kvs_t" }),
                ),
                "put" => {
                    kvs.insert(m.get("key").unwrap().into(), m.get("value").unwrap().into());
                    Some(Message::new("put_result").with("rc", 0))
                }
                "get" => Some(match kvs.get(m.get("key").unwrap()) {
                    Some(v) => Message::new("get_result").with("rc", 0).with("value", v),
                    None if slurm => Message::new("get_result").with("rc", 1),
                    None => Message::new("get_result")
                        .with("rc", -1)
                        .with("msg", "key_not_found"),
                }),
                "barrier_in" => {
                    // A slow peer: long enough for a short barrier warning to fire.
                    thread::sleep(Duration::from_millis(150));
                    Some(Message::new("barrier_out"))
                }
                "finalize" => Some(Message::new("finalize_ack")),
                _ => None,
            };
            if let Some(r) = reply {
                w.write_all(r.to_line().as_bytes()).unwrap();
            }
        }
    }

    #[test]
    fn slurm_differences_are_tolerated() {
        let (a, b) = UnixStream::pair().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let w = b.try_clone().unwrap();
        let srv = thread::spawn(move || serve(BufReader::new(b), w, Flavor::Slurm, log));
        let c = PmiClient::new(a, 1, 3).unwrap();
        assert_eq!((c.job_id(), c.appnum()), ("4242.0", -1));
        assert_eq!(c.nodes(), Some(&[0, 1, 0][..]));
        assert!(matches!(
            c.get(0, "absent"),
            Err(BootError::NotFound { rank: 0, .. })
        ));
        c.put("k", "v").unwrap();
        c.fence().unwrap();
        assert_eq!(c.get(1, "k").unwrap(), "v");
        c.finalize().unwrap();
        drop(c);
        srv.join().unwrap();
    }

    #[test]
    fn pmi_port_handshake() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().to_string();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l2 = log.clone();
        let srv = thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut w = s.try_clone().unwrap();
            let mut r = BufReader::new(s);
            let mut first = String::new();
            r.read_line(&mut first).unwrap();
            assert_eq!(first, "cmd=initack pmiid=3\n");
            w.write_all(b"cmd=initack\ncmd=set size=4\ncmd=set rank=3\ncmd=set debug=0\n")
                .unwrap();
            serve(r, w, Flavor::Hydra, l2);
        });
        let c = PmiClient::connect_port(&port, Ok("3".into())).unwrap();
        assert_eq!((c.rank(), c.size(), c.job_id()), (3, 4, "kvs_t"));
        // The fake's mapping places 2 ranks per node.
        assert_eq!(c.nodes(), Some(&[0, 0, 1, 1][..]));
        c.put("addr", "0x10").unwrap();
        c.fence().unwrap();
        assert_eq!(c.get(3, "addr").unwrap(), "0x10");
        c.finalize().unwrap();
        drop(c);
        srv.join().unwrap();
        assert_eq!(
            log.lock().unwrap()[0],
            "cmd=init pmi_version=1 pmi_subversion=1"
        );

        // Bad variables are named.
        let e = PmiClient::connect_port("nowhere", Ok("0".into())).unwrap_err();
        assert!(e.to_string().contains("PMI_PORT"), "{e}");
        let e = PmiClient::connect_port("127.0.0.1:1", Err(std::env::VarError::NotPresent))
            .unwrap_err();
        assert!(e.to_string().contains("PMI_ID"), "{e}");
    }

    #[test]
    fn handshake_put_get_finalize() {
        let (a, b) = UnixStream::pair().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let srv = fake_server(b, log.clone());
        let c = PmiClient::new(a, 1, 2).unwrap();
        assert_eq!((c.rank(), c.size(), c.job_id()), (1, 2, "kvs_t"));
        c.put("addr", "0x1000").unwrap();
        c.fence().unwrap();
        assert_eq!(c.get(1, "addr").unwrap(), "0x1000");
        assert!(matches!(
            c.get(0, "addr"),
            Err(BootError::NotFound { rank: 0, .. })
        ));
        assert!(matches!(
            c.get(2, "addr"),
            Err(BootError::RankOutOfRange { .. })
        ));
        assert!(matches!(c.put("a b", "x"), Err(BootError::Invalid(_))));
        assert!(matches!(c.put("k", "x=y"), Err(BootError::Invalid(_))));
        assert!(c.put("k", &"v".repeat(crate::MAX_VALUE_LEN)).is_ok());
        assert!(c.put("k", &"v".repeat(crate::MAX_VALUE_LEN + 1)).is_err());
        c.barrier().unwrap();
        // A barrier outliving the warning delay still completes, with nothing lost.
        c.conn().barrier_warn = Some(BarrierWarn {
            rank: 1,
            after: Duration::from_millis(20),
        });
        c.barrier().unwrap();
        assert_eq!(c.get(1, "addr").unwrap(), "0x1000");
        c.finalize().unwrap();
        c.finalize().unwrap();
        assert!(matches!(c.barrier(), Err(BootError::Finalized { .. })));
        drop(c);
        srv.join().unwrap();
        let log = log.lock().unwrap();
        assert_eq!(log[0], "cmd=init pmi_version=1 pmi_subversion=1");
        assert!(log.contains(&"cmd=put kvsname=kvs_t key=1/addr value=0x1000".to_owned()));
        assert!(log.contains(&"cmd=get kvsname=kvs_t key=0/addr".to_owned()));
        assert_eq!(log.iter().filter(|l| *l == "cmd=finalize").count(), 1);
    }

    #[test]
    fn closed_and_bad_replies() {
        let (a, b) = UnixStream::pair().unwrap();
        drop(b);
        let e = PmiClient::new(a, 0, 1).unwrap_err();
        assert!(
            matches!(
                e,
                BootError::Closed { cmd: "init" } | BootError::Io { cmd: "init", .. }
            ),
            "{e}"
        );

        let (a, b) = UnixStream::pair().unwrap();
        let t = thread::spawn(move || {
            let mut r = BufReader::new(b.try_clone().unwrap());
            let mut l = String::new();
            r.read_line(&mut l).unwrap();
            (&b).write_all(b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-2\n")
                .unwrap();
        });
        let e = PmiClient::new(a, 0, 1).unwrap_err();
        assert!(
            matches!(
                e,
                BootError::Failed {
                    cmd: "init",
                    rc: -2,
                    ..
                }
            ),
            "{e}"
        );
        t.join().unwrap();
    }
}
