//! `cudaup repair`'s execution: the repairs doctor's receipt check found ([`Step`]), run on
//! the install's own steps: the toolkit a receipt records goes through `steps::toolkit`
//! ([`ToolkitStep::from_receipt`]), a venv through `steps::framework` (reinstall or recreate),
//! the env scripts, an interrupted env step and the rc hooks through `steps::env`; cudaup's own
//! copy, the litter and the registration through their modules. [`run`] returns what it
//! repaired; what a person sees goes through [`RepairEvents`], which the CLI implements.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::fetch::FetchError;
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::runner::Runner;

use super::home::Home;
use super::python::{PyEnvError, VenvReceipt};
use super::steps::toolkit::{self, ReceiptError, ToolkitStep};
use super::steps::{env, framework, StepError};
use super::{InstallError, Receipt};

/// One repair, as doctor's receipt check found it.
#[derive(Debug, Clone)]
pub enum Step {
    /// Rebuild a toolkit prefix from its receipt's components.
    Toolkit {
        /// The receipt.
        receipt: Receipt,
        /// What is wrong.
        why: String,
    },
    /// Make a venv again, or install its packages again over what is there.
    Venv {
        /// The receipt.
        receipt: VenvReceipt,
        /// Whether the venv itself is gone.
        recreate: bool,
        /// What is wrong.
        why: String,
    },
    /// Write the env scripts again.
    EnvScripts {
        /// Which are missing or stale.
        why: String,
    },
    /// Put cudaup's line back into an rc file.
    RcHook {
        /// The file.
        file: PathBuf,
        /// The line.
        line: String,
    },
    /// Copy the running cudaup to `$CUDAUP_HOME/bin` again (or, when cargo manages it, take an
    /// earlier copy out of its way).
    SelfCopy {
        /// What is wrong.
        why: String,
    },
    /// Record a toolkit whose install was killed after it was in place and before it was
    /// recorded (its receipt is in the prefix; the home only has the install's journal).
    Register {
        /// The prefix's own receipt.
        receipt: Receipt,
    },
    /// Finish the environment step of an install that was killed before it (env scripts for
    /// its toolkit, and the rc hooks it meant to add).
    Env {
        /// What the install meant to do.
        intent: crate::install::env::Intent,
    },
    /// Remove what interrupted runs left (see [`crate::install::litter`]).
    Litter {
        /// How many pieces, and their size.
        why: String,
    },
}

impl Step {
    /// The id `repair --fix` (and doctor) use for this kind of repair.
    pub fn id(&self) -> &'static str {
        match self {
            Step::Toolkit { .. } | Step::Register { .. } => "toolkit-files",
            Step::Venv { .. } => "venv-packages",
            Step::EnvScripts { .. } | Step::Env { .. } => "env-scripts",
            Step::RcHook { .. } => "rc-hook",
            Step::SelfCopy { .. } => "self-copy",
            Step::Litter { .. } => "litter",
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Toolkit { receipt, why } => write!(
                f,
                "[{}] rebuild CUDA {} in {}: {why}",
                self.id(),
                receipt.cuda,
                receipt.prefix.display()
            ),
            Step::Venv {
                receipt,
                recreate,
                why,
            } => {
                let verb = if *recreate {
                    "recreate"
                } else {
                    "reinstall the packages of"
                };
                write!(
                    f,
                    "[{}] {verb} {}: {why}",
                    self.id(),
                    receipt.venv.display()
                )
            }
            Step::EnvScripts { why } => {
                write!(f, "[{}] write the env scripts again: {why}", self.id())
            }
            Step::RcHook { file, line } => write!(
                f,
                "[{}] put `{line}` back into {}",
                self.id(),
                file.display()
            ),
            Step::SelfCopy { why } => write!(f, "[{}] {why}", self.id()),
            Step::Litter { why } => write!(f, "[{}] remove {why}", self.id()),
            Step::Env { intent } => write!(
                f,
                "[{}] finish the environment step of an interrupted install: env scripts for {}{}",
                self.id(),
                intent
                    .toolkit
                    .as_deref()
                    .map_or("no toolkit".into(), |t| t.display().to_string()),
                if intent.modify_path {
                    format!(", rc hooks for {}", intent.shells.join(", "))
                } else {
                    String::new()
                }
            ),
            Step::Register { receipt } => write!(
                f,
                "[{}] record CUDA {} in {}: its install was interrupted after the toolkit was in place",
                self.id(),
                receipt.cuda,
                receipt.prefix.display()
            ),
        }
    }
}

/// Why a repair failed. Each variant keeps its layer's error.
#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    /// A step of the install failed (the toolkit, the framework, the env, cudaup's copy).
    #[error(transparent)]
    Step(#[from] StepError),
    /// A source recorded in a receipt cannot be read.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A variable is unusable (`CUDAUP_HTTP_*`).
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// A receipt cannot be acted on (exit 2, as the Usage errors these were).
    #[error("{0}")]
    Receipt(String),
}

impl From<ReceiptError> for RepairError {
    fn from(e: ReceiptError) -> Self {
        match e {
            ReceiptError::Unreadable(why) => RepairError::Receipt(why),
            ReceiptError::Location(e) => RepairError::Fetch(e),
            ReceiptError::Items(e) => RepairError::Step(StepError::Install(e)),
        }
    }
}

impl From<io::Error> for RepairError {
    fn from(e: io::Error) -> Self {
        RepairError::Step(StepError::Io(e))
    }
}

