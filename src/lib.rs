//! cudaup: takes a workstation from a bare OS to a working GPU deep-learning stack, and keeps it
//! working.
//!
//! The pipeline (ARCHITECTURE.md): [`detect`] → [`system::System`] → resolve → plan → execute.
//! Everything that touches the world sits behind a small trait ([`runner::Runner`] for commands)
//! and reads the environment only through [`process::Process`].

pub mod bench;
pub mod catalog;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod detect;
pub mod doctor;
pub mod driver_step;
pub mod env_vars;
pub mod error;
pub mod fetch;
pub mod findings;
pub mod fleet;
pub mod i18n;
pub mod install;
pub mod plan;
pub mod process;
pub mod progress;
pub mod prompt;
pub mod pyenv;
mod receipt_file;
pub mod receipts;
pub mod repair;
pub mod request;
pub mod resolve;
pub mod runner;
pub mod shell;
pub mod sources;
pub mod system;
pub mod uninstall;
pub mod unpack;
pub mod verify;
pub mod version;

pub use error::{Error, ExitCode, Result};
