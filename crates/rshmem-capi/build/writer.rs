//! The writer every family emits through: [`Gen`] turns a C prototype and a Rust body
//! into the `pshmem_`/`shmem_` entry points, their `shmem_ctx_` and `shmemx_try_` forms
//! and their declarations (the core counts every routine in the profile).

use std::fmt::Write as _;

use crate::types::rs_type;

/// Which header declares a routine.
#[derive(Clone, Copy, PartialEq)]
enum Hdr {
    Shmem,
    Shmemx,
}

/// What the families have generated so far: the Rust entry points and the declarations
/// of each header.
#[derive(Default)]
pub(crate) struct Gen {
    /// The text of `$OUT_DIR/entry.rs`.
    pub(crate) rs: String,
    /// Declarations of shmem.h, by section.
    pub(crate) decls: Vec<(String, Vec<String>)>,
    pub(crate) xdecls: Vec<String>,
    pub(crate) pdecls: Vec<String>,
    pub(crate) count: usize,
    pub(crate) pcount: usize,
    /// `shmem_ctx_` forms of the routines of the current section, emitted after its
    /// default-context forms (so each section lists one group, then the other).
    ctx_pending: Vec<(String, String)>,
    /// Whether the routines being generated also get a `shmemx_try_` form (seed 004's
    /// error codes).
    pub(crate) tries: bool,
    /// Declarations of the `shmemx_try_` forms, listed together in `shmemx.h`.
    pub(crate) try_decls: Vec<String>,
}

/// Routines outside the generated families that also get a `shmemx_try_` form.
const TRY_ALSO: &[&str] = &[
    "shmem_fence",
    "shmem_quiet",
    "shmem_ctx_fence",
    "shmem_ctx_quiet",
    "shmem_barrier_all",
    "shmem_sync_all",
    "shmem_team_sync",
    "shmem_set_lock",
    "shmem_clear_lock",
    "shmem_test_lock",
    "shmemx_request_wait",
    "shmemx_create_strided_aset",
    "shmemx_create_log_strided_aset",
    "shmemx_create_custom_aset",
    "shmemx_create_generic_aset",
];

/// The body placeholder of the context a routine runs on (`&Ctx`).
const CTX: &str = "@CTX@";
/// The placeholder of `Option<&Ctx>`, `None` for `SHMEM_CTX_INVALID` (fence and quiet,
/// for which an invalid context is a no-op).
const CTX_OPT: &str = "@CTXOPT@";

/// The `shmem_ctx_`/`shmemx_ctx_` form of a prototype: the name gains `ctx_` after its
/// prefix and the parameters a leading `shmem_ctx_t ctx`.
fn ctx_sig(sig: &str) -> String {
    let open = sig.find('(').expect("(");
    let (head, params) = (&sig[..open], &sig[open + 1..]);
    let at = head
        .rfind("shmemx_")
        .map(|i| i + "shmemx_".len())
        .or_else(|| head.rfind("shmem_").map(|i| i + "shmem_".len()))
        .expect("a shmem_ name");
    let params = match params.strip_prefix("void)") {
        Some(rest) => format!("shmem_ctx_t ctx){rest}"),
        None => format!("shmem_ctx_t ctx, {params}"),
    };
    format!("{}ctx_{}({params}", &head[..at], &head[at..])
}

impl Gen {
    pub(crate) fn section(&mut self, title: &str) {
        self.flush_ctx();
        self.decls.push((title.to_string(), Vec::new()));
    }

    /// A titled group of `shmemx.h` declarations.
    pub(crate) fn xsection(&mut self, title: &str) {
        self.flush_ctx();
        self.xdecls.push(format!("\n/* {title} */"));
    }

    /// Emits the pending `shmem_ctx_` forms.
    pub(crate) fn flush_ctx(&mut self) {
        for (sig, body) in std::mem::take(&mut self.ctx_pending) {
            self.f(&sig, &body);
        }
    }

