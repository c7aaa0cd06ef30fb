//! An install from its plan to its [`Outcome`]: [`run`] locates what the plan needs (nothing
//! changes), shows it, stops there for a dry run, converges the environment when there is
//! nothing to install, asks once (unless `--yes`), then runs the steps in their order: the
//! driver, the toolkit, the framework, cudaup's own copy, the environment. What a person sees
//! goes through [`Events`] and the one question through [`Prompter`] (together a [`Ui`]), which
//! the CLI implements (uv's `InstallLogger` is the model), so nothing here writes to a terminal.
//! Errors are [`RunError`]: each keeps its layer's type, so each keeps its exit code.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::detect::Root;
use crate::install::driver::DriverStep;
use crate::install::home::Home;
use crate::install::locate::{locate, DriverLocated, LocateError, Located, Net};
use crate::install::python::step::FrameworkStep;
use crate::install::report::{
    DriverReport, EnvReport, Installed, InstalledStatus, NothingStatus, NothingToDo, Outcome,
    ToolkitReport, VenvReport, SCHEMA_VERSION,
};
use crate::install::self_copy::Installed as SelfCopy;
use crate::install::steps::toolkit::{ToolkitDone, ToolkitStep};
use crate::install::steps::{self, env::EnvDone, framework::FrameworkDone};
use crate::install::ToolkitSpec;
use crate::shell::Shell;
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::prompt::{PromptError, Prompter};
use crate::world::runner::Runner;

use super::plan::{InstallPlan, Target};
use super::steps::StepError;

/// Which progress a step needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The toolkit's downloads, `total` bytes in all.
    Download {
        /// Bytes to download.
        total: u64,
    },
    /// The framework's installer (its size is learnt as it goes).
    Framework,
}

/// What a person sees while an install runs; each method may fail writing it.
pub trait Events {
    /// What the install will do, found before anything changed (shown before the question).
    fn planned(&mut self, plan: &InstallPlan, located: &Located) -> io::Result<()>;
    /// The machine already has everything the plan installs.
    fn nothing_to_do(&mut self) -> io::Result<()>;
    /// A line the driver's commands printed.
    fn driver_line(&mut self, line: &str);
    /// The progress display for a step.
    fn progress(&mut self, kind: Progress) -> Arc<dyn Reporter>;
    /// The framework's installer and why, before it runs.
    fn installer(&mut self, line: &str) -> io::Result<()>;
    /// The toolkit is installed.
    fn toolkit_done(&mut self, spec: &ToolkitSpec, done: &ToolkitDone) -> io::Result<()>;
    /// The framework is installed (or checked).
    fn framework_done(&mut self, step: &FrameworkStep, done: &FrameworkDone) -> io::Result<()>;
    /// cudaup's own copy is in place.
    fn self_copy_done(&mut self, cudaup: &SelfCopy) -> io::Result<()>;
    /// The env scripts and rc files are written.
    fn env_done(&mut self, done: &EnvDone, cudaup: &SelfCopy) -> io::Result<()>;
    /// Something the user should know.
    fn warning(&mut self, text: &str) -> io::Result<()>;
}

/// What a person sees and answers: the events and the one question, on one terminal.
pub trait Ui: Events + Prompter {}

impl<T: Events + Prompter + ?Sized> Ui for T {}

/// How far an install goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Show what would be done, and change nothing (`--dry-run`).
    DryRun,
    /// Show it, ask once, then do it.
    Ask,
    /// Show it and do it (`--yes`, or the wizard after its own questions).
    Yes,
}

