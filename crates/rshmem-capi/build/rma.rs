//! RMA: put and get (contiguous, strided `iput`/`iget`, block-strided `ibput`/`ibget`,
//! `_nbi`), put with signal, single-element `p`/`g`, and the signal routines, each in its
//! typed, SIZE and `mem` forms.

use crate::types::{sub, RMA, SIZES};
use crate::writer::Gen;

pub(crate) fn rma(g: &mut Gen) {
    g.section("RMA: put and get");
    // (suffix, C params with TYPE, body with ESIZE)
    let xfer = |dir: &str| {
        format!(
            "glue::xfer(R, @CTX@, glue::Dir::{dir}, dest.cast(), source.cast(), nelems, ESIZE, pe)"
        )
    };
    let fams: Vec<(&str, &str, String)> = vec![
        (
            "put",
            "TYPE *dest, const TYPE *source, size_t nelems, int pe",
            xfer("Put"),
        ),
        (
            "get",
            "TYPE *dest, const TYPE *source, size_t nelems, int pe",
            xfer("Get"),
        ),
        (
            "iput",
            "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe",
            "glue::strided(R, @CTX@, true, dest.cast(), source.cast(), dst, sst, nelems, ESIZE, pe)".into(),
        ),
        (
            "iget",
            "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe",
            "glue::strided(R, @CTX@, false, dest.cast(), source.cast(), dst, sst, nelems, ESIZE, pe)"
                .into(),
        ),
        (
            "ibput",
            "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe",
            "glue::blocked(R, @CTX@, true, dest.cast(), source.cast(), dst, sst, bsize, nblocks, ESIZE, pe)"
                .into(),
        ),
        (
            "ibget",
            "TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe",
            "glue::blocked(R, @CTX@, false, dest.cast(), source.cast(), dst, sst, bsize, nblocks, ESIZE, pe)"
                .into(),
        ),
        (
            "put_nbi",
            "TYPE *dest, const TYPE *source, size_t nelems, int pe",
            xfer("PutNbi"),
        ),
        (
            "get_nbi",
            "TYPE *dest, const TYPE *source, size_t nelems, int pe",
            xfer("GetNbi"),
        ),
        (
            "put_signal",
            "TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe",
            "glue::put_signal(R, @CTX@, false, dest.cast(), source.cast(), nelems, ESIZE, sig_addr, signal, sig_op, pe)"
                .into(),
        ),
        (
            "put_signal_nbi",
            "TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe",
            "glue::put_signal(R, @CTX@, true, dest.cast(), source.cast(), nelems, ESIZE, sig_addr, signal, sig_op, pe)"
                .into(),
        ),
    ];
    for (op, params, body) in &fams {
        if op.starts_with("put_signal") {
            g.section("Put with signal");
        }
        // Typed, SIZE and mem (void pointers, element size in bytes).
        let (stem, rest) = op
            .split_once('_')
            .map_or((*op, String::new()), |(a, b)| (a, format!("_{b}")));
        let vparams = typed_and_sized(
            g,
            &format!("shmem_TN_{op}"),
            |bits| format!("shmem_{stem}{bits}{rest}"),
            params,
            body,
        );
        if !op.starts_with('i') {
            g.fc(
                &format!("void shmem_{stem}mem{rest}({vparams})"),
                &body.replace("ESIZE", "1"),
            );
        }
    }
    g.section("RMA: single elements");
    for (tn, _) in RMA {
        if *tn == "longdouble" {
            // long double travels in x87 registers/memory: hand-written in src/lib.rs.
            g.hand("void shmem_longdouble_p(long double *dest, long double value, int pe);");
            g.hand("long double shmem_longdouble_g(const long double *source, int pe);");
            g.hand(
                "void shmem_ctx_longdouble_p(shmem_ctx_t ctx, long double *dest, long double value, int pe);",
            );
            g.hand(
                "long double shmem_ctx_longdouble_g(shmem_ctx_t ctx, const long double *source, int pe);",
            );
            continue;
        }
        g.fc(
            &sub("void shmem_TN_p(TYPE *dest, TYPE value, int pe)", tn),
            "glue::p(R, @CTX@, dest, value, pe)",
        );
        g.fc(
            &sub("TYPE shmem_TN_g(const TYPE *source, int pe)", tn),
            "glue::g(R, @CTX@, source, pe)",
        );
    }
    g.section("Signals");
    g.f(
        "uint64_t shmem_signal_fetch(const uint64_t *sig_addr)",
        "glue::ok(rshmem_core::signal::signal_fetch(R, sig_addr))",
    );
    g.f(
        "uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)",
        "glue::ok(rshmem_core::signal::signal_wait_until(R, sig_addr, glue::cmp(R, cmp), cmp_value))",
    );
    g.fc(
        "void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)",
        "glue::ok(rshmem_core::signal::ctx_signal_op(@CTX@, R, sig_addr, signal, rshmem_core::SignalOp::Set, pe.into()))",
    );
    g.fc(
        "void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)",
        "glue::ok(rshmem_core::signal::ctx_signal_op(@CTX@, R, sig_addr, signal, rshmem_core::SignalOp::Add, pe.into()))",
    );
}

/// Emits an RMA routine's typed forms (`typed` names them with `TN`; one per RMA type)
/// and its sized forms (`sized(bits)`, with void pointers), replacing `ESIZE` in `body`
/// with the element size; returns the void-pointer parameters.
pub(crate) fn typed_and_sized(
    g: &mut Gen,
    typed: &str,
    sized: impl Fn(usize) -> String,
    params: &str,
    body: &str,
) -> String {
    for (tn, _) in RMA {
        g.fc(
            &sub(&format!("void {typed}({params})"), tn),
            &body.replace("ESIZE", &sub("core::mem::size_of::<{T}>()", tn)),
        );
    }
    let vparams = params
        .replace("const TYPE", "const void")
        .replace("TYPE", "void");
    for &bits in SIZES {
        g.fc(
            &format!("void {}({vparams})", sized(bits)),
            &body.replace("ESIZE", &(bits / 8).to_string()),
        );
    }
    vparams
}
