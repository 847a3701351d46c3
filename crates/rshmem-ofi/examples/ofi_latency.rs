//! Latency of 8-byte operations between two endpoints of one process, each opened as another
//! process would (its own domain), not asserted anywhere:
//! `cargo run --release -p rshmem-ofi --example ofi_latency [PROVIDER] [ITERATIONS] [spin]`
//! (PROVIDER default `tcp;ofi_rxm`; `env` takes the first that FI_PROVIDER allows). The
//! target is served by a [`ProgressThread`] sleeping on its queue's wait fd (or in the
//! provider), as a PE's service endpoint is, or with `spin` by a thread polling without
//! pause (the floor a busy target would give).

use rshmem_ofi::{AtomicOp, AtomicType, Ofi, OpenOptions, ProgressThread};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let provider = args.get(1).map(String::as_str).unwrap_or("tcp;ofi_rxm");
    let iters: u32 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(5000);
    let spin = args.get(3).map(String::as_str) == Some("spin");
    let opts = OpenOptions {
        provider: (provider != "env").then_some(provider),
        ..OpenOptions::default()
    };
    let (target_ofi, ofi) = (Ofi::open_with(&opts)?, Ofi::open_with(&opts)?);

    let mut heap = vec![0u64; 1024];
    let region = target_ofi.register(heap.as_mut_ptr().cast(), heap.len() * 8)?;
    let target = target_ofi.endpoint_with_wait_fd()?;
    let stop = Arc::new(AtomicBool::new(false));
    let (progress, spinner) = if spin {
        let (p, s) = (target.progress_handle(), stop.clone());
        let h = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.progress();
            }
        });
        (None, Some(h))
    } else {
        (Some(ProgressThread::start(target.progress_handle())?), None)
    };
    let ep = ofi.endpoint()?;
    let peer = ofi.insert(&target.name()?)?;
    let key = region.remote_key();
    let raddr = region.addr();

    let time =
        |name: &str, f: &mut dyn FnMut() -> rshmem_ofi::Result<()>| -> rshmem_ofi::Result<()> {
            for _ in 0..iters / 10 {
                f()?; // warm-up (connection, caches)
            }
            let t = Instant::now();
            for _ in 0..iters {
                f()?;
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(iters);
            println!("{name:<28} {us:8.2} us");
            Ok(())
        };
    println!(
        "libfabric {:?}, provider {} (fabric {}, domain {}), manual progress {}, target {}, \
         {iters} iterations, 8-byte operations",
        ofi.library_version(),
        ofi.provider(),
        ofi.fabric_name(),
        ofi.domain_name(),
        ofi.manual_progress(),
        if spin { "spinning" } else { "progress thread" }
    );
    let v = 7u64.to_ne_bytes();
    time("put + quiet", &mut || {
        ep.put(&v, peer, raddr, &key)?;
        ep.quiet()
    })?;
    time("put (pipelined, per op)", &mut || {
        ep.put(&v, peer, raddr + 8, &key)
    })?;
    ep.quiet()?;
    let mut g = [0u8; 8];
    time("get", &mut || ep.get(&mut g, peer, raddr, &key))?;
    time("fetch-add 64", &mut || {
        ep.atomic_fetch(AtomicOp::Sum, AtomicType::U64, 1, peer, raddr + 16, &key)
            .map(drop)
    })?;
    time("fetch-add 32", &mut || {
        ep.atomic_fetch(AtomicOp::Sum, AtomicType::U32, 1, peer, raddr + 24, &key)
            .map(drop)
    })?;
    time("compare-swap 64", &mut || {
        ep.compare_swap(AtomicType::U64, 0, 1, peer, raddr + 32, &key)
            .map(drop)
    })?;
    time("posted add 64 + quiet", &mut || {
        ep.atomic_post(AtomicOp::Sum, AtomicType::U64, 1, peer, raddr + 40, &key)?;
        ep.quiet()
    })?;

    drop(ep);
    if let Some(p) = progress {
        p.stop()?;
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(h) = spinner {
        h.join().expect("spinner");
    }
    drop((target, region));
    drop(heap);
    Ok(())
}
