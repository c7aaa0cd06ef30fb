//! What has been extracted so far, and the only code that creates things under `dest`.
//!
//! [`Tree`] remembers every directory, file and symlink it made (relative to `dest`). The rules
//! that keep writes inside `dest` live here, so tar and zip share them:
//! - every ancestor of a new path must be a directory this tree made (or created just now);
//!   an ancestor that is a symlink is refused, so nothing is ever written through a link;
//! - a new entry at the path of an earlier file or symlink unlinks it first (never follows it),
//!   and files are opened with `O_CREAT | O_EXCL`, which refuses to follow a link left there;
//! - modes are 0o755 for directories and executables, 0o644 otherwise (the umask applies), with
//!   no setuid, setgid or sticky bits and no ownership.
//!
//! In a dry run (the zip planner) the same checks run but nothing touches the disk.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use super::{Entry, EntryKind, Limits, UnpackError};

/// Size of the buffer file contents are copied through.
pub(crate) const COPY_BUF: usize = 1 << 20;

pub(crate) struct Tree<'a> {
    dest: &'a Path,
    dry_run: bool,
    entries: BTreeMap<PathBuf, Entry>,
    /// The parent directory of the last path placed: its ancestors are known to be directories.
    last_parent: Option<PathBuf>,
    limits: Limits,
    cancel: Option<&'a AtomicBool>,
    /// Archive entries seen (written or skipped).
    count: u64,
    /// Content bytes accounted for against `limits.max_total_bytes`.
    bytes: u64,
}