    /// A routine with a context dimension: its default-context form now (`@CTX@` is
    /// `SHMEM_CTX_DEFAULT`) and its `shmem_ctx_` form at the end of the section (`@CTX@`
    /// is the checked `ctx` argument).
    pub(crate) fn fc(&mut self, sig: &str, body: &str) {
        self.f(
            sig,
            &body
                .replace(CTX_OPT, "Some(rshmem_core::Ctx::default_ctx())")
                .replace(CTX, "rshmem_core::Ctx::default_ctx()"),
        );
        self.ctx_pending.push((
            ctx_sig(sig),
            body.replace(CTX_OPT, "glue::ctx_opt(R, ctx)")
                .replace(CTX, "glue::ctx(R, ctx)"),
        ));
    }

    fn decl(&mut self, hdr: Hdr, d: String) {
        match hdr {
            Hdr::Shmem => self.decls.last_mut().expect("a section").1.push(d),
            Hdr::Shmemx => self.xdecls.push(d),
        }
    }

    /// One routine. `sig` is its C prototype (`ret name(params)`), `body` a Rust
    /// expression of the return type in which every parameter and `R` (the routine's
    /// name) are in scope, and `crate::glue` is `glue`.
    pub(crate) fn f(&mut self, sig: &str, body: &str) {
        let open = sig.find('(').expect("(");
        let head = sig[..open].trim();
        let params = sig[open + 1..sig.rfind(')').expect(")")].trim();
        let cut = head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .expect("return type");
        let (cret, name) = (head[..=cut].trim(), &head[cut + 1..]);
        let noreturn = cret.starts_with("NORETURN ");
        let cret = cret.trim_start_matches("NORETURN ").trim();
        let ps: Vec<(String, String)> = if params == "void" {
            Vec::new()
        } else {
            params.split(',').map(split_param).collect()
        };
        let rparams: Vec<String> = ps
            .iter()
            .map(|(t, n)| format!("{n}: {}", rs_type(t)))
            .collect();
        let args: Vec<&str> = ps.iter().map(|(_, n)| n.as_str()).collect();
        let rret = if cret == "void" {
            String::new()
        } else {
            format!(" -> {}", rs_type(cret))
        };
        let rparams = rparams.join(", ");
        let hdr = if name.starts_with("shmemx_") {
            Hdr::Shmemx
        } else {
            Hdr::Shmem
        };
        let cdecl = |n: &str| {
            let nr = if noreturn { "__rshmem_noreturn " } else { "" };
            let sp = if cret.ends_with('*') { "" } else { " " };
            format!("{nr}{cret}{sp}{n}({params});")
        };
        // Every routine has its profiling twin (`pshmem_put`, `pstart_pes`, `p_my_pe`):
        // the body lives under the p-name and the plain name forwards to it.
        let real = format!("p{name}");
        writeln!(
            self.rs,
            "#[no_mangle]\npub unsafe extern \"C\" fn {real}({rparams}){rret} {{\n    \
             const R: &str = \"{name}\";\n    \
             crate::glue::guard(R, move || {{\n        \
             // SAFETY: the caller passes what the OpenSHMEM specification requires of\n        \
             // {name}; the core checks symmetric addresses, PEs and alignment.\n        \
             #[allow(unused_unsafe)]\n        unsafe {{ {body} }}\n    }})\n}}"
        )
        .unwrap();
        self.count += 1;
        writeln!(
            self.rs,
            "#[no_mangle]\npub unsafe extern \"C\" fn {name}({rparams}){rret} {{\n    \
             // SAFETY: forwards the caller's arguments unchanged.\n    \
             unsafe {{ {real}({}) }}\n}}",
            args.join(", ")
        )
        .unwrap();
        self.pcount += 1;
        self.pdecls.push(cdecl(&real));
        self.decl(hdr, cdecl(name));
        let tried = (name.starts_with("shmem_") && self.tries) || TRY_ALSO.contains(&name);
        if !noreturn && tried {
            self.try_form(name, cret, &ps, body);
        }
    }

