//! The install's steps in their order, after the plan was shown and confirmed: the driver, the
//! toolkit, the framework, cudaup's own copy, the environment. [`run`] returns the typed report
//! ([`Installed`]); what a person sees while it runs goes through [`Events`], which the CLI
//! implements (uv's `InstallLogger` is the model), so nothing here writes to a terminal.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use crate::detect::Root;
use crate::install::driver::DriverStep;
use crate::install::home::Home;
use crate::install::locate::Net;
use crate::install::python::step::FrameworkStep;
use crate::install::report::{
    DriverReport, Installed, InstalledStatus, PlannedGpu, ToolkitReport, VenvReport, SCHEMA_VERSION,
};
use crate::install::self_copy::Installed as SelfCopy;
use crate::install::steps::{self, env::EnvDone, framework::FrameworkDone, toolkit::ToolkitDone};
use crate::install::{Resolved, ToolkitSpec};
use crate::shell::Shell;
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::runner::Runner;

use super::plan::InstallPlan;
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

/// What a person sees while the steps run; each method may fail writing it.
pub trait Events {
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

/// What the steps run with.
pub struct Ctx<'a> {
    /// The process (its variables, `PATH`, home).
    pub process: &'a Process,
    /// Runs the commands.
    pub runner: &'a dyn Runner,
    /// `$CUDAUP_HOME`.
    pub home: &'a Home,
    /// The machine's root (the driver's reboot marker reads its boot id).
    pub root: &'a Root,
    /// The fetchers.
    pub net: &'a Net,
    /// The shells whose rc files get the env line.
    pub shells: Vec<Shell>,
    /// What a person sees.
    pub events: &'a mut dyn Events,
}

/// What `locate` found that the steps change.
pub struct Work {
    /// The driver's commands, when they can run here.
    pub driver: Option<DriverStep>,
    /// Why the driver cannot be installed automatically.
    pub driver_blocked: Option<String>,
    /// The toolkit to install.
    pub toolkit: Option<(ToolkitSpec, Resolved)>,
    /// The framework to install.
    pub framework: Option<FrameworkStep>,
}

/// Runs the steps of `plan` on `work`. `gpus` and `plan_doc` go into the report as they are.
pub fn run(
    plan: &InstallPlan,
    work: &Work,
    gpus: Vec<PlannedGpu>,
    plan_doc: serde_json::Value,
    ctx: &mut Ctx<'_>,
) -> Result<Installed, StepError> {
    let s = &plan.settings;
    let home = ctx.home.root();
    let mut report = Installed {
        schema_version: SCHEMA_VERSION,
        status: InstalledStatus::Installed,
        profile: plan.plan.profile.name().to_owned(),
        changed: false,
        reboot_required: false,
        gpus,
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
            let events = &mut *ctx.events;
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
    if let Some((spec, resolved)) = &work.toolkit {
        let total: u64 = resolved.items.iter().filter_map(|i| i.artifact.size).sum();
        let fetcher = ctx
            .net
            .fetcher(ctx.events.progress(Progress::Download { total }));
        // What the env step will do, for `repair` to finish should this run be killed first.
        let intent = crate::install::env::Intent {
            toolkit: Some(std::path::absolute(&spec.prefix)?),
            shells: ctx.shells.iter().map(|s| s.name().to_owned()).collect(),
            modify_path: s.modify_path,
        };
        let done = steps::toolkit::run(spec, resolved, &fetcher, &intent, home, ctx.runner);
        drop(fetcher);
        let done = done?;
        ctx.events.toolkit_done(spec, &done)?;
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
        let progress = ctx.events.progress(Progress::Framework);
        let mut said = Ok(());
        let events = &mut *ctx.events;
        let mut on_installer = |line: &str| said = events.installer(line);
        let done = steps::framework::run(
            step,
            plan.plan.profile,
            ctx.runner,
            &ctx.process.path_entries(),
            ctx.process.var(crate::world::vars::CUDAUP_NO_UV) == Some("1"),
            ctx.home,
            ctx.net,
            progress,
            &mut on_installer,
        )?;
        said?;
        ctx.events.framework_done(step, &done)?;
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
    let cudaup =
        crate::install::self_copy::ensure(ctx.process, home).map_err(StepError::SelfCopy)?;
    ctx.events.self_copy_done(&cudaup)?;
    report.changed |= cudaup.changed();
    report.cudaup = Some(cudaup.clone());
    // The environment: the toolkit installed now, or the one the plan keeps; and cudaup itself
    // (with the toolkit that was active before, for a profile without one).
    let active_toolkit: Option<PathBuf> = match &work.toolkit {
        Some((spec, _)) => Some(std::path::absolute(&spec.prefix)?),
        None => plan.kept_toolkit(),
    };
    if let Some(done) = steps::env::run(
        ctx.process,
        home,
        active_toolkit.as_deref(),
        &cudaup,
        &ctx.shells,
        s.modify_path,
    )? {
        ctx.events.env_done(&done, &cudaup)?;
        report.changed |= !done.rc_changed.is_empty();
        report.env = Some(crate::install::report::EnvReport {
            source: done.source,
            rc_files_changed: done.rc_changed,
        });
    }
    if work.framework.is_some() {
        if let Some(ld) = ctx.process.var("LD_LIBRARY_PATH") {
            for (dir, libs) in crate::shell::shadowing(ld, &crate::shell::list_dir) {
                ctx.events.warning(&format!(
                    "your LD_LIBRARY_PATH has {} ({}), which can shadow the CUDA libraries the framework wheel carries; if torch fails to load, remove it from LD_LIBRARY_PATH",
                    dir.display(),
                    libs.join(", ")
                ))?;
            }
        }
    }
    Ok(report)
}
