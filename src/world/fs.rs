//! The one atomic writer and the one lock-file helper: every file cudaup replaces goes through
//! [`write_atomic`], every lock through [`lock_file`] (clippy's `disallowed_methods` keeps
//! `rename` and `persist` out of the rest of the crate). Also the one reader of files someone
//! else hands cudaup ([`read_regular`]): regular files only, never past a size cap.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

mod lock;
pub mod space;
#[cfg(windows)]
pub mod windows;
pub use lock::{held_here, holder_of, is_lock_text, lock_file, HeldLock, LockError, Taken};

/// How the temporary file beside the target is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temp {
    /// `.<name>.cudaup-tmp`: a run killed mid-write leaves a file the next write of the same
    /// target removes. Only for targets one writer at a time owns (under a lock).
    Fixed,
    /// `.<name>.<pid>.<n>.cudaup-tmp`: for targets two processes may write at once; a killed
    /// run's leftover is swept by the litter rules.
    Unique,
}

/// Whether the write must survive a power cut before this returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync the file and then its directory: receipts, rc files, the catalog.
    Fsync,
    /// No fsync: caches and logs, which are rebuilt when lost.
    Fast,
}

/// Reads the regular file at `path` (following links, as `open` does), refusing anything else —
/// a FIFO, a device, a directory — without blocking on it, and any file longer than `max` bytes
/// without reading more than one byte past `max`. The reader of every file a machine or a
/// colleague hands cudaup (`--system-root`, `fleet report`).
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_opened(path, max, false)
}

/// [`read_regular`], refusing a link as the last component too: the reader of a captured tree,
/// whose links `detect::Root` resolves inside the capture before it reads.
pub fn read_regular_no_follow(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_opened(path, max, true)
}

/// [`read_regular`], as text (invalid UTF-8 is an error, like `read_to_string`).
pub fn read_regular_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, max)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not UTF-8 text ({e})", path.display()),
        )
    })
}

/// Opens the regular file at `path` for reading (following links), refusing a FIFO, a device or
/// a directory without blocking on it: the open of every local file a mirror or index serves.
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_checked(path, false)
}

/// Whether a process other than this one holds the lock at `path` now ([`lock_file`]'s): the
/// file is never created and never waited on. No file: nobody holds it. A lock this process
/// holds ([`held_here`]) is not another's. What cannot be checked (a link or a FIFO planted at
/// the name, an error) counts as held, so whoever asks leaves alone what the lock protects.
pub fn lock_held_by_another(path: &Path) -> bool {
    if held_here(path) {
        return false;
    }
    let file = match open_checked(path, true) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    // Free if it can be taken (released again as `file` closes); held, or unknown, otherwise.
    file.try_lock().is_err()
}

fn open_checked(path: &Path, no_follow: bool) -> io::Result<File> {
    let file = open_nonblocking(path, no_follow)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a regular file", path.display()),
        ));
    }
    Ok(file)
}

fn read_opened(path: &Path, max: u64, no_follow: bool) -> io::Result<Vec<u8>> {
    let file = open_checked(path, no_follow)?;
    let mut out = Vec::new();
    (&file).take(max.saturating_add(1)).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: longer than the {max} bytes any real file of its kind has",
                path.display()
            ),
        ));
    }
    Ok(out)
}

/// Opens for reading without waiting for a writer (a FIFO opens at once; the caller's type
/// check then refuses it); with `no_follow`, a link as the last component is refused too.
#[cfg(unix)]
fn open_nonblocking(path: &Path, no_follow: bool) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if no_follow {
        flags |= OFlags::NOFOLLOW;
    }
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| {
        let e = io::Error::from(e);
        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
    })?;
    Ok(File::from(fd))
}

/// Windows has no FIFO in the file namespace, so an open never waits; with `no_follow` the name
/// is opened as itself (`FILE_FLAG_OPEN_REPARSE_POINT`) and a reparse point there is refused.
#[cfg(windows)]
fn open_nonblocking(path: &Path, no_follow: bool) -> io::Result<File> {
    let at = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    if !no_follow {
        return options.open(path).map_err(at);
    }
    let file = windows::no_follow(&mut options).open(path).map_err(at)?;
    if windows::is_reparse_point(&file.metadata().map_err(at)?) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: a link or a junction, not a regular file",
                path.display()
            ),
        ));
    }
    Ok(file)
}

