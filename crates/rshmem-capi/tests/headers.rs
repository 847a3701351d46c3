//! The checked-in headers are the generated ones, they compile warning-free as C11, C99
//! and C++17, and they declare exactly the symbols librshmem exports.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const HEADERS: [&str; 3] = ["shmem.h", "shmemx.h", "pshmem.h"];

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("include")
}

/// `target/<profile>`, from this test binary's path (`target/<profile>/deps/x`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn checked_in_headers_are_generated() {
    let out = Path::new(env!("OUT_DIR"));
    let bless = std::env::var_os("RSHMEM_BLESS").is_some();
    for h in HEADERS {
        let gen = std::fs::read_to_string(out.join(h)).unwrap();
        let path = include_dir().join(h);
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if bless {
            std::fs::write(&path, &gen).unwrap();
        } else {
            assert!(
                have == gen,
                "{} differs from the generated header; run RSHMEM_BLESS=1 cargo test -p rshmem-capi --test headers",
                path.display()
            );
        }
    }
}

fn compile(compiler: &str, flags: &[&str], src: &str, ext: &str) {
    let dir = std::env::temp_dir().join(format!("rshmem-hdr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!(
        "t{}.{ext}",
        flags.join("").replace(['-', '=', '+'], "")
    ));
    std::fs::write(&file, src).unwrap();
    let out = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(include_dir())
        .arg("-fsyntax-only")
        .arg(&file)
        .output()
        .expect("run the C compiler");
    assert!(
        out.status.success(),
        "{compiler} {flags:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const USE_ALL: &str = r#"
#include <shmem.h>
#include <shmemx.h>
#include <pshmem.h>
#include <mpp/shmem.h>
#include <mpp/shmemx.h>
int main(void) {
    static long x;
    static long y[4];
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    shmem_team_t team = SHMEM_TEAM_INVALID;
    shmemx_request_h req = NULL, reqs[2] = {NULL, NULL};
    shmemx_request_h *rp[2] = {&reqs[0], &reqs[1]};
    shmemx_request_params_t params = {0};
    long f = 0;
    int done = 0;
    shmem_init();
    shmem_long_p(&x, 1, 0);
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE, &ctx) == 0) {
        shmem_ctx_long_p(ctx, &x, 2, 0);
        shmem_ctx_long_atomic_add(ctx, &x, 1, 0);
        (void)shmem_ctx_get_team(ctx, &team);
        shmemx_ctx_long_put_nbe(ctx, y, y, 4, 0, &req);
        shmemx_ctx_long_fadd_nbe(ctx, &f, &x, 1, 0, &reqs[0]);
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    (void)shmem_team_create_ctx(SHMEM_TEAM_WORLD, SHMEM_CTX_SERIALIZED, &ctx);
    shmem_ctx_fence(SHMEM_CTX_DEFAULT);
    shmemx_getmem_nbe(y, y, sizeof y, 0, &reqs[1]);
    (void)shmemx_merge_request(2, rp, &req);
    (void)shmemx_request_test(&req, &done);
    (void)shmemx_request_wait(&req);
    (void)shmemx_request_alloc(params, &req);
    (void)shmemx_request_free(&req);
    shmem_free(shmem_malloc_with_hints(8, SHMEMX_MALLOC_NO_BARRIER));
    shmemx_ibput64(y, y, 1, 1, 1, 1, 0);
#ifdef HAVE_SHMEMX_WTIME
    (void)shmemx_wtime();
#endif
    (void)shmem_team_n_pes(SHMEMX_TEAM_NODE);
    shmem_barrier_all();
    shmem_finalize();
    return (int)x + done;
}
"#;

const GENERICS: &str = r#"
#include <shmem.h>
#include <shmemx.h>
static int i; static long l; static long long ll; static unsigned u; static unsigned long ul;
static unsigned long long ull; static float f; static double d; static long double ld;
static char c; static signed char sc; static unsigned char uc; static short s; static unsigned short us;
static int8_t i8; static int64_t i64; static uint32_t u32; static size_t sz; static ptrdiff_t pd;
static uint64_t sig; static double _Complex z; static float _Complex fz;
static long ps[SHMEM_REDUCE_SYNC_SIZE];
int main(void) {
    int st[1] = {0}; size_t idx[1]; int iv[1] = {0};
    shmem_init();
    shmem_put(&i, &i, 1, 0); shmem_get(&ld, &ld, 1, 0); shmem_p(&c, c, 0); sc = shmem_g(&sc, 0);
    shmem_put_nbi(&uc, &uc, 1, 0); shmem_get_nbi(&s, &s, 1, 0); shmem_iput(&us, &us, 1, 1, 1, 0);
    shmem_iget(&i8, &i8, 1, 1, 1, 0); shmem_ibput(&sz, &sz, 1, 1, 1, 1, 0);
    shmem_put_signal(&pd, &pd, 1, &sig, 1, SHMEM_SIGNAL_ADD, 0);
    shmem_put_signal_nbi(&f, &f, 1, &sig, 1, SHMEM_SIGNAL_SET, 0);
    l = shmem_atomic_fetch(&l, 0); shmem_atomic_set(&d, d, 0); f = shmem_atomic_swap(&f, f, 0);
    ll = shmem_atomic_compare_swap(&ll, 0, 1, 0); u = shmem_atomic_fetch_inc(&u, 0);
    shmem_atomic_inc(&ul, 0); ull = shmem_atomic_fetch_add(&ull, 1, 0); shmem_atomic_add(&i64, 1, 0);
    u32 = shmem_atomic_fetch_and(&u32, 1, 0); shmem_atomic_or(&i, 1, 0); shmem_atomic_xor(&l, 1, 0);
    shmem_atomic_fetch_nbi(&i, &i, 0); shmem_atomic_fetch_xor_nbi(&ul, &ul, 1, 0);
    shmem_atomic_compare_swap_nbi(&sz, &sz, 0, 1, 0);
    i = shmem_fetch(&i, 0); shmem_set(&l, 1, 0); shmem_cswap(&ll, 0, 1, 0); shmem_finc(&i, 0);
    shmem_inc(&l, 0); shmem_fadd(&ll, 1, 0); shmem_add(&i, 1, 0); d = shmem_swap(&d, 1.0, 0);
    shmem_wait_until(&l, SHMEM_CMP_EQ, 0); i = shmem_test(&s, SHMEM_CMP_NE, 0);
    shmem_wait_until_all(iv, 1, st, SHMEM_CMP_EQ, 0); sz = shmem_test_any(iv, 1, NULL, SHMEM_CMP_EQ, 0);
    sz = shmem_wait_until_some_vector(iv, 1, idx, st, SHMEM_CMP_EQ, iv);
    shmem_broadcast(SHMEM_TEAM_WORLD, &ld, &ld, 1, 0); shmem_collect(SHMEM_TEAM_WORLD, &c, &c, 1);
    shmem_fcollect(SHMEM_TEAM_WORLD, &uc, &uc, 1); shmem_alltoall(SHMEM_TEAM_WORLD, &sc, &sc, 1);
    shmem_alltoalls(SHMEM_TEAM_WORLD, &pd, &pd, 1, 1, 1); shmem_broadcastmem(SHMEM_TEAM_WORLD, &c, &c, 1, 0);
    shmem_sum_reduce(SHMEM_TEAM_WORLD, &z, &z, 1); shmem_prod_reduce(SHMEM_TEAM_WORLD, &fz, &fz, 1);
    shmem_max_reduce(SHMEM_TEAM_WORLD, &f, &f, 1); shmem_min_reduce(SHMEM_TEAM_WORLD, &c, &c, 1);
    shmem_and_reduce(SHMEM_TEAM_WORLD, &u32, &u32, 1); shmem_or_reduce(SHMEM_TEAM_WORLD, &sz, &sz, 1);
    shmem_xor_reduce(SHMEM_TEAM_WORLD, &us, &us, 1); shmem_sum_inscan(SHMEM_TEAM_WORLD, &i, &i, 1);
    shmem_sum_exscan(SHMEM_TEAM_WORLD, &z, &z, 1); i = shmem_sync(SHMEM_TEAM_WORLD);
    shmem_sync(0, 0, 1, ps); shmem_barrier(0, 0, 1, ps); shmem_broadcast64(&l, &l, 1, 0, 0, 0, 1, ps);
    shmem_complexd_sum_to_all(&z, &z, 1, 0, 0, 1, &z, ps);
    shmem_signal_set(&sig, 1, 0); shmem_signal_add(&sig, 1, 0);
    {
        shmem_ctx_t cx = SHMEM_CTX_DEFAULT; const shmem_ctx_t kx = SHMEM_CTX_DEFAULT;
        shmem_put(cx, &i, &i, 1, 0); shmem_get(kx, &ld, &ld, 1, 0); shmem_p(cx, &c, c, 0);
        sc = shmem_g(cx, &sc, 0); shmem_put_nbi(cx, &uc, &uc, 1, 0); shmem_get_nbi(cx, &s, &s, 1, 0);
        shmem_iput(cx, &us, &us, 1, 1, 1, 0); shmem_iget(cx, &i8, &i8, 1, 1, 1, 0);
        shmem_ibget(cx, &sz, &sz, 1, 1, 1, 1, 0);
        shmem_put_signal(cx, &pd, &pd, 1, &sig, 1, SHMEM_SIGNAL_ADD, 0);
        shmem_put_signal_nbi(cx, &f, &f, 1, &sig, 1, SHMEM_SIGNAL_SET, 0);
        l = shmem_atomic_fetch(cx, &l, 0); shmem_atomic_set(cx, &d, d, 0);
        f = shmem_atomic_swap(cx, &f, f, 0); ll = shmem_atomic_compare_swap(cx, &ll, 0, 1, 0);
        u = shmem_atomic_fetch_inc(cx, &u, 0); shmem_atomic_inc(cx, &ul, 0);
        ull = shmem_atomic_fetch_add(cx, &ull, 1, 0); shmem_atomic_add(cx, &i64, 1, 0);
        u32 = shmem_atomic_fetch_and(cx, &u32, 1, 0); shmem_atomic_or(cx, &i, 1, 0);
        shmem_atomic_xor(cx, &l, 1, 0); shmem_atomic_fetch_nbi(cx, &i, &i, 0);
        shmem_atomic_fetch_xor_nbi(cx, &ul, &ul, 1, 0); shmem_atomic_compare_swap_nbi(cx, &sz, &sz, 0, 1, 0);
        shmem_signal_set(cx, &sig, 1, 0); shmem_signal_add(cx, &sig, 1, 0);
        shmem_atomic_add(cx, ps, 1, 0); shmem_put(ps, ps, 1, 0); shmem_put(cx, ps, ps, 1, 0);
    }
    {
        shmem_ctx_t cx = SHMEM_CTX_DEFAULT; shmemx_request_h rq = NULL; long fl; unsigned ful;
        shmemx_put_nbe(&i, &i, 1, 0, &rq); shmemx_get_nbe(&ld, &ld, 1, 0, &rq);
        shmemx_put_nbe(cx, &f, &f, 1, 0, &rq); shmemx_get_nbe(cx, &c, &c, 1, 0, &rq);
        shmemx_fetch_nbe(&fl, &l, 0, &rq); shmemx_swap_nbe(&d, &d, 1.0, 0, &rq);
        shmemx_cswap_nbe(&ll, &ll, 0, 1, 0, &rq); shmemx_fadd_nbe(cx, &fl, &l, 1, 0, &rq);
        shmemx_finc_nbe(&u, &u, 0, &rq); shmemx_fetch_and_nbe(&u32, &u32, 1, 0, &rq);
        shmemx_fetch_or_nbe(cx, &ful, &u, 1, 0, &rq); shmemx_fetch_xor_nbe(&ul, &ul, 1, 0, &rq);
        (void)shmemx_request_wait(&rq);
    }
    {
        shmem_ctx_t cx = SHMEM_CTX_DEFAULT;
        shmemx_ibput(&sz, &sz, 1, 1, 1, 1, 0); shmemx_ibget(cx, &ld, &ld, 1, 1, 1, 1, 0);
        shmemx_signal_set(&sig, 1, 0); shmemx_signal_add(cx, &sig, 1, 0);
        shmemx_sum_inscan(SHMEM_TEAM_WORLD, &i, &i, 1); shmemx_sum_exscan(SHMEMX_TEAM_NODE, &z, &z, 1);
    }
    shmem_finalize();
    return 0;
}
"#;

#[test]
fn headers_compile_warning_free() {
    let strict = ["-Wall", "-Wextra", "-pedantic", "-Werror"];
    compile("gcc", &[&["-std=c11"][..], &strict].concat(), USE_ALL, "c");
    compile("gcc", &[&["-std=c99"][..], &strict].concat(), USE_ALL, "c");
    compile("gcc", &[&["-std=c11"][..], &strict].concat(), GENERICS, "c");
    compile(
        "g++",
        &["-std=c++17", "-Wall", "-Wextra", "-Werror"],
        USE_ALL,
        "cpp",
    );
    compile(
        "g++",
        &["-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror"],
        USE_ALL,
        "cpp",
    );
}

/// Names declared by the headers (one declaration per line, as generated).
fn declared() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for h in HEADERS {
        let text = std::fs::read_to_string(include_dir().join(h)).unwrap();
        for line in text.lines() {
            let line = line.trim();
            if line.starts_with('#')
                || line.starts_with('/')
                || line.starts_with('*')
                || line.starts_with("typedef")
            {
                continue;
            }
            if let Some(rest) = line
                .strip_prefix("extern shmem_team_t ")
                .or_else(|| line.strip_prefix("extern shmem_ctx_t "))
            {
                names.insert(rest.trim_end_matches(';').to_string());
            } else if line.ends_with(");") && !line.starts_with(' ') {
                let head = &line[..line.find('(').unwrap()];
                let name = head.rsplit([' ', '*']).next().unwrap();
                names.insert(name.to_string());
            }
        }
    }
    names
}

