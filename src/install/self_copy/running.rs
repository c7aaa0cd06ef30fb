//! The binary this process runs, and how a file is compared with it.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::world::process::Process;

/// The binary this process runs, and (once asked for) its sha256.
#[derive(Debug)]
pub struct Running {
    path: PathBuf,
    hash: OnceLock<String>,
}

impl Running {
    /// The binary at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Running {
        Running {
            path: path.into(),
            hash: OnceLock::new(),
        }
    }

    /// The process's binary, when the OS named it.
    pub fn of(process: &Process) -> Option<Running> {
        process.exe().map(Running::new)
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its sha256 (read once).
    pub fn sha256(&self) -> io::Result<&str> {
        if let Some(h) = self.hash.get() {
            return Ok(h);
        }
        let h = crate::fetch::sha256_file(&self.path)?;
        Ok(self.hash.get_or_init(|| h))
    }

    /// Its size.
    pub(super) fn size(&self) -> io::Result<u64> {
        Ok(fs_err::metadata(&self.path)?.len())
    }

    /// Whether `path` is this very file (not a copy of it).
    pub fn is(&self, path: &Path) -> bool {
        same_file(&self.path, path)
    }

    /// Whether the file at `path` (of `size` bytes) has this binary's bytes. Compared byte for
    /// byte, which says what equal sha256s would, without hashing either.
    pub(super) fn same_bytes(&self, path: &Path, size: u64) -> bool {
        self.size().is_ok_and(|s| s == size) && same_contents(&self.path, path).unwrap_or(false)
    }
}

/// Whether the files at `a` and `b` hold the same bytes (read side by side, stopping at the first
/// difference).
fn same_contents(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut a, mut b) = (fs_err::File::open(a)?, fs_err::File::open(b)?);
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = read_full(&mut a, &mut x)?;
        let m = read_full(&mut b, &mut y)?;
        if n != m || x[..n] != y[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fills `buf` as far as the file goes; returns how much was read (short only at the end).
fn read_full(file: &mut fs_err::File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Whether `a` and `b` are one file (the same inode on Unix; the same canonical path elsewhere).
pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (fs_err::metadata(a), fs_err::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (fs_err::canonicalize(a), fs_err::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}
