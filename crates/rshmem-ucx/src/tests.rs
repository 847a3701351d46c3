//! Two workers of one process connected to each other: the target is served only by a
//! ProgressThread, the client is used by the test thread. Each test runs with the UCX
//! transports of the environment and again with TLS forced to tcp (AM-emulated RMA/atomics).

use super::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Aborts the test process if the test is still running after `secs` (no hang).
struct Watchdog(Arc<AtomicBool>);

fn watchdog(name: &'static str, secs: u64) -> Watchdog {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if d.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("watchdog: test {name} still running after {secs} s, aborting");
        std::process::abort();
    });
    Watchdog(done)
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// An anonymous shared mapping, like a symmetric heap.
struct Mmap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: plain memory; tests synchronise through UCX operations and flushes.
unsafe impl Send for Mmap {}
// SAFETY: as for Send.
unsafe impl Sync for Mmap {}

impl Mmap {
    fn new(len: usize) -> Mmap {
        // SAFETY: anonymous mapping, checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        Mmap { ptr: p.cast(), len }
    }

    fn addr(&self, off: usize) -> u64 {
        self.ptr as u64 + off as u64
    }

    fn read_u64(&self, off: usize) -> u64 {
        assert!(off + 8 <= self.len);
        // SAFETY: in bounds, aligned by the callers; volatile since UCX writes behind our back.
        unsafe { std::ptr::read_volatile(self.ptr.add(off).cast::<u64>()) }
    }

    fn read_u32(&self, off: usize) -> u32 {
        assert!(off + 4 <= self.len);
        // SAFETY: as in read_u64.
        unsafe { std::ptr::read_volatile(self.ptr.add(off).cast::<u32>()) }
    }

    fn write_u64(&self, off: usize, v: u64) {
        assert!(off + 8 <= self.len);
        // SAFETY: as in read_u64.
        unsafe { std::ptr::write_volatile(self.ptr.add(off).cast::<u64>(), v) }
    }

