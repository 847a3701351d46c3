//! Finds the external tools some tests need. A test whose tool is missing is compiled
//! `#[ignore]`d with the reason, so `cargo test` reports it as ignored instead of passing
//! without testing anything. `RSHMEM_TESTS_REQUIRE_TOOLS=1` (set by CI) turns a missing tool
//! into a build error, so CI can never skip.

use std::path::Path;

/// (program, cfg set when it is on `PATH`).
const TOOLS: &[(&str, &str)] = &[
    ("mpiexec.hydra", "have_hydra"),
    ("pkg-config", "have_pkg_config"),
    ("python3", "have_python3"),
];

fn on_path(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| is_executable(&dir.join(prog))))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn main() {
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=RSHMEM_TESTS_REQUIRE_TOOLS");
    if let Some(path) = std::env::var_os("PATH") {
        // Installing a tool changes its directory, which reruns this script.
        for dir in std::env::split_paths(&path).filter(|d| d.is_dir()) {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
    let require = std::env::var("RSHMEM_TESTS_REQUIRE_TOOLS").is_ok_and(|v| v == "1");
    let mut missing = Vec::new();
    for &(prog, cfg) in TOOLS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if on_path(prog) {
            println!("cargo::rustc-cfg={cfg}");
        } else {
            missing.push(prog);
        }
    }
    if require && !missing.is_empty() {
        panic!(
            "RSHMEM_TESTS_REQUIRE_TOOLS=1 but {} not on PATH: run scripts/install-deps.sh",
            missing.join(", ")
        );
    }
}
