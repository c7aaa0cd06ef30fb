//! The framework step: chooses the installer (a new enough uv on `PATH`, cudaup's own, uv
//! fetched and verified now, else pip), installs the located framework into its venv with a log
//! under the home, checks it, and registers the venv's receipt.

use std::path::PathBuf;
use std::sync::Arc;

use crate::install::home::Home;
use crate::install::locate::Net;
use crate::install::python::step::FrameworkStep;
use crate::install::python::VenvReceipt;
use crate::model::request::Profile;
use crate::world::progress::Reporter;
use crate::world::runner::Runner;

use super::StepError;

/// What the framework step did.
#[derive(Debug, Clone)]
pub struct FrameworkDone {
    /// The venv's receipt (registered).
    pub receipt: VenvReceipt,
    /// What the installer noted.
    pub notes: Vec<String>,
    /// The log of the run.
    pub log: PathBuf,
    /// Which installer ran and why, when packages were installed.
    pub installer: Option<String>,
}

/// Installs `step` for `profile`; `path` is the `PATH` to look for uv on, `no_uv` is
/// `CUDAUP_NO_UV=1`. `on_installer` hears the installer chosen before it runs.
#[allow(clippy::too_many_arguments)]
pub fn run(
    step: &FrameworkStep,
    profile: Profile,
    runner: &dyn Runner,
    path: &[PathBuf],
    no_uv: bool,
    home: &Home,
    net: &Net,
    progress: Arc<dyn Reporter>,
    on_installer: &mut dyn FnMut(&str),
) -> Result<FrameworkDone, StepError> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let log = home.log("install", stamp);
    // The installer: a new enough uv on PATH, cudaup's own, or uv fetched and verified now.
    let (tool, choice) = crate::install::uv::installer(
        home,
        runner,
        path,
        no_uv,
        &net.fetcher(progress.clone()),
        step.packages.as_ref(),
    );
    let installer = step.packages.is_some().then(|| choice.describe());
    if let Some(line) = &installer {
        on_installer(line);
    }
    let done = crate::install::python::step::execute(
        step,
        runner,
        tool,
        log.clone(),
        profile,
        progress.as_ref(),
        Some(home.cache()),
        Some(net.probe().cancel_flag()),
    );
    drop(progress);
    let (receipt, notes) = done?;
    receipt.register(home.root())?;
    crate::world::checkpoint::reach("framework-installed");
    Ok(FrameworkDone {
        receipt,
        notes,
        log,
        installer,
    })
}
