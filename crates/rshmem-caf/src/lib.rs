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
//! The entry points are in `abi/`, one module per statement family (team statements in
//! `team`, image status in `image_status`); the modules beside it do the work.
//!
//! Build with `gfortran -fcoarray=lib prog.f90 -lcaf_rshmem` (or the installed `caf`
//! wrapper) and run with `cafrun -n N ./prog` (`oshrun`).

#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod abi;
#[allow(unsafe_code)]
mod byref;
#[allow(unsafe_code)]
mod coll;
#[allow(unsafe_code)]
mod convert;
#[allow(unsafe_code)]
mod desc;
#[allow(unsafe_code)]
mod fast;
#[allow(unsafe_code)]
mod image;
#[allow(unsafe_code)]
mod image_control;
#[allow(unsafe_code)]
mod image_status;
mod locks;
#[allow(unsafe_code)]
mod random;
#[allow(unsafe_code)]
mod stat_errmsg;
#[allow(unsafe_code)]
mod team;
#[allow(unsafe_code)]
mod token;
#[allow(unsafe_code)]
mod vector;
#[allow(unsafe_code)]
mod xfer;

use std::ffi::{c_int, c_void};

use desc::{DescPtr, Shape, Ty};
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
pub(crate) type TokenPtr = *mut c_void;
/// `gfc_descriptor_t *` as the compiler passes it (read through [`desc::Header`]).
pub(crate) type Desc = *mut c_void;

/// The local view of descriptor `d` with Fortran kind `kind`.
///
/// # Safety
/// `d` is a valid descriptor.
#[allow(unsafe_code)]
pub(crate) unsafe fn view(d: DescPtr, kind: c_int) -> View {
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
#[allow(unsafe_code)]
pub(crate) unsafe fn fast_stat(routine: &str, r: rshmem_core::Result<()>, stat: *mut c_int) {
    if r.is_err() || !stat.is_null() {
        // SAFETY: forwarded contract.
        unsafe { report_stat(routine, r.map_err(Into::into), stat) }
    }
}

/// Reports `r` to a STAT= that has no ERRMSG=.
///
/// # Safety
/// `stat` is null or writable.
#[allow(unsafe_code)]
pub(crate) unsafe fn report_stat(routine: &str, r: CafResult, stat: *mut c_int) {
    // SAFETY: forwarded contract.
    unsafe { report(routine, r, stat, std::ptr::null_mut(), 0) }
}
