//! `cudaup wizard` (and bare `cudaup` on a terminal): detect, explain, ask, show the plan and
//! exactly what changes on disk, then run the same install as `cudaup install`, verify, and say
//! what to do next.
//!
//! The questions go through [`Prompter`], so the branching is tested with
//! [`crate::prompt::ScriptedPrompter`] and the terminal is only touched by
//! [`DialoguerPrompter`]. Every string the wizard prints itself comes from [`crate::i18n`]; the
//! detect and plan reports it reuses are the commands' own (English).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::catalog::Catalog;
use crate::config::{self, Config, DriverChoice, ShellName};
use crate::error::{Error, ExitCode, Result};
use crate::i18n::{Lang, Strings};
use crate::plan::{Action, Plan, Status};
use crate::process::Process;
use crate::prompt::{DefaultsPrompter, DialoguerPrompter, Labels, PromptError, Prompter};
use crate::request::{DriverPolicy, Pins, Profile};
use crate::runner::Runner;
use crate::shell::Shell;
use crate::system::System;
use crate::version::Version;

use super::install::{InstallArgs, SourceArgs, SourceKind};
use super::plan::StackArgs;
use super::{GlobalArgs, Style};

/// Tsinghua University's PyPI mirror, as its help page gives it
/// (<https://mirrors.tuna.tsinghua.edu.cn/help/pypi/>:
/// `pip install -i https://pypi.tuna.tsinghua.edu.cn/simple some-package`).
pub const PYPI_TUNA: &str = "https://pypi.tuna.tsinghua.edu.cn/simple";
/// Alibaba Cloud's PyPI mirror, as its help page gives it
/// (<https://developer.aliyun.com/mirror/pypi>: `index-url = https://mirrors.aliyun.com/pypi/simple/`).
pub const PYPI_ALIYUN: &str = "https://mirrors.aliyun.com/pypi/simple";

/// The profiles, in the order the wizard offers them (and [`Strings::profile_lines`] explains).
const PROFILES: [Profile; 5] = [
    Profile::Full,
    Profile::Pytorch,
    Profile::Tensorflow,
    Profile::CudaDev,
    Profile::Cpu,
];

/// `cudaup wizard` flags.
#[derive(Debug, Default, Args)]
pub struct WizardArgs {
    /// The language of the questions [default: from LC_ALL / LC_MESSAGES / LANG: zh_* is zh]
    #[arg(long, value_enum, value_name = "LANG")]
    pub lang: Option<Lang>,
    /// Write the answers to FILE once they are given (before installing), as a config for
    /// `cudaup install --config FILE --yes`
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Start from the answers in FILE (as written by --save)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Ask nothing: take every suggestion (or the answers in --config) and install
    #[arg(short, long)]
    pub yes: bool,
    /// Ask the questions and show what would change, but install nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// Everything the wizard asks for: what `--save` writes and the install runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answers {
    /// The stack.
    pub profile: Profile,
    /// Pinned CUDA version.
    pub cuda: Option<String>,
    /// Pinned cuDNN version.
    pub cudnn: Option<String>,
    /// Pinned PyTorch version.
    pub torch: Option<String>,
    /// Pinned TensorFlow version.
    pub tensorflow: Option<String>,
    /// Pinned Python version.
    pub python: Option<String>,
    /// Driver policy (`keep`, `latest`, a version); `None` is the default policy.
    pub driver: Option<String>,
    /// Toolkit prefix; `None` is `$CUDAUP_HOME/toolkits/cuda-<version>`.
    pub prefix: Option<PathBuf>,
    /// The venv; `None` is `$CUDAUP_HOME/venvs/<profile>`.
    pub venv: Option<PathBuf>,
    /// Leave cuDNN out.
    pub no_cudnn: bool,
    /// Run `cudaup verify` afterwards.
    pub verify: bool,
    /// Hook the env script into rc files.
    pub modify_path: bool,
    /// The shell families to hook.
    pub shells: Vec<Shell>,
    /// Redistributable archives or wheels.
    pub source: SourceKind,
    /// A mirror of NVIDIA's layout.
    pub nvidia_mirror: Option<String>,
    /// The index for `source = wheels`.
    pub index_url: Option<String>,
    /// PyPI or a mirror, for the framework.
    pub pypi_index: Option<String>,
    /// PyTorch's index or a mirror.
    pub torch_index: Option<String>,
    /// Accept plain-http sources.
    pub allow_http: bool,
}

impl Answers {
    /// What the wizard suggests for this machine: `full` with an NVIDIA GPU, else `cpu`; no
    /// pins; NVIDIA's and PyPI's servers; every shell found here hooked; verify afterwards.
    pub fn suggested(process: &Process, system: &System) -> Self {
        Self {
            profile: if system.nvidia_gpus().next().is_some() {
                Profile::Full
            } else {
                Profile::Cpu
            },
            cuda: None,
            cudnn: None,
            torch: None,
            tensorflow: None,
            python: None,
            driver: None,
            prefix: None,
            venv: None,
            no_cudnn: false,
            verify: true,
            modify_path: true,
            shells: super::env::shells_here(process),
            source: SourceKind::Redist,
            nvidia_mirror: None,
            index_url: None,
            pypi_index: None,
            torch_index: None,
            allow_http: false,
        }
    }

    /// The starting answers: the suggestions, overlaid with what the config file answers, then
    /// with the sources the environment names (`CUDAUP_MIRROR` and friends), which take
    /// precedence over the file (flags > env > file > defaults, as for `cudaup install`).
    pub fn initial(process: &Process, system: &System, config: Option<&Config>) -> Self {
        let mut a = Self::suggested(process, system);
        if let Some(c) = config {
            a.overlay(c);
        }
        let env = |name: &str| process.var(name).map(str::to_owned);
        if let Some(m) = env("CUDAUP_MIRROR") {
            a.nvidia_mirror = Some(m);
        }
        if let Some(m) = env("CUDAUP_INDEX_URL") {
            a.index_url = Some(m);
        }
        if let Some(m) = env("CUDAUP_PYPI_INDEX") {
            a.pypi_index = Some(m);
        }
        if let Some(m) = env("CUDAUP_TORCH_INDEX") {
            a.torch_index = Some(m);
        }
        a
    }

