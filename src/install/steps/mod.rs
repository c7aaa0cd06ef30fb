//! The steps of an install, each changing one part of the machine: the driver, the toolkit (and,
//! as the moves go on, the framework and the environment). A step takes what `locate` found and
//! returns what it did as data; the caller renders it. Their errors keep the type of the layer
//! that failed ([`StepError`]), so each keeps its exit code.

pub mod driver;
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
    /// Local I/O (the env intent, the receipts); the path is in the message.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
