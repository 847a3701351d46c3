//! Latency of 8-byte operations between two workers of one process (the target served by a
//! progress thread), not asserted anywhere: `cargo run --release -p rshmem-ucx --example
//! ucx_latency [TLS] [ITERATIONS] [noerr]` (TLS default `tcp`; `env` keeps the UCX_TLS
//! environment; `noerr` connects without peer error handling, letting UCX use shared memory).

use rshmem_ucx::{FetchOp, LoadOptions, ProgressThread, Ucp};
use std::sync::Arc;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let tls = args.get(1).map(String::as_str).unwrap_or("tcp");
    let iters: u32 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(5000);
    let cfg = [("TLS", tls)];
    let config = if tls == "env" { &cfg[..0] } else { &cfg[..] };
    let ucp = Ucp::load_with(&LoadOptions {
        config,
        ..Default::default()
    })?;

    let mut heap = vec![0u64; 1024];
    let region = ucp.mem_map(heap.as_mut_ptr().cast(), heap.len() * 8)?;
    let target = Arc::new(ucp.worker()?);
    let progress = ProgressThread::start(target.clone())?;
    let client = ucp.worker()?;
    let peer_errors = args.get(3).map(String::as_str) != Some("noerr");
    let ep = client.connect_with(&target.address()?, peer_errors)?;
    let rkey = ep.unpack_rkey(&region.pack_rkey()?)?;
    let raddr = region.addr();

    let time =
        |name: &str, f: &mut dyn FnMut() -> rshmem_ucx::Result<()>| -> rshmem_ucx::Result<()> {
            for _ in 0..iters / 10 {
                f()?; // warm-up (wire-up, caches)
            }
            let t = Instant::now();
            for _ in 0..iters {
                f()?;
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(iters);
            println!("{name:<24} {us:8.2} us");
            Ok(())
        };
    println!(
        "UCX {} TLS={tls}, peer errors {peer_errors}, {iters} iterations, 8-byte operations",
        ucp.version()
    );
    let v = 7u64.to_ne_bytes();
    time("put + flush", &mut || {
        ep.put_blocking(&v, raddr, &rkey)?;
        client.flush()
    })?;
    time("put (pipelined, per op)", &mut || {
        ep.put_blocking(&v, raddr + 8, &rkey)
    })?;
    client.flush()?;
    let mut g = [0u8; 8];
    time("get", &mut || ep.get_blocking(&mut g, raddr, &rkey))?;
    time("fetch-add 64", &mut || {
        ep.atomic_fetch(FetchOp::Add, 1, 8, raddr + 16, &rkey)
            .map(drop)
    })?;
    time("fetch-add 32", &mut || {
        ep.atomic_fetch(FetchOp::Add, 1, 4, raddr + 24, &rkey)
            .map(drop)
    })?;
    time("cswap 64", &mut || {
        ep.cswap(0, 1, 8, raddr + 32, &rkey).map(drop)
    })?;

    drop((rkey, ep));
    progress.stop()?;
    drop(region);
    drop(heap);
    Ok(())
}
