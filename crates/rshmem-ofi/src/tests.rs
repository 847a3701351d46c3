//! Two endpoints of one process: a target whose registered heap is served by a
//! ProgressThread, and a client used by the test thread. Each test runs on the tcp provider
//! (`tcp;ofi_rxm`, manual progress) and on `sockets`.

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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

// SAFETY: plain memory; tests synchronise through libfabric completions.
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
        assert!(off + 8 <= self.len && off.is_multiple_of(8));
        // SAFETY: in bounds and aligned; volatile since the provider writes behind our back.
        unsafe { std::ptr::read_volatile(self.ptr.add(off).cast::<u64>()) }
    }

    fn write_u64(&self, off: usize, v: u64) {
        assert!(off + 8 <= self.len && off.is_multiple_of(8));
        // SAFETY: as in read_u64.
        unsafe { std::ptr::write_volatile(self.ptr.add(off).cast::<u64>(), v) }
    }

    fn bytes(&self, off: usize, n: usize) -> Vec<u8> {
        assert!(off + n <= self.len);
        // SAFETY: in bounds; no operation is in flight when tests read.
        unsafe { std::slice::from_raw_parts(self.ptr.add(off), n) }.to_vec()
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: our mapping, unmapped once (after the Region, see Target's field order).
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

const HEAP: usize = 4 << 20;
const MIB: usize = 1 << 20;

/// The target side: an endpoint served by a progress thread, and a registered heap, with
/// its name and key as the bytes a peer receives. It opens the provider again, as another
/// process would (its own domain, address vector and key space).
struct Target {
    progress: Option<ProgressThread>,
    _ep: Endpoint,
    _region: Region,
    _ofi: Arc<Ofi>,
    key: Vec<u8>,
    name: Vec<u8>,
    heap: Mmap,
}

impl Target {
    fn new(client_ofi: &Arc<Ofi>) -> Target {
        let ofi = &open(client_ofi.provider()).expect("opened once already");
        assert!(!Arc::ptr_eq(ofi, client_ofi));
        let heap = Mmap::new(HEAP);
        let ep = ofi.endpoint().expect("endpoint");
        let region = ep.register(heap.ptr, heap.len).expect("register");
        assert_eq!(region.addr(), heap.addr(0));
        assert_eq!(region.len(), HEAP);
        let key = region.remote_key().to_bytes().to_vec();
        let name = ep.name().expect("name");
        let progress = ProgressThread::start(ep.progress_handle()).expect("progress thread");
        Target {
            progress: Some(progress),
            _ep: ep,
            _region: region,
            _ofi: ofi.clone(),
            key,
            name,
            heap,
        }
    }

    fn stop(mut self) {
        self.progress.take().unwrap().stop().unwrap();
    }
}

/// A client endpoint with the target's address inserted and key parsed.
struct Client {
    ep: Endpoint,
    peer: Addr,
    key: RemoteKey,
}

fn client(ofi: &Arc<Ofi>, t: &Target) -> Client {
    connect(ofi, &t.name, &t.key)
}

/// A client of the target whose endpoint name and key bytes are given.
fn connect(ofi: &Arc<Ofi>, name: &[u8], key: &[u8]) -> Client {
    let ep = ofi.endpoint().expect("client endpoint");
    let peer = ofi.insert(name).expect("insert");
    let key = RemoteKey::from_bytes(key).expect("key");
    Client { ep, peer, key }
}

const PROVIDERS: [&str; 2] = ["tcp;ofi_rxm", "sockets"];

/// Opens `provider`; None (the test is skipped, saying so) when libfabric is not installed,
/// unless RSHMEM_REQUIRE_OFI=1, which CI sets where it installed it, or when FI_PROVIDER
/// excludes the provider. RSHMEM_OFI_TEST_LIBRARY replaces the library name.
fn open(provider: &str) -> Option<Arc<Ofi>> {
    let library = std::env::var("RSHMEM_OFI_TEST_LIBRARY");
    let required = std::env::var("RSHMEM_REQUIRE_OFI").as_deref() == Ok("1");
    match Ofi::open_with(&OpenOptions {
        library: library.as_deref().unwrap_or(DEFAULT_LIBRARY),
        provider: Some(provider),
        domain: None,
    }) {
        Ok(ofi) => Some(ofi),
        Err(e @ OfiError::Load { .. }) if !required => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e @ OfiError::NoProvider { .. }) if std::env::var("FI_PROVIDER").is_ok() => {
            eprintln!("skipped {provider} (FI_PROVIDER is set): {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn each_provider(f: impl Fn(&Arc<Ofi>, &str)) {
    for p in PROVIDERS {
        if let Some(ofi) = open(p) {
            f(&ofi, p);
        }
    }
}

#[test]
fn load_bogus_library_says_what_to_install() {
    let _w = watchdog("load_bogus_library_says_what_to_install", 30);
    let err = Ofi::open_with(&OpenOptions {
        library: "libfabric-does-not-exist.so.1",
        ..Default::default()
    })
    .expect_err("must fail");
    let msg = err.to_string();
    assert!(msg.contains("libfabric-does-not-exist.so.1"), "{msg}");
    assert!(msg.contains("apt-get install libfabric1"), "{msg}");
    assert!(msg.contains("cannot open shared object file"), "{msg}");
}

#[test]
fn unknown_provider_is_named() {
    let _w = watchdog("unknown_provider_is_named", 30);
    if open(PROVIDERS[0]).is_none() {
        return;
    }
    let err = Ofi::open_with(&OpenOptions {
        provider: Some("no-such-provider"),
        ..Default::default()
    })
    .expect_err("must fail");
    let msg = err.to_string();
    assert!(matches!(err, OfiError::NoProvider { .. }), "{msg}");
    assert!(msg.contains("\"no-such-provider\""), "{msg}");
    assert!(msg.contains("FI_EP_RDM"), "{msg}");
}

#[test]
fn providers_describe_themselves_and_have_every_shmem_atomic() {
    let _w = watchdog("providers_describe_themselves", 60);
    each_provider(|ofi, p| {
        assert_eq!(ofi.provider(), p);
        assert!(
            ofi.library_version() >= (1, 5),
            "{:?}",
            ofi.library_version()
        );
        assert!(ofi.api_version() <= API_VERSION);
        let supported: Vec<String> = AtomicKind::ALL
            .iter()
            .flat_map(|&k| {
                AtomicType::ALL.iter().flat_map(move |&t| {
                    AtomicOp::ALL
                        .iter()
                        .filter(move |&&o| ofi.atomic_supported(k, t, o))
                        .map(move |&o| format!("{k:?}/{o:?}/{t:?}"))
                })
            })
            .collect();
        let lacking: Vec<String> = AtomicKind::ALL
            .iter()
            .flat_map(|&k| {
                AtomicType::ALL.iter().flat_map(move |&t| {
                    AtomicOp::ALL
                        .iter()
                        .filter(move |&&o| k.allows(o) && !ofi.atomic_supported(k, t, o))
                        .map(move |&o| format!("{k:?}/{o:?}/{t:?}"))
                })
            })
            .collect();
        eprintln!(
            "{p}: fabric {} domain {} api {:?} mr_mode {:#x} manual progress {} ordered writes \
             {} delivery complete {} inject {} B; {} atomic forms, lacking: [{}]",
            ofi.fabric_name(),
            ofi.domain_name(),
            ofi.api_version(),
            ofi.mr_mode(),
            ofi.manual_progress(),
            ofi.ordered_writes(),
            ofi.delivery_complete(),
            ofi.inject_size(),
            supported.len(),
            lacking.join(" ")
        );
        ofi.check_shmem_atomics().unwrap();
    });
}

#[test]
fn put_get_8_bytes_and_1_mib() {
    let _w = watchdog("put_get_8_bytes_and_1_mib", 120);
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        c.ep.put(
            &0xdead_beef_cafe_f00du64.to_ne_bytes(),
            c.peer,
            t.heap.addr(64),
            &c.key,
        )
        .unwrap();
        c.ep.quiet().unwrap();
        assert_eq!(t.heap.read_u64(64), 0xdead_beef_cafe_f00d, "{p}");

        let big: Vec<u8> = (0..MIB as u32).map(|i| (i * 7 + 3) as u8).collect();
        c.ep.put(&big, c.peer, t.heap.addr(MIB), &c.key).unwrap();
        c.ep.quiet().unwrap();
        assert!(t.heap.bytes(MIB, MIB) == big, "{p}: 1 MiB put");

        t.heap.write_u64(128, 0x1122_3344_5566_7788);
        let mut got = [0u8; 8];
        c.ep.get(&mut got, c.peer, t.heap.addr(128), &c.key)
            .unwrap();
        assert_eq!(u64::from_ne_bytes(got), 0x1122_3344_5566_7788, "{p}");
        let mut back = vec![0u8; MIB];
        c.ep.get(&mut back, c.peer, t.heap.addr(MIB), &c.key)
            .unwrap();
        assert!(back == big, "{p}: 1 MiB get");
        assert_eq!(c.ep.outstanding(), (0, 0), "{p}");
        assert_eq!(c.ep.issued(), (2, 2), "{p}");
        drop(c);
        t.stop();
    });
}

/// The value of `ty` in `bits` as f64 or i128, for the models below.
fn num(ty: AtomicType, bits: u64) -> f64 {
    match ty {
        AtomicType::F32 => f64::from(f32::from_bits(bits as u32)),
        AtomicType::F64 => f64::from_bits(bits),
        _ => unreachable!(),
    }
}

fn int(ty: AtomicType, bits: u64) -> i128 {
    match ty {
        AtomicType::I32 => i128::from(bits as u32 as i32),
        AtomicType::U32 => i128::from(bits as u32),
        AtomicType::I64 => i128::from(bits as i64),
        AtomicType::U64 => i128::from(bits),
        _ => unreachable!(),
    }
}

fn mask(ty: AtomicType) -> u64 {
    if ty.size() == 4 {
        u32::MAX as u64
    } else {
        u64::MAX
    }
}

/// What `op` leaves in a word holding `old` given `v`.
fn model(ty: AtomicType, op: AtomicOp, old: u64, v: u64) -> u64 {
    let m = mask(ty);
    let float = matches!(ty, AtomicType::F32 | AtomicType::F64);
    let from_f = |x: f64| match ty {
        AtomicType::F32 => u64::from((x as f32).to_bits()),
        _ => x.to_bits(),
    };
    match op {
        AtomicOp::Sum if float => from_f(num(ty, old) + num(ty, v)),
        AtomicOp::Sum => old.wrapping_add(v) & m,
        AtomicOp::Band => old & v,
        AtomicOp::Bor => old | v,
        AtomicOp::Bxor => old ^ v,
        AtomicOp::Min if float => from_f(num(ty, old).min(num(ty, v))),
        AtomicOp::Max if float => from_f(num(ty, old).max(num(ty, v))),
        AtomicOp::Min => [old, v].into_iter().min_by_key(|&x| int(ty, x)).unwrap(),
        AtomicOp::Max => [old, v].into_iter().max_by_key(|&x| int(ty, x)).unwrap(),
        AtomicOp::Write => v,
        AtomicOp::Read => old,
        AtomicOp::CompareSwap => unreachable!(),
    }
}

/// Operands of `ty`: (initial word, operand), chosen so that signed and unsigned min/max
/// differ and the sums carry.
fn operands(ty: AtomicType) -> (u64, u64) {
    match ty {
        AtomicType::I32 | AtomicType::U32 => (0xffff_fff0, 0x0000_0f35),
        AtomicType::I64 | AtomicType::U64 => (0xffff_ffff_ffff_fff0, 0x1_0000_0f35),
        AtomicType::F32 => (u64::from(2.5f32.to_bits()), u64::from((-0.75f32).to_bits())),
        AtomicType::F64 => (2.5f64.to_bits(), (-0.75f64).to_bits()),
    }
}

#[test]
fn every_supported_atomic_gives_the_right_result() {
    let _w = watchdog("every_supported_atomic", 180);
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        // The word at 256; its 8-byte neighbourhood is checked for 4-byte types.
        const OFF: usize = 256;
        const GUARD: u64 = 0xa5a5_a5a5_0000_0000;
        let mut tested = 0;
        for ty in AtomicType::ALL {
            let (init, v) = operands(ty);
            let m = mask(ty);
            let reset = || t.heap.write_u64(OFF, GUARD & !m | init);
            let word = || {
                let w = t.heap.read_u64(OFF);
                assert_eq!(w & !m, GUARD & !m, "{p} {ty:?}: neighbour bytes changed");
                w & m
            };
            for op in AtomicOp::ALL {
                if ofi.atomic_supported(AtomicKind::Post, ty, op) {
                    reset();
                    c.ep.atomic_post(op, ty, v, c.peer, t.heap.addr(OFF), &c.key)
                        .unwrap();
                    c.ep.quiet().unwrap();
                    assert_eq!(word(), model(ty, op, init, v), "{p}: posted {op:?} {ty:?}");
                    tested += 1;
                }
                if ofi.atomic_supported(AtomicKind::Fetch, ty, op) {
                    reset();
                    let old =
                        c.ep.atomic_fetch(op, ty, v, c.peer, t.heap.addr(OFF), &c.key)
                            .unwrap();
                    assert_eq!(old, init, "{p}: fetch {op:?} {ty:?} old value");
                    c.ep.quiet().unwrap();
                    assert_eq!(word(), model(ty, op, init, v), "{p}: fetch {op:?} {ty:?}");
                    tested += 1;
                }
            }
            if ofi.atomic_supported(AtomicKind::Compare, ty, AtomicOp::CompareSwap) {
                reset();
                // Mismatch: old value returned, memory unchanged.
                let old =
                    c.ep.compare_swap(ty, v, v, c.peer, t.heap.addr(OFF), &c.key)
                        .unwrap();
                assert_eq!(old, init, "{p}: cswap {ty:?} mismatch");
                c.ep.quiet().unwrap();
                assert_eq!(word(), init, "{p}: cswap {ty:?} mismatch stored");
                // Match: old value returned, new stored.
                let old =
                    c.ep.compare_swap(ty, init, v, c.peer, t.heap.addr(OFF), &c.key)
                        .unwrap();
                assert_eq!(old, init, "{p}: cswap {ty:?} match");
                c.ep.quiet().unwrap();
                assert_eq!(word(), v, "{p}: cswap {ty:?} match stored");
                tested += 1;
            }
        }
        eprintln!("{p}: {tested} atomic forms checked");
        assert!(tested >= 40, "{p}: only {tested} atomic forms supported");
        drop(c);
        t.stop();
    });
}

