//! The safe Rust API's per-call cost: 8-byte put/get, p/g and atomics through the
//! `rshmem` crate's receivers (`Shmem`, `Ctx`, `SymAtomic`, `SymAtomicVec`, the nbi and
//! nbe scopes), next to the core's `ctx_put` on the default context, interleaved in one
//! run. PE 0 targets PE 1 (shared memory), so the times are the software path.

use std::hint::black_box;
use std::time::Duration;

use rshmem::{Private, Shmem};
use rshmem_core::ctx::Ctx as CoreCtx;

use crate::stats::{interleaved, Body, Lat};

/// `oshrun -np 2 rshmem-bench api`: per-call nanoseconds of each form.
pub(crate) fn run(quick: bool) {
    let shmem = Shmem::init().unwrap_or_else(|e| panic!("rshmem-bench api: {e}"));
    let (me, npes) = (shmem.my_pe(), shmem.n_pes());
    if npes != 2 {
        if me == 0 {
            eprintln!("rshmem-bench api: run me on exactly 2 PEs (oshrun -np 2), not {npes}");
        }
        shmem.global_exit(2);
    }
    let v = shmem.alloc(64, 0u64).expect("alloc");
    let word = shmem.alloc_atomic(0u64).expect("alloc_atomic");
    let words = shmem.alloc_atomic_vec(4, 0u64).expect("alloc_atomic_vec");
    let raw_sym = rshmem_core::memory::align("shmem_align", 4096, 64).expect("align");
    shmem.barrier_all();
    if me == 0 {
        let ctx = shmem.create_ctx::<Private>(false).expect("create_ctx");
        let pe = 1;
        let src = [0xa5u64];
        let mut dst = [0u64];
        let core_put = &mut |k: u64| {
            for _ in 0..k {
                // SAFETY: `src` is readable for 8 bytes; `raw_sym` is a symmetric block of 64.
                let r = unsafe {
                    rshmem_core::rma::ctx_put(
                        CoreCtx::default_ctx(),
                        "shmem_putmem",
                        raw_sym,
                        black_box(src.as_ptr()).cast(),
                        8,
                        pe as i64,
                    )
                };
                r.expect("ctx_put");
            }
        };
        let shmem_put = &mut |k: u64| {
            for _ in 0..k {
                shmem.put(&v, 0, black_box(&src), pe).expect("put");
            }
        };
        let ctx_put = &mut |k: u64| {
            for _ in 0..k {
                ctx.put(&v, 0, black_box(&src), pe).expect("put");
            }
        };
        let shmem_p = &mut |k: u64| {
            for j in 0..k {
                shmem.p(&v, 1, black_box(j), pe).expect("p");
            }
        };
        let shmem_get = &mut |k: u64| {
            for _ in 0..k {
                shmem.get(black_box(&mut dst), &v, 0, pe).expect("get");
            }
        };
        let shmem_g = &mut |k: u64| {
            for _ in 0..k {
                black_box(shmem.g(&v, 2, pe).expect("g"));
            }
        };
        let sym_fadd = &mut |k: u64| {
            for _ in 0..k {
                black_box(word.atomic_fetch_add(black_box(1), pe).expect("fadd"));
            }
        };
        let sym_add = &mut |k: u64| {
            for _ in 0..k {
                word.atomic_add(black_box(1), pe).expect("add");
            }
        };
        let vec_add = &mut |k: u64| {
            for _ in 0..k {
                words.atomic_add(3, black_box(1), pe).expect("add");
            }
        };
        let ctx_fadd = &mut |k: u64| {
            for _ in 0..k {
                black_box(ctx.atomic_fetch_add(&word, black_box(1), pe).expect("fadd"));
            }
        };
        let ctx_cswap = &mut |k: u64| {
            for j in 0..k {
                black_box(ctx.atomic_compare_swap(&word, j, j + 1, pe).expect("cswap"));
            }
        };
        let nbi_put = &mut |k: u64| {
            shmem.nbi_scope(|s| {
                for _ in 0..k {
                    s.put_nbi(&v, 0, &src, pe).expect("put_nbi");
                }
            })
        };
        let nbi_fadd = &mut |k: u64| {
            let mut out = vec![0u64; k as usize];
            shmem.nbi_scope(|s| {
                for f in out.iter_mut() {
                    let _ = s.atomic_fetch_add_nbi(f, &word, 1, pe).expect("fadd_nbi");
                }
            });
            black_box(out);
        };
        let nbe_fadd = &mut |k: u64| {
            shmem.nbe_scope(|s| {
                for _ in 0..k {
                    black_box(s.atomic_fetch_add_nbe(&word, 1, pe).expect("nbe").wait());
                }
            })
        };
        let names = [
            "core ctx_put (default ctx), 8 B",
            "Shmem::put, 8 B",
            "Ctx::put (Private), 8 B",
            "Shmem::p",
            "Shmem::get, 8 B",
            "Shmem::g",
            "SymAtomic::atomic_fetch_add",
            "SymAtomic::atomic_add",
            "SymAtomicVec::atomic_add",
            "Ctx::atomic_fetch_add",
            "Ctx::atomic_compare_swap",
            "NbiScope::put_nbi, 8 B",
            "NbiScope::atomic_fetch_add_nbi",
            "NbeScope::atomic_fetch_add_nbe+wait",
        ];
        let mut bodies: [Body<'_>; 14] = [
            core_put, shmem_put, ctx_put, shmem_p, shmem_get, shmem_g, sym_fadd, sym_add, vec_add,
            ctx_fadd, ctx_cswap, nbi_put, nbi_fadd, nbe_fadd,
        ];
        let (target, samples) = if quick {
            (Duration::from_millis(2), 9)
        } else {
            (Duration::from_millis(10), 41)
        };
        let t = interleaved(&mut bodies, target, samples);
        println!("rshmem-bench api: safe Rust API per call, PE 0 to PE 1, interleaved");
        println!("{:<40} {:>10} {:>10}", "", "median ns", "min ns");
        for (name, x) in names.iter().zip(&t) {
            let l = Lat::of(x);
            println!("{name:<40} {:>10.2} {:>10.2}", l.median, l.min);
        }
        for (name, x) in names.iter().zip(&t) {
            println!(
                "{{\"bench\":\"api\",\"op\":\"{name}\",\"median_ns\":{:.3}}}",
                Lat::of(x).median
            );
        }
    }
    shmem.barrier_all();
    rshmem_core::memory::free("shmem_free", raw_sym).expect("free");
}
