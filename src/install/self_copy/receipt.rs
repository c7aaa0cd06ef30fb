//! The receipt of the copy (`$CUDAUP_HOME/receipts/self.json`) and the stamp that spares
//! rehashing a copy nobody touched.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::receipt_path;

/// What cudaup records about the copy it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelfReceipt {
    /// 1.
    pub schema_version: u32,
    /// The copy.
    pub path: PathBuf,
    /// Its sha256, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// The cudaup version it is.
    pub version: String,
    /// The binary it was copied from.
    pub source: PathBuf,
    /// When, in seconds since the epoch.
    pub installed_at: u64,
    /// While a new copy is being put in place: the sha256 of the one it replaces, which a run
    /// killed before the rename leaves at the path, still cudaup's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacing: Option<String>,
    /// The copy's inode, size and times once it is in place: while they match, the file is the
    /// one hashed, and checks need not read it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<Stamp>,
}

/// What tells one version of a file from another without reading it: every write changes the
/// modification and status-change times, and a replacement the inode (the idea of the unpacked
/// cache's stamps). Unix only; elsewhere files are always hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Device and inode.
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time: seconds and nanoseconds.
    pub mtime: [i64; 2],
    /// Status-change time: seconds and nanoseconds.
    pub ctime: [i64; 2],
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Stamp {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime: [meta.mtime(), meta.mtime_nsec()],
                ctime: [meta.ctime(), meta.ctime_nsec()],
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

impl SelfReceipt {
    /// Reads the receipt under `home` (absent or unreadable: none, so nothing is vouched for).
    pub fn read(home: &Path) -> Option<SelfReceipt> {
        let bytes = fs_err::read(receipt_path(home)).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("{}: {e}", receipt_path(home).display());
                None
            }
        }
    }

    /// Writes it whole and durably: a write killed halfway leaves a temporary beside it, which
    /// the next write reuses and litter counts.
    pub(super) fn write(&self, home: &Path) -> io::Result<()> {
        crate::install::receipt_file::write_whole(
            &receipt_path(home),
            &serde_json::to_vec_pretty(self).expect("receipts serialise"),
        )
    }

    /// Whether the receipt vouches for a file with this sha256 at `path`.
    pub(super) fn vouches_for(&self, path: &Path, sha256: &str) -> bool {
        self.path == path && (self.sha256 == sha256 || self.replacing.as_deref() == Some(sha256))
    }
}

/// Makes a rename in `dir` durable; not every platform lets a directory be synced.
pub(super) fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    let _ = fs_err::File::open(dir).and_then(|d| d.sync_all());
    #[cfg(not(unix))]
    let _ = dir;
}
