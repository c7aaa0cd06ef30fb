//! cudaup: takes a workstation from a bare OS to a working GPU deep-learning stack, and keeps it
//! working.
//!
//! The pipeline (ARCHITECTURE.md): [`detect`] → [`system::System`] → resolve → plan → execute.
//! Everything that touches the world sits behind a small trait ([`runner::Runner`] for commands)
//! and reads the environment only through [`process::Process`].

pub mod catalog;
pub mod cli;
pub mod config;
pub mod detect;
pub mod doctor;
pub mod driver_step;
pub mod error;
pub mod fetch;
pub mod fleet;
pub mod i18n;
pub mod install;
pub mod model;
pub mod pyenv;
mod receipt_file;
pub mod receipts;
pub mod repair;
pub mod resolve;
pub mod shell;
pub mod sources;
pub mod uninstall;
pub mod unpack;
pub mod verify;
pub mod world;

pub use error::{Error, ExitCode, Result};

// The paths these modules had before the layout of model/ and world/. Kept so that code written
// against them (tests, other branches) still builds; new code uses the new paths.
#[doc(hidden)]
pub use model::{finding as findings, plan, request, system, version};
#[doc(hidden)]
pub use world::{checkpoint, process, progress, prompt, runner, vars as env_vars};
