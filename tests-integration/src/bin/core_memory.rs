//! Symmetric heap management in rshmem-core, run under `oshrun`: `core_memory <mode>`.
//!
//! - `heap`: malloc/calloc/align/realloc/free/malloc_with_hints; size 0 gives null;
//!   calloc zeroes reused (dirty) memory; alignment is honoured on the addresses; realloc
//!   keeps contents when growing, shrinking and moving; every PE gets the same heap
//!   offsets (published to PE 0 and compared); blocks are usable remotely; the heap is
//!   whole again after the frees. Bad input: NotAllocated, InvalidArgument.
//! - `align_large`: shmem_align with alignments from 8 KiB to 16 MiB (addresses aligned,
//!   offsets identical on every PE);
//! - `exhaust` (run with `SHMEM_SYMMETRIC_SIZE=1M`): allocations beyond the heap fail with
//!   a message naming SHMEM_SYMMETRIC_SIZE and the sizes; a failed realloc keeps the block.
//! - `mismatch` (run with `SHMEM_DEBUG=1`, np >= 2): PEs pass different sizes to malloc;
//!   a PE that sees the mismatch reports it with `fatal`, ending the job non-zero.
//!
//! Prints `ok <mode> pe=<me>`.
#![allow(unsafe_code)]

use rshmem_core::Ctx;
use rshmem_core::{amo, memory, rma, runtime, setup, sync, AmoOp, Error};

fn heap_start() -> usize {
    runtime::try_runtime().unwrap().heap_range().0
}

fn fill(p: *mut u8, len: usize, seed: u8) {
    for i in 0..len {
        // SAFETY: callers pass their own symmetric blocks of at least `len` bytes.
        unsafe { p.add(i).write(seed.wrapping_add(i as u8).wrapping_mul(7)) };
    }
}

#[track_caller]
fn check(p: *const u8, len: usize, seed: u8, what: &str) {
    for i in 0..len {
        // SAFETY: as `fill`.
        let v = unsafe { p.add(i).read() };
        assert_eq!(
            v,
            seed.wrapping_add(i as u8).wrapping_mul(7),
            "{what}: byte {i}"
        );
    }
}

fn put(dest: *mut u8, src: &[u8], pe: usize) {
    // SAFETY: `src` is a live slice.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_putmem",
            dest,
            src.as_ptr(),
            src.len(),
            pe as i64,
        )
        .unwrap()
    }
}

fn get(dest: &mut [u8], src: *const u8, pe: usize) {
    // SAFETY: `dest` is a live slice.
    unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            "shmem_getmem",
            dest.as_mut_ptr(),
            src,
            dest.len(),
            pe as i64,
        )
        .unwrap()
    }
}

/// Every PE sends the heap offsets of `ptrs` to PE 0 (into `table`, one row of `ptrs.len()`
/// u64s per PE); then every PE reads the table and checks that all rows equal its own.
fn same_offsets_everywhere(table: *mut u64, ptrs: &[*mut u8], me: usize, n: usize, what: &str) {
    let start = heap_start();
    let mine: Vec<u64> = ptrs
        .iter()
        .map(|&p| {
            if p.is_null() {
                u64::MAX
            } else {
                (p as usize - start) as u64
            }
        })
        .collect();
    let row = mine.len();
    // SAFETY: `mine` is a live local; `table` has n rows of `row` u64s.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_put64",
            table.add(me * row).cast(),
            mine.as_ptr().cast(),
            row * 8,
            0,
        )
        .unwrap()
    };
    sync::barrier_all().unwrap();
    let mut all = vec![0u64; n * row];
    // SAFETY: `all` is a live local of n*row u64s.
    unsafe {
        rma::ctx_get(
            Ctx::default_ctx(),
            "shmem_get64",
            all.as_mut_ptr().cast(),
            table.cast(),
            n * row * 8,
            0,
        )
        .unwrap()
    };
    for pe in 0..n {
        assert_eq!(
            &all[pe * row..(pe + 1) * row],
            &mine[..],
            "{what}: PE {pe}'s heap offsets differ from PE {me}'s"
        );
    }
    sync::barrier_all().unwrap();
}

