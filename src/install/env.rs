//! The environment step of an install, crash-safe: the env scripts of the active stack, and
//! cudaup's line in each rc file. Every file is written whole (a temporary file with a fixed
//! name, renamed over; the next write of the same file reuses the name, so a killed write
//! leaves nothing that outlives the next run), and an rc change is recorded in the shell
//! receipt *before* the rc file is written, so no kill can leave a change no receipt names.

use std::path::{Path, PathBuf};

pub mod registry;

use super::receipts::{Active, ShellReceipt};
use crate::shell::{self, EnvSpec, Shell};
use crate::world::process::Process;

/// Writes `bytes` to `path` whole and durably.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    super::receipt_file::write_whole(path, bytes)
}

/// The temporary a killed write of `path` leaves.
fn tmp_of(path: &Path) -> PathBuf {
    crate::world::fs::temporary(path, crate::world::fs::Temp::Fixed)
}

/// The shells set up on this machine: POSIX always; fish and PowerShell when they are here. On
/// Windows none: the user's environment in the registry is the shell setup there, read by every
/// program started after it ([`set_user_environment`]), cmd and PowerShell included.
pub fn shells_here(process: &Process) -> Vec<Shell> {
    if cfg!(windows) {
        return Vec::new();
    }
    let path = process.path_entries();
    let mut out = vec![Shell::Posix];
    let fish_config = process
        .path_var("XDG_CONFIG_HOME")
        .or_else(|| process.home().map(|h| h.join(".config")))
        .map(|c| c.join("fish"));
    if crate::world::runner::which("fish", &path).is_some()
        || fish_config.is_some_and(|d| d.is_dir())
    {
        out.push(Shell::Fish);
    }
    if crate::world::runner::which("pwsh", &path).is_some() {
        out.push(Shell::PowerShell);
    }
    out
}

/// The temporary files [`write_scripts`] may leave when killed (for uninstall and litter).
pub fn script_temporaries(home: &Path) -> Vec<PathBuf> {
    let mut out = vec![tmp_of(&Active::path(home))];
    out.extend(
        Shell::ALL
            .iter()
            .map(|s| tmp_of(&home.join(s.script_file_name()))),
    );
    out
}

/// The env scripts written on this OS: every shell's, and on Windows PowerShell's only (its
/// paths, `C:\…`, are no POSIX or fish PATH entry; Git Bash and MSYS spell them `/c/…`).
pub fn scripts_here() -> Vec<Shell> {
    if cfg!(windows) {
        vec![Shell::PowerShell]
    } else {
        Shell::ALL.to_vec()
    }
}

/// Whether `bytes` are exactly the env script cudaup writes for `shell` in `home` (for the
/// stack `active.json` names): uninstall removes an env script only then.
pub fn is_cudaup_script(home: &Path, shell: Shell, bytes: &[u8]) -> bool {
    shell::script(shell, &Active::read(home).spec()).as_bytes() == bytes
}

/// Whether `bytes` are exactly an `active.json` cudaup writes.
pub fn is_cudaup_active(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Active>(bytes)
        .is_ok_and(|a| serde_json::to_vec_pretty(&a).expect("serialises") == bytes)
}

/// Makes `toolkit` the active one and rewrites the env scripts (always, even when the rc files
/// are already hooked: rustup#2578). `active.json` goes first: a kill after it leaves scripts
/// that `repair` sees are stale against it.
pub fn write_scripts(home: &Path, toolkit: Option<&Path>) -> std::io::Result<EnvSpec> {
    let active = Active {
        toolkit: toolkit.map(Path::to_path_buf),
        cudaup_bin: crate::install::self_copy::on_path(home),
    };
    fs_err::create_dir_all(home)?;
    write_whole(
        &Active::path(home),
        &serde_json::to_vec_pretty(&active).expect("serialises"),
    )?;
    let spec = active.spec();
    for shell in scripts_here() {
        write_whole(
            &home.join(shell.script_file_name()),
            shell::script(shell, &spec).as_bytes(),
        )?;
    }
    Ok(spec)
}

/// On Windows the registry is the shell setup: sets `CUDA_PATH`, `CUDA_PATH_V<major>_<minor>` and
/// the user `Path` in `store` for `toolkit` (its receipt names the release) and cudaup's own copy
/// in `home` ([`registry::apply`]). Returns what to tell the user, one line each.
pub fn set_user_environment(
    store: &mut dyn crate::shell::windows::EnvStore,
    home: &Path,
    toolkit: Option<&Path>,
) -> Result<Vec<String>, registry::RegistryError> {
    let release = toolkit.and_then(|t| {
        crate::model::receipt::Receipt::read(t)
            .ok()
            .flatten()
            .map(|r| (t, r.cuda))
    });
    let wanted = registry::wanted(
        release.as_ref().map(|(t, c)| (*t, c.as_str())),
        crate::install::self_copy::on_path(home).as_deref(),
    );
    let (changed, left) = registry::apply(store, home, &wanted)?;
    let mut lines: Vec<String> = changed
        .iter()
        .map(
            |name| match store.get(name).ok().flatten().and_then(|v| v.text()) {
                Some(value) => format!(r"set HKCU\Environment\{name} = {value}"),
                None => format!(r"put back HKCU\Environment\{name}"),
            },
        )
        .collect();
    lines.extend(
        left.into_iter()
            .map(|l| format!(r"HKCU\Environment\{}: {}", l.name, l.why)),
    );
    Ok(lines)
}

