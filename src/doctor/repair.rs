//! `cudaup repair`: compares what the receipts say was installed with what is there, and puts
//! back only what is broken — toolkit files from the cache first (else fetched again), the
//! planned framework over a damaged or CPU-only one, the env scripts and the rc-file lines. It
//! converges: a second repair finds nothing to do.

use std::path::Path;

use crate::install::python::VenvReceipt;
use crate::install::receipts::{Active, Receipts};
use crate::install::self_copy::{self, Health};
use crate::install::Receipt;
use crate::shell;
use crate::world::process::Process;

pub use crate::install::repair::Step;

/// The kinds of repair, as `repair --fix` names them (a closed vocabulary: the parser takes the
/// repair's own id or the id of a doctor finding it repairs).
pub const REPAIR_IDS: [&str; 6] = [
    "toolkit-files",
    "venv-packages",
    "env-scripts",
    "rc-hook",
    "self-copy",
    "litter",
];

/// `repair --fix ID`: the repair `id` names, itself or through a doctor finding it repairs.
pub fn repair_id(id: &str) -> Result<&'static str, String> {
    let repair = match id {
        "toolkit-prefix-missing"
        | "toolkit-files-missing"
        | "toolkit-files-changed"
        | "toolkit-install-interrupted" => "toolkit-files",
        "venv-missing"
        | "venv-python-missing"
        | "venv-files-missing"
        | "torch-cpu-only"
        | "jax-cpu-only" => "venv-packages",
        "env-script-missing" | "active-toolkit-missing" => "env-scripts",
        "shell-hook-missing" => "rc-hook",
        id if id.starts_with("self-copy-") => "self-copy",
        other => other,
    };
    REPAIR_IDS
        .iter()
        .copied()
        .find(|r| *r == repair)
        .ok_or_else(|| {
            format!(
                "use one of {} (or the id of a doctor finding they repair)",
                REPAIR_IDS.join(", ")
            )
        })
}

