//! Installing a prefix as one step: a lock on the prefix, a staging directory beside it (same
//! filesystem), and a rename at the end. Until `commit`, nothing under the prefix changes; if
//! anything fails (or Ctrl-C), dropping the transaction deletes the staging directory.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::receipt::Receipt;
use super::InstallError;

/// An exclusive lock on a prefix, held for the whole install.
#[derive(Debug)]
pub struct PrefixLock {
    _file: File,
    path: PathBuf,
}

impl PrefixLock {
    /// Locks `prefix` (through `.<name>.lock` beside it), waiting for another cudaup if needed.
    pub fn acquire(prefix: &Path, waiting: impl FnOnce(&str)) -> Result<Self, InstallError> {
        Ok(Self::take(prefix, Some(waiting))?.expect("waited for the lock"))
    }

    /// Locks `prefix` if no other cudaup holds it; `None` if one does. Creates nothing when the
    /// prefix's parent does not exist (there is nothing to protect there).
    pub fn try_acquire(prefix: &Path) -> Result<Option<Self>, InstallError> {
        match prefix.parent() {
            Some(parent) if parent.is_dir() => Self::take(prefix, None::<fn(&str)>),
            _ => Ok(None),
        }
    }

    /// The lock file may be removed by its holder (uninstall, a failed first install), so a
    /// lock taken on a file that is no longer at `path` protects nothing: it is taken again on
    /// the file that is there now.
    fn take(
        prefix: &Path,
        mut waiting: Option<impl FnOnce(&str)>,
    ) -> Result<Option<Self>, InstallError> {
        let (parent, name) = split(prefix)?;
        let path = parent.join(format!(".{name}.lock"));
        let file = loop {
            fs_err::create_dir_all(parent)?;
            let file = fs_err::OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)?
                .into_parts()
                .0;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let Some(waiting) = waiting.take() else {
                        return Ok(None);
                    };
                    let holder = fs_err::read_to_string(&path).unwrap_or_default();
                    waiting(holder.trim());
                    file.lock()?;
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
            }
            if same_file(&file, &path) {
                break file;
            }
        };
        use std::io::Write;
        let mut f = &file;
        let _ = f.set_len(0);
        let _ = write!(f, "pid {}", std::process::id());
        Ok(Some(Self { _file: file, path }))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the lock file while holding it (nothing is left of the prefix to protect); a
    /// waiter on it then locks the file afresh ([`PrefixLock::take`]).
    pub fn remove(self) {
        let _ = fs_err::remove_file(&self.path);
    }
}

fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), path.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn split(prefix: &Path) -> Result<(&Path, String), InstallError> {
    let name = prefix.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        InstallError::Prefix(format!("{}: not a usable prefix", prefix.display()))
    })?;
    let parent = prefix.parent().ok_or_else(|| {
        InstallError::Prefix(format!("{}: has no parent directory", prefix.display()))
    })?;
    Ok((parent, name.to_owned()))
}

/// A staging directory that becomes the prefix on commit.
#[derive(Debug)]
pub struct Transaction {
    staging: tempfile::TempDir,
    prefix: PathBuf,
}

impl Transaction {
    /// Starts one for `prefix`. Refuses a prefix that exists and was not installed by cudaup:
    /// cudaup never replaces files it did not put there.
    pub fn begin(prefix: &Path) -> Result<Self, InstallError> {
        Self::begin_with(prefix, || Ok(()))
    }

    /// [`Transaction::begin`], running `before` once the prefix is known to be usable and
    /// before anything is created beside it (the journal of the install goes there).
    pub fn begin_with(
        prefix: &Path,
        before: impl FnOnce() -> Result<(), InstallError>,
    ) -> Result<Self, InstallError> {
        Self::check_prefix(prefix)?;
        before()?;
        Self::start(prefix)
    }

