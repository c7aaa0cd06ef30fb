//! Removal beneath the prefix, never following a link, and only of what is still what cudaup
//! put there: a file whose size (and sha256, where the receipt has it) match the receipt, a link
//! whose target does, a directory that held a file of the receipt and is empty.
//!
//! A symlink, a junction or a file that now stands where cudaup made a directory stops the
//! removal of what lies under it instead of redirecting it outside the prefix: on Linux every
//! path is reached one directory descriptor at a time ([`unix`]), on Windows one held directory
//! handle at a time ([`windows`]). What is checked, and what is kept, is the same on both.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::install::receipt::ReceiptFile;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(super) use unix::{open_dir, remove_created_dirs, remove_receipt, remove_verified};
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(super) use windows::{open_dir, remove_created_dirs, remove_receipt, remove_verified};

/// What became of one path.
pub(super) enum Removed {
    /// Removed, or already gone.
    Done,
    /// Left in place, and why.
    Kept(String),
}

/// The plain names of `rel` (`None` when it has `..`, a root or `.`).
fn names(rel: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .filter(|v| !v.is_empty())
}

/// Why the open `file` is not the one the receipt lists (`None`: it is).
fn changed(mut f: std::fs::File, want: &ReceiptFile) -> io::Result<Option<String>> {
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Ok(Some(
            "something other than a file stands where cudaup installed one".into(),
        ));
    }
    if want.size.is_none_or(|size| size != meta.len()) {
        return Ok(Some(format!(
            "its size ({} bytes) is not the {} the receipt records: changed since cudaup installed it",
            meta.len(),
            want.size.map_or("none".to_owned(), |s| s.to_string())
        )));
    }
    if let Some(sha) = &want.sha256 {
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        if !hex::encode(h.finalize()).eq_ignore_ascii_case(sha) {
            return Ok(Some(
                "its contents changed since cudaup installed it (the sha256 differs)".into(),
            ));
        }
    }
    Ok(None)
}

/// The directories that held the receipt's files (relative to the prefix), deepest first.
fn created_dirs(files: &[ReceiptFile]) -> Vec<PathBuf> {
    let mut dirs: std::collections::BTreeSet<PathBuf> = std::collections::BTreeSet::new();
    for f in files {
        let Some(parts) = names(&f.path) else {
            continue;
        };
        for n in 1..parts.len() {
            dirs.insert(parts[..n].iter().collect());
        }
    }
    let mut dirs: Vec<PathBuf> = dirs.into_iter().collect();
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    dirs
}