    /// Takes every answer the config file gives.
    fn overlay(&mut self, c: &Config) {
        if let Some(p) = c.profile {
            self.profile = p;
        }
        let pins = [
            (&mut self.cuda, &c.pins.cuda),
            (&mut self.cudnn, &c.pins.cudnn),
            (&mut self.torch, &c.pins.torch),
            (&mut self.tensorflow, &c.pins.tensorflow),
            (&mut self.python, &c.pins.python),
        ];
        for (mine, theirs) in pins {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        if let Some(d) = &c.driver {
            self.driver = match d.policy() {
                DriverPolicy::Auto => None,
                DriverPolicy::Keep => Some("keep".into()),
                DriverPolicy::Latest => Some("latest".into()),
                DriverPolicy::Version(v) => Some(v.to_string()),
            };
        }
        if c.install.prefix.is_some() {
            self.prefix.clone_from(&c.install.prefix);
        }
        if c.install.venv.is_some() {
            self.venv.clone_from(&c.install.venv);
        }
        self.no_cudnn = c.install.no_cudnn.unwrap_or(self.no_cudnn);
        self.verify = c.install.verify.unwrap_or(self.verify);
        self.modify_path = c.shell.modify_path.unwrap_or(self.modify_path);
        if let Some(names) = &c.shell.shells {
            self.shells.clear();
            for family in names.iter().map(|n| n.family()) {
                if !self.shells.contains(&family) {
                    self.shells.push(family);
                }
            }
        }
        if let Some(k) = c.sources.source {
            self.source = match k {
                config::SourceKind::Redist => SourceKind::Redist,
                config::SourceKind::Wheels => SourceKind::Wheels,
            };
        }
        let s = &c.sources;
        for (mine, theirs) in [
            (&mut self.nvidia_mirror, &s.nvidia_mirror),
            (&mut self.index_url, &s.index_url),
            (&mut self.pypi_index, &s.pypi_index),
            (&mut self.torch_index, &s.torch_index),
        ] {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        self.allow_http = s.allow_http.unwrap_or(self.allow_http);
    }

    /// Drops the answers the profile has no use for (a PyTorch pin for cuda-dev, a prefix for
    /// pytorch, …), so that the plan and the saved file only carry what applies.
    pub fn fit_profile(&mut self) {
        let p = self.profile;
        if p == Profile::Cpu {
            self.cuda = None;
            self.cudnn = None;
        }
        if !p.has_torch() {
            self.torch = None;
            self.torch_index = None;
        }
        if p != Profile::Tensorflow {
            self.tensorflow = None;
        }
        if !p.has_toolkit() {
            self.prefix = None;
            self.no_cudnn = false;
            self.source = SourceKind::Redist;
            self.index_url = None;
        }
        if p == Profile::CudaDev {
            self.venv = None;
        }
        if p == Profile::Cpu && matches!(self.driver.as_deref(), Some(d) if d != "keep") {
            self.driver = None;
        }
    }

    /// The profile, pins and driver policy, as `cudaup install` takes them.
    pub fn stack_args(&self) -> StackArgs {
        StackArgs {
            profile: Some(self.profile),
            cuda: self.cuda.clone(),
            cudnn: self.cudnn.clone(),
            torch: self.torch.clone(),
            tensorflow: self.tensorflow.clone(),
            python: self.python.clone(),
            driver: self.driver.clone(),
        }
    }

    /// The `cudaup install` these answers amount to (verify is the wizard's own step).
    pub fn install_args(&self, dry_run: bool) -> InstallArgs {
        InstallArgs {
            stack: self.stack_args(),
            config: None,
            verify: false,
            source: SourceArgs {
                source: Some(self.source),
                mirror: self.nvidia_mirror.clone(),
                index_url: self.index_url.clone(),
                allow_http: self.allow_http,
            },
            system: None,
            prefix: self.prefix.clone(),
            venv: self.venv.clone(),
            pypi_index: self.pypi_index.clone(),
            torch_index: self.torch_index.clone(),
            no_cudnn: self.no_cudnn,
            no_modify_path: !self.modify_path || self.shells.is_empty(),
            shells: self.shells.iter().map(|s| s.name().to_owned()).collect(),
            yes: true,
            dry_run,
            json: false,
        }
    }

    /// The unattended config file for these answers (`cudaup install --config FILE --yes` reads
    /// it). `login_shell` (`$SHELL`) names the POSIX shell: `bash`, `zsh`, else `sh`.
    pub fn to_config(&self, path: PathBuf, lang: Lang, login_shell: Option<&str>) -> Config {
        let mut a = self.clone();
        a.fit_profile();
        let toolkit = a.profile.has_toolkit();
        let mut c = Config::new(path);
        c.profile = Some(a.profile);
        c.lang = Some(lang.into());
        c.pins = Pins {
            cuda: a.cuda,
            cudnn: a.cudnn,
            torch: a.torch,
            tensorflow: a.tensorflow,
            python: a.python,
        };
        c.driver = a.driver.as_deref().and_then(DriverChoice::parse);
        c.install.prefix = a.prefix;
        c.install.venv = a.venv;
        c.install.no_cudnn = toolkit.then_some(a.no_cudnn);
        c.install.verify = Some(a.verify);
        c.shell.modify_path = Some(a.modify_path && !a.shells.is_empty());
        let posix = match login_shell.and_then(|s| s.rsplit('/').next()) {
            Some("bash") => ShellName::Bash,
            Some("zsh") => ShellName::Zsh,
            _ => ShellName::Sh,
        };
        c.shell.shells = (!a.shells.is_empty()).then(|| {
            a.shells
                .iter()
                .map(|s| match s {
                    Shell::Posix => posix,
                    Shell::Fish => ShellName::Fish,
                    Shell::PowerShell => ShellName::Powershell,
                })
                .collect()
        });
        c.sources.source = toolkit.then_some(match a.source {
            SourceKind::Redist => config::SourceKind::Redist,
            SourceKind::Wheels => config::SourceKind::Wheels,
        });
        c.sources.nvidia_mirror = a.nvidia_mirror;
        c.sources.index_url = a.index_url;
        c.sources.pypi_index = a.pypi_index;
        c.sources.torch_index = a.torch_index;
        c.sources.allow_http = Some(a.allow_http);
        c
    }
}

/// What the wizard needs to ask and preview.
pub struct Ctx<'a> {
    /// The strings of the chosen language.
    pub s: &'static Strings,
    /// Colours.
    pub style: &'a Style,
    /// The catalog.
    pub catalog: &'a Catalog,
    /// The detected machine.
    pub system: &'a System,
    /// The environment (home, shells, rc files).
    pub process: &'a Process,
    /// For probing an existing venv.
    pub runner: &'a dyn Runner,
    /// cudaup's home.
    pub home: PathBuf,
    /// `-v`: the plan lists rejected alternatives.
    pub verbose: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// The prompter takes defaults (`--yes`, or no terminal with `--config`): a plan that does
    /// not fit ends the wizard instead of offering to customise.
    pub unattended: bool,
    /// No terminal and no `--yes`: the wizard stops before confirming.
    pub cannot_confirm: bool,
}

/// What happens to the toolkit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolkitChange {
    /// Installed into this new prefix.
    New(PathBuf),
    /// An installed toolkit is kept.
    Kept(String),
}

/// What happens to the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverChange {
    /// Nothing.
    Unchanged,
    /// It must be installed or upgraded to this version (then a reboot).
    Change(String),
    /// It is Windows' (WSL2): at least this version.
    Manual(String),
}

