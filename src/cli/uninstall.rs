//! `cudaup uninstall`.

use std::io::Write;

use clap::Args;

use crate::error::{Error, ExitCode, Result};
use crate::world::process::Process;

use super::Style;

/// `cudaup uninstall` flags.
#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Also remove the download cache
    #[arg(long)]
    pub purge: bool,
    /// Do not ask for confirmation
    #[arg(short, long)]
    pub yes: bool,
    /// Show what would be removed, and remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was done as JSON
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(
    args: &UninstallArgs,
    process: &Process,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let home = process.cudaup_home().ok_or_else(|| {
        Error::Usage("cannot tell where cudaup's home is: set HOME or --home".into())
    })?;
    let steps = crate::install::uninstall::plan(&home, args.purge);
    if steps.is_empty() {
        if args.json {
            writeln!(
                out,
                "{}",
                serde_json::json!({"status": "nothing to do", "steps": []})
            )?;
        } else {
            writeln!(
                out,
                "cudaup has installed nothing here ({}).",
                home.display()
            )?;
        }
        return Ok(ExitCode::Ok);
    }
    if !args.json || args.dry_run {
        writeln!(out, "{}", style.heading("Uninstall"))?;
        for s in &steps {
            writeln!(out, "  - {s}")?;
        }
    }
    if args.dry_run {
        return Ok(ExitCode::Ok);
    }
    if !args.yes {
        if !(process.stdin_is_tty && process.stdout_is_tty) {
            return Err(Error::Usage("cannot ask for confirmation without a terminal: re-run with --yes (or --dry-run to look first)".into()));
        }
        write!(out, "Remove all of this? [y/N] ")?;
        out.flush()?;
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return Ok(ExitCode::Cancelled);
        }
    }
    let outcome = crate::install::uninstall::run(&home, &steps)?;
    if args.json {
        let steps: Vec<String> = steps.iter().map(ToString::to_string).collect();
        let kept: Vec<serde_json::Value> = outcome
            .kept
            .iter()
            .map(|(p, why)| serde_json::json!({"path": p, "why": why}))
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::json!({"status": "uninstalled", "steps": steps, "kept": kept})
        )?;
    } else {
        writeln!(out, "{}", style.good("done"))?;
        for (p, why) in &outcome.kept {
            writeln!(out, "  left in place: {} ({why})", p.display())?;
        }
    }
    Ok(ExitCode::Ok)
}
