//! Removing everything cudaup installed — toolkit files, the venvs it created, env scripts, rc
//! lines, and with `--purge` its cache — and nothing else. A directory is touched only when it
//! is cudaup's home (its marker says so, [`HomeMarker`]); inside it, only what a receipt or the
//! layout vouches for goes: toolkit files whose size and hash still match their receipt, venvs
//! whose own marker agrees with their receipt, env scripts holding exactly the bytes cudaup
//! writes, cudaup's log files. Everything else is left in place and named.

mod beneath;

use std::path::{Path, PathBuf};

use crate::install::home::{Entry, Found, Home, HomeMarker, NotAHome};
use crate::install::receipts::{Receipts, ShellReceipt};
use crate::install::transaction::remove_tree;
use crate::world::process::Process;

/// Why uninstall does nothing.
#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    /// The directory is not cudaup's home.
    #[error(transparent)]
    NotAHome(#[from] NotAHome),
    /// The container receipt cannot be read (damaged): which host files container setup
    /// changed cannot be told, so uninstall removes nothing.
    #[error(transparent)]
    ContainerReceipt(crate::install::host_files::EditError),
}

/// One thing uninstall does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Remove the files a toolkit receipt lists (those still as installed), then the
    /// directories that held them, once empty.
    Toolkit {
        /// The prefix.
        prefix: PathBuf,
        /// Its receipt in the home.
        receipt: PathBuf,
    },
    /// Remove a venv cudaup created (its receipt and its marker agree).
    Venv {
        /// The venv.
        dir: PathBuf,
        /// Its receipt.
        receipt: PathBuf,
    },
    /// Forget a venv uninstall does not remove (it stays as it is).
    ForgetVenv {
        /// The venv.
        dir: PathBuf,
        /// Its receipt.
        receipt: PathBuf,
        /// Why it stays.
        why: String,
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
        /// The folders made for it that may go once empty (only fish's config folders).
        dirs: Vec<PathBuf>,
    },
    /// Put back the values cudaup set in the Windows user environment (`HKCU\Environment`),
    /// each as it was before (a value the user changed since is not clobbered).
    UserEnvironment {
        /// The values' names.
        names: Vec<String>,
    },
    /// Forget a hook the shell receipt names in a file that is not one cudaup hooks under the
    /// current HOME: the file is not touched.
    ForgetHook {
        /// The file.
        file: PathBuf,
    },
    /// Remove a file of cudaup's own (env scripts, state, the refreshed catalog).
    File {
        /// The file or directory.
        path: PathBuf,
    },
    /// Remove cudaup's log files (`<kind>-<stamp>.log`), and their folder once empty.
    Logs {
        /// The folder.
        dir: PathBuf,
        /// The log files in it.
        files: Vec<PathBuf>,
    },
    /// Leave an entry of the home in place, and say why.
    Keep {
        /// The entry.
        path: PathBuf,
        /// Why it stays.
        why: String,
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
            Step::ForgetVenv { dir, why, .. } => {
                write!(f, "leave {} in place ({why}) and forget it", dir.display())
            }
            Step::RcFile { file, .. } => {
                write!(f, "take cudaup's lines out of {}", file.display())
            }
            Step::UserEnvironment { names } => write!(
                f,
                "put back HKCU\\Environment's {} as they were before cudaup",
                names.join(", ")
            ),
            Step::ForgetHook { file } => write!(
                f,
                "leave {:?} as it is (not an rc file cudaup hooks under this HOME) and forget it",
                file
            ),
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
            Step::Logs { dir, files } => write!(
                f,
                "remove {} log file(s) of cudaup in {}",
                files.len(),
                dir.display()
            ),
            Step::Keep { path, why } => write!(f, "leave {} in place ({why})", path.display()),
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

/// What uninstall would do for `home`; refused for a directory that is not cudaup's home.
pub fn plan(home: &Home, process: &Process, purge: bool) -> Result<Vec<Step>, UninstallError> {
    let marker = match HomeMarker::find(home)? {
        Found::Empty => return Ok(Vec::new()),
        Found::Marked(marker) => marker,
    };
    let root = home.root();
    let receipts = Receipts::load(root);
    let mut steps = Vec::new();
    let found = crate::install::litter::find(root, &receipts);
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
        steps.push(venv_step(path, v));
    }
    // A receipt that cannot be read is not "nothing to undo": removing the home would lose the
    // only record of the host files (a CDI spec, a daemon.json edit) container setup changed.
    match crate::install::host_files::Receipt::read(root) {
        Ok(r) if !r.files.is_empty() => steps.push(Step::ContainerFiles {
            files: r.files.iter().map(|f| f.path.clone()).collect(),
        }),
        Err(e @ crate::install::host_files::EditError::Damaged { .. }) => {
            return Err(UninstallError::ContainerReceipt(e))
        }
        _ => {}
    }
    // The same rule as hooking: only the rc files cudaup hooks under the current HOME.
    let rc_files = crate::install::env::rc_files(process);
    for hook in &receipts.shell.hooks {
        steps.push(if rc_files.iter().any(|(f, _)| *f == hook.file) {
            Step::RcFile {
                file: hook.file.clone(),
                dirs: crate::install::env::removable_dirs(process, hook),
            }
        } else {
            Step::ForgetHook {
                file: hook.file.clone(),
            }
        });
    }
    let registry = crate::install::env::registry::RegistryReceipt::read(root);
    if !registry.values.is_empty() {
        steps.push(Step::UserEnvironment {
            names: registry.values.iter().map(|v| v.name.clone()).collect(),
        });
    }
    // `active.json` last: the env scripts are recognised by it, so a run killed in between
    // still knows them when it is run again.
    let mut entries = home.entries();
    entries.sort_by_key(|(e, _)| *e == Entry::Active);
    for (entry, path) in entries {
        if marker.preexisting(&path) {
            continue;
        }
        let Ok(meta) = path.symlink_metadata() else {
            continue;
        };
        if let Some(step) = entry_step(home, entry, path, &meta, purge) {
            steps.push(step);
        }
    }
    // What a killed write of the env scripts left.
    for p in crate::install::env::script_temporaries(root) {
        if p.symlink_metadata().is_ok() {
            steps.push(Step::File { path: p });
        }
    }
    if crate::install::self_copy::receipt_path(root).is_file() {
        use crate::install::self_copy::{inspect, target, Found};
        let keep = match inspect(root, None) {
            Ok(Found::Foreign(why)) => Some(why),
            Err(e) => Some(format!("it cannot be read: {e}")),
            Ok(_) => None,
        };
        steps.push(Step::SelfCopy {
            path: target(root),
            keep,
        });
    }
    // The uv cudaup brought: the binary only while its bytes are the receipt's.
    match crate::install::uv::removal(home) {
        Some(Ok((binary, receipt))) => {
            if binary.symlink_metadata().is_ok() {
                steps.push(Step::File { path: binary });
            }
            steps.push(Step::File { path: receipt });
        }
        Some(Err((path, why))) => steps.push(Step::Keep { path, why }),
        None => {}
    }
    let changes = steps.iter().any(|s| !matches!(s, Step::Keep { .. }));
    if !changes && home.marker().is_file() && others(home).is_empty() {
        // A home cudaup emptied before: only its marker is left.
        steps.push(Step::File {
            path: home.marker(),
        });
    }
    Ok(steps)
}