/// The suffix every temporary file of [`write_atomic`] ends with (the litter rules know it).
pub const TEMP_SUFFIX: &str = ".cudaup-tmp";

/// Replaces `target` with `bytes` in one rename: a temporary file in the same directory gets the
/// bytes and `mode` (0644 when `None`; the original's mode is kept when it exists), then is
/// renamed over `target`. A reader sees the old file or the new one, never a part.
pub fn write_atomic(
    target: &Path,
    bytes: &[u8],
    temp: Temp,
    durability: Durability,
) -> io::Result<()> {
    write_atomic_with(target, bytes, temp, durability, None)
}

/// [`write_atomic`] keeping `original`'s permissions and owner (an rc file the user owns).
pub fn write_atomic_with(
    target: &Path,
    bytes: &[u8],
    temp: Temp,
    durability: Durability,
    original: Option<&std::fs::Metadata>,
) -> io::Result<()> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    fs_err::create_dir_all(dir)?;
    let in_dir = |error: io::Error| {
        io::Error::new(
            error.kind(),
            format!("{error} (temporary file in '{}')", dir.display()),
        )
    };
    let temp_path = temporary(target, temp);
    if temp == Temp::Fixed {
        match fs_err::remove_file(&temp_path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(in_dir(e)),
            _ => {}
        }
    }
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    fs_err::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp_path).map_err(in_dir)?.into_parts().0;
    let written = (|| {
        file.write_all(bytes)?;
        set_mode(&file, original.or(target.metadata().ok().as_ref()))?;
        if durability == Durability::Fsync {
            file.sync_all()?;
        }
        Ok::<_, io::Error>(())
    })();
    drop(file);
    if let Err(e) = written {
        let _ = fs_err::remove_file(&temp_path);
        return Err(in_dir(e));
    }
    #[allow(clippy::disallowed_methods)] // the one rename
    std::fs::rename(&temp_path, target).map_err(|error| {
        let _ = fs_err::remove_file(&temp_path);
        io::Error::new(
            error.kind(),
            format!("{error} (renaming over '{}')", target.display()),
        )
    })?;
    // Makes the rename itself durable; not every platform lets a directory be synced.
    #[cfg(unix)]
    if durability == Durability::Fsync {
        let _ = fs_err::File::open(dir).and_then(|dir| dir.sync_all());
    }
    Ok(())
}

/// The one bare rename; private, so every caller says which of the operations below it means.
fn rename(from: &Path, to: &Path) -> io::Result<()> {
    #[allow(clippy::disallowed_methods)] // the named operations' one rename
    fs_err::rename(from, to)
}

/// Moves a finished tree (or file) `staged` to `target`, where nothing is (same file system):
/// a staged prefix, an unpacked archive's tree in the cache, a generation of the catalog. A
/// reader sees nothing or all of it.
pub fn publish_dir(staged: &Path, target: &Path) -> io::Result<()> {
    rename(staged, target)
}

/// Replaces the tree at `target` with `staged`: `target` is first moved to `aside`, then
/// `staged` takes its place; if that fails, `target` is put back. The caller removes `aside`
/// once it no longer needs it (and `staged` on an error).
pub fn swap_dir(staged: &Path, target: &Path, aside: &Path) -> io::Result<()> {
    rename(target, aside)?;
    // A kill here leaves `target` missing and only `aside`: the crash tests stop here.
    crate::world::checkpoint::reach("tree-set-aside");
    if let Err(e) = rename(staged, target) {
        let _ = rename(aside, target);
        return Err(e);
    }
    Ok(())
}

/// Moves what is at `path` (a file, a link, a tree; a link is never followed) to the free name
/// `to`, out of the way of what cudaup writes there next.
pub fn move_aside(path: &Path, to: &Path) -> io::Result<()> {
    rename(path, to)
}

/// Puts a verified download `partial` (written and synced by the fetcher) at `done`.
pub fn finish_download(partial: &Path, done: &Path) -> io::Result<()> {
    rename(partial, done)
}

