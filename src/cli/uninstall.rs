//! `cudaup uninstall`.

use std::io::Write;

use clap::Args;

use crate::error::{ExitCode, Result};
use crate::world::process::Process;

use super::Style;
use crate::model::text::escape_controls;

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
    let home_dir = crate::install::home::Home::of(process)?;
    let home = home_dir.root().to_owned();
    let steps = crate::install::uninstall::plan(&home_dir, process, args.purge)?;
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
                escape_controls(&home.display().to_string())
            )?;
        }
        return Ok(ExitCode::Ok);
    }
    if !args.json || args.dry_run {
        writeln!(out, "{}", style.heading("Uninstall"))?;
        for s in &steps {
            writeln!(out, "  - {}", escape_controls(&s.to_string()))?;
        }
        let cache = home_dir.cache();
        if !args.purge && cache.is_dir() {
            writeln!(
                out,
                "  - keep the download cache {} ({}; --purge removes it)",
                cache.display(),
                indicatif::HumanBytes(crate::install::litter::size_of(&cache))
            )?;
        }
    }
    if args.dry_run {
        return Ok(ExitCode::Ok);
    }
    if !args.yes && !super::confirm(process, out, "Remove all of this?")? {
        return Ok(ExitCode::Cancelled);
    }
    // Decided before the copy goes: whether the cudaup running this is the copy uninstall
    // removes, so the command that removes what is kept is one that still works afterwards.
    let running_the_copy = running_the_copy(process, &home);
    let outcome = crate::install::uninstall::run(&home_dir, &steps)?;
    let left = crate::install::uninstall::left_in_home(&home_dir);
    let purge = purge_command(&left, process, &home, running_the_copy);
    if args.json {
        let steps: Vec<String> = steps.iter().map(ToString::to_string).collect();
        let kept: Vec<serde_json::Value> = outcome
            .kept
            .iter()
            .map(|(p, why)| serde_json::json!({"path": p, "why": why}))
            .collect();
        let home_left: Vec<serde_json::Value> = left
            .iter()
            .map(|l| serde_json::json!({"path": l.path, "bytes": l.bytes, "what": l.what, "purge_removes": l.purged}))
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::json!({"status": "uninstalled", "steps": steps, "kept": kept,
                "home": {"path": home, "left": home_left, "remove_with": purge}})
        )?;
    } else {
        writeln!(out, "{}", style.good("done"))?;
        for (p, why) in &outcome.kept {
            writeln!(
                out,
                "  left in place: {} ({})",
                escape_controls(&p.display().to_string()),
                escape_controls(why)
            )?;
        }
        if !left.is_empty() {
            let total: u64 = left.iter().map(|l| l.bytes).sum();
            writeln!(
                out,
                "kept in {} ({}):",
                escape_controls(&home.display().to_string()),
                indicatif::HumanBytes(total)
            )?;
            let width = left
                .iter()
                .map(|l| l.path.file_name().map_or(0, |n| n.len()))
                .max()
                .unwrap_or(0);
            for l in &left {
                let name = l
                    .path
                    .file_name()
                    .map(|n| escape_controls(&n.to_string_lossy()))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  {name:<width$}  {:>10}  {}",
                    indicatif::HumanBytes(l.bytes).to_string(),
                    l.what
                )?;
            }
            if let Some(cmd) = &purge {
                writeln!(out, "to remove it too: {cmd}")?;
            }
        }
    }
    Ok(ExitCode::Ok)
}

/// A path as a word of a command line shown to the user (control characters visible).
fn quoted(path: &str) -> String {
    crate::model::text::shell_word(path, crate::install::driver::shell_quote)
}

/// Whether the running binary is cudaup's own copy in `home`.
fn running_the_copy(process: &Process, home: &std::path::Path) -> bool {
    let copy = crate::install::self_copy::target(home);
    match (process.exe(), fs_err::canonicalize(&copy)) {
        (Some(exe), Ok(copy)) => fs_err::canonicalize(exe).is_ok_and(|e| e == copy),
        _ => false,
    }
}

/// The command that removes what `--purge` would, one that works after this uninstall:
/// `cudaup uninstall --purge` while a cudaup stays (this one is not the copy just removed),
/// else the plain `rm -rf` of exactly those entries. `None` when nothing of cudaup's is left.
fn purge_command(
    left: &[crate::install::uninstall::Left],
    process: &Process,
    home: &std::path::Path,
    running_the_copy: bool,
) -> Option<String> {
    let ours: Vec<&crate::install::uninstall::Left> = left.iter().filter(|l| l.purged).collect();
    if ours.is_empty() {
        return None;
    }
    if running_the_copy {
        let paths: Vec<String> = ours
            .iter()
            .map(|l| quoted(&l.path.display().to_string()))
            .collect();
        return Some(format!(
            "rm -rf {}   # cudaup's own copy is gone, so this needs no cudaup",
            paths.join(" ")
        ));
    }
    let default = process
        .path_var("XDG_DATA_HOME")
        .map(|d| d.join("cudaup"))
        .or_else(|| process.home().map(|h| h.join(".local/share/cudaup")));
    let home_arg = if default.as_deref() == Some(home) {
        String::new()
    } else {
        format!(" --home {}", quoted(&home.display().to_string()))
    };
    // This binary stays: name it as the user can run it (`cudaup` when that is what PATH finds).
    let exe = process
        .exe()
        .map(|e| fs_err::canonicalize(e).unwrap_or_else(|_| e.to_owned()));
    let on_path = crate::world::runner::which("cudaup", &process.path_entries())
        .and_then(|p| fs_err::canonicalize(p).ok());
    let program = match exe {
        Some(exe) if on_path.as_ref() != Some(&exe) => quoted(&exe.display().to_string()),
        _ => "cudaup".to_owned(),
    };
    Some(format!("{program} uninstall --purge{home_arg}"))
}
