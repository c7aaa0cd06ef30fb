//! `cudaup install` (the toolkit and cuDNN for now) and `cudaup mirror create`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::catalog::Catalog;
use crate::error::{Error, ExitCode, Result};
use crate::fetch::{Fetcher, Location};
use crate::install::home::Home;
use crate::install::locate::{local_bundle, source_for, DriverLocated, Located, Net};
use crate::install::plan::{survey, venv_dir, InstallPlan, PlanError, Target, ToolkitPlan};
use crate::install::python::route::IndexSettings;
use crate::install::report::{InstalledStatus, Outcome};
use crate::install::run::{Ctx, Mode, Progress, RunError};
use crate::install::steps::{env::EnvDone, framework::FrameworkDone, toolkit::ToolkitDone};
use crate::install::{self, InstallError, Source, ToolkitSpec};
use crate::model::plan::{Plan, Status};
use crate::model::request::TorchSource;
use crate::model::version::Version;
use crate::settings::file::Config;
use crate::settings::resolve::check_location;
use crate::settings::{InstallOptions, InstallSettings, SettingsError};
use crate::sources::redist;
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::prompt::{Prompter, Result as PromptResult, StdinPrompter, Validate};
use crate::world::runner::Runner;

use super::plan::StackArgs;
use super::{GlobalArgs, Style};

pub use crate::model::request::{SourceKind, WithComponent};

/// Where bytes come from (shared by install and mirror create).
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// Fetch from NVIDIA's redistributable archives, or from NVIDIA's wheels on a package index
    /// [default: the archives where NVIDIA's server answers, else its CUDA 13+ wheels from PyPI;
    /// a --mirror means redist]
    #[arg(long, value_enum)]
    pub source: Option<SourceKind>,
    /// A copy of NVIDIA's download layout (https://…, http://…, file://… or a directory), e.g.
    /// one made by `cudaup mirror create` [default: https://developer.download.nvidia.com]
    #[arg(long, value_name = "URL|DIR")]
    pub mirror: Option<String>,
    /// The package index for `--source wheels` (PEP 691/503: PyPI or any mirror of it, or a
    /// directory laid out the same way) [default: https://pypi.org/simple]
    #[arg(long, value_name = "URL|DIR")]
    pub index_url: Option<String>,
    /// Accept a plain-http mirror. Its bytes are still checked against the sha256s in its
    /// manifests, but nothing proves those manifests are the mirror's own
    #[arg(long)]
    pub allow_http: bool,
}

/// `--torch-source`'s values, listed in `--help`.
pub fn torch_source_parser() -> impl clap::builder::TypedValueParser<Value = TorchSource> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["auto", "pytorch", "pypi"])
        .map(|s| s.parse::<TorchSource>().expect("a listed value"))
}

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
    /// PyPI or a mirror of it (a URL, a PEP 503 directory or a flat folder of wheels), for
    /// TensorFlow, the frameworks' dependencies, and PyTorch when the planned build is PyPI's
    /// [default: https://pypi.org/simple]
    #[arg(long, value_name = "URL|DIR")]
    pub pypi_index: Option<String>,
    /// PyTorch's wheel index or a copy of its layout (`<base>/<variant>/<project>/`, a flat
    /// `<base>/<variant>/` listing, or one variant's index), a URL or a directory
    /// [default: https://download.pytorch.org/whl]
    #[arg(long, value_name = "URL|DIR")]
    pub torch_index: Option<String>,
    /// Which index may serve PyTorch: auto (ask PyTorch's index and PyPI with a short timeout,
    /// take the first that has the planned build), pytorch, or pypi (only when the planned build
    /// is the one PyPI serves) [default: auto]
    #[arg(long, value_name = "SOURCE", value_parser = torch_source_parser())]
    pub torch_source: Option<TorchSource>,
    /// Leave cuDNN out
    #[arg(long)]
    pub no_cudnn: bool,
    /// Write the env scripts but leave shell rc files alone
    #[arg(long)]
    pub no_modify_path: bool,
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
        let indexes = (&self.pypi_index, &self.torch_index, self.torch_source);
        Ok(InstallOptions {
            prefix: self.prefix.clone(),
            venv: self.venv.clone(),
            no_cudnn: self.no_cudnn.then_some(true),
            verify: self.verify.then_some(true),
            modify_path: self.no_modify_path.then_some(false),
            shells: (!shells.is_empty()).then_some(shells),
            with: (!self.with.is_empty()).then(|| self.with.clone()),
            ..source_options(&self.source, indexes, &self.stack, process)?
        })
    }
}

