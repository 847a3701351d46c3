//! The compiler wrappers `oshcc`/`oshc++` and the variables around them. Build systems
//! (Python's shmem4py among them) set `OSHCC`/`OSHCXX` to name the wrapper itself, so the
//! wrappers take the underlying compiler from `RSHMEM_CC`/`RSHMEM_CXX` and refuse one that
//! runs the wrapper again instead of looping.
//!
//! Installs into its own prefix in the target directory (crates/rshmem-capi/scripts/install.sh);
//! run alone, this test needs `cargo build -p rshmem-capi -p oshrun` first.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use rshmem_tests::{install_c_face, run_bounded, Job, JobOutput};

/// The install prefix, installed once per test process.
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = install_c_face("capi-wrapper-prefix");
        let dir = prefix.join("wrapper-tests");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("hello.c"), HELLO).unwrap();
        std::fs::write(dir.join("hello.cpp"), HELLO).unwrap();
        // A symbolic link to each wrapper, and a directory holding one under its bare name.
        for w in ["oshcc", "oshc++"] {
            let link = dir.join(format!("link-{w}"));
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(prefix.join("bin").join(w), &link).unwrap();
        }
        prefix
    })
}

/// Valid C and C++: prints one line per PE.
const HELLO: &str = r#"#include <shmem.h>
#include <stdio.h>
int main(void) {
    shmem_init();
    printf("ok wrapper pe=%d of %d\n", shmem_my_pe(), shmem_n_pes());
    shmem_finalize();
    return 0;
}
"#;

/// Runs `wrapper` (`oshcc` or `oshc++`) on hello with `env` set, bounded by 60 s (a wrapper
/// that runs itself forever fails the test at the bound).
fn compile(wrapper: &str, env: &[(&str, &str)], out: &str) -> JobOutput {
    let p = prefix();
    let dir = p.join("wrapper-tests");
    let src = if wrapper == "oshc++" {
        "hello.cpp"
    } else {
        "hello.c"
    };
    let mut cmd = Command::new(p.join("bin").join(wrapper));
    cmd.arg("-o")
        .arg(dir.join(out))
        .arg(dir.join(src))
        .current_dir(&dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_bounded(cmd, None, Duration::from_secs(60))
}

fn wrapper_path(w: &str) -> String {
    prefix().join("bin").join(w).to_str().unwrap().to_string()
}

#[test]
fn oshcc_and_oshcxx_work_when_oshcc_names_the_wrapper() {
    for (w, var) in [("oshcc", "OSHCC"), ("oshc++", "OSHCXX")] {
        let me = wrapper_path(w);
        let exe = format!("hello-{var}");
        let out = compile(w, &[(var, &me), ("OSHCC", &me)], &exe);
        out.assert_ok();
        let exe = prefix().join("wrapper-tests").join(exe);
        let run = Job::new(2, exe.to_str().unwrap())
            .timeout(Duration::from_secs(60))
            .run();
        run.assert_ok();
        let mut lines = run.lines_with("ok wrapper pe=");
        lines.sort();
        assert_eq!(lines, ["0 of 2", "1 of 2"], "{w} with {var}={me}: {run:?}");
    }
}

#[test]
fn rshmem_cc_names_the_compiler() {
    // --showme prints the command with the chosen compiler; the default is cc / c++.
    for (w, var, default) in [
        ("oshcc", "RSHMEM_CC", "cc"),
        ("oshc++", "RSHMEM_CXX", "c++"),
    ] {
        let show = |env: &[(&str, &str)]| {
            let mut cmd = Command::new(wrapper_path(w));
            cmd.args(["--showme", "-c", "x.c"]).env_remove(var);
            for (k, v) in env {
                cmd.env(k, v);
            }
            let out = run_bounded(cmd, None, Duration::from_secs(30));
            out.assert_ok();
            out.stdout
        };
        let def = show(&[]);
        assert!(def.starts_with(&format!("{default} -I")), "{w}: {def}");
        let set = show(&[(var, "ccache gcc -m64")]);
        assert!(set.starts_with("ccache gcc -m64 -I"), "{w}: {set}");
        assert!(set.trim_end().ends_with(" -c x.c"), "{w}: {set}");
    }
    // And it really compiles with it.
    let out = compile("oshcc", &[("RSHMEM_CC", "gcc")], "hello-gcc");
    out.assert_ok();
}

#[test]
fn rshmem_cc_naming_the_wrapper_is_refused() {
    let p = prefix();
    let dir = p.join("wrapper-tests");
    let path = format!(
        "{}:{}",
        p.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (w, var) in [("oshcc", "RSHMEM_CC"), ("oshc++", "RSHMEM_CXX")] {
        let full = wrapper_path(w);
        let link = dir.join(format!("link-{w}")).to_str().unwrap().to_string();
        let relative = format!("../bin/{w}");
        let ccache = format!("ccache {w}");
        for value in [&full, &link, &relative, &w.to_string(), &ccache] {
            let out = compile(w, &[(var, value.as_str()), ("PATH", &path)], "never");
            assert_ne!(out.code(), 0, "{w} with {var}={value} succeeded: {out:?}");
            assert!(
                out.stderr.contains(&format!("{w}: {var}={value}"))
                    && out.stderr.contains("runs this wrapper itself"),
                "{w} with {var}={value}: no clear message: {out:?}"
            );
        }
    }
    // The two wrappers naming each other: the second one stops the loop.
    let out = compile(
        "oshcc",
        &[
            ("RSHMEM_CC", &wrapper_path("oshc++")),
            ("RSHMEM_CXX", &wrapper_path("oshcc")),
        ],
        "never",
    );
    assert_ne!(out.code(), 0, "{out:?}");
    assert!(
        out.stderr.contains("runs a wrapper again"),
        "no clear message: {out:?}"
    );
}