/// A venv goes only when its receipt says cudaup created it and its own marker agrees.
fn venv_step(receipt: &Path, v: &crate::install::python::VenvReceipt) -> Step {
    let forget = |why: String| Step::ForgetVenv {
        dir: v.venv.clone(),
        receipt: receipt.to_owned(),
        why,
    };
    if !v.created {
        return forget("cudaup did not create it".into());
    }
    if v.venv.symlink_metadata().is_err() {
        // Already gone: only the receipt is left to remove.
        return Step::Venv {
            dir: v.venv.clone(),
            receipt: receipt.to_owned(),
        };
    }
    match crate::install::python::marker::agrees(&v.venv) {
        Ok(()) => Step::Venv {
            dir: v.venv.clone(),
            receipt: receipt.to_owned(),
        },
        Err(why) => forget(why),
    }
}

/// What becomes of one top-level entry of the home (not one that was there before cudaup).
fn entry_step(
    home: &Home,
    entry: Entry,
    path: PathBuf,
    meta: &std::fs::Metadata,
    purge: bool,
) -> Option<Step> {
    let keep = |path: PathBuf, why: &str| {
        Some(Step::Keep {
            path,
            why: why.to_owned(),
        })
    };
    let is_dir = meta.is_dir();
    match entry {
        Entry::EnvScript(shell) => {
            let ours = meta.is_file()
                && fs_err::read(&path)
                    .is_ok_and(|b| crate::install::env::is_cudaup_script(home.root(), shell, &b));
            if ours {
                Some(Step::File { path })
            } else {
                keep(path, "its bytes are not the env script cudaup writes: changed by hand, or not cudaup's")
            }
        }
        Entry::Active => {
            let ours = meta.is_file()
                && fs_err::read(&path).is_ok_and(|b| crate::install::env::is_cudaup_active(&b));
            if ours {
                Some(Step::File { path })
            } else {
                keep(path, "it is not the active.json cudaup writes")
            }
        }
        Entry::Logs if is_dir => {
            let mut files: Vec<PathBuf> = fs_err::read_dir(&path)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| {
                    e.file_type().is_ok_and(|t| t.is_file())
                        && Home::is_log_name(&e.file_name().to_string_lossy())
                })
                .map(|e| e.path())
                .collect();
            files.sort();
            (!files.is_empty() || is_empty_dir(&path)).then_some(Step::Logs { dir: path, files })
        }
        Entry::Logs => keep(path, "not cudaup's logs folder"),
        // Removed once empty, after the toolkits and venvs in them ([`run`]).
        Entry::Toolkits | Entry::Venvs | Entry::Receipts if is_dir && is_empty_dir(&path) => {
            Some(Step::File { path })
        }
        // An install killed between making `receipts/pending/` and writing its journal there
        // left the folder and nothing in it: no record, and the run removes it ([`run`]).
        Entry::Receipts if is_dir && holds_only_an_empty_pending(home, &path) => {
            Some(Step::File { path })
        }
        Entry::Cache if purge && is_dir => Some(Step::Cache { dir: path }),
        Entry::ManifestsD if purge && is_dir => Some(Step::File { path }),
        Entry::ManifestsLink if purge => {
            let into_generations = fs_err::read_link(&path)
                .is_ok_and(|t| t.starts_with(home.manifests_d()) || t.starts_with("manifests.d"));
            if into_generations {
                Some(Step::File { path })
            } else {
                keep(
                    path,
                    "not the link to the catalog `cudaup manifests update` wrote",
                )
            }
        }
        _ => None,
    }
}