/// The plan for the current answers, and everything it changes on disk.
#[derive(Debug, Clone)]
pub struct Preview {
    /// The plan install will execute.
    pub plan: Plan,
    /// The machine planned for (with the venv's Python, when the venv exists).
    pub system: System,
    /// The toolkit, for profiles with one.
    pub toolkit: Option<ToolkitChange>,
    /// The prefix cudaup picks when none is given.
    pub default_prefix: Option<PathBuf>,
    /// The venv, and whether it exists already.
    pub venv: Option<(PathBuf, bool)>,
    /// Why the framework step cannot run (e.g. no Python in range).
    pub venv_problem: Option<String>,
    /// Whether env scripts are written (a toolkit is installed or kept).
    pub env: bool,
    /// rc files to get the line: (file, line, already there).
    pub hooks: Vec<(PathBuf, String, bool)>,
    /// The driver.
    pub driver: DriverChange,
}

impl Preview {
    /// Whether the install can go ahead.
    pub fn ready(&self) -> bool {
        self.plan.status == Status::Ok && self.venv_problem.is_none()
    }
}

/// How the questions ended.
#[derive(Debug)]
pub enum Decision {
    /// Install (or, with `--dry-run`, stop) with these answers.
    Go(Box<Answers>, Box<Preview>),
    /// The user cancelled.
    Cancel,
    /// Unattended, and nothing fits (exit code 5).
    Unsupported,
}

/// Why the questions stopped early.
#[derive(Debug)]
pub enum Stop {
    /// Cancelled at a prompt (Ctrl-C, EOF, Escape).
    Cancel,
    /// Something failed.
    Fail(Error),
}

impl From<PromptError> for Stop {
    fn from(e: PromptError) -> Self {
        match e {
            PromptError::Cancelled => Stop::Cancel,
            PromptError::Io(e) => Stop::Fail(Error::Io(e)),
        }
    }
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Stop::Fail(Error::Io(e))
    }
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Fail(e)
    }
}

/// `cudaup wizard`.
#[allow(clippy::too_many_arguments)]
pub(super) fn run(
    args: &WizardArgs,
    global: &GlobalArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let config = match &args.config {
        Some(path) => Some(read_config(path, process)?),
        None => None,
    };
    let lang = args
        .lang
        .or(config.as_ref().and_then(|c| c.lang).map(Lang::from))
        .unwrap_or_else(|| Lang::from_env(process));
    let s = lang.strings();
    let terminal = process.stdin_is_tty && process.stdout_is_tty;
    if !terminal && !args.yes && config.is_none() {
        return Err(Error::Usage(s.no_terminal.to_owned()));
    }
    let home = process.cudaup_home().ok_or_else(|| {
        Error::Usage("cannot tell where cudaup's home is: set HOME or --home".into())
    })?;

    let detection = {
        let spinner = (process.stdout_is_tty && !global.quiet).then(|| {
            let pb = indicatif::ProgressBar::new_spinner();
            pb.set_message(s.detecting);
            pb.enable_steady_tick(Duration::from_millis(80));
            pb
        });
        let d = super::detect::detect_live(process, runner, catalog, false);
        if let Some(pb) = spinner {
            pb.finish_and_clear();
        }
        d
    };
    if cancel.load(Ordering::SeqCst) {
        writeln!(out, "{}", s.cancelled)?;
        return Ok(ExitCode::Cancelled);
    }
    writeln!(out, "{}\n", style.heading(s.found_heading))?;
    write!(out, "{}", super::detect::render(&detection, catalog, style))?;

    let unattended = args.yes || !terminal;
    let mut prompter: Box<dyn Prompter> = if unattended {
        Box::new(DefaultsPrompter)
    } else {
        Box::new(DialoguerPrompter::new(Labels {
            yes: s.yes,
            no: s.no,
            error: s.error_prefix,
            colon: s.colon,
        }))
    };
    let ctx = Ctx {
        s,
        style,
        catalog,
        system: &detection.system,
        process,
        runner,
        home: home.clone(),
        verbose: global.verbose > 0,
        dry_run: args.dry_run,
        unattended,
        cannot_confirm: !terminal && !args.yes,
    };
    let initial = Answers::initial(process, &detection.system, config.as_ref());
    let (answers, preview) = match drive(&ctx, prompter.as_mut(), out, initial) {
        Ok(Decision::Go(a, p)) => (*a, *p),
        Ok(Decision::Cancel) | Err(Stop::Cancel) => {
            writeln!(out, "\n{}", s.cancelled)?;
            return Ok(ExitCode::Cancelled);
        }
        Ok(Decision::Unsupported) => return Ok(ExitCode::Unsupported),
        Err(Stop::Fail(e)) => return Err(e),
    };

    if let Some(path) = &args.save {
        let path = if path.is_absolute() {
            path.clone()
        } else {
            process.cwd().join(path)
        };
        let text = answers
            .to_config(path.clone(), lang, process.var("SHELL"))
            .to_toml();
        fs_err::write(&path, text)?;
        writeln!(out, "\n{}", (s.saved)(&path.display().to_string()))?;
    }
    if args.dry_run {
        writeln!(out, "\n{}", s.dry_run_done)?;
        return Ok(ExitCode::Ok);
    }
    if cancel.load(Ordering::SeqCst) {
        writeln!(out, "\n{}", s.cancelled)?;
        return Ok(ExitCode::Cancelled);
    }

    writeln!(out, "\n{}", style.heading(s.installing))?;
    let code = super::install::run_install(
        &answers.install_args(false),
        global,
        process,
        runner,
        catalog,
        style,
        cancel,
        out,
    )?;
    if code != ExitCode::Ok {
        return Ok(code);
    }
    // `install` hooked the chosen shells' rc files and said which.
    let line = crate::shell::source_line(Shell::Posix, &home);
    let hooked = preview.env && answers.modify_path && !answers.shells.is_empty();

    // A driver install waits for a reboot: verify after it, not now.
    let reboot =
        crate::driver_step::reboot_pending(&home, &crate::detect::Root::live()).map(|m| m.driver);
    let mut code = ExitCode::Ok;
    if reboot.is_some() {
        writeln!(out, "\n{}", s.verify_after_reboot)?;
    } else if answers.verify {
        writeln!(out, "\n{}", style.heading(s.verifying))?;
        let verify = super::verify::VerifyArgs {
            json: false,
            bench: false,
            // The venv just installed; the toolkit is the active one install recorded.
            venvs: preview
                .venv
                .iter()
                .map(|(dir, _)| dir.clone())
                .filter(|dir| crate::pyenv::Venv { dir: dir.clone() }.exists())
                .collect(),
            toolkit: None,
        };
        code = super::verify::run(&verify, global, process, runner, catalog, style, out)?;
        if code != ExitCode::Ok {
            writeln!(out, "{}", style.warn(s.verify_failed))?;
        }
    } else {
        writeln!(out, "\n{}", s.verify_skipped)?;
    }
    write!(
        out,
        "{}",
        summary(s, style, &preview, &line, hooked, reboot.as_deref())
    )?;
    Ok(code)
}

