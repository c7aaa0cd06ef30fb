//! Everything cudaup has put on this machine, read back from `$CUDAUP_HOME`: toolkit receipts,
//! venv receipts, the rc files it changed, and the active stack the env scripts describe.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::install::python::VenvReceipt;
use crate::install::receipt_file;
use crate::install::Receipt;
use crate::shell::{Applied, EnvSpec};

/// Records `receipt` in `$CUDAUP_HOME/receipts/`, so doctor and uninstall find every prefix
/// cudaup installed, wherever it is; the journal of the install that made it, if any, is
/// closed (an install of something else into the same prefix keeps its journal).
pub fn register(home: &Path, receipt: &Receipt) -> std::io::Result<PathBuf> {
    let path = register_only(home, receipt)?;
    let journal = receipt_file::pending_path(home, &receipt.prefix);
    let same = fs_err::read(&journal)
        .ok()
        .and_then(|b| serde_json::from_slice::<Receipt>(&b).ok())
        .is_none_or(|j| j.same_install(receipt));
    if same {
        receipt_file::remove_pending(home, &receipt.prefix)?;
    }
    Ok(path)
}

fn register_only(home: &Path, receipt: &Receipt) -> std::io::Result<PathBuf> {
    receipt_file::register(home, receipt_file::TOOLKIT, &receipt.prefix, receipt)
}

/// The stack the env scripts describe, kept in `$CUDAUP_HOME/active.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Active {
    /// The CUDA toolkit (`CUDA_HOME`), if any.
    pub toolkit: Option<PathBuf>,
    /// The directory of cudaup's installed copy (`$CUDAUP_HOME/bin`), put on `PATH` so that
    /// `cudaup` works in new shells, with or without a toolkit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudaup_bin: Option<PathBuf>,
}

impl Active {
    /// Where it is kept.
    pub fn path(home: &Path) -> PathBuf {
        crate::install::home::Home::at(home).active()
    }

    /// Reads it (absent: nothing active).
    pub fn read(home: &Path) -> Active {
        fs_err::read(Self::path(home))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// What it puts in the environment.
    pub fn spec(&self) -> EnvSpec {
        let mut spec = EnvSpec::default();
        if let Some(t) = &self.toolkit {
            spec.path.push(crate::model::layout::Prefix::at(t).bin());
            if cfg!(windows) {
                // CUDA 13's Windows toolkit keeps its DLLs in bin\x64, found through PATH.
                spec.path.push(t.join("bin").join("x64"));
            } else {
                spec.ld_library_path.push(t.join("lib64"));
            }
            spec.vars
                .push(("CUDA_HOME".into(), t.display().to_string()));
            spec.vars
                .push(("CUDA_PATH".into(), t.display().to_string()));
        }
        spec.path.extend(self.cudaup_bin.clone());
        spec
    }
}

/// The rc files cudaup changed, in `$CUDAUP_HOME/receipts/shell.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellReceipt {
    /// One entry per changed file, with the exact bytes inserted.
    pub hooks: Vec<Applied>,
}

impl ShellReceipt {
    /// Where it is kept.
    pub fn path(home: &Path) -> PathBuf {
        crate::install::home::Home::at(home).shell_receipt()
    }

    /// Reads it (absent: nothing changed).
    pub fn read(home: &Path) -> ShellReceipt {
        fs_err::read(Self::path(home))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Writes it atomically.
    pub fn write(&self, home: &Path) -> std::io::Result<()> {
        let path = Self::path(home);
        fs_err::create_dir_all(path.parent().expect("has a parent"))?;
        crate::install::receipt_file::write_whole(
            &path,
            &serde_json::to_vec_pretty(self).expect("serialises"),
        )
    }
}

/// All receipts under a home.
#[derive(Debug, Clone, Default)]
pub struct Receipts {
    /// Toolkit installs (`$CUDAUP_HOME/receipts/toolkit-<prefix>-<hash>.json`, or an older
    /// cudaup's `<prefix>.json`), with the file they came from.
    pub toolkits: Vec<(PathBuf, Receipt)>,
    /// Framework venvs (`venv-*.json`).
    pub venvs: Vec<(PathBuf, VenvReceipt)>,
    /// Changed rc files.
    pub shell: ShellReceipt,
    /// The active stack.
    pub active: Active,
    /// Receipt files that could not be read (named, so doctor can report them).
    pub unreadable: Vec<(PathBuf, String)>,
    /// Toolkit installs begun and not known to have finished (the journal in
    /// `receipts/pending/`, see [`crate::install::receipt_file::pending_path`]), with their
    /// journal file; `files` is empty, the rest is what the install set out to do.
    pub pending: Vec<(PathBuf, Receipt)>,
}

impl Receipts {
    /// Reads every receipt under `home`.
    pub fn load(home: &Path) -> Receipts {
        let mut out = Receipts {
            shell: ShellReceipt::read(home),
            active: Active::read(home),
            ..Receipts::default()
        };
        if let Ok(rd) = fs_err::read_dir(crate::install::home::Home::at(home).pending()) {
            let mut journals: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension().is_some_and(|e| e == "json")
                        && !p
                            .file_name()
                            .unwrap_or_default()
                            .to_string_lossy()
                            .starts_with('.')
                })
                .collect();
            journals.sort();
            for path in journals {
                // A journal that cannot be read is one a crash cut short: the install it
                // described never got past writing it, so nothing else of it exists.
                if let Some(r) = fs_err::read(&path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Receipt>(&b).ok())
                {
                    out.pending.push((path, r));
                }
            }
        }
        let Ok(dir) = fs_err::read_dir(crate::install::home::Home::at(home).receipts()) else {
            return out;
        };
        let mut files: Vec<PathBuf> = dir
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for path in files {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned();
            // Receipts with readers of their own (the rc hooks, cudaup's copy, its uv).
            if name == "shell.json"
                || name == crate::install::self_copy::RECEIPT
                || name == crate::install::uv::RECEIPT
                || name.starts_with('.')
            {
                continue;
            }
            let bytes = match fs_err::read(&path) {
                Ok(b) => b,
                Err(e) => {
                    out.unreadable.push((path, e.to_string()));
                    continue;
                }
            };
            if name.starts_with(crate::install::receipt_file::VENV) {
                match serde_json::from_slice::<VenvReceipt>(&bytes) {
                    Ok(r) => out.venvs.push((path, r)),
                    Err(e) => out.unreadable.push((path, e.to_string())),
                }
            } else {
                match serde_json::from_slice::<Receipt>(&bytes) {
                    Ok(r) => out.toolkits.push((path, r)),
                    Err(e) => out.unreadable.push((path, e.to_string())),
                }
            }
        }
        out
    }
}
