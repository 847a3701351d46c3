//! Where oshrun placed this PE: prints `affinity pe=<me> cpus=<Cpus_allowed_list of
//! /proc/self/status> oversubscribed=<the runtime's view>` after init, then passes a few
//! barriers (a bound job must still run) and prints `ok bind_probe pe=<me>`.

use rshmem_core::{sync, world, ThreadLevel};

fn main() {
    world::init(ThreadLevel::Single).expect("init");
    let rt = rshmem_core::runtime::try_runtime().expect("runtime");
    let me = rt.my_pe();
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim();
    println!(
        "affinity pe={me} cpus={cpus} oversubscribed={}",
        rt.oversubscribed()
    );
    for _ in 0..100 {
        sync::barrier_all().expect("barrier_all");
    }
    println!("ok bind_probe pe={me}");
    world::finalize();
}
