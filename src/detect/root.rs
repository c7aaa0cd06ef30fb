//! The filesystem the probes read: `/` on a live machine, or a captured tree (`--system-root`).
//!
//! A captured tree comes from someone else's machine, and may be hostile: its files are read
//! only when they are regular files (a FIFO would block for ever, `/dev/zero` never ends), links
//! inside it are followed inside it (an absolute target means the tree's own `/`, `..` stops at
//! its top), and no file is read past what a real file of its kind holds.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The most a probed text file may have (os-release, `/proc/modules` ≈ 30 KB on a big server,
/// `version.json`, `torch/version.py`, apt sources): far more than any real one.
pub const MAX_TEXT_FILE: u64 = 4 << 20;
/// The most `/etc/ld.so.cache` may have (a few hundred KB on a desktop, ~2 MB with everything).
pub const MAX_LD_CACHE: u64 = 64 << 20;
/// The most a kernel's `modules.dep` may have (≈ 1 MB).
pub const MAX_MODULES_DEP: u64 = 16 << 20;
/// The most a fleet report file (`install.json`, `verify.json`, `system.json`) may have.
pub const MAX_REPORT: u64 = 16 << 20;

/// How many links one path may pass through (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The most a real file at machine path `path` holds.
pub fn cap_for(path: &Path) -> u64 {
    if path == Path::new("/etc/ld.so.cache") {
        MAX_LD_CACHE
    } else if path.file_name().is_some_and(|n| n == "modules.dep") {
        MAX_MODULES_DEP
    } else {
        MAX_TEXT_FILE
    }
}

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

    /// Where the machine path `path` (absolute) lies on this host, links not followed.
    pub fn host_path(&self, path: &Path) -> PathBuf {
        match path.strip_prefix("/") {
            Ok(rel) => self.base.join(rel),
            Err(_) => self.base.join(path),
        }
    }

    /// Where the machine path `path` lies on this host with every link in it followed the way
    /// the machine would follow it: in a captured tree, an absolute target is the tree's own
    /// `/` and `..` stops at its top, so no link leads out of the tree. `None` past
    /// [`MAX_LINKS`] links (a loop).
    pub fn resolve(&self, path: &Path) -> Option<PathBuf> {
        if self.is_live() {
            return Some(self.host_path(path));
        }
        let mut todo: VecDeque<OsString> = normal_parts(path).collect();
        let mut done: Vec<OsString> = Vec::new();
        let mut links = 0;
        while let Some(part) = todo.pop_front() {
            if part == ".." {
                done.pop();
                continue;
            }
            done.push(part);
            let host = done.iter().fold(self.base.clone(), |p, c| p.join(c));
            let Ok(meta) = host.symlink_metadata() else {
                // Missing: what is left cannot pass through a link; the open will say so.
                continue;
            };
            if !meta.file_type().is_symlink() {
                continue;
            }
            links += 1;
            if links > MAX_LINKS {
                return None;
            }
            let target = fs_err::read_link(&host).ok()?;
            done.pop();
            if target.is_absolute() {
                done.clear();
            }
            for p in normal_parts(&target).collect::<Vec<_>>().into_iter().rev() {
                todo.push_front(p);
            }
        }
        Some(done.iter().fold(self.base.clone(), |p, c| p.join(c)))
    }

    /// The bytes of the regular file at machine path `path`, at most `max`.
    pub fn read_at_most(&self, path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
        let host = self.resolve(path).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: too many levels of symbolic links", path.display()),
            )
        })?;
        // Every link is resolved already; one that appears now is refused, not followed.
        if self.is_live() {
            crate::world::fs::read_regular(&host, max)
        } else {
            crate::world::fs::read_regular_no_follow(&host, max)
        }
    }

    /// The file's text, or `None` when it is missing, unreadable, not a regular file or longer
    /// than a real one of its kind ([`cap_for`]); probes may fail quietly.
    pub fn read(&self, path: impl AsRef<Path>) -> Option<String> {
        self.read_bytes(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The file's bytes, or `None` (as [`Root::read`]).
    pub fn read_bytes(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let path = path.as_ref();
        match self.read_at_most(path, cap_for(path)) {
            Ok(b) => Some(b),
            Err(e) => {
                if e.kind() == std::io::ErrorKind::NotFound {
                    tracing::trace!("{e}");
                } else {
                    tracing::debug!("not read: {e}");
                }
                None
            }
        }
    }

    /// Whether the machine path exists (a dangling link counts).
    pub fn exists(&self, path: impl AsRef<Path>) -> bool {
        let path = path.as_ref();
        self.resolve(path)
            .is_some_and(|h| h.symlink_metadata().is_ok())
            || self.host_path(path).symlink_metadata().is_ok()
    }

    /// Whether the machine path is a directory (through links: on the live machine the
    /// system's own, in a capture the ones [`Root::resolve`] followed inside it).
    pub fn is_dir(&self, path: impl AsRef<Path>) -> bool {
        self.resolve(path.as_ref()).is_some_and(|h| h.is_dir())
    }

    /// The entries of a directory as machine paths, sorted; empty when unreadable.
    pub fn list(&self, dir: impl AsRef<Path>) -> Vec<PathBuf> {
        let dir = dir.as_ref();
        let Some(host) = self.resolve(dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = match fs_err::read_dir(host) {
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
        let path = path.as_ref();
        let parent = self.resolve(path.parent().unwrap_or(Path::new("/")))?;
        fs_err::read_link(parent.join(path.file_name()?)).ok()
    }

    /// The machine path of a host path under this root (inverse of [`Root::host_path`]).
    pub fn machine_path(&self, host: &Path) -> PathBuf {
        match host.strip_prefix(&self.base) {
            Ok(rel) if !self.is_live() => Path::new("/").join(rel),
            _ => host.to_path_buf(),
        }
    }
}

/// The named parts of a path, `..` kept (the root and `.` dropped).
fn normal_parts(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|c| match c {
        Component::Normal(n) => Some(n.to_owned()),
        Component::ParentDir => Some(OsString::from("..")),
        _ => None,
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::world::fs::{read_regular, read_regular_text};
    use std::os::unix::fs::symlink;
    use std::time::{Duration, Instant};

    /// Issue 25, finding 7: a FIFO at a probed file hung `detect`, `doctor` and `fleet report`
    /// for ever; a sparse 8 GiB `os-release` aborted them; a link to `/dev/zero` read ~1 GiB.
    #[test]
    fn a_hostile_capture_neither_hangs_nor_exhausts_memory_nor_leads_out() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs_err::create_dir_all(base.join("etc")).unwrap();
        fs_err::create_dir_all(base.join("proc")).unwrap();
        fs_err::create_dir_all(base.join("usr/lib")).unwrap();
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            base.join("proc/modules"),
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let sparse = fs_err::File::create(base.join("usr/lib/os-release")).unwrap();
        sparse.set_len(8 << 30).unwrap();
        symlink("/dev/zero", base.join("proc/version")).unwrap();
        symlink("/etc/hostname", base.join("etc/os-release")).unwrap();
        fs_err::write(base.join("etc/hostname"), "inside\n").unwrap();
        symlink("../../../../../../etc/passwd", base.join("etc/passwd-link")).unwrap();
        symlink("loop-b", base.join("etc/loop-a")).unwrap();
        symlink("loop-a", base.join("etc/loop-b")).unwrap();

        let root = Root::at(base);
        let started = Instant::now();
        assert_eq!(root.read("/proc/modules"), None, "a FIFO is not read");
        assert_eq!(
            root.read("/usr/lib/os-release"),
            None,
            "8 GiB is no os-release"
        );
        assert_eq!(root.read("/proc/version"), None, "/dev/zero is outside");
        assert_eq!(root.read("/etc/loop-a"), None);
        // An absolute link means the capture's own `/`; `..` stops at its top.
        assert_eq!(root.read("/etc/os-release").as_deref(), Some("inside\n"));
        assert_eq!(root.read("/etc/passwd-link"), None);
        assert!(started.elapsed() < Duration::from_secs(5));

        // The fleet reader: the same refusals for a plain path.
        let e = read_regular(&base.join("proc/modules"), MAX_REPORT).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_regular(&base.join("usr/lib/os-release"), MAX_REPORT).unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
        assert!(read_regular(Path::new("/dev/zero"), MAX_REPORT).is_err());
        assert_eq!(
            read_regular_text(&base.join("etc/hostname"), 100).unwrap(),
            "inside\n"
        );
    }

    #[test]
    fn links_inside_the_capture_resolve_inside_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        fs_err::create_dir_all(base.join("usr/local/cuda-13.0/bin")).unwrap();
        fs_err::write(base.join("usr/local/cuda-13.0/version.json"), "{}").unwrap();
        symlink("/usr/local/cuda-13.0", base.join("usr/local/cuda")).unwrap();
        let root = Root::at(base);
        assert!(root.is_dir("/usr/local/cuda"));
        assert_eq!(
            root.read("/usr/local/cuda/version.json").as_deref(),
            Some("{}")
        );
        assert_eq!(
            root.list("/usr/local/cuda"),
            vec![
                PathBuf::from("/usr/local/cuda/bin"),
                PathBuf::from("/usr/local/cuda/version.json")
            ]
        );
        assert_eq!(
            root.read_link("/usr/local/cuda"),
            Some(PathBuf::from("/usr/local/cuda-13.0"))
        );
        assert!(root.exists("/usr/local/cuda/bin"));
        assert!(!root.exists("/usr/local/cuda/nothing"));
        // On the live machine, links are the system's own and followed as such.
        let live = Root::live();
        symlink(base.join("usr/local/cuda-13.0"), base.join("live-link")).unwrap();
        assert!(live.is_dir(base.join("live-link")));
        assert_eq!(
            live.read(base.join("live-link/version.json")).as_deref(),
            Some("{}")
        );
    }
}