/// An archive member's name for messages: lossy UTF-8, control characters escaped (a name may
/// carry terminal escape sequences).
pub(crate) fn display_name(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in String::from_utf8_lossy(raw).chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn unsafe_entry(entry: &str, reason: impl Into<String>) -> UnpackError {
    UnpackError::Unsafe {
        entry: entry.to_string(),
        reason: reason.into(),
    }
}

pub(crate) fn check_cancel(cancel: Option<&AtomicBool>) -> Result<(), UnpackError> {
    match cancel {
        Some(flag) if flag.load(Ordering::Relaxed) => Err(UnpackError::Cancelled),
        _ => Ok(()),
    }
}

impl<'a> Tree<'a> {
    pub(crate) fn new(
        dest: &'a Path,
        limits: &Limits,
        cancel: Option<&'a AtomicBool>,
        dry_run: bool,
    ) -> Self {
        Tree {
            dest,
            dry_run,
            entries: BTreeMap::new(),
            last_parent: None,
            limits: *limits,
            cancel,
            count: 0,
            bytes: 0,
        }
    }

    pub(crate) fn check_cancel(&self) -> Result<(), UnpackError> {
        check_cancel(self.cancel)
    }

    /// Counts one archive entry against `max_entries`.
    pub(crate) fn count_entry(&mut self) -> Result<(), UnpackError> {
        self.count += 1;
        if self.count > self.limits.max_entries {
            return Err(UnpackError::TooLarge(format!(
                "more than {} entries",
                self.limits.max_entries
            )));
        }
        Ok(())
    }

    /// Accounts for `n` more content bytes, before they are written.
    pub(crate) fn reserve(&mut self, n: u64, entry: &str) -> Result<(), UnpackError> {
        match self.bytes.checked_add(n) {
            Some(total) if total <= self.limits.max_total_bytes => {
                self.bytes = total;
                Ok(())
            }
            _ => Err(UnpackError::TooLarge(format!(
                "`{entry}` brings the total past {} bytes",
                self.limits.max_total_bytes
            ))),
        }
    }

    /// Content bytes still allowed under `limits.max_total_bytes`.
    pub(crate) fn room(&self) -> u64 {
        self.limits.max_total_bytes.saturating_sub(self.bytes)
    }

    pub(crate) fn entries(&self) -> &BTreeMap<PathBuf, Entry> {
        &self.entries
    }

    pub(crate) fn entries_mut(&mut self) -> &mut BTreeMap<PathBuf, Entry> {
        &mut self.entries
    }

    pub(crate) fn into_entries(self) -> Vec<Entry> {
        self.entries.into_values().collect()
    }

    /// Makes sure every ancestor of `rel` is a directory, creating the missing ones.
    fn ensure_parent(&mut self, rel: &Path, name: &str) -> Result<(), UnpackError> {
        let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(());
        };
        if self.last_parent.as_deref() == Some(parent) {
            return Ok(());
        }
        let mut ancestor = PathBuf::new();
        for component in parent.components() {
            ancestor.push(component);
            match self.entries.get(&ancestor).map(|e| &e.kind) {
                Some(EntryKind::Dir) => {}
                Some(EntryKind::Symlink { .. }) => {
                    return Err(unsafe_entry(
                        name,
                        format!(
                            "it would be written through the symlink `{}`",
                            ancestor.display()
                        ),
                    ))
                }
                Some(EntryKind::File { .. }) => {
                    return Err(UnpackError::Corrupt(format!(
                        "entry `{name}` needs `{}` to be a directory, but it is a file",
                        ancestor.display()
                    )))
                }
                None => {
                    self.mkdir(&ancestor)?;
                    self.record(ancestor.clone(), 0, None, EntryKind::Dir);
                }
            }
        }
        self.last_parent = Some(parent.to_path_buf());
        Ok(())
    }

    fn mkdir(&self, rel: &Path) -> Result<(), UnpackError> {
        if self.dry_run {
            return Ok(());
        }
        make_dir(self.dest, rel)
    }

    /// Prepares `rel` for a new file or symlink: parents exist, an earlier file or symlink there
    /// is unlinked (not followed); an earlier directory there is an error.
    fn prepare_slot(&mut self, rel: &Path, name: &str) -> Result<(), UnpackError> {
        self.ensure_parent(rel, name)?;
        match self.entries.get(rel).map(|e| &e.kind) {
            None => Ok(()),
            Some(EntryKind::Dir) => Err(UnpackError::Corrupt(format!(
                "entry `{name}` would replace the directory `{}`",
                rel.display()
            ))),
            Some(_) => {
                if !self.dry_run {
                    fs_err::remove_file(self.dest.join(rel))?;
                }
                self.entries.remove(rel);
                Ok(())
            }
        }
    }

    fn record(&mut self, path: PathBuf, size: u64, sha256: Option<String>, kind: EntryKind) {
        self.entries.insert(
            path.clone(),
            Entry {
                path,
                size,
                sha256,
                kind,
            },
        );
    }

    /// A directory entry. An earlier file or symlink at the same path is replaced.
    pub(crate) fn add_dir(&mut self, rel: &Path, name: &str) -> Result<(), UnpackError> {
        self.ensure_parent(rel, name)?;
        match self.entries.get(rel).map(|e| &e.kind) {
            Some(EntryKind::Dir) => return Ok(()),
            Some(_) if !self.dry_run => fs_err::remove_file(self.dest.join(rel))?,
            _ => {}
        }
        self.mkdir(rel)?;
        self.record(rel.to_path_buf(), 0, None, EntryKind::Dir);
        Ok(())
    }

    /// Opens a new file at `rel` (exclusively) and returns it; `finish_file` records it. In a dry
    /// run, records the file with the declared `size` and no hash, and returns `None`.
    pub(crate) fn start_file(
        &mut self,
        rel: &Path,
        name: &str,
        executable: bool,
        size: u64,
    ) -> Result<Option<fs_err::File>, UnpackError> {
        self.prepare_slot(rel, name)?;
        if self.dry_run {
            self.record(
                rel.to_path_buf(),
                size,
                None,
                EntryKind::File { executable },
            );
            return Ok(None);
        }
        Ok(Some(create_file(&self.dest.join(rel), executable)?))
    }

    pub(crate) fn finish_file(&mut self, rel: &Path, executable: bool, size: u64, sha256: String) {
        self.record(
            rel.to_path_buf(),
            size,
            Some(sha256),
            EntryKind::File { executable },
        );
    }

    /// A symlink entry; `target` has been checked by [`super::path::check_link_target`].
    pub(crate) fn add_symlink(
        &mut self,
        rel: &Path,
        name: &str,
        target: PathBuf,
    ) -> Result<(), UnpackError> {
        self.prepare_slot(rel, name)?;
        if !self.dry_run {
            make_symlink(&target, &self.dest.join(rel))?;
        }
        self.record(rel.to_path_buf(), 0, None, EntryKind::Symlink { target });
        Ok(())
    }

    /// A tar hardlink to `target`, which must be a regular file extracted earlier. Makes a hard
    /// link, or copies when the filesystem refuses one.
    pub(crate) fn add_hardlink(
        &mut self,
        rel: &Path,
        name: &str,
        target: &Path,
        buf: &mut [u8],
    ) -> Result<(), UnpackError> {
        let Some(Entry {
            size,
            sha256,
            kind: EntryKind::File { executable },
            ..
        }) = self.entries.get(target).cloned()
        else {
            return Err(unsafe_entry(
                name,
                format!(
                    "hardlink target `{}` is not a regular file extracted earlier",
                    target.display()
                ),
            ));
        };
        if rel == target {
            return Ok(());
        }
        self.prepare_slot(rel, name)?;
        let (from, to) = (self.dest.join(target), self.dest.join(rel));
        if let Err(e) = fs_err::hard_link(&from, &to) {
            tracing::debug!(
                "hard link failed ({e}), copying `{}` instead",
                from.display()
            );
            self.reserve(size, name)?;
            let mut src = fs_err::File::open(&from)?;
            let mut dst = create_file(&to, executable)?;
            copy_hashed(&mut src, &mut dst, buf, size, self.cancel, &|e| e.into())?;
        }
        self.record(
            rel.to_path_buf(),
            size,
            sha256,
            EntryKind::File { executable },
        );
        Ok(())
    }
}