    fn bytes(&self, off: usize, n: usize) -> Vec<u8> {
        assert!(off + n <= self.len);
        // SAFETY: in bounds; no UCX operation is in flight when tests read.
        unsafe { std::slice::from_raw_parts(self.ptr.add(off), n) }.to_vec()
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: our mapping, unmapped once (after the Region, see Target's field order).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

const HEAP: usize = 1 << 20;

/// The target side: a worker served by a progress thread, and a registered heap.
struct Target {
    progress: Option<ProgressThread>,
    worker: Arc<Worker>,
    _region: Region,
    rkey: Vec<u8>,
    address: Vec<u8>,
    heap: Mmap,
}

impl Target {
    fn new(ucp: &Arc<Ucp>, serve: bool) -> Target {
        let heap = Mmap::new(HEAP);
        let worker = Arc::new(ucp.worker().expect("worker"));
        let region = ucp.mem_map(heap.ptr, heap.len).expect("mem_map");
        assert_eq!(region.addr(), heap.addr(0));
        assert_eq!(region.len(), HEAP);
        let rkey = region.pack_rkey().expect("pack_rkey");
        let address = worker.address().expect("address");
        let progress =
            serve.then(|| ProgressThread::start(worker.clone()).expect("progress thread"));
        Target {
            progress,
            worker,
            _region: region,
            rkey,
            address,
            heap,
        }
    }
}

/// A client worker connected to a target, with the target's key unpacked.
struct Client<M: ThreadMode = Multi> {
    rkey: RemoteKey<M>,
    ep: Endpoint<M>,
    worker: Worker<M>,
}

fn client(ucp: &Arc<Ucp>, t: &Target) -> Client {
    let worker = ucp.worker().expect("client worker");
    let ep = worker.connect(&t.address).expect("connect");
    let rkey = ep.unpack_rkey(&t.rkey).expect("unpack_rkey");
    Client { rkey, ep, worker }
}

/// Loads UCX with `config`; None (the test is skipped, saying so) when libucp is not installed,
/// unless RSHMEM_REQUIRE_UCX=1, which CI sets where UCX is installed.
/// RSHMEM_UCX_TEST_LIBRARY replaces the library name (to check the skipping).
fn load(config: &[(&str, &str)]) -> Option<Arc<Ucp>> {
    let library = std::env::var("RSHMEM_UCX_TEST_LIBRARY");
    match Ucp::load_with(&LoadOptions {
        config,
        library: library.as_deref().unwrap_or(DEFAULT_LIBRARY),
        ..Default::default()
    }) {
        Ok(ucp) => Some(ucp),
        Err(e @ UcxError::Load { .. })
            if std::env::var("RSHMEM_REQUIRE_UCX").as_deref() != Ok("1") =>
        {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Runs `f` with the environment's transports, then with TLS=tcp.
fn each_tls(f: impl Fn(&Arc<Ucp>, &str)) {
    for (label, cfg) in [("default", &[][..]), ("tcp", &[("TLS", "tcp")][..])] {
        let Some(ucp) = load(cfg) else { return };
        f(&ucp, label);
    }
}

#[test]
fn load_bogus_library_says_what_to_install() {
    let _w = watchdog("load_bogus_library_says_what_to_install", 30);
    let err = Ucp::load_from("libucp-does-not-exist.so.0").expect_err("must fail");
    let msg = err.to_string();
    assert!(msg.contains("libucp-does-not-exist.so.0"), "{msg}");
    assert!(msg.contains("apt-get install libucx0"), "{msg}");
    assert!(msg.contains("dnf install ucx"), "{msg}");
    assert!(
        msg.contains("cannot open shared object file"),
        "dlopen error missing: {msg}"
    );
}

#[test]
fn load_reports_version() {
    let _w = watchdog("load_reports_version", 30);
    let Some(ucp) = load(&[]) else { return };
    assert!(ucp.version().starts_with("1."), "{}", ucp.version());
    let bad = Ucp::load_with(&LoadOptions {
        config: &[("MAX_EAGER_LANES", "not-a-number")],
        ..Default::default()
    });
    let msg = bad.expect_err("unknown config name").to_string();
    assert!(msg.contains("ucp_config_modify"), "{msg}");
    // An optional setting this UCX does not know is skipped; a known one with a bad value
    // is still an error.
    Ucp::load_with(&LoadOptions {
        if_known: &[("NO_SUCH_SETTING_OF_ANY_UCX", "y")],
        ..Default::default()
    })
    .expect("an unknown optional setting is skipped");
    let bad = Ucp::load_with(&LoadOptions {
        if_known: &[("MAX_EAGER_LANES", "not-a-number")],
        ..Default::default()
    });
    assert!(bad.is_err(), "a known optional setting with a bad value");
}

#[test]
fn put_flush_then_get() {
    let _w = watchdog("put_flush_then_get", 120);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        c.ep.put_blocking(
            &0xdead_beef_cafe_f00du64.to_ne_bytes(),
            t.heap.addr(64),
            &c.rkey,
        )
        .unwrap();
        c.worker.flush().unwrap();
        assert_eq!(t.heap.read_u64(64), 0xdead_beef_cafe_f00d, "{tls}");

        let big: Vec<u8> = (0..65536u32).map(|i| (i * 7 + 3) as u8).collect();
        c.ep.put_blocking(&big, t.heap.addr(4096), &c.rkey).unwrap();
        c.worker.flush().unwrap();
        assert_eq!(t.heap.bytes(4096, big.len()), big, "{tls}");

        t.heap.write_u64(128, 0x1122_3344_5566_7788);
        let mut got = [0u8; 8];
        c.ep.get_blocking(&mut got, t.heap.addr(128), &c.rkey)
            .unwrap();
        assert_eq!(u64::from_ne_bytes(got), 0x1122_3344_5566_7788, "{tls}");
        let mut back = vec![0u8; big.len()];
        c.ep.get_blocking(&mut back, t.heap.addr(4096), &c.rkey)
            .unwrap();
        assert_eq!(back, big, "{tls}");
        c.worker.fence().unwrap();
        drop(c);
        t.progress.unwrap().stop().unwrap();
    });
}

#[test]
fn local_worker_put_get() {
    let _w = watchdog("local_worker_put_get", 120);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let worker = ucp.local_worker().unwrap();
        let ep = worker.connect(&t.address).unwrap();
        let rkey = ep.unpack_rkey(&t.rkey).unwrap();
        ep.put_blocking(&77u64.to_ne_bytes(), t.heap.addr(0), &rkey)
            .unwrap();
        worker.flush().unwrap();
        assert_eq!(t.heap.read_u64(0), 77, "{tls}");
        let mut got = [0u8; 8];
        ep.get_blocking(&mut got, t.heap.addr(0), &rkey).unwrap();
        assert_eq!(u64::from_ne_bytes(got), 77, "{tls}");
        assert_eq!(
            ep.atomic_fetch(FetchOp::Add, 1, 8, t.heap.addr(0), &rkey)
                .unwrap(),
            77
        );
    });
}

#[test]
fn fetch_add_from_two_threads_is_exact() {
    let _w = watchdog("fetch_add_from_two_threads_is_exact", 240);
    const N: u64 = 300;
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let olds: Vec<(Vec<u64>, Vec<u64>)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let c = client(ucp, &t);
                        let (mut o32, mut o64) = (Vec::new(), Vec::new());
                        for _ in 0..N {
                            o32.push(
                                c.ep.atomic_fetch(FetchOp::Add, 1, 4, t.heap.addr(0), &c.rkey)
                                    .unwrap(),
                            );
                            o64.push(
                                c.ep.atomic_fetch(FetchOp::Add, 3, 8, t.heap.addr(8), &c.rkey)
                                    .unwrap(),
                            );
                        }
                        (o32, o64)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(t.heap.read_u32(0), 2 * N as u32, "{tls}");
        assert_eq!(t.heap.read_u64(8), 2 * N * 3, "{tls}");
        // Every fetch saw a distinct old value: no lost or duplicated update.
        let mut all32: Vec<u64> = olds.iter().flat_map(|o| o.0.iter().copied()).collect();
        let mut all64: Vec<u64> = olds.iter().flat_map(|o| o.1.iter().copied()).collect();
        all32.sort_unstable();
        all64.sort_unstable();
        assert_eq!(all32, (0..2 * N).collect::<Vec<_>>(), "{tls}");
        assert_eq!(
            all64,
            (0..2 * N).map(|i| 3 * i).collect::<Vec<_>>(),
            "{tls}"
        );
    });
}

