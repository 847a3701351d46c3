//! Starting and ending an image: CAF init and finalize, THIS_IMAGE, NUM_IMAGES, STOP and ERROR STOP.

use std::ffi::{c_char, c_int};

use crate::{image, image_status, stat_errmsg, team};

/// Starts the image (from `main`, before the program's first statement).
///
/// Static coarrays were registered earlier, by constructors that also store their initial
/// values; the SYNC ALL here keeps a fast image from writing into another image's static
/// coarray before that image's initial values are in (they would overwrite the write).
///
/// # Safety
/// Called by gfortran's `main` with its arguments (unused).
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_init(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
) {
    const R: &str = "_gfortran_caf_init";
    image::init();
    if let Err(e) = team::sync_all(R) {
        stat_errmsg::fatal(R, &e.msg);
    }
}

/// Normal termination at the end of the main program.
#[no_mangle]
pub(super) extern "C" fn _gfortran_caf_finalize() {
    image::finalize();
}

/// `this_image()`: this image's number in the current team, from 1.
#[no_mangle]
pub(super) extern "C" fn _gfortran_caf_this_image(_distance: c_int) -> c_int {
    team::this_image("_gfortran_caf_this_image")
}

/// `num_images()` of the current team; `failed` (-1: absent) counts the failed images
/// (true) or the others (false).
#[no_mangle]
pub(super) extern "C" fn _gfortran_caf_num_images(_distance: c_int, failed: c_int) -> c_int {
    image_status::num_images("_gfortran_caf_num_images", failed)
}

/// Reads a Fortran string argument (null: none).
///
/// # Safety
/// `s` is null or readable for `len` bytes.
unsafe fn fstr(s: *const c_char, len: usize) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: contract.
    let b = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
    Some(String::from_utf8_lossy(b).into_owned())
}

/// `stop code`: this image ends normally (after every image has) with status `code`.
#[no_mangle]
pub(super) extern "C" fn _gfortran_caf_stop_numeric(code: c_int, quiet: bool) -> ! {
    image::stop(Some(code.to_string()), code, false, quiet)
}

/// `stop 'text'` (and a plain `stop`: null text): status 0.
///
/// # Safety
/// `s` is null or readable for `len` bytes.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_stop_str(
    s: *const c_char,
    len: usize,
    quiet: bool,
) -> ! {
    // SAFETY: forwarded contract.
    image::stop(unsafe { fstr(s, len) }, 0, false, quiet)
}

/// `error stop code`: ends every image with status `code`.
#[no_mangle]
pub(super) extern "C" fn _gfortran_caf_error_stop(code: c_int, quiet: bool) -> ! {
    image::stop(Some(code.to_string()), code, true, quiet)
}

/// `error stop 'text'`: ends every image with status 1.
///
/// # Safety
/// `s` is null or readable for `len` bytes.
#[no_mangle]
pub(super) unsafe extern "C" fn _gfortran_caf_error_stop_str(
    s: *const c_char,
    len: usize,
    quiet: bool,
) -> ! {
    // SAFETY: forwarded contract.
    let msg = unsafe { fstr(s, len) }.or(Some(String::new()));
    image::stop(msg, 1, true, quiet)
}
