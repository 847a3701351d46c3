//! Image status: IMAGE_STATUS, FAILED_IMAGES, STOPPED_IMAGES, NUM_IMAGES(FAILED=) and
//! FAIL IMAGE, over the core's view of its peers (`rshmem_core::ft::departure`): a
//! *stopped* image is a PE that entered finalize (normal termination: its state word says
//! so, and stays readable after its process is gone), a *failed* one a PE whose process is
//! gone without finalizing (probed with its pid). What a query finds the core records, so
//! that the next SYNC ALL or collective reports it at once. Image numbers are those of the
//! current team.

use std::ffi::{c_int, c_void};

use rshmem_core::{ft, Departure};

use crate::desc::{DescPtr, Dim, Header, BT_INTEGER};
use crate::stat_errmsg::{
    fatal, status_code, CafError, CafResult, STAT_FAILED_IMAGE, STAT_STOPPED_IMAGE,
};
use crate::team;

/// IMAGE_STATUS of world PE `pe`: 0, `STAT_STOPPED_IMAGE` or `STAT_FAILED_IMAGE`
/// (recorded by the core when not 0).
fn status_of(routine: &'static str, pe: usize) -> i32 {
    probe(routine, pe).unwrap_or_else(|e| fatal(routine, &e.msg))
}

/// [`status_of`], with the error of a runtime that is not running.
pub(crate) fn probe(routine: &'static str, pe: usize) -> CafResult<i32> {
    Ok(status_code(ft::departure(routine, pe)?))
}

/// Records that world PE `pe` stopped or failed (`code`: `STAT_STOPPED_IMAGE` or
/// `STAT_FAILED_IMAGE`); the first record counts.
pub(crate) fn mark_gone(routine: &'static str, pe: usize, code: i32) {
    let how = if code == STAT_FAILED_IMAGE {
        Departure::Failed
    } else {
        Departure::Finalized
    };
    let _ = ft::note_departed(routine, pe, how);
}

/// STAT= of an image selector (gfortran 12 passes it for coindexed reads only): an error
/// `STAT_STOPPED_IMAGE` or `STAT_FAILED_IMAGE` when world PE `pe` stopped or failed.
/// Reads the peer's state (and probes its pid): only where the program asked for STAT=.
pub(crate) fn check_image(routine: &'static str, pe: usize) -> CafResult {
    if pe == crate::image::state(routine).me {
        return Ok(());
    }
    match status_of(routine, pe) {
        0 => Ok(()),
        STAT_STOPPED_IMAGE => Err(CafError::new(
            STAT_STOPPED_IMAGE,
            format!("image {} of the initial team has stopped", pe + 1),
        )),
        c => Err(CafError::new(
            c,
            format!("image {} of the initial team has failed", pe + 1),
        )),
    }
}

/// Images (numbers in the current team) whose status is `want`.
fn images_with(routine: &'static str, want: i32) -> Vec<i64> {
    let me = crate::image::state(routine).me;
    team::members(routine)
        .iter()
        .enumerate()
        .filter(|&(_, &pe)| pe != me && status_of(routine, pe) == want)
        .map(|(i, _)| i as i64 + 1)
        .collect()
}

/// `num_images(failed=...)`: with `failed` absent (-1) the images of the current team,
/// true (> 0) the failed ones, false (0) the others.
pub(crate) fn num_images(routine: &'static str, failed: c_int) -> c_int {
    let n = team::num_images(routine) as c_int;
    if failed < 0 {
        return n;
    }
    let f = images_with(routine, STAT_FAILED_IMAGE).len() as c_int;
    if failed > 0 {
        f
    } else {
        n - f
    }
}

/// `image_status(image)` (gfortran 12 rejects the TEAM= argument and passes junk).
#[no_mangle]
pub extern "C" fn _gfortran_caf_image_status(image: c_int, _team: *mut c_void) -> c_int {
    const R: &str = "_gfortran_caf_image_status";
    let s = crate::image::state(R);
    match crate::image::pe_of(s, image) {
        Ok(pe) if pe == s.me => 0,
        Ok(pe) => status_of(R, pe),
        Err(e) => fatal(R, &format!("IMAGE_STATUS: {}", e.msg)),
    }
}

