//! The deprecated active-set collectives (`shmem_barrier`, `shmem_broadcast32`,
//! `shmem_TYPENAME_OP_to_all`...), which `src/active.rs` runs.

use crate::collectives::REDUCE_OPS;
use crate::types::sub;
use crate::writer::Gen;

/// The deprecated active-set collectives (`src/active.rs`).
pub(crate) fn active_set(g: &mut Gen) {
    g.section("Deprecated active-set collectives (pSync and pWrk are never touched)");
    let set = "int PE_start, int logPE_stride, int PE_size, long *pSync";
    let args = "PE_start, logPE_stride, PE_size, pSync";
    g.f(
        &format!("void shmem_barrier({set})"),
        &format!("crate::active::barrier(R, {args})"),
    );
    g.f(
        &format!("void shmem_sync({set})"),
        &format!("crate::active::sync(R, {args})"),
    );
    for bits in [32, 64] {
        for (op, params, kind) in [
            (
                "broadcast",
                "size_t nelems, int PE_root",
                "Broadcast(PE_root)",
            ),
            ("collect", "size_t nelems", "Collect"),
            ("fcollect", "size_t nelems", "Fcollect"),
            ("alltoall", "size_t nelems", "Alltoall"),
            (
                "alltoalls",
                "ptrdiff_t dst, ptrdiff_t sst, size_t nelems",
                "Alltoalls(dst, sst)",
            ),
        ] {
            g.f(
                &format!("void shmem_{op}{bits}(void *dest, const void *source, {params}, {set})"),
                &format!(
                    "crate::active::data(R, crate::active::Data::{kind}, dest, source, nelems, {}, {args})",
                    bits / 8
                ),
            );
        }
    }
    for (op, rop) in REDUCE_OPS {
        let types: &[&str] = match op {
            "and" | "or" | "xor" => &["short", "int", "long", "longlong"],
            "max" | "min" => &[
                "short",
                "int",
                "long",
                "longlong",
                "float",
                "double",
                "longdouble",
            ],
            _ => &[
                "short",
                "int",
                "long",
                "longlong",
                "float",
                "double",
                "longdouble",
                "complexd",
                "complexf",
            ],
        };
        for tn in types {
            g.f(
                &sub(
                    &format!("void shmem_TN_{op}_to_all(TYPE *dest, const TYPE *source, int nreduce, {set_t})",
                        set_t = "int PE_start, int logPE_stride, int PE_size, TYPE *pWrk, long *pSync"),
                    tn,
                ),
                &format!("crate::active::to_all(R, dest, source, nreduce, PE_start, logPE_stride, PE_size, pWrk, pSync, rshmem_core::coll::ReduceOp::{rop})"),
            );
        }
    }
}
