//! The environment step of an install (env scripts, rc hooks) and `cudaup env`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ExitCode, Result};
use crate::process::Process;
use crate::shell::{self, Applied, EnvSpec, Shell};

/// The stack the env scripts describe, kept in `$CUDAUP_HOME/active.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Active {
    /// The CUDA toolkit (`CUDA_HOME`), if any.
    pub toolkit: Option<PathBuf>,
}

impl Active {
    fn path(home: &Path) -> PathBuf {
        home.join("active.json")
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
            spec.path.push(t.join("bin"));
            spec.ld_library_path.push(t.join("lib64"));
            spec.vars
                .push(("CUDA_HOME".into(), t.display().to_string()));
            spec.vars
                .push(("CUDA_PATH".into(), t.display().to_string()));
        }
        spec
    }
}

/// The record of rc files cudaup changed, in `$CUDAUP_HOME/receipts/shell.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShellReceipt {
    /// One entry per changed file, with the exact bytes inserted.
    pub hooks: Vec<Applied>,
}

impl ShellReceipt {
    fn path(home: &Path) -> PathBuf {
        home.join("receipts").join("shell.json")
    }

    /// Reads it (absent: nothing changed).
    pub fn read(home: &Path) -> ShellReceipt {
        fs_err::read(Self::path(home))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn write(&self, home: &Path) -> std::io::Result<()> {
        let path = Self::path(home);
        fs_err::create_dir_all(path.parent().expect("has a parent"))?;
        let tmp = path.with_extension("json.tmp");
        fs_err::write(&tmp, serde_json::to_vec_pretty(self).expect("serialises"))?;
        fs_err::rename(&tmp, &path)
    }
}

/// The shells set up on this machine: POSIX always; fish and PowerShell when they are here.
pub fn shells_here(process: &Process) -> Vec<Shell> {
    let path = process.path_entries();
    let mut out = vec![Shell::Posix];
    let fish_config = process
        .path_var("XDG_CONFIG_HOME")
        .or_else(|| process.home().map(|h| h.join(".config")))
        .map(|c| c.join("fish"));
    if crate::runner::which("fish", &path).is_some() || fish_config.is_some_and(|d| d.is_dir()) {
        out.push(Shell::Fish);
    }
    if cfg!(windows) || crate::runner::which("pwsh", &path).is_some() {
        out.push(Shell::PowerShell);
    }
    out
}

/// Makes `toolkit` the active one and rewrites the env scripts (always, even when the rc files
/// are already hooked: rustup#2578).
pub fn write_scripts(home: &Path, toolkit: Option<&Path>) -> std::io::Result<EnvSpec> {
    let active = Active {
        toolkit: toolkit.map(Path::to_path_buf),
    };
    fs_err::create_dir_all(home)?;
    fs_err::write(
        Active::path(home),
        serde_json::to_vec_pretty(&active).expect("serialises"),
    )?;
    let spec = active.spec();
    for shell in Shell::ALL {
        let file = home.join(shell.script_file_name());
        let tmp = file.with_extension("tmp-cudaup");
        fs_err::write(&tmp, shell::script(shell, &spec))?;
        fs_err::rename(&tmp, &file)?;
    }
    Ok(spec)
}

/// Hooks the env scripts into the rc files of `shells`, recording what changed. Returns the
/// files changed now (already-hooked files are left alone).
pub fn hook(process: &Process, home: &Path, shells: &[Shell]) -> Result<Vec<PathBuf>> {
    let mut receipt = ShellReceipt::read(home);
    let mut changed = Vec::new();
    let mut failed = Vec::new();
    for h in shell::hooks(process, home, shells) {
        match shell::apply(&h) {
            Ok(Some(applied)) => {
                changed.push(applied.file.clone());
                receipt.hooks.retain(|a| a.file != applied.file);
                receipt.hooks.push(applied);
            }
            Ok(None) => {}
            Err(e) => failed.push(e.to_string()),
        }
    }
    receipt.write(home)?;
    if !failed.is_empty() {
        return Err(Error::Usage(failed.join("\n")));
    }
    Ok(changed)
}

/// `cudaup env` flags.
#[derive(Debug, Args)]
pub struct EnvArgs {
    /// The shell to print for: sh, bash, zsh, dash, fish, powershell [default: from $SHELL]
    #[arg(long, value_name = "SHELL")]
    pub shell: Option<String>,
}

/// `cudaup env`: prints the env script of the active stack.
pub fn run(args: &EnvArgs, process: &Process, out: &mut dyn Write) -> Result<ExitCode> {
    let home = process.cudaup_home().ok_or_else(|| {
        Error::Usage("cannot tell where cudaup's home is: set HOME or --home".into())
    })?;
    let name = args
        .shell
        .clone()
        .or_else(|| process.var("SHELL").map(str::to_owned))
        .unwrap_or_else(|| "sh".into());
    let shell = Shell::parse(&name).ok_or_else(|| {
        Error::Usage(format!(
            "--shell {name}: use sh, bash, zsh, dash, fish or powershell"
        ))
    })?;
    write!(out, "{}", shell::script(shell, &Active::read(&home).spec()))?;
    Ok(ExitCode::Ok)
}
