//! Removing everything cudaup installed — toolkit files, the venvs it created, env scripts, rc
//! lines, and with `--purge` its cache — and nothing else. Files a user added inside a
//! cudaup prefix, and venvs cudaup did not create, are left in place and named.

use std::path::{Path, PathBuf};

use crate::install::transaction::remove_tree;
use crate::receipts::{Active, Receipts, ShellReceipt};

/// One thing uninstall does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Remove the files a toolkit receipt lists, then the directories left empty.
    Toolkit {
        /// The prefix.
        prefix: PathBuf,
        /// Its receipt in the home.
        receipt: PathBuf,
    },
    /// Remove a venv cudaup created.
    Venv {
        /// The venv.
        dir: PathBuf,
        /// Its receipt.
        receipt: PathBuf,
    },
    /// Forget a venv cudaup did not create (it stays as it is).
    ForgetVenv {
        /// The venv.
        dir: PathBuf,
        /// Its receipt.
        receipt: PathBuf,
    },
    /// Take cudaup's lines out of an rc file (byte for byte what was inserted).
    RcFile {
        /// The file.
        file: PathBuf,
    },
    /// Remove a file of cudaup's own (env scripts, state, logs).
    File {
        /// The file or directory.
        path: PathBuf,
    },
    /// Remove the download cache (`--purge`).
    Cache {
        /// The cache directory.
        dir: PathBuf,
    },
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Toolkit { prefix, .. } => write!(f, "remove the toolkit in {}", prefix.display()),
            Step::Venv { dir, .. } => write!(f, "remove the venv {}", dir.display()),
            Step::ForgetVenv { dir, .. } => write!(
                f,
                "leave {} in place (cudaup did not create it) and forget it",
                dir.display()
            ),
            Step::RcFile { file } => write!(f, "take cudaup's lines out of {}", file.display()),
            Step::File { path } => write!(f, "remove {}", path.display()),
            Step::Cache { dir } => write!(f, "remove the download cache {}", dir.display()),
        }
    }
}

/// What uninstall would do for the home at `home`.
pub fn plan(home: &Path, purge: bool) -> Vec<Step> {
    let receipts = Receipts::load(home);
    let mut steps = Vec::new();
    for (path, r) in &receipts.toolkits {
        steps.push(Step::Toolkit {
            prefix: r.prefix.clone(),
            receipt: path.clone(),
        });
    }
    for (path, v) in &receipts.venvs {
        steps.push(if v.created {
            Step::Venv {
                dir: v.venv.clone(),
                receipt: path.clone(),
            }
        } else {
            Step::ForgetVenv {
                dir: v.venv.clone(),
                receipt: path.clone(),
            }
        });
    }
    for hook in &receipts.shell.hooks {
        steps.push(Step::RcFile {
            file: hook.file.clone(),
        });
    }
    let own = [
        "env",
        "env.fish",
        "env.ps1",
        "active.json",
        "logs",
        "venvs",
        "toolkits",
    ];
    for name in own {
        let p = home.join(name);
        if p.symlink_metadata().is_ok() && !(matches!(name, "venvs" | "toolkits") && p.is_dir()) {
            steps.push(Step::File { path: p });
        }
    }
    if purge && home.join("cache").exists() {
        steps.push(Step::Cache {
            dir: home.join("cache"),
        });
    }
    steps
}

/// What is left after uninstall, that the user should know about.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Paths left in place, with why.
    pub kept: Vec<(PathBuf, String)>,
}

/// Carries out `steps`. Each toolkit and venv receipt is deleted only once its files are gone,
/// so an interrupted uninstall can be run again.
pub fn run(home: &Path, steps: &[Step]) -> std::io::Result<Outcome> {
    let mut out = Outcome::default();
    let mut shell = ShellReceipt::read(home);
    for step in steps {
        match step {
            Step::Toolkit { prefix, receipt } => {
                remove_toolkit(prefix, &mut out)?;
                fs_err::remove_file(receipt)?;
            }
            Step::Venv { dir, receipt } => {
                remove_tree(dir)?;
                fs_err::remove_file(receipt)?;
            }
            Step::ForgetVenv { dir, receipt } => {
                out.kept
                    .push((dir.clone(), "a venv cudaup did not create".into()));
                fs_err::remove_file(receipt)?;
            }
            Step::RcFile { file } => {
                if let Some(i) = shell.hooks.iter().position(|h| &h.file == file) {
                    crate::shell::revert(&shell.hooks[i])
                        .map_err(|e| std::io::Error::other(e.to_string()))?;
                    shell.hooks.remove(i);
                    shell.write(home)?;
                }
            }
            Step::File { path } => {
                if path.is_dir() {
                    remove_tree(path)?;
                } else if path.symlink_metadata().is_ok() {
                    fs_err::remove_file(path)?;
                }
            }
            Step::Cache { dir } => remove_tree(dir)?,
        }
    }
    if shell.hooks.is_empty() {
        let _ = fs_err::remove_file(ShellReceipt::path(home));
    }
    // Directories cudaup made, once empty.
    for d in ["receipts", "venvs", "toolkits"] {
        let _ = fs_err::remove_dir(home.join(d));
    }
    let _ = fs_err::remove_file(Active::path(home));
    let _ = fs_err::remove_dir(home);
    Ok(out)
}

/// Removes the receipt's files and symlinks, then every directory left empty; a prefix a user
/// added files to stays, with those files.
fn remove_toolkit(prefix: &Path, out: &mut Outcome) -> std::io::Result<()> {
    let Some(receipt) = crate::install::Receipt::read(prefix).ok().flatten() else {
        if prefix.exists() {
            out.kept.push((
                prefix.to_owned(),
                "its receipt is gone, so cudaup cannot tell its files from yours".into(),
            ));
        }
        return Ok(());
    };
    for f in &receipt.files {
        let p = prefix.join(&f.path);
        if p.symlink_metadata().is_ok() && !p.is_dir() || p.is_symlink() {
            fs_err::remove_file(&p)?;
        }
    }
    fs_err::remove_file(prefix.join(crate::install::receipt::FILE_NAME))?;
    remove_empty_dirs(prefix)?;
    if prefix.exists() {
        out.kept.push((
            prefix.to_owned(),
            "it holds files cudaup did not install".into(),
        ));
    } else {
        // The lock file beside the prefix.
        if let (Some(parent), Some(name)) = (prefix.parent(), prefix.file_name()) {
            let _ = fs_err::remove_file(parent.join(format!(".{}.lock", name.to_string_lossy())));
        }
    }
    Ok(())
}

fn remove_empty_dirs(dir: &Path) -> std::io::Result<()> {
    if !dir.is_dir() || dir.is_symlink() {
        return Ok(());
    }
    for entry in fs_err::read_dir(dir)? {
        let p = entry?.path();
        if p.is_dir() && !p.is_symlink() {
            remove_empty_dirs(&p)?;
        }
    }
    let _ = fs_err::remove_dir(dir);
    Ok(())
}
