//! Atomic subroutines on coarrays: ATOMIC_DEFINE, ATOMIC_REF, ATOMIC_CAS and ATOMIC_OP.

use std::ffi::{c_int, c_void};

use crate::image_control::AtomicKind;
use crate::{image_control, report_stat, token, TokenPtr};

/// Runs an atomic subroutine and stores the previous value in `old` (if not null).
///
/// # Safety
/// As gfortran calls the atomic entry points.
#[allow(clippy::too_many_arguments)]
unsafe fn atomic(
    routine: &'static str,
    what: AtomicKind,
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    value: *const u8,
    compare: *const u8,
    old: *mut u8,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: forwarded contract.
    unsafe {
        let t = token::token(routine, token);
        let r = image_control::atomic_sub(
            routine,
            what,
            t,
            offset,
            image_index,
            value,
            compare,
            ty,
            kind,
        )
        .map(|prev| {
            if !old.is_null() {
                match kind {
                    4 => old.cast::<i32>().write_unaligned(prev as i32),
                    _ => old.cast::<i64>().write_unaligned(prev),
                }
            }
        });
        report_stat(routine, r, stat);
    }
}

/// `call atomic_define(a[image], value)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_atomic_define(
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    value: *mut c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: forwarded contract.
    unsafe {
        atomic(
            "_gfortran_caf_atomic_define",
            AtomicKind::Define,
            token,
            offset,
            image_index,
            value.cast(),
            std::ptr::null(),
            std::ptr::null_mut(),
            stat,
            ty,
            kind,
        )
    }
}

/// `call atomic_ref(value, a[image])`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_atomic_ref(
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    value: *mut c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: forwarded contract.
    unsafe {
        atomic(
            "_gfortran_caf_atomic_ref",
            AtomicKind::Ref,
            token,
            offset,
            image_index,
            std::ptr::null(),
            std::ptr::null(),
            value.cast(),
            stat,
            ty,
            kind,
        )
    }
}

/// `call atomic_cas(a[image], old, compare, new)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_atomic_cas(
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    old: *mut c_void,
    compare: *mut c_void,
    new_val: *mut c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: forwarded contract.
    unsafe {
        atomic(
            "_gfortran_caf_atomic_cas",
            AtomicKind::Cas,
            token,
            offset,
            image_index,
            new_val.cast(),
            compare.cast(),
            old.cast(),
            stat,
            ty,
            kind,
        )
    }
}

/// `call atomic_add/and/or/xor(a[image], value)` and the `atomic_fetch_*` forms (`old`
/// not null).
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_atomic_op(
    op: c_int,
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    value: *mut c_void,
    old: *mut c_void,
    stat: *mut c_int,
    ty: c_int,
    kind: c_int,
) {
    // SAFETY: forwarded contract.
    unsafe {
        atomic(
            "_gfortran_caf_atomic_op",
            AtomicKind::Op(op),
            token,
            offset,
            image_index,
            value.cast(),
            std::ptr::null(),
            old.cast(),
            stat,
            ty,
            kind,
        )
    }
}
