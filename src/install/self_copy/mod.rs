//! cudaup's own copy, `$CUDAUP_HOME/bin/cudaup`: what makes `cudaup verify` (the wizard's last
//! line) work in the next shell, as rustup's `~/.cargo/bin` does for `rustup`.
//!
//! `install` and the wizard copy the running binary there ([`ensure`]) and the env scripts put
//! that directory on `PATH` ([`crate::install::receipts::Active::cudaup_bin`]). The file is
//! cudaup's only while it is a copy cudaup wrote: its sha256 is the one the receipt
//! (`$CUDAUP_HOME/receipts/self.json`) records, or the one the receipt records as being replaced
//! while a replacement is under way, or the running binary's own (a run killed after the copy
//! landed, before its receipt did). Anything else at that path is the user's: it is never
//! overwritten or removed.
//!
//! A copy is atomic and durable: the bytes go into a temporary file in `bin/`, hashed as they are
//! written, which is fsynced, recorded in the receipt, renamed over the target, and the directory
//! fsynced. Killed at any instant, the path holds the old copy or the new one, and the receipt
//! vouches for whichever it is, so a re-run (by this binary or another) converges.
//!
//! When `cargo install` put the running binary in `$CARGO_HOME/bin` ([`cargo_managed`]), cargo
//! manages it: cudaup makes no copy, and takes an earlier copy of its own out of the way so it
//! cannot shadow the one cargo updates.

mod cargo;
#[cfg(test)]
mod tests;

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::world::checkpoint;
use crate::world::process::Process;

pub use cargo::cargo_managed;

/// This cudaup's version (the library and the binary are one crate).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The receipt's file name in `$CUDAUP_HOME/receipts/`.
pub const RECEIPT: &str = "self.json";

/// Temporary files in `bin/` start with this (and end in `.tmp`): names cudaup reserves, so a
/// run may sweep those an earlier, killed run left.
const TEMP_PREFIX: &str = ".cudaup-";

/// The directory the env scripts put on `PATH` for cudaup itself.
pub fn bin_dir(home: &Path) -> PathBuf {
    home.join("bin")
}

/// Where the installed copy lives: `$CUDAUP_HOME/bin/cudaup`.
pub fn target(home: &Path) -> PathBuf {
    bin_dir(home).join(if cfg!(windows) {
        "cudaup.exe"
    } else {
        "cudaup"
    })
}

/// The directory the env scripts put on `PATH` for cudaup: `bin/` once cudaup put its copy
/// there (its receipt says so; a copy deleted since is doctor's to report, and harmless on PATH).
pub fn on_path(home: &Path) -> Option<PathBuf> {
    receipt_path(home).is_file().then(|| bin_dir(home))
}

/// Where its receipt lives.
pub fn receipt_path(home: &Path) -> PathBuf {
    home.join("receipts").join(RECEIPT)
}

/// What cudaup records about the copy it wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelfReceipt {
    /// 1.
    pub schema_version: u32,
    /// The copy.
    pub path: PathBuf,
    /// Its sha256, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// The cudaup version it is.
    pub version: String,
    /// The binary it was copied from.
    pub source: PathBuf,
    /// When, in seconds since the epoch.
    pub installed_at: u64,
    /// While a new copy is being put in place: the sha256 of the one it replaces, which a run
    /// killed before the rename leaves at the path, still cudaup's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacing: Option<String>,
    /// The copy's inode, size and times once it is in place: while they match, the file is the
    /// one hashed, and checks need not read it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<Stamp>,
}

/// What tells one version of a file from another without reading it: every write changes the
/// modification and status-change times, and a replacement the inode (the idea of the unpacked
/// cache's stamps). Unix only; elsewhere files are always hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// Device and inode.
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time: seconds and nanoseconds.
    pub mtime: [i64; 2],
    /// Status-change time: seconds and nanoseconds.
    pub ctime: [i64; 2],
}

