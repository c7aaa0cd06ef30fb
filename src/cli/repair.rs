//! `cudaup repair`.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::doctor::repair::{self, Step};
use crate::error::{Error, ExitCode, Result};
use crate::fetch::Location;
use crate::install::python::check::{self, TfReport, TorchExpectation, TorchReport};
use crate::install::python::{Session, Venv, VenvReceipt};
use crate::install::receipts::Active;
use crate::install::{self, Source, ToolkitSpec};
use crate::model::version::Version;
use crate::world::process::Process;
use crate::world::runner::Runner;

use super::Style;

/// `cudaup repair` flags.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// Only this repair: toolkit-files, venv-packages, env-scripts, rc-hook, self-copy or litter
    #[arg(long, value_name = "ID", value_parser = crate::doctor::repair::repair_id)]
    pub fix: Option<&'static str>,
    /// Do not ask for confirmation
    #[arg(short, long)]
    pub yes: bool,
    /// Show the repairs, and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Accept plain-http sources (those recorded in the receipts were accepted at install time)
    #[arg(long)]
    pub allow_http: bool,
}

/// Why a framework venv is broken, if it is: the planned packages do not import, or are not
/// the planned build.
fn venv_problem(runner: &dyn Runner, v: &VenvReceipt) -> Option<String> {
    let venv = Venv {
        dir: v.venv.clone(),
    };
    let python = venv.python().display().to_string();
    let pinned = |name: &str| {
        v.packages
            .requirements
            .iter()
            .find_map(|r| r.strip_prefix(&format!("{name}==")).map(str::to_owned))
    };
    if let Some(torch) = pinned("torch") {
        // A build from PyPI carries no tag: the receipt's route says which it had to be.
        let planned = v.route.as_ref().and_then(|r| r.variant.clone());
        let (version, variant) = torch
            .split_once('+')
            .unwrap_or((&torch, planned.as_deref().unwrap_or("cpu")));
        let cuda = variant
            .strip_prefix("cu")
            .filter(|d| d.len() >= 2)
            .and_then(|d| Version::parse(&format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..])));
        let want = TorchExpectation {
            version: Version::parse(version)?,
            variant: variant.to_owned(),
            cuda,
            index_url: v.packages.index_url.clone(),
            requirement: Some(format!("torch=={torch}")),
            gpus: Vec::new(),
            gpus_here: false,
        };
        return match crate::install::python::report::<TorchReport>(
            runner,
            &venv,
            check::TORCH_SCRIPT,
        ) {
            Ok(r) => check::judge_torch(&r, &want, &python).err(),
            Err(e) => Some(e.to_string()),
        };
    }
    if let Some((version, cuda)) = v
        .packages
        .requirements
        .iter()
        .find_map(|r| check::jax_planned(r))
    {
        return match crate::install::python::report::<check::JaxReport>(
            runner,
            &venv,
            check::JAX_SCRIPT,
        ) {
            Ok(r) => check::judge_jax(&r, &version, cuda, false).err(),
            Err(e) => Some(e.to_string()),
        };
    }
    if let Some(tf) = v
        .packages
        .requirements
        .iter()
        .find_map(|r| r.strip_prefix("tensorflow[and-cuda]=="))
    {
        return match crate::install::python::report::<TfReport>(runner, &venv, check::TF_SCRIPT) {
            Ok(r) => check::judge_tf(&r, &Version::parse(tf)?, false).err(),
            Err(e) => Some(e.to_string()),
        };
    }
    None
}

