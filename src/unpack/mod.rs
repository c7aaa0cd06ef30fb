//! Archive extraction (`.tar.xz`, `.tar.gz`, `.zip`, wheels), hardened against hostile archives.
//!
//! [`unpack_reader`] streams a compressed tar into a directory in one pass (xz is decoded by
//! liblzma's multi-threaded decoder, gzip on the calling thread); [`unpack_wheel_stream`] does the
//! same for a wheel, from its local headers; [`unpack_file`] also takes zip archives and wheels,
//! whose files are extracted by parallel workers. All return every file, directory and symlink
//! written, with the sha256 of each file, for the installer's receipts (a streamed wheel's from
//! its RECORD).
//!
//! `dest` is always a fresh staging directory on the destination filesystem (convention 10 in
//! the code anchors); on error it is left as is for the caller to delete. The rules:
//! - names: absolute paths, `..`, drive prefixes, NUL and other control characters, backslashes,
//!   non-UTF-8 and empty names are [`UnpackError::Unsafe`], before and after the caller's
//!   [`PathMap`]; so is a mapped path whose first component starts with `.cudaup` (names
//!   cudaup keeps for its receipts and cache bookkeeping, [`is_reserved`]);
//! - symlinks: relative targets whose leading `..`s stay inside `dest` (`path.rs` explains why
//!   `..` may only come first); nothing is ever written through a symlink, and a later entry at
//!   the path of a file or symlink unlinks it first;
//! - tar hardlinks: only to a regular file extracted earlier (a hard link, or a copy);
//! - devices, FIFOs and other special entries are refused; no ownership; modes 0o755 for
//!   directories and executables, 0o644 otherwise, never setuid, setgid or sticky;
//! - [`Limits`] bound the content bytes (written or skipped) and the entry count; a zip entry
//!   may not exceed its declared size, and its CRC must match.

mod path;
mod tar;
mod tree;
mod wheel;
mod zip;
mod zipstream;

#[cfg(test)]
mod tests;

pub use path::{is_reserved, RESERVED_PREFIX};
pub use wheel::Streamed;

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Archive formats cudaup reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.tar.xz`, `.txz`.
    TarXz,
    /// `.tar.gz`, `.tgz`.
    TarGz,
    /// `.zip` and wheels (`.whl`).
    Zip,
}

impl Format {
    /// The format a file name's extension says (ASCII case-insensitive), if any.
    pub fn from_file_name(name: &str) -> Option<Format> {
        let name = name.to_ascii_lowercase();
        if name.ends_with(".tar.xz") || name.ends_with(".txz") {
            Some(Format::TarXz)
        } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            Some(Format::TarGz)
        } else if name.ends_with(".zip") || name.ends_with(".whl") {
            Some(Format::Zip)
        } else {
            None
        }
    }
}

/// Bounds on what an archive may expand to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Total content bytes, written or skipped.
    pub max_total_bytes: u64,
    /// Archive entries, extracted or skipped.
    pub max_entries: u64,
}

impl Default for Limits {
    /// 64 GiB and a million entries: far above any CUDA redistributable or wheel.
    fn default() -> Self {
        Limits {
            max_total_bytes: 64 << 30,
            max_entries: 1_000_000,
        }
    }
}

/// Maps a sanitized archive path (relative, normal components only) to where it goes under
/// `dest`, or None to skip the entry (e.g. a wheel's `*.dist-info/`, or the archive's top dir).
pub type PathMap<'a> = &'a (dyn Fn(&Path) -> Option<PathBuf> + Sync);

/// How to extract.
pub struct Options<'a> {
    /// Where each entry goes; see [`strip_first_component`] for the usual one.
    pub map: PathMap<'a>,
    /// Bounds on the expanded size.
    pub limits: Limits,
    /// Checked between entries and between buffers; when set, stop with UnpackError::Cancelled.
    pub cancel: Option<&'a AtomicBool>,
    /// Worker threads for xz decoding and zip extraction (>= 1).
    pub threads: usize,
}

/// What an extracted entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file; `executable` when any execute bit was set in the archive.
    File {
        /// Written with mode 0o755 rather than 0o644.
        executable: bool,
    },
    /// A directory, listed or implied by a deeper entry.
    Dir,
    /// A symbolic link.
    Symlink {
        /// The link's target, relative to the link's directory, normalized.
        target: PathBuf,
    },
}

/// One thing written under `dest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative to `dest`, after mapping.
    pub path: PathBuf,
    /// Content bytes (files; 0 otherwise).
    pub size: u64,
    /// Files only, lowercase hex.
    pub sha256: Option<String>,
    /// File, directory or symlink.
    pub kind: EntryKind,
}

/// Why an extraction failed.
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    /// An entry that could write outside `dest` or is not allowed at all.
    #[error("unsafe archive entry `{entry}`: {reason}")]
    Unsafe {
        /// The entry's name as the archive gives it (lossy UTF-8).
        entry: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The archive expands beyond [`Limits`].
    #[error("archive expands beyond the limit: {0}")]
    TooLarge(String),
    /// The archive or its compression is damaged.
    #[error("corrupt archive: {0}")]
    Corrupt(String),
    /// The cancel flag was set.
    #[error("cancelled")]
    Cancelled,
    /// Reading the input or writing under `dest` failed (the message names the path); errors
    /// of the reader given to [`unpack_reader`] come back unchanged.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Streams a compressed tar (TarXz or TarGz) from `reader` into `dest` (an existing, empty
/// directory) in one pass. Zip is not streamable: return Corrupt("zip needs a file") for it.
pub fn unpack_reader<R: Read + Send>(
    format: Format,
    reader: R,
    dest: &Path,
    opts: &Options<'_>,
) -> Result<Vec<Entry>, UnpackError> {
    tar::unpack(format, reader, dest, opts)
}

/// Extracts an archive file of any Format into `dest`. Zip entries are extracted by `threads`
/// workers in parallel (each opening its own ZipArchive on the file).
pub fn unpack_file(
    format: Format,
    file: &Path,
    dest: &Path,
    opts: &Options<'_>,
) -> Result<Vec<Entry>, UnpackError> {
    match format {
        Format::Zip => zip::unpack(file, dest, opts),
        Format::TarXz | Format::TarGz => tar::unpack(format, fs_err::File::open(file)?, dest, opts),
    }
}

/// Unpacks a wheel from `reader` as its bytes arrive (the HTTP body), member by member from the
/// local headers, into `dest` (an existing, empty directory): see `wheel.rs` for what is checked
/// when. [`Streamed::NeedsFile`] says this archive must be read from a file instead. Nothing in
/// `dest` may be used before the caller has checked the wheel's sha256.
pub fn unpack_wheel_stream(
    reader: impl std::io::BufRead,
    dest: &Path,
    opts: &Options<'_>,
) -> Result<Streamed, UnpackError> {
    wheel::unpack(reader, dest, opts)
}

/// A path for messages: control characters escaped (a hostile archive's names may carry
/// terminal escape sequences).
pub fn display_path(path: &Path) -> String {
    tree::display_name(path.as_os_str().as_encoded_bytes())
}

/// The usual [`PathMap`] for a redistributable: drops the archive's single top-level directory
/// (`cuda_cudart-linux-x86_64-12.8.90-archive/lib/x` becomes `lib/x`), and skips the top
/// directory itself and anything at the top level.
pub fn strip_first_component(path: &Path) -> Option<PathBuf> {
    let mut components = path.components();
    match components.next() {
        Some(Component::Normal(_)) => {}
        _ => return None,
    }
    let rest = components.as_path();
    (!rest.as_os_str().is_empty()).then(|| rest.to_path_buf())
}
