//! `cudaup install`: the flags become settings, the settings an [`InstallPlan`] for this machine
//! (or a `--system` picture's), and `install::run` runs it; this file builds the run's context,
//! and `shown.rs` renders what the run says ([`install::run::Events`]) and its question.
//! `--verify` is composed here: `cudaup verify` after the run, as two commands would.

mod shown;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{ExitCode, Result};
use crate::install;
use crate::install::home::Home;
use crate::install::locate::Net;
use crate::install::plan::{survey, venv_dir, InstallPlan, PlanError, Target, ToolkitPlan};
use crate::install::report::{InstalledStatus, Outcome};
use crate::install::run::{Ctx, Mode, RunError};
use crate::model::plan::Plan;
use crate::model::request::WithComponent;
use crate::settings::{InstallOptions, InstallSettings, SettingsError};
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::args::{source_options, IndexArgs, SourceArgs, StackArgs};
use super::{GlobalArgs, Style};
use shown::Shown;

/// `cudaup install` flags.
#[derive(Debug, Clone, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// Take every answer from an unattended config file (see the README); flags override it,
    /// CUDAUP_* variables sit between
    #[arg(long, value_name = "FILE", env = crate::world::vars::CUDAUP_CONFIG)]
    pub config: Option<PathBuf>,
    /// Run `cudaup verify` after installing
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Plan for the machine described in FILE (its `detect --json`) but install here, e.g. to
    /// build an image on a machine without that GPU; CUDA availability is then not checked
    #[arg(long, value_name = "FILE")]
    pub system: Option<PathBuf>,
    /// Install the toolkit here [default: $CUDAUP_HOME/toolkits/cuda-<version>]
    #[arg(long, value_name = "DIR")]
    pub prefix: Option<PathBuf>,
    /// The virtual environment for PyTorch / TensorFlow; an existing one is reused
    /// [default: $CUDAUP_HOME/venvs/<profile>]
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    #[command(flatten)]
    pub index: IndexArgs,
    /// Leave cuDNN out
    #[arg(long)]
    pub no_cudnn: bool,
    /// Write the env scripts but leave shell rc files (on Windows, the user's environment in the registry) alone
    #[arg(long)]
    pub no_modify_path: bool,
    /// Install exactly the stack of this lock file (`cudaup lock`): its pins, with every
    /// archive and wheel checked against its sha256 before anything is installed; a machine the
    /// lock does not cover is refused, naming what does not fit (docs/lock.md)
    #[arg(long, value_name = "FILE")]
    pub locked: Option<PathBuf>,
    /// Leave the venv unguarded: no constraints in its pip.conf and uv.toml, no startup check
    /// that says when another build replaced the planned framework (docs/guard.md)
    #[arg(long)]
    pub no_guard: bool,
    /// Hook only this shell's rc files (sh, bash, zsh, fish, powershell; repeatable)
    /// [default: every shell found here]
    #[arg(long = "shell", value_name = "SHELL")]
    pub shells: Vec<String>,
    /// Do not ask for confirmation
    #[arg(short, long)]
    pub yes: bool,
    /// Show what would be fetched and where it would go, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Progress as JSON lines on stderr and a JSON report on stdout
    #[arg(long)]
    pub json: bool,
    /// Optional framework components for the venv (repeatable): `tensorrt` adds TensorRT's
    /// wheels for the stack's CUDA major (manifests/tensorrt.toml), which `verify` then checks
    #[arg(long = "with", value_enum, value_name = "COMPONENT")]
    pub with: Vec<WithComponent>,
}

impl InstallArgs {
    /// The flags as one layer of settings, each value checked (a bad one names its flag).
    pub fn options(&self, process: &Process) -> Result<InstallOptions> {
        let mut shells = Vec::new();
        for name in &self.shells {
            let shell = crate::shell::Shell::parse(name).ok_or_else(|| {
                SettingsError::invalid("--shell", name, "use sh, bash, zsh, fish or powershell")
            })?;
            if !shells.contains(&shell) {
                shells.push(shell);
            }
        }
        Ok(InstallOptions {
            prefix: self.prefix.clone(),
            venv: self.venv.clone(),
            no_cudnn: self.no_cudnn.then_some(true),
            verify: self.verify.then_some(true),
            modify_path: self.no_modify_path.then_some(false),
            guard: self.no_guard.then_some(false),
            shells: (!shells.is_empty()).then_some(shells),
            with: (!self.with.is_empty()).then(|| self.with.clone()),
            ..source_options(&self.source, &self.index, &self.stack, process)?
        })
    }
}

/// No stack of the profile fits: its reasons, exit code 5.
pub(super) fn render_unsupported(plan: &Plan, out: &mut dyn Write) -> Result<ExitCode> {
    writeln!(out, "No {} stack for this machine:", plan.profile)?;
    for r in &plan.reasons {
        writeln!(out, "  - {r}")?;
    }
    Ok(ExitCode::Unsupported)
}

