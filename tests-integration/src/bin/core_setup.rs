//! Setup and query routines of rshmem-core, run under `oshrun`:
//!
//! - `core_setup setup <single|funneled|serialized|multiple>`: init at that thread level,
//!   my_pe/n_pes, pe_accessible, addr_accessible, ptr (writes through it seen by the
//!   owner), info_get_version/name, query_thread, finalize; calls before init and after
//!   finalize fail with `NotInitialized`. Prints `n_pes=<n>` and `ok setup pe=<me>`.
//! - `core_setup nested`: nested init/finalize pairs (OpenSHMEM 1.6 reference counting).
//! - `core_setup init_err`: expects `init` to fail (run with a bad `SHMEM_SYMMETRIC_SIZE`)
//!   and prints `ok init_err rank=<PMI_RANK>`.
//!
//! Every check is an assertion: a failure panics and the job exits non-zero.
#![allow(unsafe_code)]

use rshmem_core::Ctx;
use rshmem_core::{memory, rma, runtime, setup, sync, Error, ThreadLevel};

fn level(s: &str) -> ThreadLevel {
    match s {
        "single" => ThreadLevel::Single,
        "funneled" => ThreadLevel::Funneled,
        "serialized" => ThreadLevel::Serialized,
        "multiple" => ThreadLevel::Multiple,
        _ => panic!("unknown thread level {s:?}"),
    }
}

fn not_initialized(r: rshmem_core::Result<impl std::fmt::Debug>, routine: &str) {
    match r {
        Err(e @ Error::NotInitialized { routine: r }) => {
            assert_eq!(r, routine);
            assert!(e.to_string().contains(routine), "{e}");
        }
        other => panic!("{routine}: expected NotInitialized, got {other:?}"),
    }
}

fn setup_mode(requested: ThreadLevel) {
    // Before init: queries fail naming the routine; version/name need no runtime.
    assert!(!rshmem_core::initialized());
    not_initialized(setup::my_pe(), "shmem_my_pe");
    not_initialized(setup::n_pes(), "shmem_n_pes");
    not_initialized(setup::query_thread(), "shmem_query_thread");
    not_initialized(sync::barrier_all(), "shmem_barrier_all");
    not_initialized(memory::malloc("shmem_malloc", 8), "shmem_malloc");
    assert_eq!(setup::info_get_version(), (1, 5));

    // Read before init: the bootstrap removes the launcher's variables once it has them.
    let rank: usize = std::env::var("PMI_RANK").unwrap().parse().unwrap();
    let size: usize = std::env::var("PMI_SIZE").unwrap().parse().unwrap();
    let provided = rshmem_core::init(requested).unwrap_or_else(|e| rshmem_core::fatal(&e));
    assert!(rshmem_core::initialized());
    assert_eq!(
        provided, requested,
        "init_thread should provide what was asked"
    );
    assert_eq!(setup::query_thread().unwrap(), provided);

    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    assert!(me < n);
    assert_eq!((me, n), (rank, size));
    assert!(
        std::env::var_os("PMI_FD").is_none(),
        "init leaves PMI_FD in the environment"
    );
    let rt = runtime::try_runtime().expect("runtime");
    assert_eq!(
        (rt.my_pe(), rt.n_pes(), rt.thread_level()),
        (me, n, provided)
    );

    // Version and vendor name.
    assert_eq!(setup::info_get_version(), (1, 5));
    let name = setup::info_get_name();
    assert_eq!(name, "rshmem");
    assert!(!name.is_empty() && name.len() < 256 && !name.contains('\0'));

    // pe_accessible: every PE of the job, nothing else.
    for pe in 0..n as i64 {
        assert!(setup::pe_accessible(pe).unwrap(), "pe_accessible({pe})");
    }
    for pe in [-1, n as i64, n as i64 + 7, i64::MIN, i64::MAX] {
        assert!(!setup::pe_accessible(pe).unwrap(), "pe_accessible({pe})");
    }

    // addr_accessible: symmetric heap addresses on every PE; not a stack address, not
    // past the heap end, not on a PE out of range.
    let slots = memory::malloc("shmem_malloc", n * 8).unwrap() as *mut u64;
    let (heap_lo, heap_hi) = rt.heap_range();
    assert!(slots as usize >= heap_lo && (slots as usize) < heap_hi);
    let local = [0u64; 4];
    for pe in 0..n as i64 {
        assert!(setup::addr_accessible(slots as usize, pe).unwrap());
        assert!(setup::addr_accessible(heap_lo, pe).unwrap());
        assert!(setup::addr_accessible(heap_hi - 1, pe).unwrap());
        assert!(!setup::addr_accessible(heap_hi, pe).unwrap());
        assert!(!setup::addr_accessible(heap_lo - 1, pe).unwrap());
        assert!(!setup::addr_accessible(local.as_ptr() as usize, pe).unwrap());
    }
    assert!(!setup::addr_accessible(slots as usize, n as i64).unwrap());
    assert!(!setup::addr_accessible(slots as usize, -1).unwrap());

    // ptr: non-null for every PE this PE maps (all of them on one host; itself alone under
    // SHMEM_TRANSPORT=ucx, the others reached by put), itself for this PE, null for bad
    // input.
    let maps = |pe: usize| rshmem_tests::expected_maps(me, pe, n);
    assert_eq!(setup::ptr(slots as usize, me as i64).unwrap(), slots.cast());
    assert!(setup::ptr(slots as usize, n as i64).unwrap().is_null());
    assert!(setup::ptr(slots as usize, -1).unwrap().is_null());
    assert!(setup::ptr(local.as_ptr() as usize, 0).unwrap().is_null());
    for pe in 0..n {
        let q = setup::ptr(slots as usize, pe as i64).unwrap() as *mut u64;
        if !maps(pe) {
            assert!(q.is_null(), "shmem_ptr(slots, {pe}) of an unmapped PE");
            let v = (me * 1000 + pe) as u64;
            // SAFETY: `slots` is symmetric (n u64s); `v` is a live local.
            unsafe {
                rma::ctx_put(
                    Ctx::default_ctx(),
                    "shmem_putmem",
                    slots.add(me).cast(),
                    (&v as *const u64).cast(),
                    8,
                    pe as i64,
                )
                .unwrap()
            };
            continue;
        }
        assert!(!q.is_null(), "shmem_ptr(slots, {pe}) is null");
        // SAFETY: `q` maps PE `pe`'s copy of `slots` (n u64s); slot `me` is written only
        // by this PE.
        unsafe { q.add(me).write_volatile((me * 1000 + pe) as u64) };
    }
    sync::barrier_all().unwrap();
    for i in 0..n {
        // SAFETY: our own `slots`, written by every PE before the barrier.
        let v = unsafe { slots.add(i).read_volatile() };
        assert_eq!(
            v,
            (i * 1000 + me) as u64,
            "slot {i} written by PE {i} through shmem_ptr"
        );
    }
    sync::barrier_all().unwrap();
    memory::free("shmem_free", slots.cast()).unwrap();

    println!("n_pes={n}");
    println!("ok setup pe={me}");
    rshmem_core::finalize();

    // After finalize: everything fails again, and finalize is idempotent.
    assert!(!rshmem_core::initialized());
    not_initialized(setup::my_pe(), "shmem_my_pe");
    not_initialized(setup::ptr(0, 0), "shmem_ptr");
    rshmem_core::finalize();
}

