//! The type-generic interfaces: the C11 `_Generic` selections of `shmem.h` (RMA, AMO,
//! p2p, collectives) and `shmemx.h` (`_nbe`, Sandia OpenSHMEM names), and the C++
//! overloads `shmem.h` gives the same families.

use std::fmt::Write as _;

use crate::collectives::{DATA_COLLS, REDUCE_OPS};
use crate::types::{
    base_of, ctype, reduce_types, AMO_BIT, AMO_EXT_EXTRA, AMO_STD, BASE, P2P_DEPRECATED, RMA,
};

/// A type-generic family: its generic name, the typed-name template (TN = TYPENAME),
/// the TYPENAMEs, and whether it also takes a leading context (`shmem_ctx_` forms).
type Family = (String, String, Vec<&'static str>, bool);

/// The team collectives' generic families, which dispatch on `dest` (the second argument).
fn coll_families() -> Vec<Family> {
    let rma: Vec<&str> = RMA.iter().map(|(n, _)| *n).collect();
    let mut fams: Vec<Family> = Vec::new();
    for (op, _, _) in DATA_COLLS {
        fams.push((
            format!("shmem_{op}"),
            format!("shmem_TN_{op}"),
            rma.clone(),
            false,
        ));
    }
    for (op, _) in REDUCE_OPS {
        fams.push((
            format!("shmem_{op}_reduce"),
            format!("shmem_TN_{op}_reduce"),
            reduce_types(op),
            false,
        ));
    }
    for kind in ["inscan", "exscan"] {
        fams.push((
            format!("shmem_sum_{kind}"),
            format!("shmem_TN_sum_{kind}"),
            reduce_types("sum"),
            false,
        ));
    }
    fams
}

/// C11 generic selections of the team collectives, which dispatch on `dest` (the
/// second argument).
pub(crate) fn coll_generics() -> String {
    let mut s = String::new();
    for (generic, tpl, types, _) in coll_families() {
        writeln!(
            s,
            "#define {generic}(__rshmem_t, __rshmem_d, ...) _Generic(*(__rshmem_d), \\"
        )
        .unwrap();
        let mut rows = Vec::new();
        for b in BASE {
            if let Some(tn) = types.iter().find(|tn| base_of(ctype(tn)) == *b) {
                rows.push(format!("    {b}: {}", tpl.replace("TN", tn)));
            }
        }
        writeln!(
            s,
            "{})(__rshmem_t, __rshmem_d, __VA_ARGS__)",
            rows.join(", \\\n")
        )
        .unwrap();
    }
    // `shmem_sync(team)` and the deprecated `shmem_sync(start, logstride, size, pSync)`
    // share a name: select by arity (the function name is not re-expanded).
    s.push_str(
        "#define __rshmem_sync_sel(__a, __b, __c, __d, __name, ...) __name\n\
         #define shmem_sync(...) __rshmem_sync_sel(__VA_ARGS__, shmem_sync, shmem_sync, \\\n    \
         shmem_sync, shmem_team_sync, __rshmem_none)(__VA_ARGS__)\n",
    );
    s
}

/// One C11 generic selection `generic` over the typed routines `tpl` (TN = TYPENAME) of
/// `types`, dispatching on the first argument's pointee, or (with `ctx_tpl`) on the
/// second's after a leading context. Relies on `__rshmem_dsel` from `shmem.h`.
fn generic_macro(s: &mut String, generic: &str, tpl: &str, ctx_tpl: Option<&str>, types: &[&str]) {
    let table = |tpl: &str, indent: &str| -> String {
        let mut rows = Vec::new();
        for b in BASE {
            if let Some(tn) = types.iter().find(|tn| base_of(ctype(tn)) == *b) {
                rows.push(format!("{indent}{b}: {}", tpl.replace("TN", tn)));
            }
        }
        rows.join(", \\\n")
    };
    match ctx_tpl {
        Some(ctpl) => writeln!(
            s,
            "#define {generic}(__rshmem_a, ...) _Generic((__rshmem_a), \\\n    \
             shmem_ctx_t: _Generic(*__rshmem_dsel(__rshmem_a, __VA_ARGS__), \\\n\
             {}), \\\n    \
             default: _Generic(*__rshmem_dsel(__rshmem_a, __VA_ARGS__), \\\n\
             {}))(__rshmem_a, __VA_ARGS__)",
            table(ctpl, "        "),
            table(tpl, "        "),
        ),
        None => writeln!(
            s,
            "#define {generic}(__rshmem_a, ...) _Generic(*(__rshmem_a), \\\n{})(__rshmem_a, __VA_ARGS__)",
            table(tpl, "    ")
        ),
    }
    .unwrap();
}

/// The generic families of RMA, AMOs and point-to-point synchronization.
fn std_families() -> Vec<Family> {
    let rma: Vec<&str> = RMA.iter().map(|(n, _)| *n).collect();
    let ext: Vec<&str> = AMO_STD.iter().chain(AMO_EXT_EXTRA).copied().collect();
    let p2p1: Vec<&str> = AMO_STD.iter().chain(P2P_DEPRECATED).copied().collect();
    let mut fams: Vec<Family> = Vec::new();
    for op in [
        "put",
        "get",
        "p",
        "g",
        "iput",
        "iget",
        "ibput",
        "ibget",
        "put_nbi",
        "get_nbi",
        "put_signal",
        "put_signal_nbi",
    ] {
        fams.push((
            format!("shmem_{op}"),
            format!("shmem_TN_{op}"),
            rma.clone(),
            true,
        ));
    }
    let amo_ops: [(&str, &Vec<&str>); 14] = [
        ("fetch", &ext),
        ("set", &ext),
        ("swap", &ext),
        ("compare_swap", &AMO_STD.to_vec()),
        ("fetch_inc", &AMO_STD.to_vec()),
        ("inc", &AMO_STD.to_vec()),
        ("fetch_add", &AMO_STD.to_vec()),
        ("add", &AMO_STD.to_vec()),
        ("fetch_and", &AMO_BIT.to_vec()),
        ("and", &AMO_BIT.to_vec()),
        ("fetch_or", &AMO_BIT.to_vec()),
        ("or", &AMO_BIT.to_vec()),
        ("fetch_xor", &AMO_BIT.to_vec()),
        ("xor", &AMO_BIT.to_vec()),
    ];
    for (op, types) in &amo_ops {
        fams.push((
            format!("shmem_atomic_{op}"),
            format!("shmem_TN_atomic_{op}"),
            types.to_vec(),
            true,
        ));
    }
    for (op, types) in &amo_ops {
        if op.starts_with("fetch") || *op == "swap" || *op == "compare_swap" {
            fams.push((
                format!("shmem_atomic_{op}_nbi"),
                format!("shmem_TN_atomic_{op}_nbi"),
                types.to_vec(),
                true,
            ));
        }
    }
    for (old, new, types) in [
        ("fetch", "fetch", &ext),
        ("set", "set", &ext),
        ("swap", "swap", &ext),
        ("cswap", "compare_swap", &AMO_STD.to_vec()),
        ("finc", "fetch_inc", &AMO_STD.to_vec()),
        ("inc", "inc", &AMO_STD.to_vec()),
        ("fadd", "fetch_add", &AMO_STD.to_vec()),
        ("add", "add", &AMO_STD.to_vec()),
    ] {
        fams.push((
            format!("shmem_{old}"),
            format!("shmem_TN_atomic_{new}"),
            types.to_vec(),
            false,
        ));
    }
    fams.push((
        "shmem_wait_until".into(),
        "shmem_TN_wait_until".into(),
        p2p1.clone(),
        false,
    ));
    fams.push((
        "shmem_test".into(),
        "shmem_TN_test".into(),
        p2p1.clone(),
        false,
    ));
    for set in ["all", "any", "some"] {
        for kind in ["wait_until", "test"] {
            for v in ["", "_vector"] {
                fams.push((
                    format!("shmem_{kind}_{set}{v}"),
                    format!("shmem_TN_{kind}_{set}{v}"),
                    p2p1.clone(),
                    false,
                ));
            }
        }
    }
    fams
}

/// C11 generic selections of [`std_families`].
pub(crate) fn generics() -> String {
    let mut s = String::new();
    // The typed argument (the symmetric address, or `fetch` for the fetch-nbi forms) is
    // the first one, or the second after a context. `__rshmem_dsel` picks it without
    // ever dereferencing a context (an opaque pointer), so every association of the
    // selections below stays a valid expression whichever form is called.
    s.push_str(
        "#define __rshmem_first(__x, ...) __x\n\
         #define __rshmem_dsel(__a, ...) _Generic((__a), \\\n    \
         shmem_ctx_t: __rshmem_first(__VA_ARGS__, 0), default: (__a))\n",
    );
    for (generic, tpl, types, ctx) in std_families() {
        let ctpl = ctx.then(|| tpl.replacen("shmem_", "shmem_ctx_", 1));
        generic_macro(&mut s, &generic, &tpl, ctpl.as_deref(), &types);
    }
    // 1.6: signal_set/add with an optional leading context (the names are not
    // re-expanded inside their own macros).
    for op in ["set", "add"] {
        writeln!(
            s,
            "#define shmem_signal_{op}(__rshmem_a, ...) _Generic((__rshmem_a), \\\n    \
             shmem_ctx_t: shmem_ctx_signal_{op}, default: shmem_signal_{op})(__rshmem_a, __VA_ARGS__)"
        )
        .unwrap();
    }
    s
}

/// C11 generic selections of the explicit non-blocking routines (`shmemx.h`), with an
/// optional leading context like the standard ones.
pub(crate) fn nbe_generics() -> String {
    let mut s = String::new();
    let rma: Vec<&str> = RMA.iter().map(|(n, _)| *n).collect();
    let ext: Vec<&str> = AMO_STD.iter().chain(AMO_EXT_EXTRA).copied().collect();
    let fams: [(&str, &[&str]); 10] = [
        ("put", &rma),
        ("get", &rma),
        ("fetch", &ext),
        ("swap", &ext),
        ("cswap", AMO_STD),
        ("fadd", AMO_STD),
        ("finc", AMO_STD),
        ("fetch_and", AMO_BIT),
        ("fetch_or", AMO_BIT),
        ("fetch_xor", AMO_BIT),
    ];
    for (op, types) in fams {
        generic_macro(
            &mut s,
            &format!("shmemx_{op}_nbe"),
            &format!("shmemx_TN_{op}_nbe"),
            Some(&format!("shmemx_ctx_TN_{op}_nbe")),
            types,
        );
    }
    s
}

/// C11 generic selections of the Sandia OpenSHMEM names (`shmemx.h`).
pub(crate) fn sos_generics() -> String {
    let mut s = String::new();
    let rma: Vec<&str> = RMA.iter().map(|(n, _)| *n).collect();
    for op in ["ibput", "ibget"] {
        generic_macro(
            &mut s,
            &format!("shmemx_{op}"),
            &format!("shmemx_TN_{op}"),
            Some(&format!("shmemx_ctx_TN_{op}")),
            &rma,
        );
    }
    for op in ["set", "add"] {
        writeln!(
            s,
            "#define shmemx_signal_{op}(__rshmem_a, ...) _Generic((__rshmem_a), \\\n    \
             shmem_ctx_t: shmemx_ctx_signal_{op}, default: shmemx_signal_{op})(__rshmem_a, __VA_ARGS__)"
        )
        .unwrap();
    }
    let types = reduce_types("sum");
    for kind in ["inscan", "exscan"] {
        let mut rows = Vec::new();
        for b in BASE {
            if let Some(tn) = types.iter().find(|tn| base_of(ctype(tn)) == *b) {
                rows.push(format!("    {b}: shmemx_{tn}_sum_{kind}"));
            }
        }
        writeln!(
            s,
            "#define shmemx_sum_{kind}(__rshmem_t, __rshmem_d, ...) _Generic(*(__rshmem_d), \\\n{})(__rshmem_t, __rshmem_d, __VA_ARGS__)",
            rows.join(", \\\n")
        )
        .unwrap();
    }
    s
}

/// C++ overloads of the generic families (C11 `_Generic` is C only): one inline function
/// per base type forwarding to the typed routine, as Sandia OpenSHMEM's `shmem.h` offers.
/// `decls` are the C declarations (`ret name(params);`) of `shmem.h`. Complex types are left
/// out (C++ spells them `std::complex`), and so is an overload whose parameters equal a C
/// routine of the generic's own name (the deprecated `long` `shmem_wait_until`).
pub(crate) fn cxx_overloads(decls: &[&String]) -> String {
    let parse = |d: &str| -> Option<(String, String, String)> {
        let open = d.find('(')?;
        let head = d[..open].trim();
        let cut = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        let params = d[open + 1..d.rfind(')')?].trim().to_string();
        Some((
            head[cut + 1..].to_string(),
            head[..=cut].trim().to_string(),
            params,
        ))
    };
    let mut typed = std::collections::HashMap::new();
    for d in decls {
        if let Some((name, ret, params)) = parse(d) {
            typed.insert(name, (ret, params));
        }
    }
    let mut s = String::new();
    for (generic, tpl, types, ctx) in std_families().into_iter().chain(coll_families()) {
        let mut tpls = vec![(generic.clone(), tpl.clone())];
        if ctx {
            tpls.push((generic.clone(), tpl.replacen("shmem_", "shmem_ctx_", 1)));
        }
        for (generic, tpl) in tpls {
            for b in BASE.iter().filter(|b| !b.ends_with("_Complex")) {
                let Some(tn) = types.iter().find(|tn| base_of(ctype(tn)) == *b) else {
                    continue;
                };
                let name = tpl.replace("TN", tn);
                let (ret, params) = typed
                    .get(&name)
                    .unwrap_or_else(|| panic!("no declaration of {name} for {generic}"));
                if typed.get(&generic).is_some_and(|(_, p)| p == params) {
                    continue;
                }
                let args: Vec<&str> = params
                    .split(',')
                    .map(|p| {
                        let p = p.trim();
                        let at = p
                            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .map_or(0, |i| i + 1);
                        &p[at..]
                    })
                    .collect();
                writeln!(
                    s,
                    "static inline {ret} {generic}({params}) {{ return {name}({}); }}",
                    args.join(", ")
                )
                .unwrap();
            }
        }
    }
    s
}