fn heap_mode(me: usize, n: usize) {
    let free0 = memory::heap_free().unwrap();
    assert!(free0 > 0 && free0 <= memory::heap_size().unwrap());
    let table = memory::malloc("shmem_malloc", n * 64 * 8).unwrap() as *mut u64;
    assert!(!table.is_null());

    // Size 0: null, for every allocator.
    assert!(memory::malloc("shmem_malloc", 0).unwrap().is_null());
    assert!(memory::calloc("shmem_calloc", 0, 8).unwrap().is_null());
    assert!(memory::calloc("shmem_calloc", 8, 0).unwrap().is_null());
    assert!(memory::align("shmem_align", 64, 0).unwrap().is_null());
    assert!(
        memory::malloc_with_hints("shmem_malloc_with_hints", 0, memory::HINT_ATOMICS_REMOTE)
            .unwrap()
            .is_null()
    );
    assert!(memory::realloc("shmem_realloc", std::ptr::null_mut(), 0)
        .unwrap()
        .is_null());
    memory::free("shmem_free", std::ptr::null_mut()).unwrap();

    // A mix of sizes and alignments; offsets identical on every PE.
    let mut ptrs = Vec::new();
    let sizes = [1usize, 7, 8, 63, 64, 65, 100, 4096, 5000, 1 << 20, 3];
    for (i, &s) in sizes.iter().enumerate() {
        let p = memory::malloc("shmem_malloc", s).unwrap();
        assert!(!p.is_null());
        assert_eq!(
            p as usize % rshmem_core::MIN_ALIGN,
            0,
            "malloc({s}) alignment"
        );
        fill(p, s, i as u8);
        ptrs.push(p);
    }
    for (i, &a) in [8usize, 16, 32, 64, 128, 256, 1024, 4096]
        .iter()
        .enumerate()
    {
        let p = memory::align("shmem_align", a, 24 + i).unwrap();
        assert!(!p.is_null());
        assert_eq!(
            p as usize % a,
            0,
            "shmem_align({a}) returned {p:p}, not aligned"
        );
        ptrs.push(p);
    }
    let h = memory::malloc_with_hints(
        "shmem_malloc_with_hints",
        256,
        memory::HINT_ATOMICS_REMOTE | memory::HINT_SIGNAL_REMOTE,
    )
    .unwrap();
    let h0 = memory::malloc_with_hints("shmem_malloc_with_hints", 256, 0).unwrap();
    ptrs.extend([h, h0]);
    same_offsets_everywhere(table, &ptrs, me, n, "malloc/align/with_hints");
    for (i, &s) in sizes.iter().enumerate() {
        check(ptrs[i], s, i as u8, &format!("block {i} of {s} bytes"));
    }

    // Hinted blocks take remote atomics and puts.
    // SAFETY: `h` is a symmetric block of 256 bytes, aligned.
    unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_add",
            h.cast(),
            AmoOp::Add(me as u64 + 1),
            0,
        )
        .unwrap()
    };
    put(h0.wrapping_add(me), &[me as u8 + 1], (me + 1) % n);
    sync::barrier_all().unwrap();
    if me == 0 {
        // SAFETY: our own symmetric word.
        let v = unsafe {
            amo::ctx_atomic::<u64>(
                Ctx::default_ctx(),
                "shmem_atomic_fetch",
                h.cast(),
                AmoOp::Fetch,
                0,
            )
            .unwrap()
        };
        assert_eq!(v, (n * (n + 1) / 2) as u64);
    }
    let left = (me + n - 1) % n;
    // SAFETY: our own symmetric block, written before the barrier.
    assert_eq!(unsafe { h0.add(left).read() }, left as u8 + 1);
    sync::barrier_all().unwrap();

    for p in ptrs.drain(..).rev() {
        memory::free("shmem_free", p).unwrap();
    }

    // calloc zeroes memory that was dirty: the same block comes back (first fit).
    let d = memory::malloc("shmem_malloc", 3000).unwrap();
    fill(d, 3000, 0xC3);
    memory::free("shmem_free", d).unwrap();
    let c = memory::calloc("shmem_calloc", 750, 4).unwrap();
    assert_eq!(c, d, "calloc should reuse the freed block");
    for i in 0..3000 {
        // SAFETY: `c` is our own block of 3000 bytes.
        assert_eq!(unsafe { c.add(i).read() }, 0, "calloc byte {i} not zero");
    }
    let c2 = memory::calloc("shmem_calloc", 3, 1000).unwrap();
    same_offsets_everywhere(table, &[c, c2], me, n, "calloc");

    // realloc: grow in place, shrink, grow by moving (a blocker sits right behind).
    let r = memory::malloc("shmem_malloc", 100).unwrap();
    fill(r, 100, 9);
    let r = memory::realloc("shmem_realloc", r, 10_000).unwrap();
    check(r, 100, 9, "realloc grow");
    fill(r, 10_000, 10);
    let r = memory::realloc("shmem_realloc", r, 50).unwrap();
    check(r, 50, 10, "realloc shrink");
    let blocker = memory::malloc("shmem_malloc", 64).unwrap();
    let r2 = memory::realloc("shmem_realloc", r, 200_000).unwrap();
    check(r2, 50, 10, "realloc move");
    same_offsets_everywhere(table, &[r, blocker, r2], me, n, "realloc");
    // The new block is symmetric: write the neighbour's copy at its far end.
    put(r2.wrapping_add(199_999), &[me as u8 ^ 0x5A], (me + 1) % n);
    sync::barrier_all().unwrap();
    // SAFETY: our own block of 200_000 bytes, written before the barrier.
    assert_eq!(unsafe { r2.add(199_999).read() }, left as u8 ^ 0x5A);
    let mut back = [0u8; 50];
    get(&mut back, r2, (me + 1) % n);
    check(back.as_ptr(), 50, 10, "realloc'd block read remotely");
    sync::barrier_all().unwrap();
    // realloc(NULL, n) allocates; realloc(p, 0) frees.
    let r3 = memory::realloc("shmem_realloc", std::ptr::null_mut(), 128).unwrap();
    assert!(!r3.is_null());
    assert!(memory::realloc("shmem_realloc", r3, 0).unwrap().is_null());

    // Bad input.
    let stack = [0u8; 16];
    let e = memory::free("shmem_free", stack.as_ptr() as *mut u8).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotAllocated {
                routine: "shmem_free",
                arg: "ptr",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("shmem_free") && e.to_string().contains("ptr"),
        "{e}"
    );
    let e = memory::align("shmem_align", 48, 64).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                routine: "shmem_align",
                arg: "alignment",
                ..
            }
        ),
        "{e:?}"
    );
    // An overflowing count * size is an allocation that cannot succeed (NULL in C).
    let e = memory::calloc("shmem_calloc", usize::MAX, 2).unwrap_err();
    assert!(
        matches!(
            e,
            Error::HeapExhausted {
                routine: "shmem_calloc",
                ..
            }
        ),
        "{e:?}"
    );
    let e = memory::realloc("shmem_realloc", stack.as_ptr() as *mut u8, 64).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotAllocated {
                routine: "shmem_realloc",
                arg: "ptr",
                ..
            }
        ),
        "{e:?}"
    );
    // A double free is refused (collectively, so every PE gets the error).
    let x = memory::malloc("shmem_malloc", 64).unwrap();
    memory::free("shmem_free", x).unwrap();
    let e = memory::free("shmem_free", x).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotAllocated {
                routine: "shmem_free",
                ..
            }
        ),
        "{e:?}"
    );

    for p in [c, c2, blocker, r2, table.cast()] {
        memory::free("shmem_free", p).unwrap();
    }
    assert_eq!(
        memory::heap_free().unwrap(),
        free0,
        "the heap is whole again after the frees"
    );
}