/// The flags where bytes come from (shared by install and mirror create), over the stack's
/// flags, each location checked as its config key is.
fn source_options(
    source: &SourceArgs,
    (pypi, torch, torch_source): (&Option<String>, &Option<String>, Option<TorchSource>),
    stack: &StackArgs,
    process: &Process,
) -> Result<InstallOptions> {
    let cwd = process.cwd();
    let location = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|v| check_location(flag, v, cwd))
            .transpose()
    };
    Ok(InstallOptions {
        source: source.source,
        mirror: location("--mirror", &source.mirror)?,
        index_url: location("--index-url", &source.index_url)?,
        pypi_index: location("--pypi-index", pypi)?,
        torch_index: location("--torch-index", torch)?,
        torch_source,
        allow_http: source.allow_http.then_some(true),
        ..stack.options()?
    })
}

/// `cudaup mirror` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum MirrorCommand {
    /// Download everything a plan needs into DIR, for a machine without network: the toolkit
    /// (NVIDIA's layout with its redistrib JSONs, or with --source wheels NVIDIA's wheels) and
    /// the framework with every dependency for the target's Python and platform, in a PEP 503
    /// index with a manifest (cudaup-bundle.json); `cudaup install --index-url DIR` (or
    /// `--mirror DIR`) then needs no network
    Create(MirrorArgs),
}

/// `cudaup mirror create` flags.
#[derive(Debug, Args)]
pub struct MirrorArgs {
    /// The directory to fill (created if needed; existing files are checked, not refetched)
    pub dir: PathBuf,
    /// Plan for the machine described in FILE (its `detect --json`) instead of this one
    #[arg(long, value_name = "FILE")]
    pub system: Option<PathBuf>,
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Leave cuDNN out
    #[arg(long)]
    pub no_cudnn: bool,
    /// Also mirror this machine architecture (x86_64, aarch64); repeatable [default: the
    /// planned machine's]
    #[arg(long = "arch", value_name = "ARCH")]
    pub arches: Vec<String>,
    /// PyPI or a mirror of it, to download the framework and its dependencies from
    /// [default: https://pypi.org/simple]
    #[arg(long, value_name = "URL|DIR")]
    pub pypi_index: Option<String>,
    /// PyTorch's wheel index or a copy of its layout [default: https://download.pytorch.org/whl]
    #[arg(long, value_name = "URL|DIR")]
    pub torch_index: Option<String>,
    /// Which index may serve PyTorch (auto, pytorch, pypi) [default: auto]
    #[arg(long, value_name = "SOURCE", value_parser = torch_source_parser())]
    pub torch_source: Option<TorchSource>,
    /// The target machine's glibc (2.N), which decides the manylinux wheels it can run
    /// [default: this machine's; 2.28 with --system]
    #[arg(long, value_name = "2.N", value_parser = parse_glibc)]
    pub glibc: Option<(u32, u32)>,
}

/// The fetcher every command uses, caching in this process's home.
pub fn fetcher(
    process: &Process,
    allow_http: bool,
    cancel: Arc<AtomicBool>,
    reporter: Arc<dyn Reporter>,
) -> Result<Fetcher> {
    let cache = install::home::Home::of(process)?.cache();
    Ok(crate::settings::net::fetcher(
        process, &cache, allow_http, cancel, reporter,
    )?)
}

/// The fetcher that asks the framework's routes (short timeouts), caching in this process's home.
pub fn probe_fetcher(
    process: &Process,
    allow_http: bool,
    cancel: Arc<AtomicBool>,
) -> Result<Fetcher> {
    let cache = install::home::Home::of(process)?.cache();
    Ok(crate::settings::net::probe_fetcher(
        process, &cache, allow_http, cancel,
    )?)
}

impl MirrorArgs {
    /// The flags as one layer of settings, each value checked.
    fn options(&self, process: &Process) -> Result<InstallOptions> {
        let indexes = (&self.pypi_index, &self.torch_index, self.torch_source);
        Ok(InstallOptions {
            no_cudnn: self.no_cudnn.then_some(true),
            ..source_options(&self.source, indexes, &self.stack, process)?
        })
    }
}

