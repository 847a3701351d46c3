//! Global and static variables as symmetric objects (what C programs get from
//! `shmem_init`): RMA, AMOs, waits, locks and `shmem_ptr` on statics of a PIE executable
//! with ASLR. Prints `ok statics_basic pe=<me>`.
#![allow(unsafe_code)]

use std::ptr::addr_of_mut;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use rshmem_core::Ctx;
use rshmem_core::{amo, lock, p2p, rma, setup, sync, AmoOp, Cmp, ThreadLevel};

static COUNTER: AtomicU64 = AtomicU64::new(0);
static FLAG: AtomicU64 = AtomicU64::new(0);
static LOCK: AtomicI64 = AtomicI64::new(0);
static mut SHARED_SUM: i64 = 0;
/// In `.data` (non-zero initializer) rather than `.bss`.
static INITIALIZED: AtomicU64 = AtomicU64::new(42);
/// Also in `.data`.
static mut BUF: [u64; 64] = [7; 64];

fn main() {
    rshmem_core::world::enable_symmetric_data();
    rshmem_core::init(ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    let right = ((me + 1) % n) as i64;
    let buf = addr_of_mut!(BUF) as *mut u64;
    // Initialized data survives the move to shared memory (nobody writes INITIALIZED).
    assert_eq!(INITIALIZED.load(Ordering::Relaxed), 42);

    // RMA into the right neighbour's static array.
    let src: Vec<u64> = (0..64).map(|i| (me * 1000 + i) as u64).collect();
    // SAFETY: `src` is a live local buffer of 64 u64s; BUF is symmetric.
    unsafe {
        rma::ctx_put(
            Ctx::default_ctx(),
            "shmem_putmem",
            buf.cast(),
            src.as_ptr().cast(),
            64 * 8,
            right,
        )
        .unwrap()
    };
    // AMO on PE 0's static counter, then a flag on the right neighbour.
    // SAFETY: statics are symmetric and aligned.
    unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_add",
            COUNTER.as_ptr(),
            AmoOp::Add(me as u64 + 1),
            0,
        )
        .unwrap();
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_set",
            FLAG.as_ptr(),
            AmoOp::Set(1),
            right,
        )
        .unwrap();
        p2p::wait_until::<u64>("shmem_wait_until", FLAG.as_ptr(), Cmp::Eq, 1).unwrap();
    }
    sync::barrier_all().unwrap();
    let left = (me + n - 1) % n;
    for i in 0..64 {
        // SAFETY: written by the left neighbour before the barrier.
        assert_eq!(unsafe { *buf.add(i) }, (left * 1000 + i) as u64);
    }
    if me == 0 {
        assert_eq!(COUNTER.load(Ordering::Acquire), (n * (n + 1) / 2) as u64);
    }
    // shmem_ptr on a static: a direct view of every mapped PE's copy (all on one host; this
    // PE alone under SHMEM_TRANSPORT=ucx, its virtual host's PEs under mixed).
    for pe in 0..n {
        let p = setup::ptr(FLAG.as_ptr() as usize, pe as i64).unwrap() as *const u64;
        if !rshmem_tests::expected_maps(me, pe, n) {
            assert!(p.is_null());
            continue;
        }
        assert!(!p.is_null());
        // SAFETY: a mapped view of PE `pe`'s FLAG; every flag was set before the barrier.
        assert_eq!(unsafe { p.read_volatile() }, 1);
    }
    // A lock word and a get+put counter protected by it, all statics.
    let sum = addr_of_mut!(SHARED_SUM);
    for _ in 0..50 {
        lock::set_lock("shmem_set_lock", LOCK.as_ptr()).unwrap();
        let mut v: i64 = 0;
        // SAFETY: `v` is a local i64; SHARED_SUM is symmetric; the lock serializes.
        unsafe {
            rma::ctx_get(
                Ctx::default_ctx(),
                "shmem_getmem",
                (&mut v as *mut i64).cast(),
                sum.cast(),
                8,
                0,
            )
            .unwrap();
            v += 1;
            rma::ctx_put(
                Ctx::default_ctx(),
                "shmem_putmem",
                sum.cast(),
                (&v as *const i64).cast(),
                8,
                0,
            )
            .unwrap();
        }
        lock::clear_lock("shmem_clear_lock", LOCK.as_ptr()).unwrap();
    }
    sync::barrier_all().unwrap();
    if me == 0 {
        // SAFETY: all updates completed before the barrier.
        assert_eq!(unsafe { sum.read_volatile() }, 50 * n as i64);
    }
    // A stack address is still refused.
    let local = 0u64;
    // SAFETY: the call only validates the address and fails.
    let e = unsafe {
        amo::ctx_atomic::<u64>(
            Ctx::default_ctx(),
            "shmem_atomic_fetch",
            &local,
            AmoOp::Fetch,
            0,
        )
    };
    assert!(e.is_err());
    println!("ok statics_basic pe={me}");
    rshmem_core::finalize();
}