/// Alignments above the page size, on every PE: the returned address (not only its heap
/// offset) must be aligned, with the same offset on every PE.
fn align_large_mode(me: usize, n: usize) {
    let table = memory::malloc("shmem_malloc", n * 64 * 8).unwrap() as *mut u64;
    let mut ptrs = Vec::new();
    for a in [8192usize, 65536, 1 << 20, 1 << 21, 1 << 22, 1 << 24] {
        let p = memory::align("shmem_align", a, 100).unwrap();
        assert_eq!(
            p as usize % a,
            0,
            "PE {me}: shmem_align({a}) returned {p:p}, not aligned"
        );
        ptrs.push(p);
    }
    same_offsets_everywhere(table, &ptrs, me, n, "align_large");
    for p in ptrs {
        memory::free("shmem_free", p).unwrap();
    }
    memory::free("shmem_free", table.cast()).unwrap();
}

fn exhaust_mode(me: usize, n: usize) {
    let size = memory::heap_size().unwrap();
    assert_eq!(size, 1 << 20, "run with SHMEM_SYMMETRIC_SIZE=1M");
    let e = memory::malloc("shmem_malloc", 2 << 20).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            Error::HeapExhausted {
                routine: "shmem_malloc",
                requested: 2097152,
                heap_size: 1048576,
                ..
            }
        ),
        "{e:?}"
    );
    for part in [
        "shmem_malloc",
        "SHMEM_SYMMETRIC_SIZE=1048576 bytes (1M)",
        "requested 2097152 bytes (2M)",
    ] {
        assert!(msg.contains(part), "message lacks {part:?}: {msg}");
    }
    // The heap is unchanged: a block of most of it still fits, then nothing larger.
    let big = memory::malloc("shmem_malloc", 600 << 10).unwrap();
    assert!(!big.is_null());
    fill(big, 1000, 1);
    let e = memory::calloc("shmem_calloc", 600, 1024).unwrap_err();
    let Error::HeapExhausted {
        routine,
        free,
        largest,
        ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(routine, "shmem_calloc");
    assert!(free < 600 << 10 && largest <= free, "{e}");
    assert!(e.to_string().contains("largest free block"), "{e}");
    // A failed realloc leaves the block as it was.
    let e = memory::realloc("shmem_realloc", big, (1 << 20) + 1).unwrap_err();
    assert!(
        matches!(
            e,
            Error::HeapExhausted {
                routine: "shmem_realloc",
                ..
            }
        ),
        "{e:?}"
    );
    check(big, 1000, 1, "block after a failed realloc");
    assert!(e.to_string().contains("SHMEM_SYMMETRIC_SIZE"), "{e}");
    // Still symmetric and usable.
    put(big.wrapping_add(1000), &[me as u8], (me + 1) % n);
    sync::barrier_all().unwrap();
    // SAFETY: our own block, written before the barrier.
    assert_eq!(unsafe { big.add(1000).read() }, ((me + n - 1) % n) as u8);
    memory::free("shmem_free", big).unwrap();
    let all = memory::malloc("shmem_malloc", 1 << 20).unwrap();
    assert!(!all.is_null(), "the whole heap is allocatable once free");
    memory::free("shmem_free", all).unwrap();
}