impl Stamp {
    /// The stamp of a file's metadata.
    pub fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Stamp {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime: [meta.mtime(), meta.mtime_nsec()],
                ctime: [meta.ctime(), meta.ctime_nsec()],
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

impl SelfReceipt {
    /// Reads the receipt under `home` (absent or unreadable: none, so nothing is vouched for).
    pub fn read(home: &Path) -> Option<SelfReceipt> {
        let bytes = fs_err::read(receipt_path(home)).ok()?;
        match serde_json::from_slice(&bytes) {
            Ok(r) => Some(r),
            Err(e) => {
                tracing::warn!("{}: {e}", receipt_path(home).display());
                None
            }
        }
    }

    /// Writes it whole (temporary file, fsync, rename).
    fn write(&self, home: &Path) -> io::Result<()> {
        let path = receipt_path(home);
        let dir = path.parent().expect("receipts/ has a parent");
        fs_err::create_dir_all(dir)?;
        let mut temp = tempfile::Builder::new()
            .prefix(".self-")
            .suffix(".json.tmp")
            .tempfile_in(dir)?;
        temp.write_all(&serde_json::to_vec_pretty(self).expect("receipts serialise"))?;
        temp.as_file().sync_all()?;
        temp.persist(&path).map_err(|e| e.error)?;
        sync_dir(dir);
        Ok(())
    }

    /// Whether the receipt vouches for a file with this sha256 at `path`.
    fn vouches_for(&self, path: &Path, sha256: &str) -> bool {
        self.path == path && (self.sha256 == sha256 || self.replacing.as_deref() == Some(sha256))
    }
}

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
    fn size(&self) -> io::Result<u64> {
        Ok(fs_err::metadata(&self.path)?.len())
    }

    /// Whether `path` is this very file (not a copy of it).
    pub fn is(&self, path: &Path) -> bool {
        same_file(&self.path, path)
    }

    /// Whether the file at `path` (of `size` bytes) has this binary's bytes. Compared byte for
    /// byte, which says what equal sha256s would, without hashing either.
    fn same_bytes(&self, path: &Path, size: u64) -> bool {
        self.size().is_ok_and(|s| s == size) && same_contents(&self.path, path).unwrap_or(false)
    }
}

/// A copy of cudaup at the target path, that cudaup wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// Its sha256.
    pub sha256: String,
    /// Its size.
    pub size: u64,
    /// Its version, when the receipt records it (a copy being replaced has none).
    pub version: Option<String>,
    /// It has the running binary's bytes.
    pub current: bool,
}

/// What stands at the installed copy's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing.
    Absent,
    /// The running binary itself: this cudaup is the installed copy.
    Running,
    /// A copy cudaup wrote.
    Ours(Copy),
    /// A file cudaup did not write (why it is not ours).
    Foreign(String),
}

/// What is at `target(home)`, judged by the receipt and, when given, the running binary.
pub fn inspect(home: &Path, running: Option<&Running>) -> io::Result<Found> {
    let target = target(home);
    let meta = match fs_err::symlink_metadata(&target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        let to = fs_err::read_link(&target)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into());
        return Ok(Found::Foreign(format!(
            "it is a symlink (to {to}), and cudaup only ever writes a plain file there"
        )));
    }
    if !meta.is_file() {
        return Ok(Found::Foreign("it is not a regular file".into()));
    }
    if running.is_some_and(|r| r.is(&target)) {
        return Ok(Found::Running);
    }
    let size = meta.len();
    let receipt = SelfReceipt::read(home);
    // A receipt whose stamp still matches names the file's sha256; otherwise it is read.
    let stamped = receipt.as_ref().filter(|r| {
        r.path == target
            && r.size == size
            && r.replacing.is_none()
            && r.stamp.is_some()
            && r.stamp == Stamp::of(&meta)
    });
    let sha256 = match stamped {
        Some(r) => r.sha256.clone(),
        None => crate::fetch::sha256_file(&target)?,
    };
    let current = running.is_some_and(|r| r.same_bytes(&target, size));
    if let Some(r) = receipt.as_ref().filter(|r| r.vouches_for(&target, &sha256)) {
        return Ok(Found::Ours(Copy {
            version: (r.sha256 == sha256).then(|| r.version.clone()),
            sha256,
            size,
            current,
        }));
    }
    if current {
        // The copy landed, its receipt did not (or was lost): the bytes are this cudaup's own.
        return Ok(Found::Ours(Copy {
            sha256,
            size,
            version: Some(VERSION.to_owned()),
            current,
        }));
    }
    let short = &sha256[..12];
    Ok(Found::Foreign(match receipt {
        Some(r) if r.path == target => format!(
            "its sha256 {short}… is neither the copy cudaup recorded ({}…) nor this cudaup's",
            &r.sha256[..r.sha256.len().min(12)]
        ),
        _ => {
            format!("no receipt of cudaup's names it, and it is not this cudaup (sha256 {short}…)")
        }
    }))
}

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
                "check that {} is writable and has room; nothing else was changed",
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
    install(home, &running)
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
    let target = target(home);
    let fail = |source| io_error(home, source);
    sweep_temporaries(&bin_dir(home));
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
            let sha256 = put_in_place(home, running, Some(copy.sha256)).map_err(fail)?;
            Ok(done(Action::Replaced, sha256, copy.version))
        }
        Found::Absent => {
            let sha256 = put_in_place(home, running, None).map_err(fail)?;
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

/// The copy itself: temporary file (hashed as written, 0755, fsynced), the receipt, the rename,
/// the directory's fsync, and the receipt again without `replacing`. Returns the new sha256.
fn put_in_place(home: &Path, running: &Running, replacing: Option<String>) -> io::Result<String> {
    let target = target(home);
    let dir = bin_dir(home);
    fs_err::create_dir_all(&dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(".tmp")
        .tempfile_in(&dir)
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
    checkpoint::reach("self-copy-written");
    // The receipt goes first: from here on, whichever copy a crash leaves at the path is one
    // the receipt vouches for (the old one as `replacing`, or the new one).
    let mut receipt = receipt_for(&target, running, &sha256, size, replacing);
    receipt.write(home)?;
    checkpoint::reach("self-copy-recorded");
    temp.persist(&target).map_err(|e| {
        io::Error::new(
            e.error.kind(),
            format!("{} (renaming over {})", e.error, target.display()),
        )
    })?;
    sync_dir(&dir);
    checkpoint::reach("self-copy-renamed");
    // Final: nothing is being replaced any more, and the stamp spares later checks a rehash.
    receipt.replacing = None;
    receipt.stamp = Stamp::of(&fs_err::metadata(&target)?);
    receipt.write(home)?;
    Ok(sha256)
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
    sweep_temporaries(&dir);
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

/// Removes temporary files an earlier, killed copy left in `dir` (names cudaup reserves).
fn sweep_temporaries(dir: &Path) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(TEMP_PREFIX)
            && name.ends_with(".tmp")
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = fs_err::remove_file(entry.path());
        }
    }
}

