//! `manifests/cudnn.toml`: cuDNN builds, one row per (release, CUDA-major variant).

use serde::Deserialize;

use super::{Date, Spec};
use crate::model::version::Version;

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
    /// The builds for platforms other than Linux x86_64, whose GPU lists differ (the aarch64
    /// cuda13 builds carry sm_110 for Thor): `compute_capabilities` above describes the
    /// `linux-x86_64` build only.
    #[serde(default)]
    pub build: Vec<CudnnBuild>,
}

/// The build of a cuDNN release for one platform other than Linux x86_64.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnBuild {
    /// The platform (`linux-sbsa`).
    pub platform: String,
    /// Compute capabilities with SASS in that build's core library.
    pub compute_capabilities: Vec<Version>,
    /// Its wheel on PyPI (the `manylinux_*_aarch64` one).
    pub wheel: Option<Version>,
    /// When `manifests update` derived this row from `source`.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

impl CudnnRelease {
    /// The compute capabilities of this release's build for `platform`; `None` when the catalog
    /// has no GPU list for that platform (another platform's list never stands in for it).
    pub fn compute_capabilities_on(&self, platform: &str) -> Option<&[Version]> {
        if platform == super::cuda::DEFAULT_PLATFORM {
            return Some(&self.compute_capabilities);
        }
        self.build
            .iter()
            .find(|b| b.platform == platform)
            .map(|b| b.compute_capabilities.as_slice())
    }

    /// Whether the build for `platform` runs on a GPU of `cc`: its list has `cc`, or SASS of
    /// its family that runs there (`runs(built, gpu)`, the catalog's [[family]] rule).
    pub fn supports_cc_on(
        &self,
        platform: &str,
        cc: &Version,
        runs: impl Fn(&Version, &Version) -> bool,
    ) -> bool {
        self.compute_capabilities_on(platform)
            .is_some_and(|list| list.iter().any(|c| runs(c, cc)))
    }

    /// Whether NVIDIA publishes this build for `platform`: a GPU list for it is known, and the
    /// redist platforms (where recorded) list it.
    pub fn on_platform(&self, platform: &str) -> bool {
        self.compute_capabilities_on(platform).is_some()
            && (self.platforms.is_empty() || self.platforms.iter().any(|p| p == platform))
    }

    /// Whether the build supports a toolkit of `series` (major.minor).
    pub fn supports_cuda(&self, series: &Version) -> bool {
        series.major().to_string() == self.cuda_variant && self.cuda.contains(series)
    }
}
