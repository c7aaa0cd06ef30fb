//! `manifests/cudnn.toml`: cuDNN builds, one row per (release, CUDA-major variant).

use serde::Deserialize;

use super::{Date, Spec};
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
    /// The toolkit series this build supports, written the way the source states it: a
    /// support matrix's list as `>=12.0,<=12.9`, NVIDIA's packaging as `>=13,<14` (its conda
    /// package of 9.17.0.29 requires `cuda-version >=13,<14`, its wheels name only the major).
    pub cuda: Spec,
    /// Linux driver floor; absent: the floor of the CUDA major (`cuda.toml` `[[major]]`), which is
    /// what NVIDIA's matrices state for every build they list.
    pub driver_linux: Option<Version>,
    /// Windows driver floor.
    pub driver_windows: Option<Version>,
    /// Compute capabilities it serves: the support matrix's list, or where no matrix could be
    /// read, the SASS targets in the wheel's core library (read from its fatbin).
    pub compute_capabilities: Vec<Version>,
    /// The wheel of this build on PyPI (`nvidia-cudnn-cu13` version `9.28.1.4`).
    pub wheel: Option<Version>,
    /// Redistributable platforms with an archive of this variant (`linux-x86_64`, `linux-sbsa`).
    #[serde(default)]
    pub platforms: Vec<String>,
    /// NVIDIA's release date (`release_date` of the redistrib JSON).
    pub date: Option<Date>,
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

impl CudnnRelease {
    /// Whether the build runs on a GPU of `cc`: the list has it, or an older minor of the same
    /// major (binary compatibility within a major).
    pub fn supports_cc(&self, cc: &Version) -> bool {
        self.compute_capabilities
            .iter()
            .any(|c| c.major() == cc.major() && c.minor() <= cc.minor())
    }

    /// Whether the build supports a toolkit of `series` (major.minor).
    pub fn supports_cuda(&self, series: &Version) -> bool {
        series.major().to_string() == self.cuda_variant && self.cuda.contains(series)
    }
}
