//! The environment step: the env scripts for the active toolkit (and cudaup's own copy), and,
//! unless `--no-modify-path`, the line that loads them in each shell's rc file. It also ends the
//! env intent the toolkit step recorded, so `repair` does not finish it again. `repair`'s env
//! repairs run here too: an interrupted install's env step ([`finish`]), the scripts
//! ([`rewrite`], [`follow_self_copy`]) and one rc line ([`rehook`]).

use std::path::{Path, PathBuf};

use crate::install::env::{HookError, Intent};
use crate::install::receipts::Active;
use crate::install::self_copy::Installed;
use crate::shell::Shell;
use crate::world::process::Process;

use super::StepError;

/// What the environment step did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvDone {
    /// The line that loads the env script (`. "$CUDAUP_HOME/env"`).
    pub source: String,
    /// The rc files this run changed.
    pub rc_changed: Vec<PathBuf>,
    /// On Windows, what was set in the user's environment in the registry (one line each).
    pub registry: Vec<String>,
}

/// Writes the env scripts for `active_toolkit` (the toolkit installed now, or the one the plan
/// keeps) and hooks `shells` when `modify_path`. `None` when there is nothing to write: no
/// toolkit, and cudaup's own copy neither appeared, went nor moved.
pub fn run(
    process: &Process,
    home: &Path,
    active_toolkit: Option<&Path>,
    cudaup: &Installed,
    shells: &[Shell],
    modify_path: bool,
) -> Result<Option<EnvDone>, StepError> {
    // The scripts are written for a new toolkit, and also when cudaup's own copy appeared,
    // went or moved (with the toolkit that was active before, for a profile without one).
    let active_before = Active::read(home);
    if active_toolkit.is_none() && !copy_moved(&active_before, home) && !cudaup.in_home() {
        return Ok(None);
    }
    let env_toolkit = active_toolkit
        .map(Path::to_path_buf)
        .or(active_before.toolkit);
    crate::install::env::write_scripts(home, env_toolkit.as_deref())?;
    crate::world::checkpoint::reach("env-written");
    let source = crate::shell::source_line(crate::install::env::scripts_here()[0], home);
    let rc_changed = if !modify_path {
        Vec::new()
    } else {
        // A refused rc file (read-only) is the user's to fix, as the error says: the env step
        // is over either way, so repair does not try it again and again.
        let hooked = crate::install::env::hook(process, home, shells);
        Intent::done(home)?;
        hooked?
    };
    let registry = if modify_path {
        user_environment(home, env_toolkit.as_deref())?
    } else {
        Vec::new()
    };
    Intent::done(home)?;
    Ok(Some(EnvDone {
        source,
        rc_changed,
        registry,
    }))
}

/// On Windows, the user's environment in the registry for the active stack
/// ([`crate::install::env::set_user_environment`]); elsewhere nothing.
fn user_environment(home: &Path, toolkit: Option<&Path>) -> Result<Vec<String>, StepError> {
    #[cfg(windows)]
    {
        use crate::install::env::{registry::RegistryError, HookError};
        let mut store = crate::shell::windows::user_environment()
            .map_err(|e| HookError::from(RegistryError::from(e)))?;
        Ok(
            crate::install::env::set_user_environment(&mut store, home, toolkit)
                .map_err(HookError::from)?,
        )
    }
    #[cfg(not(windows))]
    {
        let _ = (home, toolkit);
        Ok(Vec::new())
    }
}

/// Whether the scripts put another directory on `PATH` for cudaup's own copy than the one that
/// holds it now (it appeared, went or moved).
fn copy_moved(active: &Active, home: &Path) -> bool {
    active.cudaup_bin != crate::install::self_copy::on_path(home)
}

/// Does the env step an interrupted install recorded: the env scripts for its toolkit, then the
/// rc hooks (unless `modify_path` was off), then forgets the intent. Returns the rc files
/// changed.
pub fn finish(intent: &Intent, process: &Process, home: &Path) -> Result<Vec<PathBuf>, StepError> {
    crate::install::env::write_scripts(home, intent.toolkit.as_deref())?;
    let changed = if intent.modify_path {
        let shells: Vec<Shell> = intent
            .shells
            .iter()
            .filter_map(|s| Shell::parse(s))
            .collect();
        crate::install::env::hook(process, home, &shells)
    } else {
        Ok(Vec::new())
    };
    // On Windows the registry is the shell setup: set it as the install would have.
    let changed = match changed {
        Ok(files) if intent.modify_path => {
            user_environment(home, intent.toolkit.as_deref()).map(|_| files)
        }
        other => other.map_err(StepError::from),
    };
    // Done even when an rc file refused the line: the error says how to add it by hand, and
    // trying again would refuse again.
    if !matches!(changed, Err(StepError::Hook(HookError::Io(_)))) {
        Intent::done(home)?;
    }
    changed
}

/// Writes the env scripts again for the toolkit they name now.
pub fn rewrite(home: &Path) -> Result<(), StepError> {
    crate::install::env::write_scripts(home, Active::read(home).toolkit.as_deref())?;
    Ok(())
}

/// After cudaup's own copy was put back: the env scripts again when the directory they put on
/// `PATH` for it is not the one that holds it now. Returns whether they were written.
pub fn follow_self_copy(home: &Path) -> Result<bool, StepError> {
    let active = Active::read(home);
    if !copy_moved(&active, home) {
        return Ok(false);
    }
    crate::install::env::write_scripts(home, active.toolkit.as_deref())?;
    Ok(true)
}

/// Puts `line` back into the rc file `file`, when it is one cudaup hooks and `line` is cudaup's
/// line for it. Returns whether the file changed.
pub fn rehook(process: &Process, home: &Path, file: &Path, line: &str) -> Result<bool, StepError> {
    Ok(crate::install::env::rehook(process, home, file, line)?)
}
