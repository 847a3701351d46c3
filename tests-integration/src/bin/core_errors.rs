//! Bad input and failure modes of rshmem-core, run under `oshrun`: `core_errors <mode>`.
//!
//! - `inputs`: every routine family rejects a PE out of range (naming the routine and
//!   `pe`), a non-symmetric address (naming the argument), a range running past the heap
//!   end, a misaligned word, an overflowing stride; a rejected call writes nothing, and
//!   the runtime keeps working afterwards. Prints `ok inputs pe=<me>`.
//! - `sig_args`: signal routines name `sig_addr` for a bad signal address, and a rejected
//!   put-with-signal writes no data.
//! - `fatal`: the last PE hits a bad-input error and calls `rshmem_core::fatal`; the
//!   others wait in a barrier (the launcher must end them).
//! - `panic`: the last PE panics; the others wait in a barrier.
//! - `exit3`: the last PE calls `setup::global_exit(3)`; the others wait in a barrier.
//!
//! The failure modes first print `jobid=<OSHRUN_JOBID>` and `alive pe=<me> pid=<pid>`.
#![allow(unsafe_code)]

use rshmem_core::p2p::{self, Values};
use rshmem_core::Ctx;
use rshmem_core::{
    amo, lock, memory, rma, runtime, setup, signal, sync, AmoOp, Cmp, Error, SignalOp,
};

/// Asserts `r` is a `PeOutOfRange` error naming `routine`, `pe` and the job size.
#[track_caller]
fn pe_err<T: std::fmt::Debug>(r: rshmem_core::Result<T>, routine: &str, pe: i64, n: usize) {
    match r {
        Err(
            e @ Error::PeOutOfRange {
                routine: r,
                arg: "pe",
                pe: p,
                npes,
            },
        ) => {
            assert_eq!((r, p, npes), (routine, pe, n), "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains(routine)
                    && msg.contains("argument pe")
                    && msg.contains(&pe.to_string()),
                "{msg}"
            );
        }
        other => panic!("{routine}(pe={pe}): expected PeOutOfRange, got {other:?}"),
    }
}

/// Asserts `r` is a `NotSymmetric` error for argument `arg` of `routine`.
#[track_caller]
fn sym_err<T: std::fmt::Debug>(r: rshmem_core::Result<T>, routine: &str, arg: &str) {
    match r {
        Err(
            e @ Error::NotSymmetric {
                routine: r, arg: a, ..
            },
        ) => {
            assert_eq!((r, a), (routine, arg), "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains(routine)
                    && msg.contains(&format!("argument {arg}"))
                    && msg.contains("not symmetric"),
                "{msg}"
            );
        }
        other => panic!("{routine}: expected NotSymmetric for {arg}, got {other:?}"),
    }
}

/// Asserts `r` is a `Misaligned` error for argument `arg` of `routine`, alignment `align`.
#[track_caller]
fn align_err<T: std::fmt::Debug>(
    r: rshmem_core::Result<T>,
    routine: &str,
    arg: &str,
    align: usize,
) {
    match r {
        Err(
            e @ Error::Misaligned {
                routine: r,
                arg: a,
                align: al,
                ..
            },
        ) => {
            assert_eq!((r, a, al), (routine, arg, align), "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains(routine) && msg.contains(&format!("not aligned to {align} bytes")),
                "{msg}"
            );
        }
        other => panic!("{routine}: expected Misaligned for {arg}, got {other:?}"),
    }
}

