//! Removing everything cudaup installed — toolkit files, the venvs it created, env scripts, rc
//! lines, and with `--purge` its cache — and nothing else. Files a user added inside a
//! cudaup prefix, and venvs cudaup did not create, are left in place and named.

use std::path::{Path, PathBuf};

use crate::install::receipts::{Active, Receipts, ShellReceipt};
use crate::install::transaction::remove_tree;

/// One thing uninstall does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Remove the files a toolkit receipt lists, then the directories left empty.
    Toolkit {
        /// The prefix.
        prefix: PathBuf,
        /// Its receipt in the home.
        receipt: PathBuf,
    },
    /// Remove a venv cudaup created.
    Venv {
        /// The venv.
        dir: PathBuf,
        /// Its receipt.
        receipt: PathBuf,
    },
    /// Forget a venv cudaup did not create (it stays as it is).
    ForgetVenv {
        /// The venv.
        dir: PathBuf,
        /// Its receipt.
        receipt: PathBuf,
    },
    /// Put back the host files `cudaup container setup` changed (CDI spec, `daemon.json`,
    /// `containers.conf`, the toolkit's `config.toml`), byte for byte.
    ContainerFiles {
        /// Them.
        files: Vec<PathBuf>,
    },
    /// Take cudaup's lines out of an rc file (byte for byte what was inserted).
    RcFile {
        /// The file.
        file: PathBuf,
    },
    /// Remove a file of cudaup's own (env scripts, state, logs).
    File {
        /// The file or directory.
        path: PathBuf,
    },
    /// Remove the download cache (`--purge`).
    Cache {
        /// The cache directory.
        dir: PathBuf,
    },
    /// Remove cudaup's own copy (`$CUDAUP_HOME/bin/cudaup`): done after everything else, so an
    /// interrupted uninstall can still be run again as `cudaup uninstall`.
    SelfCopy {
        /// The copy.
        path: PathBuf,
        /// Why it stays instead (it is no longer the copy cudaup wrote): only its receipt goes.
        keep: Option<String>,
    },
    /// Remove what interrupted runs left (half-unpacked trees, staging directories), and put
    /// back a prefix an interrupted commit set aside, so its files are removed too.
    Litter {
        /// What is there.
        found: Vec<crate::install::litter::Litter>,
    },
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Toolkit { prefix, .. } => write!(f, "remove the toolkit in {}", prefix.display()),
            Step::Venv { dir, .. } => write!(f, "remove the venv {}", dir.display()),
            Step::ForgetVenv { dir, .. } => write!(
                f,
                "leave {} in place (cudaup did not create it) and forget it",
                dir.display()
            ),
            Step::RcFile { file } => write!(f, "take cudaup's lines out of {}", file.display()),
            Step::ContainerFiles { files } => write!(
                f,
                "put back the container setup's files ({})",
                files
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Step::File { path } => write!(f, "remove {}", path.display()),
            Step::Cache { dir } => write!(f, "remove the download cache {}", dir.display()),
            Step::SelfCopy { path, keep: None } => {
                write!(f, "remove cudaup's own copy {} (last)", path.display())
            }
            Step::SelfCopy {
                path,
                keep: Some(why),
            } => write!(
                f,
                "leave {} in place ({why}) and forget cudaup's copy",
                path.display()
            ),
            Step::Litter { found } => write!(
                f,
                "remove {} leftover(s) of interrupted runs ({})",
                found.len(),
                indicatif::HumanBytes(found.iter().map(|l| l.bytes).sum())
            ),
        }
    }
}