/// The distributions a venv's requirements name (`torch`, `jax`): what `repair` reinstalls, so
/// what the RECORD check looks at.
pub fn planned_names(v: &VenvReceipt) -> Vec<String> {
    crate::install::guard::pins(&v.packages.requirements)
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// What differs between a toolkit's receipt and its prefix (empty: intact).
pub fn toolkit_problems(receipt: &Receipt) -> Vec<String> {
    use super::installed::{inspect_all, Hash, Problem};
    let mut missing = 0;
    let mut changed = Vec::new();
    for (path, problem) in inspect_all(&receipt.prefix, &receipt.files, Hash::All) {
        match problem {
            Problem::Missing => missing += 1,
            Problem::Changed(_) => changed.push(path.display().to_string()),
        }
    }
    let mut out = Vec::new();
    if missing > 0 {
        out.push(format!("{missing} file(s) missing"));
    }
    if !changed.is_empty() {
        let shown: Vec<&str> = changed.iter().take(3).map(String::as_str).collect();
        out.push(format!(
            "{} file(s) changed ({}{})",
            changed.len(),
            shown.join(", "),
            if changed.len() > 3 { ", …" } else { "" }
        ));
    }
    out
}

/// Finds everything that needs repair. `venv_ok` runs the framework check for a venv (the
/// caller runs Python); it returns why the venv is broken, or `None`.
pub fn plan(home: &Path, venv_ok: &dyn Fn(&VenvReceipt) -> Option<String>) -> Vec<Step> {
    let receipts = Receipts::load(home);
    let mut steps = Vec::new();
    let litter = crate::install::litter::find(home, &receipts);
    if !litter.is_empty() {
        steps.push(Step::Litter {
            why: format!(
                "{} leftover(s) of interrupted runs ({})",
                litter.len(),
                indicatif::HumanBytes(litter.iter().map(|l| l.bytes).sum())
            ),
        });
    }
    // Installs killed before they finished: the journal says what was asked for.
    let mut handled: Vec<&Path> = Vec::new();
    for (_, journal) in &receipts.pending {
        handled.push(&journal.prefix);
        match Receipt::read(&journal.prefix).ok().flatten() {
            Some(own) if own.same_install(journal) => {
                let problems = toolkit_problems(&own);
                if problems.is_empty() {
                    steps.push(Step::Register { receipt: own });
                } else {
                    steps.push(Step::Toolkit {
                        receipt: own,
                        why: problems.join("; "),
                    });
                }
            }
            _ => steps.push(Step::Toolkit {
                receipt: journal.clone(),
                why: "its install was interrupted before the toolkit was in place".into(),
            }),
        }
    }
    for (_, r) in &receipts.toolkits {
        if handled.contains(&r.prefix.as_path()) {
            continue;
        }
        let problems = if r.prefix.join(crate::install::receipt::FILE_NAME).is_file() {
            toolkit_problems(r)
        } else {
            vec!["the prefix or its receipt is gone".to_owned()]
        };
        if !problems.is_empty() {
            steps.push(Step::Toolkit {
                receipt: r.clone(),
                why: problems.join("; "),
            });
        }
    }
    if let Some(intent) = crate::install::env::Intent::read(home) {
        if intent.toolkit_exists(home) {
            steps.push(Step::Env { intent });
        }
    }
    for (_, v) in &receipts.venvs {
        let venv = crate::install::python::Venv {
            dir: v.venv.clone(),
        };
        if !venv.python().exists() {
            if v.created {
                steps.push(Step::Venv {
                    receipt: v.clone(),
                    recreate: true,
                    why: "the venv is gone".into(),
                });
            }
            continue;
        }
        if v.packages.requirements.is_empty() {
            continue;
        }
        // The framework's check says best what is wrong; the files against their RECORD
        // (doctor's `venv-files-missing`) catch what still imports.
        let why = venv_ok(v).or_else(|| {
            let files = crate::install::python::record::problems(&v.venv, &planned_names(v));
            (!files.is_empty()).then(|| files.join("; "))
        });
        if let Some(why) = why {
            steps.push(Step::Venv {
                receipt: v.clone(),
                recreate: false,
                why,
            });
        }
    }
    if receipts.active != Active::default()
        || crate::install::home::Home::at(home)
            .env_script(crate::shell::Shell::Posix)
            .exists()
    {
        let spec = receipts.active.spec();
        let stale: Vec<&str> = crate::install::env::scripts_here()
            .iter()
            .filter(|s| {
                fs_err::read_to_string(home.join(s.script_file_name())).ok()
                    != Some(shell::script(**s, &spec))
            })
            .map(|s| s.script_file_name())
            .collect();
        if !stale.is_empty() {
            steps.push(Step::EnvScripts {
                why: format!("{} missing or changed", stale.join(", ")),
            });
        }
    }
    for hook in &receipts.shell.hooks {
        let content = fs_err::read(&hook.file).unwrap_or_default();
        let line = hook
            .inserted
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or_default()
            .to_owned();
        if !line.is_empty() && !String::from_utf8_lossy(&content).contains(&line) {
            steps.push(Step::RcHook {
                file: hook.file.clone(),
                line,
            });
        }
    }
    steps
}

/// The repair of cudaup's own copy, when [`self_copy::health`] finds one to make: a copy that is
/// gone, another build than the running one, never made, or in the way of cargo's. A file that is
/// not cudaup's any more is the user's, and no repair touches it.
pub fn self_copy(process: &Process, home: &Path) -> Option<Step> {
    let receipts = Receipts::load(home);
    let stack_here = !receipts.toolkits.is_empty()
        || !receipts.venvs.is_empty()
        || !receipts.shell.hooks.is_empty();
    let why = match self_copy::health(process, home, stack_here).ok()? {
        Health::Missing { path, .. } => {
            format!("copy this cudaup to {} (it is gone)", path.display())
        }
        Health::Stale { path, .. } => format!(
            "replace {} with this cudaup (it is another build)",
            path.display()
        ),
        Health::NotInstalled { path } => format!(
            "copy this cudaup to {}, where the env scripts put it on PATH",
            path.display()
        ),
        Health::ShadowsCargo { path, cargo } => format!(
            "remove {}, which shadows {} (cargo's)",
            path.display(),
            cargo.display()
        ),
        Health::Fine | Health::Changed { .. } => return None,
    };
    Some(Step::SelfCopy { why })
}

#[cfg(test)]
mod tests;
