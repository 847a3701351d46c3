//! Coindexed accesses: send, get and send-get, by descriptor and by reference, and IS_PRESENT.

use std::ffi::{c_int, c_void};

use crate::desc::{DescPtr, Shape, Ty};
use crate::image::{pe_of, state};
use crate::{
    byref, fast, fast_stat, image_status, report_stat, stat_errmsg, team, token, vector, view,
    xfer, Desc, TokenPtr,
};

/// `a(...)[image] = src`: writes the section `dest` (its shape; the data lies `offset`
/// bytes into the coarray on `image`) from local `src`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_send(
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    dest: Desc,
    dst_vector: *mut c_void,
    src: Desc,
    dst_kind: c_int,
    src_kind: c_int,
    may_require_tmp: bool,
    stat: *mut c_int,
    team: *mut c_void,
) {
    let dest: DescPtr = dest.cast();
    let src: DescPtr = src.cast();
    const R: &str = "_gfortran_caf_send";
    // SAFETY: the compiler passes valid descriptors and a registered token.
    unsafe {
        let t = token::token(R, token);
        if dst_vector.is_null() && team.is_null() {
            let s = state(R);
            if let Some(r) = fast::send(
                R,
                s,
                t.base + offset,
                image_index,
                dest,
                src,
                dst_kind,
                src_kind,
            ) {
                return fast_stat(R, r, stat);
            }
        }
        send_general(
            t,
            offset,
            image_index,
            dest,
            dst_vector,
            src,
            dst_kind,
            src_kind,
            may_require_tmp,
            stat,
            team,
        );
    }
}

/// `_gfortran_caf_send` beyond the short path, apart so that the short path's frame
/// stays small (no spills of the general path's registers on every 8-byte put).
///
/// # Safety
/// As `_gfortran_caf_send`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the entry point's arguments
unsafe fn send_general(
    t: &token::Token,
    offset: usize,
    image_index: c_int,
    dest: DescPtr,
    dst_vector: *mut c_void,
    src: DescPtr,
    dst_kind: c_int,
    src_kind: c_int,
    may_require_tmp: bool,
    stat: *mut c_int,
    team: *mut c_void,
) {
    const R: &str = "_gfortran_caf_send";
    // SAFETY: forwarded contract.
    unsafe {
        if !dst_vector.is_null() {
            let r = vector::send(
                R,
                t,
                offset,
                image_index,
                dest,
                dst_vector,
                src,
                dst_kind,
                src_kind,
            );
            return report_stat(R, r, stat);
        }
        let r = (|| {
            let s = state(R);
            // gfortran 12 passes `team=` of a coindexed write (not of a read).
            let pe = team::pe_in(R, team, image_index)?;
            let src = view(src, src_kind);
            xfer::put_from(
                R,
                pe,
                t.base + offset,
                &Shape::of(dest),
                Ty::of(dest, dst_kind),
                &src,
                may_require_tmp && pe == s.me,
            )
        })();
        report_stat(R, r, stat);
    }
}

/// `dest = a(...)[image]`: reads the section `src` (`offset` bytes into the coarray on
/// `image`) into local `dest`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_get(
    token: TokenPtr,
    offset: usize,
    image_index: c_int,
    src: Desc,
    src_vector: *mut c_void,
    dest: Desc,
    src_kind: c_int,
    dst_kind: c_int,
    may_require_tmp: bool,
    stat: *mut c_int,
) {
    let src: DescPtr = src.cast();
    let dest: DescPtr = dest.cast();
    const R: &str = "_gfortran_caf_get";
    // SAFETY: the compiler passes valid descriptors and a registered token.
    unsafe {
        let t = token::token(R, token);
        if src_vector.is_null() && stat.is_null() {
            let s = state(R);
            if let Some(r) = fast::get(
                R,
                s,
                t.base + offset,
                image_index,
                src,
                dest,
                src_kind,
                dst_kind,
            ) {
                return fast_stat(R, r, stat);
            }
        }
        get_general(
            t,
            offset,
            image_index,
            src,
            src_vector,
            dest,
            src_kind,
            dst_kind,
            may_require_tmp,
            stat,
        );
    }
}

/// `_gfortran_caf_get` beyond the short path (see [`send_general`]).
///
/// # Safety
/// As `_gfortran_caf_get`.
#[inline(never)]
#[allow(clippy::too_many_arguments)] // the entry point's arguments
unsafe fn get_general(
    t: &token::Token,
    offset: usize,
    image_index: c_int,
    src: DescPtr,
    src_vector: *mut c_void,
    dest: DescPtr,
    src_kind: c_int,
    dst_kind: c_int,
    may_require_tmp: bool,
    stat: *mut c_int,
) {
    const R: &str = "_gfortran_caf_get";
    // SAFETY: forwarded contract.
    unsafe {
        if !src_vector.is_null() {
            let r = vector::get(
                R,
                t,
                offset,
                image_index,
                src,
                src_vector,
                dest,
                src_kind,
                dst_kind,
            );
            return report_stat(R, r, stat);
        }
        let r = (|| {
            let s = state(R);
            let pe = pe_of(s, image_index)?;
            if !stat.is_null() {
                // STAT= on the image selector: a stopped or failed image is reported.
                image_status::check_image(R, pe)?;
            }
            let dst = view(dest, dst_kind);
            xfer::get_into(
                R,
                pe,
                t.base + offset,
                &Shape::of(src),
                Ty::of(src, src_kind),
                &dst,
                may_require_tmp && pe == s.me,
            )
        })();
        report_stat(R, r, stat);
    }
}

