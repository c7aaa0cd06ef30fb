//! Putting the copy in place ([`ensure`], [`install`]), planning it ([`plan`]) and taking it
//! out ([`remove`]).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::receipt::sync_dir;
use super::stage::Staged;
use super::{
    bin_dir, cargo_managed, inspect, receipt_path, target, Found, Running, SelfReceipt, Stamp,
    TEMP_PREFIX, VERSION,
};
use crate::world::checkpoint;
use crate::world::process::Process;

/// What [`ensure`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Copied where there was none.
    Installed,
    /// An earlier copy of cudaup's was replaced.
    Replaced,
    /// The copy there has this binary's bytes already.
    Unchanged,
    /// This binary is the installed copy.
    Running,
    /// `cargo install` manages this binary: nothing was copied.
    CargoManaged,
    /// The OS did not say which binary runs: nothing was copied.
    Unknown,
}

/// The installed copy after [`ensure`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Installed {
    /// `$CUDAUP_HOME/bin/cudaup` — or, when cargo manages cudaup, the binary cargo installed.
    pub path: PathBuf,
    /// What happened.
    pub action: Action,
    /// The version now at `path`.
    pub version: String,
    /// Its sha256 (absent when nothing was copied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The version replaced, when the receipt named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_version: Option<String>,
    /// An earlier copy of cudaup's that was taken out of cargo's way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<PathBuf>,
}

impl Installed {
    /// Whether `$CUDAUP_HOME/bin` holds cudaup now, so the env scripts put it on PATH.
    pub fn in_home(&self) -> bool {
        matches!(
            self.action,
            Action::Installed | Action::Replaced | Action::Unchanged | Action::Running
        )
    }

    /// Whether the disk changed.
    pub fn changed(&self) -> bool {
        matches!(self.action, Action::Installed | Action::Replaced) || self.removed.is_some()
    }
}

/// Why the copy could not be put in place.
#[derive(Debug, thiserror::Error)]
pub enum SelfCopyError {
    /// A file cudaup did not write stands where the copy goes.
    #[error("{} is not a copy cudaup installed: {why}; it is left as it is", path.display())]
    Foreign {
        /// The path.
        path: PathBuf,
        /// Why it is not cudaup's.
        why: String,
    },
    /// Reading the binary or writing the copy failed.
    #[error("could not copy cudaup to {}: {source}", path.display())]
    Io {
        /// The installed copy's path.
        path: PathBuf,
        /// The underlying error (from `fs_err`, so it names the file).
        #[source]
        source: io::Error,
    },
}

impl SelfCopyError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            SelfCopyError::Foreign { path, .. } => format!(
                "cudaup never overwrites a file it did not write. If that one is yours and you \
                 want cudaup there, move it away (mv {0} {0}.old) and run cudaup again; to keep \
                 it, choose another home for cudaup (--home DIR)",
                path.display()
            ),
            SelfCopyError::Io { path, .. } => format!(
                "check that {} is writable and has room, then run the same command again: \
                 cudaup's copy was left as it was, and what this run installed before it stays \
                 installed (the re-run finishes the copy)",
                path.parent().unwrap_or(path).display()
            ),
        }
    }
}

/// What [`ensure`] will do, worked out without changing anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The installed copy's path — or, when cargo manages cudaup, cargo's binary.
    pub path: PathBuf,
    /// What will happen.
    pub action: Action,
    /// The version a replacement replaces, when the receipt names it.
    pub previous_version: Option<String>,
    /// An earlier copy of cudaup's that will be taken out of cargo's way.
    pub remove: Option<PathBuf>,
}

impl Planned {
    /// Whether [`ensure`] will change the disk.
    pub fn changes(&self) -> bool {
        matches!(self.action, Action::Installed | Action::Replaced) || self.remove.is_some()
    }

    /// Whether `$CUDAUP_HOME/bin` will hold cudaup.
    pub fn in_home(&self) -> bool {
        matches!(
            self.action,
            Action::Installed | Action::Replaced | Action::Unchanged | Action::Running
        )
    }

    /// Whether there is something to do: the copy changes, or the env scripts do not put its
    /// directory on PATH yet (or still do, after cargo took over).
    pub fn pending(&self, home: &Path) -> bool {
        let want = self.in_home().then(|| bin_dir(home));
        self.changes() || crate::install::receipts::Active::read(home).cudaup_bin != want
    }
}