fn max_unpacked(process: &Process) -> Result<u64> {
    Ok(crate::settings::net::max_unpacked(process)?)
}

fn reporter_for(json: bool, stderr_tty: bool, total: u64) -> Arc<dyn Reporter> {
    if json {
        Arc::new(super::reporter::JsonLines::new(Box::new(std::io::stderr())))
    } else if stderr_tty {
        Arc::new(super::reporter::Bars::new(total))
    } else {
        Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())))
    }
}

fn render_unsupported(plan: &Plan, out: &mut dyn Write) -> Result<ExitCode> {
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

/// Reads `--config` (exit code 2 with FILE:LINE:COLUMN when it is broken).
pub fn load_config(path: Option<&Path>) -> Result<Option<Config>> {
    Ok(path
        .map(Config::load)
        .transpose()
        .map_err(SettingsError::from)?)
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
    let file = load_config(args.config.as_deref())?;
    let settings = InstallSettings::resolve(args.options(process)?, process, file.as_ref())?;
    let flags = RunFlags {
        mode: match (args.dry_run, args.yes) {
            (true, _) => Mode::DryRun,
            (false, true) => Mode::Yes,
            (false, false) => Mode::Ask,
        },
        json: args.json,
    };
    let talk = !flags.json && !global.quiet;
    let plan = match plan_install(
        &settings,
        args.system.as_deref(),
        talk,
        process,
        runner,
        catalog,
        out,
    )? {
        Ok(plan) => plan,
        Err(code) => return Ok(code),
    };
    run_plan(
        &plan, flags, global, process, runner, catalog, style, cancel, out,
    )
}

/// The install plan for `settings` on this machine, or on the machine of the `system` picture:
/// the reboot gate first (a driver an earlier run installed waits for a reboot), then detect,
/// then the decisions. `Err(code)` when no stack fits (said on `out`).
pub(super) fn plan_install(
    settings: &InstallSettings,
    system: Option<&Path>,
    talk: bool,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    out: &mut dyn Write,
) -> Result<std::result::Result<InstallPlan, ExitCode>> {
    let home = Home::of(process)?;
    let live_root = crate::detect::Root::live();
    let target = match system {
        Some(_) => Target::Picture,
        None => Target::Here,
    };
    if install::run::reboot_gate(&home, &live_root, target)? && talk {
        writeln!(
            out,
            "The reboot after the driver install happened: continuing."
        )?;
    }
    let live = super::detect::detect_live(process, runner, catalog, false).system;
    let picture = system
        .map(|p| super::plan::load_system(p, catalog))
        .transpose()?;
    let system = survey(&live, picture, &venv_dir(settings, &home), runner);
    match InstallPlan::new(settings, &system, catalog, &home, target) {
        Ok(p) => Ok(Ok(p)),
        Err(PlanError::Unsupported(plan)) => Ok(Err(render_unsupported(&plan, out)?)),
        Err(e) => Err(e.into()),
    }
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
        shells: chosen_shells(s, process),
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

/// How an install run is shown: the CLI's side of [`install::run::Events`].
struct Shown<'a> {
    out: &'a mut dyn Write,
    style: &'a Style,
    /// Human output on stdout (neither --json nor --quiet).
    talk: bool,
    /// The plan's listing before it runs.
    show: bool,
    quiet: bool,
    json: bool,
    tty: bool,
    process: &'a Process,
    home: &'a Path,
    modify_path: bool,
}

impl install::run::Events for Shown<'_> {
    fn planned(&mut self, plan: &InstallPlan, located: &Located) -> std::io::Result<()> {
        if self.show {
            render_located(self.out, self.style, plan, located).map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    fn nothing_to_do(&mut self) -> std::io::Result<()> {
        if self.talk {
            writeln!(self.out, "Nothing to install.")?;
        }
        Ok(())
    }

    fn driver_line(&mut self, line: &str) {
        if !self.quiet {
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    fn progress(&mut self, kind: Progress) -> Arc<dyn Reporter> {
        match kind {
            Progress::Download { total } => reporter_for(self.json, self.tty && !self.quiet, total),
            Progress::Framework if self.quiet && !self.json => {
                Arc::new(crate::world::progress::Silent)
            }
            Progress::Framework if self.json => {
                Arc::new(super::reporter::JsonLines::new(Box::new(std::io::stderr())))
            }
            Progress::Framework if self.tty => Arc::new(super::reporter::Bars::growing()),
            Progress::Framework => {
                Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())))
            }
        }
    }

    fn installer(&mut self, line: &str) -> std::io::Result<()> {
        if self.talk {
            writeln!(self.out, "{line}")?;
        }
        Ok(())
    }

    fn toolkit_done(&mut self, spec: &ToolkitSpec, done: &ToolkitDone) -> std::io::Result<()> {
        if !self.talk {
            return Ok(());
        }
        let (out, style, receipt) = (&mut self.out, self.style, &done.receipt);
        writeln!(
            out,
            "{} CUDA {} in {}",
            style.good("installed"),
            spec.cuda,
            receipt.prefix.display()
        )?;
        writeln!(
            out,
            "  {} files, receipt {}",
            receipt.files.len(),
            receipt.prefix.join(install::receipt::FILE_NAME).display()
        )?;
        match &done.banner {
            Some(v) => writeln!(out, "  nvcc --version: {v}")?,
            None if done.foreign => writeln!(
                out,
                "  built for {}: not run on this {} machine (layout and sha256 checked)",
                spec.arch,
                std::env::consts::ARCH
            )?,
            None if done.has_nvcc => {
                writeln!(out, "  {}", style.warn("bin/nvcc did not answer --version"))?
            }
            None => {}
        }
        Ok(())
    }

    fn framework_done(
        &mut self,
        step: &crate::install::python::step::FrameworkStep,
        done: &FrameworkDone,
    ) -> std::io::Result<()> {
        if !self.talk {
            return Ok(());
        }
        let verb = if step.packages.is_some() {
            "installed"
        } else {
            "checked"
        };
        let venv = done.receipt.venv.display();
        writeln!(
            self.out,
            "{} {} in {venv}",
            self.style.good(verb),
            framework_summary(step),
        )?;
        for n in &done.notes {
            writeln!(self.out, "  {n}")?;
        }
        writeln!(self.out, "  log: {}", done.log.display())?;
        writeln!(self.out, "  use it:  . \"{venv}/bin/activate\"")
    }

    fn self_copy_done(
        &mut self,
        cudaup: &crate::install::self_copy::Installed,
    ) -> std::io::Result<()> {
        if self.talk {
            super::self_copy::done(self.out, self.style, cudaup).map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    fn env_done(
        &mut self,
        done: &EnvDone,
        cudaup: &crate::install::self_copy::Installed,
    ) -> std::io::Result<()> {
        if self.talk {
            render_env(
                self.out,
                self.process,
                self.home,
                self.modify_path,
                done,
                cudaup,
            )
            .map_err(std::io::Error::other)?;
        }
        Ok(())
    }

    fn warning(&mut self, text: &str) -> std::io::Result<()> {
        if self.talk {
            writeln!(self.out, "  {} {text}", self.style.warn("warning:"))?;
        }
        Ok(())
    }
}

/// The one question of an install, asked on the same terminal the install is shown on.
impl Prompter for Shown<'_> {
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> PromptResult<usize> {
        self.asker().select(prompt, items, default)
    }

    fn confirm(&mut self, prompt: &str, default: bool) -> PromptResult<bool> {
        self.asker().confirm(prompt, default)
    }

    fn input(
        &mut self,
        prompt: &str,
        default: &str,
        validate: Validate<'_>,
    ) -> PromptResult<String> {
        self.asker().input(prompt, default, validate)
    }
}

impl Shown<'_> {
    /// A plain `[y/N]` question on `out`, answered on stdin (none without a terminal).
    fn asker(&mut self) -> StdinPrompter<'_> {
        let terminal = self.process.stdin_is_tty && self.process.stdout_is_tty;
        StdinPrompter::new(&mut *self.out, terminal)
    }
}

