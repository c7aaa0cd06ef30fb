//! `cudaup wizard` (and bare `cudaup` on a terminal): detect, explain, ask, show the plan and
//! exactly what changes on disk, then run the same install as `cudaup install`, verify, and say
//! what to do next.
//!
//! The questions go through [`Prompter`], so the branching is tested with
//! [`crate::world::prompt::ScriptedPrompter`] and the terminal is only touched by
//! [`DialoguerPrompter`]. Every string the wizard prints itself comes from [`crate::cli::i18n`]; the
//! detect and plan reports it reuses are the commands' own (English).

mod answers;
mod ask;
mod preview;
mod profile;
mod show;
#[cfg(test)]
mod tests;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::catalog::Catalog;
use crate::cli::i18n::{Lang, Strings};
use crate::error::{Error, ExitCode, Result};
use crate::install::plan::Target;
use crate::model::request::Profile;
use crate::model::system::System;
use crate::settings::file::Config;
use crate::shell::Shell;
use crate::world::process::Process;
use crate::world::prompt::{DefaultsPrompter, DialoguerPrompter, Labels, PromptError, Prompter};
use crate::world::runner::Runner;

use super::{GlobalArgs, Style};

pub use answers::Answers;
pub use preview::{preview, DriverChange, Preview, ToolkitChange};
pub use show::render_changes;

use ask::customise;
use show::summary;

