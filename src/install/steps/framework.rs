//! The framework step: chooses the installer (a new enough uv on `PATH`, cudaup's own, uv
//! fetched and verified now, else pip), installs the located framework into its venv with a log
//! under the home, checks it, and registers the venv's receipt. `repair` runs the same choice
//! to install a venv's recorded packages again ([`reinstall`]) or to make it anew
//! ([`recreate`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fetch::Fetcher;
use crate::install::home::Home;
use crate::install::locate::Net;
use crate::install::python::step::FrameworkStep;
use crate::install::python::{PyEnvError, Session, Venv, VenvReceipt};
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
/// `CUDAUP_NO_UV=1`, `guard` whether the venv gets the guard ([`crate::install::guard`]).
/// `on_installer` hears the installer chosen before it runs.
#[allow(clippy::too_many_arguments)]
pub fn run(
    step: &FrameworkStep,
    profile: Profile,
    runner: &dyn Runner,
    path: &[PathBuf],
    no_uv: bool,
    guard: bool,
    uv: &crate::install::uv::UvPin,
    home: &Home,
    net: &Net,
    progress: Arc<dyn Reporter>,
    on_installer: &mut dyn FnMut(&str),
) -> Result<FrameworkDone, StepError> {
    let log = log_path(home, "install");
    // The installer: a new enough uv on PATH, cudaup's own, or uv fetched and verified now.
    let (tool, choice) = crate::install::uv::installer(
        uv,
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
    let mut guard_notes = Vec::new();
    let turn = crate::install::guard::Turn::before(home.root(), &step.venv.dir, &mut guard_notes);
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
    let (mut receipt, mut notes) = match done {
        Ok(done) => done,
        Err(e) => {
            turn.failed(&step.venv.dir);
            return Err(e.into());
        }
    };
    turn.after(&mut receipt, home.root(), guard, &mut guard_notes);
    notes.extend(guard_notes);
    receipt.register(home.root())?;
    crate::world::checkpoint::reach("framework-installed");
    Ok(FrameworkDone {
        receipt,
        notes,
        log,
        installer,
    })
}

/// A new log of `kind` under the home, named by the time now.
fn log_path(home: &Home, kind: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    home.log(kind, stamp)
}

/// What a venv repair runs with: the installer is chosen as an install chooses it.
pub struct Repair<'a> {
    /// Runs the installer and the check.
    pub runner: &'a dyn Runner,
    /// The `PATH` to look for uv on.
    pub path: &'a [PathBuf],
    /// `CUDAUP_NO_UV=1`.
    pub no_uv: bool,
    /// `$CUDAUP_HOME` (cudaup's uv, the log, the cache).
    pub home: &'a Home,
    /// The uv the catalog pins.
    pub uv: &'a crate::install::uv::UvPin,
    /// Fetches uv when it must be brought.
    pub fetcher: &'a Fetcher,
    /// The installer's progress.
    pub progress: Arc<dyn Reporter>,
}

/// Installs the packages `receipt` records again over what its venv has, then checks it.
/// `on_installer` hears the installer chosen before it runs.
pub fn reinstall(
    receipt: &VenvReceipt,
    with: Repair<'_>,
    on_installer: &mut dyn FnMut(&str),
) -> Result<(), StepError> {
    repair(receipt, false, with, on_installer)
}

/// Makes the venv `receipt` records anew from its base Python, installs its packages, then
/// checks it.
pub fn recreate(
    receipt: &VenvReceipt,
    with: Repair<'_>,
    on_installer: &mut dyn FnMut(&str),
) -> Result<(), StepError> {
    repair(receipt, true, with, on_installer)
}

fn repair(
    receipt: &VenvReceipt,
    recreate: bool,
    with: Repair<'_>,
    on_installer: &mut dyn FnMut(&str),
) -> Result<(), StepError> {
    let (tool, choice) = crate::install::uv::installer(
        with.uv,
        with.home,
        with.runner,
        with.path,
        with.no_uv,
        with.fetcher,
        Some(&receipt.packages),
    );
    on_installer(&choice.describe());
    let mut session = Session::new(
        with.runner,
        tool,
        log_path(with.home, "repair"),
        with.progress.as_ref(),
    )?;
    session.set_cache(Some(with.home.cache()));
    let venv = Venv {
        dir: receipt.venv.clone(),
    };
    if recreate {
        let version = receipt.base_python.clone();
        session.create(Path::new(&receipt.base_python), &version, &venv)?;
        session.install(&venv, &receipt.packages)?;
    } else {
        session.reinstall(&venv, &receipt.packages)?;
    }
    if let Some(still) = crate::install::python::check::venv_problem(with.runner, receipt) {
        return Err(PyEnvError::Check(format!(
            "{} is still broken after the repair: {still}",
            receipt.venv.display()
        ))
        .into());
    }
    Ok(())
}
