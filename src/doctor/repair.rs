//! `cudaup repair`: compares what the receipts say was installed with what is there, and puts
//! back only what is broken — toolkit files from the cache first (else fetched again), the
//! planned framework over a damaged or CPU-only one, the env scripts and the rc-file lines. It
//! converges: a second repair finds nothing to do.

use std::path::{Path, PathBuf};

use crate::install::python::VenvReceipt;
use crate::install::receipts::{Active, Receipts};
use crate::install::Receipt;
use crate::shell::{self, Shell};

/// One repair.
#[derive(Debug, Clone)]
pub enum Step {
    /// Rebuild a toolkit prefix from its receipt's components.
    Toolkit {
        /// The receipt.
        receipt: Receipt,
        /// What is wrong.
        why: String,
    },
    /// Make a venv again, or install its packages again over what is there.
    Venv {
        /// The receipt.
        receipt: VenvReceipt,
        /// Whether the venv itself is gone.
        recreate: bool,
        /// What is wrong.
        why: String,
    },
    /// Write the env scripts again.
    EnvScripts {
        /// Which are missing or stale.
        why: String,
    },
    /// Put cudaup's line back into an rc file.
    RcHook {
        /// The file.
        file: PathBuf,
        /// The line.
        line: String,
    },
}

impl Step {
    /// The id `repair --fix` (and doctor) use for this kind of repair.
    pub fn id(&self) -> &'static str {
        match self {
            Step::Toolkit { .. } => "toolkit-files",
            Step::Venv { .. } => "venv-packages",
            Step::EnvScripts { .. } => "env-scripts",
            Step::RcHook { .. } => "rc-hook",
        }
    }
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Toolkit { receipt, why } => write!(
                f,
                "[{}] rebuild CUDA {} in {}: {why}",
                self.id(),
                receipt.cuda,
                receipt.prefix.display()
            ),
            Step::Venv {
                receipt,
                recreate,
                why,
            } => {
                let verb = if *recreate {
                    "recreate"
                } else {
                    "reinstall the packages of"
                };
                write!(
                    f,
                    "[{}] {verb} {}: {why}",
                    self.id(),
                    receipt.venv.display()
                )
            }
            Step::EnvScripts { why } => {
                write!(f, "[{}] write the env scripts again: {why}", self.id())
            }
            Step::RcHook { file, line } => write!(
                f,
                "[{}] put `{line}` back into {}",
                self.id(),
                file.display()
            ),
        }
    }
}

/// What differs between a toolkit's receipt and its prefix (empty: intact).
pub fn toolkit_problems(receipt: &Receipt) -> Vec<String> {
    let mut missing = 0;
    let mut changed = Vec::new();
    for f in &receipt.files {
        let p = receipt.prefix.join(&f.path);
        match &f.link {
            Some(target) => match fs_err::read_link(&p) {
                Ok(t) if &t == target => {}
                Ok(_) => changed.push(f.path.display().to_string()),
                Err(_) => missing += 1,
            },
            None => match p.symlink_metadata() {
                Err(_) => missing += 1,
                Ok(m) if Some(m.len()) != f.size => changed.push(f.path.display().to_string()),
                Ok(_) => {
                    if let Some(want) = &f.sha256 {
                        if crate::fetch::sha256_file(&p).map_or(true, |got| &got != want) {
                            changed.push(f.path.display().to_string());
                        }
                    }
                }
            },
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
    for (_, r) in &receipts.toolkits {
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
        if let Some(why) = venv_ok(v) {
            steps.push(Step::Venv {
                receipt: v.clone(),
                recreate: false,
                why,
            });
        }
    }
    if receipts.active != Active::default() || home.join("env").exists() {
        let spec = receipts.active.spec();
        let stale: Vec<&str> = Shell::ALL
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