/// What [`ensure`] would do, or the error it would give, changing nothing: install checks this
/// before it changes anything, and the dry run and the wizard's preview show it.
pub fn plan(process: &Process, home: &Path) -> Result<Planned, SelfCopyError> {
    let planned = |path, action, previous_version, remove| Planned {
        path,
        action,
        previous_version,
        remove,
    };
    let Some(running) = Running::of(process) else {
        return Ok(planned(target(home), Action::Unknown, None, None));
    };
    let fail = |source| io_error(home, source);
    if let Some(cargo) = cargo_managed(process, running.path()) {
        let remove = match SelfReceipt::read(home) {
            Some(_) => match inspect(home, None).map_err(fail)? {
                Found::Ours(_) => Some(target(home)),
                _ => None,
            },
            None => None,
        };
        return Ok(planned(cargo, Action::CargoManaged, None, remove));
    }
    Ok(match inspect(home, Some(&running)).map_err(fail)? {
        Found::Foreign(why) => {
            return Err(SelfCopyError::Foreign {
                path: target(home),
                why,
            })
        }
        Found::Absent => planned(target(home), Action::Installed, None, None),
        Found::Running => planned(target(home), Action::Running, None, None),
        Found::Ours(c) if c.current => planned(target(home), Action::Unchanged, None, None),
        Found::Ours(c) => planned(target(home), Action::Replaced, c.version, None),
    })
}

/// Puts the running binary at `target(home)`: copied where there is none, replacing an earlier
/// copy of cudaup's, left alone when it has the same bytes, refused over anything else.
pub fn ensure(process: &Process, home: &Path) -> Result<Installed, SelfCopyError> {
    ensure_staged(process, home, None)
}

/// [`ensure`], with the copy's bytes already written by [`super::stage`] while the install's
/// steps ran: every decision is still made here, now; a staged copy not needed is removed.
pub fn ensure_staged(
    process: &Process,
    home: &Path,
    staged: Option<Staged>,
) -> Result<Installed, SelfCopyError> {
    let Some(running) = Running::of(process) else {
        tracing::warn!("the OS did not say which binary is running: cudaup did not copy itself");
        return Ok(Installed {
            path: target(home),
            action: Action::Unknown,
            version: VERSION.to_owned(),
            sha256: None,
            previous_version: None,
            removed: None,
        });
    };
    if let Some(cargo) = cargo_managed(process, running.path()) {
        return step_aside(home, cargo);
    }
    install_staged(home, &running, staged)
}

/// [`ensure`] for a binary cargo manages: no copy, and an earlier copy of cudaup's removed.
fn step_aside(home: &Path, cargo: PathBuf) -> Result<Installed, SelfCopyError> {
    let removed = match remove(home).map_err(|source| io_error(home, source))? {
        Removed::Removed(path) => Some(path),
        _ => None,
    };
    Ok(Installed {
        path: cargo,
        action: Action::CargoManaged,
        version: VERSION.to_owned(),
        sha256: None,
        previous_version: None,
        removed,
    })
}

/// Copies `running` to `target(home)` under the ownership rules of the module.
pub fn install(home: &Path, running: &Running) -> Result<Installed, SelfCopyError> {
    install_staged(home, running, None)
}

/// [`install`], using `staged` for the bytes when a copy is to be made.
fn install_staged(
    home: &Path,
    running: &Running,
    staged: Option<Staged>,
) -> Result<Installed, SelfCopyError> {
    let target = target(home);
    let fail = |source| io_error(home, source);
    sweep_temporaries(&bin_dir(home), staged.as_ref().map(Staged::path));
    let found = inspect(home, Some(running)).map_err(fail)?;
    let done = |action, sha256: String, previous_version| Installed {
        path: target.clone(),
        action,
        version: VERSION.to_owned(),
        sha256: Some(sha256),
        previous_version,
        removed: None,
    };
    match found {
        Found::Foreign(why) => Err(SelfCopyError::Foreign {
            path: target.clone(),
            why,
        }),
        Found::Running => {
            let sha256 = running.sha256().map_err(fail)?.to_owned();
            let size = running.size().map_err(fail)?;
            record_current(home, running, &sha256, size).map_err(fail)?;
            Ok(done(Action::Running, sha256, None))
        }
        Found::Ours(copy) if copy.current => {
            record_current(home, running, &copy.sha256, copy.size).map_err(fail)?;
            Ok(done(Action::Unchanged, copy.sha256, None))
        }
        Found::Ours(copy) => {
            let sha256 = put_in_place(home, running, Some(copy.sha256), staged).map_err(fail)?;
            Ok(done(Action::Replaced, sha256, copy.version))
        }
        Found::Absent => {
            let sha256 = put_in_place(home, running, None, staged).map_err(fail)?;
            Ok(done(Action::Installed, sha256, None))
        }
    }
}

/// Rewrites the receipt when it does not already describe exactly the copy that is there.
fn record_current(home: &Path, running: &Running, sha256: &str, size: u64) -> io::Result<()> {
    let target = target(home);
    let stamp = Stamp::of(&fs_err::metadata(&target)?);
    let fine = SelfReceipt::read(home).is_some_and(|r| {
        r.path == target
            && r.sha256 == sha256
            && r.replacing.is_none()
            && r.version == VERSION
            && r.size == size
            && r.stamp == stamp
    });
    if fine {
        return Ok(());
    }
    let mut receipt = receipt_for(&target, running, sha256, size, None);
    receipt.stamp = stamp;
    receipt.write(home)
}

