//! Host files cudaup changes for containers (`daemon.json`, the toolkit's `config.toml`,
//! `containers.conf`, the CDI spec, stale apt lists), each with a receipt that lets
//! [`undo`] put the exact bytes back — the way the rc-file hook works (`shell::rc`). The journal
//! itself knows nothing of containers: `container setup` writes it, uninstall reads it.
//!
//! The receipt (`$CUDAUP_HOME/receipts/container/host-files.json`) keeps, per file, its bytes before
//! cudaup's first change (or that it did not exist) and the sha256 of what cudaup wrote. It is
//! written *before* the file, so a run killed in between leaves a receipt that names a change,
//! never a change no receipt names. Undo restores a file only while it still holds what cudaup
//! wrote; one changed since is left alone and named.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One file's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEdit {
    /// The file, as written (under `--root` in tests).
    pub path: PathBuf,
    /// Its bytes before cudaup's first change, as text; `None`: it did not exist.
    pub before: Option<String>,
    /// sha256 (hex) of what cudaup last wrote; `None`: cudaup removed the file.
    pub after_sha256: Option<String>,
    /// The permission bits it had (restored with the bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
    /// Directories made to hold it, outermost first: removed on undo while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created_dirs: Vec<PathBuf>,
    /// What the change is for (`CDI spec for Podman`), for messages.
    pub what: String,
}

/// The receipt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// Files changed, in the order first changed.
    pub files: Vec<FileEdit>,
}

/// Why an edit could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The file is not text: cudaup keeps the old bytes as text in its receipt.
    #[error("{0} is not UTF-8 text: cudaup changes only text files it can put back byte for byte")]
    NotText(PathBuf),
    /// The receipt is not one cudaup wrote whole (truncated, edited, garbage): which files it
    /// changed cannot be told, so none is touched.
    #[error("{path} is damaged ({message}): cudaup cannot tell which host files container setup changed, so it changes none{named}; check them by hand, then remove the receipt", path = .path.display(), named = if .named.is_empty() { String::new() } else { format!(" (the receipt still names {})", .named.join(", ")) })]
    Damaged {
        /// The receipt.
        path: PathBuf,
        /// What does not parse.
        message: String,
        /// The file paths that can still be read from it.
        named: Vec<String>,
    },
    /// Host files (`/etc/docker/daemon.json`, `/etc/cdi`, …) are changed on Linux only.
    #[error("{path}: cudaup changes host files for containers on Linux only, not on {os}", path = .path.display())]
    LinuxOnly {
        /// The file it was asked to change.
        path: PathBuf,
        /// The system it was asked on (`std::env::consts::OS`).
        os: &'static str,
    },
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> EditError + '_ {
    move |source| EditError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Receipt {
    /// Where it is kept: in a folder of its own under `receipts/`, whose top level holds the
    /// toolkit and venv receipts that other readers parse.
    pub fn path(home: &Path) -> PathBuf {
        crate::install::home::Home::at(home).container_receipt()
    }

    /// Reads it; absent means nothing changed. One that does not parse is
    /// [`EditError::Damaged`], naming the paths still legible in it.
    pub fn read(home: &Path) -> Result<Receipt, EditError> {
        let path = Self::path(home);
        match fs_err::read(&path) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| EditError::Damaged {
                named: legible_paths(&String::from_utf8_lossy(&b)),
                path,
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Receipt::default()),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Writes it whole, or removes it when empty.
    pub fn write(&self, home: &Path) -> Result<(), EditError> {
        let path = Self::path(home);
        if self.files.is_empty() {
            return match fs_err::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&path)(e)),
                _ => {
                    // The folder too (uninstall removes `receipts/` only once it is empty).
                    let _ = fs_err::remove_dir(path.parent().expect("has a parent"));
                    Ok(())
                }
            };
        }
        let dir = path.parent().expect("has a parent");
        fs_err::create_dir_all(dir).map_err(io(dir))?;
        crate::install::receipt_file::write_whole(
            &path,
            &serde_json::to_vec_pretty(self).expect("serialises"),
        )
        .map_err(io(&path))
    }
}

