//! rshmem-core is internal: its safe `finalize` unmaps memory that
//! live `rshmem::SymVec`s point to and `runtime::try_runtime` returns a `&'static` that
//! ends at finalize, so the crate must not be publishable, and must say why.

use std::path::Path;

#[test]
fn rshmem_core_is_not_publishable_and_says_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let manifest = std::fs::read_to_string(root.join("crates/rshmem-core/Cargo.toml")).unwrap();
    let package = manifest.split("\n[").next().unwrap();
    assert!(
        package.lines().any(|l| l.trim() == "publish = false"),
        "rshmem-core's [package] must say `publish = false`:\n{package}"
    );
    assert!(
        package.contains("finalize"),
        "the reason is stated next to it"
    );
    let docs = std::fs::read_to_string(root.join("crates/rshmem-core/src/lib.rs")).unwrap();
    assert!(
        docs.contains("**Internal crate** (`publish = false`)"),
        "crate docs say so"
    );
}
