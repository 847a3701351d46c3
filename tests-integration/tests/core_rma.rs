//! rshmem-core RMA under oshrun at 1-4 PEs: put/get, p/g, iput/iget, ibput/ibget, nbi,
//! fence (the PE program `core_rma` asserts every value).

use rshmem_tests::run_ok;

const NPS: [usize; 4] = [1, 2, 3, 4];

#[test]
fn rma_contiguous_put_get_all_sizes_and_alignments() {
    for np in NPS {
        run_ok(np, "core_rma", &["contig"], &[]);
    }
}

#[test]
fn rma_single_element_p_g_every_pair() {
    for np in NPS {
        run_ok(np, "core_rma", &["pg"], &[]);
    }
}

#[test]
fn rma_strided_iput_iget() {
    for np in NPS {
        run_ok(np, "core_rma", &["strided"], &[]);
    }
}

#[test]
fn rma_blocked_ibput_ibget() {
    for np in NPS {
        run_ok(np, "core_rma", &["blocked"], &[]);
    }
}

#[test]
fn rma_nbi_with_quiet() {
    for np in NPS {
        run_ok(np, "core_rma", &["nbi"], &[]);
    }
}

#[test]
fn rma_fence_orders_data_before_flag() {
    for np in NPS {
        run_ok(np, "core_rma", &["fence"], &[]);
    }
}