fn nested_mode() {
    let first =
        rshmem_core::init(ThreadLevel::Serialized).unwrap_or_else(|e| rshmem_core::fatal(&e));
    assert_eq!(first, ThreadLevel::Serialized);
    let me = setup::my_pe().unwrap();
    let n = setup::n_pes().unwrap();
    // A nested init keeps the runtime (and its thread level).
    let second = rshmem_core::init(ThreadLevel::Multiple).unwrap();
    assert_eq!(second, ThreadLevel::Serialized);
    let third = rshmem_core::init(ThreadLevel::Single).unwrap();
    assert_eq!(third, ThreadLevel::Serialized);
    assert_eq!(setup::query_thread().unwrap(), ThreadLevel::Serialized);
    let buf = memory::calloc("shmem_calloc", n, 8).unwrap() as *mut u64;

    // Two inner finalizes leave the runtime usable.
    rshmem_core::finalize();
    rshmem_core::finalize();
    assert!(rshmem_core::initialized());
    assert_eq!(setup::my_pe().unwrap(), me);
    let v = me as u64 + 11;
    for pe in 0..n as i64 {
        // SAFETY: `v` is a live local u64; `buf` is symmetric with n u64s.
        unsafe {
            rshmem_core::rma::ctx_put(
                Ctx::default_ctx(),
                "shmem_putmem",
                buf.add(me).cast(),
                (&v as *const u64).cast(),
                8,
                pe,
            )
            .unwrap()
        };
    }
    sync::barrier_all().unwrap();
    for i in 0..n {
        // SAFETY: our own symmetric `buf`, written before the barrier.
        assert_eq!(unsafe { buf.add(i).read_volatile() }, i as u64 + 11);
    }
    sync::barrier_all().unwrap();
    println!("ok nested pe={me}");
    // The outermost finalize ends it.
    rshmem_core::finalize();
    assert!(!rshmem_core::initialized());
    not_initialized(setup::n_pes(), "shmem_n_pes");
}

fn init_err_mode() {
    let err = rshmem_core::init(ThreadLevel::Single).expect_err("init should fail");
    let msg = err.to_string();
    assert!(msg.contains("shmem_init"), "{msg}");
    assert!(msg.contains("SHMEM_SYMMETRIC_SIZE"), "{msg}");
    assert!(!rshmem_core::initialized());
    not_initialized(setup::my_pe(), "shmem_my_pe");
    let rank = std::env::var("PMI_RANK").unwrap_or_default();
    println!("ok init_err rank={rank}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("setup") => setup_mode(level(args.get(1).map_or("single", String::as_str))),
        Some("nested") => nested_mode(),
        Some("init_err") => init_err_mode(),
        other => panic!("usage: core_setup setup <level>|nested|init_err (got {other:?})"),
    }
}
