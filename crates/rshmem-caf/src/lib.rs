//! libcaf_rshmem: the Coarray Fortran runtime of rshmem, for `gfortran -fcoarray=lib`.
//!
//! It exports the `_gfortran_caf_*` entry points of gfortran's library ABI as GCC 8 to 14
//! emit them (checked against gfortran 12; `shared/design/CAF-ABI.md`), over `rshmem-core`
//! directly: an image is a PE, a coarray a block of the symmetric heap, a coindexed
//! access a put or get (strided sections as in seed 003), SYNC IMAGES a pair of counters,
//! a lock an MCS queue lock at the image holding it, a collective subroutine a team
//! collective. Entry points this runtime does not implement yet end the job with a
//! message naming the feature, never silently doing the wrong thing.
//!
//! Build with `gfortran -fcoarray=lib prog.f90 -lcaf_rshmem` (or the installed `caf`
//! wrapper) and run with `cafrun -n N ./prog` (`oshrun`).

mod byref;
mod coll;
mod convert;
mod desc;
mod fast;
mod image;
mod image_control;
mod image_status;
mod locks;
mod random;
mod stat_errmsg;
mod team;
mod token;
mod tolerant_sync;
mod vector;
mod xfer;

use std::ffi::{c_char, c_int, c_void};

use rshmem_core::coll::ReduceOp;

use desc::{DescPtr, Shape, Ty};
use image::{pe_of, state};
use image_control::AtomicKind;
use stat_errmsg::{report, CafResult};
use xfer::View;

pub use image_status::{
    _gfortran_caf_fail_image, _gfortran_caf_failed_images, _gfortran_caf_image_status,
    _gfortran_caf_stopped_images,
};
pub use team::{
    _gfortran_caf_change_team, _gfortran_caf_end_team, _gfortran_caf_form_team,
    _gfortran_caf_get_team, _gfortran_caf_sync_team, _gfortran_caf_team_number,
};

/// `caf_token_t`.
type TokenPtr = *mut c_void;
/// `gfc_descriptor_t *` as the compiler passes it (read through [`desc::Header`]).
type Desc = *mut c_void;

/// The local view of descriptor `d` with Fortran kind `kind`.
///
/// # Safety
/// `d` is a valid descriptor.
unsafe fn view(d: DescPtr, kind: c_int) -> View {
    // SAFETY: contract.
    unsafe {
        View {
            base: (*d).base_addr,
            shape: Shape::of(d),
            ty: Ty::of(d, kind),
        }
    }
}

/// A short path's result: nothing to do on success without STAT= (inline, so the short
/// path calls nothing more), [`report_stat`] otherwise.
///
/// # Safety
/// As [`report_stat`].
#[inline(always)]
unsafe fn fast_stat(routine: &str, r: rshmem_core::Result<()>, stat: *mut c_int) {
    if r.is_err() || !stat.is_null() {
        // SAFETY: forwarded contract.
        unsafe { report_stat(routine, r.map_err(Into::into), stat) }
    }
}

/// Reports `r` to a STAT= that has no ERRMSG=.
///
/// # Safety
/// `stat` is null or writable.
unsafe fn report_stat(routine: &str, r: CafResult, stat: *mut c_int) {
    // SAFETY: forwarded contract.
    unsafe { report(routine, r, stat, std::ptr::null_mut(), 0) }
}

// ------------------------------------------------------------------ start and end

/// Starts the image (from `main`, before the program's first statement).
///
/// Static coarrays were registered earlier, by constructors that also store their initial
/// values; the SYNC ALL here keeps a fast image from writing into another image's static
/// coarray before that image's initial values are in (they would overwrite the write).
///
/// # Safety
/// Called by gfortran's `main` with its arguments (unused).
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) {
    const R: &str = "_gfortran_caf_init";
    image::init();
    if let Err(e) = team::sync_all(R) {
        stat_errmsg::fatal(R, &e.msg);
    }
}

/// Normal termination at the end of the main program.
#[no_mangle]
pub extern "C" fn _gfortran_caf_finalize() {
    image::finalize();
}

/// `this_image()`: this image's number in the current team, from 1.
#[no_mangle]
pub extern "C" fn _gfortran_caf_this_image(_distance: c_int) -> c_int {
    team::this_image("_gfortran_caf_this_image")
}

