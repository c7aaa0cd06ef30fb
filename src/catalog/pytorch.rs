//! `manifests/pytorch.toml`: PyTorch releases and their CUDA wheel variants.

use serde::Deserialize;

use super::Date;
use crate::version::Version;

/// The whole pytorch.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PytorchManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Releases.
    pub release: Vec<TorchRelease>,
}

/// One PyTorch release.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchRelease {
    /// `2.11.0`.
    pub version: Version,
    /// Oldest Python (major.minor).
    pub python_min: Version,
    /// Newest Python (major.minor).
    pub python_max: Version,
    /// Matching torchvision.
    pub torchvision: Option<String>,
    /// Matching torchaudio.
    pub torchaudio: Option<String>,
    /// The variant a plain `pip install torch` gets on Linux x86_64.
    pub pypi_default: Option<String>,
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
    /// CUDA wheel variants.
    #[serde(default)]
    pub variant: Vec<TorchVariant>,
}

/// One CUDA build of a release (`cu130`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorchVariant {
    /// Index name (`cu130`).
    pub name: String,
    /// CUDA version it was built with (`13.0`).
    pub cuda: Version,
    /// Compute capabilities with SASS in the wheel.
    pub arch_list: Vec<Version>,
    /// The architecture also shipped as PTX.
    pub ptx: Option<Version>,
    /// The cuDNN wheel it depends on.
    pub cudnn: Option<String>,
    /// The platform whose wheel `arch_list` describes (redist naming: `linux-x86_64`,
    /// `linux-sbsa`). Rows of other platforms sit beside it under the same name.
    #[serde(default = "default_platform")]
    pub platform: String,
    /// Whether torchvision and torchaudio exist on this variant's index with its `+<variant>`
    /// tag. `false`: the plan takes the untagged PyPI release (a stable-ABI py3 wheel).
    #[serde(default = "yes")]
    pub companions_tagged: bool,
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

fn default_platform() -> String {
    "linux-x86_64".to_owned()
}

fn yes() -> bool {
    true
}

impl TorchRelease {
    /// The variants for `platform`; a release with no row for it falls back to its
    /// `linux-x86_64` rows (the only ones catalogued so far), as before platform keys.
    pub fn variants_for(&self, platform: &str) -> Vec<&TorchVariant> {
        let own: Vec<&TorchVariant> = self
            .variant
            .iter()
            .filter(|v| v.platform == platform)
            .collect();
        if own.is_empty() {
            self.variant
                .iter()
                .filter(|v| v.platform == "linux-x86_64")
                .collect()
        } else {
            own
        }
    }
}

/// How a wheel serves a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kernels {
    /// Native code for this compute capability or an older minor of its major.
    Sass(Version),
    /// Only PTX of an older architecture, compiled by the driver at first use.
    Ptx(Version),
    /// Nothing that runs on it.
    None,
}

impl TorchVariant {
    /// The index URL of this variant.
    pub fn index_url(&self) -> String {
        format!("https://download.pytorch.org/whl/{}", self.name)
    }

    /// What the wheel carries for a GPU of `cc`. SASS runs on the same major with an equal or
    /// higher minor; PTX is JIT-compiled for any newer GPU.
    pub fn kernels_for(&self, cc: &Version) -> Kernels {
        let sass = self
            .arch_list
            .iter()
            .filter(|a| a.major() == cc.major() && a.minor() <= cc.minor())
            .max();
        if let Some(a) = sass {
            return Kernels::Sass(a.clone());
        }
        match &self.ptx {
            Some(p) if p <= cc => Kernels::Ptx(p.clone()),
            _ => Kernels::None,
        }
    }
}