impl From<InstallError> for RepairError {
    fn from(e: InstallError) -> Self {
        RepairError::Step(StepError::Install(e))
    }
}

impl From<PyEnvError> for RepairError {
    fn from(e: PyEnvError) -> Self {
        RepairError::Step(StepError::PyEnv(e))
    }
}

impl From<super::env::HookError> for RepairError {
    fn from(e: super::env::HookError) -> Self {
        RepairError::Step(StepError::Hook(e))
    }
}

/// What a person sees while repairs run; each method may fail writing it.
pub trait RepairEvents {
    /// The progress display of a download or an installer.
    fn progress(&mut self) -> Arc<dyn Reporter>;
    /// A line about a repair under way.
    fn note(&mut self, line: &str) -> io::Result<()>;
    /// A repair is done.
    fn repaired(&mut self, step: &Step) -> io::Result<()>;
}

/// What repairs run with.
pub struct RepairCtx<'a> {
    /// The process (its variables, `PATH`, home).
    pub process: &'a Process,
    /// Runs pip or uv, and the checks.
    pub runner: &'a dyn Runner,
    /// `$CUDAUP_HOME`.
    pub home: &'a Home,
    /// Ctrl-C.
    pub cancel: Arc<AtomicBool>,
    /// `--allow-http` (sources recorded in the receipts were accepted at install time).
    pub allow_http: bool,
    /// The uv the catalog in effect pins (a venv's installer is brought as an install's is).
    pub uv: &'a crate::install::uv::UvPin,
    /// What a person sees.
    pub events: &'a mut dyn RepairEvents,
}

/// What the repairs did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairOutcome {
    /// The ids of the repairs made, in their order.
    pub repaired: Vec<&'static str>,
}

/// Runs `steps` in their order.
pub fn run(steps: &[Step], ctx: &mut RepairCtx<'_>) -> Result<RepairOutcome, RepairError> {
    let home = ctx.home.root().to_owned();
    let mut outcome = RepairOutcome::default();
    for step in steps {
        match step {
            Step::Toolkit { receipt, .. } => toolkit(receipt, ctx)?,
            Step::Venv {
                receipt, recreate, ..
            } => venv(receipt, *recreate, ctx)?,
            Step::Env { intent } => {
                env::finish(intent, ctx.process, &home)?;
            }
            Step::Register { receipt } => {
                super::receipts::register(&home, receipt)?;
            }
            Step::Litter { .. } => {
                super::litter::clean(&home, &super::receipts::Receipts::load(&home))?;
            }
            Step::EnvScripts { .. } => env::rewrite(&home)?,
            Step::SelfCopy { .. } => {
                let done =
                    super::self_copy::ensure(ctx.process, &home).map_err(StepError::SelfCopy)?;
                // The env scripts put the copy's directory on PATH only while it holds cudaup.
                env::follow_self_copy(&home)?;
                if done.in_home() && super::receipts::ShellReceipt::read(&home).hooks.is_empty() {
                    ctx.events.note(&format!(
                        "no shell loads cudaup's env yet: `{}` in a shell (or `cudaup install`, which hooks your shells)",
                        crate::shell::source_line(crate::shell::Shell::Posix, &home)
                    ))?;
                }
            }
            Step::RcHook { file, line } => {
                env::rehook(ctx.process, &home, file, line)?;
            }
        }
        ctx.events.repaired(step)?;
        outcome.repaired.push(step.id());
    }
    Ok(outcome)
}

/// Rebuilds a toolkit prefix from its receipt through the toolkit step: the damaged trees leave
/// the unpacked cache, the receipt's components are installed again and the new receipt
/// registered.
fn toolkit(receipt: &Receipt, ctx: &mut RepairCtx<'_>) -> Result<(), RepairError> {
    let step = ToolkitStep::from_receipt(receipt, ctx.home.root())?;
    let fetcher = crate::settings::net::fetcher(
        ctx.process,
        &ctx.home.cache(),
        ctx.allow_http || step.over_http(),
        ctx.cancel.clone(),
        ctx.events.progress(),
    )?;
    let mut said = Ok(());
    let events = &mut *ctx.events;
    let mut on_dropped = |n: usize| {
        said = events.note(&format!(
            "{n} damaged tree(s) dropped from the unpacked cache"
        ));
    };
    toolkit::repair(&step, &fetcher, ctx.home.root(), &mut on_dropped)?;
    Ok(said?)
}

/// Makes a venv again (`recreate`) or installs its packages again over what is there, through
/// the framework step's repairs.
fn venv(receipt: &VenvReceipt, recreate: bool, ctx: &mut RepairCtx<'_>) -> Result<(), RepairError> {
    let fetcher = crate::settings::net::fetcher(
        ctx.process,
        &ctx.home.cache(),
        ctx.allow_http,
        ctx.cancel.clone(),
        ctx.events.progress(),
    )?;
    let path = ctx.process.path_entries();
    let with = framework::Repair {
        runner: ctx.runner,
        path: &path,
        no_uv: ctx.process.var(crate::world::vars::CUDAUP_NO_UV) == Some("1"),
        home: ctx.home,
        uv: ctx.uv,
        fetcher: &fetcher,
        progress: ctx.events.progress(),
    };
    let mut said = Ok(());
    let events = &mut *ctx.events;
    let mut on_installer = |line: &str| said = events.note(line);
    if recreate {
        framework::recreate(receipt, with, &mut on_installer)?;
    } else {
        framework::reinstall(receipt, with, &mut on_installer)?;
    }
    Ok(said?)
}