    /// The `shmemx_try_` form of routine `name`: the same body, run by
    /// `glue::returning`, so an error comes back as a `SHMEMX_ERR_*` code instead of
    /// ending the job. A routine's value goes to a trailing `result` pointer (may be
    /// NULL); a collective's own `int` status becomes the return code.
    fn try_form(&mut self, name: &str, cret: &str, ps: &[(String, String)], body: &str) {
        let tname = match name.strip_prefix("shmemx_") {
            Some(rest) => format!("shmemx_try_{rest}"),
            None => name.replacen("shmem_", "shmemx_try_", 1),
        };
        let status = cret == "int"
            && (is_collective(name) || name == "shmem_team_sync" || name == "shmemx_request_wait");
        let mut cparams: Vec<String> = ps.iter().map(|(t, n)| join_param(t, n)).collect();
        let mut rparams: Vec<String> = ps
            .iter()
            .map(|(t, n)| format!("{n}: {}", rs_type(t)))
            .collect();
        let call = if cret == "void" {
            format!("crate::glue::returning(R, core::ptr::null_mut::<()>(), move || {{ {body}; }})")
        } else if status {
            format!(
                "{{ let mut st: core::ffi::c_int = 0; match crate::glue::returning(R, &mut st, move || {body}) {{ 0 if st != 0 => crate::glue::ERR_INVALID_ARGUMENT, c => c }} }}"
            )
        } else {
            let star = if cret.ends_with('*') { "" } else { " " };
            cparams.push(format!("{cret}{star}*result"));
            rparams.push(format!("result: *mut {}", rs_type(cret)));
            format!("crate::glue::returning(R, result, move || {body})")
        };
        let (cparams, rparams) = (cparams.join(", "), rparams.join(", "));
        let cparams = if cparams.is_empty() {
            "void".to_string()
        } else {
            cparams
        };
        let args: Vec<&str> = ps
            .iter()
            .map(|(_, n)| n.as_str())
            .chain((cret != "void" && !status).then_some("result"))
            .collect();
        let real = format!("p{tname}");
        writeln!(
            self.rs,
            "#[no_mangle]\npub unsafe extern \"C\" fn {real}({rparams}) -> core::ffi::c_int {{\n    \
             const R: &str = \"{name}\";\n    \
             // SAFETY: the caller passes what {name} requires, and `result` (if any) is\n    \
             // NULL or writable; the core checks symmetric addresses, PEs and alignment.\n    \
             #[allow(unused_unsafe)]\n    unsafe {{ {call} }}\n}}\n\
             #[no_mangle]\npub unsafe extern \"C\" fn {tname}({rparams}) -> core::ffi::c_int {{\n    \
             // SAFETY: forwards the caller's arguments unchanged.\n    \
             unsafe {{ {real}({}) }}\n}}",
            args.join(", ")
        )
        .unwrap();
        self.count += 1;
        self.pcount += 1;
        self.pdecls.push(format!("int {real}({cparams});"));
        self.try_decls.push(format!("int {tname}({cparams});"));
    }

    /// A declaration of a routine written by hand in `src/lib.rs`.
    pub(crate) fn hand(&mut self, decl: &str) {
        let hdr = if decl.contains("shmemx_") {
            Hdr::Shmemx
        } else {
            Hdr::Shmem
        };
        self.decl(hdr, decl.to_string());
        if let Some(i) = decl.find("shmem") {
            let mut p = decl.to_string();
            p.insert(i, 'p');
            self.pdecls.push(p);
        }
    }
}

/// A C parameter from its type and name (the inverse of [`split_param`]).
fn join_param(t: &str, n: &str) -> String {
    if t.ends_with('*') {
        format!("{t}{n}")
    } else {
        format!("{t} {n}")
    }
}

/// Splits a C parameter `T *name` into (type, name).
fn split_param(p: &str) -> (String, String) {
    let p = p.trim();
    let cut = p
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .expect("typed parameter");
    (p[..=cut].trim().to_string(), p[cut + 1..].to_string())
}

/// Whether `name` is a collective entry point (its `int` status is its try form's code).
fn is_collective(name: &str) -> bool {
    [
        "barrier",
        "sync",
        "broadcast",
        "collect",
        "alltoall",
        "_reduce",
        "_to_all",
    ]
    .iter()
    .any(|k| name.contains(k))
}