#[test]
fn nonblocking_operations_complete_at_quiet() {
    let _w = watchdog("nonblocking_operations_complete_at_quiet", 180);
    const N: usize = 300;
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        // Small (injected) and 64 KiB (pending: longer than the bounce arena takes) writes,
        // interleaved.
        let small: Vec<u64> = (0..N as u64).map(|i| i * 11 + 1).collect();
        let big: Vec<Vec<u8>> = (0..8).map(|i| vec![i as u8 + 1; 64 << 10]).collect();
        let mut injected = 0;
        for (i, v) in small.iter().enumerate() {
            // SAFETY: small outlives the quiet below.
            let r = unsafe {
                c.ep.put_nb(
                    (v as *const u64).cast(),
                    8,
                    c.peer,
                    t.heap.addr(8 * i),
                    &c.key,
                )
            }
            .unwrap();
            injected += usize::from(r == Issued::Done);
            if i % 40 == 0 {
                let b = &big[i / 40];
                // SAFETY: big outlives the quiet below.
                let r = unsafe {
                    c.ep.put_nb(
                        b.as_ptr(),
                        b.len(),
                        c.peer,
                        t.heap.addr(MIB + (64 << 10) * (i / 40)),
                        &c.key,
                    )
                }
                .unwrap();
                assert_eq!(
                    r,
                    Issued::Pending,
                    "{p}: 64 KiB is neither injected nor bounced"
                );
            }
        }
        assert_eq!(injected, N, "{p}: 8-byte puts are injected");
        c.ep.quiet().unwrap();
        assert_eq!(c.ep.outstanding(), (0, 0), "{p}");
        for (i, v) in small.iter().enumerate() {
            assert_eq!(t.heap.read_u64(8 * i), *v, "{p}: word {i}");
        }
        for (j, b) in big.iter().enumerate().take(N.div_ceil(40)) {
            assert!(
                t.heap.bytes(MIB + (64 << 10) * j, 64 << 10) == *b,
                "{p}: block {j}"
            );
        }
        // Non-blocking gets and fetching atomics, completed by wait_reads.
        let mut dst = vec![0u64; N];
        for (i, d) in dst.iter_mut().enumerate() {
            // SAFETY: dst is not touched until wait_reads below.
            unsafe {
                c.ep.get_nb(
                    (d as *mut u64).cast(),
                    8,
                    c.peer,
                    t.heap.addr(8 * i),
                    &c.key,
                )
            }
            .unwrap();
        }
        t.heap.write_u64(3 * MIB, 100);
        let bufs: Vec<AmoBuffer> = (0..16).map(|_| AmoBuffer::new()).collect();
        for b in &bufs {
            // SAFETY: bufs outlive wait_reads below and are not read before.
            unsafe {
                c.ep.atomic_fetch_nb(
                    AtomicOp::Sum,
                    AtomicType::U64,
                    1,
                    c.peer,
                    t.heap.addr(3 * MIB),
                    &c.key,
                    b,
                )
            }
            .unwrap();
        }
        c.ep.wait_reads().unwrap();
        assert_eq!(dst, small, "{p}: non-blocking gets");
        let mut olds: Vec<u64> = bufs.iter().map(|b| b.result(AtomicType::U64)).collect();
        olds.sort_unstable();
        assert_eq!(olds, (100..116).collect::<Vec<_>>(), "{p}: fetch-adds");
        assert_eq!(t.heap.read_u64(3 * MIB), 116, "{p}");
        drop(c);
        t.stop();
    });
}

