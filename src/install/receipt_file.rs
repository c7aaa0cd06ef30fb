//! How a receipt lands in `$CUDAUP_HOME/receipts/`: one JSON file per installed thing, named
//! after the path it describes, written whole (temp file, then rename) so a crash never leaves
//! half a receipt for doctor or uninstall to trip over.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The receipt kinds, which start their file names.
pub(crate) const TOOLKIT: &str = "toolkit-";
/// See [`TOOLKIT`].
pub(crate) const VENV: &str = "venv-";

/// The file name of `target`'s receipt: `<kind><readable>-<hash>.json`. The readable part keeps
/// only `[A-Za-z0-9.-]` (others become `_`), so on its own it would give `/root/cuda_x` and
/// `/root/cuda/x` one name; the first 16 hex digits of the sha256 of the whole path make names
/// differ whenever paths do, and the kind prefix keeps a toolkit under `/venv-x` or `/shell`
/// from passing for a venv receipt or the shell receipt.
pub(crate) fn file_name(kind: &str, target: &Path) -> String {
    let digest = Sha256::digest(target.as_os_str().as_encoded_bytes());
    format!(
        "{kind}{}-{}.json",
        readable(target),
        &hex::encode(digest)[..16]
    )
}

fn readable(target: &Path) -> String {
    let name: String = target
        .display()
        .to_string()
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    // File names stop at 255 bytes; the hash keeps long paths apart.
    name.chars().take(160).collect()
}

/// The name an older cudaup gave the same receipt (no hash; toolkits without a kind prefix).
fn legacy_name(kind: &str, target: &Path) -> String {
    let kind = if kind == TOOLKIT { "" } else { kind };
    format!("{kind}{}.json", readable(target))
}

/// Writes `bytes` to `path` whole and durably ([`crate::world::fs::write_atomic`]): a fixed
/// temporary name beside it is safe because the home's lock keeps writers one at a time, and a
/// write killed halfway leaves a temporary the next write reuses and `repair --fix litter` or
/// uninstall removes.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use crate::world::fs::{write_atomic, Durability, Temp};
    write_atomic(path, bytes, Temp::Fixed, Durability::Fsync)
}

/// Whether a file name is a temporary of a killed write (today's, or an older cudaup's `.tmp`).
pub(crate) fn is_temporary(name: &str) -> bool {
    name.ends_with(crate::world::fs::TEMP_SUFFIX) || name.ends_with(".tmp")
}

/// The temporary files killed writes leave in `$CUDAUP_HOME/receipts/` (and its `pending/`).
pub(crate) fn temporaries(home: &Path) -> Vec<PathBuf> {
    let home = crate::install::home::Home::at(home);
    let mut out = Vec::new();
    for dir in [home.receipts(), home.pending()] {
        for e in fs_err::read_dir(&dir).into_iter().flatten().flatten() {
            if is_temporary(&e.file_name().to_string_lossy()) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Writes `value` to `$CUDAUP_HOME/receipts/<file_name>` and returns that path. A receipt an
/// older cudaup wrote for the same target under its old name is removed (only if it names the
/// same target, since the old names could collide).
pub(crate) fn register(
    home: &Path,
    kind: &str,
    target: &Path,
    value: &impl Serialize,
) -> std::io::Result<PathBuf> {
    let dir = crate::install::home::Home::at(home).receipts();
    fs_err::create_dir_all(&dir)?;
    let name = file_name(kind, target);
    let path = dir.join(&name);
    write_whole(
        &path,
        &serde_json::to_vec_pretty(value).expect("receipts serialise"),
    )?;
    crate::world::checkpoint::reach("receipt-registered");
    let legacy = dir.join(legacy_name(kind, target));
    if legacy != path && names_target(&legacy, target) {
        let _ = fs_err::remove_file(&legacy);
    }
    Ok(path)
}

/// Where the journal of an install in progress into `target` is kept:
/// `$CUDAUP_HOME/receipts/pending/<file_name>`. Written before the prefix (or its staging
/// directory) can exist and removed once its receipt is registered, it lets uninstall, repair
/// and doctor find a prefix whose install was killed at any moment.
pub(crate) fn pending_path(home: &Path, target: &Path) -> PathBuf {
    crate::install::home::Home::at(home)
        .pending()
        .join(file_name(TOOLKIT, target))
}

/// Writes the journal of an install into `target` (whole: a temporary file renamed over).
pub(crate) fn write_pending(
    home: &Path,
    target: &Path,
    value: &impl Serialize,
) -> std::io::Result<PathBuf> {
    let path = pending_path(home, target);
    let dir = path.parent().expect("has a parent");
    fs_err::create_dir_all(dir)?;
    write_whole(
        &path,
        &serde_json::to_vec_pretty(value).expect("receipts serialise"),
    )?;
    Ok(path)
}

/// Removes the journal of `target` (and a temporary one a killed write left), and the
/// `pending` directory once empty.
pub(crate) fn remove_pending(home: &Path, target: &Path) -> std::io::Result<()> {
    let path = pending_path(home, target);
    let dir = path.parent().expect("has a parent");
    let tmp = crate::world::fs::temporary(&path, crate::world::fs::Temp::Fixed);
    for p in [&tmp, &path] {
        match fs_err::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let _ = fs_err::remove_dir(dir);
    Ok(())
}

/// Whether the receipt at `path` is about `target` (its `prefix` or `venv`).
fn names_target(path: &Path, target: &Path) -> bool {
    let Ok(bytes) = fs_err::read(path) else {
        return false;
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return false;
    };
    ["prefix", "venv"]
        .iter()
        .any(|k| doc.get(k).and_then(|v| v.as_str()) == target.to_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn different_paths_get_different_names() {
        let a = file_name(TOOLKIT, Path::new("/root/cuda_x"));
        let b = file_name(TOOLKIT, Path::new("/root/cuda/x"));
        assert_ne!(a, b);
        assert!(a.starts_with("toolkit-root_cuda_x-"), "{a}");
        assert_eq!(a, file_name(TOOLKIT, Path::new("/root/cuda_x")));
        // A toolkit named like the shell receipt or a venv receipt stays a toolkit receipt.
        assert!(file_name(TOOLKIT, Path::new("/shell")).starts_with("toolkit-shell-"));
        assert!(file_name(TOOLKIT, Path::new("/venv-x")).starts_with("toolkit-venv-x-"));
        let long = Path::new("/").join("d".repeat(300));
        assert!(file_name(VENV, &long).len() < 200);
    }

    #[test]
    fn the_legacy_receipt_of_the_same_target_is_replaced() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("receipts");
        fs_err::create_dir_all(&dir).unwrap();
        let other = serde_json::json!({"prefix": "/root/cuda/x"});
        // Both old names were `root_cuda_x.json`; that one belongs to the other prefix.
        fs_err::write(dir.join("root_cuda_x.json"), other.to_string()).unwrap();
        let ours = serde_json::json!({"prefix": "/root/cuda_x"});
        register(home.path(), TOOLKIT, Path::new("/root/cuda_x"), &ours).unwrap();
        assert!(dir.join("root_cuda_x.json").exists(), "not ours: kept");
        fs_err::write(dir.join("root_cuda_x.json"), ours.to_string()).unwrap();
        register(home.path(), TOOLKIT, Path::new("/root/cuda_x"), &ours).unwrap();
        assert!(!dir.join("root_cuda_x.json").exists(), "ours: replaced");
    }
}
