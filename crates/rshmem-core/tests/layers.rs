//! The core's layers, bottom up, and the rule that a layer uses only those below it,
//! checked on the source: every `crate::` path of a file names a module, each module
//! belongs to a layer, and a path into a higher layer is an upward import.
//!
//! No import breaks the rule (issue 29 turned the last ones around): a new one fails the
//! test. The test reads paths, not method calls: a method a higher layer defines on
//! `Runtime` and a lower one calls is not seen.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, bottom up, each with the modules (folders, root files and the short names
/// `lib.rs` re-exports) that belong to it.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &["error", "word", "conc"]),
    ("transport", &["transport", "engine"]),
    ("runtime", &["runtime", "heap", "setup", "ft"]),
    ("ctx", &["ctx", "request", "profile"]),
    ("team", &["team"]),
    (
        "ops",
        &["ops", "amo", "lock", "order", "p2p", "rma", "signal"],
    ),
    ("coll", &["coll", "algo", "sync"]),
    ("world", &["world", "memory"]),
];

/// The layer index of module `m`, if it is one of the core's.
fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&m))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read the source folder") {
        let p = e.expect("a folder entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The modules a file's code names through `crate::` paths (line comments skipped: a doc
/// link is not a dependency).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
            rest = after;
        }
    }
    found
}

/// The layer of a file: its folder's, or for a root file its module's.
fn file_layer(rel: &Path) -> Option<usize> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    layer_of(module)
}

#[test]
fn no_layer_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut upward = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let Some(own) = file_layer(rel) else {
            // lib.rs (the crate root) and test-only modules.
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read a source file");
        for m in crate_paths(&text) {
            match layer_of(&m) {
                Some(l) if l > own => {
                    upward.insert((rel.display().to_string(), LAYERS[l].0.to_string()));
                }
                Some(_) => {}
                None => {
                    unknown.insert(format!("{}: crate::{m}", rel.display()));
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS (give each a layer): {unknown:#?}"
    );
    assert!(
        upward.is_empty(),
        "upward imports (a layer uses only those below it; see LAYERS): {upward:#?}"
    );
}

#[test]
fn comments_and_nested_paths_are_read_right() {
    let text = "use crate::error::Result; // crate::coll in a comment\n\
                let x = crate::team::Team::new(crate::word::ONE);\n\
                /// [`crate::ops`] is a doc link\n";
    let got: Vec<String> = crate_paths(text).into_iter().collect();
    assert_eq!(got, ["error", "team", "word"]);
}
