//! The image-status calls the lock's wait for a stopped or failed holder makes, under the
//! names it uses (the lock moves to the core separately). SYNC ALL's barrier that goes on
//! without stopped and failed images is the core's (`rshmem_core::coll::tolerant_sync`),
//! and so are the status marks (`rshmem_core::ft::departure`).

use crate::stat_errmsg::CafResult;

/// The status of world PE `pe` (0, `STAT_STOPPED_IMAGE` or `STAT_FAILED_IMAGE`), probed
/// now. Not for hot paths.
pub(crate) fn probe(pe: usize) -> CafResult<i32> {
    crate::image_status::probe("_gfortran_caf_lock", pe)
}

/// Records that world PE `pe` stopped or failed (`code`); the first record counts.
pub(crate) fn mark_gone(pe: usize, code: i32) {
    crate::image_status::mark_gone("_gfortran_caf_lock", pe, code)
}