#[test]
fn headers_declare_exactly_the_exported_symbols() {
    // `cargo build` puts the cdylib in the profile directory, `cargo test` in deps/.
    let mut so = profile_dir().join("deps/librshmem_c.so");
    if !so.exists() {
        so = profile_dir().join("librshmem_c.so");
    }
    assert!(
        so.exists(),
        "{} is not built (cargo builds the cdylib before this test)",
        so.display()
    );
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&so)
        .output()
        .expect("run nm");
    let exported: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            (matches!(kind, "T" | "R" | "D" | "B")
                && !name.starts_with("rust_")
                && !name.starts_with("__rust"))
            .then(|| name.to_string())
        })
        .collect();
    let declared = declared();
    let undeclared: Vec<_> = exported.difference(&declared).collect();
    let missing: Vec<_> = declared.difference(&exported).collect();
    assert!(
        undeclared.is_empty(),
        "exported but not declared: {undeclared:?}"
    );
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
    let shmem = declared.iter().filter(|n| n.starts_with("shmem_")).count();
    let pshmem = declared.iter().filter(|n| n.starts_with("pshmem")).count();
    eprintln!(
        "{} symbols: {shmem} shmem_, {pshmem} pshmem*",
        declared.len()
    );
    // Every shmem_/shmemx_ routine has a pshmem twin.
    for n in declared
        .iter()
        .filter(|n| n.starts_with("shmem") && n.chars().any(|c| c.is_lowercase()))
    {
        assert!(
            declared.contains(&format!("p{n}")),
            "no pshmem name for {n}"
        );
    }
}
