//! What an install did, as a typed document: [`Outcome`] is `cudaup install --json` (uv's
//! `InstallReport` and rustup's `UpdateStatus` are the models). The installer fills it, the CLI
//! prints it, and `fleet report` reads it back with the same type instead of picking values out
//! of untyped JSON. Its three shapes are held by golden skeletons (`tests/it/outcome.rs`).
//!
//! Reading is lenient where the report may come from an older cudaup or a fleet tool's own
//! writing (a field it lacks is its default); writing always fills every field.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::self_copy::Installed as SelfCopy;
use super::{Item, Receipt, ToolkitSpec};

/// The version of the installed and nothing-to-do shapes (0 in reports written before it was).
pub const SCHEMA_VERSION: u32 = 1;

/// `cudaup install --json`: one of three shapes, told apart by their `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Outcome {
    /// Something was installed (or checked): `status` is `installed`, or `installed,
    /// verification failed` when `--verify` found a failure.
    Installed(Box<Installed>),
    /// The machine already had everything; the environment was converged.
    NothingToDo(NothingToDo),
    /// `--dry-run`: the plan document as `plan --json` prints it (with the framework's route),
    /// and nothing changed.
    DryRun(serde_json::Value),
}

/// The status of an install that ran its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum InstalledStatus {
    /// Every step ran (and `--verify`, when asked, passed).
    #[serde(rename = "installed")]
    Installed,
    /// Every step ran, and `--verify` found a failure.
    #[serde(rename = "installed, verification failed")]
    VerificationFailed,
}

/// The status of an install that had nothing to install.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NothingStatus {
    /// `nothing to do`.
    #[serde(rename = "nothing to do")]
    NothingToDo,
}

/// One NVIDIA GPU of the machine planned for (its picture with `--system`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedGpu {
    /// The name as detect reports it (`NVIDIA H200`).
    pub name: String,
    /// Compute capability (`9.0`), when known.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Architecture (`Hopper`), when known.
    #[serde(default)]
    pub architecture: Option<String>,
}

/// The installed shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    /// [`SCHEMA_VERSION`].
    #[serde(default)]
    pub schema_version: u32,
    /// See [`InstalledStatus`].
    pub status: InstalledStatus,
    /// The profile installed.
    #[serde(default)]
    pub profile: String,
    /// Whether this run changed the machine (a fleet tool reports `changed` from it).
    pub changed: bool,
    /// A new driver waits for a reboot.
    #[serde(default)]
    pub reboot_required: bool,
    /// The NVIDIA GPUs planned for.
    #[serde(default)]
    pub gpus: Vec<PlannedGpu>,
    /// The plan document (with the framework's route when there is one).
    pub plan: serde_json::Value,
    /// The driver step, when the plan changes the driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverReport>,
    /// The toolkit installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<ToolkitReport>,
    /// The framework's venv.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub venv: Option<VenvReport>,
    /// cudaup's own copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudaup: Option<SelfCopy>,
    /// The env scripts and rc files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvReport>,
    /// `verify --json`'s document, with `--verify`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<serde_json::Value>,
}

/// The nothing-to-do shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NothingToDo {
    /// [`SCHEMA_VERSION`].
    #[serde(default)]
    pub schema_version: u32,
    /// Always `nothing to do`.
    pub status: NothingStatus,
    /// The profile planned.
    #[serde(default)]
    pub profile: String,
    /// Whether converging the environment changed an rc file.
    pub changed: bool,
    /// Always false: nothing was installed.
    #[serde(default)]
    pub reboot_required: bool,
    /// The NVIDIA GPUs planned for.
    #[serde(default)]
    pub gpus: Vec<PlannedGpu>,
    /// The plan document.
    pub plan: serde_json::Value,
    /// The env scripts and rc files (`null` in a dry run or when there was nothing to write).
    #[serde(default)]
    pub env: Option<EnvReport>,
}

/// What the driver step did or could not do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DriverReport {
    /// The commands run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<String>>,
    /// Secure Boot needs the module's key enrolled at the next boot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mok_enrolment_needed: Option<bool>,
    /// Why the driver could not be installed automatically.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manual: Option<String>,
}

/// One archive or wheel of the toolkit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComponentReport {
    /// The component (`cuda_nvcc`).
    pub name: String,
    /// Its version.
    pub version: String,
    /// Where it came from.
    pub url: String,
    /// Its checked sha256.
    pub sha256: String,
    /// Its size, when the source said.
    pub size: Option<u64>,
}

/// The toolkit installed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolkitReport {
    /// Where.
    pub prefix: String,
    /// The CUDA release.
    pub cuda: String,
    /// The cuDNN release, when installed.
    pub cudnn: Option<String>,
    /// The source (`redist <base>`, `wheels <index>`).
    pub source: String,
    /// What was fetched.
    pub components: Vec<ComponentReport>,
    /// How many files the receipt lists.
    pub files: usize,
    /// What `nvcc --version` answered (none for another architecture's toolkit).
    pub nvcc: Option<String>,
    /// Components the source does not have, said once each.
    pub left_out: Vec<String>,
}

impl ToolkitReport {
    /// The report of the toolkit `spec`, installed from `items` as `receipt` records.
    pub fn new(
        spec: &ToolkitSpec,
        items: &[Item],
        receipt: &Receipt,
        nvcc: Option<&str>,
        left_out: &[String],
    ) -> Self {
        Self {
            prefix: receipt.prefix.display().to_string(),
            cuda: spec.cuda.to_string(),
            cudnn: spec.cudnn.as_ref().map(ToString::to_string),
            source: spec.source.to_string(),
            components: items
                .iter()
                .map(|i| ComponentReport {
                    name: i.component.clone(),
                    version: i.version.clone(),
                    url: i.artifact.location.to_string(),
                    sha256: i.artifact.sha256.clone(),
                    size: i.artifact.size,
                })
                .collect(),
            files: receipt.files.len(),
            nvcc: nvcc.map(str::to_owned),
            left_out: left_out.to_vec(),
        }
    }
}

/// The framework's venv.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VenvReport {
    /// The venv.
    pub path: PathBuf,
    /// What was installed, and from where.
    pub packages: super::python::Packages,
    /// The route the framework came from (`null` when the venv was only checked).
    pub route: serde_json::Value,
    /// What the installer noted.
    pub notes: Vec<String>,
    /// The log of the run.
    pub log: PathBuf,
}

/// The env scripts and rc files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvReport {
    /// The line that loads the env script (`. "$CUDAUP_HOME/env"`).
    pub source: String,
    /// The rc files this run changed.
    pub rc_files_changed: Vec<PathBuf>,
}

impl Outcome {
    /// The JSON text `install --json` prints.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("an outcome serialises")
    }
}

#[cfg(test)]
mod tests;
