//! Seed 002's explicit non-blocking operations (`shmemx.h`): the `_nbe` puts, gets and
//! fetching atomics, and the request routines that complete them (`shmemx_request_*`).

use crate::rma::typed_and_sized;
use crate::types::{sub, AMO_BIT, AMO_EXT_EXTRA, AMO_STD};
use crate::writer::Gen;

/// Seed 002's explicit non-blocking operations and their requests (`shmemx.h`): every
/// `_nbe` routine has a `shmemx_ctx_` form.
pub(crate) fn nbe(g: &mut Gen) {
    g.xsection("Explicit non-blocking RMA: completed by the request in *req (allocated when *req is NULL, joined when live)");
    for (op, is_put) in [("put", true), ("get", false)] {
        let params =
            "TYPE *target, const TYPE *source, size_t nelems, int pe, shmemx_request_h *req";
        let body = format!(
            "glue::nbe(R, @CTX@, {is_put}, target.cast(), source.cast(), nelems, ESIZE, pe, req)"
        );
        let vparams = typed_and_sized(
            g,
            &format!("shmemx_TN_{op}_nbe"),
            |bits| format!("shmemx_{op}{bits}_nbe"),
            params,
            &body,
        );
        g.fc(
            &format!(
                "void shmemx_{op}mem_nbe({})",
                vparams.replace("nelems", "nbytes")
            ),
            &body.replace("nelems", "nbytes").replace("ESIZE", "1"),
        );
    }
    g.xsection("Explicit non-blocking fetching atomics: *fetch holds the old value once the request completes");
    let ext: Vec<&str> = AMO_STD.iter().chain(AMO_EXT_EXTRA).copied().collect();
    let std_: Vec<&str> = AMO_STD.to_vec();
    let bit: Vec<&str> = AMO_BIT.to_vec();
    // (op, extra C params, AmoOp expression, types)
    let ops: [(&str, &str, &str, &Vec<&str>); 8] = [
        ("fetch", "", "Fetch", &ext),
        ("swap", ", TYPE value", "Swap(value)", &ext),
        (
            "cswap",
            ", TYPE cond, TYPE value",
            "CompareSwap { cond, value }",
            &std_,
        ),
        ("fadd", ", TYPE value", "Add(value)", &std_),
        ("finc", "", "Add(<{T} as rshmem_core::Word>::ONE)", &std_),
        ("fetch_and", ", TYPE value", "And(value)", &bit),
        ("fetch_or", ", TYPE value", "Or(value)", &bit),
        ("fetch_xor", ", TYPE value", "Xor(value)", &bit),
    ];
    for (op, extra, amo, types) in ops {
        let cst = if op == "fetch" { "const " } else { "" };
        for tn in types.iter() {
            g.fc(
                &sub(
                    &format!("void shmemx_TN_{op}_nbe(TYPE *fetch, {cst}TYPE *target{extra}, int pe, shmemx_request_h *req)"),
                    tn,
                ),
                &sub(
                    &format!("glue::amo_nbe(R, @CTX@, fetch, target, rshmem_core::AmoOp::{amo}, pe, req)"),
                    tn,
                ),
            );
        }
    }
    g.xsection("Requests (a NULL handle is an empty, complete request)");
    g.f(
        "int shmemx_request_test(shmemx_request_h *req, int *flag)",
        "glue::request_test(R, req, flag)",
    );
    g.f(
        "int shmemx_request_wait(shmemx_request_h *req)",
        "glue::request_wait(R, req)",
    );
    g.f(
        "int shmemx_request_alloc(shmemx_request_params_t params, shmemx_request_h *req)",
        "glue::request_alloc(R, params, req)",
    );
    g.f(
        "int shmemx_request_free(shmemx_request_h *req)",
        "glue::request_free(R, req)",
    );
    g.f(
        "int shmemx_merge_request(size_t count, shmemx_request_h **requests, shmemx_request_h *merged)",
        "glue::merge_request(R, count, requests, merged)",
    );
}
