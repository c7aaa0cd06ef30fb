//! The environment step: the env scripts for the active toolkit (and cudaup's own copy), and,
//! unless `--no-modify-path`, the line that loads them in each shell's rc file. It also ends the
//! env intent the toolkit step recorded, so `repair` does not finish it again.

use std::path::{Path, PathBuf};

use crate::install::env::Intent;
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
    let active_before = crate::install::receipts::Active::read(home);
    if active_toolkit.is_none()
        && active_before.cudaup_bin == crate::install::self_copy::on_path(home)
        && !cudaup.in_home()
    {
        return Ok(None);
    }
    let env_toolkit = active_toolkit
        .map(Path::to_path_buf)
        .or(active_before.toolkit);
    crate::install::env::write_scripts(home, env_toolkit.as_deref())?;
    crate::world::checkpoint::reach("env-written");
    let source = crate::shell::source_line(Shell::Posix, home);
    let rc_changed = if !modify_path {
        Vec::new()
    } else {
        // A refused rc file (read-only) is the user's to fix, as the error says: the env step
        // is over either way, so repair does not try it again and again.
        let hooked = crate::install::env::hook(process, home, shells);
        Intent::done(home)?;
        hooked?
    };
    Intent::done(home)?;
    Ok(Some(EnvDone { source, rc_changed }))
}
