//! PMI-1 "simple" server: one thread per PE socket, one job-global key-value store.
//!
//! Requests are answered as MPICH's hydra answers them (see `rshmem_boot::wire`). What the
//! supervisor must know (init, finalize, abort, end of connection) is reported through a
//! callback, in order per PE.

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;

use rshmem_boot::wire::{self, Message, WireError};

/// Limits announced in `cmd=maxes` (our reader accepts much longer lines).
const KVSNAME_MAX: usize = 256;
const KEYLEN_MAX: usize = 256;
const VALLEN_MAX: usize = 1024;

/// Something a PE did that the supervisor cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PmiEvent {
    /// The PE sent `cmd=init`.
    Init,
    /// The PE sent `cmd=finalize`.
    Finalize,
    /// The PE sent `cmd=abort` (how `shmem_global_exit` and fatal errors arrive).
    Abort {
        /// The status as the PE gave it (`rshmem_status`, else `exitcode`), before the
        /// mapping of `rshmem_boot::exit_status`.
        code: i32,
        /// Its `error_msg`/`msg`, if any (a fatal error's report; none for
        /// `shmem_global_exit`).
        msg: Option<String>,
    },
    /// The PE's socket reached end of file (it exited, or closed it).
    Closed,
    /// A PMI barrier can never complete: this PE closed its connection without entering
    /// it while others wait there (the job would hang). Reported once per job.
    Stranded,
}

type Notify = Arc<dyn Fn(usize, PmiEvent) + Send + Sync>;

/// The job's PMI service.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("kvsname", &self.shared.kvsname)
            .field("size", &self.shared.size)
            .finish_non_exhaustive()
    }
}

struct Shared {
    kvsname: String,
    size: usize,
    notify: Notify,
    state: Mutex<State>,
    /// Test hook (`oshrun --test-slow-pmi`): how long a connection's reader pauses after
    /// reading an `abort`, as a reader that gets no CPU on a loaded host would.
    abort_delay: std::time::Duration,
}

struct State {
    kvs: HashMap<String, String>,
    /// Write side of each PE's socket; all replies are written under the state lock.
    writers: Vec<Option<UnixStream>>,
    in_barrier: Vec<bool>,
    barrier_count: usize,
    /// PEs whose connection ended.
    closed: Vec<bool>,
    /// A [`PmiEvent::Stranded`] was reported.
    stranded: bool,
}

impl Server {
    /// A server for `size` PEs of the job `kvsname`; `notify(rank, event)` is called from the
    /// connection threads.
    pub fn new(
        kvsname: &str,
        size: usize,
        notify: impl Fn(usize, PmiEvent) + Send + Sync + 'static,
    ) -> Self {
        Server {
            shared: Arc::new(Shared {
                kvsname: kvsname.to_owned(),
                size,
                notify: Arc::new(notify),
                state: Mutex::new(State {
                    // Node locality as Hydra and Slurm publish it: from node 0, one node,
                    // `size` ranks on it (every PE runs on this host).
                    kvs: HashMap::from([(
                        "PMI_process_mapping".to_owned(),
                        format!("(vector,(0,1,{size}))"),
                    )]),
                    writers: (0..size).map(|_| None).collect(),
                    in_barrier: vec![false; size],
                    barrier_count: 0,
                    closed: vec![false; size],
                    stranded: false,
                }),
                abort_delay: std::time::Duration::ZERO,
            }),
        }
    }

    /// Test hook: each connection's reader pauses `d` after reading an `abort` (before
    /// it reports it), as if the host were too loaded to run it. Before any `serve`.
    pub fn with_abort_delay(mut self, d: std::time::Duration) -> Self {
        Arc::get_mut(&mut self.shared)
            .expect("set before serving")
            .abort_delay = d;
        self
    }

    /// The job's kvsname.
    pub fn kvsname(&self) -> &str {
        &self.shared.kvsname
    }