/// Why an install did not run to its end. Each variant keeps its layer's error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A driver installed by an earlier run waits for a reboot.
    #[error(transparent)]
    RebootPending(#[from] RebootPending),
    /// The world could not be read (nothing changed).
    #[error(transparent)]
    Locate(#[from] LocateError),
    /// A step failed.
    #[error(transparent)]
    Step(#[from] StepError),
    /// The question got no answer (no terminal, Ctrl-C).
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The user answered no: nothing changed.
    #[error("cancelled: nothing changed")]
    Declined,
}

/// A driver installed by an earlier run waits for a reboot (exit 2, as before it was typed).
#[derive(Debug, thiserror::Error)]
#[error("driver {driver} was installed and needs a reboot first ({reason}): reboot, then run cudaup again")]
pub struct RebootPending {
    /// The driver version installed.
    pub driver: String,
    /// Why the reboot is needed.
    pub reason: String,
}

/// The reboot gate, before the machine is detected: a driver an earlier run installed waits for
/// a reboot. `Ok(true)`: the reboot happened since (its marker is gone), so the install goes on;
/// `Ok(false)`: no driver waits, or the plan is for a picture (nothing of this machine's driver
/// is touched). Refused with [`RebootPending`] while the reboot has not happened.
pub fn reboot_gate(home: &Home, root: &Root, target: Target) -> Result<bool, RunError> {
    if crate::install::driver::clear_if_rebooted(home.root(), root).map_err(StepError::from)? {
        return Ok(true);
    }
    match crate::install::driver::reboot_pending(home.root(), root) {
        Some(m) if target == Target::Here => Err(RebootPending {
            driver: m.driver,
            reason: m.reason,
        }
        .into()),
        _ => Ok(false),
    }
}

/// What an install runs with.
pub struct Ctx<'a> {
    /// The process (its variables, `PATH`, home).
    pub process: &'a Process,
    /// Runs the commands.
    pub runner: &'a dyn Runner,
    /// The catalog the plan was made from.
    pub catalog: &'a Catalog,
    /// `$CUDAUP_HOME`.
    pub home: &'a Home,
    /// The machine's root (`/etc/os-release` for the driver, its boot id for the reboot marker).
    pub root: &'a Root,
    /// The fetchers.
    pub net: &'a Net,
    /// What a person sees and answers.
    pub ui: &'a mut dyn Ui,
    /// How far to go.
    pub mode: Mode,
}

/// What `locate` found that the steps change.
pub struct Work {
    /// The driver's commands, when they can run here.
    pub driver: Option<DriverStep>,
    /// Why the driver cannot be installed automatically.
    pub driver_blocked: Option<String>,
    /// The toolkit to install.
    pub toolkit: Option<ToolkitStep>,
    /// The framework to install.
    pub framework: Option<FrameworkStep>,
}

/// Runs `plan`: locate, show, then (as `ctx.mode` allows) ask and run the steps. Returns what
/// was done: [`Outcome::DryRun`], [`Outcome::NothingToDo`] or [`Outcome::Installed`].
/// [`RunError::Declined`] when the user answered no.
pub fn run(plan: &InstallPlan, ctx: &mut Ctx<'_>) -> Result<Outcome, RunError> {
    let dry = ctx.mode == Mode::DryRun;
    let located = locate(plan, ctx.net, ctx.catalog, ctx.process, ctx.home, ctx.root)?;
    // A toolkit cudaup installed (its receipt is inside) is registered again, in case the run
    // that installed it was killed before it could be.
    if let (Some(receipt), false) = (&located.kept_receipt, dry) {
        crate::install::receipts::register(ctx.home.root(), receipt).map_err(StepError::from)?;
    }
    ctx.ui.planned(plan, &located)?;
    let Located {
        driver,
        self_copy,
        toolkit,
        framework,
        ..
    } = located;
    let (driver, driver_blocked) = match driver {
        Some(DriverLocated::Ready(step)) => (Some(step), None),
        Some(DriverLocated::Blocked(why)) => (None, Some(why)),
        None => (None, None),
    };
    let work = Work {
        driver,
        driver_blocked,
        toolkit: toolkit.map(|t| ToolkitStep {
            spec: t.spec,
            resolved: t.resolved,
        }),
        framework,
    };
    if work.toolkit.is_none() && work.framework.is_none() && !self_copy.pending(ctx.home.root()) {
        return nothing_to_do(plan, ctx);
    }
    let plan_doc = match &work.framework {
        Some(f) => crate::install::python::route::describe_in_plan(&plan.plan, &f.route_view()),
        None => serde_json::to_value(&plan.plan).expect("a plan serialises"),
    };
    match ctx.mode {
        Mode::DryRun => return Ok(Outcome::DryRun(plan_doc)),
        Mode::Ask if !ctx.ui.confirm("Proceed?", false)? => return Err(RunError::Declined),
        Mode::Ask | Mode::Yes => {}
    }
    let report = steps(plan, &work, plan_doc, ctx)?;
    Ok(Outcome::Installed(Box::new(report)))
}

/// Nothing to install: the environment is still converged (a run killed after its toolkit
/// landed left the env scripts or rc hooks unwritten, and this run is the one that finishes
/// them), except in a dry run.
fn nothing_to_do(plan: &InstallPlan, ctx: &mut Ctx<'_>) -> Result<Outcome, RunError> {
    ctx.ui.nothing_to_do()?;
    let mut env = None;
    let mut changed = false;
    if ctx.mode != Mode::DryRun {
        // Not pending: the copy is in place and current, so this only reads its stamp.
        let cudaup = crate::install::self_copy::ensure(ctx.process, ctx.home.root())
            .map_err(StepError::SelfCopy)?;
        let kept = plan.kept_toolkit();
        if let Some(done) = steps::env::run(
            ctx.process,
            ctx.home.root(),
            kept.as_deref(),
            &cudaup,
            &shells(plan, ctx.process),
            plan.env.modify_path,
        )
        .map_err(RunError::Step)?
        {
            ctx.ui.env_done(&done, &cudaup)?;
            changed = !done.rc_changed.is_empty();
            env = Some(EnvReport {
                source: done.source,
                rc_files_changed: done.rc_changed,
            });
        }
    }
    Ok(Outcome::NothingToDo(NothingToDo {
        schema_version: SCHEMA_VERSION,
        status: NothingStatus::NothingToDo,
        profile: plan.plan.profile.name().to_owned(),
        changed,
        reboot_required: false,
        gpus: plan.gpus(),
        plan: serde_json::to_value(&plan.plan).expect("a plan serialises"),
        env,
    }))
}

/// The shells whose rc files get the env line: the plan's, else those set up here.
fn shells(plan: &InstallPlan, process: &Process) -> Vec<Shell> {
    match &plan.env.shells {
        Some(shells) => shells.clone(),
        None => crate::install::env::shells_here(process),
    }
}

impl From<io::Error> for RunError {
    fn from(e: io::Error) -> Self {
        RunError::Step(StepError::Io(e))
    }
}

/// Runs the steps of `plan` on `work`, after the question. `plan_doc` goes into the report.
fn steps(
    plan: &InstallPlan,
    work: &Work,
    plan_doc: serde_json::Value,
    ctx: &mut Ctx<'_>,
) -> Result<Installed, StepError> {
    let home = ctx.home.root();
    let shells = shells(plan, ctx.process);
    let mut report = Installed {
        schema_version: SCHEMA_VERSION,
        status: InstalledStatus::Installed,
        profile: plan.plan.profile.name().to_owned(),
        changed: false,
        reboot_required: false,
        gpus: plan.gpus(),
        plan: plan_doc,
        driver: None,
        toolkit: None,
        venv: None,
        cudaup: None,
        env: None,
        verify: None,
    };
    let driver_done = match &work.driver {
        Some(step) => {
            let events = &mut *ctx.ui;
            let mut echo = |l: &str| events.driver_line(l);
            steps::driver::run(step, ctx.runner, home, ctx.root, &mut echo)?
        }
        None => None,
    };
    if let Some(done) = driver_done {
        report.changed = true;
        report.reboot_required = done.reboot_required;
        report.driver = Some(done.report);
    } else if let Some(why) = &work.driver_blocked {
        report.driver = Some(DriverReport {
            manual: Some(why.clone()),
            ..Default::default()
        });
    }
    // cudaup's own copy is written while the toolkit and the framework install (its bytes and
    // their fsync, off the serial end); it goes in after them, as before (self_copy::stage).
    let process = ctx.process;
    let overlap = work.toolkit.is_some() || work.framework.is_some();
    let cudaup = std::thread::scope(|s| -> Result<SelfCopy, StepError> {
        let staging = overlap.then(|| s.spawn(|| crate::install::self_copy::stage(process, home)));
        toolkit_and_framework(plan, work, &shells, &mut report, ctx)?;
        let staged = match staging.map(|h| h.join()) {
            Some(Ok(Ok(staged))) => staged,
            Some(Ok(Err(e))) => {
                // Copied now instead, where the same error (if it is one still) is reported.
                tracing::debug!("could not write cudaup's copy ahead: {e}");
                None
            }
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => None,
        };
        crate::install::self_copy::ensure_staged(process, home, staged).map_err(StepError::SelfCopy)
    })?;
    ctx.ui.self_copy_done(&cudaup)?;
    report.changed |= cudaup.changed();
    report.cudaup = Some(cudaup.clone());
    // The environment: the toolkit installed now, or the one the plan keeps; and cudaup itself
    // (with the toolkit that was active before, for a profile without one).
    let active_toolkit: Option<PathBuf> = match &work.toolkit {
        Some(step) => Some(std::path::absolute(&step.spec.prefix)?),
        None => plan.kept_toolkit(),
    };
    if let Some(done) = steps::env::run(
        ctx.process,
        home,
        active_toolkit.as_deref(),
        &cudaup,
        &shells,
        plan.env.modify_path,
    )? {
        ctx.ui.env_done(&done, &cudaup)?;
        report.changed |= !done.rc_changed.is_empty();
        report.env = Some(EnvReport {
            source: done.source,
            rc_files_changed: done.rc_changed,
        });
    }
    if work.framework.is_some() {
        if let Some(ld) = ctx.process.var("LD_LIBRARY_PATH") {
            for (dir, libs) in crate::shell::shadowing(ld, &crate::shell::list_dir) {
                ctx.ui.warning(&format!(
                    "your LD_LIBRARY_PATH has {} ({}), which can shadow the CUDA libraries the framework wheel carries; if torch fails to load, remove it from LD_LIBRARY_PATH",
                    dir.display(),
                    libs.join(", ")
                ))?;
            }
        }
    }
    Ok(report)
}

/// The toolkit's and the framework's steps, each recorded in `report`.
fn toolkit_and_framework(
    plan: &InstallPlan,
    work: &Work,
    shells: &[Shell],
    report: &mut Installed,
    ctx: &mut Ctx<'_>,
) -> Result<(), StepError> {
    let home = ctx.home.root();
    if let Some(step) = &work.toolkit {
        let (spec, resolved) = (&step.spec, &step.resolved);
        let total: u64 = resolved.items.iter().filter_map(|i| i.artifact.size).sum();
        let fetcher = ctx
            .net
            .fetcher(ctx.ui.progress(Progress::Download { total }));
        // What the env step will do, for `repair` to finish should this run be killed first.
        let intent = crate::install::env::Intent {
            toolkit: Some(std::path::absolute(&spec.prefix)?),
            shells: shells.iter().map(|s| s.name().to_owned()).collect(),
            modify_path: plan.env.modify_path,
        };
        let done = steps::toolkit::run(step, &fetcher, &intent, home, ctx.runner);
        drop(fetcher);
        let done = done?;
        ctx.ui.toolkit_done(spec, &done)?;
        report.toolkit = Some(ToolkitReport::new(
            spec,
            &resolved.items,
            &done.receipt,
            done.banner.as_deref(),
            &resolved.notes,
        ));
        report.changed = true;
    }
    if let Some(step) = &work.framework {
        let progress = ctx.ui.progress(Progress::Framework);
        let mut said = Ok(());
        let events = &mut *ctx.ui;
        let mut on_installer = |line: &str| said = events.installer(line);
        let done = steps::framework::run(
            step,
            plan.plan.profile,
            ctx.runner,
            &ctx.process.path_entries(),
            ctx.process.var(crate::world::vars::CUDAUP_NO_UV) == Some("1"),
            plan.settings.guard,
            &ctx.catalog.uv,
            ctx.home,
            ctx.net,
            progress,
            &mut on_installer,
        )?;
        said?;
        ctx.ui.framework_done(step, &done)?;
        let FrameworkDone {
            receipt,
            mut notes,
            log,
            installer,
        } = done;
        if let Some(line) = installer {
            notes.insert(0, line);
        }
        report.venv = Some(VenvReport {
            path: receipt.venv.clone(),
            packages: receipt.packages.clone(),
            route: serde_json::to_value(&step.route).expect("a route serialises"),
            notes,
            log,
        });
        report.changed |= step.packages.is_some();
    }
    Ok(())
}
