//! Where oshrun placed this PE: prints `affinity pe=<me> cpus=<Cpus_allowed_list of
//! /proc/self/status> oversubscribed=<the runtime's view> cpu=<the CPU it runs on>` after
//! init, then passes a few barriers (a bound job must still run) and prints
//! `ok bind_probe pe=<me>`. With `start-on=N` it first moves to CPU N and back to all of
//! its CPUs, as PEs that a launcher started on one CPU.

use rshmem_core::{sync, world, ThreadLevel};

/// Runs this thread on `cpu` alone, then on all the CPUs it had: it stays on `cpu`.
fn start_on(cpu: usize) {
    // SAFETY: cpu_set_t is plain bits (all zero is a valid empty set); the calls read and
    // write only the sets passed, of the size given.
    unsafe {
        let mut all: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut all), 0);
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        assert_eq!(libc::sched_setaffinity(0, size, &one), 0);
        assert_eq!(libc::sched_setaffinity(0, size, &all), 0);
    }
}

fn main() {
    if let Some(cpu) = std::env::args().find_map(|a| a.strip_prefix("start-on=").map(String::from))
    {
        start_on(cpu.parse().expect("start-on=CPU"));
    }
    world::init(ThreadLevel::Single).expect("init");
    // SAFETY: a plain system call.
    let cpu = unsafe { libc::sched_getcpu() };
    let rt = rshmem_core::runtime::try_runtime().expect("runtime");
    let me = rt.my_pe();
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let cpus = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim();
    println!(
        "affinity pe={me} cpus={cpus} oversubscribed={} cpu={cpu}",
        rt.oversubscribed()
    );
    for _ in 0..100 {
        sync::barrier_all().expect("barrier_all");
    }
    println!("ok bind_probe pe={me}");
    world::finalize();
}
