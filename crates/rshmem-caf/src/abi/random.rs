//! RANDOM_INIT.

use crate::random;

/// `random_init(repeatable, image_distinct)` ([`random`]).
#[no_mangle]
pub(super) extern "C" fn _gfortran_caf_random_init(repeatable: bool, image_distinct: bool) {
    random::random_init("_gfortran_caf_random_init", repeatable, image_distinct);
}
