//! The filesystem the probes read: `/` on a live machine, or a captured tree (`--system-root`).

use std::path::{Path, PathBuf};

/// Maps the machine's absolute paths onto where their bytes are.
#[derive(Debug, Clone)]
pub struct Root {
    base: PathBuf,
}

impl Root {
    /// The live filesystem.
    pub fn live() -> Self {
        Self {
            base: PathBuf::from("/"),
        }
    }

    /// A captured tree whose top stands for `/`.
    pub fn at(base: impl Into<PathBuf>) -> Self {
        Self { base: base.into() }
    }

    /// Whether this is the live filesystem.
    pub fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    /// Where the machine path `path` (absolute) lies on this host.
    pub fn host_path(&self, path: &Path) -> PathBuf {
        match path.strip_prefix("/") {
            Ok(rel) => self.base.join(rel),
            Err(_) => self.base.join(path),
        }
    }

    /// The machine path of a host path under this root (inverse of [`Root::host_path`]).
    pub fn machine_path(&self, host: &Path) -> PathBuf {
        match host.strip_prefix(&self.base) {
            Ok(rel) if !self.is_live() => Path::new("/").join(rel),
            _ => host.to_path_buf(),
        }
    }

    /// The file's text, or `None` when it is missing or unreadable (probes may fail quietly).
    pub fn read(&self, path: impl AsRef<Path>) -> Option<String> {
        let host = self.host_path(path.as_ref());
        match fs_err::read(&host) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) => {
                tracing::trace!("{e}");
                None
            }
        }
    }

    /// The file's bytes, or `None`.
    pub fn read_bytes(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        fs_err::read(self.host_path(path.as_ref())).ok()
    }

    /// Whether the machine path exists (following symlinks inside the tree where possible).
    pub fn exists(&self, path: impl AsRef<Path>) -> bool {
        let host = self.host_path(path.as_ref());
        host.exists() || host.symlink_metadata().is_ok()
    }

    /// Whether the machine path is a directory.
    pub fn is_dir(&self, path: impl AsRef<Path>) -> bool {
        self.host_path(path.as_ref()).is_dir()
    }

    /// The entries of a directory as machine paths, sorted; empty when unreadable.
    pub fn list(&self, dir: impl AsRef<Path>) -> Vec<PathBuf> {
        let dir = dir.as_ref();
        let mut out: Vec<PathBuf> = match fs_err::read_dir(self.host_path(dir)) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .map(|e| dir.join(e.file_name()))
                .collect(),
            Err(_) => Vec::new(),
        };
        out.sort();
        out
    }

    /// The target of a symlink, as written in the link.
    pub fn read_link(&self, path: impl AsRef<Path>) -> Option<PathBuf> {
        fs_err::read_link(self.host_path(path.as_ref())).ok()
    }
}
