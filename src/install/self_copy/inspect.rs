//! What stands at the installed copy's path, and whether it is cudaup's.

use std::io;
use std::path::Path;

use super::{target, Running, SelfReceipt, Stamp, VERSION};

/// A copy of cudaup at the target path, that cudaup wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// Its sha256.
    pub sha256: String,
    /// Its size.
    pub size: u64,
    /// Its version, when the receipt records it (a copy being replaced has none).
    pub version: Option<String>,
    /// It has the running binary's bytes.
    pub current: bool,
}

/// What stands at the installed copy's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing.
    Absent,
    /// The running binary itself: this cudaup is the installed copy.
    Running,
    /// A copy cudaup wrote.
    Ours(Copy),
    /// A file cudaup did not write (why it is not ours).
    Foreign(String),
}

/// What is at `target(home)`, judged by the receipt and, when given, the running binary.
pub fn inspect(home: &Path, running: Option<&Running>) -> io::Result<Found> {
    let target = target(home);
    let meta = match fs_err::symlink_metadata(&target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        let to = fs_err::read_link(&target)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        return Ok(Found::Foreign(format!(
            "it is a symlink (to {to}), and cudaup only ever writes a plain file there"
        )));
    }
    if !meta.is_file() {
        return Ok(Found::Foreign("it is not a regular file".into()));
    }
    if running.is_some_and(|r| r.is(&target)) {
        return Ok(Found::Running);
    }
    let size = meta.len();
    let receipt = SelfReceipt::read(home);
    // A receipt whose stamp still matches names the file's sha256; otherwise it is read.
    let stamped = receipt.as_ref().filter(|r| {
        r.path == target
            && r.size == size
            && r.replacing.is_none()
            && r.stamp.is_some()
            && r.stamp == Stamp::of(&meta)
    });
    let sha256 = match stamped {
        Some(r) => r.sha256.clone(),
        None => crate::fetch::sha256_file(&target)?,
    };
    let current = running.is_some_and(|r| r.same_bytes(&target, size));
    if let Some(r) = receipt.as_ref().filter(|r| r.vouches_for(&target, &sha256)) {
        return Ok(Found::Ours(Copy {
            version: (r.sha256 == sha256).then(|| r.version.clone()),
            sha256,
            size,
            current,
        }));
    }
    if current {
        // The copy landed, its receipt did not (or was lost): the bytes are this cudaup's own.
        return Ok(Found::Ours(Copy {
            sha256,
            size,
            version: Some(VERSION.to_owned()),
            current,
        }));
    }
    let short = &sha256[..12];
    let nor_this = if running.is_some() {
        " nor this cudaup's"
    } else {
        ""
    };
    Ok(Found::Foreign(match receipt {
        Some(r) if r.path == target => format!(
            "its sha256 {short}… is not the copy cudaup recorded ({}…){nor_this}",
            &r.sha256[..r.sha256.len().min(12)]
        ),
        _ if running.is_some() => {
            format!("no receipt of cudaup's names it, and it is not this cudaup (sha256 {short}…)")
        }
        _ => format!("no receipt of cudaup's names it (sha256 {short}…)"),
    }))
}
