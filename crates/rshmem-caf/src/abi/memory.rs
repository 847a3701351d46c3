//! Coarray allocation: registering and deregistering coarrays on the symmetric heap.

use std::ffi::{c_char, c_int};

use crate::desc::DescPtr;
use crate::image::state;
use crate::stat_errmsg::report;
use crate::{token, Desc, TokenPtr};

/// Registers a coarray (collective for every kind but allocatable components).
///
/// # Safety
/// As gfortran calls it: `token` writable, `desc` a descriptor, `stat`/`errmsg` null or
/// writable.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_register(
    size: usize,
    ty: c_int,
    token: *mut TokenPtr,
    desc: Desc,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    let desc: DescPtr = desc.cast();
    const R: &str = "_gfortran_caf_register";
    state(R);
    // SAFETY: forwarded contract.
    unsafe {
        let r = token::register(R, size, ty, token, desc);
        report(R, r, stat, errmsg, errmsg_len);
    }
}

/// Frees a coarray (collective).
///
/// # Safety
/// `token` points at a registered token; `stat`/`errmsg` null or writable.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_deregister(
    token: *mut TokenPtr,
    ty: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_deregister";
    // SAFETY: forwarded contract.
    unsafe {
        let r = token::deregister(R, token, ty);
        report(R, r, stat, errmsg, errmsg_len);
    }
}
