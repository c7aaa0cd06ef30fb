//! Building the staging prefix from unpacked trees: hard links from the unpacked cache (a copy
//! when the cache is on another filesystem), symlinks recreated, conflicts refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::receipt::ReceiptFile;
use super::{InstallError, Item};
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

/// What is at a path in the staging prefix, and who put it there.
struct Placed<'a> {
    component: &'a str,
    sha256: Option<&'a str>,
    link: Option<&'a Path>,
}

/// Links every tree into `staging` and adds NVIDIA's compatibility links. Returns the receipt's
/// file list (files and symlinks, sorted).
pub fn assemble(
    staging: &Path,
    trees: &[(&Item, (PathBuf, Vec<Entry>))],
    arch: &str,
    cancel: &AtomicBool,
) -> Result<Vec<ReceiptFile>, InstallError> {
    let mut placed: BTreeMap<&Path, Placed<'_>> = BTreeMap::new();
    let mut out: BTreeMap<PathBuf, ReceiptFile> = BTreeMap::new();
    for (item, (dir, entries)) in trees {
        for e in entries {
            if cancel.load(Ordering::Relaxed) {
                return Err(InstallError::Cancelled);
            }
            let dst = staging.join(&e.path);
            match &e.kind {
                EntryKind::Dir => {
                    fs_err::create_dir_all(&dst)?;
                    continue;
                }
                EntryKind::File { .. } | EntryKind::Symlink { .. } => {}
            }
            let link = match &e.kind {
                EntryKind::Symlink { target } => Some(target.as_path()),
                _ => None,
            };
            if let Some(prev) = placed.get(e.path.as_path()) {
                if prev.sha256 == e.sha256.as_deref() && prev.link == link {
                    continue;
                }
                return Err(InstallError::Conflict {
                    path: e.path.display().to_string(),
                    first: prev.component.to_owned(),
                    second: item.component.clone(),
                });
            }
            if let Some(parent) = dst.parent() {
                fs_err::create_dir_all(parent)?;
            }
            match &e.kind {
                EntryKind::Symlink { target } => {
                    std::os::unix::fs::symlink(target, &dst).map_err(|err| {
                        std::io::Error::new(err.kind(), format!("{}: {err}", dst.display()))
                    })?
                }
                _ => {
                    let src = dir.join(&e.path);
                    if std::fs::hard_link(&src, &dst).is_err() {
                        fs_err::copy(&src, &dst)?;
                    }
                }
            }
            placed.insert(
                &e.path,
                Placed {
                    component: &item.component,
                    sha256: e.sha256.as_deref(),
                    link,
                },
            );
            out.insert(
                e.path.clone(),
                ReceiptFile {
                    path: e.path.clone(),
                    size: link.is_none().then_some(e.size),
                    sha256: e.sha256.clone(),
                    link: link.map(Path::to_path_buf),
                },
            );
        }
    }
    for (path, target) in super::layout::compat_links(arch) {
        let dst = staging.join(&path);
        let parent = dst.parent().unwrap_or(staging).to_path_buf();
        // Only links whose target exists (a cuDNN-only prefix has no include/ to point at).
        let resolved = parent.join(&target);
        if dst.symlink_metadata().is_ok() || !lexically_inside(staging, &resolved) {
            continue;
        }
        fs_err::create_dir_all(&parent)?;
        if !resolved.exists() {
            remove_empty_dirs(staging, &parent);
            continue;
        }
        std::os::unix::fs::symlink(&target, &dst)
            .map_err(|err| std::io::Error::new(err.kind(), format!("{}: {err}", dst.display())))?;
        out.insert(
            path.clone(),
            ReceiptFile {
                path,
                size: None,
                sha256: None,
                link: Some(target),
            },
        );
    }
    Ok(out.into_values().collect())
}

/// Whether `p` (with `..` resolved lexically) stays inside `root`.
fn lexically_inside(root: &Path, p: &Path) -> bool {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(root)
}

/// Removes `dir` and its empty parents up to (not including) `root`.
fn remove_empty_dirs(root: &Path, dir: &Path) {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d == root || fs_err::remove_dir(d).is_err() {
            break;
        }
        cur = d.parent();
    }
}