/// Copies `src` to `target` through a temporary name beside it (a hard link when the file
/// system allows, else a copy), so that a killed run leaves no half file under the real name.
pub fn copy_atomic(src: &Path, target: &Path) -> io::Result<()> {
    let tmp = temporary(target, Temp::Unique);
    let _ = fs_err::remove_file(&tmp);
    if std::fs::hard_link(src, &tmp).is_err() {
        fs_err::copy(src, &tmp)?;
    }
    rename(&tmp, target).inspect_err(|_| {
        let _ = fs_err::remove_file(&tmp);
    })
}

/// Makes the symbolic link `link` pointing at `points_to` (an archive's or a tree's link).
#[cfg(unix)]
pub fn symlink(points_to: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(points_to, link)
}

/// On Windows a symbolic link needs Developer Mode or an administrator, and whether it must be a
/// file or a directory link depends on a target that may not exist yet; NVIDIA's Windows
/// packages ship none. So a link is refused, naming it, rather than made half-right or skipped.
#[cfg(windows)]
pub fn symlink(points_to: &Path, link: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{} -> {}: cudaup does not make symbolic links on Windows (a package meant for Windows has none)",
            link.display(),
            points_to.display()
        ),
    ))
}

/// Points the symlink `link` at `points_to` in one rename (a temporary link beside it, then
/// renamed over it): a reader follows the old link or the new one, never none.
#[cfg(unix)]
pub fn replace_symlink(points_to: &Path, link: &Path) -> io::Result<()> {
    let tmp = temporary(link, Temp::Unique);
    if tmp.symlink_metadata().is_ok() {
        fs_err::remove_file(&tmp)?;
    }
    std::os::unix::fs::symlink(points_to, &tmp)?;
    rename(&tmp, link).inspect_err(|_| {
        let _ = fs_err::remove_file(&tmp);
    })
}

/// Puts a finished temporary file (written and synced by its maker) at `target` in one rename.
pub fn persist(temp: tempfile::NamedTempFile, target: &Path) -> io::Result<()> {
    #[allow(clippy::disallowed_methods)]
    temp.persist(target).map(drop).map_err(|e| {
        io::Error::new(
            e.error.kind(),
            format!("{} (renaming over {})", e.error, target.display()),
        )
    })
}

fn set_mode(file: &File, original: Option<&std::fs::Metadata>) -> io::Result<()> {
    match original {
        Some(metadata) => {
            file.set_permissions(metadata.permissions())?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                // Keeps the user's ownership when run with privileges; an unprivileged user can
                // only "change" it to themselves, so a failure here changes nothing that matters.
                let _ = std::os::unix::fs::fchown(file, Some(metadata.uid()), Some(metadata.gid()));
            }
        }
        None => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            }
        }
    }
    Ok(())
}

/// The temporary name [`write_atomic`] uses beside `target`.
pub fn temporary(target: &Path, temp: Temp) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match temp {
        Temp::Fixed => format!(".{name}{TEMP_SUFFIX}"),
        Temp::Unique => format!(
            ".{name}.{}.{}{TEMP_SUFFIX}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ),
    };
    target.with_file_name(name)
}

/// The process that made a [`Temp::Unique`] temporary, from its name
/// (`.<name>.<pid>.<n>.cudaup-tmp`): a sweep removes those of processes no longer running.
pub fn temporary_pid(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_suffix(TEMP_SUFFIX)?;
    let mut parts = stem.rsplitn(3, '.');
    parts.next()?.parse::<u64>().ok()?;
    parts.next()?.parse().ok()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn replaces_in_one_step_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("receipt.json");
        write_atomic(&target, b"one", Temp::Unique, Durability::Fsync).unwrap();
        write_atomic(&target, b"two", Temp::Fixed, Durability::Fast).unwrap();
        assert_eq!(fs_err::read(&target).unwrap(), b"two");
        let names: Vec<_> = fs_err::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn unique_temporaries_never_collide() {
        let t = Path::new("/x/self.json");
        assert_ne!(temporary(t, Temp::Unique), temporary(t, Temp::Unique));
        assert!(temporary(t, Temp::Unique)
            .to_string_lossy()
            .ends_with(TEMP_SUFFIX));
    }
}