/// Fills the unallocated rank-1 result `array` with `list` as integers of `kind` (null:
/// 4). The memory comes from `malloc`: the compiler frees it.
///
/// # Safety
/// `array` is a rank-1 descriptor with room for one dimension; `kind` null or readable.
unsafe fn fill_result(routine: &'static str, array: DescPtr, kind: *const c_int, list: &[i64]) {
    // SAFETY: contract.
    let kind = if kind.is_null() { 4 } else { unsafe { *kind } };
    if !matches!(kind, 1 | 2 | 4 | 8) {
        fatal(routine, &format!("integer kind {kind} for the result"));
    }
    let k = kind as usize;
    // SAFETY: malloc of at least one byte (a zero-size result is still allocated).
    let p = unsafe { libc::malloc((list.len() * k).max(1)) }.cast::<u8>();
    if p.is_null() {
        fatal(routine, "out of memory");
    }
    for (i, &v) in list.iter().enumerate() {
        // SAFETY: element `i` of the block just allocated, written unaligned-safely.
        unsafe {
            let e = p.add(i * k);
            match k {
                1 => e.cast::<i8>().write_unaligned(v as i8),
                2 => e.cast::<i16>().write_unaligned(v as i16),
                4 => e.cast::<i32>().write_unaligned(v as i32),
                _ => e.cast::<i64>().write_unaligned(v),
            }
        }
    }
    // SAFETY: contract: a rank-1 descriptor, its one triplet right after the header.
    unsafe {
        let h: &mut Header = &mut *array;
        h.base_addr = p;
        h.offset = 0;
        h.elem_len = k;
        h.rank = 1;
        h.ty = BT_INTEGER;
        h.span = k as isize;
        // gfortran 12 reads the bounds as 0 .. count-1 (as OpenCoarrays sets them).
        let d = array
            .cast::<u8>()
            .add(std::mem::size_of::<Header>())
            .cast::<Dim>();
        d.write_unaligned(Dim {
            stride: 1,
            lbound: 0,
            ubound: list.len() as isize - 1,
        });
    }
}

/// `failed_images([team] [, kind])`: the failed images of the current team, in order.
///
/// # Safety
/// As gfortran calls it: `array` an unallocated rank-1 descriptor, `kind` null or readable.
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_failed_images(
    array: *mut c_void,
    _team: *mut c_void,
    kind: *const c_int,
) {
    const R: &str = "_gfortran_caf_failed_images";
    let list = images_with(R, STAT_FAILED_IMAGE);
    // SAFETY: forwarded contract.
    unsafe { fill_result(R, array.cast(), kind, &list) }
}

/// `stopped_images([team] [, kind])`: the images of the current team that stopped
/// (normal termination), in order.
///
/// # Safety
/// As [`_gfortran_caf_failed_images`].
#[no_mangle]
pub unsafe extern "C" fn _gfortran_caf_stopped_images(
    array: *mut c_void,
    _team: *mut c_void,
    kind: *const c_int,
) {
    const R: &str = "_gfortran_caf_stopped_images";
    let list = images_with(R, STAT_STOPPED_IMAGE);
    // SAFETY: forwarded contract.
    unsafe { fill_result(R, array.cast(), kind, &list) }
}

/// `fail image`: this image stops taking part, without normal termination. In a
/// fault-tolerant job (`SHMEM_FAULT_TOLERANT=1`) the process kills itself (SIGKILL), which
/// is what the core and `oshrun` recognize as a failed PE: the other images go on and
/// see `STAT_FAILED_IMAGE`, and `oshrun` reports the failure at the end (exit status 137).
/// Otherwise a failed image would end the job anyway: it ends it at once, saying why.
#[no_mangle]
pub extern "C" fn _gfortran_caf_fail_image() -> ! {
    const R: &str = "_gfortran_caf_fail_image";
    crate::image::state(R);
    crate::image::flush_fortran();
    let ft = rshmem_core::runtime::try_runtime().is_some_and(|rt| rt.config().fault_tolerant);
    if !ft {
        fatal(
            R,
            "FAIL IMAGE in a job that is not fault-tolerant: the job ends (run it with SHMEM_FAULT_TOLERANT=1 for the other images to go on)",
        );
    }
    // What this image wrote lands before it disappears.
    let _ = rshmem_core::order::quiet();
    // SAFETY: sends a signal to this process; SIGKILL cannot be caught, so nothing runs
    // after it (no exit handler finalizes: the image is failed, not stopped).
    unsafe { libc::raise(libc::SIGKILL) };
    unreachable!("SIGKILL returned")
}