fn inputs(me: usize, n: usize) {
    // The default context: every core routine here is a `ctx_` form.
    let dc = Ctx::default_ctx();
    let buf = memory::malloc("shmem_malloc", 256).unwrap();
    let word = buf as *mut u64;
    let (lo, hi) = runtime::try_runtime().unwrap().heap_range();
    let mut stack = [0u8; 64];
    let sp = stack.as_mut_ptr();
    let mut idx = [0usize; 4];
    let mut fetched = 0u64;

    // PE out of range, for every family.
    for pe in [-1, n as i64, n as i64 + 100, i64::MAX, i64::MIN] {
        // SAFETY: every call below is rejected before touching memory; the local buffers
        // are live and large enough anyway.
        unsafe {
            pe_err(
                rma::ctx_put(dc, "shmem_putmem", buf, sp, 8, pe),
                "shmem_putmem",
                pe,
                n,
            );
            pe_err(
                rma::ctx_get(dc, "shmem_getmem", sp, buf, 8, pe),
                "shmem_getmem",
                pe,
                n,
            );
            pe_err(
                rma::ctx_put_nbi(dc, "shmem_putmem_nbi", buf, sp, 8, pe),
                "shmem_putmem_nbi",
                pe,
                n,
            );
            pe_err(
                rma::ctx_get_nbi(dc, "shmem_getmem_nbi", sp, buf, 8, pe),
                "shmem_getmem_nbi",
                pe,
                n,
            );
            pe_err(
                rma::ctx_strided(
                    dc,
                    "shmem_iput32",
                    true,
                    rma::Blocks {
                        dest: buf,
                        src: sp,
                        dst: 2,
                        sst: 1,
                        block: 1,
                        count: 4,
                        size: 4,
                    },
                    pe,
                ),
                "shmem_iput32",
                pe,
                n,
            );
            pe_err(
                rma::ctx_strided(
                    dc,
                    "shmem_iget32",
                    false,
                    rma::Blocks {
                        dest: sp,
                        src: buf,
                        dst: 1,
                        sst: 2,
                        block: 1,
                        count: 4,
                        size: 4,
                    },
                    pe,
                ),
                "shmem_iget32",
                pe,
                n,
            );
            pe_err(
                rma::ctx_strided(
                    dc,
                    "shmem_ibput",
                    true,
                    rma::Blocks {
                        dest: buf,
                        src: sp,
                        dst: 4,
                        sst: 2,
                        block: 2,
                        count: 2,
                        size: 4,
                    },
                    pe,
                ),
                "shmem_ibput",
                pe,
                n,
            );
            pe_err(
                rma::ctx_strided(
                    dc,
                    "shmem_ibget",
                    false,
                    rma::Blocks {
                        dest: sp,
                        src: buf,
                        dst: 2,
                        sst: 4,
                        block: 2,
                        count: 2,
                        size: 4,
                    },
                    pe,
                ),
                "shmem_ibget",
                pe,
                n,
            );
            pe_err(
                amo::ctx_atomic::<u64>(dc, "shmem_atomic_fetch_add", word, AmoOp::Add(1), pe),
                "shmem_atomic_fetch_add",
                pe,
                n,
            );
            pe_err(
                amo::ctx_atomic_nbi::<u64>(
                    dc,
                    "shmem_atomic_fetch_nbi",
                    &mut fetched,
                    word,
                    AmoOp::Fetch,
                    pe,
                ),
                "shmem_atomic_fetch_nbi",
                pe,
                n,
            );
            pe_err(
                amo::ctx_atomic::<f64>(dc, "shmem_double_swap", word.cast(), AmoOp::Swap(1.0), pe),
                "shmem_double_swap",
                pe,
                n,
            );
            pe_err(
                signal::ctx_signal_op(dc, "shmem_signal_add", word, 1, SignalOp::Add, pe),
                "shmem_signal_add",
                pe,
                n,
            );
            pe_err(
                signal::ctx_put_signal(
                    dc,
                    "shmem_putmem_signal",
                    false,
                    buf.add(64),
                    sp,
                    8,
                    word,
                    1,
                    SignalOp::Set,
                    pe,
                ),
                "shmem_putmem_signal",
                pe,
                n,
            );
        }
    }

    // Not symmetric: a stack buffer where a symmetric address belongs.
    // SAFETY: every call below is rejected before touching memory.
    unsafe {
        sym_err(
            rma::ctx_put(dc, "shmem_putmem", sp, buf, 8, 0),
            "shmem_putmem",
            "dest",
        );
        sym_err(
            rma::ctx_get(dc, "shmem_getmem", buf, sp, 8, 0),
            "shmem_getmem",
            "source",
        );
        sym_err(
            rma::ctx_put_nbi(dc, "shmem_putmem_nbi", sp, buf, 8, 0),
            "shmem_putmem_nbi",
            "dest",
        );
        sym_err(
            rma::ctx_get_nbi(dc, "shmem_getmem_nbi", buf, sp, 8, 0),
            "shmem_getmem_nbi",
            "source",
        );
        sym_err(
            rma::ctx_strided(
                dc,
                "shmem_iput64",
                true,
                rma::Blocks {
                    dest: sp,
                    src: buf,
                    dst: 1,
                    sst: 1,
                    block: 1,
                    count: 2,
                    size: 8,
                },
                0,
            ),
            "shmem_iput64",
            "dest",
        );
        sym_err(
            rma::ctx_strided(
                dc,
                "shmem_iget64",
                false,
                rma::Blocks {
                    dest: buf,
                    src: sp,
                    dst: 1,
                    sst: 1,
                    block: 1,
                    count: 2,
                    size: 8,
                },
                0,
            ),
            "shmem_iget64",
            "source",
        );
        sym_err(
            rma::ctx_strided(
                dc,
                "shmem_ibput",
                true,
                rma::Blocks {
                    dest: sp,
                    src: buf,
                    dst: 4,
                    sst: 4,
                    block: 2,
                    count: 2,
                    size: 1,
                },
                0,
            ),
            "shmem_ibput",
            "dest",
        );
        sym_err(
            rma::ctx_strided(
                dc,
                "shmem_ibget",
                false,
                rma::Blocks {
                    dest: buf,
                    src: sp,
                    dst: 4,
                    sst: 4,
                    block: 2,
                    count: 2,
                    size: 1,
                },
                0,
            ),
            "shmem_ibget",
            "source",
        );
        sym_err(
            amo::ctx_atomic::<u64>(dc, "shmem_atomic_inc", sp.cast(), AmoOp::Add(1), 0),
            "shmem_atomic_inc",
            "dest",
        );
        sym_err(
            p2p::wait_until::<u64>("shmem_wait_until", sp.cast(), Cmp::Eq, 0),
            "shmem_wait_until",
            "ivars",
        );
        sym_err(
            p2p::test::<u64>("shmem_test", sp.cast(), Cmp::Eq, 0),
            "shmem_test",
            "ivars",
        );
        let v = Values::One(0u64);
        let st = std::ptr::null();
        sym_err(
            p2p::wait_until_all::<u64>("shmem_wait_until_all", sp.cast(), 4, st, Cmp::Eq, v),
            "shmem_wait_until_all",
            "ivars",
        );
        sym_err(
            p2p::wait_until_any::<u64>("shmem_wait_until_any", sp.cast(), 4, st, Cmp::Eq, v),
            "shmem_wait_until_any",
            "ivars",
        );
        sym_err(
            p2p::wait_until_some::<u64>(
                "shmem_wait_until_some",
                sp.cast(),
                4,
                idx.as_mut_ptr(),
                st,
                Cmp::Eq,
                v,
            ),
            "shmem_wait_until_some",
            "ivars",
        );
        sym_err(
            p2p::test_all::<u64>("shmem_test_all", sp.cast(), 4, st, Cmp::Eq, v),
            "shmem_test_all",
            "ivars",
        );
        sym_err(
            p2p::test_any::<u64>("shmem_test_any", sp.cast(), 4, st, Cmp::Eq, v),
            "shmem_test_any",
            "ivars",
        );
        sym_err(
            p2p::test_some::<u64>(
                "shmem_test_some",
                sp.cast(),
                4,
                idx.as_mut_ptr(),
                st,
                Cmp::Eq,
                v,
            ),
            "shmem_test_some",
            "ivars",
        );
        sym_err(
            signal::signal_fetch("shmem_signal_fetch", sp.cast()),
            "shmem_signal_fetch",
            "sig_addr",
        );
        sym_err(
            signal::signal_wait_until("shmem_signal_wait_until", sp.cast(), Cmp::Eq, 0),
            "shmem_signal_wait_until",
            "sig_addr",
        );
    }
    sym_err(
        lock::set_lock("shmem_set_lock", sp.cast()),
        "shmem_set_lock",
        "lock",
    );
    sym_err(
        lock::test_lock("shmem_test_lock", sp.cast()),
        "shmem_test_lock",
        "lock",
    );
    sym_err(
        lock::clear_lock("shmem_clear_lock", sp.cast()),
        "shmem_clear_lock",
        "lock",
    );
    // A p2p set whose tail runs past the heap end.
    // SAFETY: rejected before touching memory.
    unsafe {
        sym_err(
            p2p::test_all::<u64>(
                "shmem_test_all",
                (hi - 16) as *const u64,
                3,
                std::ptr::null(),
                Cmp::Eq,
                Values::One(0),
            ),
            "shmem_test_all",
            "ivars",
        );
    }

    // Ranges: ending exactly at the heap end is fine; one byte more is not, and nothing
    // is written; starting below the heap is not either.
    let right = (me + 1) % n;
    let marker = [0xEEu8; 16];
    let data = [0x11u8; 16];
    // SAFETY: `marker`/`data`/`stack` are live locals of at least 16 bytes.
    unsafe {
        rma::ctx_put(
            dc,
            "shmem_putmem",
            (hi - 16) as *mut u8,
            marker.as_ptr(),
            16,
            right as i64,
        )
        .unwrap();
        sym_err(
            rma::ctx_put(
                dc,
                "shmem_putmem",
                (hi - 15) as *mut u8,
                data.as_ptr(),
                16,
                right as i64,
            ),
            "shmem_putmem",
            "dest",
        );
        sym_err(
            rma::ctx_put(
                dc,
                "shmem_putmem",
                (lo - 1) as *mut u8,
                data.as_ptr(),
                2,
                right as i64,
            ),
            "shmem_putmem",
            "dest",
        );
        sym_err(
            rma::ctx_get(
                dc,
                "shmem_getmem",
                sp,
                (hi - 8) as *const u8,
                9,
                right as i64,
            ),
            "shmem_getmem",
            "source",
        );
        sym_err(
            rma::ctx_put(
                dc,
                "shmem_putmem",
                buf,
                data.as_ptr(),
                usize::MAX,
                right as i64,
            ),
            "shmem_putmem",
            "dest",
        );
        rma::ctx_get(
            dc,
            "shmem_getmem",
            sp,
            (hi - 16) as *const u8,
            16,
            right as i64,
        )
        .unwrap();
    }
    assert_eq!(&stack[..16], &marker, "a rejected put must not write");
    sync::barrier_all().unwrap();
    // The last word of the heap takes atomics; the word after it does not.
    // SAFETY: the first word is symmetric and aligned; the second call is rejected.
    unsafe {
        amo::ctx_atomic::<u64>(
            dc,
            "shmem_atomic_set",
            (hi - 8) as *const u64,
            AmoOp::Set(5),
            me as i64,
        )
        .unwrap();
        sym_err(
            amo::ctx_atomic::<u64>(
                dc,
                "shmem_atomic_set",
                hi as *const u64,
                AmoOp::Set(5),
                me as i64,
            ),
            "shmem_atomic_set",
            "dest",
        );
    }

    // Misaligned words.
    // SAFETY: every call below is rejected before touching memory.
    unsafe {
        align_err(
            amo::ctx_atomic::<u64>(dc, "shmem_atomic_fetch", buf.add(4).cast(), AmoOp::Fetch, 0),
            "shmem_atomic_fetch",
            "dest",
            8,
        );
        align_err(
            amo::ctx_atomic::<i64>(dc, "shmem_atomic_add", buf.add(1).cast(), AmoOp::Add(1), 0),
            "shmem_atomic_add",
            "dest",
            8,
        );
        align_err(
            amo::ctx_atomic::<u32>(
                dc,
                "shmem_atomic_swap",
                buf.add(2).cast(),
                AmoOp::Swap(1),
                0,
            ),
            "shmem_atomic_swap",
            "dest",
            4,
        );
        align_err(
            amo::ctx_atomic::<i16>(dc, "shmem_atomic_set", buf.add(1).cast(), AmoOp::Set(1), 0),
            "shmem_atomic_set",
            "dest",
            2,
        );
        align_err(
            amo::ctx_atomic::<f64>(dc, "shmem_double_fetch", buf.add(4).cast(), AmoOp::Fetch, 0),
            "shmem_double_fetch",
            "dest",
            8,
        );
        align_err(
            amo::ctx_atomic::<f32>(dc, "shmem_float_fetch", buf.add(2).cast(), AmoOp::Fetch, 0),
            "shmem_float_fetch",
            "dest",
            4,
        );
        let cas = AmoOp::CompareSwap {
            cond: 0usize,
            value: 1,
        };
        align_err(
            amo::ctx_atomic::<usize>(dc, "shmem_atomic_compare_swap", buf.add(12).cast(), cas, 0),
            "shmem_atomic_compare_swap",
            "dest",
            8,
        );
        align_err(
            p2p::wait_until::<u64>("shmem_wait_until", buf.add(4).cast(), Cmp::Eq, 0),
            "shmem_wait_until",
            "ivars",
            8,
        );
        align_err(
            p2p::test_any::<i32>(
                "shmem_test_any",
                buf.add(2).cast(),
                2,
                std::ptr::null(),
                Cmp::Eq,
                Values::One(0),
            ),
            "shmem_test_any",
            "ivars",
            4,
        );
        align_err(
            signal::signal_fetch("shmem_signal_fetch", buf.add(1).cast()),
            "shmem_signal_fetch",
            "sig_addr",
            8,
        );
    }
    align_err(
        lock::set_lock("shmem_set_lock", buf.wrapping_add(4).cast()),
        "shmem_set_lock",
        "lock",
        8,
    );

    // Overflowing strides.
    // SAFETY: rejected before touching memory.
    unsafe {
        let e = rma::ctx_strided(
            dc,
            "shmem_iput64",
            true,
            rma::Blocks {
                dest: buf,
                src: sp,
                dst: isize::MAX,
                sst: 1,
                block: 1,
                count: 3,
                size: 8,
            },
            0,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    routine: "shmem_iput64",
                    arg: "dst",
                    ..
                }
            ),
            "{e:?}"
        );
        let e = rma::ctx_strided(
            dc,
            "shmem_iget64",
            false,
            rma::Blocks {
                dest: sp,
                src: buf,
                dst: 1,
                sst: isize::MIN / 2,
                block: 1,
                count: 3,
                size: 8,
            },
            0,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    routine: "shmem_iget64",
                    arg: "sst",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("shmem_iget64") && e.to_string().contains("sst"),
            "{e}"
        );
    }

    // The runtime still works after all those errors.
    let v = [me as u8 + 1; 8];
    // SAFETY: `v` is a live local of 8 bytes.
    unsafe { rma::ctx_put(dc, "shmem_putmem", buf, v.as_ptr(), 8, right as i64).unwrap() };
    sync::barrier_all().unwrap();
    let left = (me + n - 1) % n;
    // SAFETY: our own symmetric block, written before the barrier.
    let got = unsafe { std::slice::from_raw_parts(buf, 8) };
    assert_eq!(got, &[left as u8 + 1; 8]);
    sync::barrier_all().unwrap();
    memory::free("shmem_free", buf).unwrap();
}

