//! The one lock-file helper: the home lock, the prefix lock and the download cache's locks all
//! go through [`lock_file`]. A lock file sits in directories others may write (`/opt`, a shared
//! home), so it is opened without following a link, must be a regular file with one name, and
//! is written (`pid N`) only when cudaup created it or it already holds nothing but what cudaup
//! writes there: a root cudaup never clobbers a file someone planted at a lock's name. The
//! holder is read from the descriptor already open, never by opening the name again, so a FIFO
//! planted there cannot make `--no-wait` hang.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use rustix::fs::{Mode, OFlags};
#[cfg(unix)]
use rustix::io::Errno;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows::{links, odd_kind, open, read_at, same_file, write_at};

/// The most a lock file of cudaup holds (`pid ` and a pid); anything longer is not one.
const MAX_LOCK_BYTES: u64 = 64;

/// Why a lock file was not used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// A symbolic link stands at the lock's name.
    #[error("{}: is a symbolic link, and cudaup never follows a link at a lock file's name (anyone who can write the folder could point it at another file); remove the link and run again", .path.display())]
    Link {
        /// The lock file's name.
        path: PathBuf,
    },
    /// Something other than a regular file stands there (a FIFO, a directory, a device).
    #[error("{}: is {kind}, not a lock file cudaup made; move it away and run again", .path.display())]
    NotAFile {
        /// The lock file's name.
        path: PathBuf,
        /// What stands there.
        kind: &'static str,
    },
    /// A regular file whose bytes cudaup did not write (or with more than one name).
    #[error("{}: holds something other than the `pid N` cudaup writes into its lock files{why}; cudaup does not overwrite a file it did not create: move it away and run again", .path.display())]
    Foreign {
        /// The lock file's name.
        path: PathBuf,
        /// What gave it away.
        why: &'static str,
    },
    /// Opening or locking failed (permissions, a read-only filesystem).
    #[error("could not lock {}: {source}", .path.display())]
    Io {
        /// The lock file's name.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl From<LockError> for io::Error {
    fn from(e: LockError) -> Self {
        let kind = match &e {
            LockError::Io { source, .. } => source.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, e.to_string())
    }
}

/// A lock this process holds; released when dropped.
#[derive(Debug)]
pub struct HeldLock {
    /// Held open for the lock: closing it (as the lock is dropped) releases the lock.
    _file: File,
    path: PathBuf,
    created: bool,
}

impl HeldLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this take created the lock file (nothing stood at its name before).
    pub fn created(&self) -> bool {
        self.created
    }

    /// Removes the lock file while still holding it (nothing is left to protect): a waiter then
    /// finds its file gone and locks a fresh one ([`lock_file`]). The lock goes as `self` does.
    pub fn remove(self) {
        let _ = fs_err::remove_file(&self.path);
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = held.iter().position(|p| *p == self.path) {
            held.swap_remove(i);
        }
    }
}

/// The lock files this process holds now (one entry per live [`HeldLock`]): whether a lock is
/// this process's own is answered from here, not by reading the file, whose bytes another
/// handle cannot read on Windows while the lock is held.
static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Whether this process holds the lock at `path` (taken by [`lock_file`] with this same path).
pub fn held_here(path: &Path) -> bool {
    HELD.lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|p| p == path)
}

/// What [`lock_file`] got.
#[derive(Debug)]
pub enum Taken {
    /// The lock, held until dropped.
    Held(HeldLock),
    /// Another process holds it (and `waiting` was not given): what it wrote (`pid N`).
    Busy {
        /// The holder's `pid N` (empty when it wrote nothing).
        holder: String,
    },
}

impl Taken {
    /// The lock, if it was taken.
    pub fn held(self) -> Option<HeldLock> {
        match self {
            Taken::Held(lock) => Some(lock),
            Taken::Busy { .. } => None,
        }
    }
}

