//! libcaf_rshmem.so exports every `_gfortran_caf_*` entry point gfortran 12 emits (the
//! unsupported ones as loud failures), so any program links.

use std::path::PathBuf;
use std::process::Command;

/// Every entry point of the GCC 8-14 library ABI that gfortran 12 can emit.
const ENTRY_POINTS: &[&str] = &[
    "init",
    "finalize",
    "this_image",
    "num_images",
    "register",
    "deregister",
    "is_present",
    "send",
    "get",
    "sendget",
    "get_by_ref",
    "send_by_ref",
    "sendget_by_ref",
    "sync_all",
    "sync_memory",
    "sync_images",
    "lock",
    "unlock",
    "event_post",
    "event_wait",
    "event_query",
    "atomic_define",
    "atomic_ref",
    "atomic_cas",
    "atomic_op",
    "co_broadcast",
    "co_sum",
    "co_min",
    "co_max",
    "co_reduce",
    "stop_numeric",
    "stop_str",
    "error_stop",
    "error_stop_str",
    "fail_image",
    "image_status",
    "failed_images",
    "stopped_images",
    "form_team",
    "change_team",
    "end_team",
    "sync_team",
    "team_number",
    "get_team",
    "random_init",
];

fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(|d| d.parent()).unwrap();
    [
        profile.join("libcaf_rshmem.so"),
        profile.join("deps/libcaf_rshmem.so"),
    ]
    .into_iter()
    .filter(|p| p.exists())
    .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
    .expect("libcaf_rshmem.so is built with this test")
}

#[test]
fn every_entry_point_is_exported() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(library())
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "{out:?}");
    let syms = String::from_utf8_lossy(&out.stdout);
    let missing: Vec<&str> = ENTRY_POINTS
        .iter()
        .filter(|e| {
            let name = format!("_gfortran_caf_{e}");
            !syms
                .lines()
                .any(|l| l.split_whitespace().last() == Some(name.as_str()))
        })
        .copied()
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
}