    /// Serves PE `rank` on `stream` (oshrun's end of its socket pair) in a new thread.
    pub fn serve(&self, rank: usize, stream: UnixStream) -> std::io::Result<()> {
        assert!(rank < self.shared.size, "rank {rank} out of range");
        let writer = stream.try_clone()?;
        self.shared.lock().writers[rank] = Some(writer);
        let shared = self.shared.clone();
        thread::Builder::new()
            .name(format!("pmi-{rank}"))
            .spawn(move || shared.connection(rank, stream))?;
        Ok(())
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn connection(&self, rank: usize, stream: UnixStream) {
        let mut reader = BufReader::new(stream);
        loop {
            match wire::read_message(&mut reader) {
                Ok(Some(m)) => self.handle(rank, &m),
                Ok(None) | Err(WireError::Io(_)) => break,
                Err(e) => {
                    let msg = sanitize(&e.to_string());
                    let r = Message::new("error").with("rc", -1).with("msg", msg);
                    self.reply(&mut self.lock(), rank, &r);
                }
            }
        }
        let mut st = self.lock();
        st.writers[rank] = None;
        st.closed[rank] = true;
        (self.notify)(rank, PmiEvent::Closed);
        self.check_stranded(&mut st);
    }

    /// Reports a barrier that waits for a PE whose connection is gone.
    fn check_stranded(&self, st: &mut State) {
        if st.stranded || st.barrier_count == 0 {
            return;
        }
        if let Some(r) = (0..self.size).find(|&r| st.closed[r] && !st.in_barrier[r]) {
            st.stranded = true;
            (self.notify)(r, PmiEvent::Stranded);
        }
    }

    fn handle(&self, rank: usize, m: &Message) {
        let mut st = self.lock();
        let reply = match m.cmd() {
            "init" => {
                let ok = !matches!(m.get("pmi_version"), Some(v) if v != "1");
                if ok {
                    (self.notify)(rank, PmiEvent::Init);
                }
                Message::new("response_to_init")
                    .with("pmi_version", 1)
                    .with("pmi_subversion", 1)
                    .with("rc", if ok { 0 } else { -1 })
                    // oshrun prints an abort's message itself (in order with its summary).
                    .with(wire::PRINTS_ABORT_MSG, 1)
                    // ... and ends a job whose barrier waits for a PE that left.
                    .with(wire::ENDS_STRANDED_JOBS, 1)
            }
            "get_maxes" => Message::new("maxes")
                .with("rc", 0)
                .with("kvsname_max", KVSNAME_MAX)
                .with("keylen_max", KEYLEN_MAX)
                .with("vallen_max", VALLEN_MAX),
            "get_appnum" => Message::new("appnum").with("rc", 0).with("appnum", 0),
            "get_my_kvsname" => Message::new("my_kvsname")
                .with("rc", 0)
                .with("kvsname", &self.kvsname),
            "get_universe_size" => Message::new("universe_size")
                .with("rc", 0)
                .with("size", self.size),
            "put" => self.put(&mut st, m),
            "get" => self.get(&st, m),
            "barrier_in" => {
                if st.in_barrier[rank] {
                    Message::new("barrier_out")
                        .with("rc", -1)
                        .with("msg", "already_in_barrier")
                } else {
                    st.in_barrier[rank] = true;
                    st.barrier_count += 1;
                    if st.barrier_count == self.size {
                        st.barrier_count = 0;
                        st.in_barrier.iter_mut().for_each(|b| *b = false);
                        let out = Message::new("barrier_out");
                        for r in 0..self.size {
                            self.reply(&mut st, r, &out);
                        }
                    } else {
                        self.check_stranded(&mut st);
                    }
                    return;
                }
            }
            "finalize" => {
                (self.notify)(rank, PmiEvent::Finalize);
                Message::new("finalize_ack")
            }
            "abort" => {
                drop(st);
                thread::sleep(self.abort_delay);
                let num = |k| m.get(k).and_then(|c: &str| c.trim().parse().ok());
                let code = num("rshmem_status")
                    .or_else(|| num("exitcode"))
                    .unwrap_or(1);
                let msg = abort_message(m);
                (self.notify)(rank, PmiEvent::Abort { code, msg });
                return;
            }
            other => Message::new(&format!("{other}_result"))
                .with("rc", -1)
                .with("msg", "unsupported_command"),
        };
        self.reply(&mut st, rank, &reply);
    }

    fn check_kvsname(&self, m: &Message) -> Result<(), String> {
        match m.get("kvsname") {
            Some(k) if k != self.kvsname => Err(format!("unknown_kvsname_{}", sanitize(k))),
            _ => Ok(()),
        }
    }

    fn put(&self, st: &mut State, m: &Message) -> Message {
        let res = self
            .check_kvsname(m)
            .and_then(|()| match (m.get("key"), m.get("value")) {
                (Some(k), Some(v)) if !k.is_empty() => {
                    st.kvs.insert(k.to_owned(), v.to_owned());
                    Ok(())
                }
                _ => Err("put_needs_key_and_value".to_owned()),
            });
        match res {
            Ok(()) => Message::new("put_result")
                .with("rc", 0)
                .with("msg", "success"),
            Err(msg) => Message::new("put_result").with("rc", -1).with("msg", msg),
        }
    }

    fn get(&self, st: &State, m: &Message) -> Message {
        let res = self.check_kvsname(m).and_then(|()| {
            let key = m.get("key").ok_or("get_needs_key")?;
            st.kvs
                .get(key)
                .ok_or_else(|| format!("key_{}_not_found", sanitize(key)))
        });
        match res {
            Ok(v) => Message::new("get_result")
                .with("rc", 0)
                .with("msg", "success")
                .with("value", v),
            Err(msg) => Message::new("get_result")
                .with("rc", -1)
                .with("msg", msg)
                .with("value", "unknown"),
        }
    }

    /// Writes `m` to PE `rank`; a PE that went away is ignored (its thread sees EOF).
    fn reply(&self, st: &mut State, rank: usize, m: &Message) {
        if let Some(w) = st.writers[rank].as_mut() {
            if w.write_all(m.to_line().as_bytes()).is_err() {
                st.writers[rank] = None;
            }
        }
    }
}

/// The free text of an abort: from `error_msg=` (or `msg=`) to the end of the line, words
/// holding `=` included (the parser splits them into attributes). `None` if absent or blank.
fn abort_message(m: &Message) -> Option<String> {
    let attrs = m.attrs();
    let start = attrs
        .iter()
        .position(|(k, _)| k == "error_msg")
        .or_else(|| attrs.iter().position(|(k, _)| k == "msg"))?;
    let mut text = attrs[start].1.clone();
    for (k, v) in &attrs[start + 1..] {
        text.push(' ');
        text.push_str(k);
        text.push('=');
        text.push_str(v);
    }
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Makes free text fit in one PMI token.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() || c == '=' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rshmem_boot::{Bootstrap, PmiClient};
    use std::sync::mpsc;

    fn job(n: usize) -> (Vec<UnixStream>, mpsc::Receiver<(usize, PmiEvent)>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let srv = Server::new("rshmem-test-1", n, move |r, e| {
            let _ = tx.lock().unwrap().send((r, e));
        });
        let mut clients = Vec::new();
        for r in 0..n {
            let (a, b) = UnixStream::pair().unwrap();
            srv.serve(r, a).unwrap();
            clients.push(b);
        }
        (clients, rx)
    }

    #[test]
    fn kvs_exchange_and_barrier() {
        let n = 3;
        let (socks, rx) = job(n);
        let handles: Vec<_> = socks
            .into_iter()
            .enumerate()
            .map(|(r, s)| {
                thread::spawn(move || {
                    let c = PmiClient::new(s, r, n).unwrap();
                    assert_eq!(c.job_id(), "rshmem-test-1");
                    c.put("v", &(r * 7).to_string()).unwrap();
                    c.fence().unwrap();
                    let sum: usize = (0..n)
                        .map(|p| c.get(p, "v").unwrap().parse::<usize>().unwrap())
                        .sum();
                    assert!(c.get(0, "nope").is_err());
                    for _ in 0..50 {
                        c.barrier().unwrap();
                    }
                    c.finalize().unwrap();
                    sum
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), 21);
        }
        let events: Vec<_> = rx.iter().take(3 * n).collect();
        for r in 0..n {
            let mine: Vec<_> = events
                .iter()
                .filter(|(p, _)| *p == r)
                .map(|(_, e)| e.clone())
                .collect();
            assert_eq!(mine, [PmiEvent::Init, PmiEvent::Finalize, PmiEvent::Closed]);
        }
    }

    #[test]
    fn abort_and_garbage() {
        let (mut socks, rx) = job(1);
        let s = socks.pop().unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        (&s).write_all(b"hello there\n").unwrap();
        let m = wire::read_message(&mut r).unwrap().unwrap();
        assert_eq!((m.cmd(), m.rc()), ("error", Some(Ok(-1))));
        (&s).write_all(b"cmd=spawn nprocs=2\n").unwrap();
        let m = wire::read_message(&mut r).unwrap().unwrap();
        assert_eq!((m.cmd(), m.rc()), ("spawn_result", Some(Ok(-1))));
        (&s).write_all(b"cmd=get kvsname=other key=x\n").unwrap();
        let m = wire::read_message(&mut r).unwrap().unwrap();
        assert_eq!(m.rc(), Some(Ok(-1)));
        (&s).write_all(b"cmd=abort exitcode=255 rshmem_status=256 error_msg=bad x=1 thing\n")
            .unwrap();
        drop((s, r));
        assert_eq!(
            rx.recv().unwrap(),
            (
                0,
                PmiEvent::Abort {
                    code: 256,
                    msg: Some("bad x=1 thing".into())
                }
            )
        );
        assert_eq!(rx.recv().unwrap(), (0, PmiEvent::Closed));
    }

    #[test]
    fn barrier_waiting_for_a_closed_pe_is_stranded() {
        // Closed first, then a barrier: reported when the barrier is entered.
        let (mut socks, rx) = job(3);
        drop(socks.remove(1));
        assert_eq!(rx.recv().unwrap(), (1, PmiEvent::Closed));
        (&socks[0]).write_all(b"cmd=barrier_in\n").unwrap();
        assert_eq!(rx.recv().unwrap(), (1, PmiEvent::Stranded));
        // Reported once.
        (&socks[1]).write_all(b"cmd=barrier_in\n").unwrap();
        drop(socks);
        let rest: Vec<_> = rx.iter().take(2).collect();
        assert!(rest.iter().all(|(_, e)| *e == PmiEvent::Closed), "{rest:?}");

        // A barrier first, then a PE that is not in it leaves.
        let (mut socks, rx) = job(2);
        (&socks[0]).write_all(b"cmd=barrier_in\n").unwrap();
        drop(socks.remove(1));
        assert_eq!(rx.recv().unwrap(), (1, PmiEvent::Closed));
        assert_eq!(rx.recv().unwrap(), (1, PmiEvent::Stranded));
    }
}