/// Puts back what [`set_user_environment`] set (uninstall): the values left as the user has them.
#[cfg(windows)]
pub fn revert_user_environment(home: &Path) -> std::io::Result<Vec<registry::Left>> {
    let mut store = crate::shell::windows::user_environment()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    registry::revert(&mut store, home).map_err(|e| std::io::Error::other(e.to_string()))
}

/// Puts back what [`set_user_environment`] set: only on Windows, where its registry is.
#[cfg(not(windows))]
pub fn revert_user_environment(_home: &Path) -> std::io::Result<Vec<registry::Left>> {
    Err(std::io::Error::other(
        "this home records values cudaup set in the Windows registry: run cudaup uninstall on Windows",
    ))
}

/// Why hooking the rc files did not fully work.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The shell receipt could not be written.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Some rc files could not be changed (each message says what to add by hand).
    #[error("{}", .0.join("\n"))]
    Refused(Vec<String>),
    /// The Windows user environment could not be set (the message names the value).
    #[error(transparent)]
    Registry(#[from] registry::RegistryError),
}

/// The rc files cudaup hooks under the current HOME, each with its shell: `~/.profile`,
/// `~/.bash_profile`, `~/.bash_login`, `~/.bashrc`, the `.zshenv` candidates, fish's
/// `conf.d/cudaup.fish` and PowerShell's profile — those of them inside HOME. Whatever a
/// receipt names, no other file gets (or loses) cudaup's line.
pub fn rc_files(process: &Process) -> Vec<(PathBuf, Shell)> {
    let Some(user_home) = process.home() else {
        return Vec::new();
    };
    // The lines do not matter here, only which file belongs to which shell.
    let probe = Path::new("/");
    let mut out: Vec<(PathBuf, Shell)> = Vec::new();
    for shell in Shell::ALL {
        for h in shell::hooks(process, probe, &[shell]) {
            out.push((h.file, shell));
        }
    }
    for name in [".profile", ".bash_profile", ".bash_login", ".bashrc"] {
        out.push((user_home.join(name), Shell::Posix));
    }
    for file in shell::zsh_rc_candidates(process, &user_home) {
        out.push((file, Shell::Posix));
    }
    out.retain(|(file, _)| inside(file, &user_home));
    // The first shell named for a file is its own (the zsh candidates are POSIX too).
    let mut seen = std::collections::HashSet::new();
    out.retain(|(file, _)| seen.insert(file.clone()));
    out
}

/// Whether `path` lies strictly inside `dir`, spelled without `..` or `.` (lexically).
fn inside(path: &Path, dir: &Path) -> bool {
    use std::path::Component;
    path != dir
        && path.starts_with(dir)
        && path.is_absolute()
        && path
            .components()
            // `C:` on Windows: a home there is spelled from its drive.
            .all(|c| {
                matches!(
                    c,
                    Component::Prefix(_) | Component::RootDir | Component::Normal(_)
                )
            })
}

/// The folders an rc hook may create: only fish's config folders (`conf.d` and the folders
/// above it inside HOME), for fish's own file.
fn may_create(dirs: &[PathBuf], file: &Path, shell: Shell, process: &Process) -> bool {
    let Some(user_home) = process.home() else {
        return dirs.is_empty();
    };
    dirs.is_empty()
        || (shell == Shell::Fish
            && dirs
                .iter()
                .all(|d| file.starts_with(d) && inside(d, &user_home)))
}

/// The folders of `applied` that a revert may remove (those [`may_create`] allows).
pub fn removable_dirs(process: &Process, applied: &shell::Applied) -> Vec<PathBuf> {
    let shell = rc_files(process)
        .into_iter()
        .find(|(f, _)| *f == applied.file)
        .map(|(_, s)| s);
    match shell {
        Some(shell) if may_create(&applied.created_dirs, &applied.file, shell, process) => {
            applied.created_dirs.clone()
        }
        _ => Vec::new(),
    }
}

/// Hooks the env scripts into the rc files of `shells`. Returns the files changed now
/// (already-hooked files are left alone). Each change is journaled in the shell receipt first.
pub fn hook(process: &Process, home: &Path, shells: &[Shell]) -> Result<Vec<PathBuf>, HookError> {
    let mut receipt = ShellReceipt::read(home);
    let mut changed = Vec::new();
    let mut failed = Vec::new();
    for h in shell::hooks(process, home, shells) {
        match apply_journaled(process, home, &mut receipt, &h) {
            Ok(Some(file)) => changed.push(file),
            Ok(None) => {}
            Err(HookError::Refused(mut why)) => failed.append(&mut why),
            Err(e) => return Err(e),
        }
    }
    receipt.write(home)?;
    if !failed.is_empty() {
        return Err(HookError::Refused(failed));
    }
    Ok(changed)
}