fn read_config(path: &Path, process: &Process) -> Result<Config> {
    let full = if path.is_absolute() {
        path.to_owned()
    } else {
        process.cwd().join(path)
    };
    // Errors name FILE:LINE:COLUMN (exit code 2), as for `cudaup install --config`.
    Config::load(&full).map_err(|e| Error::Usage(e.to_string()))
}

/// The questions, from the profile to Confirm / Customise / Cancel. Prints the plan and the
/// changes each time the answers change.
pub fn drive(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    out: &mut dyn Write,
    mut a: Answers,
) -> std::result::Result<Decision, Stop> {
    let s = ctx.s;
    let gpu = ctx.system.nvidia_gpus().next().is_some();
    writeln!(
        out,
        "\n{}",
        if gpu {
            s.preselect_gpu
        } else {
            s.preselect_no_gpu
        }
    )?;
    let items: Vec<String> = PROFILES
        .iter()
        .zip(s.profile_lines)
        .map(|(p, line)| format!("{:<11} {line}", p.name()))
        .collect();
    let default = PROFILES.iter().position(|p| *p == a.profile).unwrap_or(0);
    out.flush()?;
    a.profile = PROFILES[p.select(s.profile_prompt, &items, default)?];
    a.fit_profile();

    loop {
        let preview = preview(ctx, &a)?;
        writeln!(out)?;
        write!(
            out,
            "{}",
            super::plan::render(&preview.plan, &preview.system, ctx.style, ctx.verbose)
        )?;
        writeln!(out)?;
        write!(out, "{}", render_changes(ctx, &preview))?;
        let ready = preview.ready();
        if ctx.unattended {
            if !ready {
                return Ok(Decision::Unsupported);
            }
            if ctx.cannot_confirm && !ctx.dry_run {
                return Err(Stop::Fail(Error::Usage(s.need_yes.to_owned())));
            }
            return Ok(Decision::Go(Box::new(a), Box::new(preview)));
        }
        let go = if ctx.dry_run {
            s.action_dry_run
        } else {
            s.action_install
        };
        let mut choices = Vec::new();
        if ready {
            choices.push((go, Choice::Go));
        } else {
            writeln!(out, "\n{}", ctx.style.warn(s.unsupported_note))?;
        }
        choices.push((s.action_customise, Choice::Customise));
        choices.push((s.action_cancel, Choice::Cancel));
        let labels: Vec<String> = choices.iter().map(|(l, _)| (*l).to_owned()).collect();
        writeln!(out)?;
        out.flush()?;
        match choices[p.select(s.action_prompt, &labels, 0)?].1 {
            Choice::Go => return Ok(Decision::Go(Box::new(a), Box::new(preview))),
            Choice::Cancel => return Ok(Decision::Cancel),
            Choice::Customise => customise(ctx, p, out, &mut a, &preview)?,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Choice {
    Go,
    Customise,
    Cancel,
}

/// The plan for `a`, computed the way `cudaup install` computes it, and what it changes.
pub fn preview(ctx: &Ctx<'_>, a: &Answers) -> Result<Preview> {
    let request = a.stack_args().request()?;
    let mut system = ctx.system.clone();
    let venv_dir = a
        .venv
        .clone()
        .unwrap_or_else(|| ctx.home.join("venvs").join(a.profile.name()));
    if let Some(found) = probe_venv(ctx.runner, &venv_dir) {
        system.pythons.retain(|p| p.path != found.path);
        system.pythons.insert(0, found);
    }
    let plan = crate::resolve::resolve(&system, &request, ctx.catalog);
    let mut preview = Preview {
        plan,
        system,
        toolkit: None,
        default_prefix: None,
        venv: None,
        venv_problem: None,
        env: false,
        hooks: Vec::new(),
        driver: DriverChange::Unchanged,
    };
    if preview.plan.status != Status::Ok {
        return Ok(preview);
    }
    let plan = &preview.plan;
    let cuda = plan.component("cuda");
    if a.profile.has_toolkit() {
        if let Some(c) = cuda {
            let version = c.version.as_deref().and_then(Version::parse);
            preview.default_prefix = version.map(|v| {
                let v = ctx.catalog.cuda.newest_of_series(&v).cloned().unwrap_or(v);
                ctx.home.join("toolkits").join(format!("cuda-{v}"))
            });
            let kept = c.path.clone().filter(|_| c.action == Action::Keep);
            preview.toolkit = match (kept, &a.prefix) {
                (Some(path), None) => Some(ToolkitChange::Kept(path)),
                (_, Some(prefix)) => Some(ToolkitChange::New(prefix.clone())),
                (None, None) => preview.default_prefix.clone().map(ToolkitChange::New),
            };
        }
    }
    let kept_elsewhere = cuda.is_some_and(|c| c.action == Action::Keep && c.path.is_some());
    preview.env = matches!(preview.toolkit, Some(ToolkitChange::New(_))) || kept_elsewhere;
    if !matches!(a.profile, Profile::CudaDev) {
        let indexes = super::framework::Indexes {
            pypi: a
                .pypi_index
                .clone()
                .unwrap_or_else(|| crate::sources::pypi::PYPI_SIMPLE.to_owned()),
            torch: a
                .torch_index
                .clone()
                .unwrap_or_else(|| super::framework::TORCH_INDEX.to_owned()),
        };
        match super::framework::step(plan, &preview.system, venv_dir, &indexes, false) {
            Ok(Some(step)) => {
                let exists = step.venv.exists();
                preview.venv = Some((step.venv.dir, exists));
            }
            Ok(None) => {}
            Err(e) => preview.venv_problem = Some(e.to_string()),
        }
    }
    if preview.env && a.modify_path {
        for h in crate::shell::hooks(ctx.process, &ctx.home, &a.shells) {
            let already = fs_err::read_to_string(&h.file).is_ok_and(|t| t.contains(&h.line));
            preview.hooks.push((h.file, h.line, already));
        }
    }
    preview.driver = match plan.component("driver") {
        Some(d) if matches!(d.action, Action::Install | Action::Upgrade) => {
            DriverChange::Change(d.version.clone().unwrap_or_default())
        }
        Some(d) if d.action == Action::Manual => {
            DriverChange::Manual(d.version.clone().unwrap_or_default())
        }
        _ => DriverChange::Unchanged,
    };
    Ok(preview)
}

/// The Python of an existing venv, as `cudaup install` sees it.
fn probe_venv(runner: &dyn Runner, dir: &Path) -> Option<crate::system::Python> {
    let venv = crate::pyenv::Venv {
        dir: dir.to_owned(),
    };
    if !venv.exists() {
        return None;
    }
    let candidate = crate::detect::python::Candidate {
        interpreter: venv.python(),
        venv: Some(dir.to_owned()),
    };
    crate::detect::python::inspect(&crate::detect::Root::live(), runner, &candidate)
        .map(|f| f.python)
}

/// Columns of terminal cells: CJK characters take two.
fn width(text: &str) -> usize {
    text.chars()
        .map(|c| if (c as u32) >= 0x2E80 { 2 } else { 1 })
        .sum()
}

fn pad(label: &str, to: usize) -> String {
    format!("{label}{}", " ".repeat(to.saturating_sub(width(label))))
}

/// `~/x` for paths under the home directory.
fn tilde(process: &Process, path: &Path) -> String {
    match process
        .home()
        .and_then(|h| path.strip_prefix(h).ok().map(Path::to_owned))
    {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// "What will change on disk".
pub fn render_changes(ctx: &Ctx<'_>, p: &Preview) -> String {
    let s = ctx.s;
    let mut rows: Vec<(&str, String)> = Vec::new();
    if p.plan.status != Status::Ok {
        return String::new();
    }
    match &p.toolkit {
        Some(ToolkitChange::New(prefix)) => rows.push((
            s.label_toolkit,
            (s.toolkit_new)(&prefix.display().to_string()),
        )),
        Some(ToolkitChange::Kept(path)) => rows.push((s.label_toolkit, (s.toolkit_kept)(path))),
        None => {}
    }
    if let Some((dir, exists)) = &p.venv {
        let d = dir.display().to_string();
        rows.push((
            s.label_venv,
            if *exists {
                (s.venv_reused)(&d)
            } else {
                (s.venv_new)(&d)
            },
        ));
    }
    if let Some(why) = &p.venv_problem {
        rows.push((s.label_venv, ctx.style.warn(&(s.venv_problem)(why))));
    }
    if p.env {
        rows.push((
            s.label_env,
            (s.env_scripts)(&ctx.home.join("env").display().to_string()),
        ));
        if p.hooks.is_empty() {
            rows.push((s.label_rc, s.rc_none.to_owned()));
        }
        for (file, line, already) in &p.hooks {
            let f = tilde(ctx.process, file);
            rows.push((
                s.label_rc,
                if *already {
                    (s.rc_already)(&f)
                } else {
                    (s.rc_add)(&f, line)
                },
            ));
        }
    }
    if matches!(p.toolkit, Some(ToolkitChange::New(_))) {
        rows.push((
            s.label_cache,
            (s.cache)(&ctx.home.join("cache").display().to_string()),
        ));
    }
    rows.push((
        s.label_driver,
        match &p.driver {
            DriverChange::Unchanged => s.driver_unchanged.to_owned(),
            DriverChange::Change(v) => ctx.style.warn(&(s.driver_change)(v)),
            DriverChange::Manual(v) => ctx.style.warn(&(s.driver_manual)(v)),
        },
    ));
    let w = rows.iter().map(|(l, _)| width(l)).max().unwrap_or(0) + 2;
    let mut o = format!("{}\n", ctx.style.heading(s.changes_heading));
    let mut last = "";
    for (label, value) in &rows {
        let shown = if *label == last { "" } else { label };
        o.push_str(&format!("  {}{value}\n", pad(shown, w)));
        last = label;
    }
    o.push_str(&format!("{}\n", ctx.style.dim(s.changes_footer)));
    o
}

/// Customise: pins, folders, sources, shells, verify.
fn customise(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    out: &mut dyn Write,
    a: &mut Answers,
    preview: &Preview,
) -> std::result::Result<(), Stop> {
    let s = ctx.s;
    writeln!(out, "\n{}", ctx.style.heading(s.customise_heading))?;
    out.flush()?;
    let version = |text: &str| -> std::result::Result<(), String> {
        let plain = text
            .split('.')
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if text.is_empty() || (plain && Version::parse(text).is_some()) {
            Ok(())
        } else {
            Err((s.bad_version)(text))
        }
    };
    let pin = |p: &mut dyn Prompter, prompt: &str, current: &Option<String>| {
        p.input(prompt, current.as_deref().unwrap_or(""), &version)
            .map(|t| (!t.is_empty()).then_some(t))
    };
    if a.profile != Profile::Cpu {
        a.cuda = pin(p, s.pin_cuda, &a.cuda)?;
    }
    if a.profile.has_torch() {
        a.torch = pin(p, s.pin_torch, &a.torch)?;
    }
    if a.profile == Profile::Tensorflow {
        a.tensorflow = pin(p, s.pin_tensorflow, &a.tensorflow)?;
    }
    if a.profile != Profile::CudaDev {
        a.python = pin(p, s.pin_python, &a.python)?;
    }

    let home = ctx.process.home();
    let path_ok = |text: &str| -> std::result::Result<(), String> {
        if expand(text, home.as_deref()).is_absolute() {
            Ok(())
        } else {
            Err(s.bad_path.to_owned())
        }
    };
    if a.profile.has_toolkit() {
        // The default prefix names the CUDA release, which the pins just given may change.
        let fresh = self::preview(ctx, a).ok();
        let default = fresh
            .as_ref()
            .and_then(|f| f.default_prefix.clone())
            .or_else(|| preview.default_prefix.clone())
            .unwrap_or_else(|| ctx.home.join("toolkits").join("cuda"));
        let current = a.prefix.clone().unwrap_or_else(|| default.clone());
        let text = p.input(s.prefix_prompt, &current.display().to_string(), &path_ok)?;
        let chosen = expand(&text, home.as_deref());
        // The default stays implicit, so it follows the CUDA version.
        a.prefix = (chosen != default).then_some(chosen);

        let items = vec![
            s.source_nvidia.to_owned(),
            s.source_mirror.to_owned(),
            s.source_wheels.to_owned(),
        ];
        let current = match (a.source, &a.nvidia_mirror) {
            (SourceKind::Wheels, _) => 2,
            (SourceKind::Redist, Some(_)) => 1,
            (SourceKind::Redist, None) => 0,
        };
        out.flush()?;
        match p.select(s.source_prompt, &items, current)? {
            0 => {
                a.source = SourceKind::Redist;
                a.nvidia_mirror = None;
            }
            1 => {
                a.source = SourceKind::Redist;
                let text = p.input(
                    s.mirror_prompt,
                    a.nvidia_mirror.as_deref().unwrap_or(""),
                    &|t| location_ok(s, t),
                )?;
                a.nvidia_mirror = Some(text);
            }
            _ => {
                a.source = SourceKind::Wheels;
                a.index_url = ask_index(ctx, p, s.wheels_index_prompt, a.index_url.as_deref())?;
            }
        }
    }
    if a.profile != Profile::CudaDev {
        let default = ctx.home.join("venvs").join(a.profile.name());
        let current = a.venv.clone().unwrap_or_else(|| default.clone());
        let text = p.input(s.venv_prompt, &current.display().to_string(), &path_ok)?;
        let chosen = expand(&text, home.as_deref());
        a.venv = (chosen != default).then_some(chosen);
        a.pypi_index = ask_index(ctx, p, s.pypi_prompt, a.pypi_index.as_deref())?;
        if a.profile.has_torch() {
            let items = vec![s.torch_default.to_owned(), s.other_location.to_owned()];
            out.flush()?;
            a.torch_index =
                match p.select(s.torch_prompt, &items, a.torch_index.is_some() as usize)? {
                    0 => None,
                    _ => Some(p.input(
                        s.location_prompt,
                        a.torch_index.as_deref().unwrap_or(""),
                        &|t| location_ok(s, t),
                    )?),
                };
        }
    }

    if a.profile.has_toolkit() || preview.env {
        let mut chosen = Vec::new();
        for shell in super::env::shells_here(ctx.process) {
            let files: Vec<String> = crate::shell::hooks(ctx.process, &ctx.home, &[shell])
                .iter()
                .map(|h| tilde(ctx.process, &h.file))
                .collect();
            if files.is_empty() {
                continue;
            }
            let name = match shell {
                Shell::Posix => "sh/bash/zsh",
                Shell::Fish => "fish",
                Shell::PowerShell => "PowerShell",
            };
            let was = a.modify_path && a.shells.contains(&shell);
            out.flush()?;
            if p.confirm(&(s.shell_prompt)(name, &files.join(", ")), was)? {
                chosen.push(shell);
            }
        }
        a.modify_path = !chosen.is_empty();
        a.shells = chosen;
    }
    out.flush()?;
    a.verify = p.confirm(s.verify_prompt, a.verify)?;

    let plain_http = |a: &Answers| -> Vec<String> {
        [
            &a.nvidia_mirror,
            &a.index_url,
            &a.pypi_index,
            &a.torch_index,
        ]
        .into_iter()
        .flatten()
        .filter(|u| u.starts_with("http://"))
        .cloned()
        .collect()
    };
    a.allow_http = false;
    for url in plain_http(a) {
        out.flush()?;
        if !p.confirm(&(s.http_prompt)(&url), false)? {
            for slot in [
                &mut a.nvidia_mirror,
                &mut a.index_url,
                &mut a.pypi_index,
                &mut a.torch_index,
            ] {
                if slot.as_deref().is_some_and(|u| u.starts_with("http://")) {
                    *slot = None;
                }
            }
            writeln!(out, "{}", ctx.style.warn(s.http_dropped))?;
            return Ok(());
        }
    }
    a.allow_http = !plain_http(a).is_empty();
    Ok(())
}

/// PyPI, one of the well-known mirrors, or a URL/folder typed in.
fn ask_index(
    ctx: &Ctx<'_>,
    p: &mut dyn Prompter,
    prompt: &str,
    current: Option<&str>,
) -> std::result::Result<Option<String>, Stop> {
    let s = ctx.s;
    let items = vec![
        s.pypi_default.to_owned(),
        s.pypi_tuna.to_owned(),
        s.pypi_aliyun.to_owned(),
        s.other_location.to_owned(),
    ];
    let norm = |u: &str| u.trim_end_matches('/').to_owned();
    let default = match current.map(norm) {
        None => 0,
        Some(u) if u == PYPI_TUNA => 1,
        Some(u) if u == PYPI_ALIYUN => 2,
        Some(_) => 3,
    };
    Ok(match p.select(prompt, &items, default)? {
        0 => None,
        1 => Some(PYPI_TUNA.to_owned()),
        2 => Some(PYPI_ALIYUN.to_owned()),
        _ => {
            let start = if default == 3 {
                current.unwrap_or("")
            } else {
                ""
            };
            Some(p.input(s.location_prompt, start, &|t| location_ok(s, t))?)
        }
    })
}

fn location_ok(s: &Strings, text: &str) -> std::result::Result<(), String> {
    match crate::fetch::Location::parse(text) {
        _ if text.is_empty() => Err((s.bad_location)("empty")),
        Err(e) => Err((s.bad_location)(&e.to_string())),
        Ok(crate::fetch::Location::File(dir)) if !dir.is_dir() => Err((s.bad_location)(&format!(
            "{}: no such folder",
            dir.display()
        ))),
        Ok(_) => Ok(()),
    }
}

/// `~` and `~/x` under the home directory; other text as a path.
fn expand(text: &str, home: Option<&Path>) -> PathBuf {
    match (text.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_owned(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => PathBuf::from(text),
    }
}

/// The closing summary: what to run next.
fn summary(
    s: &Strings,
    style: &Style,
    p: &Preview,
    line: &str,
    hooked: bool,
    reboot: Option<&str>,
) -> String {
    let mut steps = Vec::new();
    if p.env {
        steps.push(if hooked {
            (s.step_env_hooked)(line)
        } else {
            (s.step_env_manual)(line)
        });
    }
    if let Some((venv, _)) = &p.venv {
        steps.push((s.step_venv)(&format!(
            ". \"{}\"",
            venv.join("bin/activate").display()
        )));
    }
    match (&p.driver, reboot) {
        (_, Some(v)) => steps.push((s.step_reboot)(v)),
        (DriverChange::Change(v), None) => steps.push((s.step_driver)(v)),
        (DriverChange::Manual(v), None) => steps.push((s.step_driver_manual)(v)),
        (DriverChange::Unchanged, None) => {}
    }
    let mut o = format!("\n{}\n", style.heading(s.summary_heading));
    for (i, step) in steps.iter().enumerate() {
        o.push_str(&format!("  {}. {step}\n", i + 1));
    }
    o.push_str(&format!("  {}\n", s.step_later));
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::{Answer, ScriptedPrompter};
    use crate::runner::Output;

    /// Runs nothing: the tests never need a command.
    struct NoCommands;

    impl Runner for NoCommands {
        fn run(&self, program: &Path, _: &[&str], _: Duration) -> Result<Output> {
            Err(Error::Command {
                program: program.display().to_string(),
                message: "no commands in unit tests".into(),
            })
        }
    }

    fn h200() -> System {
        serde_json::from_str(include_str!("../../tests/fixtures/h200-detect.json")).unwrap()
    }

    fn no_gpu() -> System {
        let mut s = h200();
        s.gpus.clear();
        s.driver = None;
        s.toolkits.clear();
        s
    }

    struct World {
        home: tempfile::TempDir,
        process: Process,
        catalog: Catalog,
        style: Style,
    }

    impl World {
        fn new() -> Self {
            let home = tempfile::tempdir().unwrap();
            let process =
                Process::with_vars([("HOME", home.path().display().to_string())], home.path());
            Self {
                home,
                process,
                catalog: Catalog::load(&crate::catalog::Source::Embedded).unwrap(),
                style: Style::new(false),
            }
        }

        fn ctx<'a>(&'a self, system: &'a System, lang: Lang) -> Ctx<'a> {
            Ctx {
                s: lang.strings(),
                style: &self.style,
                catalog: &self.catalog,
                system,
                process: &self.process,
                runner: &NoCommands,
                home: self.home.path().join(".local/share/cudaup"),
                verbose: false,
                dry_run: false,
                unattended: false,
                cannot_confirm: false,
            }
        }
    }

    fn go(d: Decision) -> (Answers, Preview) {
        match d {
            Decision::Go(a, p) => (*a, *p),
            other => panic!("expected Go, got {other:?}"),
        }
    }

    fn drive_with(
        ctx: &Ctx<'_>,
        answers: Vec<Answer>,
    ) -> (
        std::result::Result<Decision, Stop>,
        ScriptedPrompter,
        String,
    ) {
        let mut p = ScriptedPrompter::new(answers);
        let mut out = Vec::new();
        let initial = Answers::initial(ctx.process, ctx.system, None);
        let r = drive(ctx, &mut p, &mut out, initial);
        (r, p, String::from_utf8(out).unwrap())
    }

    #[test]
    fn full_is_suggested_with_a_gpu_and_cpu_without() {
        let w = World::new();
        let gpu = h200();
        let (r, p, out) = drive_with(
            &w.ctx(&gpu, Lang::En),
            vec![Answer::Default, Answer::Default],
        );
        let (a, _) = go(r.unwrap());
        assert_eq!(a.profile, Profile::Full);
        assert!(p.asked[0].contains("What should cudaup set up? -> full"));
        assert!(out.contains("An NVIDIA GPU is here"));
        assert!(out.contains("Plan (full profile) for NVIDIA H200"));
        assert!(out.contains("What will change on disk"));

        let none = no_gpu();
        let (r, p, out) = drive_with(
            &w.ctx(&none, Lang::En),
            vec![Answer::Default, Answer::Default],
        );
        let (a, _) = go(r.unwrap());
        assert_eq!(a.profile, Profile::Cpu);
        assert!(p.asked[0].contains("-> cpu"));
        assert!(out.contains("No NVIDIA GPU is here"));
    }

    #[test]
    fn customise_pins_cuda_and_asks_only_what_the_profile_needs() {
        let w = World::new();
        let system = no_gpu();
        let ctx = w.ctx(&system, Lang::En);
        let (r, p, out) = drive_with(
            &ctx,
            vec![
                Answer::Select(3), // cuda-dev
                Answer::Select(1), // Customise
                Answer::Input("thirteen".into()),
                Answer::Input("13.0".into()),
                Answer::Default,        // prefix
                Answer::Default,        // NVIDIA's server
                Answer::Confirm(false), // no rc file
                Answer::Confirm(false), // no verify
                Answer::Select(0),      // Install
            ],
        );
        let (a, preview) = go(r.unwrap());
        assert_eq!(a.profile, Profile::CudaDev);
        assert_eq!(a.cuda.as_deref(), Some("13.0"));
        assert_eq!(a.prefix, None, "the default prefix stays implicit");
        assert!(!a.verify);
        assert!(!a.modify_path && a.shells.is_empty());
        assert!(p.was_asked("refused \"thirteen\": `thirteen` is not a version"));
        // cuda-dev has no framework: no PyTorch, Python or venv questions.
        assert!(!p.was_asked("PyTorch version"));
        assert!(!p.was_asked("Python version"));
        assert!(!p.was_asked("virtual environment"));
        assert_eq!(
            preview.toolkit,
            Some(ToolkitChange::New(
                ctx.home.join("toolkits").join("cuda-13.0.2")
            ))
        );
        assert!(out.contains("Plan (cuda-dev profile)"));
        assert!(out.contains("cuda-13.0.2 (a new folder)"));
        assert!(out.contains("no startup file is changed"), "{out}");
        // The plan is shown twice: before and after customising.
        assert_eq!(out.matches("Plan (cuda-dev profile)").count(), 2);
    }

    #[test]
    fn the_changes_name_the_rc_files_and_the_env_script() {
        let w = World::new();
        fs_err::write(w.home.path().join(".bashrc"), "# mine\n").unwrap();
        let system = no_gpu();
        let ctx = w.ctx(&system, Lang::En);
        let (r, _, out) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
        let (_, preview) = go(r.unwrap());
        assert!(preview.env);
        let files: Vec<&PathBuf> = preview.hooks.iter().map(|h| &h.0).collect();
        assert_eq!(
            files,
            vec![
                &w.home.path().join(".profile"),
                &w.home.path().join(".bashrc")
            ]
        );
        assert!(out.contains("~/.profile: one line added: . \""), "{out}");
        assert!(out.contains("~/.bashrc: one line added"));
        assert!(out.contains(&format!("{}/env (and env.fish", ctx.home.display())));
    }

    #[test]
    fn cancel_at_the_confirm_step_and_eof_are_cancels() {
        let w = World::new();
        let system = no_gpu();
        let ctx = w.ctx(&system, Lang::En);
        let (r, _, _) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(2)]);
        assert!(matches!(r, Ok(Decision::Cancel)));
        // Input ends at the confirm step: never a yes.
        let (r, p, _) = drive_with(&ctx, vec![Answer::Select(3)]);
        assert!(matches!(r, Err(Stop::Cancel)));
        assert!(p.was_asked("Go ahead? -> cancelled"));
        let (r, _, _) = drive_with(&ctx, vec![Answer::Cancel]);
        assert!(matches!(r, Err(Stop::Cancel)));
    }

    #[test]
    fn a_plan_that_does_not_fit_offers_only_customise_and_cancel() {
        let w = World::new();
        let system = no_gpu();
        let ctx = w.ctx(&system, Lang::En);
        let (r, p, out) = drive_with(
            &ctx,
            vec![
                Answer::Select(3),
                Answer::Select(1), // Customise
                Answer::Input("99.9".into()),
                Answer::Default,
                Answer::Default,
                Answer::Confirm(false),
                Answer::Confirm(false),
                // Now nothing fits: the first choice is Customise, the second Cancel.
                Answer::Select(1),
            ],
        );
        assert!(matches!(r, Ok(Decision::Cancel)));
        assert!(out.contains("No cuda-dev stack"), "{out}");
        assert!(out.contains("Nothing fits these choices"));
        assert!(p.was_asked("Go ahead? -> Cancel"));
    }

    #[test]
    fn mirrors_from_the_list_and_plain_http_needs_a_yes() {
        let w = World::new();
        let system = h200();
        let ctx = w.ctx(&system, Lang::En);
        let script = |trust: bool| {
            vec![
                Answer::Select(1), // pytorch
                Answer::Select(1), // Customise
                Answer::Default,   // CUDA
                Answer::Default,   // torch
                Answer::Default,   // Python
                Answer::Default,   // venv
                Answer::Select(1), // PyPI: TUNA
                Answer::Select(1), // PyTorch index: another one
                Answer::Input("ftp://mirror.lan/whl".into()),
                Answer::Input("http://mirror.lan/whl".into()),
                Answer::Default,        // verify
                Answer::Confirm(trust), // plain http?
                Answer::Select(0),      // Install
            ]
        };
        let (r, p, out) = drive_with(&ctx, script(true));
        let (a, _) = go(r.unwrap());
        assert_eq!(a.pypi_index.as_deref(), Some(PYPI_TUNA));
        assert_eq!(a.torch_index.as_deref(), Some("http://mirror.lan/whl"));
        assert!(a.allow_http);
        assert!(p.was_asked("refused \"ftp://mirror.lan/whl\""));
        assert!(p.was_asked("http://mirror.lan/whl is plain http"));
        // pytorch keeps no toolkit of its own here: no toolkit, source or shell questions.
        assert!(!p.was_asked("CUDA toolkit come from"));
        assert!(!p.was_asked("Load cudaup's environment"));
        assert!(out.contains("Python venv"), "{out}");

        // Not trusted: the http index is dropped, the rest is kept.
        let (r, _, out) = drive_with(&ctx, script(false));
        let (a, _) = go(r.unwrap());
        assert_eq!(a.torch_index, None);
        assert_eq!(a.pypi_index.as_deref(), Some(PYPI_TUNA));
        assert!(!a.allow_http);
        assert!(out.contains("Plain-http sources left out"));
    }

    #[test]
    fn the_saved_config_has_the_agreed_keys_and_reads_back() {
        let w = World::new();
        let system = no_gpu();
        let mut a = Answers::initial(&w.process, &system, None);
        a.profile = Profile::CudaDev;
        a.cuda = Some("13.0".into());
        a.torch = Some("2.8".into()); // no use to cuda-dev: not saved
        a.driver = Some("keep".into());
        a.prefix = Some("/opt/cuda".into());
        a.nvidia_mirror = Some("/srv/mirror".into());
        a.shells = vec![Shell::Posix];
        let path = w.home.path().join("cudaup.toml");
        let text = a
            .to_config(path.clone(), Lang::Zh, Some("/bin/bash"))
            .to_toml();
        for needle in [
            "version = 1",
            "profile = \"cuda-dev\"",
            "lang = \"zh\"",
            "[pins]",
            "cuda = \"13.0\"",
            "# torch = ",
            "[driver]",
            "policy = \"keep\"",
            "[install]",
            "prefix = \"/opt/cuda\"",
            "no_cudnn = false",
            "verify = true",
            "[shell]",
            "modify_path = true",
            "shells = [\"bash\"]",
            "[sources]",
            "source = \"redist\"",
            "nvidia_mirror = \"/srv/mirror\"",
            "allow_http = false",
        ] {
            assert!(text.contains(needle), "{needle:?} not in\n{text}");
        }
        // The config module reads it back (install --config uses the same reader) to the
        // same answers, minus what the profile has no use for.
        let back = Config::parse(&text, &path).unwrap();
        let again = Answers::initial(&w.process, &system, Some(&back));
        let mut fitted = a.clone();
        fitted.fit_profile();
        assert_eq!(again, fitted);
        assert_eq!(back.lang, Some(config::Lang::Zh));
    }

    #[test]
    fn unattended_takes_the_suggestions_or_stops_without_yes() {
        let w = World::new();
        let system = no_gpu();
        let mut ctx = w.ctx(&system, Lang::En);
        ctx.unattended = true;
        let mut out = Vec::new();
        let mut initial = Answers::initial(&w.process, &system, None);
        initial.profile = Profile::CudaDev;
        let d = drive(&ctx, &mut DefaultsPrompter, &mut out, initial.clone()).unwrap();
        assert_eq!(go(d).0.profile, Profile::CudaDev);
        // --config without --yes and without a terminal: show the plan, then refuse.
        ctx.cannot_confirm = true;
        let r = drive(&ctx, &mut DefaultsPrompter, &mut out, initial.clone());
        assert!(
            matches!(r, Err(Stop::Fail(Error::Usage(ref m))) if m.contains("add --yes")),
            "{r:?}"
        );
        // Unattended and nothing fits: exit code 5, not an endless loop.
        ctx.cannot_confirm = false;
        initial.cuda = Some("99.9".into());
        let d = drive(&ctx, &mut DefaultsPrompter, &mut out, initial).unwrap();
        assert!(matches!(d, Decision::Unsupported));
    }

    #[test]
    fn chinese_strings_reach_the_screen() {
        let w = World::new();
        let system = no_gpu();
        let ctx = w.ctx(&system, Lang::Zh);
        let (r, p, out) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
        go(r.unwrap());
        assert!(out.contains("没有检测到 NVIDIA 显卡"));
        assert!(out.contains("磁盘上会有这些改动"));
        assert!(p.was_asked("要安装哪一套环境？ -> cuda-dev"));
        assert!(p.was_asked("开始安装吗？ -> 安装"));
    }

    #[test]
    fn summary_lists_the_next_steps() {
        let w = World::new();
        let gpu = h200();
        let ctx = w.ctx(&gpu, Lang::En);
        let (r, _, _) = drive_with(&ctx, vec![Answer::Select(3), Answer::Select(0)]);
        let (_, mut preview) = go(r.unwrap());
        preview.venv = Some((PathBuf::from("/v"), false));
        preview.driver = DriverChange::Change("580.95.05".into());
        let text = summary(ctx.s, ctx.style, &preview, ". \"/h/env\"", true, None);
        assert!(
            text.contains("1. Load the CUDA environment in this shell"),
            "{text}"
        );
        assert!(text.contains(". \"/h/env\""));
        assert!(text.contains("2. Activate the Python environment:\n       . \"/v/bin/activate\""));
        assert!(text.contains("3. Install NVIDIA driver 580.95.05"));
        assert!(text.contains("then reboot"));
        // install ran the driver step and left a reboot marker: reboot first.
        let text = summary(
            ctx.s,
            ctx.style,
            &preview,
            ". \"/h/env\"",
            true,
            Some("580.95.05"),
        );
        assert!(
            text.contains("3. Reboot now to load NVIDIA driver 580.95.05"),
            "{text}"
        );
    }

    #[test]
    fn paths_expand_and_widths_count_cjk_twice() {
        let home = Path::new("/home/u");
        assert_eq!(expand("~/cuda", Some(home)), PathBuf::from("/home/u/cuda"));
        assert_eq!(expand("~", Some(home)), PathBuf::from("/home/u"));
        assert_eq!(expand("/opt/x", Some(home)), PathBuf::from("/opt/x"));
        assert_eq!(expand("rel", Some(home)), PathBuf::from("rel"));
        assert_eq!(width("CUDA 工具包"), 5 + 6);
    }
}
