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
pub mod setup;
pub mod smoke;
pub mod toolkit;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::detect::Root;
use crate::world::runner::Runner;

pub use choice::Choice;
pub use engine::Engine;
pub use host::Host;

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
