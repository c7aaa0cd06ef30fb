//! `manifests/pytorch.toml`: PyTorch releases and their CUDA wheel variants.

use serde::Deserialize;

use super::Date;
use crate::model::version::Version;

/// The whole pytorch.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PytorchManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Releases.
    pub release: Vec<TorchRelease>,
    /// The Requires-Python of the companion wheels (torchvision, torchaudio) the releases name.
    #[serde(default)]
    pub requires_python: Vec<RequiresPython>,
    /// The last release line with kernels for some architectures.
    #[serde(default)]
    pub last_line: Vec<LastLine>,
}

/// The last torch release line (`2.14`) whose wheels carry kernels for some architectures: a plan
/// on it says so, so "upgrade torch" is not mistaken for a fix.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LastLine {
    /// The release line (major.minor).
    pub torch: Version,
    /// Architectures as in gpus.toml (`Pascal`).
    pub architectures: Vec<String>,
    /// Why, in a clause the plan shows.
    pub why: String,
    /// Where the row comes from.
    pub source: String,
}

/// What Python a wheel release declares it installs into (its `Requires-Python`, PEP 440, with
/// exclusions such as `!=3.14.1`), as the index states it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequiresPython {
    /// The distribution (`torchvision`).
    pub package: String,
    /// Its release (`0.29.2`).
    pub version: Version,
    /// `>=3.10,!=3.14.1`.
    pub requires_python: super::Spec,
    /// Where the row comes from.
    pub source: String,
}

/// The row of `package` `version` in `rows`.
pub fn requires_python<'r>(
    rows: &'r [RequiresPython],
    package: &str,
    version: &str,
) -> Option<&'r RequiresPython> {
    let v = Version::parse(version)?;
    rows.iter().find(|r| r.package == package && r.version == v)
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
    /// For a platform other than Linux x86_64: whether this variant is the build PyPI serves
    /// there (read from that platform's wheel, whose pins name its CUDA). For Linux x86_64 the
    /// release's `pypi_default` says it.
    pub pypi: Option<bool>,
    /// The newest Python with a wheel of this variant on its platform, where narrower than the
    /// release's range.
    pub python_max: Option<Version>,
    /// When `manifests update` derived this row from `source`; absent for hand-curated rows.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

fn default_platform() -> String {
    super::cuda::DEFAULT_PLATFORM.to_owned()
}

fn yes() -> bool {
    true
}

impl TorchRelease {
    /// The variants built for `platform`. A release with no row for it has no wheel the
    /// catalog can vouch for there: another platform's rows (their arch lists, their
    /// existence) never stand in.
    pub fn variants_for(&self, platform: &str) -> Vec<&TorchVariant> {
        self.variant
            .iter()
            .filter(|v| v.platform == platform)
            .collect()
    }

    /// Whether `v` is the build a plain `pip install torch` gets on its platform.
    pub fn is_pypi_default(&self, v: &TorchVariant) -> bool {
        match v.pypi {
            Some(p) => p,
            None => {
                v.platform == super::cuda::DEFAULT_PLATFORM
                    && self.pypi_default.as_deref() == Some(v.name.as_str())
            }
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

    /// What the wheel carries for a GPU of `cc`: SASS that runs there (`runs(built, gpu)`, the
    /// catalog's [[family]] rule: the same compute capability or an earlier one of its family),
    /// else PTX, which the driver JIT-compiles for any newer GPU.
    pub fn kernels_for(&self, cc: &Version, runs: impl Fn(&Version, &Version) -> bool) -> Kernels {
        let sass = self.arch_list.iter().filter(|a| runs(a, cc)).max();
        if let Some(a) = sass {
            return Kernels::Sass(a.clone());
        }
        match &self.ptx {
            Some(p) if p <= cc => Kernels::Ptx(p.clone()),
            _ => Kernels::None,
        }
    }
}
