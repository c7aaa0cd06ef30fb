//! The lock file on Windows: opened without following a reparse point (a symbolic link or a
//! junction planted at the lock's name is refused, as `O_NOFOLLOW` refuses a symlink on Linux),
//! its link count and identity read from the open handle. Windows has no FIFO or socket in the
//! file namespace, so what is neither a file nor a directory is named a device.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::FileExt;
use std::path::Path;

use super::{checked, LockError};
use crate::world::fs::windows::{identity, identity_of, is_reparse_point, no_follow};

pub(super) fn read_at(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    file.seek_read(buf, 0)
}

pub(super) fn write_at(file: &File, bytes: &[u8]) -> io::Result<usize> {
    file.seek_write(bytes, 0)
}

/// Opens the lock file itself, never what a link at its name points to; creates it when absent
/// (`true`). An existing one goes through the same checks as on Linux.
pub(super) fn open(path: &Path) -> Result<(File, bool), LockError> {
    let io_err = |source| LockError::Io {
        path: path.to_owned(),
        source,
    };
    loop {
        match no_follow(OpenOptions::new().read(true).write(true)).open(path) {
            Ok(file) => {
                let meta = file.metadata().map_err(io_err)?;
                if is_reparse_point(&meta) {
                    return Err(LockError::Link {
                        path: path.to_owned(),
                    });
                }
                return checked(file, path).map(|f| (f, false));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(refusal(e, path)),
        }
        match no_follow(OpenOptions::new().read(true).write(true).create_new(true)).open(path) {
            Ok(file) => return Ok((file, true)),
            // Another process made it (or a link appeared) in between: look again.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(refusal(e, path)),
        }
    }
}

/// A directory cannot be opened for writing: say so rather than "access denied".
fn refusal(e: io::Error, path: &Path) -> LockError {
    let path = path.to_owned();
    match path.symlink_metadata() {
        Ok(m) if is_reparse_point(&m) => LockError::Link { path },
        Ok(m) if m.is_dir() => LockError::NotAFile {
            path,
            kind: "a directory",
        },
        _ => LockError::Io { path, source: e },
    }
}

pub(super) fn odd_kind(_meta: &Metadata) -> &'static str {
    "a device"
}

/// How many names the open file has (1 when Windows cannot tell).
pub(super) fn links(file: &File, _meta: &Metadata) -> u64 {
    identity(file).map_or(1, |id| id.links)
}

pub(super) fn same_file(file: &File, path: &Path) -> bool {
    match (identity(file), identity_of(path)) {
        (Ok(a), Ok(b)) => a.volume == b.volume && a.index == b.index,
        _ => false,
    }
}
