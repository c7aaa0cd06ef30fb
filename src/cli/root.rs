//! `--system-root DIR`, shared by `detect`, `doctor` and the `container` commands: the flag and
//! its one check (a directory, else a usage error), so the commands cannot drift apart.

use std::path::PathBuf;

use clap::Args;

use crate::detect::Root;
use crate::error::{Error, Result};

/// Where the host's files are read from. Each command keeps its own help line for the flag
/// (`mut_arg` where it is flattened); this one is the container commands'.
#[derive(Debug, Clone, Default, Args)]
pub struct RootArgs {
    /// Read the host's files (cgroups, SELinux, WSL, the driver) under DIR instead of /
    #[arg(long, value_name = "DIR")]
    pub system_root: Option<PathBuf>,
}

impl RootArgs {
    /// The tree at `dir` (`None`: the live machine).
    pub fn at(dir: Option<PathBuf>) -> Self {
        Self { system_root: dir }
    }

    /// The [`Root`] to read: the live machine, or the directory given (a usage error when it is
    /// not one).
    pub fn root(&self) -> Result<Root> {
        match &self.system_root {
            Some(d) if !d.is_dir() => Err(Error::Usage(format!(
                "--system-root {}: not a directory",
                d.display()
            ))),
            Some(d) => Ok(Root::at(d)),
            None => Ok(Root::live()),
        }
    }
}