/// How the installed copy compares with the receipt and the running binary, for `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Nothing to report.
    Fine,
    /// The receipt names a copy that is gone.
    Missing {
        /// Where it was.
        path: PathBuf,
        /// The version it was.
        version: String,
    },
    /// The file there is not the copy cudaup wrote (edited, or replaced by something else).
    Changed {
        /// Where it is.
        path: PathBuf,
        /// Why it is not cudaup's.
        why: String,
    },
    /// A copy cudaup wrote, but not this binary.
    Stale {
        /// Where it is.
        path: PathBuf,
        /// Its sha256.
        sha256: String,
        /// Its version, when the receipt records it.
        version: Option<String>,
        /// The running binary.
        running: PathBuf,
        /// Its size.
        running_size: u64,
    },
    /// cudaup installed a stack here but no copy of itself (an older cudaup did the install).
    NotInstalled {
        /// Where the copy would go.
        path: PathBuf,
    },
    /// The running binary is cargo's, and an earlier copy of cudaup's would shadow it.
    ShadowsCargo {
        /// The copy.
        path: PathBuf,
        /// The binary cargo manages.
        cargo: PathBuf,
    },
}

/// Compares the installed copy with its receipt and the running binary. `stack_here`: cudaup's
/// receipts name something it installed (a toolkit, a venv, an rc line).
pub fn health(process: &Process, home: &Path, stack_here: bool) -> io::Result<Health> {
    let running = Running::of(process);
    let cargo = running
        .as_ref()
        .and_then(|r| cargo_managed(process, r.path()));
    let target = target(home);
    let receipt = SelfReceipt::read(home);
    let found = inspect(home, running.as_ref())?;
    Ok(match (found, cargo) {
        (Found::Absent, Some(_)) => Health::Fine,
        (Found::Absent, None) => match receipt {
            Some(r) => Health::Missing {
                path: target,
                version: r.version,
            },
            None if stack_here && running.is_some() => Health::NotInstalled { path: target },
            None => Health::Fine,
        },
        (Found::Running, _) => Health::Fine,
        (Found::Foreign(why), _) => match receipt {
            // A file of the user's where cudaup never put one is theirs to keep; one that took
            // the place of cudaup's copy is worth a word.
            Some(_) => Health::Changed { path: target, why },
            None => Health::Fine,
        },
        (Found::Ours(_), Some(cargo)) => Health::ShadowsCargo {
            path: target,
            cargo,
        },
        (Found::Ours(copy), None) if copy.current => Health::Fine,
        (Found::Ours(copy), None) => match &running {
            Some(r) => Health::Stale {
                path: target,
                sha256: copy.sha256,
                version: copy.version,
                running: r.path().to_owned(),
                running_size: r.size()?,
            },
            None => Health::Fine,
        },
    })
}

/// Where the running binary stands, for `cudaup --version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whereabouts {
    /// The OS did not say which binary runs.
    Unknown,
    /// The running binary is the installed copy.
    Installed(PathBuf),
    /// `cargo install` put the running binary there and manages it.
    Cargo(PathBuf),
    /// Elsewhere (a build directory, `cargo run`), with what the installed copy is.
    Elsewhere {
        /// The running binary.
        running: PathBuf,
        /// The installed copy's path.
        copy: PathBuf,
        /// What is there.
        found: Found,
    },
}

/// Where the running binary stands against the installed copy. Hashes only when the sizes
/// match, so it stays quick.
pub fn whereabouts(process: &Process, home: &Path) -> Whereabouts {
    let Some(running) = Running::of(process) else {
        return Whereabouts::Unknown;
    };
    if let Some(cargo) = cargo_managed(process, running.path()) {
        return Whereabouts::Cargo(cargo);
    }
    let copy = target(home);
    if running.is(&copy) {
        return Whereabouts::Installed(copy);
    }
    let found = inspect(home, Some(&running))
        .unwrap_or_else(|e| Found::Foreign(format!("it cannot be read: {e}")));
    Whereabouts::Elsewhere {
        running: running.path().to_owned(),
        copy,
        found,
    }
}

fn io_error(home: &Path, source: io::Error) -> SelfCopyError {
    SelfCopyError::Io {
        path: target(home),
        source,
    }
}

/// Makes a rename in `dir` durable; not every platform lets a directory be synced.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    let _ = fs_err::File::open(dir).and_then(|d| d.sync_all());
    #[cfg(not(unix))]
    let _ = dir;
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
fn same_file(a: &Path, b: &Path) -> bool {
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