/// `num_images()` of the current team; `failed` (-1: absent) counts the failed images
/// (true) or the others (false).
#[no_mangle]
pub extern "C" fn _gfortran_caf_num_images(_distance: c_int, failed: c_int) -> c_int {
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
pub extern "C" fn _gfortran_caf_stop_numeric(code: c_int, quiet: bool) -> ! {
    image::stop(Some(code.to_string()), code, false, quiet)
}

/// `stop 'text'` (and a plain `stop`: null text): status 0.
///
/// # Safety
/// `s` is null or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_stop_str(s: *const c_char, len: usize, quiet: bool) -> ! {
    // SAFETY: forwarded contract.
    image::stop(unsafe { fstr(s, len) }, 0, false, quiet)
}

/// `error stop code`: ends every image with status `code`.
#[no_mangle]
pub extern "C" fn _gfortran_caf_error_stop(code: c_int, quiet: bool) -> ! {
    image::stop(Some(code.to_string()), code, true, quiet)
}

/// `error stop 'text'`: ends every image with status 1.
///
/// # Safety
/// `s` is null or readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_error_stop_str(
    s: *const c_char,
    len: usize,
    quiet: bool,
) -> ! {
    // SAFETY: forwarded contract.
    let msg = unsafe { fstr(s, len) }.or(Some(String::new()));
    image::stop(msg, 1, true, quiet)
}

// ------------------------------------------------------------------ memory

/// Registers a coarray (collective for every kind but allocatable components).
///
/// # Safety
/// As gfortran calls it: `token` writable, `desc` a descriptor, `stat`/`errmsg` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_register(
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
pub unsafe extern "C" fn _gfortran_caf_deregister(
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

// ------------------------------------------------------------------ transfers

/// `a(...)[image] = src`: writes the section `dest` (its shape; the data lies `offset`
/// bytes into the coarray on `image`) from local `src`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_send(
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
                may_require_tmp,
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
pub unsafe extern "C" fn _gfortran_caf_get(
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
                may_require_tmp,
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
pub unsafe extern "C" fn _gfortran_caf_sendget(
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
pub unsafe extern "C" fn _gfortran_caf_get_by_ref(
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
pub unsafe extern "C" fn _gfortran_caf_send_by_ref(
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
pub unsafe extern "C" fn _gfortran_caf_sendget_by_ref(
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
pub unsafe extern "C" fn _gfortran_caf_is_present(
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

// ------------------------------------------------------------------ synchronization

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
pub unsafe extern "C" fn _gfortran_caf_sync_all(
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
pub unsafe extern "C" fn _gfortran_caf_sync_memory(
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
pub unsafe extern "C" fn _gfortran_caf_sync_images(
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
pub unsafe extern "C" fn _gfortran_caf_lock(
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
pub unsafe extern "C" fn _gfortran_caf_unlock(
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
pub unsafe extern "C" fn _gfortran_caf_event_post(
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
pub unsafe extern "C" fn _gfortran_caf_event_wait(
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
pub unsafe extern "C" fn _gfortran_caf_event_query(
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
pub unsafe extern "C" fn _gfortran_caf_atomic_define(
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
pub unsafe extern "C" fn _gfortran_caf_atomic_ref(
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
pub unsafe extern "C" fn _gfortran_caf_atomic_cas(
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
pub unsafe extern "C" fn _gfortran_caf_atomic_op(
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

// ------------------------------------------------------------------ collectives

/// `call co_broadcast(a, source_image)`.
///
/// # Safety
/// As gfortran calls it.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_co_broadcast(
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
pub unsafe extern "C" fn _gfortran_caf_co_sum(
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
pub unsafe extern "C" fn _gfortran_caf_co_min(
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
pub unsafe extern "C" fn _gfortran_caf_co_max(
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
pub unsafe extern "C" fn _gfortran_caf_co_reduce(
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

// ------------------------------------------------------------------ the rest

/// `random_init(repeatable, image_distinct)` ([`random`]).
#[no_mangle]
pub extern "C" fn _gfortran_caf_random_init(repeatable: bool, image_distinct: bool) {
    random::random_init("_gfortran_caf_random_init", repeatable, image_distinct);
}
