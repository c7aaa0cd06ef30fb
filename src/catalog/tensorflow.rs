//! `manifests/tensorflow.toml`: TensorFlow releases and their tested GPU build configuration.

use serde::Deserialize;

use super::{Date, Requirement};
use crate::model::version::Version;

/// The whole tensorflow.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorflowManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Releases.
    pub release: Vec<TfRelease>,
    /// What exists for a platform whose wheels are not GPU builds: what to use instead.
    #[serde(default)]
    pub platform: Vec<TfPlatform>,
    /// Releases that public reports show failing on some GPUs, whatever their wheels claim.
    #[serde(default)]
    pub known_failure: Vec<TfKnownFailure>,
    /// The Requires-Python of the releases, as the index states it.
    #[serde(default)]
    pub requires_python: Vec<super::RequiresPython>,
}

/// TensorFlow releases known to fail on GPUs of some compute capabilities.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfKnownFailure {
    /// The releases (`<2.18`).
    pub releases: super::Spec,
    /// The compute capabilities they fail on.
    pub compute_capabilities: Vec<Version>,
    /// What goes wrong, in a clause the plan shows.
    pub failure: String,
    /// What to use instead, in a clause the plan shows.
    pub instead: String,
    /// Where the row comes from (the reports).
    pub source: String,
}

/// TensorFlow's GPU story on one platform.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfPlatform {
    /// The platform (`linux-sbsa`).
    pub name: String,
    /// What exists there, in one or two sentences a plan can show.
    pub note: String,
    /// Where the row comes from.
    pub source: String,
}

/// One TensorFlow release.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfRelease {
    /// `2.21.0`.
    pub version: Version,
    /// Oldest Python (major.minor).
    pub python_min: Version,
    /// Newest Python (major.minor).
    pub python_max: Version,
    /// CUDA of the tested build.
    pub cuda: Version,
    /// cuDNN of the tested build.
    pub cudnn: Version,
    /// Whether `tensorflow[and-cuda]` brings CUDA and cuDNN as pip wheels.
    pub and_cuda: bool,
    /// Whether a GPU build exists for native Windows.
    pub windows_native_gpu: bool,
    /// The `and-cuda` extra's requirements as the wheel's METADATA states them
    /// (`nvidia-cudnn-cu12<10.0,>=9.3.0.75`): pins, or floors that pip floats to the newest.
    #[serde(default)]
    pub and_cuda_requires: Vec<String>,
    /// The platforms whose PyPI wheel of this release is a CUDA build (its
    /// `tensorflow/python/platform/build_info.py` says `is_cuda_build`). Absent: Linux x86_64
    /// only, the platform every row was read for.
    #[serde(default = "x86_64_only")]
    pub gpu_platforms: Vec<String>,
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

fn x86_64_only() -> Vec<String> {
    vec![super::cuda::DEFAULT_PLATFORM.to_owned()]
}

impl TensorflowManifest {
    /// The known failure of `release` on compute capability `cc`, if a row names one.
    pub fn known_failure(&self, release: &Version, cc: &Version) -> Option<&TfKnownFailure> {
        self.known_failure
            .iter()
            .find(|f| f.releases.contains(release) && f.compute_capabilities.contains(cc))
    }

    /// The story of `platform`, when the catalog tells one.
    pub fn platform(&self, name: &str) -> Option<&TfPlatform> {
        self.platform.iter().find(|p| p.name == name)
    }
}

impl TfRelease {
    /// The `and-cuda` requirement on distribution `name`, if the extra has one.
    pub fn and_cuda(&self, name: &str) -> Option<Requirement> {
        self.and_cuda_requires
            .iter()
            .filter_map(|r| Requirement::parse(r))
            .find(|r| r.name == name)
    }
}