/// `a(...)[i] = b(...)[j]`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_sendget(
    dst_token: TokenPtr,
    dst_offset: usize,
    dst_image_index: c_int,
    dest: Desc,
    dst_vector: *mut c_void,
    src_token: TokenPtr,
    src_offset: usize,
    src_image_index: c_int,
    src: Desc,
    src_vector: *mut c_void,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    stat: *mut c_int,
) {
    let dest: DescPtr = dest.cast();
    let src: DescPtr = src.cast();
    const R: &str = "_gfortran_caf_sendget";
    // SAFETY: the compiler passes valid descriptors and registered tokens.
    unsafe {
        let (dt, st) = (token::token(R, dst_token), token::token(R, src_token));
        if !dst_vector.is_null() || !src_vector.is_null() {
            let r = vector::sendget(
                R,
                (dt, dst_offset, dst_image_index, dest, dst_vector),
                (st, src_offset, src_image_index, src, src_vector),
                dst_kind,
                src_kind,
            );
            return report_stat(R, r, stat);
        }
        let r = (|| {
            let s = state(R);
            xfer::send_get(
                R,
                pe_of(s, dst_image_index)?,
                dt.base + dst_offset,
                &Shape::of(dest),
                Ty::of(dest, dst_kind),
                pe_of(s, src_image_index)?,
                st.base + src_offset,
                &Shape::of(src),
                Ty::of(src, src_kind),
            )
        })();
        report_stat(R, r, stat);
    }
}

/// `x = obj[image]%comp...`: a read through a reference chain (allocatable or pointer
/// components, reallocation of the destination).
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_get_by_ref(
    token: TokenPtr,
    image_index: c_int,
    dst: Desc,
    refs: *mut c_void,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    dst_reallocatable: bool,
    stat: *mut c_int,
    src_type: c_int,
) {
    const R: &str = "_gfortran_caf_get_by_ref";
    // SAFETY: forwarded contract.
    unsafe {
        let r = byref::get_by_ref(
            R,
            token,
            image_index,
            dst.cast(),
            refs,
            dst_kind,
            src_kind,
            dst_reallocatable,
            src_type,
        );
        report_stat(R, r, stat);
    }
}

/// `obj[image]%comp... = x`: a write through a reference chain.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_send_by_ref(
    token: TokenPtr,
    image_index: c_int,
    src: Desc,
    refs: *mut c_void,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    _dst_reallocatable: bool,
    stat: *mut c_int,
    dst_type: c_int,
) {
    const R: &str = "_gfortran_caf_send_by_ref";
    // SAFETY: forwarded contract.
    unsafe {
        let r = byref::send_by_ref(
            R,
            token,
            image_index,
            src.cast(),
            refs,
            dst_kind,
            src_kind,
            dst_type,
        );
        report_stat(R, r, stat);
    }
}

/// `obj[i]%comp... = obj2[j]%comp...`: a copy between two reference chains.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_sendget_by_ref(
    dst_token: TokenPtr,
    dst_image_index: c_int,
    dst_refs: *mut c_void,
    src_token: TokenPtr,
    src_image_index: c_int,
    src_refs: *mut c_void,
    dst_kind: c_int,
    src_kind: c_int,
    _may_require_tmp: bool,
    dst_stat: *mut c_int,
    src_stat: *mut c_int,
    dst_type: c_int,
    src_type: c_int,
) {
    const R: &str = "_gfortran_caf_sendget_by_ref";
    // SAFETY: forwarded contract.
    unsafe {
        let r = byref::sendget_by_ref(
            R,
            (dst_token, dst_image_index, dst_refs, dst_kind, dst_type),
            (src_token, src_image_index, src_refs, src_kind, src_type),
        );
        if !src_stat.is_null() {
            report_stat(R, r.clone(), src_stat);
        }
        report_stat(R, r, dst_stat);
    }
}

/// `allocated(obj[image]%comp)`: whether the component is allocated on that image.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_is_present(
    token: TokenPtr,
    image_index: c_int,
    refs: *mut c_void,
) -> c_int {
    const R: &str = "_gfortran_caf_is_present";
    // SAFETY: forwarded contract.
    match unsafe { byref::is_present(R, token, image_index, refs) } {
        Ok(p) => p as c_int,
        Err(e) => stat_errmsg::fatal(R, &e.msg),
    }
}
