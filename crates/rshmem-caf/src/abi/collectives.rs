//! Collective subroutines: CO_BROADCAST, CO_SUM, CO_MIN, CO_MAX and CO_REDUCE.

use std::ffi::{c_char, c_int, c_void};

use rshmem_core::coll::ReduceOp;

use crate::desc::DescPtr;
use crate::stat_errmsg::report;
use crate::{coll, Desc};

/// `call co_broadcast(a, source_image)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_co_broadcast(
    a: Desc,
    source_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let a: DescPtr = a.cast();
    const R: &str = "_gfortran_caf_co_broadcast";
    // SAFETY: forwarded contract.
    unsafe {
        let r = coll::co_broadcast(R, a, source_image);
        report(R, r, stat, coll_errmsg(errmsg), errmsg_len);
    }
}

/// `call co_sum(a, result_image)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_co_sum(
    a: Desc,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let a: DescPtr = a.cast();
    const R: &str = "_gfortran_caf_co_sum";
    // SAFETY: forwarded contract.
    unsafe {
        let r = coll::co_op(R, a, ReduceOp::Sum, result_image);
        report(R, r, stat, coll_errmsg(errmsg), errmsg_len);
    }
}

/// `call co_min(a, result_image)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_co_min(
    a: Desc,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    _a_len: c_int,
    errmsg_len: usize,
) {
    let a: DescPtr = a.cast();
    const R: &str = "_gfortran_caf_co_min";
    // SAFETY: forwarded contract.
    unsafe {
        let r = coll::co_op(R, a, ReduceOp::Min, result_image);
        report(R, r, stat, coll_errmsg(errmsg), errmsg_len);
    }
}

/// `call co_max(a, result_image)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_co_max(
    a: Desc,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    _a_len: c_int,
    errmsg_len: usize,
) {
    let a: DescPtr = a.cast();
    const R: &str = "_gfortran_caf_co_max";
    // SAFETY: forwarded contract.
    unsafe {
        let r = coll::co_op(R, a, ReduceOp::Max, result_image);
        report(R, r, stat, coll_errmsg(errmsg), errmsg_len);
    }
}

/// `call co_reduce(a, operation, result_image)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn _gfortran_caf_co_reduce(
    a: Desc,
    opr: *mut c_void,
    opr_flags: c_int,
    result_image: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    _a_len: c_int,
    errmsg_len: usize,
) {
    let a: DescPtr = a.cast();
    const R: &str = "_gfortran_caf_co_reduce";
    // SAFETY: forwarded contract.
    unsafe {
        let r = coll::co_reduce(R, a, opr, opr_flags, result_image);
        report(R, r, stat, coll_errmsg(errmsg), errmsg_len);
    }
}

/// The ERRMSG= buffer of a collective subroutine. gfortran 12 passes the variable itself
/// by value there (a copy on the stack, where no runtime can reach the caller's
/// variable), so the register meant for its address holds the next integer argument
/// (the source's or the message's length): no valid address is that small (Linux maps
/// nothing below 64 KiB), and then the message goes to STAT= only.
fn coll_errmsg(errmsg: *mut c_char) -> *mut c_char {
    if (errmsg as usize) < 1 << 16 {
        std::ptr::null_mut()
    } else {
        errmsg
    }
}
