//! cudaup: takes a workstation from a bare OS to a working GPU deep-learning stack, and keeps it
//! working.
//!
//! The pipeline (ARCHITECTURE.md): [`detect`] → [`model::system::System`] → resolve → plan → execute.
//! Everything that touches the world sits behind a small trait ([`world::runner::Runner`] for commands)
//! and reads the environment only through [`world::process::Process`].

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
pub mod lock;
pub mod model;
pub mod monitor;
pub mod resolve;
pub mod settings;
pub mod shell;
pub mod sources;
pub mod unpack;
pub mod verify;
pub mod world;

// Seeded fuzzing of every parser of outside input (issue 25; scripts/fuzz runs it long). On
// Unix only: its safety targets plant FIFOs and Unix links, and the parsers it feeds are the
// same code on every system.
#[cfg(all(test, unix))]
mod fuzz;

pub use error::{Error, ExitCode, Result};
