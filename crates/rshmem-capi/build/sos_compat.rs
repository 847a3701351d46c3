//! Sandia OpenSHMEM compatibility (`shmemx.h`): its `shmemx_` names of routines that are
//! standard here (block-strided RMA, signals, scans), its performance counters
//! (`shmemx_pcntr_*`) and `shmemx_register_gettid`.

use crate::rma::typed_and_sized;
use crate::types::{reduce_types, sub};
use crate::writer::Gen;

/// Sandia OpenSHMEM's `shmemx_` names of routines that are standard here (OpenSHMEM
/// 1.6), so programs and tests written for SOS build unchanged. Each is a routine of its
/// own (with its `pshmemx_` twin) running the standard one's body.
pub(crate) fn sos_aliases(g: &mut Gen) {
    g.xsection("Sandia OpenSHMEM names: block-strided RMA (shmem_ibput/ibget of OpenSHMEM 1.6)");
    for (op, is_put) in [("ibput", true), ("ibget", false)] {
        let params = "TYPE *target, const TYPE *source, ptrdiff_t tst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe";
        let body = format!(
            "glue::blocked(R, @CTX@, {is_put}, target.cast(), source.cast(), tst, sst, bsize, nblocks, ESIZE, pe)"
        );
        typed_and_sized(
            g,
            &format!("shmemx_TN_{op}"),
            |bits| format!("shmemx_{op}{bits}"),
            params,
            &body,
        );
    }
    g.xsection("Sandia OpenSHMEM names: signals (shmem_signal_set/add)");
    for (op, sop) in [("set", "Set"), ("add", "Add")] {
        g.fc(
            &format!("void shmemx_signal_{op}(uint64_t *sig_addr, uint64_t signal, int pe)"),
            &format!("glue::ok(rshmem_core::signal::ctx_signal_op(@CTX@, R, sig_addr, signal, rshmem_core::SignalOp::{sop}, pe.into()))"),
        );
    }
    g.xsection("Sandia OpenSHMEM names: scans (shmem_TYPENAME_sum_inscan/exscan)");
    for (kind, inclusive) in [("inscan", true), ("exscan", false)] {
        for tn in reduce_types("sum") {
            g.f(
                &sub(
                    &format!("int shmemx_TN_sum_{kind}(shmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems)"),
                    tn,
                ),
                &format!("glue::sum_scan(R, team, dest, source, nelems, {inclusive})"),
            );
        }
    }
}

/// Sandia OpenSHMEM's performance-counter queries (`shmemx_pcntr_*`), read at any time.
pub(crate) fn pcntr(g: &mut Gen) {
    g.xsection("Performance counters (Sandia OpenSHMEM): writes and reads issued and completed per context");
    for (what, field) in [
        ("issued_write", "issued_write"),
        ("issued_read", "issued_read"),
        ("completed_write", "completed_write"),
        ("completed_read", "completed_read"),
    ] {
        g.f(
            &format!("void shmemx_pcntr_get_{what}(shmem_ctx_t ctx, uint64_t *cntr_value)"),
            &format!("glue::pcntr(R, ctx, cntr_value, |p| p.{field})"),
        );
    }
    g.f(
        "void shmemx_pcntr_get_completed_target(uint64_t *cntr_value)",
        "glue::pcntr(R, glue::H_CTX_DEFAULT as glue::CtxH, cntr_value, |p| p.target)",
    );
    g.f(
        "void shmemx_pcntr_get_all(shmem_ctx_t ctx, shmemx_pcntr_t *pcntr)",
        "glue::pcntr(R, ctx, pcntr, |p| p)",
    );
}

/// Sandia OpenSHMEM's `shmemx_register_gettid`: the program names its threads.
pub(crate) fn gettid(g: &mut Gen) {
    g.xsection("Thread identification (Sandia OpenSHMEM)");
    g.f(
        "void shmemx_register_gettid(shmemx_gettid_fn gettid_fn)",
        "glue::register_gettid(gettid_fn)",
    );
}
