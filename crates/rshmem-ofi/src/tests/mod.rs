//! Two endpoints of one process: a target whose registered heap is served by a
//! ProgressThread, and a client used by the test thread. Each test runs on the tcp provider
//! (`tcp;ofi_rxm`, manual progress) and on `sockets`.

use super::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod atomics;
mod errors;
mod layouts;
mod messages;
mod opening;
mod progress;
mod rma;

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
