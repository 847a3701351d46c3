//! Library setup and queries (`shmem_init[_thread]`, `start_pes`, `shmem_info_*`,
//! `shmem_query_*`, `shmemx_wtime`) and the result of an allocation (`shmem_malloc`...).

use core::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;
use std::time::Instant;

use rshmem_core::{Error, Result, ThreadLevel};

use super::checks::{debug, nonnull_mut};
use super::errors::{fail, ok};

pub(crate) fn init(routine: &'static str) {
    // C's globals and statics are symmetric (OpenSHMEM memory model).
    rshmem_core::world::enable_symmetric_data();
    if let Err(e) = rshmem_core::init(ThreadLevel::Single) {
        let _ = std::io::Write::flush(&mut std::io::stdout());
        eprintln!("{}", init_message(routine, &e));
        std::process::exit(1);
    }
}

/// `start_pes`: `shmem_init`, and finalization at exit without a warning (its programs
/// never call `shmem_finalize`).
pub(crate) fn start_pes(routine: &'static str) {
    init(routine);
    rshmem_core::world::finalize_at_exit_silently();
}

/// An init error naming the PE (when known) and `routine` once (the core's message
/// starts with `shmem_init:`, which `routine` replaces).
fn init_message(routine: &'static str, e: &rshmem_core::InitError) -> String {
    let msg = e.to_string();
    let body = msg.strip_prefix("shmem_init: ").unwrap_or(&msg);
    match rshmem_core::world::init_pe() {
        Some(pe) => format!("rshmem: PE {pe}: {routine}: {body}"),
        None => format!("rshmem: {routine}: {body}"),
    }
}

pub(crate) unsafe fn init_thread(
    routine: &'static str,
    requested: c_int,
    provided: *mut c_int,
) -> c_int {
    let level = match requested {
        0 => ThreadLevel::Single,
        1 => ThreadLevel::Funneled,
        2 => ThreadLevel::Serialized,
        3 => ThreadLevel::Multiple,
        _ => return -1,
    };
    rshmem_core::world::enable_symmetric_data();
    match rshmem_core::init(level) {
        Ok(got) => {
            if !provided.is_null() {
                // SAFETY: a non-null `provided` points at an int (spec).
                unsafe { provided.write(got as c_int) };
            }
            0
        }
        Err(e) => {
            eprintln!("{}", init_message(routine, &e));
            -1
        }
    }
}

pub(crate) unsafe fn info_get_version(routine: &'static str, major: *mut c_int, minor: *mut c_int) {
    let (a, b) = rshmem_core::setup::info_get_version();
    nonnull_mut(routine, "major", major, 1);
    nonnull_mut(routine, "minor", minor, 1);
    // SAFETY: the caller passes two ints (spec).
    unsafe {
        major.write(a);
        minor.write(b);
    }
}

pub(crate) unsafe fn info_get_name(routine: &'static str, name: *mut c_char) {
    nonnull_mut(routine, "name", name, 1);
    let s = rshmem_core::setup::info_get_name().as_bytes();
    // SHMEM_MAX_NAME_LEN (256) bytes at most, NUL included.
    let n = s.len().min(255);
    // SAFETY: the caller passes SHMEM_MAX_NAME_LEN bytes (spec).
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast(), name, n);
        name.add(n).write(0);
    }
}

pub(crate) unsafe fn query_thread(routine: &'static str, provided: *mut c_int) {
    let level = ok(rshmem_core::setup::query_thread());
    nonnull_mut(routine, "provided", provided, 1);
    // SAFETY: the caller passes an int (spec).
    unsafe { provided.write(level as c_int) };
}

pub(crate) unsafe fn query_initialized(routine: &'static str, initialized: *mut c_int) {
    nonnull_mut(routine, "initialized", initialized, 1);
    // SAFETY: the caller passes an int (spec).
    unsafe { initialized.write(rshmem_core::initialized() as c_int) };
}

pub(crate) fn wtime() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// An allocation's result: an exhausted heap gives NULL (as the spec asks), any other
/// error ends the job.
pub(crate) fn alloc(r: Result<*mut u8>) -> *mut c_void {
    match r {
        Ok(p) => p.cast(),
        Err(e @ Error::HeapExhausted { .. }) => {
            if debug() {
                eprintln!("rshmem: {e}");
            }
            std::ptr::null_mut()
        }
        Err(e) => fail(e),
    }
}
