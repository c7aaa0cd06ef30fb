//! Every user-facing string of the wizard, in English and Simplified Chinese.
//!
//! One [`Strings`] table per language: a struct, so that a string missing from one language is a
//! compile error rather than a blank on the screen. Plain strings are `&'static str`; strings with
//! values in them are `fn` pointers that format them. The reports the wizard reuses from `detect`
//! and `plan` (tables of versions, paths and reasons) stay in English.

mod en;
pub mod messages;
pub mod reach;
pub mod report;
mod zh;

pub use report::Report;

use crate::world::process::Process;

/// The language the wizard speaks (`--lang`; `lang` in the config file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// English.
    En,
    /// Simplified Chinese (简体中文).
    Zh,
}

impl Lang {
    /// The code used by `--lang` and in config files (`en`, `zh`).
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// The language of the locale: the first of `LC_ALL`, `LC_MESSAGES`, `LANG` that is set
    /// decides (POSIX precedence); `zh_*` (`zh_CN.UTF-8`, `zh_TW`, `zh`) means Chinese, anything
    /// else English.
    pub fn from_env(process: &Process) -> Lang {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|name| process.var(name));
        match locale {
            Some(l) if l.to_ascii_lowercase().starts_with("zh") => Lang::Zh,
            _ => Lang::En,
        }
    }

    /// The words of the reports (detect, plan, verify, doctor) in this language.
    pub fn report(self) -> &'static Report {
        match self {
            Lang::En => &report::EN,
            Lang::Zh => &report::ZH,
        }
    }

    /// The words of the reachability check in this language.
    pub fn reach(self) -> &'static reach::ReachWords {
        match self {
            Lang::En => &reach::EN,
            Lang::Zh => &reach::ZH,
        }
    }

    /// The strings of this language.
    pub fn strings(self) -> &'static Strings {
        match self {
            Lang::En => &en::STRINGS,
            Lang::Zh => &zh::STRINGS,
        }
    }
}

impl From<crate::settings::file::Lang> for Lang {
    fn from(l: crate::settings::file::Lang) -> Self {
        match l {
            crate::settings::file::Lang::En => Lang::En,
            crate::settings::file::Lang::Zh => Lang::Zh,
        }
    }
}

impl From<Lang> for crate::settings::file::Lang {
    fn from(l: Lang) -> Self {
        match l {
            Lang::En => crate::settings::file::Lang::En,
            Lang::Zh => crate::settings::file::Lang::Zh,
        }
    }
}