#[test]
fn cswap_swap_and_bitwise_ops() {
    let _w = watchdog("cswap_swap_and_bitwise_ops", 120);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        let (a64, a32) = (t.heap.addr(16), t.heap.addr(32));
        t.heap.write_u64(16, 5);
        // Mismatch: old value returned, memory unchanged.
        assert_eq!(c.ep.cswap(4, 9, 8, a64, &c.rkey).unwrap(), 5, "{tls}");
        assert_eq!(t.heap.read_u64(16), 5, "{tls}");
        // Match: old value returned, new stored.
        assert_eq!(c.ep.cswap(5, 9, 8, a64, &c.rkey).unwrap(), 5, "{tls}");
        assert_eq!(t.heap.read_u64(16), 9, "{tls}");
        // 32-bit on a word whose neighbour must stay intact.
        t.heap.write_u64(32, 0xffff_ffff_0000_0007);
        assert_eq!(
            c.ep.cswap(7, 0x8000_0001, 4, a32, &c.rkey).unwrap(),
            7,
            "{tls}"
        );
        assert_eq!(t.heap.read_u64(32), 0xffff_ffff_8000_0001, "{tls}");
        assert_eq!(
            c.ep.atomic_fetch(FetchOp::Swap, 42, 8, a64, &c.rkey)
                .unwrap(),
            9
        );
        assert_eq!(
            c.ep.atomic_fetch(FetchOp::And, 0b1010, 8, a64, &c.rkey)
                .unwrap(),
            42
        );
        assert_eq!(
            c.ep.atomic_fetch(FetchOp::Or, 0b0101, 8, a64, &c.rkey)
                .unwrap(),
            0b1010
        );
        assert_eq!(
            c.ep.atomic_fetch(FetchOp::Xor, 0b0011, 8, a64, &c.rkey)
                .unwrap(),
            0b1111
        );
        c.ep.atomic_post(AtomicOp::Add, 100, 8, a64, &c.rkey)
            .unwrap();
        c.ep.atomic_post(AtomicOp::Xor, 1, 8, a64, &c.rkey).unwrap();
        c.ep.atomic_post(AtomicOp::Or, 0x100, 4, a32, &c.rkey)
            .unwrap();
        c.ep.atomic_post(AtomicOp::And, 0xfff, 4, a32, &c.rkey)
            .unwrap();
        c.worker.flush().unwrap();
        assert_eq!(t.heap.read_u64(16), (0b1100 + 100) ^ 1, "{tls}");
        assert_eq!(t.heap.read_u64(32), 0xffff_ffff_0000_0101, "{tls}");
    });
}

