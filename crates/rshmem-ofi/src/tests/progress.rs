//! Progress threads: asleep while idle, and handing the endpoint to a waiting thread.

use super::*;

#[test]
fn progress_thread_sleeps_when_idle() {
    let _w = watchdog("progress_thread_sleeps_when_idle", 60);
    let Some(ofi) = open(PROVIDERS[0]) else {
        return;
    };
    let ep = ofi.endpoint_with_wait_fd().unwrap();
    let pt = ProgressThread::start(ep.progress_handle()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let r = pt.rounds();
    // Asleep on the queue's wait fd (or in fi_cq_sread, 100 ms per round) rather than
    // spinning.
    assert!(r <= 20, "{r} rounds in 300 ms");
    pt.stop().unwrap();
}

/// A context's endpoint has no wait object (nothing sleeps on it): no fd, no `fi_trywait`
/// (libfabric's `FI_GETWAIT` on such a queue crashed in rxm), and a progress thread over
/// it polls and still stops.
#[test]
fn an_endpoint_without_a_wait_object_is_polled() {
    let _w = watchdog("an_endpoint_without_a_wait_object_is_polled", 60);
    let Some(ofi) = open(PROVIDERS[0]) else {
        return;
    };
    let ep = ofi.endpoint().unwrap();
    let p = ep.progress_handle();
    assert!(p.wait_fd().is_none());
    assert!(!p.trywait());
    let pt = ProgressThread::start(p).unwrap();
    assert!(pt.driver().is_none());
    std::thread::sleep(Duration::from_millis(50));
    assert!(pt.rounds() > 0);
    pt.stop().unwrap();
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
