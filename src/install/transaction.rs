//! Installing a prefix as one step: a lock on the prefix, a staging directory beside it (same
//! filesystem), and a rename at the end. Until `commit`, nothing under the prefix changes; if
//! anything fails (or Ctrl-C), dropping the transaction deletes the staging directory.

use std::path::{Path, PathBuf};

use super::receipt::Receipt;
use super::InstallError;
use crate::world::fs::{HeldLock, LockError};

/// An exclusive lock on a prefix, held for the whole install: `.<name>.lock` beside it, taken
/// through [`crate::world::fs::lock_file`] (no link followed, nothing clobbered).
#[derive(Debug)]
pub struct PrefixLock {
    lock: HeldLock,
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

    fn take(
        prefix: &Path,
        waiting: Option<impl FnOnce(&str)>,
    ) -> Result<Option<Self>, InstallError> {
        let path = lock_path(prefix)?;
        match crate::world::fs::lock_file(&path, waiting) {
            Ok(taken) => Ok(taken.held().map(|lock| Self { lock })),
            Err(LockError::Io { source, .. }) => Err(InstallError::Io(std::io::Error::new(
                source.kind(),
                format!("could not lock {}: {source}", path.display()),
            ))),
            // Something not cudaup's stands at the lock's name: the prefix is not usable.
            Err(refused) => Err(InstallError::Prefix(format!(
                "{}: {refused}",
                prefix.display()
            ))),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        self.lock.path()
    }

    /// Whether taking the lock created its file (none stood beside the prefix before).
    pub fn created(&self) -> bool {
        self.lock.created()
    }

    /// Removes the lock file while holding it (nothing is left of the prefix to protect); a
    /// waiter on it then locks the file afresh ([`crate::world::fs::lock_file`]).
    pub fn remove(self) {
        self.lock.remove();
    }
}

/// The lock file of `prefix`: `.<name>.lock` beside it.
pub fn lock_path(prefix: &Path) -> Result<PathBuf, InstallError> {
    let (parent, name) = split(prefix)?;
    Ok(parent.join(format!(".{name}.lock")))
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

/// The checks every install makes of its prefix before anything happens, the dry run's too:
/// not `/` (no parent), not inside the home's own state folders (`receipts/`, `bin/`,
/// `manifests.d/`, the cache, the logs) nor the home itself, and not an existing directory
/// cudaup did not install ([`Transaction::check_prefix`]).
pub fn usable_prefix(
    prefix: &Path,
    home: Option<&crate::install::home::Home>,
) -> Result<(), InstallError> {
    let prefix = lexical(&std::path::absolute(prefix)?);
    split(&prefix)?;
    if let Some(home) = home {
        let root = lexical(&std::path::absolute(home.root())?);
        let home = crate::install::home::Home::new(root);
        let state = [
            home.receipts(),
            home.bin(),
            home.manifests_d(),
            home.manifests_link(),
            home.cache(),
            home.logs(),
            home.cdi(),
            home.bench(),
        ];
        if prefix == home.root() || state.iter().any(|s| prefix.starts_with(s)) {
            return Err(InstallError::Prefix(format!(
                "{}: inside cudaup's own state in {} (receipts, its copy, the catalog, the cache, logs): choose a --prefix outside them",
                crate::model::text::escape_controls(&prefix.display().to_string()),
                home.root().display()
            )));
        }
    }
    Transaction::check_prefix(&prefix)
}

/// `path` with `.` and `..` folded away (without looking at the file system).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
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

    /// Refuses a prefix that exists, is not empty and has no receipt of cudaup.
    pub fn check_prefix(prefix: &Path) -> Result<(), InstallError> {
        split(prefix)?;
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
            crate::world::fs::swap_dir(&staging, &self.prefix, &old).map_err(restore_staging)?;
            crate::world::checkpoint::reach("toolkit-swapped");
            remove_tree(&old)?;
        } else {
            crate::world::fs::publish_dir(&staging, &self.prefix).map_err(restore_staging)?;
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
            crate::world::fs::publish_dir(&path, prefix)?;
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
    if let Ok(meta) = path.symlink_metadata() {
        if meta.is_dir() {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
            }
            // Windows has no directory write bit; a read-only attribute is what blocks there.
            #[cfg(not(unix))]
            {
                let mut perms = meta.permissions();
                #[allow(clippy::permissions_set_readonly_false)] // undoes cudaup's own
                perms.set_readonly(false);
                let _ = std::fs::set_permissions(path, perms);
            }
            if let Ok(rd) = std::fs::read_dir(path) {
                for e in rd.flatten() {
                    make_writable(&e.path());
                }
            }
        }
    }
}