/// The wizard's strings in one language.
#[derive(Debug)]
pub struct Strings {
    /// Next to the spinner while detect runs.
    pub detecting: &'static str,
    /// Above detect's report.
    pub found_heading: &'static str,
    /// The profile question.
    pub profile_prompt: &'static str,
    /// One line per profile, in the order full, pytorch, tensorflow, cuda-dev, cpu, jax.
    pub profile_lines: [&'static str; 6],
    /// Said before the profile question when an NVIDIA GPU is here.
    pub preselect_gpu: &'static str,
    /// Said before the profile question when none is.
    pub preselect_no_gpu: &'static str,
    /// Said before the profile question when an NVIDIA GPU is here but the profile it is offered
    /// is not `full` (no full stack fits it): the profile.
    pub preselect_other: fn(&str) -> String,

    /// Heading of what changes on disk.
    pub changes_heading: &'static str,
    /// Row label: the CUDA toolkit.
    pub label_toolkit: &'static str,
    /// Row label: the venv.
    pub label_venv: &'static str,
    /// Row label: env scripts.
    pub label_env: &'static str,
    /// Row label: rc files.
    pub label_rc: &'static str,
    /// Row label: the download cache.
    pub label_cache: &'static str,
    /// Row label: the driver.
    pub label_driver: &'static str,
    /// A toolkit installed into a new folder.
    pub toolkit_new: fn(&str) -> String,
    /// An installed toolkit that is kept.
    pub toolkit_kept: fn(&str) -> String,
    /// A venv to create.
    pub venv_new: fn(&str) -> String,
    /// A venv that exists and is reused.
    pub venv_reused: fn(&str) -> String,
    /// The venv step cannot run (the reason follows).
    pub venv_problem: fn(&str) -> String,
    /// The env scripts (the path of the POSIX one).
    pub env_scripts: fn(&str) -> String,
    /// The env scripts when they put only cudaup on PATH (no toolkit).
    pub env_scripts_cudaup: fn(&str) -> String,
    /// Row label: cudaup's own copy.
    pub label_self: &'static str,
    /// cudaup copies itself to this path.
    pub self_new: fn(&str) -> String,
    /// cudaup replaces its older copy at this path.
    pub self_replace: fn(&str) -> String,
    /// The copy at this path is this program already.
    pub self_same: fn(&str) -> String,
    /// `cargo install` manages cudaup at this path: no copy.
    pub self_cargo: fn(&str) -> String,
    /// cudaup cannot copy itself (why).
    pub self_refused: fn(&str) -> String,
    /// An rc file that gets a line (file, line).
    pub rc_add: fn(&str, &str) -> String,
    /// An rc file that already has it.
    pub rc_already: fn(&str) -> String,
    /// No rc file is changed.
    pub rc_none: &'static str,
    /// Windows: the label of the user-environment rows (`HKCU\Environment`).
    pub label_user_env: &'static str,
    /// Windows: a folder put at the front of the user's `Path`.
    pub user_env_path: fn(&str) -> String,
    /// Windows: a user variable set (name, value).
    pub user_env_var: fn(&str, &str) -> String,
    /// Windows: uninstall puts each value back.
    pub user_env_undo: &'static str,
    /// The download cache folder.
    pub cache: fn(&str) -> String,
    /// The driver stays as it is.
    pub driver_unchanged: &'static str,
    /// The driver must change to this version.
    pub driver_change: fn(&str) -> String,
    /// The driver is installed on Windows by the user (WSL2).
    pub driver_manual: fn(&str) -> String,
    /// Below the list of changes.
    pub changes_footer: &'static str,

    /// The Confirm / Customise / Cancel question.
    pub action_prompt: &'static str,
    /// Confirm.
    pub action_install: &'static str,
    /// Confirm, under --dry-run.
    pub action_dry_run: &'static str,
    /// Customise.
    pub action_customise: &'static str,
    /// Cancel.
    pub action_cancel: &'static str,
    /// When the plan found no stack.
    pub unsupported_note: &'static str,

    /// Heading of the customise step.
    pub customise_heading: &'static str,
    /// Pin questions.
    pub pin_cuda: &'static str,
    /// Pin questions.
    pub pin_torch: &'static str,
    /// Pin questions.
    pub pin_tensorflow: &'static str,
    /// The JAX pin question.
    pub pin_jax: &'static str,
    /// Pin questions.
    pub pin_python: &'static str,
    /// A pin that is not a version.
    pub bad_version: fn(&str) -> String,
    /// Where the toolkit goes.
    pub prefix_prompt: &'static str,
    /// Where the venv goes.
    pub venv_prompt: &'static str,
    /// A path that is not absolute.
    pub bad_path: &'static str,
    /// Where the toolkit comes from.
    pub source_prompt: &'static str,
    /// Auto: NVIDIA's server where it answers, else NVIDIA's wheels from PyPI.
    pub source_auto: &'static str,
    /// NVIDIA's server.
    pub source_nvidia: &'static str,
    /// A mirror of NVIDIA's layout.
    pub source_mirror: &'static str,
    /// NVIDIA's wheels from an index.
    pub source_wheels: &'static str,
    /// Which of the toolkit's component sets.
    pub components_prompt: &'static str,
    /// One set in that list: (name, the catalog's summary, download size).
    pub set_label: fn(&str, &str, &str) -> String,
    /// The mirror's URL or folder.
    pub mirror_prompt: &'static str,
    /// The index for NVIDIA's CUDA wheels.
    pub wheels_index_prompt: &'static str,
    /// The PyPI index for the framework.
    pub pypi_prompt: &'static str,
    /// pypi.org itself.
    pub pypi_default: &'static str,
    /// A known mirror in a list (who runs it, its URL).
    pub mirror_item: fn(&crate::install::python::route::KnownMirror) -> String,
    /// PyTorch's index.
    pub torch_prompt: &'static str,
    /// download.pytorch.org itself.
    pub torch_default: &'static str,
    /// PyTorch from PyPI (or the PyPI mirror chosen) only.
    pub torch_pypi_only: &'static str,
    /// Another index or mirror, typed in.
    pub other_location: &'static str,
    /// The URL or folder of that other one.
    pub location_prompt: &'static str,
    /// A URL or folder that cannot be used.
    pub bad_location: fn(&str) -> String,
    /// A plain-http source: use it anyway?
    pub http_prompt: fn(&str) -> String,
    /// Plain-http sources were dropped.
    pub http_dropped: &'static str,
    /// Hook this shell family (its name, the files)?
    pub shell_prompt: fn(&str, &str) -> String,
    /// Windows: set PATH and CUDA_PATH in the user's environment?
    pub user_env_prompt: &'static str,
    /// Run verify afterwards?
    pub verify_prompt: &'static str,

    /// After --save wrote the answers (the file).
    pub saved: fn(&str) -> String,
    /// Before install.
    pub installing: &'static str,
    /// --dry-run ends here.
    pub dry_run_done: &'static str,
    /// Before verify.
    pub verifying: &'static str,
    /// Verify was not chosen.
    pub verify_skipped: &'static str,
    /// Verify waits for the reboot a new driver needs.
    pub verify_after_reboot: &'static str,
    /// Verify found problems.
    pub verify_failed: &'static str,
    /// The container step's heading.
    pub containers_heading: &'static str,
    /// Every engine already reaches the GPUs (the engines).
    pub containers_set_up: fn(&str) -> String,
    /// Setup would refuse (its reason, in English).
    pub containers_refused: fn(&str) -> String,
    /// Setting up needs root (the engines, the files).
    pub containers_need_root: fn(&str, &str) -> String,
    /// Set up these engines now (the engines)?
    pub containers_prompt: fn(&str) -> String,
    /// Not set up now (unattended, or declined).
    pub containers_later: &'static str,
    /// Before the commands the container setup leaves to the user (a daemon restart).
    pub containers_then_run: &'static str,
    /// The summary heading.
    pub summary_heading: &'static str,
    /// Load the env in this shell (what it puts on PATH, the line); new shells do it themselves.
    pub step_env_hooked: fn(&str, &str) -> String,
    /// Load the env (what it puts on PATH, the line); no rc file was changed.
    pub step_env_manual: fn(&str, &str) -> String,
    /// What the env puts on PATH: the toolkit and cudaup.
    pub env_what_both: &'static str,
    /// … the toolkit only.
    pub env_what_cuda: &'static str,
    /// … cudaup only.
    pub env_what_cudaup: &'static str,
    /// Run cudaup by its full path (the path), when no rc file loads the env.
    pub step_cudaup_path: fn(&str) -> String,
    /// Activate the venv (the command).
    pub step_venv: fn(&str) -> String,
    /// Install the driver (its version) by hand, then reboot: install could not run it.
    pub step_driver: fn(&str) -> String,
    /// Reboot to load the driver install just installed (its version).
    pub step_reboot: fn(&str) -> String,
    /// The driver is installed on Windows (its minimum version).
    pub step_driver_manual: fn(&str) -> String,
    /// Last line of the summary.
    pub step_later: &'static str,
    /// Cancel, EOF or Ctrl-C.
    pub cancelled: &'static str,
    /// The wizard was started without a terminal (usage error, exit code 2).
    pub no_terminal: &'static str,
    /// --config without --yes and without a terminal.
    pub need_yes: &'static str,
    /// Shown in the prompt's report after a confirm: yes.
    pub yes: &'static str,
    /// Shown in the prompt's report after a confirm: no.
    pub no: &'static str,
    /// Before a validation message.
    pub error_prefix: &'static str,
    /// Between a prompt and its answer.
    pub colon: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(vars: &[(&str, &str)]) -> Lang {
        Lang::from_env(&Process::with_vars(vars.iter().copied(), "/"))
    }

    #[test]
    fn the_locale_decides() {
        assert_eq!(lang(&[]), Lang::En);
        assert_eq!(lang(&[("LANG", "zh_CN.UTF-8")]), Lang::Zh);
        assert_eq!(lang(&[("LANG", "zh_TW")]), Lang::Zh);
        assert_eq!(lang(&[("LANG", "C.UTF-8")]), Lang::En);
        // LC_ALL overrides LANG, both ways.
        assert_eq!(
            lang(&[("LANG", "zh_CN.UTF-8"), ("LC_ALL", "en_US.UTF-8")]),
            Lang::En
        );
        assert_eq!(
            lang(&[("LANG", "en_US"), ("LC_ALL", "zh_CN.UTF-8")]),
            Lang::Zh
        );
        // An empty LC_ALL is unset.
        assert_eq!(lang(&[("LANG", "zh_CN.UTF-8"), ("LC_ALL", "")]), Lang::Zh);
    }

    #[test]
    fn both_languages_fill_every_string() {
        for l in [Lang::En, Lang::Zh] {
            let s = l.strings();
            for text in [
                s.detecting,
                s.profile_prompt,
                s.action_install,
                s.cancelled,
                s.no_terminal,
                s.need_yes,
            ] {
                assert!(!text.trim().is_empty());
            }
            assert!(s.profile_lines.iter().all(|l| !l.is_empty()));
            assert!((s.saved)("x.toml").contains("x.toml"));
            assert!((s.rc_add)("~/.profile", ". env").contains("~/.profile"));
        }
        // The unattended hint names the exact commands in both languages.
        for l in [Lang::En, Lang::Zh] {
            let hint = l.strings().no_terminal;
            assert!(hint.contains("cudaup install --config cudaup.toml --yes"));
            assert!(hint.contains("cudaup wizard --save cudaup.toml"));
        }
    }
}