/// What an install will do, before it does it: the driver's commands, the toolkit's archives
/// (or the toolkit kept), the framework's route and cudaup's own copy.
fn render_located(
    out: &mut dyn Write,
    style: &Style,
    plan: &InstallPlan,
    located: &Located,
) -> Result<()> {
    match (&located.driver, &plan.driver) {
        (Some(DriverLocated::Ready(step)), Some(d)) => {
            writeln!(
                out,
                "{}",
                style.heading(&format!(
                    "The driver: {} {}",
                    d.version.as_deref().unwrap_or(""),
                    d.reason
                ))
            )?;
            for n in &step.notices {
                writeln!(out, "  {n}")?;
            }
            for c in step.shell_lines() {
                writeln!(out, "  $ {c}")?;
            }
            if let Some(m) = &step.mok_import {
                writeln!(
                    out,
                    "  then, at a terminal: $ {}",
                    crate::install::driver::shell_line(m)
                )?;
            }
        }
        (Some(DriverLocated::Blocked(why)), _) => {
            writeln!(
                out,
                "{}",
                style.warn(&format!(
                    "The driver cannot be installed automatically: {why}"
                ))
            )?;
            writeln!(
                out,
                "  (the rest is installed now, and checked once the driver is in)"
            )?;
        }
        _ => {}
    }
    if let Some(ToolkitPlan::Keep { path, cuda }) = &plan.toolkit {
        writeln!(
            out,
            "CUDA {cuda} is already installed at {}: kept (--prefix DIR installs a private copy).",
            path.display()
        )?;
    }
    if let (Some(t), Some(ToolkitPlan::Install { components, .. })) =
        (&located.toolkit, &plan.toolkit)
    {
        if let Some(why) = &t.source_note {
            writeln!(out, "{}", style.warn(why))?;
        }
        write_items(out, &t.spec, components, &t.resolved, style)?;
    }
    if let Some(f) = &located.framework {
        crate::install::python::step::describe(f, out)?;
    }
    writeln!(out, "{}", super::self_copy::planned(&located.self_copy))?;
    Ok(())
}