#[test]
fn bad_arguments_are_refused() {
    let _w = watchdog("bad_arguments_are_refused", 60);
    let Some(ucp) = load(&[]) else { return };
    let t = Target::new(&ucp, true);
    let c1 = client(&ucp, &t);
    let c2 = client(&ucp, &t);
    let e = c1
        .ep
        .atomic_fetch(FetchOp::Add, 1, 3, t.heap.addr(0), &c1.rkey)
        .unwrap_err();
    assert!(
        e.to_string().contains("Endpoint::atomic_fetch: size 3"),
        "{e}"
    );
    let e = c1
        .ep
        .put_blocking(&[1], t.heap.addr(0), &c2.rkey)
        .unwrap_err();
    assert!(e.to_string().contains("another endpoint"), "{e}");
    assert!(ucp.mem_map(std::ptr::null_mut(), 8).is_err());
    assert!(c1.worker.connect(&[]).is_err());
    assert!(c1.ep.unpack_rkey(&[]).is_err());
}

#[test]
fn nonblocking_puts_count_completions() {
    let _w = watchdog("nonblocking_puts_count_completions", 120);
    const N: usize = 500;
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        let src: Vec<u64> = (0..N as u64).map(|i| i * 11 + 1).collect();
        let done = AtomicU64::new(0);
        let mut pending = 0u64;
        for (i, v) in src.iter().enumerate() {
            // SAFETY: src and done outlive the wait below.
            let r = unsafe {
                c.ep.put(
                    (v as *const u64).cast(),
                    8,
                    t.heap.addr(8 * i),
                    &c.rkey,
                    Some(&done),
                )
            }
            .unwrap();
            if r == Issued::Pending {
                pending += 1;
            }
        }
        let end = Instant::now() + Duration::from_secs(60);
        while done.load(Ordering::Acquire) < pending {
            assert!(
                Instant::now() < end,
                "{tls}: {} of {pending} completions",
                done.load(Ordering::Acquire)
            );
            if !c.worker.progress() {
                std::thread::yield_now();
            }
        }
        assert_eq!(done.load(Ordering::Acquire), pending, "{tls}");
        c.worker.flush().unwrap();
        for (i, v) in src.iter().enumerate() {
            assert_eq!(t.heap.read_u64(8 * i), *v, "{tls}: word {i}");
        }
        eprintln!("{tls}: {pending} of {N} puts were pending");
        // Non-blocking gets with the same counter contract.
        let mut dst = vec![0u64; N];
        let gdone = AtomicU64::new(0);
        let mut gpending = 0;
        for (i, d) in dst.iter_mut().enumerate() {
            // SAFETY: dst and gdone outlive the wait below; dst is not read until then.
            let r = unsafe {
                c.ep.get(
                    (d as *mut u64).cast(),
                    8,
                    t.heap.addr(8 * i),
                    &c.rkey,
                    Some(&gdone),
                )
            }
            .unwrap();
            if r == Issued::Pending {
                gpending += 1;
            }
        }
        while gdone.load(Ordering::Acquire) < gpending {
            assert!(Instant::now() < end, "{tls}: gets stuck");
            if !c.worker.progress() {
                std::thread::yield_now();
            }
        }
        assert_eq!(dst, src, "{tls}");
    });
}

#[test]
fn progress_thread_serves_a_target_whose_owner_sleeps() {
    let _w = watchdog("progress_thread_serves_a_target_whose_owner_sleeps", 120);
    each_tls(|ucp, tls| {
        // The target's worker is never progressed by its owner (this thread only sleeps).
        let t = Target::new(ucp, false);
        let mut serving = None;
        t.heap.write_u64(0, 4242);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::scope(|s| {
            s.spawn(|| {
                let c = client(ucp, &t);
                let mut v = 0u64;
                let done = AtomicU64::new(0);
                // SAFETY: v and done outlive the waits below.
                let r = unsafe {
                    c.ep.get(
                        (&mut v as *mut u64).cast(),
                        8,
                        t.heap.addr(0),
                        &c.rkey,
                        Some(&done),
                    )
                }
                .unwrap();
                if tls == "tcp" {
                    // On tcp the get is emulated: nothing happens while nobody progresses the target.
                    assert_eq!(r, Issued::Pending);
                    let end = Instant::now() + Duration::from_millis(300);
                    while Instant::now() < end {
                        c.worker.progress();
                        std::thread::yield_now();
                    }
                    assert_eq!(
                        done.load(Ordering::Acquire),
                        0,
                        "tcp get completed without target progress"
                    );
                }
                tx.send(()).unwrap();
                while r == Issued::Pending && done.load(Ordering::Acquire) == 0 {
                    if !c.worker.progress() {
                        std::thread::yield_now();
                    }
                }
                assert_eq!(v, 4242, "{tls}");
                let start = Instant::now();
                for _ in 0..100 {
                    let mut got = [0u8; 8];
                    c.ep.get_blocking(&mut got, t.heap.addr(0), &c.rkey)
                        .unwrap();
                    assert_eq!(u64::from_ne_bytes(got), 4242);
                }
                eprintln!(
                    "{tls}: 100 gets served by the progress thread in {:?}",
                    start.elapsed()
                );
            });
            rx.recv().unwrap();
            // Only now the target is served, by its progress thread alone.
            serving = Some(ProgressThread::start(t.worker.clone()).unwrap());
        });
        serving.unwrap().stop().unwrap();
    });
}

