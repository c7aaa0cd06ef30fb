//! `manifests/cudnn.toml`: cuDNN builds, one row per (release, CUDA-major variant).

use serde::Deserialize;

use crate::version::Version;

/// The whole cudnn.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Builds.
    pub release: Vec<CudnnRelease>,
}

/// One cuDNN build.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnRelease {
    /// cuDNN version (`9.17.0`).
    pub version: Version,
    /// CUDA major of this build (`13`).
    pub cuda_variant: String,
    /// Oldest toolkit series it supports.
    pub cuda_min: Version,
    /// Newest toolkit series it supports.
    pub cuda_max: Version,
    /// Linux driver floor.
    pub driver_linux: Version,
    /// Windows driver floor.
    pub driver_windows: Option<Version>,
    /// Compute capabilities the support matrix lists.
    pub compute_capabilities: Vec<Version>,
    /// Where the row comes from.
    pub source: String,
}

impl CudnnRelease {
    /// Whether the build runs on a GPU of `cc`: the matrix lists it, or lists an older minor of
    /// the same major (binary compatibility within a major).
    pub fn supports_cc(&self, cc: &Version) -> bool {
        self.compute_capabilities
            .iter()
            .any(|c| c.major() == cc.major() && c.minor() <= cc.minor())
    }

    /// Whether the build supports a toolkit of `series` (major.minor).
    pub fn supports_cuda(&self, series: &Version) -> bool {
        &self.cuda_min <= series && series <= &self.cuda_max
    }
}