/// The shells the settings name, or those found here.
fn chosen_shells(s: &InstallSettings, process: &Process) -> Vec<crate::shell::Shell> {
    match &s.shells {
        Some(shells) => shells.clone(),
        None => super::env::shells_here(process),
    }
}

/// What the env step did, and how to use cudaup now.
fn render_env(
    out: &mut dyn Write,
    process: &Process,
    home: &Path,
    modify_path: bool,
    done: &EnvDone,
    cudaup: &crate::install::self_copy::Installed,
) -> Result<()> {
    let source = &done.source;
    // Each file got its own shell's line (fish's `source …/env.fish`, not sh's).
    let lines = crate::shell::hooks(process, home, &crate::shell::Shell::ALL);
    for f in &done.rc_changed {
        let line = lines
            .iter()
            .find(|h| &h.file == f)
            .map_or(source, |h| &h.line);
        writeln!(out, "  added to {}: {line}", f.display())?;
    }
    if cudaup.in_home() {
        let hooked = modify_path
            && !crate::install::receipts::ShellReceipt::read(home)
                .hooks
                .is_empty();
        super::self_copy::how_to_run(out, cudaup, hooked, source, home)?;
    } else {
        writeln!(out, "  in this shell:  {source}")?;
    }
    Ok(())
}

fn framework_summary(step: &crate::install::python::step::FrameworkStep) -> String {
    step.expect.describe()
}

