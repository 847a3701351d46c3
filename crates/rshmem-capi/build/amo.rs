//! Atomic memory operations: the blocking and `_nbi` `shmem_TYPENAME_atomic_*` routines
//! and the deprecated names (`shmem_TYPENAME_cswap`, `_finc`, `_fadd`...).

use crate::types::{sub, AMO_BIT, AMO_EXT_EXTRA, AMO_STD};
use crate::writer::Gen;

/// AMO operations: (name, C params after the address, op expression, fetching, types).
pub(crate) fn amo(g: &mut Gen) {
    let ext: Vec<&str> = AMO_STD.iter().chain(AMO_EXT_EXTRA).copied().collect();
    let std_: Vec<&str> = AMO_STD.to_vec();
    let bit: Vec<&str> = AMO_BIT.to_vec();
    // (op, extra C params, AmoOp expression, returns the old value, types)
    let ops: Vec<(&str, &str, &str, bool, &Vec<&str>)> = vec![
        ("fetch", "", "Fetch", true, &ext),
        ("set", ", TYPE value", "Set(value)", false, &ext),
        ("swap", ", TYPE value", "Swap(value)", true, &ext),
        (
            "compare_swap",
            ", TYPE cond, TYPE value",
            "CompareSwap { cond, value }",
            true,
            &std_,
        ),
        (
            "fetch_inc",
            "",
            "Add(<{T} as rshmem_core::Word>::ONE)",
            true,
            &std_,
        ),
        (
            "inc",
            "",
            "Add(<{T} as rshmem_core::Word>::ONE)",
            false,
            &std_,
        ),
        ("fetch_add", ", TYPE value", "Add(value)", true, &std_),
        ("add", ", TYPE value", "Add(value)", false, &std_),
        ("fetch_and", ", TYPE value", "And(value)", true, &bit),
        ("and", ", TYPE value", "And(value)", false, &bit),
        ("fetch_or", ", TYPE value", "Or(value)", true, &bit),
        ("or", ", TYPE value", "Or(value)", false, &bit),
        ("fetch_xor", ", TYPE value", "Xor(value)", true, &bit),
        ("xor", ", TYPE value", "Xor(value)", false, &bit),
    ];
    g.section("Atomic memory operations");
    for (op, extra, amo, fetching, types) in &ops {
        for tn in types.iter() {
            let (addr, ptr) = if *op == "fetch" {
                ("const TYPE *source", "source")
            } else {
                ("TYPE *dest", "dest")
            };
            let call = format!("glue::amo(R, @CTX@, {ptr}, rshmem_core::AmoOp::{amo}, pe)");
            if *fetching {
                g.fc(
                    &sub(
                        &format!("TYPE shmem_TN_atomic_{op}({addr}{extra}, int pe)"),
                        tn,
                    ),
                    &sub(&call, tn),
                );
            } else {
                g.fc(
                    &sub(
                        &format!("void shmem_TN_atomic_{op}({addr}{extra}, int pe)"),
                        tn,
                    ),
                    &sub(
                        &format!("{{ {}; }}", call.replace("glue::amo(", "glue::amo_post(")),
                        tn,
                    ),
                );
            }
        }
    }
    g.section("Nonblocking fetching atomic memory operations");
    for (op, extra, amo, fetching, types) in &ops {
        if !fetching {
            continue;
        }
        for tn in types.iter() {
            let (addr, ptr) = if *op == "fetch" {
                ("const TYPE *source", "source")
            } else {
                ("TYPE *dest", "dest")
            };
            g.fc(
                &sub(
                    &format!("void shmem_TN_atomic_{op}_nbi(TYPE *fetch, {addr}{extra}, int pe)"),
                    tn,
                ),
                &sub(
                    &format!(
                        "glue::amo_nbi(R, @CTX@, fetch, {ptr}, rshmem_core::AmoOp::{amo}, pe)"
                    ),
                    tn,
                ),
            );
        }
    }
    g.section("Deprecated atomic memory operation names");
    let old: &[(&str, &str, &[&str])] = &[
        (
            "fetch",
            "fetch",
            &["float", "double", "int", "long", "longlong"],
        ),
        (
            "set",
            "set",
            &["float", "double", "int", "long", "longlong"],
        ),
        (
            "swap",
            "swap",
            &["float", "double", "int", "long", "longlong"],
        ),
        ("cswap", "compare_swap", &["int", "long", "longlong"]),
        ("finc", "fetch_inc", &["int", "long", "longlong"]),
        ("inc", "inc", &["int", "long", "longlong"]),
        ("fadd", "fetch_add", &["int", "long", "longlong"]),
        ("add", "add", &["int", "long", "longlong"]),
    ];
    for (old, new, types) in old {
        let (_, extra, amo, fetching, _) = ops.iter().find(|o| o.0 == *new).unwrap();
        for tn in *types {
            let (addr, ptr) = if *old == "fetch" {
                ("const TYPE *source", "source")
            } else {
                ("TYPE *dest", "dest")
            };
            // The old names of non-fetching operations post too (OSU's atomics use them).
            let f = if *fetching { "amo" } else { "amo_post" };
            let call = format!(
                "glue::{f}(R, rshmem_core::Ctx::default_ctx(), {ptr}, rshmem_core::AmoOp::{amo}, pe)"
            );
            let (ret, body) = if *fetching {
                ("TYPE", call)
            } else {
                ("void", format!("{{ {call}; }}"))
            };
            g.f(
                &sub(&format!("{ret} shmem_TN_{old}({addr}{extra}, int pe)"), tn),
                &sub(&body, tn),
            );
        }
    }
}
