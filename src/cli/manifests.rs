//! `cudaup manifests check [DIR]`.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

use crate::catalog::{check, Source};
use crate::error::{ExitCode, Result};

use super::Style;

/// Catalog subcommands.
#[derive(Debug, Subcommand)]
pub enum ManifestsCommand {
    /// Validate a catalog: schema, cross-references between files, and a source on every row.
    /// Problems are printed as FILE:LINE: MESSAGE; exit code 2 when there are any
    Check {
        /// The directory to check [default: the --manifests directory, else the embedded catalog]
        dir: Option<PathBuf>,
    },
}

pub(super) fn run(
    cmd: &ManifestsCommand,
    global_source: &Source,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let ManifestsCommand::Check { dir } = cmd;
    let source = match dir {
        Some(d) => Source::Dir(d.clone()),
        None => global_source.clone(),
    };
    let problems = check(&source);
    let name = match &source {
        Source::Embedded => "the embedded catalog".to_owned(),
        Source::Dir(d) => d.display().to_string(),
    };
    if problems.is_empty() {
        writeln!(out, "{} {name}: no problems", style.good("ok"))?;
        return Ok(ExitCode::Ok);
    }
    for p in &problems {
        writeln!(out, "{p}")?;
    }
    writeln!(
        out,
        "{} {name}: {} problem(s)",
        style.bad("error"),
        problems.len()
    )?;
    Ok(ExitCode::Usage)
}
