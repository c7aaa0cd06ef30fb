//! The steps of an install, each changing one part of the machine: the driver, the toolkit, the
//! framework and the environment. A step takes what `locate` found and
//! returns what it did as data; the caller renders it. Their errors keep the type of the layer
//! that failed ([`StepError`]), so each keeps its exit code.

pub mod driver;
pub mod env;
pub mod framework;
pub mod toolkit;

use super::driver::DriverStepError;
use super::InstallError;

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The driver's commands failed, or its reboot marker could not be written.
    #[error(transparent)]
    Driver(#[from] DriverStepError),
    /// The toolkit could not be installed.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// The framework could not be installed or checked.
    #[error(transparent)]
    PyEnv(#[from] crate::install::python::PyEnvError),
    /// An rc file was refused.
    #[error(transparent)]
    Hook(#[from] crate::install::env::HookError),
    /// cudaup's own copy could not be put in place.
    #[error("{0}")]
    SelfCopy(crate::install::self_copy::SelfCopyError),
    /// Local I/O (the env intent, the receipts); the path is in the message.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
