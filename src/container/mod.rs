//! GPUs in containers: which engines this user has ([`engine`]), what the host says ([`host`]),
//! which way each engine reaches the GPUs and why ([`choice`]), and the CDI spec cudaup writes
//! itself from the loaded driver ([`cdi`]).
//!
//! Everything is read through a [`Runner`] (the engines' `info`) and a [`Root`] (files), so a
//! test describes a machine with recorded answers and a picture directory.

pub mod cdi;
pub mod choice;
pub mod config;
pub mod dockerfile;
pub mod doctor;
pub mod engine;
pub mod host;
pub mod image;
pub mod offer;
pub mod setup;
pub mod smoke;
pub mod toolkit;
pub mod toolkit_install;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::detect::Root;
use crate::world::runner::Runner;

pub use choice::Choice;
pub use engine::Engine;
pub use host::Host;

/// Why a container command could not do what was asked, typed so that `error.rs` maps each to
/// its exit code once: what the user must change is 2, a host-file edit or a driver command that
/// failed is 1 (as install's are).
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    /// The host cannot be set up as asked (a config file cudaup cannot read, no engine to set up).
    #[error(transparent)]
    Setup(#[from] setup::SetupError),
    /// A host file could not be written or put back.
    #[error(transparent)]
    Edit(#[from] crate::install::host_files::EditError),
    /// A driver command failed.
    #[error(transparent)]
    Driver(#[from] crate::install::driver::DriverStepError),
    /// Containers with NVIDIA GPUs (CDI, the container toolkit, the engines' config files) are a
    /// Linux feature: on Windows the GPU reaches Docker through WSL2, set up inside it.
    #[error("cudaup container works on Linux only (here: {os}): on Windows, run cudaup inside WSL2, where Docker Desktop's engine sees the GPU through the Windows driver")]
    LinuxOnly {
        /// The system it was asked on (`std::env::consts::OS`).
        os: &'static str,
    },
    /// No CDI spec can be written for this driver tree.
    #[error(transparent)]
    Cdi(#[from] cdi::generate::GenerateError),
    /// The toolkit could not be installed.
    #[error(transparent)]
    Toolkit(#[from] toolkit_install::InstallError),
    /// The image cannot be read.
    #[error("{0}")]
    Image(String),
    /// No Dockerfile can be written for this plan.
    #[error(transparent)]
    Dockerfile(#[from] dockerfile::DockerfileError),
    /// Neither docker nor podman is on `PATH`, and the command needs one.
    #[error("{0}")]
    NoEngine(String),
    /// No NVIDIA driver is loaded, and the command compares against it.
    #[error("{0}")]
    NoDriver(String),
    /// The plan writes files only root may write.
    #[error("writing {paths} needs root: run `sudo cudaup container setup{toolkit}`, or `cudaup container setup --engine podman` for rootless Podman alone")]
    NeedsRoot {
        /// The files, comma-separated.
        paths: String,
        /// ` --toolkit` when the toolkit was asked for, else empty.
        toolkit: &'static str,
    },
}

/// Refuses on a system other than Linux, before anything is read or written: every container
/// command edits or reads Linux host files (`/etc/docker`, `/etc/cdi`, `/dev/nvidia*`).
pub fn linux_only() -> Result<(), ContainerError> {
    if cfg!(target_os = "linux") {
        Ok(())
    } else {
        Err(ContainerError::LinuxOnly {
            os: std::env::consts::OS,
        })
    }
}

/// What [`survey`] found: the host, its engines, and the choice for each.
#[derive(Debug, Clone, Serialize)]
pub struct Survey {
    /// Host facts.
    pub host: Host,
    /// Engines found on `PATH`, those that did not answer included.
    pub engines: Vec<Engine>,
    /// One choice per engine, in the same order.
    pub choices: Vec<Choice>,
    /// The per-user spec directory (`$CUDAUP_HOME/cdi`).
    pub user_spec_dir: PathBuf,
}

/// Where to look, and with what.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    /// The host's files (`/`, or a picture).
    pub root: &'a Root,
    /// Directories searched for `docker` and `podman`.
    pub path_entries: Vec<PathBuf>,
    /// `$XDG_RUNTIME_DIR`, where a rootless Docker daemon has its socket.
    pub xdg_runtime_dir: Option<PathBuf>,
    /// `$CUDAUP_HOME`.
    pub cudaup_home: &'a Path,
}

/// Looks at the host and its engines and chooses.
pub fn survey(inputs: &Inputs<'_>, runner: &dyn Runner) -> Survey {
    let host = Host::probe(inputs.root);
    let socket = inputs
        .xdg_runtime_dir
        .as_ref()
        .map(|d| d.join("docker.sock"))
        .filter(|s| s.exists());
    let engines = engine::detect(runner, &inputs.path_entries, socket.as_deref(), host.root);
    let user_spec_dir = crate::install::home::Home::at(inputs.cudaup_home).cdi();
    let choices = choice::choose(&engines, &host, &user_spec_dir);
    Survey {
        host,
        engines,
        choices,
        user_spec_dir,
    }
}