fn is_empty_dir(path: &Path) -> bool {
    fs_err::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// Whether the receipts folder at `receipts` holds nothing but an empty journal folder.
fn holds_only_an_empty_pending(home: &Home, receipts: &Path) -> bool {
    let pending = home.pending();
    let only_pending = fs_err::read_dir(receipts).is_ok_and(|d| {
        d.flatten()
            .all(|e| e.path() == pending && e.file_type().is_ok_and(|t| t.is_dir()))
    });
    only_pending && is_empty_dir(&pending)
}

/// The names in the home other than its lock and marker.
fn others(home: &Home) -> Vec<PathBuf> {
    let ours = [home.lock_path(), home.marker()];
    fs_err::read_dir(home.root())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| !ours.contains(p))
        .collect()
}

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
pub fn left_in_home(home: &Home) -> Vec<Left> {
    let marker = HomeMarker::read(home).ok().flatten();
    let entries = home.entries();
    let mut paths = others(home);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let entry = entries.iter().find(|(_, p)| *p == path).map(|(e, _)| *e);
            let before = marker.as_ref().is_some_and(|m| m.preexisting(&path));
            let (what, purged) = match entry {
                _ if before => ("there before cudaup: left as it is", false),
                Some(Entry::Cache) => (
                    "the download cache: archives and unpacked trees, so installing again needs no download",
                    true,
                ),
                Some(Entry::ManifestsLink | Entry::ManifestsD) => {
                    ("the catalog `cudaup manifests update` wrote", true)
                }
                Some(Entry::Cdi) => (
                    "CDI specs `cudaup container spec` wrote (a container engine may still use them)",
                    false,
                ),
                Some(Entry::Bin) => ("files beside cudaup's copy that cudaup did not write", false),
                _ => ("not cudaup's: left as it is", false),
            };
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

/// A venv that stays loses what the guard wrote in it (its receipt lists the files and their
/// hashes; a file changed since stays, and is named).
fn lift_guard(receipt: &Path, out: &mut Outcome) -> std::io::Result<()> {
    let guard = fs_err::read(receipt)
        .ok()
        .and_then(|b| serde_json::from_slice::<crate::install::python::VenvReceipt>(&b).ok())
        .and_then(|r| r.guard);
    if let Some(g) = guard {
        for kept in crate::install::guard::lift(&g)?.kept {
            out.kept.push((
                kept,
                "written by cudaup's guard, changed since: left as it is".into(),
            ));
        }
    }
    Ok(())
}

/// Carries out `steps`. Each toolkit and venv receipt is deleted only once its files are gone,
/// so an interrupted uninstall can be run again.
pub fn run(home: &Home, steps: &[Step]) -> std::io::Result<Outcome> {
    let root = home.root();
    let mut out = Outcome::default();
    let mut shell = ShellReceipt::read(root);
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
                // Checked again under the lock, just before the tree goes.
                if dir.symlink_metadata().is_ok() {
                    match crate::install::python::marker::agrees(dir) {
                        Ok(()) => remove_tree(dir)?,
                        Err(why) => {
                            lift_guard(receipt, &mut out)?;
                            out.kept.push((dir.clone(), why));
                        }
                    }
                }
                fs_err::remove_file(receipt)?;
            }
            Step::ForgetVenv { dir, receipt, why } => {
                lift_guard(receipt, &mut out)?;
                out.kept.push((dir.clone(), why.clone()));
                fs_err::remove_file(receipt)?;
            }
            Step::RcFile { file, dirs } => {
                if let Some(i) = shell.hooks.iter().position(|h| &h.file == file) {
                    let applied = crate::shell::Applied {
                        created_dirs: dirs.clone(),
                        ..shell.hooks[i].clone()
                    };
                    crate::shell::revert(&applied)
                        .map_err(|e| std::io::Error::other(e.to_string()))?;
                    shell.hooks.remove(i);
                    shell.write(root)?;
                }
            }
            Step::UserEnvironment { .. } => {
                for left in crate::install::env::revert_user_environment(root)? {
                    out.kept.push((
                        PathBuf::from(format!(r"HKCU\Environment\{}", left.name)),
                        left.why,
                    ));
                }
            }
            Step::ForgetHook { file } => {
                out.kept.push((
                    file.clone(),
                    "not an rc file cudaup hooks under this HOME: left as it is".into(),
                ));
                shell.hooks.retain(|h| &h.file != file);
                shell.write(root)?;
            }
            Step::File { path } => match path.symlink_metadata() {
                Ok(m) if m.is_dir() => remove_tree(path)?,
                Ok(_) => fs_err::remove_file(path)?,
                Err(_) => {}
            },
            Step::Logs { dir, files } => {
                for f in files {
                    match fs_err::remove_file(f) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                        _ => {}
                    }
                }
                let _ = fs_err::remove_dir(dir);
            }
            Step::Keep { path, why } => out.kept.push((path.clone(), why.clone())),
            Step::ContainerFiles { .. } => {
                let undone = crate::install::host_files::undo(root, false)
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
                crate::install::litter::clean(root, &Receipts::load(root))?;
            }
        }
    }
    if shell.hooks.is_empty() {
        let _ = fs_err::remove_file(ShellReceipt::path(root));
    }
    let marker = HomeMarker::read(home).ok().flatten().unwrap_or_default();
    // Journals of installs whose prefixes are gone by now, and the temporary files killed
    // receipt writes left (`.<name>.json.tmp`, `shell.json.tmp`).
    if !marker.preexisting(&home.receipts()) {
        remove_tree(&home.pending())?;
    }
    if let Ok(rd) = fs_err::read_dir(home.receipts()) {
        for e in rd.flatten() {
            if crate::install::receipt_file::is_temporary(&e.file_name().to_string_lossy()) {
                let _ = fs_err::remove_file(e.path());
            }
        }
    }
    // Directories cudaup made, once empty (`remove_dir` refuses any that holds something).
    if !marker.preexisting(&home.tools()) {
        for e in fs_err::read_dir(home.tools())
            .into_iter()
            .flatten()
            .flatten()
        {
            if e.file_name().to_string_lossy().starts_with("uv-") {
                let _ = fs_err::remove_dir(e.path());
            }
        }
    }
    for d in [home.receipts(), home.venvs(), home.toolkits(), home.tools()] {
        if !marker.preexisting(&d) {
            let _ = fs_err::remove_dir(d);
        }
    }
    // cudaup's own copy last of all (a running binary's file can be unlinked on Linux).
    // Also without a receipt: a copy killed before its receipt was written left only its
    // temporary in bin/, which this sweeps.
    if steps.iter().any(|s| matches!(s, Step::SelfCopy { .. }))
        || (crate::install::self_copy::bin_dir(root).is_dir() && !marker.preexisting(&home.bin()))
    {
        if let crate::install::self_copy::Removed::Kept(path, why) =
            crate::install::self_copy::remove(root)?
        {
            out.kept.push((path, why));
        }
        if !marker.preexisting(&home.receipts()) {
            let _ = fs_err::remove_dir(home.receipts());
        }
    }
    // The home's lock (held by this command, which removes it too) goes before the home itself,
    // unless what stands there is not a lock file of cudaup's.
    let lock_is_ours = fs_err::symlink_metadata(home.lock_path())
        .is_ok_and(|m| m.is_file() && m.len() <= 64)
        && fs_err::read_to_string(home.lock_path())
            .is_ok_and(|t| crate::world::fs::is_lock_text(t.trim()));
    if lock_is_ours {
        let _ = fs_err::remove_file(home.lock_path());
    }
    // The marker goes with the last of cudaup's files: a home still holding its cache keeps
    // it, so `uninstall --purge` can still remove that.
    if others(home).is_empty() {
        let _ = fs_err::remove_file(home.marker());
        let _ = fs_err::remove_dir(root);
    }
    Ok(out)
}

