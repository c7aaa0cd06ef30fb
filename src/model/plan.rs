//! The Plan document: what `plan --json` prints (ARCHITECTURE.md) and what install executes.

use serde::Serialize;

use crate::model::request::Profile;
use crate::model::system::KernelModule;

/// Whether a stack was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Every component is chosen.
    Ok,
    /// No compatible stack, or the system is unsupported (exit code 5).
    Unsupported,
}

/// What happens to a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Already right; nothing changes.
    Keep,
    /// Installed fresh.
    Install,
    /// Replaced by another version.
    Upgrade,
    /// Not part of this stack.
    Skip,
    /// The user must do it (the Windows driver under WSL2 or Windows).
    Manual,
}

/// One chosen component with its reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Component {
    /// `driver`, `python`, `cuda`, `cudnn`, `torch`, `torchvision`, `torchaudio`, `tensorflow`.
    pub name: String,
    /// What happens to it.
    pub action: Action,
    /// The version chosen (for `manual`: the minimum needed).
    pub version: Option<String>,
    /// cuDNN: the CUDA major of the build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_variant: Option<String>,
    /// torch: the wheel variant (`cu130`, `cpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// torch: the index to install from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_url: Option<String>,
    /// driver: the branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<u32>,
    /// driver: the kernel-module flavour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_module: Option<KernelModule>,
    /// Where an existing component lives (kept toolkits, the Python used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// driver: the exact commands the install step would run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// One line: why this and not something else.
    pub reason: String,
}

impl Component {
    /// A component with only the common fields set.
    pub fn new(
        name: &str,
        action: Action,
        version: Option<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            name: name.to_owned(),
            action,
            version,
            cuda_variant: None,
            variant: None,
            index_url: None,
            branch: None,
            kernel_module: None,
            path: None,
            commands: Vec::new(),
            reason: reason.into(),
        }
    }
}

/// A bound the installer passes pip/uv as a constraints file (`-c`), so that what the
/// framework's requirements leave floating stays within what every planned GPU can run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Constraint {
    /// A requirement line: `nvidia-cudnn-cu12<9.11.0`.
    pub requirement: String,
    /// Why, with the facts behind it.
    pub reason: String,
}

/// Which catalog the plan was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct CatalogInfo {
    /// `embedded`, `refreshed (<dir>)`, `--manifests <dir>`.
    pub origin: String,
    /// The catalog's date.
    pub date: String,
    /// Its age in days when the plan was made.
    pub age_days: i64,
}

/// The resolver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Found or not.
    pub status: Status,
    /// The profile planned for.
    pub profile: Profile,
    /// Chosen components, in install order.
    pub components: Vec<Component>,
    /// Why the stack looks like this (or, when unsupported, why nothing fits).
    pub reasons: Vec<String>,
    /// Things the user should know: GPUs left out, JIT, minor-version compatibility, reboots.
    pub warnings: Vec<String>,
    /// Bounds for what pip would otherwise float (passed as `-c`); empty when nothing floats.
    pub constraints: Vec<Constraint>,
    /// The catalog the plan was made from.
    pub catalog: CatalogInfo,
    /// On a Jetson: the JetPack the board runs and what fits it (the plan is `unsupported`:
    /// the stack comes with JetPack). Absent on every other machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jetson: Option<JetsonAdvice>,
    /// Alternatives considered and rejected, one line each (`-v`; not part of the JSON).
    #[serde(skip)]
    pub rejected: Vec<String>,
}

/// What a Jetson runs and which PyTorch fits it, from the catalog's jetson.toml.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JetsonAdvice {
    /// The board (`NVIDIA Jetson AGX Orin Developer Kit`).
    pub model: Option<String>,
    /// The module family (`Orin`).
    pub module: Option<String>,
    /// The L4T release it runs (`36.4.3`).
    pub l4t: Option<String>,
    /// The JetPack of that release (`6.2`); `None` when the catalog does not know the release.
    pub jetpack: Option<String>,
    /// The CUDA, cuDNN and TensorRT that JetPack ships.
    pub cuda: Option<String>,
    /// See `cuda`.
    pub cudnn: Option<String>,
    /// See `cuda`.
    pub tensorrt: Option<String>,
    /// PyTorch builds that fit, one line each (`torch 2.5.0a0+872d972e41.nv24.08 (Python 3.10): <url>`).
    pub pytorch: Vec<String>,
    /// The newest JetPack the catalog knows for this module, when newer than the running one.
    pub newest: Option<String>,
    /// Where the facts come from.
    pub source: String,
}

impl Plan {
    /// The component with this name.
    pub fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }
}
