//! The wizard's container step: after an install, when a container engine is here, say what
//! `cudaup container setup` would change and offer to do it now (only what this user may write;
//! files that need root, a toolkit, or a refusal are said, never attempted). The decision is
//! [`crate::container::offer`]'s; this file asks and prints.

use std::io::Write;
use std::path::Path;

use crate::cli::i18n::Strings;
use crate::cli::Style;
use crate::container::offer::Offer;
use crate::container::{self, setup::Options};
use crate::detect::Root;
use crate::error::{ExitCode, Result};
use crate::world::process::Process;
use crate::world::prompt::{PromptError, Prompter};
use crate::world::runner::Runner;

/// Surveys this machine's engines and runs [`step`] (nothing at all when no engine is here, no
/// NVIDIA driver is loaded, or the config directory cannot be told).
#[allow(clippy::too_many_arguments)]
pub(crate) fn wizard_step(
    process: &Process,
    runner: &dyn Runner,
    prompter: &mut dyn Prompter,
    unattended: bool,
    s: &Strings,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let home = crate::install::home::Home::of(process)?.root().to_owned();
    let root = Root::live();
    let survey = container::survey(&super::inputs(&root, process, &home), runner);
    // No engine, or no driver to make a spec of (a CPU machine): nothing to offer or say.
    if survey.engines.is_empty()
        || (survey.host.driver_version.is_none() && survey.host.wsl.is_none())
    {
        return Ok(ExitCode::Ok);
    }
    let Ok(opts) = Options::for_host(process, runner, &root, &root, None) else {
        return Ok(ExitCode::Ok);
    };
    let offer = container::offer::offer(&survey, &opts);
    step(offer, &home, runner, prompter, unattended, s, style, out)
}

/// Says `offer`, and with a yes writes its files (recorded: `cudaup container uninstall` puts
/// them back). Its commands (a daemon restart) are printed, never run. A setup that fails is
/// said and is exit 1; the install before it stands.
#[allow(clippy::too_many_arguments)]
pub(crate) fn step(
    offer: Offer,
    home: &Path,
    runner: &dyn Runner,
    prompter: &mut dyn Prompter,
    unattended: bool,
    s: &Strings,
    style: &Style,
    out: &mut dyn Write,
) -> Result<ExitCode> {
    let (engines, plan) = match offer {
        Offer::NoEngine => return Ok(ExitCode::Ok),
        Offer::SetUp { engines } => {
            writeln!(out, "\n{}", style.heading(s.containers_heading))?;
            writeln!(out, "{}", (s.containers_set_up)(&engines.join(", ")))?;
            return Ok(ExitCode::Ok);
        }
        Offer::Refused { reason } => {
            writeln!(out, "\n{}", style.heading(s.containers_heading))?;
            writeln!(out, "{}", (s.containers_refused)(&reason))?;
            return Ok(ExitCode::Ok);
        }
        Offer::NeedsRoot { engines, paths } => {
            let files: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            writeln!(out, "\n{}", style.heading(s.containers_heading))?;
            writeln!(
                out,
                "{}",
                (s.containers_need_root)(&engines.join(", "), &files.join(", "))
            )?;
            return Ok(ExitCode::Ok);
        }
        Offer::Ready { engines, plan } => (engines.join(", "), plan),
    };
    writeln!(out, "\n{}", style.heading(s.containers_heading))?;
    for e in &plan.edits {
        let verb = if e.bytes.is_some() { "write" } else { "remove" };
        writeln!(out, "  {verb} {} — {}", e.path.display(), e.what)?;
    }
    let yes = if unattended {
        false
    } else {
        out.flush()?;
        match prompter.confirm(&(s.containers_prompt)(&engines), true) {
            Ok(yes) => yes,
            Err(PromptError::Cancelled) => false,
            Err(e) => return Err(e.into()),
        }
    };
    if !yes {
        writeln!(out, "{}", s.containers_later)?;
        return Ok(ExitCode::Ok);
    }
    let probe = || None;
    match container::setup::apply(&plan, home, false, runner, &probe, &mut |_| {}) {
        Ok(applied) => {
            for p in &applied.written {
                writeln!(out, "  {} {}", style.good("wrote"), p.display())?;
            }
            let by_hand = plan.by_hand();
            if !by_hand.is_empty() {
                writeln!(out, "{}", s.containers_then_run)?;
            }
            for c in by_hand {
                writeln!(out, "  $ {}", crate::install::driver::shell_line(&c))?;
            }
            Ok(ExitCode::Ok)
        }
        Err(e) => {
            writeln!(out, "{} {e}", style.warn("container setup failed:"))?;
            Ok(ExitCode::Failure)
        }
    }
}

// Uses the Linux driver picture of `cdi::generate::tests` (containers are Linux-only).
#[cfg(all(test, unix))]
mod tests;