/// What uninstall would do for the home at `home`.
pub fn plan(home: &Path, purge: bool) -> Vec<Step> {
    let receipts = Receipts::load(home);
    let mut steps = Vec::new();
    let found = crate::install::litter::find(home, &receipts);
    if !found.is_empty() {
        steps.push(Step::Litter { found });
    }
    for (path, r) in &receipts.toolkits {
        steps.push(Step::Toolkit {
            prefix: r.prefix.clone(),
            receipt: path.clone(),
        });
    }
    // Installs killed before they were recorded: their journal names the prefix.
    for (path, r) in &receipts.pending {
        if !receipts.toolkits.iter().any(|(_, t)| t.prefix == r.prefix) {
            steps.push(Step::Toolkit {
                prefix: r.prefix.clone(),
                receipt: path.clone(),
            });
        }
    }
    for (path, v) in &receipts.venvs {
        steps.push(if v.created {
            Step::Venv {
                dir: v.venv.clone(),
                receipt: path.clone(),
            }
        } else {
            Step::ForgetVenv {
                dir: v.venv.clone(),
                receipt: path.clone(),
            }
        });
    }
    if let Ok(r) = crate::install::host_files::Receipt::read(home) {
        if !r.files.is_empty() {
            steps.push(Step::ContainerFiles {
                files: r.files.iter().map(|f| f.path.clone()).collect(),
            });
        }
    }
    for hook in &receipts.shell.hooks {
        steps.push(Step::RcFile {
            file: hook.file.clone(),
        });
    }
    let own = [
        "env",
        "env.fish",
        "env.ps1",
        "active.json",
        "logs",
        "venvs",
        "toolkits",
    ];
    for name in own {
        let p = home.join(name);
        if p.symlink_metadata().is_ok() && !(matches!(name, "venvs" | "toolkits") && p.is_dir()) {
            steps.push(Step::File { path: p });
        }
    }
    // Directories of cudaup's own that an install which failed or was killed left empty.
    for name in ["receipts", "toolkits", "venvs"] {
        let p = home.join(name);
        if fs_err::read_dir(&p).is_ok_and(|mut d| d.next().is_none()) {
            steps.push(Step::File { path: p });
        }
    }
    // What a killed write of the env scripts left.
    for p in crate::install::env::script_temporaries(home) {
        if p.symlink_metadata().is_ok() {
            steps.push(Step::File { path: p });
        }
    }
    if purge && crate::install::home::Home::at(home).cache().exists() {
        steps.push(Step::Cache {
            dir: crate::install::home::Home::at(home).cache(),
        });
    }
    // The catalog `cudaup manifests update` wrote is cudaup's data as much as its cache.
    if purge {
        for name in PURGED_CATALOG {
            let p = home.join(name);
            if p.symlink_metadata().is_ok() {
                steps.push(Step::File { path: p });
            }
        }
    }
    if crate::install::self_copy::receipt_path(home).is_file() {
        use crate::install::self_copy::{inspect, target, Found};
        let keep = match inspect(home, None) {
            Ok(Found::Foreign(why)) => Some(why),
            Err(e) => Some(format!("it cannot be read: {e}")),
            Ok(_) => None,
        };
        steps.push(Step::SelfCopy {
            path: target(home),
            keep,
        });
    }
    steps
}

/// The refreshed catalog in the home: the `manifests` link and the generations it points into.
const PURGED_CATALOG: [&str; 2] = ["manifests", "manifests.d"];

/// Something that stays in cudaup's home after an uninstall, for the closing message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// The entry of the home.
    pub path: PathBuf,
    /// The bytes of its files.
    pub bytes: u64,
    /// What it is, in a few words.
    pub what: String,
    /// Whether `uninstall --purge` removes it (cudaup's own data); the rest is not cudaup's.
    pub purged: bool,
}

/// What is in `home` now, entry by entry: after an uninstall without `--purge`, the download
/// cache and the refreshed catalog, and whatever else someone put there.
pub fn left_in_home(home: &Path) -> Vec<Left> {
    let Ok(rd) = fs_err::read_dir(home) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let (what, purged) = match name.as_str() {
                "cache" => (
                    "the download cache: archives and unpacked trees, so installing again needs no download",
                    true,
                ),
                "manifests" | "manifests.d" => ("the catalog `cudaup manifests update` wrote", true),
                "cdi" => (
                    "CDI specs `cudaup container spec` wrote (a container engine may still use them)",
                    false,
                ),
                "bin" => ("files beside cudaup's copy that cudaup did not write", false),
                _ => ("not cudaup's: left as it is", false),
            };
            let path = home.join(&name);
            Left {
                bytes: crate::install::litter::size_of(&path),
                path,
                what: what.to_owned(),
                purged,
            }
        })
        .collect()
}

/// What is left after uninstall, that the user should know about.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Paths left in place, with why.
    pub kept: Vec<(PathBuf, String)>,
}