/// Removes the receipt's files and symlinks that are still as cudaup installed them, then the
/// directories that held them once empty; a prefix a user added files to (or changed files
/// in) stays, with those files.
///
/// The prefix's own receipt is used when it names this prefix, else the home's copy (a prefix
/// whose receipt is gone, or a journal). Nothing is followed on the way ([`beneath`]). The
/// prefix's own receipt goes last but one, the prefix itself last, so a run killed anywhere in
/// between finds what it needs when it is run again.
fn remove_toolkit(
    prefix: &Path,
    registered: Option<&crate::install::Receipt>,
    out: &mut Outcome,
) -> std::io::Result<()> {
    let own = crate::install::Receipt::read(prefix)
        .ok()
        .flatten()
        .filter(|r| r.prefix == prefix);
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
    let root = match beneath::open_dir(prefix) {
        Ok(Some(root)) => root,
        Ok(None) => {
            if let Some(lock) = lock {
                lock.remove();
            }
            return Ok(());
        }
        Err(why) => {
            out.kept.push((prefix.to_owned(), why));
            return Ok(());
        }
    };
    let mut refused = Vec::new();
    for f in &receipt.files {
        if let beneath::Removed::Kept(why) = beneath::remove_verified(&root, f)? {
            refused.push((prefix.join(&f.path), why));
        }
    }
    beneath::remove_created_dirs(&root, &receipt.files)?;
    beneath::remove_receipt(&root)?;
    drop(root);
    let _ = fs_err::remove_dir(prefix);
    let more = refused.len().saturating_sub(5);
    for (path, why) in refused.into_iter().take(5) {
        out.kept.push((path, why));
    }
    if more > 0 {
        out.kept.push((
            prefix.to_owned(),
            format!("and {more} more of its files, for the same kinds of reasons"),
        ));
    }
    if prefix.symlink_metadata().is_ok() {
        out.kept.push((
            prefix.to_owned(),
            "it holds files cudaup did not install, or changed since".into(),
        ));
    } else if let Some(lock) = lock {
        lock.remove();
    }
    Ok(())
}

#[cfg(test)]
mod tests;