/// The profiles, in the order the wizard offers them (and [`Strings::profile_lines`] explains).
const PROFILES: [Profile; 6] = [
    Profile::Full,
    Profile::Pytorch,
    Profile::Tensorflow,
    Profile::CudaDev,
    Profile::Cpu,
    Profile::Jax,
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
    /// The download sites, asked before the profile question (`None`: nothing was left to
    /// decide, every source is pinned).
    pub reach: Option<crate::install::reach::Reach>,
    /// The reachability words of the chosen language.
    pub reach_words: &'static crate::cli::i18n::reach::ReachWords,
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
    /// No profile can work here: none of the download sites answered (exit code 3).
    Unreachable,
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
            e @ PromptError::NoTerminal(_) => Stop::Fail(e.into()),
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
    // The root certificates are read while the wizard detects and asks, not after.
    crate::fetch::tls::warm();
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
        return Err(PromptError::NoTerminal(s.no_terminal.to_owned()).into());
    }
    let home = crate::install::home::Home::of(process)?.root().to_owned();

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
    let initial = Answers::initial(process, &detection.system, catalog, config.as_ref())?;
    // The download sites every profile the wizard may offer would take, asked at once before
    // the question: unattended with a profile given, only that profile's.
    let given = crate::settings::InstallOptions::from_env(process)
        .map_err(Error::from)?
        .profile
        .or(config.as_ref().and_then(|c| c.profile));
    let offered: Vec<Profile> = match given {
        Some(p) if unattended => vec![p],
        _ => PROFILES.to_vec(),
    };
    let routes = answers::routes(&initial, &offered, process)?;
    let words = lang.reach();
    let reach = if routes.is_empty() {
        None
    } else {
        let r = super::reach::ask(&routes, initial.allow_http, process, words, cancel.clone())?;
        writeln!(
            out,
            "\n{}",
            super::reach::render(&r, words, style).trim_end()
        )?;
        Some(r)
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
        reach,
        reach_words: words,
    };
    let (answers, preview) = match drive(&ctx, prompter.as_mut(), out, initial) {
        Ok(Decision::Go(a, p)) => (*a, *p),
        Ok(Decision::Cancel) | Err(Stop::Cancel) => {
            writeln!(out, "\n{}", s.cancelled)?;
            return Ok(ExitCode::Cancelled);
        }
        Ok(Decision::Unsupported) => return Ok(ExitCode::Unsupported),
        Ok(Decision::Unreachable) => return Ok(ExitCode::Network),
        Err(Stop::Fail(e)) => return Err(e),
    };

    if let Some(path) = &args.save {
        let path = if path.is_absolute() {
            path.clone()
        } else {
            process.cwd().join(path)
        };
        // `source = auto` is saved as the source the sites asked showed, and why.
        let mut saved = answers.clone();
        let probed = match (&ctx.reach, saved.source) {
            (Some(r), None) if saved.profile.has_toolkit() => answers::probed_source(r),
            _ => None,
        };
        if let Some((kind, _)) = &probed {
            saved.source = Some(*kind);
        }
        let mut text = saved
            .to_config(path.clone(), lang, process.var("SHELL"))
            .to_toml();
        if let Some((kind, why)) = &probed {
            let line = format!("source = \"{}\"\n", kind.name());
            text = text.replacen(&line, &format!("# {why}\n{line}"), 1);
        }
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
    // The plan previewed is the plan run: the machine is not detected again.
    let Some(plan) = &preview.install else {
        return super::install::render_unsupported(&preview.plan, out);
    };
    let home_dir = crate::install::home::Home::at(&home);
    super::install::reboot_gate(&home_dir, Target::Here, !global.quiet, out)?;
    let flags = super::install::RunFlags {
        mode: crate::install::run::Mode::Yes,
        json: false,
    };
    let code = super::install::run_plan(
        plan, flags, global, process, runner, catalog, style, cancel, out,
    )?;
    if code != ExitCode::Ok {
        return Ok(code);
    }
    // `install` hooked the chosen shells' rc files (on Windows: set the user environment) and
    // said which.
    let line = crate::shell::source_line(Shell::INTERACTIVE, &home);
    let hooked = preview.env && answers.reaches_new_shells();

    // A driver install waits for a reboot: verify after it, not now.
    let reboot = crate::install::driver::reboot_pending(&home, &crate::detect::Root::live())
        .map(|m| m.driver);
    let mut code = ExitCode::Ok;
    if reboot.is_some() {
        writeln!(out, "\n{}", s.verify_after_reboot)?;
    } else if answers.verify {
        writeln!(out, "\n{}", style.heading(s.verifying))?;
        let verify = super::verify::VerifyArgs {
            json: false,
            bench: false,
            container: false,
            // The venv just installed; the toolkit is the active one install recorded.
            venvs: preview
                .venv
                .iter()
                .map(|(dir, _)| dir.clone())
                .filter(|dir| crate::install::python::Venv { dir: dir.clone() }.exists())
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
    // GPUs in containers, offered when an engine is here (not before the new driver loads).
    if reboot.is_none() {
        let step = super::container::wizard_step(
            process,
            runner,
            prompter.as_mut(),
            unattended,
            s,
            style,
            out,
        )?;
        if code == ExitCode::Ok {
            code = step;
        }
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
    Ok(Config::load(&full).map_err(crate::settings::SettingsError::from)?)
}

/// On Windows the user's environment in the registry is the shell setup: install writes it when
/// `modify_path` is on ([`crate::install::env::set_user_environment`]), and no rc file is
/// hooked (`shells_here` is empty there). The wizard then asks one yes/no instead of one per
/// shell, shows the registry values instead of rc lines, and writes its next steps for
/// PowerShell ([`crate::shell::Shell::INTERACTIVE`]).
pub(crate) const USER_ENVIRONMENT: bool = cfg!(windows);

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
        match (gpu, a.profile) {
            (true, Profile::Full) => s.preselect_gpu.to_owned(),
            (true, p) => (s.preselect_other)(p.name()),
            (false, _) => s.preselect_no_gpu.to_owned(),
        }
    )?;
    if let Some(stop) = profile::choose(ctx, p, out, &mut a)? {
        return Ok(stop);
    }

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
                return Err(Stop::Fail(
                    PromptError::NoTerminal(s.need_yes.to_owned()).into(),
                ));
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