/// Signal routines must name `sig_addr` for a bad signal address, and a put-with-signal
/// whose signal address is bad must not deliver its data.
fn sig_args(me: usize) {
    let dc = Ctx::default_ctx();
    let buf = memory::calloc("shmem_calloc", 4, 64).unwrap();
    let data = [0x77u8; 32];
    let bad_sig = [0u64; 2];
    // SAFETY: every call below is rejected (or touches only symmetric memory).
    unsafe {
        sym_err(
            signal::ctx_signal_op(
                dc,
                "shmem_signal_add",
                bad_sig.as_ptr(),
                1,
                SignalOp::Add,
                0,
            ),
            "shmem_signal_add",
            "sig_addr",
        );
        sym_err(
            signal::ctx_signal_op(
                dc,
                "shmem_signal_set",
                bad_sig.as_ptr(),
                1,
                SignalOp::Set,
                0,
            ),
            "shmem_signal_set",
            "sig_addr",
        );
        let r = signal::ctx_put_signal(
            dc,
            "shmem_putmem_signal",
            false,
            buf,
            data.as_ptr(),
            32,
            bad_sig.as_ptr(),
            1,
            SignalOp::Set,
            me as i64,
        );
        sym_err(r, "shmem_putmem_signal", "sig_addr");
        align_err(
            signal::ctx_signal_op(
                dc,
                "shmem_signal_add",
                buf.add(4).cast(),
                1,
                SignalOp::Add,
                0,
            ),
            "shmem_signal_add",
            "sig_addr",
            8,
        );
    }
    // SAFETY: our own symmetric block of 256 bytes.
    let got = unsafe { std::slice::from_raw_parts(buf, 32) };
    assert_eq!(
        got, &[0u8; 32],
        "a rejected put-with-signal delivered its data"
    );
    sync::barrier_all().unwrap();
    memory::free("shmem_free", buf).unwrap();
}

