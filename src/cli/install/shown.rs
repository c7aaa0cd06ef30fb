//! How an install run is shown: the CLI's side of [`install::run::Events`] (the plan's listing,
//! each step's result, the environment and how to run cudaup now) and of its one question
//! ([`Prompter`], asked on the same terminal).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::install::locate::{DriverLocated, Located};
use crate::install::plan::{InstallPlan, ToolkitPlan};
use crate::install::run::Progress;
use crate::install::steps::{env::EnvDone, framework::FrameworkDone, toolkit::ToolkitDone};
use crate::install::{self, ToolkitSpec};
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::prompt::{Prompter, Result as PromptResult, StdinPrompter, Validate};

use super::super::Style;

/// How an install run is shown: the CLI's side of [`install::run::Events`].
pub(super) struct Shown<'a> {
    pub(super) out: &'a mut dyn Write,
    pub(super) style: &'a Style,
    /// Human output on stdout (neither --json nor --quiet).
    pub(super) talk: bool,
    /// The plan's listing before it runs.
    pub(super) show: bool,
    pub(super) quiet: bool,
    pub(super) json: bool,
    pub(super) tty: bool,
    pub(super) process: &'a Process,
    pub(super) home: &'a Path,
    pub(super) modify_path: bool,
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
        super::super::reporter::for_progress(kind, self.json, self.tty, self.quiet)
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
        // The venv's activation for the shell people type into here (Windows: PowerShell's
        // Scripts\Activate.ps1).
        writeln!(
            self.out,
            "  use it:  {}",
            crate::shell::activate_line(crate::shell::Shell::INTERACTIVE, &done.receipt.venv)
        )
    }

    fn self_copy_done(
        &mut self,
        cudaup: &crate::install::self_copy::Installed,
    ) -> std::io::Result<()> {
        if self.talk {
            super::super::self_copy::done(self.out, self.style, cudaup)
                .map_err(std::io::Error::other)?;
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
    writeln!(
        out,
        "{}",
        super::super::self_copy::planned(&located.self_copy)
    )?;
    Ok(())
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
    for line in &done.registry {
        writeln!(out, "  {line}")?;
    }
    if cudaup.in_home() {
        // On Windows the user's environment in the registry is what new shells read.
        let hooked = modify_path
            && (!crate::install::receipts::ShellReceipt::read(home)
                .hooks
                .is_empty()
                || !crate::install::env::registry::RegistryReceipt::read(home)
                    .values
                    .is_empty());
        super::super::self_copy::how_to_run(out, cudaup, hooked, source, home)?;
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
