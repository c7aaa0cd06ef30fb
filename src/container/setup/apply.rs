//! Doing a setup [`Plan`]: its files written with receipts, and with consent the toolkit
//! installed (key fetched and checked first) and the other commands run.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Plan;
use crate::container::toolkit_install;

/// What [`apply`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applied {
    /// Files written (or removed).
    pub written: Vec<PathBuf>,
    /// Commands run.
    pub commands_run: Vec<Vec<String>>,
    /// The toolkit's release after its install ran (`nvidia-ctk --version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<String>,
}

/// Writes the plan's files with receipts under `home`, then (with `run_commands`) installs the
/// toolkit and runs the other commands, echoing each. The toolkit's key is fetched and checked
/// before any file is written; after its commands, `probe` (`nvidia-ctk --version`) must say the
/// release asked for.
pub fn apply(
    plan: &Plan,
    home: &Path,
    run_commands: bool,
    runner: &dyn crate::world::runner::Runner,
    probe: &dyn Fn() -> Option<String>,
    echo: &mut dyn FnMut(&str),
) -> Result<Applied, crate::container::ContainerError> {
    let mut done = Applied::default();
    let install = plan.toolkit.as_ref().filter(|_| run_commands);
    let mut files: Vec<(PathBuf, Option<Vec<u8>>, String)> = Vec::new();
    if let Some(t) = install {
        if let Some(k) = &t.key {
            let scratch =
                tempfile::tempdir().map_err(|e| toolkit_install::InstallError::Fetch {
                    url: k.url.clone(),
                    message: format!("no scratch directory: {e}"),
                })?;
            let text = toolkit_install::fetch_key(runner, &k.url, scratch.path(), echo)?;
            files.push((
                k.keyring.clone(),
                Some(text.into_bytes()),
                "NVIDIA's signing key for the toolkit's repository".to_owned(),
            ));
        }
        if let Some(r) = &t.repo_file {
            files.push((
                r.path.clone(),
                Some(r.text.clone().into_bytes()),
                "NVIDIA's package repository for the toolkit".to_owned(),
            ));
        }
    }
    let edits = plan
        .edits
        .iter()
        .map(|e| (e.path.clone(), e.bytes.clone(), e.what.clone()));
    for (path, bytes, what) in edits.chain(files) {
        crate::install::host_files::apply(home, &path, bytes.as_deref(), &what)?;
        done.written.push(path);
    }
    if run_commands && !plan.commands.is_empty() {
        let step = crate::install::driver::DriverStep {
            commands: plan.commands.clone(),
            runnable: true,
            ..Default::default()
        };
        let ran = crate::install::driver::execute(&step, runner, echo)?;
        done.commands_run = ran.commands_run;
    }
    if let Some(t) = install {
        let found = probe();
        if found.as_deref() != Some(t.version.as_str()) {
            return Err(toolkit_install::InstallError::NotInstalled {
                wanted: t.version.clone(),
                found: found.unwrap_or_else(|| "nothing (no nvidia-ctk on PATH)".to_owned()),
            }
            .into());
        }
        done.toolkit = found;
    }
    Ok(done)
}
