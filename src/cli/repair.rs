//! `cudaup repair`: finds the repairs (doctor's receipt check), shows them, asks once, and runs
//! them with `install::repair::run`, rendering what it says.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::doctor::repair::{self, Step};
use crate::error::{ExitCode, Result};
use crate::install::python::check;
use crate::install::repair::{RepairCtx, RepairEvents};
use crate::world::process::Process;
use crate::world::progress::Reporter;
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

pub(super) fn run(
    args: &RepairArgs,
    process: &Process,
    runner: &dyn Runner,
    catalog: &crate::catalog::Catalog,
    style: &Style,
    cancel: Arc<AtomicBool>,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let home = crate::install::home::Home::of(process)?.root().to_owned();
    // Checked and mapped as the flag was parsed (doctor's finding ids name the same repairs).
    let fix = args.fix;
    let mut steps = repair::plan(&home, &|v| check::venv_problem(runner, v));
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
    let home = crate::install::home::Home::at(&home);
    let mut shown = Shown { out, style };
    let mut ctx = RepairCtx {
        process,
        runner,
        home: &home,
        cancel,
        allow_http: args.allow_http,
        uv: &catalog.uv,
        events: &mut shown,
    };
    crate::install::repair::run(&steps, &mut ctx)?;
    Ok(ExitCode::Ok)
}

/// How repairs are shown: the CLI's side of [`RepairEvents`].
struct Shown<'a> {
    out: &'a mut dyn Write,
    style: &'a Style,
}

impl RepairEvents for Shown<'_> {
    fn progress(&mut self) -> Arc<dyn Reporter> {
        Arc::new(super::reporter::Lines::new(Box::new(std::io::stderr())))
    }

    fn note(&mut self, line: &str) -> std::io::Result<()> {
        writeln!(self.out, "  {line}")
    }

    fn repaired(&mut self, step: &Step) -> std::io::Result<()> {
        writeln!(self.out, "  {} {}", self.style.good("repaired"), step)
    }
}
