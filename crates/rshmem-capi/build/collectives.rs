//! Team-based collectives: broadcast, collect, fcollect, alltoall[s] and the reductions,
//! blocking and (seed 004) `shmemx_..._nbe`, the non-blocking syncs and the 1.6 scans.

use crate::types::{reduce_types, sub, RMA};
use crate::writer::Gen;

/// The reduction operators: (C name, `ReduceOp` variant).
pub(crate) const REDUCE_OPS: [(&str, &str); 7] = [
    ("and", "And"),
    ("or", "Or"),
    ("xor", "Xor"),
    ("max", "Max"),
    ("min", "Min"),
    ("sum", "Sum"),
    ("prod", "Prod"),
];

/// The byte-moving team collectives: (name, C params after the team, body with ESIZE).
pub(crate) const DATA_COLLS: [(&str, &str, &str); 5] = [
    (
        "broadcast",
        "TYPE *dest, const TYPE *source, size_t nelems, int PE_root",
        "glue::broadcast(R, team, dest.cast(), source.cast(), nelems, ESIZE, PE_root)",
    ),
    (
        "collect",
        "TYPE *dest, const TYPE *source, size_t nelems",
        "glue::collect(R, team, dest.cast(), source.cast(), nelems, ESIZE)",
    ),
    (
        "fcollect",
        "TYPE *dest, const TYPE *source, size_t nelems",
        "glue::fcollect(R, team, dest.cast(), source.cast(), nelems, ESIZE)",
    ),
    (
        "alltoall",
        "TYPE *dest, const TYPE *source, size_t nelems",
        "glue::alltoall(R, team, dest.cast(), source.cast(), nelems, ESIZE)",
    ),
    (
        "alltoalls",
        "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems",
        "glue::alltoalls(R, team, dest.cast(), source.cast(), dst, sst, nelems, ESIZE)",
    ),
];

pub(crate) fn collectives(g: &mut Gen) {
    // Each collective twice: blocking (a null request) and, in `shmemx.h`, non-blocking
    // (`shmemx_..._nbe`, completed by the request in `*req`; seed 004).
    for nbe in [false, true] {
        let (pre, suf, req_param, req) = if nbe {
            ("shmemx", "_nbe", ", shmemx_request_h *req", "req")
        } else {
            ("shmem", "", "", "core::ptr::null_mut()")
        };
        g.section(if nbe {
            "Non-blocking team-based collectives (seed 004): completed by the request in *req"
        } else {
            "Team-based collectives"
        });
        for (op, params, body) in DATA_COLLS {
            let body = format!("{}, {req})", body.strip_suffix(')').expect("a call"));
            for (tn, _) in RMA {
                g.f(
                    &sub(
                        &format!("int {pre}_TN_{op}{suf}(shmem_team_t team, {params}{req_param})"),
                        tn,
                    ),
                    &body.replace("ESIZE", &sub("core::mem::size_of::<{T}>()", tn)),
                );
            }
            let vparams = params
                .replace("const TYPE", "const void")
                .replace("TYPE", "void");
            g.f(
                &format!("int {pre}_{op}mem{suf}(shmem_team_t team, {vparams}{req_param})"),
                &body.replace("ESIZE", "1"),
            );
        }
        g.section(if nbe {
            "Non-blocking team-based reductions (seed 004)"
        } else {
            "Team-based reductions"
        });
        for (op, rop) in REDUCE_OPS {
            for tn in reduce_types(op) {
                g.f(
                    &sub(
                        &format!("int {pre}_TN_{op}_reduce{suf}(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nreduce{req_param})"),
                        tn,
                    ),
                    &format!("glue::reduce(R, team, dest, source, nreduce, rshmem_core::coll::ReduceOp::{rop}, {req})"),
                );
            }
        }
    }
    g.section("Non-blocking synchronization (seed 004)");
    g.f(
        "int shmemx_team_sync_nbe(shmem_team_t team, shmemx_request_h *req)",
        "glue::sync_nbe(R, team, false, req)",
    );
    g.f(
        "void shmemx_barrier_all_nbe(shmemx_request_h *req)",
        "{ glue::sync_nbe(R, crate::glue::H_WORLD as crate::glue::TeamHandle, true, req); }",
    );
    g.f(
        "void shmemx_sync_all_nbe(shmemx_request_h *req)",
        "{ glue::sync_nbe(R, crate::glue::H_WORLD as crate::glue::TeamHandle, false, req); }",
    );
    g.section("Scans (OpenSHMEM 1.6)");
    for (kind, inclusive) in [("inscan", true), ("exscan", false)] {
        for tn in reduce_types("sum") {
            g.f(
                &sub(
                    &format!("int shmem_TN_sum_{kind}(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems)"),
                    tn,
                ),
                &format!("glue::sum_scan(R, team, dest, source, nelems, {inclusive})"),
            );
        }
    }
}