pub(super) fn run(
    args: &RepairArgs,
    process: &Process,
    runner: &dyn Runner,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let home = crate::install::home::Home::of(process)?.root().to_owned();
    // Checked and mapped as the flag was parsed (doctor's finding ids name the same repairs).
    let fix = args.fix;
    let mut steps = repair::plan(&home, &|v| venv_problem(runner, v));
    steps.extend(repair::self_copy(process, &home));
    if let Some(id) = fix {
        steps.retain(|s| s.id() == id);
    }
    if steps.is_empty() {
        writeln!(out, "{} nothing to repair", style.good("ok"))?;
        return Ok(ExitCode::Ok);
    }
    writeln!(out, "{}", style.heading("Repairs"))?;
    for s in &steps {
        writeln!(out, "  - {s}")?;
    }
    if args.dry_run {
        return Ok(ExitCode::Ok);
    }
    if !args.yes && !super::confirm(process, out, "Repair?")? {
        return Ok(ExitCode::Cancelled);
    }
    let arch = std::env::consts::ARCH.to_owned();
    for step in &steps {
        match step {
            Step::Toolkit { receipt, .. } => {
                let items = install::items_from_receipt(receipt)?;
                let http = items
                    .iter()
                    .any(|i| !i.artifact.location.is_authenticated());
                let reporter = Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())));
                let fetcher =
                    super::fetcher(process, args.allow_http || http, cancel.clone(), reporter)?;
                let dropped = install::drop_damaged_cache(&fetcher, &items)?;
                if dropped > 0 {
                    writeln!(
                        out,
                        "  {dropped} damaged tree(s) dropped from the unpacked cache"
                    )?;
                }
                let source = match receipt.source.split_once(' ') {
                    Some(("wheels", l)) => Source::Wheels(Location::parse(l)?),
                    Some((_, l)) => Source::Redist(Location::parse(l)?),
                    None => {
                        return Err(Error::Usage(format!(
                            "{}: unreadable source in the receipt",
                            receipt.prefix.display()
                        )))
                    }
                };
                let spec = ToolkitSpec {
                    cuda: Version::parse(&receipt.cuda)
                        .ok_or_else(|| Error::Usage("bad CUDA version in the receipt".into()))?,
                    cudnn: receipt.cudnn.as_deref().and_then(Version::parse),
                    prefix: receipt.prefix.clone(),
                    source,
                    arch: arch.clone(),
                    max_unpacked: crate::unpack::Limits::default().max_total_bytes,
                    register_in: Some(home.clone()),
                };
                let fresh = install::install(&fetcher, &spec, &items)?;
                install::receipts::register(&home, &fresh)?;
            }
            Step::Venv {
                receipt, recreate, ..
            } => {
                let home_dirs = crate::install::home::Home::at(&home);
                let reporter = Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())));
                let (tool, choice) = crate::install::uv::installer(
                    &home_dirs,
                    runner,
                    &process.path_entries(),
                    process.var(crate::world::vars::CUDAUP_NO_UV) == Some("1"),
                    &super::fetcher(process, args.allow_http, cancel.clone(), reporter)?,
                    Some(&receipt.packages),
                );
                writeln!(out, "  {}", choice.describe())?;
                let stamp = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let progress = super::reporter::Lines::new(Box::new(std::io::stderr()));
                let mut session = Session::new(
                    runner,
                    tool,
                    crate::install::home::Home::at(&home).log("repair", stamp),
                    &progress,
                )?;
                session.set_cache(Some(home_dirs.cache()));
                let venv = Venv {
                    dir: receipt.venv.clone(),
                };
                if *recreate {
                    let version = receipt.base_python.clone();
                    session.create(std::path::Path::new(&receipt.base_python), &version, &venv)?;
                    session.install(&venv, &receipt.packages)?;
                } else {
                    session.reinstall(&venv, &receipt.packages)?;
                }
                if let Some(still) = venv_problem(runner, receipt) {
                    return Err(Error::PyEnv(crate::install::python::PyEnvError::Check(
                        format!(
                            "{} is still broken after the repair: {still}",
                            receipt.venv.display()
                        ),
                    )));
                }
            }
            Step::Env { intent } => {
                intent.finish(process, &home)?;
            }
            Step::Register { receipt } => {
                install::receipts::register(&home, receipt)?;
            }
            Step::Litter { .. } => {
                install::litter::clean(&home, &crate::install::receipts::Receipts::load(&home))?;
            }
            Step::EnvScripts { .. } => {
                super::env::write_scripts(&home, Active::read(&home).toolkit.as_deref())?;
            }
            Step::SelfCopy { .. } => {
                let done = crate::install::self_copy::ensure(process, &home)?;
                // The env scripts put the copy's directory on PATH only while it holds cudaup.
                let active = Active::read(&home);
                if active.cudaup_bin != crate::install::self_copy::on_path(&home) {
                    super::env::write_scripts(&home, active.toolkit.as_deref())?;
                }
                if done.in_home()
                    && crate::install::receipts::ShellReceipt::read(&home)
                        .hooks
                        .is_empty()
                {
                    writeln!(
                        out,
                        "  no shell loads cudaup's env yet: `{}` in a shell (or `cudaup install`, which hooks your shells)",
                        crate::shell::source_line(crate::shell::Shell::Posix, &home)
                    )?;
                }
            }
            Step::RcHook { file, line } => {
                install::env::rehook(process, &home, file, line)?;
            }
        }
        writeln!(out, "  {} {}", style.good("repaired"), step)?;
    }
    Ok(ExitCode::Ok)
}
