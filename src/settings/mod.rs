//! Settings: the unattended config file ([`file`]), the command line and the `CUDAUP_*`
//! variables, resolved once into typed settings (flags > environment > file > defaults).

pub mod combine;
pub mod file;
pub mod net;
pub mod resolve;

pub use resolve::{InstallOptions, InstallSettings, SettingsError};
