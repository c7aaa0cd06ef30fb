//! `manifests/components.toml`: which toolkit components an install fetches, per CUDA major.

use serde::Deserialize;

/// The whole components.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentsManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// One row per CUDA major.
    pub toolkit: Vec<ToolkitComponents>,
}

/// The components of one CUDA major.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolkitComponents {
    /// CUDA major.
    pub cuda_major: u32,
    /// Component keys in NVIDIA's redistrib JSON.
    pub redist: Vec<String>,
    /// NVIDIA wheels carrying the same files (empty: no wheel route).
    pub wheels: Vec<String>,
    /// The cuDNN wheel for this major.
    pub cudnn_wheel: String,
    /// Where the row comes from.
    pub source: String,
}

impl ComponentsManifest {
    /// The row for a CUDA major.
    pub fn for_major(&self, major: u32) -> Option<&ToolkitComponents> {
        self.toolkit.iter().find(|t| t.cuda_major == major)
    }
}