fn failure(mode: &str, me: usize, n: usize) {
    println!(
        "jobid={}",
        std::env::var("OSHRUN_JOBID").unwrap_or_default()
    );
    println!("alive pe={me} pid={}", std::process::id());
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    sync::barrier_all().unwrap();
    if me == n - 1 {
        match mode {
            "fatal" => {
                let src = [0u8; 8];
                let dest = runtime::try_runtime().unwrap().heap_range().0;
                // SAFETY: rejected (PE out of range) before touching memory.
                let r = unsafe {
                    rma::ctx_put(
                        Ctx::default_ctx(),
                        "shmem_putmem",
                        dest as *mut u8,
                        src.as_ptr(),
                        8,
                        n as i64,
                    )
                };
                let e = r.expect_err("PE n is out of range");
                rshmem_core::fatal(&e)
            }
            "panic" => panic!("PE {me} panics on purpose"),
            "exit3" => setup::global_exit(3),
            _ => unreachable!(),
        }
    }
    // The others wait for a PE that never comes.
    sync::barrier_all().unwrap();
    panic!("PE {me} passed a barrier that PE {} never entered", n - 1);
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    rshmem_core::init(rshmem_core::ThreadLevel::Single).unwrap_or_else(|e| rshmem_core::fatal(&e));
    let (me, n) = (setup::my_pe().unwrap(), setup::n_pes().unwrap());
    match mode.as_str() {
        "inputs" => inputs(me, n),
        "sig_args" => sig_args(me),
        "fatal" | "panic" | "exit3" => failure(&mode, me, n),
        other => panic!("usage: core_errors inputs|sig_args|fatal|panic|exit3 (got {other:?})"),
    }
    println!("ok {mode} pe={me}");
    rshmem_core::finalize();
}
