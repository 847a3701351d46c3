//! Setup and query routines: PE numbers, accessibility, `shmem_ptr`, version.

use crate::error::Result;
use crate::runtime::{rt, Runtime, ThreadLevel, SPEC_VERSION, VENDOR_STRING};

/// `shmem_my_pe`.
pub fn my_pe() -> Result<usize> {
    Ok(rt("shmem_my_pe")?.me)
}

/// `shmem_n_pes`.
pub fn n_pes() -> Result<usize> {
    Ok(rt("shmem_n_pes")?.npes)
}

/// `shmem_query_thread`.
pub fn query_thread() -> Result<ThreadLevel> {
    Ok(rt("shmem_query_thread")?.thread_level)
}

/// `shmem_pe_accessible`: whether `pe` is a PE of this job that a transport reaches.
pub fn pe_accessible(pe: i64) -> Result<bool> {
    let rt = rt("shmem_pe_accessible")?;
    // Every PE of the job has a route: shared memory or UCX (init fails otherwise).
    Ok(rt.pe("shmem_pe_accessible", pe).is_ok())
}

/// `shmem_addr_accessible`: whether `addr` is symmetric and reachable on `pe`.
pub fn addr_accessible(addr: usize, pe: i64) -> Result<bool> {
    let rt = rt("shmem_addr_accessible")?;
    Ok(pe_accessible(pe)? && rt.sym("shmem_addr_accessible", "addr", addr, 1).is_ok())
}

/// `shmem_ptr`: a load/store address of symmetric `addr` on `pe`, or null when the PE's
/// memory is not mapped here.
pub fn ptr(addr: usize, pe: i64) -> Result<*mut u8> {
    let rt = rt("shmem_ptr")?;
    Ok(ptr_in(rt, addr, pe).unwrap_or(std::ptr::null_mut()))
}

pub(crate) fn ptr_in(rt: &Runtime, addr: usize, pe: i64) -> Option<*mut u8> {
    let pe = rt.pe("shmem_ptr", pe).ok()?;
    let a = rt.sym("shmem_ptr", "dest", addr, 0).ok()?;
    rt.fabric.ptr(pe, a)
}

/// `shmem_info_get_version`.
pub fn info_get_version() -> (i32, i32) {
    SPEC_VERSION
}

/// `shmem_info_get_name`.
pub fn info_get_name() -> &'static str {
    VENDOR_STRING
}

/// `shmem_global_exit`: ends every PE of the job with `status`.
pub fn global_exit(status: i32) -> ! {
    match rt("shmem_global_exit") {
        Ok(rt) => rt.global_exit(status),
        // Not a PE of a job yet: end this process, with the same status mapping.
        Err(_) => std::process::exit(rshmem_boot::exit_status(status)),
    }
}
