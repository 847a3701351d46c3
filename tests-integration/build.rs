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
    ("gfortran", "have_gfortran"),
    // Open MPI's mpirun (its PMIx server) and Slurm's client commands.
    ("mpirun.openmpi", "have_openmpi"),
    ("srun", "have_slurm"),
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

/// Directories the dynamic loader searches for UCX's `libucp.so.0` on common systems.
const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
];

/// Whether UCX's runtime library is installed (the UCX transport loads it at run time).
fn have_ucx() -> bool {
    LIB_DIRS
        .iter()
        .any(|d| Path::new(d).join("libucp.so.0").exists())
}

/// Whether libfabric's runtime library is installed (the OFI transport loads it at run time).
fn have_ofi() -> bool {
    LIB_DIRS
        .iter()
        .any(|d| Path::new(d).join("libfabric.so.1").exists())
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
    println!("cargo::rustc-check-cfg=cfg(have_ucx)");
    println!("cargo::rustc-check-cfg=cfg(have_ofi)");
    for d in LIB_DIRS.iter().filter(|d| Path::new(d).is_dir()) {
        println!("cargo::rerun-if-changed={d}");
    }
    println!("cargo::rustc-check-cfg=cfg(have_pmix)");
    if LIB_DIRS
        .iter()
        .any(|d| Path::new(d).join("libpmix.so.2").exists())
    {
        println!("cargo::rustc-cfg=have_pmix");
    } else {
        missing.push("libpmix.so.2 (PMIx: apt-get install libpmix2)");
    }
    if have_ofi() {
        println!("cargo::rustc-cfg=have_ofi");
    } else {
        missing.push("libfabric.so.1 (libfabric: apt-get install libfabric1)");
    }
    if have_ucx() {
        println!("cargo::rustc-cfg=have_ucx");
    } else {
        missing.push("libucp.so.0 (UCX: apt-get install libucx0)");
    }
    if require && !missing.is_empty() {
        panic!(
            "RSHMEM_TESTS_REQUIRE_TOOLS=1 but {} not found: run scripts/install-deps.sh",
            missing.join(", ")
        );
    }
}
