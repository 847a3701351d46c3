//! Remote atomics against a model of each operation, posted, and from two threads.

use super::*;

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