fn receipt_for(
    target: &Path,
    running: &Running,
    sha256: &str,
    size: u64,
    replacing: Option<String>,
) -> SelfReceipt {
    SelfReceipt {
        schema_version: 1,
        path: target.to_owned(),
        sha256: sha256.to_owned(),
        size,
        version: VERSION.to_owned(),
        source: running.path().to_owned(),
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        replacing,
        stamp: None,
    }
}

/// The copy itself: temporary file (hashed as written, 0755, fsynced; or the one `staged`
/// wrote), the receipt, the rename, the directory's fsync, and the receipt again without
/// `replacing`. Returns the new sha256.
fn put_in_place(
    home: &Path,
    running: &Running,
    replacing: Option<String>,
    staged: Option<Staged>,
) -> io::Result<String> {
    let target = target(home);
    let dir = bin_dir(home);
    let (temp, sha256, size) = match staged {
        Some(staged) => staged.take(),
        None => write_temp(&dir, running)?,
    };
    checkpoint::reach("self-copy-written");
    // The receipt goes first: from here on, whichever copy a crash leaves at the path is one
    // the receipt vouches for (the old one as `replacing`, or the new one).
    let mut receipt = receipt_for(&target, running, &sha256, size, replacing);
    receipt.write(home)?;
    checkpoint::reach("self-copy-recorded");
    crate::world::fs::persist(temp, &target)?;
    sync_dir(&dir);
    checkpoint::reach("self-copy-renamed");
    // Final: nothing is being replaced any more, and the stamp spares later checks a rehash.
    receipt.replacing = None;
    receipt.stamp = Stamp::of(&fs_err::metadata(&target)?);
    receipt.write(home)?;
    Ok(sha256)
}

/// The running binary's bytes in a temporary file in `dir` (made if missing): hashed as they
/// are written, mode 0755, fsynced. Returns it with its sha256 and size.
pub(super) fn write_temp(
    dir: &Path,
    running: &Running,
) -> io::Result<(tempfile::NamedTempFile, String, u64)> {
    fs_err::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{e} (a temporary file in {})", dir.display()),
            )
        })?;
    let mut source = fs_err::File::open(running.path())?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = source.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        temp.write_all(&buf[..n])?;
        size += n as u64;
    }
    let sha256 = hex::encode(hasher.finalize());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        temp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    temp.as_file().sync_all()?;
    Ok((temp, sha256, size))
}

/// What [`remove`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    /// The copy was removed.
    Removed(PathBuf),
    /// A file that is not cudaup's copy was left, and why.
    Kept(PathBuf, String),
    /// There was no copy.
    Nothing,
}

/// Removes the installed copy if the receipt vouches for it, then the receipt, then `bin/` if it
/// is empty. A file the receipt does not vouch for stays. On Linux this works from the copy
/// itself: a running binary's file can be unlinked.
pub fn remove(home: &Path) -> io::Result<Removed> {
    let target = target(home);
    let dir = bin_dir(home);
    sweep_temporaries(&dir, None);
    let found = match SelfReceipt::read(home) {
        Some(_) => inspect(home, None)?,
        // Without a receipt nothing vouches for a file there.
        None => match fs_err::symlink_metadata(&target) {
            Ok(_) => Found::Foreign("no receipt of cudaup's names it".into()),
            Err(_) => Found::Absent,
        },
    };
    let out = match found {
        Found::Ours(_) | Found::Running => {
            fs_err::remove_file(&target)?;
            Removed::Removed(target)
        }
        Found::Foreign(why) => Removed::Kept(target, why),
        Found::Absent => Removed::Nothing,
    };
    match fs_err::remove_file(receipt_path(home)) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let _ = fs_err::remove_dir(&dir);
    Ok(out)
}

/// Removes temporary files an earlier, killed copy left in `dir` (names cudaup reserves), all
/// but `keep` (this run's staged copy).
fn sweep_temporaries(dir: &Path, keep: Option<&Path>) {
    for path in temporaries_in(dir) {
        if keep != Some(path.as_path()) {
            let _ = fs_err::remove_file(path);
        }
    }
}

/// The temporary files of copies in `$CUDAUP_HOME/bin` (a copy killed while it was written or
/// staged): names cudaup reserves, regular files only.
pub fn temporaries(home: &Path) -> Vec<PathBuf> {
    temporaries_in(&bin_dir(home))
}

fn temporaries_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with(TEMP_PREFIX)
                && name.ends_with(".tmp")
                && entry.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|entry| entry.path())
        .collect()
}

fn io_error(home: &Path, source: io::Error) -> SelfCopyError {
    SelfCopyError::Io {
        path: target(home),
        source,
    }
}