/// The `"path": "…"` values still legible in a damaged receipt, for the message.
fn legible_paths(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in text.split("\"path\"").skip(1) {
        let Some(rest) = part.trim_start().strip_prefix(':') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        if let Some(end) = rest.find('"') {
            let p: String = rest[..end].chars().filter(|c| !c.is_control()).collect();
            if !p.is_empty() && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Why a record cannot prove what undoing it would touch: a path that is not absolute or climbs
/// (`..`), a digest that is not one, a directory to remove that does not hold the file, or a
/// second record of the same file. Such a record is left alone, never acted on.
fn unproven(edit: &FileEdit, all: &[FileEdit]) -> Option<String> {
    use std::path::Component;
    if !edit.path.is_absolute() || edit.path.components().any(|c| c == Component::ParentDir) {
        return Some("its path is not an absolute path without `..`".into());
    }
    if edit
        .after_sha256
        .as_deref()
        .is_some_and(|h| h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Some("its digest of what cudaup wrote is not a sha256".into());
    }
    if let Some(d) = edit
        .created_dirs
        .iter()
        .find(|d| !(edit.path.starts_with(d) && edit.path != **d))
    {
        return Some(format!(
            "it names {} as a directory made for it, which does not hold it",
            d.display()
        ));
    }
    if all.iter().filter(|f| f.path == edit.path).count() > 1 {
        return Some("the receipt records it twice".into());
    }
    None
}

/// Writes `bytes` to `path` (or removes it, for `None`), recording the change in `home`'s
/// receipt first. Writing what is already there changes nothing and records nothing.
pub fn apply(
    home: &Path,
    path: &Path,
    bytes: Option<&[u8]>,
    what: &str,
) -> Result<bool, EditError> {
    if !cfg!(target_os = "linux") {
        return Err(EditError::LinuxOnly {
            path: path.to_owned(),
            os: std::env::consts::OS,
        });
    }
    let current = match fs_err::read(path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(path)(e)),
    };
    if current.as_deref() == bytes {
        return Ok(false);
    }
    let mut receipt = Receipt::read(home)?;
    let created_dirs = missing_dirs(path);
    match receipt.files.iter_mut().find(|f| f.path == path) {
        Some(edit) => {
            edit.after_sha256 = bytes.map(sha);
        }
        None => {
            let before = match &current {
                Some(b) => Some(
                    String::from_utf8(b.clone()).map_err(|_| EditError::NotText(path.into()))?,
                ),
                None => None,
            };
            let mode = mode_of(path);
            receipt.files.push(FileEdit {
                path: path.to_path_buf(),
                before,
                after_sha256: bytes.map(sha),
                mode,
                created_dirs: created_dirs.clone(),
                what: what.to_owned(),
            });
        }
    }
    receipt.write(home)?;
    match bytes {
        Some(b) => {
            for d in &created_dirs {
                fs_err::create_dir(d).or_else(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        Ok(())
                    } else {
                        Err(io(d)(e))
                    }
                })?;
            }
            write_atomically(path, b)?;
        }
        None => fs_err::remove_file(path).map_err(io(path))?,
    }
    Ok(true)
}

/// Directories above `path` that do not exist, outermost first.
/// The permission bits of `path` (none where the system has no Unix modes).
fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

/// Through [`crate::world::fs::write_atomic`] onto the file a symlink points at (the link stays),
/// keeping the old file's mode and owner; a new file gets 0644 (a CDI spec others cannot read
/// fails rootless engines, toolkit #146). Fsynced: these are system files.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EditError> {
    let target = fs_err::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    crate::world::fs::write_atomic(
        &target,
        bytes,
        crate::world::fs::Temp::Fixed,
        crate::world::fs::Durability::Fsync,
    )
    .map_err(io(&target))
}

/// What [`undo`] did with one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Undone {
    /// The file.
    pub path: PathBuf,
    /// `restored`, `removed`, `unchanged` (cudaup's change was never written), or `kept`.
    pub action: &'static str,
    /// Why it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Puts every recorded file back, newest change first; files changed since are kept (and stay