#[test]
fn dead_peer_fails_instead_of_hanging() {
    let _w = watchdog("dead_peer_fails_instead_of_hanging", 120);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        let mut got = [0u8; 8];
        c.ep.get_blocking(&mut got, t.heap.addr(0), &c.rkey)
            .unwrap();
        c.ep.status().unwrap();
        let raddr = t.heap.addr(0);
        drop(t); // stops the progress thread, destroys the target worker
        let mut res = Ok(());
        for _ in 0..100_000 {
            res = c.ep.get_blocking(&mut got, raddr, &c.rkey);
            if res.is_err() {
                break;
            }
        }
        assert!(
            matches!(res, Err(UcxError::PeerFailed(_))),
            "{tls}: {res:?}"
        );
        assert!(
            matches!(c.ep.status(), Err(UcxError::PeerFailed(_))),
            "{tls}"
        );
        // Later operations fail at once; a flush does not hang; closing works.
        let e =
            c.ep.atomic_fetch(FetchOp::Add, 1, 8, raddr, &c.rkey)
                .unwrap_err();
        assert!(
            e.to_string().contains("endpoint to the peer failed"),
            "{tls}: {e}"
        );
        // A flush returns (UCX 1.13: Ok, the failed operations were purged): the failure is
        // the endpoint's status, not the flush's.
        let _ = c.worker.flush();
        assert!(c.ep.status().is_err(), "{tls}");
        drop(c);
    });
}

#[test]
fn peer_dying_during_a_pending_get_ends_the_wait() {
    let _w = watchdog("peer_dying_during_a_pending_get_ends_the_wait", 120);
    each_tls(|ucp, tls| {
        // Never served: the get stays pending until the target worker is destroyed.
        let t = Target::new(ucp, false);
        let c = client(ucp, &t);
        let raddr = t.heap.addr(0);
        let killer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(t);
        });
        let mut got = [0u8; 8];
        let res = c.ep.get_blocking(&mut got, raddr, &c.rkey);
        killer.join().unwrap();
        assert!(
            matches!(res, Err(UcxError::PeerFailed(_))),
            "{tls}: {res:?}"
        );
    });
}