/// Puts `line` back into `file` (repair's rc-hook), journaled like [`hook`]: only into an rc
/// file cudaup hooks under the current HOME ([`rc_files`]), and only cudaup's own line for it.
pub fn rehook(process: &Process, home: &Path, file: &Path, line: &str) -> Result<bool, HookError> {
    let mut receipt = ShellReceipt::read(home);
    let hook = shell::Hook {
        file: file.to_owned(),
        line: line.to_owned(),
    };
    Ok(apply_journaled(process, home, &mut receipt, &hook)?.is_some())
}

/// Records the change `h` needs in `receipt` (written), then makes it; on a refusal the
/// receipt is put back as it was. Returns the file if it changed. A file that is not one of
/// [`rc_files`], a line that is not cudaup's for it, or a folder to create other than fish's
/// config folders is refused before anything is written.
fn apply_journaled(
    process: &Process,
    home: &Path,
    receipt: &mut ShellReceipt,
    h: &shell::Hook,
) -> Result<Option<PathBuf>, HookError> {
    let shell = rc_files(process)
        .into_iter()
        .find(|(f, _)| *f == h.file)
        .map(|(_, s)| s);
    let Some(shell) = shell.filter(|s| h.line == shell::source_line(*s, home)) else {
        return Err(HookError::Refused(vec![format!(
            "{:?}: not an rc file cudaup hooks under this HOME (or not cudaup's line for it): nothing is written there",
            h.file
        )]));
    };
    let mut planned = match shell::plan_apply(h) {
        Ok(Some(planned)) => planned,
        Ok(None) => return Ok(None),
        Err(e) => return Err(HookError::Refused(vec![e.to_string()])),
    };
    if !may_create(&planned.applied().created_dirs, &h.file, shell, process) {
        let missing = planned
            .applied()
            .created_dirs
            .first()
            .cloned()
            .unwrap_or_default();
        return Err(HookError::Refused(vec![format!(
            "{}: its folder {} does not exist, and cudaup creates no folder for an rc file but fish's config folder: create it, or add this line yourself: {}",
            h.file.display(),
            missing.display(),
            h.line
        )]));
    }
    let previous = receipt.hooks.iter().position(|a| a.file == h.file);
    let previous = previous.map(|i| receipt.hooks.remove(i));
    if let Some(earlier) = &previous {
        planned.inherit(earlier);
    }
    receipt.hooks.push(planned.applied().clone());
    receipt.write(home)?;
    crate::world::checkpoint::reach("rc-journaled");
    match planned.write() {
        Ok(applied) => Ok(Some(applied.file)),
        Err(e) => {
            // The file is as it was: so is the receipt.
            receipt.hooks.retain(|a| a.file != h.file);
            receipt.hooks.extend(previous);
            receipt.write(home)?;
            Err(HookError::Refused(vec![e.to_string()]))
        }
    }
}

/// What the environment step of an install in progress will do: written before the toolkit
/// install starts and removed once the step is done, so `repair` can finish it for a run that
/// was killed in between (it knows which shells to hook, and whether to at all).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Intent {
    /// The toolkit the env scripts will name.
    pub toolkit: Option<PathBuf>,
    /// The shells whose rc files get the line (`sh`, `fish`, `powershell`).
    pub shells: Vec<String>,
    /// `false` for `--no-modify-path`.
    pub modify_path: bool,
}

/// Where the intent is kept: beside the toolkit journals, under a name their reader skips.
fn intent_path(home: &Path) -> PathBuf {
    crate::install::home::Home::at(home).env_intent()
}

impl Intent {
    /// Where it is kept.
    pub fn path(home: &Path) -> PathBuf {
        intent_path(home)
    }

    /// Records it (whole).
    pub fn record(&self, home: &Path) -> std::io::Result<()> {
        let path = intent_path(home);
        fs_err::create_dir_all(path.parent().expect("has a parent"))?;
        write_whole(&path, &serde_json::to_vec_pretty(self).expect("serialises"))
    }

    /// The recorded intent, if an install's env step has not finished.
    pub fn read(home: &Path) -> Option<Intent> {
        fs_err::read(intent_path(home))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
    }

    /// The env step is done (or will not happen): forgets the intent.
    pub fn done(home: &Path) -> std::io::Result<()> {
        for p in [intent_path(home), tmp_of(&intent_path(home))] {
            match fs_err::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let _ = fs_err::remove_dir(crate::install::home::Home::at(home).pending());
        Ok(())
    }

    /// Whether the toolkit it names is there, or an install of it is journaled (which repair
    /// finishes first); otherwise the intent is stale.
    pub fn toolkit_exists(&self, home: &Path) -> bool {
        self.toolkit.as_ref().is_none_or(|t| {
            t.join(crate::install::receipt::FILE_NAME).is_file()
                || super::receipt_file::pending_path(home, t).is_file()
        })
    }
}

#[cfg(test)]
mod tests;
