//! Image control statements: SYNC ALL, SYNC MEMORY, SYNC IMAGES, LOCK, UNLOCK and events.

use std::ffi::{c_char, c_int};

use crate::image::state;
use crate::stat_errmsg::report;
use crate::{image_control, report_stat, token, TokenPtr};

/// The ERRMSG= buffer of a SYNC statement. gfortran 12 passes the address of a pointer
/// to the variable there (its `gfc_trans_sync` takes the address of an expression that is
/// already the string's address; measured with `-S`), unlike every other statement.
///
/// # Safety
/// `errmsg` is null or as gfortran passes it to SYNC ALL / IMAGES / MEMORY.
unsafe fn sync_errmsg(errmsg: *mut c_char) -> *mut c_char {
    if errmsg.is_null() {
        return errmsg;
    }
    // SAFETY: contract: a pointer-sized temporary holding the variable's address.
    unsafe { errmsg.cast::<*mut c_char>().read_unaligned() }
}

/// `sync all`.
///
/// # Safety
/// `stat`/`errmsg` null or writable.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_sync_all(
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_sync_all";
    state(R);
    // SAFETY: forwarded contract.
    unsafe {
        report(
            R,
            image_control::sync_all(),
            stat,
            sync_errmsg(errmsg),
            errmsg_len,
        )
    }
}

/// `sync memory`.
///
/// # Safety
/// `stat`/`errmsg` null or writable.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_sync_memory(
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_sync_memory";
    state(R);
    // SAFETY: forwarded contract.
    unsafe {
        report(
            R,
            image_control::sync_memory(),
            stat,
            sync_errmsg(errmsg),
            errmsg_len,
        )
    }
}

/// `sync images(list)`; `count < 0` is `sync images(*)`.
///
/// # Safety
/// `images` holds `count` ints when `count >= 0`; `stat`/`errmsg` null or writable.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_sync_images(
    count: c_int,
    images: *const c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_sync_images";
    let list = (count >= 0).then(|| {
        if count == 0 || images.is_null() {
            &[][..]
        } else {
            // SAFETY: contract.
            unsafe { std::slice::from_raw_parts(images, count as usize) }
        }
    });
    // SAFETY: forwarded contract.
    unsafe {
        report(
            R,
            image_control::sync_images(R, list),
            stat,
            sync_errmsg(errmsg),
            errmsg_len,
        )
    }
}

/// `lock(l[image])` (`critical` too, on its own token at image 1).
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_lock(
    token: TokenPtr,
    index: usize,
    image_index: c_int,
    acquired_lock: *mut c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_lock";
    // SAFETY: a registered token; `acquired_lock` null or writable.
    unsafe {
        let t = token::token(R, token);
        let r = image_control::lock(R, t, index, image_index, acquired_lock.as_mut());
        report(R, r, stat, errmsg, errmsg_len);
    }
}

/// `unlock(l[image])`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_unlock(
    token: TokenPtr,
    index: usize,
    image_index: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_unlock";
    // SAFETY: a registered token.
    unsafe {
        let t = token::token(R, token);
        let r = image_control::unlock(R, t, index, image_index);
        report(R, r, stat, errmsg, errmsg_len);
    }
}

/// `event post(ev[image])`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_event_post(
    token: TokenPtr,
    index: usize,
    image_index: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_event_post";
    // SAFETY: a registered token.
    unsafe {
        let t = token::token(R, token);
        let r = image_control::event_post(R, t, index, image_index);
        report(R, r, stat, errmsg, errmsg_len);
    }
}

/// `event wait(ev, until_count=)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_event_wait(
    token: TokenPtr,
    index: usize,
    until_count: c_int,
    stat: *mut c_int,
    errmsg: *mut c_char,
    errmsg_len: usize,
) {
    const R: &str = "_gfortran_caf_event_wait";
    // SAFETY: a registered token.
    unsafe {
        let t = token::token(R, token);
        let r = image_control::event_wait(R, t, index, until_count);
        report(R, r, stat, errmsg, errmsg_len);
    }
}

/// `call event_query(ev[image], count)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_event_query(
    token: TokenPtr,
    index: usize,
    image_index: c_int,
    count: *mut c_int,
    stat: *mut c_int,
) {
    const R: &str = "_gfortran_caf_event_query";
    // SAFETY: a registered token; `count` writable.
    unsafe {
        let t = token::token(R, token);
        let r = image_control::event_query(R, t, index, image_index).map(|c| {
            if !count.is_null() {
                count.write(c as c_int);
            }
        });
        report_stat(R, r, stat);
    }
}