#[test]
fn nonblocking_atomics_and_flush_count_completions() {
    let _w = watchdog("nonblocking_atomics_and_flush_count_completions", 120);
    const N: usize = 200;
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        let bufs: Vec<AmoBuffer> = (0..N).map(|_| AmoBuffer::new()).collect();
        let done = AtomicU64::new(0);
        let mut pending = 0;
        for (i, b) in bufs.iter().enumerate() {
            let size = if i % 2 == 0 { 8 } else { 4 };
            let off = if size == 8 { 64 } else { 72 };
            // SAFETY: bufs and done outlive the wait below; each buffer is used once.
            let r = unsafe {
                c.ep.atomic_fetch_nb(
                    FetchOp::Add,
                    2,
                    size,
                    t.heap.addr(off),
                    &c.rkey,
                    b,
                    Some(&done),
                )
            }
            .unwrap();
            pending += u64::from(r == Issued::Pending);
        }
        let end = Instant::now() + Duration::from_secs(60);
        let wait = |d: &AtomicU64, n: u64| {
            while d.load(Ordering::Acquire) < n {
                assert!(
                    Instant::now() < end,
                    "{tls}: stuck at {} of {n}",
                    d.load(Ordering::Acquire)
                );
                if !c.worker.progress() {
                    std::thread::yield_now();
                }
            }
        };
        wait(&done, pending);
        assert_eq!(t.heap.read_u64(64), N as u64, "{tls}");
        assert_eq!(t.heap.read_u32(72), N as u32, "{tls}");
        let mut o64: Vec<u64> = bufs.iter().step_by(2).map(|b| b.result(8)).collect();
        let mut o32: Vec<u64> = bufs
            .iter()
            .skip(1)
            .step_by(2)
            .map(|b| b.result(4))
            .collect();
        o64.sort_unstable();
        o32.sort_unstable();
        let expect: Vec<u64> = (0..N as u64 / 2).map(|i| 2 * i).collect();
        assert_eq!(o64, expect, "{tls}");
        assert_eq!(o32, expect, "{tls}");

        // cswap_nb: a failing then a succeeding compare.
        let (b1, b2) = (AmoBuffer::new(), AmoBuffer::new());
        let cdone = AtomicU64::new(0);
        // SAFETY: b1, b2 and cdone outlive the wait below.
        let r1 = unsafe {
            c.ep.cswap_nb(1, 7, 8, t.heap.addr(64), &c.rkey, &b1, Some(&cdone))
        }
        .unwrap();
        // SAFETY: as above.
        let r2 = unsafe {
            c.ep.cswap_nb(N as u64, 7, 8, t.heap.addr(64), &c.rkey, &b2, Some(&cdone))
        }
        .unwrap();
        wait(
            &cdone,
            u64::from(r1 == Issued::Pending) + u64::from(r2 == Issued::Pending),
        );
        assert_eq!((b1.result(8), b2.result(8)), (N as u64, N as u64), "{tls}");
        assert_eq!(t.heap.read_u64(64), 7, "{tls}");

        // flush_nb: completes after a put, which is then visible.
        c.ep.put_blocking(&99u64.to_ne_bytes(), t.heap.addr(80), &c.rkey)
            .unwrap();
        let fdone = AtomicU64::new(0);
        // SAFETY: fdone outlives the wait below.
        if unsafe { c.worker.flush_nb(Some(&fdone)) }.unwrap() == Issued::Pending {
            wait(&fdone, 1);
        }
        assert_eq!(t.heap.read_u64(80), 99, "{tls}");
    });
}

#[test]
fn thread_safety_markers() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Ucp>();
    send_sync::<Region>();
    send_sync::<Worker<Multi>>();
    send_sync::<Endpoint<Multi>>();
    send_sync::<RemoteKey<Multi>>();
    send_sync::<ProgressThread>();
}

#[test]
fn connect_without_peer_errors_may_use_shared_memory() {
    let _w = watchdog("connect_without_peer_errors_may_use_shared_memory", 120);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let worker = ucp.worker().unwrap();
        let ep = worker.connect_with(&t.address, false).unwrap();
        let rkey = ep.unpack_rkey(&t.rkey).unwrap();
        ep.put_blocking(&5u64.to_ne_bytes(), t.heap.addr(8), &rkey)
            .unwrap();
        worker.flush().unwrap();
        assert_eq!(t.heap.read_u64(8), 5, "{tls}");
        assert_eq!(
            ep.cswap(5, 6, 8, t.heap.addr(8), &rkey).unwrap(),
            5,
            "{tls}"
        );
        let mut got = [0u8; 8];
        ep.get_blocking(&mut got, t.heap.addr(8), &rkey).unwrap();
        assert_eq!(u64::from_ne_bytes(got), 6, "{tls}");
    });
}

#[test]
fn idle_progress_thread_sleeps() {
    let _w = watchdog("idle_progress_thread_sleeps", 60);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        let mut got = [0u8; 8];
        c.ep.get_blocking(&mut got, t.heap.addr(0), &c.rkey)
            .unwrap();
        let pt = t.progress.as_ref().unwrap();
        let before = pt.rounds();
        std::thread::sleep(Duration::from_millis(300));
        let idle = pt.rounds() - before;
        // A spinning loop would make millions of rounds; a sleeping one wakes only for events.
        assert!(idle < 1000, "{tls}: {idle} rounds while idle");
        c.ep.get_blocking(&mut got, t.heap.addr(0), &c.rkey)
            .unwrap();
        assert!(
            pt.rounds() > before,
            "{tls}: the get did not wake the thread"
        );
    });
}