    fn check_prefix(prefix: &Path) -> Result<(), InstallError> {
        if prefix.exists() {
            match Receipt::read(prefix)? {
                Some(_) => {}
                None if is_empty_dir(prefix) => {}
                None => {
                    return Err(InstallError::Prefix(format!(
                        "{} exists and was not installed by cudaup; choose another --prefix or move it away",
                        prefix.display()
                    )))
                }
            }
        }
        Ok(())
    }

    fn start(prefix: &Path) -> Result<Self, InstallError> {
        let (parent, name) = split(prefix)?;
        fs_err::create_dir_all(parent)?;
        clean_beside(prefix)?;
        let staging = tempfile::Builder::new()
            .prefix(&format!(".{name}.staging-"))
            .tempdir_in(parent)?;
        Ok(Self {
            staging,
            prefix: prefix.to_owned(),
        })
    }

    /// The directory to fill.
    pub fn staging(&self) -> &Path {
        self.staging.path()
    }

    /// Puts the staging directory in place of the prefix. An existing prefix is moved aside
    /// first and restored if the swap fails; it is deleted only once the new one is in place.
    pub fn commit(self) -> Result<(), InstallError> {
        let staging = self.staging.keep();
        let restore_staging = |e: std::io::Error| {
            let _ = fs_err::remove_dir_all(&staging);
            InstallError::from(e)
        };
        if is_empty_dir(&self.prefix) {
            fs_err::remove_dir(&self.prefix).map_err(restore_staging)?;
        }
        if self.prefix.exists() {
            let (parent, name) = split(&self.prefix)?;
            let old = parent.join(format!(".{name}.old-{}", std::process::id()));
            crate::world::fs::rename(&self.prefix, &old).map_err(restore_staging)?;
            if let Err(e) = crate::world::fs::rename(&staging, &self.prefix) {
                let _ = crate::world::fs::rename(&old, &self.prefix);
                let _ = fs_err::remove_dir_all(&staging);
                return Err(e.into());
            }
            remove_tree(&old)?;
        } else {
            crate::world::fs::rename(&staging, &self.prefix).map_err(restore_staging)?;
        }
        Ok(())
    }
}

/// What killed runs left beside `prefix`: staging directories (`.<name>.staging-*`) and a prefix
/// a killed commit set aside (`.<name>.old-*`). Only meaningful to act on under the prefix lock.
pub fn litter_beside(prefix: &Path) -> Vec<PathBuf> {
    let (Ok((parent, name)), true) = (split(prefix), prefix.parent().is_some_and(Path::is_dir))
    else {
        return Vec::new();
    };
    let Ok(rd) = fs_err::read_dir(parent) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with(&format!(".{name}.staging-")) || n.starts_with(&format!(".{name}.old-"))
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Under the prefix lock: removes the staging directories of killed runs, and puts back a prefix
/// a killed commit had set aside (or removes it, if the new prefix made it into place).
/// Returns what was removed.
pub fn clean_beside(prefix: &Path) -> Result<Vec<PathBuf>, InstallError> {
    let (_, name) = split(prefix)?;
    let mut removed = Vec::new();
    for path in litter_beside(prefix) {
        let n = path.file_name().unwrap_or_default().to_string_lossy();
        if n.starts_with(&format!(".{name}.old-")) && !prefix.exists() {
            crate::world::fs::rename(&path, prefix)?;
        } else {
            remove_tree(&path)?;
            removed.push(path);
        }
    }
    Ok(removed)
}

fn is_empty_dir(p: &Path) -> bool {
    fs_err::read_dir(p)
        .map(|mut d| d.next().is_none())
        .unwrap_or(false)
}

/// Removes a tree cudaup installed, making read-only directories writable first.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    match fs_err::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            make_writable(path);
            fs_err::remove_dir_all(path)
        }
        Err(e) => Err(e),
    }
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = path.symlink_metadata() {
        if meta.is_dir() {
            let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
            if let Ok(rd) = std::fs::read_dir(path) {
                for e in rd.flatten() {
                    make_writable(&e.path());
                }
            }
        }
    }
}
