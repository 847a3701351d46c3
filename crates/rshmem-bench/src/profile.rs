//! The cost of the profiling counters: the 8-byte put rate with counting off
//! (`shmem_pcontrol(0)`), on with sampled time (level 1, as `SHMEM_PROFILE=1`) and on
//! with every call timed (level 2), interleaved in one run, with their ratios to off.

use std::hint::black_box;
use std::time::Duration;

use rshmem_core::profile;
use rshmem_core::Ctx;
use rshmem_core::{memory, order, rma, setup, sync};

use crate::pe::{init, ok};
use crate::stats::{interleaved, Body, Lat};

/// Puts per window before the offsets wrap (keeps the destination in cache).
const WINDOW: u64 = 64;

/// `oshrun -np 2 rshmem-bench profile`: PE 0 puts to PE 1.
pub(crate) fn run(quick: bool) {
    init();
    let me = ok(setup::my_pe());
    let npes = ok(setup::n_pes());
    if npes != 2 {
        if me == 0 {
            eprintln!("rshmem-bench profile: run me on exactly 2 PEs (oshrun -np 2), not {npes}");
        }
        setup::global_exit(2);
    }
    let sym = ok(memory::align("shmem_align", 4096, (WINDOW * 8) as usize));
    ok(sync::barrier_all());
    if me == 0 {
        let src = [0xa5u8; 8];
        let s = src.as_ptr();
        let level_body = |level: i32| {
            move |k: u64| {
                profile::set_level(level);
                for j in 0..k {
                    let off = ((j % WINDOW) * 8) as usize;
                    // SAFETY: `s` is readable for 8 bytes; `sym + off` lies in the block.
                    ok(unsafe {
                        rma::ctx_put(
                            Ctx::default_ctx(),
                            "shmem_putmem",
                            sym.wrapping_add(off),
                            black_box(s),
                            8,
                            1,
                        )
                    });
                }
                ok(order::quiet());
                profile::set_level(0);
            }
        };
        let (mut off, mut on, mut all) = (level_body(0), level_body(1), level_body(2));
        let mut bodies: [Body<'_>; 3] = [&mut off, &mut on, &mut all];
        let (target, samples) = if quick {
            (Duration::from_millis(2), 5)
        } else {
            (Duration::from_millis(20), 31)
        };
        let t = interleaved(&mut bodies, target, samples);
        let rate: Vec<f64> = t.iter().map(|x| 1e3 / Lat::of(x).median).collect();
        println!("rshmem-bench profile: 8-byte shmem_putmem rate, PE 0 to PE 1, interleaved");
        println!("{:<34} {:>10} {:>10}", "", "Mmsg/s", "x off");
        for (k, name) in [
            "counting off (pcontrol 0)",
            "counting on, time sampled (1)",
            "counting on, every call timed (2)",
        ]
        .into_iter()
        .enumerate()
        {
            println!("{name:<34} {:>10.2} {:>10.3}", rate[k], rate[k] / rate[0]);
        }
        println!(
            "{{\"bench\":\"profile_put_msgrate\",\"size\":8,\"off\":{:.3},\"on\":{:.3},\"timed\":{:.3},\"ratio_on\":{:.4}}}",
            rate[0],
            rate[1],
            rate[2],
            rate[1] / rate[0]
        );
    }
    ok(sync::barrier_all());
    ok(memory::free("shmem_free", sym));
    rshmem_core::finalize();
}
