//! Building the staging prefix from unpacked trees: hard links from the unpacked cache (a copy
//! when the cache is on another filesystem), symlinks recreated, conflicts refused; and the
//! entry list each unpacked-cache tree keeps.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::merge::Merged;
use super::receipt::ReceiptFile;
use super::{InstallError, Item, Unpacked};
use crate::unpack::{Entry, EntryKind};

/// The entry list kept inside each unpacked-cache tree.
pub const ENTRIES_FILE: &str = ".cudaup-entries.json";

#[derive(Serialize, Deserialize)]
struct Stored {
    path: PathBuf,
    size: u64,
    sha256: Option<String>,
    kind: String,
    executable: bool,
    target: Option<PathBuf>,
}

/// Saves `entries` (written last into a tree, so a tree with the file is complete).
pub fn write_entries(path: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let stored: Vec<Stored> = entries
        .iter()
        .map(|e| {
            let (kind, executable, target) = match &e.kind {
                EntryKind::File { executable } => ("file", *executable, None),
                EntryKind::Dir => ("dir", false, None),
                EntryKind::Symlink { target } => ("symlink", false, Some(target.clone())),
            };
            Stored {
                path: e.path.clone(),
                size: e.size,
                sha256: e.sha256.clone(),
                kind: kind.to_owned(),
                executable,
                target,
            }
        })
        .collect();
    fs_err::write(
        path,
        serde_json::to_vec(&stored).expect("entries serialise"),
    )
}

/// Loads an entry list; `None` when missing or unreadable (the tree is then rebuilt).
pub fn read_entries(path: &Path) -> Option<Vec<Entry>> {
    let bytes = fs_err::read(path).ok()?;
    let stored: Vec<Stored> = serde_json::from_slice(&bytes).ok()?;
    stored
        .into_iter()
        .map(|s| {
            let kind = match s.kind.as_str() {
                "file" => EntryKind::File {
                    executable: s.executable,
                },
                "dir" => EntryKind::Dir,
                "symlink" => EntryKind::Symlink { target: s.target? },
                _ => return None,
            };
            Some(Entry {
                path: s.path,
                size: s.size,
                sha256: s.sha256,
                kind,
            })
        })
        .collect()
}

/// Lays every tree into `staging` (the merged tree checked as a whole first, see [`super::merge`])
/// and adds NVIDIA's compatibility links for a Linux `arch` (`None`: a Windows toolkit, which has
/// none). Returns the receipt's file list (files and symlinks, sorted).
pub fn assemble(
    staging: &Path,
    trees: &[(&Item, Unpacked)],
    arch: Option<&str>,
    cancel: &AtomicBool,
) -> Result<Vec<ReceiptFile>, InstallError> {
    Merged::build(trees, arch)?.write(staging, cancel)
}