#[test]
fn posted_atomics_fence_and_quiet() {
    let _w = watchdog("posted_atomics_fence_and_quiet", 120);
    const N: u64 = 200;
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        let (counter, flag) = (t.heap.addr(512), t.heap.addr(520));
        for _ in 0..N {
            c.ep.atomic_post(AtomicOp::Sum, AtomicType::U64, 3, c.peer, counter, &c.key)
                .unwrap();
        }
        // put-with-signal shape: data, fence, then the flag.
        c.ep.put(&[7u8; 64], c.peer, t.heap.addr(1024), &c.key)
            .unwrap();
        c.ep.fence().unwrap();
        c.ep.atomic_post(AtomicOp::Write, AtomicType::U64, 1, c.peer, flag, &c.key)
            .unwrap();
        if !ofi.ordered_writes() {
            // fence waited for the earlier writes: they are done already.
            let (w, _) = c.ep.issued();
            assert_eq!(w, N + 2, "{p}");
        }
        c.ep.quiet().unwrap();
        assert_eq!(c.ep.outstanding(), (0, 0), "{p}");
        assert_eq!(t.heap.read_u64(512), 3 * N, "{p}");
        assert_eq!(t.heap.read_u64(520), 1, "{p}");
        assert!(t.heap.bytes(1024, 64) == [7u8; 64], "{p}");
        drop(c);
        t.stop();
    });
}