fn mismatch_mode(me: usize) {
    // Equal arguments pass the check.
    let ok = memory::malloc("shmem_malloc", 128).unwrap();
    memory::free("shmem_free", ok).unwrap();
    println!("matched pe={me}");
    match memory::malloc("shmem_malloc", 64 + 64 * me) {
        Ok(_) => panic!("PE {me}: the mismatch went unnoticed"),
        // PE 0 matches itself; it learns of the mismatch through the collective verdict.
        Err(Error::InvalidArgument {
            routine: "shmem_malloc",
            ..
        }) if me == 0 => {
            // Let the PE that saw the difference report it first.
            std::thread::sleep(std::time::Duration::from_millis(200));
            std::process::exit(1)
        }
        Err(e) => {
            assert!(
                matches!(
                    e,
                    Error::CollectiveMismatch {
                        routine: "shmem_malloc",
                        arg: "size",
                        ..
                    }
                ),
                "{e:?}"
            );
            rshmem_core::fatal(&e)
        }
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    rshmem_core::init(rshmem_core::ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let (me, n) = (setup::my_pe().unwrap(), setup::n_pes().unwrap());
    match mode.as_str() {
        "heap" => heap_mode(me, n),
        "align_large" => align_large_mode(me, n),
        "exhaust" => exhaust_mode(me, n),
        "mismatch" => mismatch_mode(me),
        other => panic!("usage: core_memory heap|align_large|exhaust|mismatch (got {other:?})"),
    }
    println!("ok {mode} pe={me}");
    rshmem_core::finalize();
}
