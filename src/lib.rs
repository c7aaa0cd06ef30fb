//! cudaup: takes a workstation from a bare OS to a working GPU deep-learning stack, and keeps it
//! working.
//!
//! The pipeline (ARCHITECTURE.md): [`detect`] → [`system::System`] → resolve → plan → execute.
//! Everything that touches the world sits behind a small trait ([`runner::Runner`] for commands)
//! and reads the environment only through [`process::Process`].

pub mod bench;
pub mod catalog;
pub mod cli;
pub mod container;
pub mod detect;
pub mod doctor;
pub mod error;
pub mod fetch;
pub mod fleet;
pub mod install;
pub mod model;
pub mod resolve;
pub mod settings;
pub mod shell;
pub mod unpack;
pub mod verify;
pub mod world;

// Seeded fuzzing of every parser of outside input (issue 25; scripts/fuzz runs it long).
#[cfg(test)]
mod fuzz;

pub use error::{Error, ExitCode, Result};

// The paths these modules had before the layout of model/, world/, install/ and settings/. Kept so that code written
// against them (tests, other branches) still builds; new code uses the new paths.
#[doc(hidden)]
pub use cli::i18n;
#[doc(hidden)]
pub use doctor::repair;
use install::receipt_file;
#[doc(hidden)]
pub use install::{driver as driver_step, python as pyenv, receipts, sources, uninstall};
#[doc(hidden)]
pub use model::{finding as findings, plan, request, system, version};
#[doc(hidden)]
pub use settings::file as config;
#[doc(hidden)]
pub use world::{checkpoint, process, progress, prompt, runner, vars as env_vars};