/// in the receipt so a later undo can try again once they are put right).
pub fn undo(home: &Path, dry_run: bool) -> Result<Vec<Undone>, EditError> {
    let mut receipt = Receipt::read(home)?;
    let mut done = Vec::new();
    let mut keep = Vec::new();
    for edit in receipt.files.iter().rev() {
        if let Some(why) = unproven(edit, &receipt.files) {
            keep.push(edit.clone());
            done.push(Undone {
                path: edit.path.clone(),
                action: "kept",
                why: Some(format!(
                    "the receipt's record of it is damaged ({why}); cudaup leaves it as it is"
                )),
            });
            continue;
        }
        // What cudaup wrote is a regular file: anything else there now (a FIFO would block the
        // read, a device never ends) is not its to take back.
        if std::fs::metadata(&edit.path).is_ok_and(|m| !m.is_file()) {
            keep.push(edit.clone());
            done.push(Undone {
                path: edit.path.clone(),
                action: "kept",
                why: Some(format!(
                    "it is no longer a regular file ({}); put it back by hand",
                    edit.what
                )),
            });
            continue;
        }
        let current = match fs_err::read(&edit.path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(&edit.path)(e)),
        };
        let ours = current.as_deref().map(sha) == edit.after_sha256;
        let is_before = current.as_deref() == edit.before.as_deref().map(str::as_bytes);
        let action = if is_before {
            "unchanged"
        } else if !ours {
            keep.push(edit.clone());
            done.push(Undone {
                path: edit.path.clone(),
                action: "kept",
                why: Some(format!(
                    "it changed after cudaup wrote it ({}); put it back by hand",
                    edit.what
                )),
            });
            continue;
        } else if edit.before.is_some() {
            "restored"
        } else {
            "removed"
        };
        if !dry_run {
            match &edit.before {
                Some(text) if !is_before => {
                    write_atomically(&edit.path, text.as_bytes())?;
                    #[cfg(unix)]
                    if let Some(mode) = edit.mode {
                        use std::os::unix::fs::PermissionsExt;
                        fs_err::set_permissions(&edit.path, std::fs::Permissions::from_mode(mode))
                            .map_err(io(&edit.path))?;
                    }
                }
                None if current.is_some() => {
                    fs_err::remove_file(&edit.path).map_err(io(&edit.path))?
                }
                _ => {}
            }
            for d in edit.created_dirs.iter().rev() {
                // Only while empty: anything else put there stays.
                let _ = fs_err::remove_dir(d);
            }
        }
        done.push(Undone {
            path: edit.path.clone(),
            action,
            why: None,
        });
    }
    if !dry_run {
        keep.reverse();
        receipt.files = keep;
        receipt.write(home)?;
    }
    Ok(done)
}

