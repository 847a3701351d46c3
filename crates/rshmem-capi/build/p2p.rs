//! Point-to-point synchronization: `shmem_TYPENAME_wait_until`, `_test`, their `_all`,
//! `_any`, `_some` and `_vector` forms, and the deprecated `shmem_wait` names.

use crate::types::{sub, AMO_STD, P2P_DEPRECATED};
use crate::writer::Gen;

pub(crate) fn p2p(g: &mut Gen) {
    g.section("Point-to-point synchronization");
    let single: Vec<&str> = AMO_STD.iter().chain(P2P_DEPRECATED).copied().collect();
    for tn in &single {
        g.f(
            &sub(
                "void shmem_TN_wait_until(TYPE *ivar, int cmp, TYPE cmp_value)",
                tn,
            ),
            "glue::ok(rshmem_core::p2p::wait_until(R, ivar, glue::cmp(R, cmp), cmp_value))",
        );
        g.f(
            &sub("int shmem_TN_test(TYPE *ivar, int cmp, TYPE cmp_value)", tn),
            "glue::ok(rshmem_core::p2p::test(R, ivar, glue::cmp(R, cmp), cmp_value)) as core::ffi::c_int",
        );
    }
    // (name, return, extra params before status, call, result conversion)
    let sets: &[(&str, &str, &str, &str, &str)] = &[
        ("wait_until_all", "void", "", "wait_until_all(R, ivars, nelems, status", ""),
        ("wait_until_any", "size_t", "", "wait_until_any(R, ivars, nelems, status", ".unwrap_or(usize::MAX)"),
        ("wait_until_some", "size_t", "size_t *indices, ", "wait_until_some(R, ivars, nelems, glue::nonnull_mut(R, \"indices\", indices, nelems), status", ""),
        ("test_all", "int", "", "test_all(R, ivars, nelems, status", " as core::ffi::c_int"),
        ("test_any", "size_t", "", "test_any(R, ivars, nelems, status", ".unwrap_or(usize::MAX)"),
        ("test_some", "size_t", "size_t *indices, ", "test_some(R, ivars, nelems, glue::nonnull_mut(R, \"indices\", indices, nelems), status", ""),
    ];
    // Sandia OpenSHMEM also has short and unsigned short in the set forms (its test suite
    // uses them); the 1.5 table lists them for wait_until and test only.
    for (name, ret, extra, call, conv) in sets {
        for tn in &single {
            g.f(
                &sub(&format!("{ret} shmem_TN_{name}(TYPE *ivars, size_t nelems, {extra}const int *status, int cmp, TYPE cmp_value)"), tn),
                &format!("glue::ok(rshmem_core::p2p::{call}, glue::cmp(R, cmp), rshmem_core::p2p::Values::One(cmp_value))){conv}"),
            );
            g.f(
                &sub(&format!("{ret} shmem_TN_{name}_vector(TYPE *ivars, size_t nelems, {extra}const int *status, int cmp, const TYPE *cmp_values)"), tn),
                &format!("glue::ok(rshmem_core::p2p::{call}, glue::cmp(R, cmp), rshmem_core::p2p::Values::Each(glue::nonnull(R, \"cmp_values\", cmp_values, nelems)))){conv}"),
            );
        }
    }
    g.section("Deprecated point-to-point synchronization");
    g.f(
        "void shmem_wait(long *ivar, long cmp_value)",
        "glue::ok(rshmem_core::p2p::wait_until(R, ivar, rshmem_core::Cmp::Ne, cmp_value))",
    );
    for tn in ["short", "int", "long", "longlong"] {
        g.f(
            &sub("void shmem_TN_wait(TYPE *ivar, TYPE cmp_value)", tn),
            "glue::ok(rshmem_core::p2p::wait_until(R, ivar, rshmem_core::Cmp::Ne, cmp_value))",
        );
    }
    g.f(
        "void shmem_wait_until(long *ivar, int cmp, long cmp_value)",
        "glue::ok(rshmem_core::p2p::wait_until(R, ivar, glue::cmp(R, cmp), cmp_value))",
    );
}