fn write_items(
    out: &mut dyn Write,
    spec: &ToolkitSpec,
    selection: &crate::catalog::ComponentSelection,
    resolved: &install::Resolved,
    style: &Style,
) -> Result<()> {
    let items = &resolved.items;
    let total: u64 = items.iter().filter_map(|i| i.artifact.size).sum();
    writeln!(
        out,
        "{}",
        style.heading(&format!(
            "CUDA {} into {}",
            spec.cuda,
            spec.prefix.display()
        ))
    )?;
    writeln!(out, "  from {}", spec.source)?;
    writeln!(
        out,
        "  components: {} ({} of them)",
        selection.spec,
        selection.components.len()
    )?;
    for i in items {
        let size = i
            .artifact
            .size
            .map(|s| indicatif::HumanBytes(s).to_string())
            .unwrap_or_else(|| "?".into());
        writeln!(
            out,
            "  {:<24} {:<14} {:>10}  {}",
            i.component, i.version, size, i.artifact.location
        )?;
    }
    writeln!(
        out,
        "  {} download(s), {} in all",
        items.len(),
        indicatif::HumanBytes(total)
    )?;
    for n in &resolved.notes {
        writeln!(out, "  {} {n}", style.warn("left out:"))?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_mirror(
    cmd: &MirrorCommand,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    use crate::install::python::bundle;
    let MirrorCommand::Create(args) = cmd;
    let s = InstallSettings::resolve(args.options(process)?, process, None)?;
    let request = &s.request;
    let system = match &args.system {
        Some(p) => super::plan::load_system(p, catalog)?,
        None => super::detect::detect_live(process, runner, catalog, false).system,
    };
    let plan = crate::resolve::resolve(&system, request, catalog);
    if plan.status == Status::Unsupported {
        return render_unsupported(&plan, out);
    }
    let arches = if args.arches.is_empty() {
        vec![system.os.arch.clone()]
    } else {
        args.arches.clone()
    };
    let dir = &args.dir;
    fs_err::create_dir_all(dir)?;
    let reporter = reporter_for(false, process.stdout_is_tty && !global.quiet, 0);
    let fetcher = fetcher(process, s.allow_http, cancel.clone(), reporter)?;
    let talk = !global.quiet;
    let previous = bundle::read_dir(dir);
    let mut files: Vec<bundle::BundleFile> = previous
        .as_ref()
        .map(|m| m.files.clone())
        .unwrap_or_default();
    let mut wheels_added = false;
    let mut toolkit_part = None;
    let mut install_hint = Vec::new();

    // The toolkit: NVIDIA's layout (redist) or its wheels in the PEP 503 tree.
    if request.profile.has_toolkit() {
        let (cuda, cudnn, _) = install::plan::toolkit_of(&plan, s.no_cudnn)?;
        let cuda = install::summary::release_for(catalog, request.pins.cuda.as_ref(), &cuda);
        let selection = install::plan::components(catalog, s.components.as_deref())?;
        let source = source_for(&s, local_bundle(&s).map(|(_, m)| m).as_ref())?;
        match &source {
            Source::Redist(base) => {
                let (count, bytes, manifests) = mirror_redist(
                    &fetcher, catalog, process, base, &cuda, &cudnn, &arches, dir, &selection, out,
                )?;
                if talk {
                    writeln!(
                        out,
                        "{} {count} archive(s), {} and {manifests} manifest(s) in {}",
                        style.good("mirrored"),
                        indicatif::HumanBytes(bytes),
                        dir.display()
                    )?;
                }
                install_hint.push(format!("--mirror {}", dir.display()));
            }
            Source::Wheels(_) => {
                let mut bytes = 0u64;
                let mut count = 0;
                for arch in &arches {
                    let spec = mirror_spec(process, &cuda, &cudnn, dir, &source, arch)?;
                    let resolved = install::resolve_items(&fetcher, catalog, &spec, &selection)?;
                    for n in &resolved.notes {
                        writeln!(out, "  left out: {n}")?;
                    }
                    for (id, item) in resolved.items.iter().enumerate() {
                        let f = bundle::add_fetched(dir, &fetcher, id, &item.artifact)?;
                        bytes += f.size;
                        count += 1;
                        files.retain(|k| k.path != f.path);
                        files.push(f);
                    }
                }
                wheels_added = true;
                if talk {
                    writeln!(
                        out,
                        "{} {count} toolkit wheel(s), {} in {}",
                        style.good("bundled"),
                        indicatif::HumanBytes(bytes),
                        dir.display()
                    )?;
                }
                install_hint.push(format!("--index-url {}", dir.display()));
            }
        }
        toolkit_part = Some(bundle::BundleToolkit {
            source: match source {
                Source::Redist(_) => "redist".into(),
                Source::Wheels(_) => "wheels".into(),
            },
            cuda: cuda.to_string(),
            cudnn: cudnn.map(|c| c.to_string()),
            arches: arches.clone(),
        });
    }

    // The framework with every dependency, for the target's Python and platform.
    let mut framework_part = None;
    let mut platforms = Vec::new();
    let want = crate::install::python::route::want(&plan, &system, catalog);
    if let Some(want) = &want {
        let pip = bundle::pip_here(runner, &process.path_entries()).ok_or_else(|| {
            Error::Unsupported(
                "mirror create downloads the framework with pip, and no python3 with pip is on PATH here: install python3-pip (or bundle the toolkit alone with --profile cuda-dev)".into(),
            )
        })?;
        let glibc = match (&args.glibc, &args.system) {
            (Some(g), _) => *g,
            (None, None) => bundle::glibc_of(runner, &pip).unwrap_or((2, 28)),
            (None, Some(_)) => (2, 28),
        };
        platforms = bundle::platform_tags(&system, glibc);
        let settings = IndexSettings {
            pypi: s.pypi_index.clone(),
            torch: s.torch_index.clone(),
            source: s.torch_source,
            bundle: None,
        };
        for url in [&settings.pypi, &settings.torch].into_iter().flatten() {
            if url.starts_with("http://") && !s.allow_http {
                return Err(crate::fetch::FetchError::InsecureHttp { url: url.clone() }.into());
            }
        }
        let candidates = crate::install::python::route::candidates(want, &settings);
        let probe = probe_fetcher(process, s.allow_http, cancel.clone())?;
        let home = crate::install::home::Home::of(process)?;
        let log = home.log("mirror", crate::install::python::bundle::now_secs());
        let progress: Arc<dyn Reporter> = if global.quiet {
            Arc::new(crate::world::progress::Silent)
        } else if process.stdout_is_tty {
            Arc::new(super::reporter::Bars::growing())
        } else {
            Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())))
        };
        let job = bundle::FrameworkJob {
            want,
            candidates: &candidates,
            settings: &settings,
            target: crate::install::python::DownloadTarget {
                python: want.python.clone(),
                platforms: platforms.clone(),
            },
            pip: &pip,
            constraints: plan
                .constraints
                .iter()
                .map(|c| c.requirement.clone())
                .collect(),
        };
        let done = {
            let mut session = crate::install::python::Session::new(
                runner,
                crate::install::python::Tool::Pip,
                log.clone(),
                progress.as_ref(),
            )?;
            bundle::add_framework(dir, &job, &probe, &mut session)
        };
        drop(progress);
        let (route, added) = done?;
        let bytes: u64 = added.iter().map(|f| f.size).sum();
        if talk {
            writeln!(
                out,
                "{} {} ({} wheel(s) with every dependency, {}) from {} {}",
                style.good("bundled"),
                route.requirements.join(" "),
                added.len(),
                indicatif::HumanBytes(bytes),
                route.route.label(),
                route.base
            )?;
            writeln!(
                out,
                "  for Python {} on {} (log: {})",
                want.python,
                platforms.first().map(String::as_str).unwrap_or("?"),
                log.display()
            )?;
        }
        for f in added {
            files.retain(|k| k.path != f.path);
            files.push(f);
        }
        wheels_added = true;
        framework_part = Some(bundle::BundleFramework {
            route: route.route,
            from: route.base.clone(),
            requirements: route.requirements.clone(),
            variant: want.variant.clone(),
        });
        if install_hint.is_empty() {
            install_hint.push(format!("--index-url {}", dir.display()));
        }
    }
    if wheels_added {
        files = bundle::write_pages(dir, &files)?;
    }
    if let Some(want) = &want {
        // The bundle must serve the plan by itself, as the install on the target will ask it.
        let probe = probe_fetcher(process, false, cancel)?;
        bundle::check_serves(dir, want, &probe)
            .map_err(crate::install::python::PyEnvError::from)?;
    }
    let manifest = bundle::BundleManifest {
        schema_version: 1,
        made_by: concat!("cudaup ", env!("CARGO_PKG_VERSION")).to_owned(),
        created: bundle::today(),
        profile: plan.profile.name().to_owned(),
        target: bundle::BundleTarget {
            os: crate::install::python::route::os_name(system.os.family).to_owned(),
            arch: system.os.arch.clone(),
            gpus: system.nvidia_gpus().map(|g| g.name.clone()).collect(),
            python: want.as_ref().map(|w| w.python.clone()),
            platforms,
        },
        plan: plan
            .components
            .iter()
            .map(|c| bundle::Planned {
                name: c.name.clone(),
                version: c.version.clone(),
                variant: c.variant.clone().or_else(|| c.cuda_variant.clone()),
            })
            .collect(),
        toolkit: toolkit_part,
        framework: framework_part,
        files,
    };
    bundle::write_manifest(dir, &manifest)?;
    if talk {
        let mut pins = format!("--profile {}", plan.profile.name());
        if let Some(c) = &manifest.toolkit {
            pins.push_str(&format!(" --cuda {}", c.cuda));
            if let Some(set) = &s.components {
                pins.push_str(&format!(" --components {set}"));
            }
        }
        writeln!(out, "  manifest: {}", dir.join(bundle::MANIFEST).display())?;
        writeln!(
            out,
            "  install from it (no network needed):  cudaup install {pins} {}",
            install_hint.join(" ")
        )?;
    }
    Ok(ExitCode::Ok)
}