/// An exclusive lock on `path` (created if needed, with its folder), held until dropped; the
/// holder writes `pid N` into it so a waiter can say who it waits for. With `waiting`, a held
/// lock is waited for (after `waiting` is told the holder); without, [`Taken::Busy`] comes back
/// at once.
///
/// A holder may remove the lock file (nothing left to protect), so a lock taken on a file no
/// longer at `path` is taken again on the file there now.
pub fn lock_file(path: &Path, mut waiting: Option<impl FnOnce(&str)>) -> Result<Taken, LockError> {
    let io_err = |source: io::Error| LockError::Io {
        path: path.to_owned(),
        source,
    };
    loop {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs_err::create_dir_all(dir).map_err(io_err)?;
        }
        let (file, created) = open(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = holder_of(&file);
                let Some(waiting) = waiting.take() else {
                    return Ok(Taken::Busy { holder });
                };
                waiting(&holder);
                file.lock().map_err(io_err)?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io_err(e)),
        }
        if !same_file(&file, path) {
            continue;
        }
        // Under the lock, and the file is cudaup's (made now, or holding only a `pid N`).
        let pid = format!("pid {}", std::process::id());
        let _ = file.set_len(0);
        let _ = write_at(&file, pid.as_bytes());
        HELD.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.to_owned());
        return Ok(Taken::Held(HeldLock {
            _file: file,
            path: path.to_owned(),
            created,
        }));
    }
}

/// The holder a lock file names (`pid N`), read from the open descriptor: never blocks.
pub fn holder_of(file: &File) -> String {
    let mut buf = [0u8; MAX_LOCK_BYTES as usize];
    let n = read_at(file, &mut buf).unwrap_or(0);
    String::from_utf8_lossy(&buf[..n]).trim().to_owned()
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    file.read_at(buf, 0)
}

#[cfg(unix)]
fn write_at(file: &File, bytes: &[u8]) -> io::Result<usize> {
    file.write_at(bytes, 0)
}

/// Opens the lock file without following a link and without waiting on a FIFO; creates it when
/// absent (`true`). An existing one must be a regular file with one name holding nothing but
/// what cudaup writes there.
#[cfg(unix)]
fn open(path: &Path) -> Result<(File, bool), LockError> {
    let base = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    loop {
        match rustix::fs::open(path, base, Mode::empty()) {
            Ok(fd) => return checked(File::from(fd), path).map(|f| (f, false)),
            Err(Errno::NOENT) => {}
            Err(e) => return Err(refusal(e, path)),
        }
        let mode = Mode::from_raw_mode(0o644);
        match rustix::fs::open(path, base | OFlags::CREATE | OFlags::EXCL, mode) {
            Ok(fd) => return Ok((File::from(fd), true)),
            // Another process made it (or a link appeared) in between: look again.
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(refusal(e, path)),
        }
    }
}

#[cfg(unix)]
fn refusal(e: Errno, path: &Path) -> LockError {
    let path = path.to_owned();
    match e {
        Errno::LOOP => LockError::Link { path },
        Errno::ISDIR => LockError::NotAFile {
            path,
            kind: "a directory",
        },
        // A socket cannot be opened; a FIFO without a reader refuses O_RDWR on some systems.
        Errno::NXIO | Errno::OPNOTSUPP => LockError::NotAFile {
            path,
            kind: "a FIFO or a socket",
        },
        e => LockError::Io {
            path,
            source: e.into(),
        },
    }
}

fn checked(file: File, path: &Path) -> Result<File, LockError> {
    let meta = file.metadata().map_err(|source| LockError::Io {
        path: path.to_owned(),
        source,
    })?;
    let foreign = |why| LockError::Foreign {
        path: path.to_owned(),
        why,
    };
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            odd_kind(&meta)
        };
        return Err(LockError::NotAFile {
            path: path.to_owned(),
            kind,
        });
    }
    if links(&file, &meta) > 1 {
        return Err(foreign(
            " (it has other names: a hard link to another file)",
        ));
    }
    if meta.len() > MAX_LOCK_BYTES {
        return Err(foreign(""));
    }
    if !is_lock_text(&holder_of(&file)) {
        return Err(foreign(""));
    }
    Ok(file)
}

/// What cudaup's lock files hold: nothing, or `pid N`.
/// (A holder's write may be caught half done: a beginning of `pid ` passes too.)
pub fn is_lock_text(text: &str) -> bool {
    let digits = match text.strip_prefix("pid ") {
        Some(digits) => digits,
        None if "pid ".starts_with(text) => "",
        None => return false,
    };
    digits.bytes().all(|b| b.is_ascii_digit())
}

/// What stands there, when it is neither a regular file nor a directory.
#[cfg(unix)]
fn odd_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a device"
    }
}

/// How many names the open file has.
#[cfg(unix)]
fn links(_file: &File, meta: &std::fs::Metadata) -> u64 {
    meta.nlink()
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), path.symlink_metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
