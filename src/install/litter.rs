//! What killed runs leave behind, found and removed under the lock that owns each piece:
//! half-unpacked trees in `$CUDAUP_HOME/cache/unpacked/.tmp-*` (gigabytes with a real cuDNN;
//! owned by the lock on unpacking their key), staging or set-aside directories beside a
//! prefix (`.<name>.staging-*`, `.<name>.old-*`; owned by the prefix lock), and the temporary
//! files of receipt and env-script writes (fixed names, rewritten by their writer if removed
//! under it). A piece whose lock another cudaup holds is in use, not litter. Doctor counts what [`find`] returns, `repair
//! --fix litter` runs [`clean`], and installs clean their own on the next run.

use std::path::{Path, PathBuf};

use super::transaction::{self, PrefixLock};
use crate::fetch::Cache;
use crate::install::receipts::Receipts;

/// One leftover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Litter {
    /// Where it is.
    pub path: PathBuf,
    /// What it is, in words.
    pub what: &'static str,
    /// Bytes of the files in it.
    pub bytes: u64,
}

/// The prefixes that may have litter beside them: every registered toolkit and every install
/// journal, and every name
/// that has a lock, staging or set-aside directory under `$CUDAUP_HOME/toolkits/` (an install
/// killed before it registered anything).
fn prefixes(home: &Path, receipts: &Receipts) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = receipts
        .toolkits
        .iter()
        .chain(&receipts.pending)
        .map(|(_, r)| r.prefix.clone())
        .collect();
    let toolkits = crate::install::home::Home::at(home).toolkits();
    if let Ok(rd) = fs_err::read_dir(&toolkits) {
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = n.strip_prefix('.') else {
                continue;
            };
            let name = [".staging-", ".old-", ".lock"]
                .iter()
                .find_map(|marker| rest.find(marker).map(|at| &rest[..at]));
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                out.push(toolkits.join(name));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The lock file beside `prefix`, taken, when it is all an install killed before its journal
/// left (the prefix does not exist, no journal or receipt names it: nothing to protect); `None`
/// when there is none, another cudaup holds it, or it is not cudaup's.
fn orphan_lock(prefix: &Path) -> Option<(PathBuf, PrefixLock)> {
    let path = transaction::lock_path(prefix).ok()?;
    if path.symlink_metadata().is_err() || prefix.symlink_metadata().is_ok() {
        return None;
    }
    let lock = PrefixLock::try_acquire(prefix).ok()??;
    // Checked again under the lock: an install that took it meanwhile made the prefix.
    (!prefix.exists()).then_some((path, lock))
}

/// The bytes of the files under `path`, symlinks not followed.
pub(crate) fn size_of(path: &Path) -> u64 {
    let Ok(meta) = path.symlink_metadata() else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    fs_err::read_dir(path)
        .map(|rd| rd.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

fn beside_what(path: &Path) -> &'static str {
    if path.to_string_lossy().contains(".staging-") {
        "the staging directory of an interrupted install"
    } else {
        "a prefix an interrupted install set aside"
    }
}

/// Copies of cudaup that killed installs wrote into `bin/` ahead of putting them in place
/// (`self_copy::stage`). A live install's staged copy is in use: while another cudaup holds the
/// home's lock (every command that changes the home takes it) none is litter.
fn self_copies(home: &Path) -> Vec<PathBuf> {
    let lock = crate::install::home::Home::at(home).lock_path();
    if crate::world::fs::lock_held_by_another(&lock) {
        return Vec::new();
    }
    crate::install::self_copy::temporaries(home)
}

/// Temporary files of killed writes in `$CUDAUP_HOME` (receipts, journals, env scripts) and
/// beside the rc files cudaup hooked.
fn temporaries(home: &Path, receipts: &Receipts) -> Vec<PathBuf> {
    let mut out = super::receipt_file::temporaries(home);
    out.extend(
        receipts
            .shell
            .hooks
            .iter()
            .filter_map(|h| crate::shell::leftover_of(&h.file)),
    );
    out.extend(
        super::env::script_temporaries(home)
            .into_iter()
            .filter(|p| p.symlink_metadata().is_ok()),
    );
    out
}

/// Everything killed runs left that no running cudaup is using.
pub fn find(home: &Path, receipts: &Receipts) -> Vec<Litter> {
    let mut out = Vec::new();
    let cache = Cache::new(crate::install::home::Home::at(home).cache());
    for (tree, key) in cache.unpacking_trees() {
        if matches!(cache.try_lock_unpacking(&key), Ok(Some(_))) {
            out.push(Litter {
                bytes: size_of(&tree),
                path: tree,
                what: "a half-unpacked archive in the unpacked cache",
            });
        }
    }
    if let Some(intent) = super::env::Intent::read(home) {
        if !intent.toolkit_exists(home) {
            out.push(Litter {
                path: super::env::Intent::path(home),
                what:
                    "the plan of an environment step whose install never got its toolkit in place",
                bytes: size_of(&super::env::Intent::path(home)),
            });
            if let Some((path, _lock)) = intent.toolkit.as_deref().and_then(orphan_lock) {
                out.push(Litter {
                    bytes: size_of(&path),
                    path,
                    what: "the lock file of an install killed before it journaled anything",
                });
            }
        }
    }
    for path in temporaries(home, receipts) {
        out.push(Litter {
            bytes: size_of(&path),
            path,
            what: "a temporary file of an interrupted write",
        });
    }
    for path in self_copies(home) {
        out.push(Litter {
            bytes: size_of(&path),
            path,
            what: "a copy of cudaup an interrupted install wrote ahead",
        });
    }
    for prefix in prefixes(home, receipts) {
        let beside = transaction::litter_beside(&prefix);
        if beside.is_empty() || !matches!(PrefixLock::try_acquire(&prefix), Ok(Some(_))) {
            continue;
        }
        out.extend(beside.into_iter().map(|path| Litter {
            bytes: size_of(&path),
            what: beside_what(&path),
            path,
        }));
    }
    out
}

/// Removes what [`find`] would return, each piece under its lock (pieces in use are left).
/// A prefix a killed commit set aside is put back in place when the prefix is missing.
pub fn clean(home: &Path, receipts: &Receipts) -> std::io::Result<Vec<PathBuf>> {
    let mut removed =
        super::sweep_unpacking(&Cache::new(crate::install::home::Home::at(home).cache()))?;
    // Safe without a lock: a live writer whose temporary file goes writes it again
    // (`receipt_file::write_whole`).
    if let Some(intent) = super::env::Intent::read(home) {
        if !intent.toolkit_exists(home) {
            if let Some((path, lock)) = intent.toolkit.as_deref().and_then(orphan_lock) {
                lock.remove();
                removed.push(path);
            }
            super::env::Intent::done(home)?;
            removed.push(super::env::Intent::path(home));
        }
    }
    for path in temporaries(home, receipts)
        .into_iter()
        .chain(self_copies(home))
    {
        match fs_err::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => removed.push(path),
        }
    }
    for prefix in prefixes(home, receipts) {
        if transaction::litter_beside(&prefix).is_empty() {
            continue;
        }
        let Ok(Some(_lock)) = PrefixLock::try_acquire(&prefix) else {
            continue;
        };
        removed.extend(transaction::clean_beside(&prefix).map_err(std::io::Error::other)?);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_cleans_what_nobody_holds() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let key = format!("{}-l1", "a".repeat(64));
        let tmp = h.join(format!("cache/unpacked/.tmp-{key}-4242-0"));
        fs_err::create_dir_all(tmp.join("lib64")).unwrap();
        fs_err::write(tmp.join("lib64/libcudnn.so.9"), vec![0u8; 1000]).unwrap();
        let staging = h.join("toolkits/.cuda-13.0.2.staging-abc");
        fs_err::create_dir_all(&staging).unwrap();
        let receipts = Receipts::default();
        let found = find(h, &receipts);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].bytes, 1000);
        // While a cudaup unpacks that key, its tree is not litter.
        let cache = Cache::new(h.join("cache"));
        let held = cache.try_lock_unpacking(&key).unwrap().unwrap();
        assert_eq!(find(h, &receipts).len(), 1);
        drop(held);
        let removed = clean(h, &receipts).unwrap();
        assert_eq!(removed.len(), 2);
        assert!(!tmp.exists() && !staging.exists());
        assert!(find(h, &receipts).is_empty());
    }

    #[test]
    fn the_lock_of_an_install_killed_before_its_journal_goes_with_its_intent() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let prefix = h.join("opt/cuda");
        let intent = crate::install::env::Intent {
            toolkit: Some(prefix.clone()),
            shells: vec!["sh".into()],
            modify_path: true,
        };
        intent.record(h).unwrap();
        let lock = PrefixLock::acquire(&prefix, |_| {}).unwrap();
        let path = lock.path().to_owned();
        let receipts = Receipts::default();
        // Held (a live install): the intent is litter, the lock is not.
        assert_eq!(find(h, &receipts).len(), 1);
        drop(lock);
        let found = find(h, &receipts);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[1].path, path);
        assert!(path.exists(), "find removes nothing");
        let removed = clean(h, &receipts).unwrap();
        assert!(removed.contains(&path), "{removed:?}");
        assert!(!path.exists() && crate::install::env::Intent::read(h).is_none());
        // A file at the lock's name that is not cudaup's is never taken for one.
        intent.record(h).unwrap();
        fs_err::write(&path, "the user's notes\n").unwrap();
        assert_eq!(find(h, &receipts).len(), 1);
        clean(h, &receipts).unwrap();
        assert_eq!(fs_err::read_to_string(&path).unwrap(), "the user's notes\n");
        // Nor is the lock beside a prefix that exists.
        fs_err::remove_file(&path).unwrap();
        intent.record(h).unwrap();
        fs_err::create_dir_all(&prefix).unwrap();
        drop(PrefixLock::acquire(&prefix, |_| {}).unwrap());
        clean(h, &receipts).unwrap();
        assert!(path.exists());
    }

    /// A copy of cudaup a killed install staged in `bin/` is litter, and goes; one a live
    /// install (another process holding the home's lock) is writing is not; this process's own
    /// lock (repair holds it while it cleans) does not hide it.
    #[test]
    fn a_copy_of_cudaup_a_killed_install_staged_is_litter_unless_an_install_runs() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let home_ = crate::install::home::Home::at(h);
        fs_err::create_dir_all(home_.bin()).unwrap();
        let staged = home_.bin().join(".cudaup-Ab12Cd.tmp");
        fs_err::write(&staged, vec![0u8; 300]).unwrap();
        // Not the reserved names: the user's, never touched.
        let users = home_.bin().join("my-tool");
        fs_err::write(&users, "#!/bin/sh\n").unwrap();
        let receipts = Receipts::default();
        let found = find(h, &receipts);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].path.clone(), found[0].bytes),
            (staged.clone(), 300)
        );
        // Another process holds the home's lock (the file names its pid): in use.
        let lock = home_.lock_path();
        fs_err::write(&lock, "pid 1").unwrap();
        let other = std::fs::File::open(&lock).unwrap();
        other.lock().unwrap();
        assert!(find(h, &receipts).is_empty());
        assert!(clean(h, &receipts).unwrap().is_empty());
        assert!(staged.exists());
        drop(other);
        // This process holding it, as repair does: litter, cleaned.
        let mine = home_.lock(false, |_| {}).unwrap();
        assert_eq!(find(h, &receipts).len(), 1);
        assert_eq!(clean(h, &receipts).unwrap(), vec![staged.clone()]);
        drop(mine);
        assert!(!staged.exists() && users.exists());
    }
}