/// Creates `dest/rel` (mode 0o755); its parent must exist. A directory already there is fine
/// only if it is a real directory.
pub(crate) fn make_dir(dest: &Path, rel: &Path) -> Result<(), UnpackError> {
    let path = dest.join(rel);
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
    match builder.create(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            // Not made by this extraction (dest should have been empty): accept a real
            // directory only, never a symlink to one.
            if fs_err::symlink_metadata(&path)?.is_dir() {
                Ok(())
            } else {
                Err(unsafe_entry(
                    &rel.display().to_string(),
                    "a non-directory that this extraction did not create is in the way",
                ))
            }
        }
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("failed to create directory `{}`: {e}", path.display()),
        )
        .into()),
    }
}

pub(crate) fn create_file(path: &Path, executable: bool) -> Result<fs_err::File, UnpackError> {
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    fs_err::os::unix::fs::OpenOptionsExt::mode(
        &mut options,
        if executable { 0o755 } else { 0o644 },
    );
    #[cfg(not(unix))]
    let _ = executable;
    Ok(options.open(path)?)
}

/// Members from this size up get their blocks allocated before the first write.
const PREALLOCATE_FROM: u64 = 1 << 20;

/// How far past its compressed size a member's declared size is believed, for preallocation
/// only. Deflate can expand 1032-fold, so a hostile header could otherwise claim gigabytes for a
/// few kilobytes of data and hold that much disk until the member fails; NVIDIA's binaries
/// deflate 1.3-3x, so 8x covers every real member, and a member that expands more is simply
/// preallocated in part.
const PREALLOCATE_RATIO: u64 = 8;

/// Asks the file system for the blocks of a new, empty file's declared `size` (at most
/// [`PREALLOCATE_RATIO`] times its `compressed` size) past its end, keeping its length at zero
/// (`FALLOC_FL_KEEP_SIZE`): the writes that follow fill blocks already allocated instead of
/// reserving each 4 KiB page through ext4's delayed allocation (its per-page reservation,
/// extent-status and quota work: about 5% of a cold wheel install's CPU; docs/benchmarks.md).
/// `size` was counted against the unpack limits first ([`Tree::reserve`]). The visible length
/// stays what was written, so a member shorter than declared (an error, after which the tree is
/// removed) never shows zeros. Where the file system cannot (NFS before 4.2, some FUSE file
/// systems) or the disk is full, the writes go on as before and report a full disk themselves.
pub(crate) fn preallocate(file: &fs_err::File, size: u64, compressed: u64) {
    let len = size.min(compressed.saturating_mul(PREALLOCATE_RATIO));
    #[cfg(target_os = "linux")]
    if len >= PREALLOCATE_FROM {
        let _ = rustix::fs::fallocate(file, rustix::fs::FallocateFlags::KEEP_SIZE, 0, len);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, len, PREALLOCATE_FROM);
}

pub(crate) fn make_symlink(target: &Path, link: &Path) -> Result<(), UnpackError> {
    #[cfg(unix)]
    {
        fs_err::os::unix::fs::symlink(target, link)?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "cannot create the symlink `{}` -> `{}` on this platform",
                link.display(),
                target.display()
            ),
        )
        .into())
    }
}

/// Copies `reader` to `writer` through `buf`, hashing as it goes; returns the byte count and
/// the lowercase hex sha256. More than `max` bytes is [`UnpackError::Corrupt`] (a zip entry
/// larger than it declared); nothing past `max` is written. Read errors go through `read_err`,
/// write errors are I/O errors. The cancel flag is checked between buffers.
pub(crate) fn copy_hashed(
    reader: &mut dyn Read,
    writer: &mut dyn Write,
    buf: &mut [u8],
    max: u64,
    cancel: Option<&AtomicBool>,
    read_err: &dyn Fn(io::Error) -> UnpackError,
) -> Result<(u64, String), UnpackError> {
    let mut hasher = Sha256::new();
    let mut total = 0u64;
    loop {
        check_cancel(cancel)?;
        let n = fill(reader, buf).map_err(read_err)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        if total > max {
            return Err(UnpackError::Corrupt(format!(
                "an entry holds more than the {max} bytes it declared"
            )));
        }
        hasher.update(&buf[..n]);
        writer.write_all(&buf[..n])?;
    }
    Ok((total, hex::encode(hasher.finalize())))
}

/// Reads until `buf` is full or the reader is exhausted, so writes go out in large pieces.
pub(crate) fn fill(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