#[test]
fn quiet_makes_each_write_visible_at_once() {
    let _w = watchdog("quiet_makes_each_write_visible_at_once", 120);
    const ROUNDS: u64 = 200;
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        let block = vec![0u8; 4096];
        for i in 1..=ROUNDS {
            // Injected put, posted atomic, and a put too long to inject: each must be in the
            // target's memory when quiet returns (delivery, not just transmission).
            c.ep.put(&i.to_ne_bytes(), c.peer, t.heap.addr(0), &c.key)
                .unwrap();
            c.ep.atomic_post(
                AtomicOp::Sum,
                AtomicType::U64,
                1,
                c.peer,
                t.heap.addr(8),
                &c.key,
            )
            .unwrap();
            let mut b = block.clone();
            b[4095] = i as u8;
            // SAFETY: b outlives the quiet below.
            unsafe {
                c.ep.put_nb(b.as_ptr(), b.len(), c.peer, t.heap.addr(4096), &c.key)
            }
            .unwrap();
            c.ep.quiet().unwrap();
            assert_eq!(t.heap.read_u64(0), i, "{p}: injected put, round {i}");
            assert_eq!(t.heap.read_u64(8), i, "{p}: posted atomic, round {i}");
            assert_eq!(
                t.heap.bytes(8191, 1)[0],
                i as u8,
                "{p}: 4 KiB put, round {i}"
            );
        }
        drop(c);
        t.stop();
    });
}