#[test]
fn a_waiter_that_claims_the_worker_serves_it_and_hands_it_back() {
    let _w = watchdog(
        "a_waiter_that_claims_the_worker_serves_it_and_hands_it_back",
        120,
    );
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        let c = client(ucp, &t);
        let pt = t.progress.as_ref().unwrap();
        let driver = pt.driver();
        let mut got = [0u8; 8];
        // Connected and idle: the progress thread sleeps on the worker's fd.
        c.ep.get_blocking(&mut got, t.heap.addr(0), &c.rkey)
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let _claim = driver.drive();
                let mut served = 0u64;
                while !stop.load(Ordering::Acquire) {
                    if driver.try_progress() {
                        served += 1;
                    } else {
                        driver.sleep(Duration::from_millis(5));
                    }
                }
                served
            });
            // Give the thread the time to stand aside (the first event wakes it once).
            std::thread::sleep(Duration::from_millis(50));
            c.ep.get_blocking(&mut got, t.heap.addr(0), &c.rkey)
                .unwrap();
            let before = pt.rounds();
            for i in 0..200u64 {
                t.heap.write_u64(16, i);
                c.ep.get_blocking(&mut got, t.heap.addr(16), &c.rkey)
                    .unwrap();
                assert_eq!(u64::from_ne_bytes(got), i, "{tls}");
            }
            // The waiter served them; the progress thread stood aside.
            assert_eq!(pt.rounds(), before, "{tls}: the progress thread ran");
            stop.store(true, Ordering::Release);
            let served = waiter.join().unwrap();
            assert!(served > 0, "{tls}: the waiter served nothing");
        });
        // The claim dropped: the progress thread serves again, alone.
        t.heap.write_u64(24, 77);
        c.ep.get_blocking(&mut got, t.heap.addr(24), &c.rkey)
            .unwrap();
        assert_eq!(u64::from_ne_bytes(got), 77, "{tls}");
    });
}

