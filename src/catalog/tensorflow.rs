//! `manifests/tensorflow.toml`: TensorFlow releases and their tested GPU build configuration.

use serde::Deserialize;

use super::{Date, Requirement};
use crate::version::Version;

/// The whole tensorflow.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorflowManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Releases.
    pub release: Vec<TfRelease>,
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
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
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