/// `2.35` → (2, 35).
/// `--glibc 2.N`, checked by clap as the flag is parsed.
fn parse_glibc(text: &str) -> std::result::Result<(u32, u32), String> {
    let mut it = text.split('.').map(|p| p.parse::<u32>().ok());
    match (it.next().flatten(), it.next().flatten(), it.next()) {
        (Some(major), Some(minor), None) if major == 2 => Ok((major, minor)),
        _ => Err("give the target's glibc as 2.N (e.g. 2.35 for Ubuntu 22.04)".into()),
    }
}

/// The toolkit a mirror copies, for one architecture (its prefix is the mirror: nothing is
/// unpacked there).
fn mirror_spec(
    process: &Process,
    cuda: &Version,
    cudnn: &Option<Version>,
    dir: &Path,
    source: &Source,
    arch: &str,
) -> Result<ToolkitSpec> {
    Ok(ToolkitSpec {
        cuda: cuda.clone(),
        cudnn: cudnn.clone(),
        prefix: dir.to_owned(),
        source: source.clone(),
        arch: arch.to_owned(),
        max_unpacked: max_unpacked(process)?,
        // A bundle is not an install: nothing to register.
        register_in: None,
    })
}

/// NVIDIA's layout: the redistrib JSONs byte for byte and every archive, verified.
#[allow(clippy::too_many_arguments)]
fn mirror_redist(
    fetcher: &Fetcher,
    catalog: &Catalog,
    process: &Process,
    base: &Location,
    cuda: &Version,
    cudnn: &Option<Version>,
    arches: &[String],
    dir: &Path,
    selection: &crate::catalog::ComponentSelection,
    out: &mut dyn Write,
) -> Result<(usize, u64, usize)> {
    let mut count = 0;
    let mut bytes = 0u64;
    let mut manifests = vec![redist::cuda_manifest(base, &cuda.to_string())];
    if let Some(c) = cudnn {
        manifests.push(redist::cudnn_manifest(base, &c.to_string()));
    }
    for m in &manifests {
        let body = fetcher.get_bytes(m, None)?;
        let rel = relative(base, m)?;
        write_file(&dir.join(&rel), &body)?;
    }
    for arch in arches {
        let spec = mirror_spec(
            process,
            cuda,
            cudnn,
            dir,
            &Source::Redist(base.clone()),
            arch,
        )?;
        let resolved = install::resolve_items(fetcher, catalog, &spec, selection)?;
        for n in &resolved.notes {
            writeln!(out, "  left out: {n}")?;
        }
        let items = resolved.items;
        for (id, item) in items.iter().enumerate() {
            let target = dir.join(relative(base, &item.artifact.location)?);
            let fetched = fetcher
                .fetch::<()>(id, &item.artifact, None)
                .map_err(InstallError::Fetch)?;
            fetcher.reporter().finish(id, "mirrored");
            if fetched.path != target {
                if let Some(parent) = target.parent() {
                    fs_err::create_dir_all(parent)?;
                }
                let _ = fs_err::remove_file(&target);
                if std::fs::hard_link(&fetched.path, &target).is_err() {
                    fs_err::copy(&fetched.path, &target)?;
                }
            }
            count += 1;
            bytes += item.artifact.size.unwrap_or(0);
        }
    }
    Ok((count, bytes, manifests.len()))
}

/// The path of `loc` under `base`, as the mirror's relative path.
fn relative(base: &Location, loc: &Location) -> Result<PathBuf> {
    let (b, l) = (base.to_string(), loc.to_string());
    let rel = l
        .strip_prefix(b.trim_end_matches('/'))
        .map(|r| r.trim_start_matches('/'))
        .filter(|r| !r.is_empty() && !r.split('/').any(|p| p == ".."))
        .ok_or_else(|| Error::Usage(format!("{l} is not under the mirror base {b}")))?;
    Ok(PathBuf::from(rel))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent)?;
    }
    use crate::world::fs::{write_atomic, Durability, Temp};
    Ok(write_atomic(path, bytes, Temp::Unique, Durability::Fast)?)
}
