//! The `oshrun` binary's command line. Having an integration test here also makes
//! `cargo test --workspace` build the binary that the multi-PE tests launch jobs with.

use std::process::Command;

#[test]
fn version_and_usage() {
    let exe = env!("CARGO_BIN_EXE_oshrun");
    let out = Command::new(exe)
        .arg("--version")
        .output()
        .expect("run oshrun");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("oshrun"));

    let out = Command::new(exe)
        .arg("--no-such-option")
        .output()
        .expect("run oshrun");
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.is_empty());
}

#[test]
fn runs_a_single_pe_program() {
    let exe = env!("CARGO_BIN_EXE_oshrun");
    let out = Command::new(exe)
        .args(["-np", "2", "--", "sh", "-c", "echo pe=$PMI_RANK/$PMI_SIZE"])
        .output()
        .expect("run oshrun");
    assert!(out.status.success(), "{out:?}");
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(lines, ["pe=0/2", "pe=1/2"]);
}
