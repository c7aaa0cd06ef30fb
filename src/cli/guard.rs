//! `cudaup guard status|on|off VENV`: the arguments and the rendering of the guard's state; the
//! guard itself is [`crate::install::guard`].

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::error::{ExitCode, Result};
use crate::install::guard::{self, Status};
use crate::model::text::escape_controls;
use crate::world::process::Process;

use super::Style;

/// `cudaup guard` subcommands.
#[derive(Debug, Subcommand)]
pub enum GuardCommand {
    /// Whether the guard is on, the builds it keeps, and any that another build replaced (by
    /// which installer, when); exit code 1 when one was replaced
    Status(VenvArg),
    /// Write the guard's files again (constraints in pip.conf and uv.toml, the startup check)
    On(VenvArg),
    /// Remove the guard's files from the venv; its pins stay in the receipt for `guard on`
    Off(VenvArg),
}

/// The venv a guard command acts on.
#[derive(Debug, Args)]
pub struct VenvArg {
    /// A venv cudaup installed into (its receipt is in $CUDAUP_HOME/receipts)
    pub venv: PathBuf,
}

impl GuardCommand {
    /// `on` and `off` change the venv's receipt.
    pub fn changes_home(&self) -> bool {
        !matches!(self, GuardCommand::Status(_))
    }
}

pub(super) fn run(
    cmd: &GuardCommand,
    process: &Process,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let home = crate::install::home::Home::of(process)?;
    let status = match cmd {
        GuardCommand::Status(a) => guard::status(home.root(), &a.venv)?,
        GuardCommand::On(a) | GuardCommand::Off(a) => {
            let on = matches!(cmd, GuardCommand::On(_));
            let (status, lifted) = guard::set(home.root(), &a.venv, on)?;
            let venv = escape_controls(&status.venv.display().to_string());
            if on {
                writeln!(out, "{}", style.good(&format!("guard on for {venv}")))?;
            } else {
                writeln!(
                    out,
                    "{}",
                    style.good(&format!(
                        "guard off for {venv}: {} file(s) removed",
                        lifted.removed.len()
                    ))
                )?;
                for k in &lifted.kept {
                    writeln!(
                        out,
                        "  kept {} (changed since the guard wrote it)",
                        escape_controls(&k.display().to_string())
                    )?;
                }
            }
            status
        }
    };
    render(&status, style, out)?;
    Ok(if status.drift.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

fn render(s: &Status, style: &Style, out: &mut dyn Write) -> Result<()> {
    let venv = escape_controls(&s.venv.display().to_string());
    match &s.record {
        Some(r) if r.is_on() => writeln!(out, "{venv}: guard on")?,
        Some(_) => writeln!(
            out,
            "{venv}: guard off (`cudaup guard on {venv}` sets it up again)"
        )?,
        None => writeln!(
            out,
            "{venv}: no guard (installed with --no-guard, or before the guard existed; `cudaup guard on {venv}` sets it up)"
        )?,
    }
    if let Some(r) = &s.record {
        let pins: Vec<String> = r.pins.iter().map(|p| p.requirement()).collect();
        writeln!(out, "  keeps {}", escape_controls(&pins.join(", ")))?;
        for i in r.indexes.iter().chain(&r.find_links) {
            writeln!(out, "  from  {}", escape_controls(i))?;
        }
        if r.is_on() {
            for f in &r.files {
                writeln!(
                    out,
                    "  file  {}",
                    escape_controls(&f.path.display().to_string())
                )?;
            }
        }
    }
    for c in &s.changed {
        writeln!(
            out,
            "  {}",
            style.warn(&format!(
                "changed or gone since the guard wrote it: {}",
                escape_controls(&c.display().to_string())
            ))
        )?;
    }
    for d in &s.drift {
        writeln!(out, "  {}", style.bad(&escape_controls(&d.describe())))?;
    }
    if !s.drift.is_empty() {
        writeln!(out, "  restore it: {}", escape_controls(&s.restore))?;
    }
    Ok(())
}