/// How an install run talks and how far it goes, besides its settings.
#[derive(Debug, Clone, Copy)]
pub struct RunFlags {
    /// Dry run, ask, or go.
    pub mode: Mode,
    /// JSON lines and a JSON report.
    pub json: bool,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_install(
    args: &InstallArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    // The root certificates are read while the machine is detected, not after.
    crate::fetch::tls::warm();
    let file = super::args::load_config(args.config.as_deref())?;
    let mut options = args.options(process)?;
    let mut locked = None;
    if let Some(path) = &args.locked {
        let lock = super::lock::read(path)?;
        let system = match &args.system {
            Some(p) => crate::detect::picture::load_system(p, catalog)?,
            None => super::detect::detect_live(process, runner, catalog, false).system,
        };
        let host = lock.host_for(&system, &path.display().to_string())?.clone();
        // The lock's releases over the flags; the flags still say where things come from.
        options =
            crate::settings::combine::Combine::combine(super::lock::pins(&lock, &host)?, options);
        locked = Some(host);
    }
    let settings = InstallSettings::resolve(options, process, file.as_ref())?;
    let flags = RunFlags {
        mode: match (args.dry_run, args.yes) {
            (true, _) => Mode::DryRun,
            (false, true) => Mode::Yes,
            (false, false) => Mode::Ask,
        },
        json: args.json,
    };
    let talk = !flags.json && !global.quiet;
    let mut plan = match plan_install(
        &settings,
        args.system.as_deref(),
        talk,
        (process, runner, catalog, style),
        cancel.clone(),
        out,
    )? {
        Ok(plan) => plan,
        Err(code) => return Ok(code),
    };
    if let Some(host) = &locked {
        // Every locked byte is checked before anything changes.
        let home = Home::of(process)?;
        let (located, fetcher) =
            crate::lock::make::locate(&plan, catalog, process, &home, cancel.clone())?;
        crate::lock::verify::against(host, &located, &fetcher)?;
        let hashed = host.hashed_requirements();
        if talk {
            writeln!(
                out,
                "locked: host {} of {}, every archive and wheel checked against its sha256",
                host.name,
                args.locked
                    .as_deref()
                    .map(Path::display)
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            )?;
            if !hashed.is_empty() {
                writeln!(
                    out,
                    "  the installer checks each of the {} distributions it installs against the lock's sha256 (--require-hashes)",
                    hashed.len()
                )?;
            }
        }
        if let Some(f) = plan.framework.as_mut() {
            f.hashed = hashed;
        }
    }
    run_plan(
        &plan, flags, global, process, runner, catalog, style, cancel, out,
    )
}

/// The install plan for `settings` on this machine, or on the machine of the `system` picture:
/// the reboot gate first (a driver an earlier run installed waits for a reboot), then detect,
/// then the decisions, then (where a source is left to decide) the download sites, asked at
/// once: a profile none of them can serve is refused before anything is downloaded (exit code
/// 3, with what would work). `Err(code)` when no stack fits or nothing can serve it (said on
/// `out`).
pub(super) fn plan_install(
    settings: &InstallSettings,
    system: Option<&Path>,
    talk: bool,
    (process, runner, catalog, style): (&Process, &dyn Runner, &Catalog, &Style),
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<std::result::Result<InstallPlan, ExitCode>> {
    let home = Home::of(process)?;
    let target = match system {
        Some(_) => Target::Picture,
        None => Target::Here,
    };
    reboot_gate(&home, target, talk, out)?;
    let wants_pythons =
        !settings.profile_given || settings.request.profile.framework_component().is_some();
    let live = if wants_pythons {
        super::detect::detect_live(process, runner, catalog, false).system
    } else {
        super::detect::detect_live_without_pythons(process, runner, catalog).system
    };
    let picture = system
        .map(|p| crate::detect::picture::load_system(p, catalog))
        .transpose()?;
    // No profile chosen: the machine's offer (the rule plan, the wizard and bench share).
    let settings = &settings
        .clone()
        .for_machine(picture.as_ref().unwrap_or(&live), catalog)?;
    if let (Some(why), true) = (&settings.offered, talk) {
        writeln!(
            out,
            "profile {}: this machine's default ({why}; --profile chooses another)",
            settings.request.profile
        )?;
    }
    let plan = match plan_for(settings, &live, picture, &home, runner, catalog)? {
        Ok(p) => p,
        Err(plan) => return Ok(Err(render_unsupported(&plan, out)?)),
    };
    // The sites this machine downloads from (whatever machine the plan is for), asked when a
    // source is left to decide and something is to be downloaded.
    let toolkit = plan.plan.components.iter().any(|c| {
        matches!(c.name.as_str(), "cuda" | "cudnn")
            && matches!(
                c.action,
                crate::model::plan::Action::Install | crate::model::plan::Action::Upgrade
            )
    });
    let framework = plan.plan.profile.framework_component().is_some()
        && !crate::install::python::step::only_checks(&plan.plan, &plan.venv);
    let downloads = toolkit || framework;
    if downloads && crate::install::reach::wanted(settings) {
        let words = style.lang().reach();
        let routes = crate::install::reach::routes_for(settings);
        let reach = super::reach::ask(&routes, settings.allow_http, process, words, cancel)?;
        if talk {
            write!(out, "{}", super::reach::render(&reach, words, style))?;
        }
        if let Err(g) = reach.fits(settings.request.profile) {
            // A refusal, as an error is: on stderr (stdout stays the report, or --json's
            // document), in the run's language.
            let refusal = super::reach::render_greyed(settings.request.profile, &g, words)
                + &super::reach::render_fix(words);
            out.flush()?;
            write!(std::io::stderr().lock(), "{refusal}")?;
            return Ok(Err(ExitCode::Network));
        }
    }
    Ok(Ok(plan))
}

/// The install plan for `settings` on `live` (this machine, as detect saw it) or on its
/// `picture`: survey, then `InstallPlan::new`. `Err(plan)` when no stack fits. The wizard's
/// preview makes its plan so too (a test holds them equal).
pub(super) fn plan_for(
    settings: &InstallSettings,
    live: &crate::model::system::System,
    picture: Option<crate::model::system::System>,
    home: &Home,
    runner: &dyn Runner,
    catalog: &Catalog,
) -> Result<std::result::Result<InstallPlan, Box<Plan>>> {
    let target = match picture {
        Some(_) => Target::Picture,
        None => Target::Here,
    };
    let system = survey(live, picture, &venv_dir(settings, home), runner);
    match InstallPlan::new(settings, &system, catalog, home, target) {
        Ok(p) => Ok(Ok(p)),
        Err(PlanError::Unsupported(plan)) => Ok(Err(plan)),
        Err(e) => Err(e.into()),
    }
}

/// The reboot gate (`install::run::reboot_gate`): refused while a driver an earlier run
/// installed waits for its reboot; once it happened, says so (when `talk`) and goes on.
pub(super) fn reboot_gate(
    home: &Home,
    target: Target,
    talk: bool,
    out: &mut dyn Write,
) -> Result<()> {
    if install::run::reboot_gate(home, &crate::detect::Root::live(), target)? && talk {
        writeln!(
            out,
            "The reboot after the driver install happened: continuing."
        )?;
    }
    Ok(())
}

/// Runs `plan` (`install::run`), showing it as it goes, then `--verify` when the settings ask
/// for it, and prints the JSON report with `--json`.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_plan(
    plan: &InstallPlan,
    flags: RunFlags,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let s = &plan.settings;
    let home = Home::of(process)?;
    let live_root = crate::detect::Root::live();
    let talk = !flags.json && !global.quiet;
    let net = Net::new(process, &home.cache(), s.allow_http, cancel)?;
    let mut shown = Shown {
        out: &mut *out,
        style,
        talk,
        // What will happen, shown before it does (a dry run shows it even with --quiet; with
        // --json the document alone goes to stdout).
        show: talk || (flags.mode == Mode::DryRun && !flags.json),
        quiet: global.quiet,
        json: flags.json,
        tty: process.stdout_is_tty,
        process,
        home: home.root(),
        modify_path: s.modify_path,
    };
    let mut ctx = Ctx {
        process,
        runner,
        catalog,
        home: &home,
        root: &live_root,
        net: &net,
        ui: &mut shown,
        mode: flags.mode,
    };
    let mut report = match install::run::run(plan, &mut ctx) {
        Ok(Outcome::Installed(report)) => report,
        Ok(other) => {
            if flags.json {
                writeln!(out, "{}", other.to_json())?;
            }
            return Ok(ExitCode::Ok);
        }
        Err(RunError::Declined) => return Ok(ExitCode::Cancelled),
        Err(e) => return Err(e.into()),
    };
    let reboot_required = report.reboot_required;
    if reboot_required && talk {
        writeln!(out, "{}", style.warn("Reboot now to load the new driver; then run the same cudaup command again: it continues where it stopped."))?;
    }
    // Prove it works, when asked (`--verify`, or `verify = true` in the config) — not before
    // the reboot a new driver needs.
    let mut code = ExitCode::Ok;
    if s.verify && !reboot_required {
        // The toolkit installed now, or the one the plan keeps; the venv the framework went in.
        let active_toolkit = match &plan.toolkit {
            Some(ToolkitPlan::Install { prefix, .. }) => Some(std::path::absolute(prefix)?),
            _ => plan.kept_toolkit(),
        };
        let vargs = super::verify::VerifyArgs {
            json: flags.json,
            bench: false,
            container: false,
            venvs: report.venv.iter().map(|_| plan.venv.clone()).collect(),
            toolkit: active_toolkit,
        };
        let mut buf: Vec<u8> = Vec::new();
        let sink: &mut dyn Write = if flags.json { &mut buf } else { &mut *out };
        code = super::verify::run(&vargs, global, process, runner, catalog, style, sink)?;
        if flags.json {
            report.verify = Some(serde_json::from_slice(&buf).unwrap_or(serde_json::Value::Null));
        }
    }
    if flags.json {
        if code != ExitCode::Ok {
            report.status = InstalledStatus::VerificationFailed;
        }
        writeln!(out, "{}", Outcome::Installed(report).to_json())?;
    }
    Ok(code)
}
