//! `manifests/tensorflow.toml`: TensorFlow releases and their tested GPU build configuration.

use serde::Deserialize;

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
    /// Where the row comes from.
    pub source: String,
}