// Host files are edited on Linux only (`apply` refuses elsewhere, tested below).
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_changed_file_comes_back_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let file = dir.path().join("etc/docker/daemon.json");
        fs_err::create_dir_all(file.parent().unwrap()).unwrap();
        let original = b"{\r\n  \"log-driver\": \"journald\"   \r\n}";
        fs_err::write(&file, original).unwrap();
        assert!(apply(&home, &file, Some(b"{}\n"), "daemon.json").unwrap());
        // A second change keeps the first `before`.
        assert!(apply(&home, &file, Some(b"{\"a\":1}\n"), "daemon.json").unwrap());
        assert!(!apply(&home, &file, Some(b"{\"a\":1}\n"), "daemon.json").unwrap());
        let spec = dir.path().join("etc/cdi/x/cudaup-nvidia.json");
        apply(&home, &spec, Some(b"{}"), "CDI spec").unwrap();
        assert_eq!(
            fs_err::metadata(&spec).unwrap().permissions().mode() & 0o777,
            0o644
        );
        let undone = undo(&home, false).unwrap();
        assert_eq!(
            undone.iter().map(|u| u.action).collect::<Vec<_>>(),
            ["removed", "restored"]
        );
        assert_eq!(fs_err::read(&file).unwrap(), original);
        assert!(!dir.path().join("etc/cdi").exists());
        assert!(!Receipt::path(&home).exists());
    }

    #[test]
    fn a_file_changed_since_is_kept_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let file = dir.path().join("containers.conf");
        apply(&home, &file, Some(b"[engine]\n"), "containers.conf").unwrap();
        fs_err::write(&file, "[engine]\n# mine\n").unwrap();
        let undone = undo(&home, false).unwrap();
        assert_eq!(undone[0].action, "kept");
        assert_eq!(fs_err::read_to_string(&file).unwrap(), "[engine]\n# mine\n");
        assert_eq!(Receipt::read(&home).unwrap().files.len(), 1);
    }

    #[test]
    fn a_removed_file_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let list = dir.path().join("nvidia-docker.list");
        fs_err::write(
            &list,
            "deb https://nvidia.github.io/nvidia-docker/ubuntu22.04/$(ARCH) /\n",
        )
        .unwrap();
        apply(&home, &list, None, "stale apt list").unwrap();
        assert!(!list.exists());
        undo(&home, false).unwrap();
        assert!(fs_err::read_to_string(&list)
            .unwrap()
            .contains("nvidia-docker"));
    }

    /// A receipt that does not parse is refused whole, naming what it still shows; a record that
    /// cannot prove what it would touch is kept, and the others are undone.
    #[test]
    fn a_damaged_receipt_touches_nothing_it_cannot_prove() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let spec = dir.path().join("etc/cdi/cudaup-nvidia.json");
        apply(&home, &spec, Some(b"{}"), "CDI spec").unwrap();
        let path = Receipt::path(&home);
        let whole = fs_err::read_to_string(&path).unwrap();
        fs_err::write(&path, &whole[..whole.len() / 2]).unwrap();
        match undo(&home, false).unwrap_err() {
            EditError::Damaged { named, .. } => {
                assert_eq!(named, vec![spec.display().to_string()])
            }
            other => panic!("{other}"),
        }
        assert!(spec.is_file(), "nothing removed");

        // Parsed, but a forged record: a file elsewhere with its digest, a relative path, a
        // directory that does not hold the file.
        let victim = dir.path().join("victim");
        fs_err::write(&victim, "mine").unwrap();
        let mut r: Receipt = serde_json::from_str(&whole).unwrap();
        let forged = |path: PathBuf, dirs: Vec<PathBuf>| FileEdit {
            path,
            before: None,
            after_sha256: Some(sha(b"mine")),
            mode: None,
            created_dirs: dirs,
            what: "forged".into(),
        };
        r.files.push(forged("victim".into(), vec![]));
        r.files
            .push(forged(victim.clone(), vec![dir.path().join("elsewhere")]));
        r.write(&home).unwrap();
        let undone = undo(&home, false).unwrap();
        let kept: Vec<_> = undone.iter().filter(|u| u.action == "kept").collect();
        assert_eq!(kept.len(), 2, "{undone:#?}");
        assert!(kept
            .iter()
            .all(|u| u.why.as_deref().is_some_and(|w| w.contains("damaged"))));
        assert_eq!(fs_err::read_to_string(&victim).unwrap(), "mine");
        assert!(!spec.exists(), "the provable record is undone");
        assert_eq!(Receipt::read(&home).unwrap().files.len(), 2);
    }

    use std::os::unix::fs::PermissionsExt;
}

#[cfg(all(test, not(target_os = "linux")))]
mod refused {
    use super::*;

    /// Issue 43: off Linux, an edit is refused with a typed error before anything is read or
    /// written: neither the file nor a receipt appears.
    #[test]
    fn an_edit_off_linux_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let file = dir.path().join("etc").join("daemon.json");
        let err = apply(&home, &file, Some(b"{}"), "daemon.json").unwrap_err();
        assert!(
            matches!(&err, EditError::LinuxOnly { path, .. } if *path == file),
            "{err}"
        );
        assert!(err.to_string().contains("on Linux only"), "{err}");
        assert!(!file.exists() && !home.exists());
        assert!(undo(&home, false).unwrap().is_empty());
    }
}