#[test]
fn fetch_add_from_two_threads_is_exact() {
    let _w = watchdog("fetch_add_from_two_threads_is_exact", 180);
    const N: u64 = 300;
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let (name, key, heap) = (&t.name, &t.key, &t.heap);
        let olds: Vec<(Vec<u64>, Vec<u64>)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let c = connect(ofi, name, key);
                        let (mut o32, mut o64) = (Vec::new(), Vec::new());
                        for _ in 0..N {
                            o32.push(
                                c.ep.atomic_fetch(
                                    AtomicOp::Sum,
                                    AtomicType::U32,
                                    1,
                                    c.peer,
                                    heap.addr(0),
                                    &c.key,
                                )
                                .unwrap(),
                            );
                            o64.push(
                                c.ep.atomic_fetch(
                                    AtomicOp::Sum,
                                    AtomicType::I64,
                                    3,
                                    c.peer,
                                    heap.addr(8),
                                    &c.key,
                                )
                                .unwrap(),
                            );
                        }
                        (o32, o64)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(t.heap.read_u64(0) as u32, 2 * N as u32, "{p}");
        assert_eq!(t.heap.read_u64(8), 2 * N * 3, "{p}");
        let mut all32: Vec<u64> = olds.iter().flat_map(|o| o.0.iter().copied()).collect();
        let mut all64: Vec<u64> = olds.iter().flat_map(|o| o.1.iter().copied()).collect();
        all32.sort_unstable();
        all64.sort_unstable();
        assert_eq!(all32, (0..2 * N).collect::<Vec<_>>(), "{p}");
        assert_eq!(all64, (0..2 * N).map(|i| 3 * i).collect::<Vec<_>>(), "{p}");
        t.stop();
    });
}

#[test]
fn bad_arguments_are_refused() {
    let _w = watchdog("bad_arguments_are_refused", 60);
    let Some(ofi) = open(PROVIDERS[0]) else {
        return;
    };
    let t = Target::new(&ofi);
    let c = client(&ofi, &t);
    let e =
        c.ep.put(&[0u8; 16], c.peer, t.heap.addr(HEAP - 8), &c.key)
            .unwrap_err();
    assert!(e.to_string().contains("Endpoint::put_nb"), "{e}");
    assert!(e.to_string().contains("outside the remote region"), "{e}");
    let e =
        c.ep.get(&mut [0u8; 8], c.peer, t.heap.addr(0) - 8, &c.key)
            .unwrap_err();
    assert!(e.to_string().contains("outside the remote region"), "{e}");
    let e =
        c.ep.atomic_post(
            AtomicOp::Read,
            AtomicType::U64,
            0,
            c.peer,
            t.heap.addr(0),
            &c.key,
        )
        .unwrap_err();
    assert!(e.to_string().contains("Read has no Post form"), "{e}");
    let e = RemoteKey::from_bytes(&[1, 2, 3]).unwrap_err();
    assert!(
        e.to_string().contains("RemoteKey::from_bytes: 3 bytes"),
        "{e}"
    );
    assert!(ofi.insert(&[]).is_err());
    assert!(ofi.register(std::ptr::null_mut(), 8).is_err());
    let mut x = 0u64;
    assert!(ofi.register((&mut x as *mut u64).cast(), 0).is_err());
    // Nothing was issued by the refused calls.
    assert_eq!(c.ep.issued(), (0, 0));
    drop(c);
    t.stop();
}

#[test]
fn endpoints_of_one_ofi_reach_each_other() {
    let _w = watchdog("endpoints_of_one_ofi_reach_each_other", 60);
    // A PE's own contexts and its service endpoint share one domain.
    each_provider(|ofi, p| {
        let heap = Mmap::new(MIB);
        let region = ofi.register(heap.ptr, heap.len).unwrap();
        let service = ofi.endpoint().unwrap();
        let pt = ProgressThread::start(service.progress_handle()).unwrap();
        let c = connect(
            ofi,
            &service.name().unwrap(),
            &region.remote_key().to_bytes(),
        );
        c.ep.put(&42u64.to_ne_bytes(), c.peer, heap.addr(8), &c.key)
            .unwrap();
        c.ep.quiet().unwrap();
        assert_eq!(heap.read_u64(8), 42, "{p}");
        let old =
            c.ep.atomic_fetch(
                AtomicOp::Sum,
                AtomicType::I64,
                -2i64 as u64,
                c.peer,
                heap.addr(8),
                &c.key,
            )
            .unwrap();
        assert_eq!(old, 42, "{p}");
        let mut got = [0u8; 8];
        c.ep.get(&mut got, c.peer, heap.addr(8), &c.key).unwrap();
        assert_eq!(u64::from_ne_bytes(got), 40, "{p}");
        drop(c);
        pt.stop().unwrap();
        drop((service, region));
    });
}