#[test]
fn memory_ucx_allocates_is_reached_one_sidedly_on_shared_memory() {
    let _w = watchdog(
        "memory_ucx_allocates_is_reached_one_sidedly_on_shared_memory",
        120,
    );
    let Some(_) = load(&[]) else { return };
    let ucp = Ucp::load_with(&LoadOptions {
        config: &[("TLS", "sm,self")],
        if_known: &[("MM_ERROR_HANDLING", "y")],
        ..Default::default()
    })
    .expect("UCX with shared-memory transports");
    const LEN: usize = 1 << 20;
    // A reservation, as the runtime makes one for its segments.
    // SAFETY: a fresh inaccessible anonymous mapping, checked below.
    let resv = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4 * LEN,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(resv, libc::MAP_FAILED);
    // SAFETY: inside the reservation, page-aligned.
    let at = unsafe { resv.cast::<u8>().add(LEN) };
    // SAFETY: a part of our reservation holding nothing.
    let region = unsafe { ucp.mem_alloc_fixed(at, LEN) }.expect("ucp_mem_map ALLOCATE|FIXED");
    assert_eq!(region.addr(), at as u64);
    let word = |off: usize| {
        // SAFETY: inside the allocated region, aligned.
        unsafe { &*at.add(off).cast::<std::sync::atomic::AtomicU64>() }
    };
    assert_eq!(
        word(LEN - 8).load(Ordering::Relaxed),
        0,
        "new memory reads as zero"
    );
    word(8).store(40, Ordering::Relaxed);
    // The target worker is never progressed: what completes went without it.
    let target = ucp.worker().unwrap();
    let rkey_bytes = region.pack_rkey().unwrap();
    let c = ucp.worker().unwrap();
    let ep = c.connect(&target.address().unwrap()).unwrap();
    let rkey = ep.unpack_rkey(&rkey_bytes).unwrap();
    ep.put_blocking(&7u64.to_ne_bytes(), at as u64 + 16, &rkey)
        .unwrap();
    c.flush().unwrap();
    assert_eq!(word(16).load(Ordering::Acquire), 7);
    let old = ep
        .atomic_fetch(FetchOp::Add, 2, 8, at as u64 + 8, &rkey)
        .unwrap();
    assert_eq!((old, word(8).load(Ordering::Acquire)), (40, 42));
    let mut got = [0u8; 8];
    ep.get_blocking(&mut got, at as u64 + 8, &rkey).unwrap();
    assert_eq!(u64::from_ne_bytes(got), 42);
    // Mapped in this process too (a second mapping of the same memory): rshmem copies there.
    let p = rkey
        .local_ptr(at as u64 + 8)
        .expect("ucp_rkey_ptr on memory UCX allocated, over sm");
    // SAFETY: UCX maps the word here, aligned as its remote address.
    let mapped = unsafe { &*p.cast::<std::sync::atomic::AtomicU64>() };
    assert_eq!(mapped.load(Ordering::Acquire), 42);
    mapped.store(43, Ordering::Release);
    assert_eq!(word(8).load(Ordering::Acquire), 43);
    word(8).store(42, Ordering::Release);
    // What rshmem relies on there, on 4- and 8-byte words: fetch-add, swap, compare-swap and
    // the posted ops. (UCX 1.13's shared-memory transports got fetching and/or/xor wrong on
    // memory they allocated: the word came back 0; rshmem does those by compare-swap.)
    for (size, off) in [(4usize, 32usize), (8, 64)] {
        let a = at as u64 + off as u64;
        let read = |ep: &Endpoint| ep.atomic_fetch(FetchOp::Add, 0, size, a, &rkey).unwrap();
        assert_eq!(ep.atomic_fetch(FetchOp::Add, 5, size, a, &rkey).unwrap(), 0);
        assert_eq!(
            ep.atomic_fetch(FetchOp::Swap, 9, size, a, &rkey).unwrap(),
            5
        );
        assert_eq!(ep.cswap(9, 12, size, a, &rkey).unwrap(), 9);
        assert_eq!(
            ep.cswap(9, 13, size, a, &rkey).unwrap(),
            12,
            "a failed compare"
        );
        for (op, arg, want) in [
            (AtomicOp::Add, 4u64, 16u64),
            (AtomicOp::Xor, 1, 17),
            (AtomicOp::Or, 2, 19),
            (AtomicOp::And, 6, 2),
        ] {
            ep.atomic_post(op, arg, size, a, &rkey).unwrap();
            c.flush().unwrap();
            assert_eq!(read(&ep), want, "{size}-byte posted {op:?}");
        }
    }
    drop(rkey);
    drop(ep);
    drop(region);
    // The range is reserved again, not unmapped: an inaccessible mapping covers it (merged
    // with the reservation around it).
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let a = at as u64;
    let line = maps
        .lines()
        .find(|l| {
            let range = l.split(' ').next().unwrap_or("");
            let (lo, hi) = range.split_once('-').unwrap_or(("0", "0"));
            let lo = u64::from_str_radix(lo, 16).unwrap_or(0);
            let hi = u64::from_str_radix(hi, 16).unwrap_or(0);
            lo <= a && a + LEN as u64 <= hi
        })
        .unwrap_or_else(|| panic!("{a:x} not mapped:\n{maps}"));
    assert!(line.contains("---p"), "{line}");
    // SAFETY: our reservation, unmapped once.
    unsafe { libc::munmap(resv, 4 * LEN) };
}

#[test]
fn active_messages_arrive_whole_and_in_order() {
    let _w = watchdog("active_messages_arrive_whole_and_in_order", 120);
    each_tls(|ucp, tls| {
        let t = Target::new(ucp, true);
        type Got = Arc<Mutex<Vec<(Vec<u8>, Vec<u8>)>>>;
        let got: Got = Arc::default();
        let sink = got.clone();
        t.worker
            .set_am_handler(
                7,
                Box::new(move |h, d| {
                    sink.lock().unwrap().push((h.to_vec(), d.to_vec()));
                }),
            )
            .unwrap();
        let c = client(ucp, &t);
        let big: Vec<u8> = (0..256u32 << 10).map(|i| (i * 13 + 1) as u8).collect();
        let sent: Vec<(Vec<u8>, Vec<u8>)> = vec![
            (1u64.to_ne_bytes().to_vec(), Vec::new()),
            (vec![2; 24], 0x0102_0304_0506_0708u64.to_ne_bytes().to_vec()),
            (vec![3; 24], big),
        ];
        for (h, d) in &sent {
            c.ep.am_send(7, h, d).unwrap();
        }
        c.worker.flush().unwrap();
        let start = Instant::now();
        while got.lock().unwrap().len() < sent.len() {
            assert!(start.elapsed() < Duration::from_secs(60), "{tls}: lost");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(*got.lock().unwrap() == sent, "{tls}: changed or reordered");
        drop(c);
        t.progress.unwrap().stop().unwrap();
    });
}