/// Carries out `steps`. Each toolkit and venv receipt is deleted only once its files are gone,
/// so an interrupted uninstall can be run again.
pub fn run(home: &Path, steps: &[Step]) -> std::io::Result<Outcome> {
    let mut out = Outcome::default();
    let mut shell = ShellReceipt::read(home);
    for step in steps {
        match step {
            Step::Toolkit { prefix, receipt } => {
                let registered: Option<crate::install::Receipt> = fs_err::read(receipt)
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok());
                remove_toolkit(prefix, registered.as_ref(), &mut out)?;
                fs_err::remove_file(receipt)?;
            }
            Step::Venv { dir, receipt } => {
                remove_tree(dir)?;
                fs_err::remove_file(receipt)?;
            }
            Step::ForgetVenv { dir, receipt } => {
                out.kept
                    .push((dir.clone(), "a venv cudaup did not create".into()));
                fs_err::remove_file(receipt)?;
            }
            Step::RcFile { file } => {
                if let Some(i) = shell.hooks.iter().position(|h| &h.file == file) {
                    crate::shell::revert(&shell.hooks[i])
                        .map_err(|e| std::io::Error::other(e.to_string()))?;
                    shell.hooks.remove(i);
                    shell.write(home)?;
                }
            }
            Step::File { path } => {
                if path.is_dir() {
                    remove_tree(path)?;
                } else if path.symlink_metadata().is_ok() {
                    fs_err::remove_file(path)?;
                }
            }
            Step::ContainerFiles { .. } => {
                let undone = crate::install::host_files::undo(home, false)
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                for u in undone {
                    if let Some(why) = u.why {
                        out.kept.push((u.path, why));
                    }
                }
            }
            Step::Cache { dir } => remove_tree(dir)?,
            Step::SelfCopy { .. } => {}
            Step::Litter { .. } => {
                crate::install::litter::clean(home, &Receipts::load(home))?;
            }
        }
    }
    if shell.hooks.is_empty() {
        let _ = fs_err::remove_file(ShellReceipt::path(home));
    }
    // Journals of installs whose prefixes are gone by now, and the temporary files killed
    // receipt writes left (`.<name>.json.tmp`, `shell.json.tmp`).
    remove_tree(&crate::install::home::Home::at(home).pending())?;
    if let Ok(rd) = fs_err::read_dir(crate::install::home::Home::at(home).receipts()) {
        for e in rd.flatten() {
            if crate::install::receipt_file::is_temporary(&e.file_name().to_string_lossy()) {
                let _ = fs_err::remove_file(e.path());
            }
        }
    }
    // Directories cudaup made, once empty.
    for d in ["receipts", "venvs", "toolkits"] {
        let _ = fs_err::remove_dir(home.join(d));
    }
    let _ = fs_err::remove_file(Active::path(home));
    // cudaup's own copy last of all (a running binary's file can be unlinked on Linux).
    // Also without a receipt: a copy killed before its receipt was written left only its
    // temporary in bin/, which this sweeps.
    if steps.iter().any(|s| matches!(s, Step::SelfCopy { .. }))
        || crate::install::self_copy::bin_dir(home).is_dir()
    {
        if let crate::install::self_copy::Removed::Kept(path, why) =
            crate::install::self_copy::remove(home)?
        {
            out.kept.push((path, why));
        }
        let _ = fs_err::remove_dir(crate::install::home::Home::at(home).receipts());
    }
    let _ = fs_err::remove_file(crate::install::home::Home::new(home).lock_path());
    let _ = fs_err::remove_dir(home);
    Ok(out)
}

/// Removes the receipt's files and symlinks, then every directory left empty; a prefix a user
/// added files to stays, with those files.
///
/// Nothing is followed on the way: the prefix is opened without following a symlink at its
/// last component, and every listed path is reached one directory descriptor at a time
/// (`openat` with `O_NOFOLLOW`), so a symlink or file that now stands where cudaup made a
/// directory stops the removal of what lies under it instead of redirecting it outside the
/// prefix. The prefix's own receipt goes last but one, the prefix itself last, so a run killed
/// anywhere in between finds what it needs when it is run again (the home's copy of the receipt
/// lists the same files, for a prefix whose own receipt is already gone).
fn remove_toolkit(
    prefix: &Path,
    registered: Option<&crate::install::Receipt>,
    out: &mut Outcome,
) -> std::io::Result<()> {
    let own = crate::install::Receipt::read(prefix).ok().flatten();
    let Some(receipt) = own.as_ref().or(registered) else {
        if prefix.exists() {
            out.kept.push((
                prefix.to_owned(),
                "its receipt is gone, so cudaup cannot tell its files from yours".into(),
            ));
        }
        return Ok(());
    };
    let lock = match crate::install::transaction::PrefixLock::try_acquire(prefix) {
        Ok(lock) => lock,
        Err(why) => {
            out.kept.push((prefix.to_owned(), why.to_string()));
            return Ok(());
        }
    };
    if lock.is_none() && prefix.parent().is_some_and(Path::is_dir) {
        out.kept.push((
            prefix.to_owned(),
            "another cudaup is installing into it right now".into(),
        ));
        return Ok(());
    }
    let remove_lock = || {
        if let (Some(parent), Some(name)) = (prefix.parent(), prefix.file_name()) {
            let _ = fs_err::remove_file(parent.join(format!(".{}.lock", name.to_string_lossy())));
        }
    };
    let root = match beneath::open_dir(prefix) {
        Ok(Some(root)) => root,
        Ok(None) => {
            remove_lock();
            return Ok(());
        }
        Err(why) => {
            out.kept.push((prefix.to_owned(), why));
            return Ok(());
        }
    };
    let mut refused = Vec::new();
    for f in &receipt.files {
        if let beneath::Removed::Kept(why) = beneath::remove_file(&root, &f.path)? {
            refused.push((prefix.join(&f.path), why));
        }
    }
    beneath::remove_empty_dirs(&root)?;
    beneath::remove_file(&root, Path::new(crate::install::receipt::FILE_NAME))?;
    drop(root);
    let _ = fs_err::remove_dir(prefix);
    for (path, why) in refused.into_iter().take(5) {
        out.kept.push((path, why));
    }
    if prefix.symlink_metadata().is_ok() {
        out.kept.push((
            prefix.to_owned(),
            "it holds files cudaup did not install".into(),
        ));
    } else {
        remove_lock();
    }
    Ok(())
}

