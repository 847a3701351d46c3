//! The C type tables every family expands over (RMA, SIZE, AMO, p2p and reduction
//! TYPENAMEs) and the mappings from TYPENAME to C type, C base type and Rust type.

/// (TYPENAME, C type) of the 24 standard RMA types.
pub(crate) const RMA: &[(&str, &str)] = &[
    ("float", "float"),
    ("double", "double"),
    ("longdouble", "long double"),
    ("char", "char"),
    ("schar", "signed char"),
    ("short", "short"),
    ("int", "int"),
    ("long", "long"),
    ("longlong", "long long"),
    ("uchar", "unsigned char"),
    ("ushort", "unsigned short"),
    ("uint", "unsigned int"),
    ("ulong", "unsigned long"),
    ("ulonglong", "unsigned long long"),
    ("int8", "int8_t"),
    ("int16", "int16_t"),
    ("int32", "int32_t"),
    ("int64", "int64_t"),
    ("uint8", "uint8_t"),
    ("uint16", "uint16_t"),
    ("uint32", "uint32_t"),
    ("uint64", "uint64_t"),
    ("size", "size_t"),
    ("ptrdiff", "ptrdiff_t"),
];

/// Element sizes in bits of the `SIZE` variants.
pub(crate) const SIZES: &[usize] = &[8, 16, 32, 64, 128];

/// Standard AMO types (also the p2p types).
pub(crate) const AMO_STD: &[&str] = &[
    "int",
    "long",
    "longlong",
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "int64",
    "uint32",
    "uint64",
    "size",
    "ptrdiff",
];
/// Extended AMO types: standard plus float and double.
pub(crate) const AMO_EXT_EXTRA: &[&str] = &["float", "double"];
/// Bitwise AMO types.
pub(crate) const AMO_BIT: &[&str] = &[
    "uint",
    "ulong",
    "ulonglong",
    "int32",
    "int64",
    "uint32",
    "uint64",
];
/// Deprecated extra p2p types (wait_until/test in 1.5; the set forms too, as in SOS).
pub(crate) const P2P_DEPRECATED: &[&str] = &["short", "ushort"];

/// The C base types a `_Generic` selection may list (typedefs are aliases of these).
pub(crate) const BASE: &[&str] = &[
    "float",
    "double",
    "long double",
    "char",
    "signed char",
    "short",
    "int",
    "long",
    "long long",
    "unsigned char",
    "unsigned short",
    "unsigned int",
    "unsigned long",
    "unsigned long long",
    "float _Complex",
    "double _Complex",
];

/// (TYPENAME, C type) of the complex reduction types.
const COMPLEX: &[(&str, &str)] = &[
    ("complexf", "float _Complex"),
    ("complexd", "double _Complex"),
];

/// Reduction TYPENAMEs taking and/or/xor (and every other operator).
const RED_BIT: &[&str] = &[
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "ulonglong",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "size",
];
/// Reduction TYPENAMEs taking max/min/sum/prod but not the bitwise operators.
/// `longdouble` arithmetic is done in C (`csrc/longdouble.c`): only the C compiler knows
/// the platform's `long double`.
const RED_ORD: &[&str] = &[
    "char",
    "schar",
    "short",
    "int",
    "long",
    "longlong",
    "ptrdiff",
    "float",
    "double",
    "longdouble",
];

pub(crate) fn ctype(tn: &str) -> &'static str {
    RMA.iter()
        .chain(COMPLEX)
        .find(|(n, _)| *n == tn)
        .unwrap_or_else(|| panic!("unknown TYPENAME {tn}"))
        .1
}

/// The base type a C type names on LP64 Linux.
pub(crate) fn base_of(c: &str) -> &str {
    match c {
        "int8_t" => "signed char",
        "int16_t" => "short",
        "int32_t" => "int",
        "int64_t" | "ptrdiff_t" => "long",
        "uint8_t" => "unsigned char",
        "uint16_t" => "unsigned short",
        "uint32_t" => "unsigned int",
        "uint64_t" | "size_t" => "unsigned long",
        other => other,
    }
}

/// The Rust type of a C scalar or handle type.
fn rs_scalar(c: &str) -> &'static str {
    match c {
        "float" => "f32",
        "double" => "f64",
        "long double" => "crate::glue::LongDouble",
        "char" => "core::ffi::c_char",
        "signed char" => "core::ffi::c_schar",
        "short" => "core::ffi::c_short",
        "int" => "core::ffi::c_int",
        "long" => "core::ffi::c_long",
        "long long" => "core::ffi::c_longlong",
        "unsigned char" => "core::ffi::c_uchar",
        "unsigned short" => "core::ffi::c_ushort",
        "unsigned int" => "core::ffi::c_uint",
        "unsigned long" => "core::ffi::c_ulong",
        "unsigned long long" => "core::ffi::c_ulonglong",
        "int8_t" => "i8",
        "int16_t" => "i16",
        "int32_t" => "i32",
        "int64_t" => "i64",
        "uint8_t" => "u8",
        "uint16_t" => "u16",
        "uint32_t" => "u32",
        "uint64_t" => "u64",
        "size_t" => "usize",
        "ptrdiff_t" => "isize",
        "float _Complex" => "rshmem_core::coll::Complex<f32>",
        "double _Complex" => "rshmem_core::coll::Complex<f64>",
        "void" => "core::ffi::c_void",
        "shmem_team_t" | "shmemx_aset_t" => "crate::glue::TeamHandle",
        "shmemx_offset_fn" => "crate::glue::AsetIndexFn",
        "shmemx_gettid_fn" => "crate::glue::GettidFn",
        "shmem_team_config_t" => "crate::glue::TeamConfigC",
        "shmem_ctx_t" => "crate::glue::CtxH",
        "shmem_ctx_session_config_t" => "crate::glue::SessionConfigC",
        "shmemx_request_h" => "Option<rshmem_core::ReqHandle>",
        "shmemx_request_params_t" => "rshmem_core::RequestParams",
        "shmemx_pcntr_t" => "rshmem_core::profile::Pcntr",
        other => panic!("no Rust type for C type {other:?}"),
    }
}

/// The Rust type of a C type written `[const] T [*]`.
pub(crate) fn rs_type(c: &str) -> String {
    let c = c.trim();
    if let Some(inner) = c.strip_suffix('*') {
        let inner = inner.trim();
        if let Some(t) = inner.strip_prefix("const ") {
            format!("*const {}", rs_type(t))
        } else {
            format!("*mut {}", rs_type(inner))
        }
    } else {
        rs_scalar(c).to_string()
    }
}

/// Substitutes `TN` (TYPENAME), `TYPE` (C type) and `{T}` (Rust type) in a template.
pub(crate) fn sub(tpl: &str, tn: &str) -> String {
    let c = ctype(tn);
    tpl.replace("TN", tn)
        .replace("TYPE", c)
        .replace("{T}", rs_scalar(c))
}

/// The reduction TYPENAMEs of an operator, in the spec's order.
pub(crate) fn reduce_types(op: &str) -> Vec<&'static str> {
    match op {
        "and" | "or" | "xor" => RED_BIT.to_vec(),
        _ => {
            let mut v: Vec<&str> = RED_ORD[..7].to_vec();
            v.extend_from_slice(RED_BIT);
            v.extend_from_slice(&RED_ORD[7..]);
            if op == "sum" || op == "prod" {
                v.extend(COMPLEX.iter().map(|(n, _)| *n));
            }
            v
        }
    }
}
