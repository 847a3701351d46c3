//! rshmem-core AMOs under oshrun at 1-4 PEs: every AmoOp on every Word type, all PEs
//! hammering PE 0 and a ring, exact final values (the PE program `core_amo`).

use rshmem_tests::run_ok;

const NPS: [usize; 4] = [1, 2, 3, 4];

#[test]
fn amo_every_op_every_type_blocking() {
    for np in NPS {
        run_ok(np, "core_amo", &["blocking"], &[]);
    }
}

#[test]
fn amo_every_op_every_type_fetching_nbi() {
    for np in NPS {
        run_ok(np, "core_amo", &["nbi"], &[]);
    }
}