/// Removal beneath a directory descriptor, never following a symlink.
#[cfg(unix)]
mod beneath {
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::{Component, Path};

    use rustix::fs::{openat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags, CWD};
    use rustix::io::Errno;

    /// What became of one path.
    pub(super) enum Removed {
        /// Removed, or already gone.
        Done,
        /// Left in place, and why.
        Kept(String),
    }

    fn open_flags() -> OFlags {
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
    }

    /// Opens `dir` (its last component not followed); `None` when it does not exist, an
    /// explanation when it is not a real directory.
    pub(super) fn open_dir(dir: &Path) -> Result<Option<OwnedFd>, String> {
        match openat(CWD, dir, open_flags(), Mode::empty()) {
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::NOENT) => Ok(None),
            Err(Errno::LOOP | Errno::NOTDIR) => Err(
                "it is a symlink or a file now, not the directory cudaup installed: nothing is removed through it"
                    .into(),
            ),
            Err(e) => Err(format!("cannot open it: {e}")),
        }
    }

    /// Unlinks `rel` (plain names only) beneath `root`, walking one directory at a time.
    pub(super) fn remove_file(root: &OwnedFd, rel: &Path) -> io::Result<Removed> {
        let parts: Vec<&std::ffi::OsStr> = rel
            .components()
            .map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect::<Option<_>>()
            .unwrap_or_default();
        let Some((last, parents)) = parts.split_last() else {
            return Ok(Removed::Kept(
                "not a plain relative path in the receipt".into(),
            ));
        };
        let mut dir: Option<OwnedFd> = None;
        for (i, name) in parents.iter().enumerate() {
            let at = dir.as_ref().unwrap_or(root);
            match openat(at, *name, open_flags(), Mode::empty()) {
                Ok(fd) => dir = Some(fd),
                Err(Errno::NOENT) => return Ok(Removed::Done),
                Err(Errno::LOOP | Errno::NOTDIR) => {
                    let ancestor: std::path::PathBuf = parents[..=i].iter().collect();
                    return Ok(Removed::Kept(format!(
                        "`{}` is no longer a directory (a symlink or a file stands there): nothing under it is removed",
                        ancestor.display()
                    )));
                }
                Err(e) => return Err(e.into()),
            }
        }
        match unlinkat(dir.as_ref().unwrap_or(root), *last, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(Removed::Done),
            Err(Errno::ISDIR | Errno::PERM) => Ok(Removed::Kept(
                "a directory stands where cudaup installed a file".into(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes every empty directory beneath `dir` (not `dir` itself), deepest first, entering
    /// only real directories.
    pub(super) fn remove_empty_dirs(dir: &OwnedFd) -> io::Result<()> {
        let mut subdirs = Vec::new();
        for entry in Dir::read_from(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_owned();
            if name.as_bytes() == b"." || name.as_bytes() == b".." {
                continue;
            }
            if matches!(entry.file_type(), FileType::Directory | FileType::Unknown) {
                subdirs.push(name);
            }
        }
        for name in subdirs {
            let child = match openat(dir, name.as_c_str(), open_flags(), Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => continue,
                Err(e) => return Err(e.into()),
            };
            remove_empty_dirs(&child)?;
            drop(child);
            match unlinkat(dir, name.as_c_str(), AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOTEMPTY | Errno::EXIST | Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}
