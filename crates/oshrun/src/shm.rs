//! Safety net at job end: removes POSIX shared-memory objects a killed PE left behind.

use std::path::Path;

/// Whether `name` belongs to the job `kvsname`: it starts with `rshmem-<kvsname>` or with
/// `<kvsname>`, followed by the end or a non-alphanumeric separator (so the job `..-ab`
/// never claims `..-abc`'s objects).
pub fn belongs_to_job(name: &str, kvsname: &str) -> bool {
    let rest = name
        .strip_prefix("rshmem-")
        .and_then(|n| n.strip_prefix(kvsname))
        .or_else(|| name.strip_prefix(kvsname));
    match rest {
        Some(r) => !r.starts_with(|c: char| c.is_ascii_alphanumeric()),
        None => false,
    }
}

/// Unlinks every entry of `dir` that [`belongs_to_job`]; returns the names removed.
pub fn cleanup(dir: &Path, kvsname: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if belongs_to_job(&name, kvsname) && std::fs::remove_file(e.path()).is_ok() {
                Some(name)
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching() {
        let k = "rshmem-12-ab";
        assert!(belongs_to_job("rshmem-12-ab", k));
        assert!(belongs_to_job("rshmem-12-ab-heap-3", k));
        assert!(belongs_to_job("rshmem-rshmem-12-ab.0", k));
        assert!(!belongs_to_job("rshmem-12-abc-heap", k));
        assert!(!belongs_to_job("rshmem-12-a", k));
        assert!(!belongs_to_job("other", k));
    }

    #[test]
    fn removes_only_the_job() {
        let dir = std::env::temp_dir().join(format!("oshrun-shm-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for n in ["rshmem-1-f-0", "rshmem-1-ff-0", "x"] {
            std::fs::write(dir.join(n), b"").unwrap();
        }
        assert_eq!(cleanup(&dir, "rshmem-1-f"), ["rshmem-1-f-0"]);
        assert!(dir.join("rshmem-1-ff-0").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
