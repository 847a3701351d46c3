//! Puts and gets: blocking, non-blocking, bounced, and between endpoints of one domain.

use super::*;

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

#[test]
fn a_run_of_puts_is_delivered_at_quiet_and_fence_by_one_read_back() {
    let _w = watchdog(
        "a_run_of_puts_is_delivered_at_quiet_and_fence_by_one_read_back",
        120,
    );
    const N: usize = 200;
    each_provider(|ofi, p| {
        let t = Target::new(ofi);
        let c = client(ofi, &t);
        // Both serve reads after earlier writes to the same peer.
        let flush = ofi.flushes_by_read();
        assert!(flush, "{p}");
        let (w0, r0) = c.ep.issued();
        for round in 0..3u64 {
            // Injected (8 B), bounced (4 KiB) and zero-copy (64 KiB) puts, in a run.
            let big = vec![round as u8 + 1; 64 << 10];
            let mid = vec![round as u8 + 9; 4 << 10];
            for i in 0..N {
                let v = round * 1000 + i as u64;
                c.ep.put(&v.to_ne_bytes(), c.peer, t.heap.addr(8 * i), &c.key)
                    .unwrap();
            }
            c.ep.put(&mid, c.peer, t.heap.addr(MIB), &c.key).unwrap();
            c.ep.put(&big, c.peer, t.heap.addr(2 * MIB), &c.key)
                .unwrap();
            if round == 1 {
                c.ep.fence().unwrap();
            } else {
                c.ep.quiet().unwrap();
            }
            for i in 0..N {
                assert_eq!(t.heap.read_u64(8 * i), round * 1000 + i as u64, "{p}");
            }
            assert!(t.heap.bytes(MIB, 4 << 10) == mid, "{p}: 4 KiB put");
            assert!(t.heap.bytes(2 * MIB, 64 << 10) == big, "{p}: 64 KiB put");
        }
        c.ep.quiet().unwrap();
        // One read back per flush that followed more than one put: at each quiet, and at
        // the fence where the provider does not order writes (tcp;ofi_rxm; sockets does).
        let (w, r) = c.ep.issued();
        assert_eq!(w - w0, 3 * (N as u64 + 2), "{p}");
        let fenced = u64::from(!ofi.ordered_writes());
        assert_eq!(r - r0, 2 + fenced, "{p}");
        // A single put and quiet reads nothing back: it completed at delivery.
        c.ep.put(&7u64.to_ne_bytes(), c.peer, t.heap.addr(0), &c.key)
            .unwrap();
        c.ep.quiet().unwrap();
        assert_eq!(t.heap.read_u64(0), 7, "{p}");
        assert_eq!(c.ep.issued().1, r, "{p}");
        drop(c);
        t.stop();
    });
}