#[test]
fn messages_arrive_whole_and_in_order_per_sender() {
    let _w = watchdog("messages_arrive_whole_and_in_order_per_sender", 60);
    each_provider(|ofi, p| {
        if !ofi.ordered_messages() {
            eprintln!("skipped {p}: no ordered messages");
            return;
        }
        let target = open(p).unwrap();
        let service = target.endpoint_with_wait_fd().unwrap();
        // (sender, sequence) of each message, in the order handled.
        let got = Arc::new(std::sync::Mutex::new(Vec::<(u8, u32)>::new()));
        let g = got.clone();
        service
            .receive_messages(
                4,
                1024,
                Box::new(move |m: &[u8]| {
                    let seq = u32::from_ne_bytes(m[1..5].try_into().unwrap());
                    assert_eq!(m.len(), len_of(seq), "a whole message");
                    assert!(m[5..].iter().all(|&b| b == m[0] ^ seq as u8), "its bytes");
                    g.lock().unwrap().push((m[0], seq));
                }),
            )
            .unwrap();
        assert!(service.receive_messages(1, 8, Box::new(|_| {})).is_err());
        let pt = ProgressThread::start(service.progress_handle()).unwrap();
        let name = service.name().unwrap();
        const N: u32 = 500;
        // Injected and not: tcp;ofi_rxm injects up to 64 bytes.
        fn len_of(seq: u32) -> usize {
            [40, 64, 65, 300, 1000][seq as usize % 5]
        }
        let senders: Vec<_> = (0..2u8)
            .map(|who| {
                let ofi = ofi.clone();
                let name = name.clone();
                std::thread::spawn(move || {
                    let ep = ofi.endpoint().unwrap();
                    let peer = ofi.insert(&name).unwrap();
                    for seq in 0..N {
                        let mut m = vec![who ^ seq as u8; len_of(seq)];
                        m[0] = who;
                        m[1..5].copy_from_slice(&seq.to_ne_bytes());
                        ep.send_message(&m, peer).unwrap();
                    }
                    ep.quiet().unwrap();
                    let too_long = vec![0u8; Endpoint::MESSAGE_MAX + 1];
                    assert!(ep.send_message(&too_long, peer).is_err());
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        let start = Instant::now();
        while got.lock().unwrap().len() < 2 * N as usize {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{p}: messages lost"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let got = got.lock().unwrap();
        for who in 0..2u8 {
            let seqs: Vec<u32> = got.iter().filter(|m| m.0 == who).map(|m| m.1).collect();
            assert_eq!(
                seqs,
                (0..N).collect::<Vec<_>>(),
                "{p}: sender {who} in order"
            );
        }
        drop(got);
        pt.stop().unwrap();
    });
}

#[test]
fn a_failed_operation_is_reported_not_waited_for() {
    let _w = watchdog("a_failed_operation_is_reported_not_waited_for", 60);
    let Some(ofi) = open(PROVIDERS[1]) else {
        return;
    };
    let t = Target::new(&ofi);
    let mut c = client(&ofi, &t);
    let good = c.key;
    // A key the target never registered: the target refuses the access. (On sockets: the
    // tcp provider of libfabric 1.17 drops such a request with a warning and never answers,
    // so the initiator would wait for ever; keys are whole-region and ranges are checked
    // here, so only a corrupted key gets there.)
    c.key.key ^= 0x5a5a_0000;
    let e =
        c.ep.get(&mut [0u8; 8], c.peer, t.heap.addr(0), &c.key)
            .unwrap_err();
    assert!(matches!(e, OfiError::Failed { .. }), "{e}");
    assert!(e.to_string().contains("sockets"), "{e}");
    eprintln!("reported: {e}");
    // The error was reported once; the endpoint still works with the right key.
    c.key = good;
    t.heap.write_u64(0, 9);
    let mut got = [0u8; 8];
    c.ep.get(&mut got, c.peer, t.heap.addr(0), &c.key).unwrap();
    assert_eq!(u64::from_ne_bytes(got), 9);
    c.ep.quiet().unwrap();
    drop(c);
    t.stop();
}

#[test]
fn progress_thread_sleeps_when_idle() {
    let _w = watchdog("progress_thread_sleeps_when_idle", 60);
    let Some(ofi) = open(PROVIDERS[0]) else {
        return;
    };
    let ep = ofi.endpoint().unwrap();
    let pt = ProgressThread::start(ep.progress_handle()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let r = pt.rounds();
    // Sleeping in fi_cq_sread (100 ms per round) rather than spinning.
    assert!(r <= 20, "{r} rounds in 300 ms");
    pt.stop().unwrap();
}

/// Puts longer than the provider injects but within the bounce limit return at once
/// (their source is copied): one source buffer, rewritten between puts, lands intact, also
/// once the puts outrun the arena (which then waits for the endpoint's writes).
#[test]
fn bounced_puts_free_their_source_at_once() {
    let _w = watchdog("bounced_puts_free_their_source_at_once", 120);
    const LEN: usize = 16 << 10;
    const N: usize = 200; // 3.2 MiB: the 1 MiB arena fills three times
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        let mut src = vec![0u8; LEN];
        for i in 0..N {
            src.fill(i as u8 ^ 0x5a);
            src[..8].copy_from_slice(&(i as u64).to_ne_bytes());
            // SAFETY: src is live; the put copies it (asserted Done).
            let r = unsafe {
                c.ep.put_nb(src.as_ptr(), LEN, c.peer, t.heap.addr(LEN * i), &c.key)
            }
            .unwrap();
            assert_eq!(r, Issued::Done, "{p}: a 16 KiB put is bounced");
        }
        c.ep.quiet().unwrap();
        for i in 0..N {
            let got = t.heap.bytes(LEN * i, LEN);
            assert_eq!(&got[..8], &(i as u64).to_ne_bytes(), "{p}: put {i}");
            assert!(
                got[8..].iter().all(|&b| b == i as u8 ^ 0x5a),
                "{p}: put {i}"
            );
        }
        drop(c);
        t.stop();
    });
}

/// Over `tcp;ofi_rxm` the service endpoint's queue has a wait fd: the progress thread
/// sleeps on it while idle, is not woken while a waiting thread holds the endpoint (the
/// claimant serves the peer), and serves again once it is handed back.
#[test]
fn a_claimant_serves_the_peer_and_the_thread_stays_asleep() {
    let _w = watchdog("a_claimant_serves_the_peer_and_the_thread_stays_asleep", 60);
    let Some(ofi) = open(PROVIDERS[0]) else {
        return;
    };
    let tofi = open(PROVIDERS[0]).unwrap();
    let heap = Mmap::new(HEAP);
    let ep = tofi.endpoint_with_wait_fd().unwrap();
    assert!(
        ep.progress_handle().wait_fd().is_some(),
        "tcp;ofi_rxm has a wait fd"
    );
    let region = ep.register(heap.ptr, heap.len).unwrap();
    let pt = ProgressThread::start(ep.progress_handle()).unwrap();
    let driver = pt.driver().expect("a driver where the queue has a wait fd");
    let c = connect(&ofi, &ep.name().unwrap(), &region.remote_key().to_bytes());
    let fadd = |n: u64| {
        for _ in 0..n {
            c.ep.atomic_fetch(
                AtomicOp::Sum,
                AtomicType::U64,
                1,
                c.peer,
                heap.addr(0),
                &c.key,
            )
            .unwrap();
        }
    };
    fadd(10); // connected, served by the thread
    std::thread::sleep(Duration::from_millis(300));
    let idle = pt.rounds();
    std::thread::sleep(Duration::from_millis(300));
    assert!(pt.rounds() - idle <= 2, "the thread woke while idle");
    let stop = Arc::new(AtomicBool::new(false));
    let (claimed_tx, claimed_rx) = std::sync::mpsc::channel();
    let claimant = {
        let (driver, stop) = (driver.clone(), stop.clone());
        std::thread::spawn(move || {
            let _claim = driver.drive();
            claimed_tx.send(()).unwrap();
            let mut woken = 0u64;
            while !stop.load(Ordering::Acquire) {
                driver.progress();
                woken += u64::from(driver.sleep(Duration::from_millis(10)));
            }
            woken
        })
    };
    claimed_rx.recv().unwrap();
    let before = pt.rounds();
    fadd(200);
    let during = pt.rounds() - before;
    stop.store(true, Ordering::Release);
    let woken = claimant.join().unwrap();
    assert!(during <= 2, "the thread woke {during} times while claimed");
    assert!(woken > 0, "the claimant's naps never ended early");
    fadd(10); // handed back: the thread serves again
    assert_eq!(heap.read_u64(0), 220);
    drop(c);
    pt.stop().unwrap();
}

/// The hand-written layouts of `bindings.rs` against the headers' `offsetof`/`sizeof`,
/// where the headers (libfabric-dev) and a C compiler are installed.
#[test]
fn layouts_match_the_headers() {
    use bindings::*;
    use std::mem::{offset_of, size_of};
    let _w = watchdog("layouts_match_the_headers", 60);
    if !std::path::Path::new("/usr/include/rdma/fi_atomic.h").exists() {
        eprintln!("skipped: libfabric's headers are not installed (libfabric-dev)");
        return;
    }
    macro_rules! fields {
        ($($s:ident { $($f:ident $(= $c:ident)?),* }),* $(,)?) => {
            vec![$(
                (stringify!($s).to_string(), "sizeof".to_string(), size_of::<$s>()),
                $((stringify!($s).to_string(), fields!(@c $f $($c)?), offset_of!($s, $f)),)*
            )*]
        };
        (@c $f:ident) => { stringify!($f).to_string() };
        (@c $f:ident $c:ident) => { stringify!($c).to_string() };
    }
    let rust = fields![
        fi_ops { size, close, bind, control, ops_set },
        fid { fclass, context, ops },
        fi_tx_attr { op_flags, msg_order, inject_size, tclass },
        fi_rx_attr { caps, iov_limit },
        fi_ep_attr { type_ = type, protocol, max_msg_size, auth_key },
        fi_domain_attr { name, threading, data_progress, av_type, mr_mode, mr_key_size, caps, tclass },
        fi_fabric_attr { name, prov_name, prov_version, api_version },
        fi_info { next, caps, mode, addr_format, src_addrlen, handle, tx_attr, ep_attr, domain_attr, fabric_attr, nic },
        fi_ops_fabric { domain, trywait, domain2 },
        fid_fabric { fid, ops, api_version },
        fi_av_attr { type_ = type, count, name, flags },
        fi_cq_attr { size, flags, format, wait_obj, wait_cond, wait_set },
        fi_cntr_attr { events, wait_obj, wait_set, flags },
        fi_atomic_attr { count, size },
        fi_ops_domain { av_open, cq_open, endpoint, cntr_open, query_atomic, endpoint2 },
        fi_ops_mr { reg, regattr },
        fid_domain { fid, ops, mr },
        fi_ops_av { insert, av_set },
        fid_av { fid, ops },
        fid_mr { fid, mem_desc, key },
        fi_ops_ep { cancel, tx_size_left },
        fi_ops_cm { getname, join },
        fi_rma_iov { addr, len, key },
        fi_msg_rma { msg_iov, desc, iov_count, addr, rma_iov, rma_iov_count, context, data },
        fi_ioc { addr, count },
        fi_rma_ioc { addr, count, key },
        fi_msg_atomic { msg_iov, iov_count, addr, rma_iov, rma_iov_count, datatype, op, context, data },
        fi_ops_rma { read, write, writemsg, inject, injectdata },
        fi_ops_atomic { write, writemsg, inject, readwrite, compwrite, compwritevalid },
        fid_ep { fid, ops, cm, msg, rma, atomic, collective },
        fi_msg { msg_iov, desc, iov_count, addr, context, data },
        fi_ops_msg { recv, recvmsg, send, sendmsg, inject, injectdata },
        fi_cq_msg_entry { op_context, flags, len },
        fi_cq_err_entry { flags, olen, err, prov_errno, err_data, err_data_size },
        fi_ops_cq { read, readerr, sread, signal, strerror },
        fid_cq { fid, ops },
        fi_ops_cntr { read, readerr, wait, seterr },
        fid_cntr { fid, ops },
        fi_cq_entry { op_context },
    ];
    let consts: Vec<(&str, i128)> = vec![
        ("FI_RMA", FI_RMA.into()),
        ("FI_ATOMIC", FI_ATOMIC.into()),
        ("FI_READ", FI_READ.into()),
        ("FI_WRITE", FI_WRITE.into()),
        ("FI_RECV", FI_RECV.into()),
        ("FI_TRANSMIT", FI_TRANSMIT.into()),
        ("FI_REMOTE_READ", FI_REMOTE_READ.into()),
        ("FI_REMOTE_WRITE", FI_REMOTE_WRITE.into()),
        ("FI_DELIVERY_COMPLETE", FI_DELIVERY_COMPLETE.into()),
        ("FI_INJECT", FI_INJECT.into()),
        ("FI_SELECTIVE_COMPLETION", FI_SELECTIVE_COMPLETION.into()),
        ("FI_FETCH_ATOMIC", FI_FETCH_ATOMIC.into()),
        ("FI_COMPARE_ATOMIC", FI_COMPARE_ATOMIC.into()),
        ("FI_MR_VIRT_ADDR", FI_MR_VIRT_ADDR.into()),
        ("FI_MR_ALLOCATED", FI_MR_ALLOCATED.into()),
        ("FI_MR_PROV_KEY", FI_MR_PROV_KEY.into()),
        ("FI_MR_LOCAL", FI_MR_LOCAL.into()),
        ("FI_MR_ENDPOINT", FI_MR_ENDPOINT.into()),
        ("FI_ORDER_WAW", FI_ORDER_WAW.into()),
        ("FI_ORDER_SAS", FI_ORDER_SAS.into()),
        ("FI_MSG", FI_MSG.into()),
        ("FI_SEND", FI_SEND.into()),
        ("FI_COMPLETION", FI_COMPLETION.into()),
        ("FI_CQ_FORMAT_MSG", FI_CQ_FORMAT_MSG.into()),
        ("FI_EP_RDM", FI_EP_RDM.into()),
        ("FI_AV_TABLE", FI_AV_TABLE.into()),
        ("FI_PROGRESS_MANUAL", FI_PROGRESS_MANUAL.into()),
        ("FI_THREAD_SAFE", FI_THREAD_SAFE.into()),
        ("FI_WAIT_UNSPEC", FI_WAIT_UNSPEC.into()),
        ("FI_WAIT_FD", FI_WAIT_FD.into()),
        ("FI_GETWAIT", FI_GETWAIT.into()),
        ("FI_CQ_FORMAT_CONTEXT", FI_CQ_FORMAT_CONTEXT.into()),
        ("FI_ENABLE", FI_ENABLE.into()),
        ("FI_INT32", FI_INT32.into()),
        ("FI_UINT64", FI_UINT64.into()),
        ("FI_FLOAT", FI_FLOAT.into()),
        ("FI_DOUBLE", FI_DOUBLE.into()),
        ("FI_MIN", FI_MIN.into()),
        ("FI_SUM", FI_SUM.into()),
        ("FI_BOR", FI_BOR.into()),
        ("FI_BAND", FI_BAND.into()),
        ("FI_BXOR", FI_BXOR.into()),
        ("FI_ATOMIC_READ", FI_ATOMIC_READ.into()),
        ("FI_ATOMIC_WRITE", FI_ATOMIC_WRITE.into()),
        ("FI_CSWAP", FI_CSWAP.into()),
        ("FI_EAGAIN", FI_EAGAIN.into()),
        ("FI_ENODATA", FI_ENODATA.into()),
        ("FI_ETOOSMALL", FI_ETOOSMALL.into()),
        ("FI_EAVAIL", FI_EAVAIL.into()),
        ("FABRIC_MAJOR_MINOR_GE_1_17", 1),
    ];
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <rdma/fabric.h>\n\
         #include <rdma/fi_domain.h>\n#include <rdma/fi_endpoint.h>\n#include <rdma/fi_cm.h>\n\
         #include <rdma/fi_rma.h>\n#include <rdma/fi_atomic.h>\n#include <rdma/fi_eq.h>\n\
         #include <rdma/fi_errno.h>\n\
         #define FABRIC_MAJOR_MINOR_GE_1_17 (FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >= FI_VERSION(1, 17))\n\
         int main(void) {\n",
    );
    for (s, f, _) in &rust {
        if f == "sizeof" {
            c += &format!("printf(\"{s} sizeof %zu\\n\", sizeof(struct {s}));\n");
        } else {
            c += &format!("printf(\"{s} {f} %zu\\n\", offsetof(struct {s}, {f}));\n");
        }
    }
    for (n, _) in &consts {
        c += &format!("printf(\"const {n} %lld\\n\", (long long)({n}));\n");
    }
    c += "return 0; }\n";
    let dir = std::env::temp_dir().join(format!("rshmem-ofi-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (src, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&src, c).unwrap();
    let cc = std::process::Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output();
    let cc = match cc {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: no C compiler ({e})");
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
    };
    assert!(
        cc.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let out = std::process::Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    for (s, f, v) in &rust {
        let l = lines.next().expect("a line per field");
        assert_eq!(l, format!("{s} {f} {v}"), "layout of struct {s}");
    }
    for (n, v) in &consts {
        let l = lines.next().expect("a line per constant");
        assert_eq!(l, format!("const {n} {v}"), "constant {n}");
    }
}
