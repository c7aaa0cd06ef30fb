//! What the user asks for: a profile, pins and a driver policy (from flags, and later the config
//! file).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::version::{Version, VersionPin};

/// Which stack to set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Driver + CUDA toolkit + cuDNN + PyTorch, the toolkit matching torch's CUDA.
    Full,
    /// Driver + PyTorch (the wheels carry their own CUDA runtime).
    Pytorch,
    /// Driver + TensorFlow with its CUDA wheels.
    Tensorflow,
    /// Driver + JAX with the CUDA plugin and its CUDA wheels (`jax[cuda13]` or `jax[cuda12]`).
    Jax,
    /// Driver + CUDA toolkit + cuDNN, for writing CUDA code.
    CudaDev,
    /// No GPU: CPU builds of PyTorch.
    Cpu,
}

impl Profile {
    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Full => "full",
            Profile::Pytorch => "pytorch",
            Profile::Tensorflow => "tensorflow",
            Profile::Jax => "jax",
            Profile::CudaDev => "cuda-dev",
            Profile::Cpu => "cpu",
        }
    }

    /// Whether the profile installs a CUDA toolkit and cuDNN.
    pub fn has_toolkit(self) -> bool {
        matches!(self, Profile::Full | Profile::CudaDev)
    }

    /// The plan component of the framework the profile installs into a venv (`torch`,
    /// `tensorflow`, `jax`), if it installs one.
    pub fn framework_component(self) -> Option<&'static str> {
        match self {
            Profile::Full | Profile::Pytorch | Profile::Cpu => Some("torch"),
            Profile::Tensorflow => Some("tensorflow"),
            Profile::Jax => Some("jax"),
            Profile::CudaDev => None,
        }
    }

    /// Whether the profile installs PyTorch.
    pub fn has_torch(self) -> bool {
        matches!(self, Profile::Full | Profile::Pytorch | Profile::Cpu)
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What to do about the NVIDIA driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriverPolicy {
    /// Keep the installed driver when a good stack fits it, else the newest branch every GPU
    /// supports (the default).
    Auto,
    /// Never change the driver; the stack must fit the installed one.
    Keep,
    /// The newest branch every GPU supports.
    Latest,
    /// Leave the driver out entirely: nothing about it is planned, checked or run, and a missing
    /// or too-old driver is not an error (an image built on a machine without a GPU, or a
    /// driver that comes from elsewhere).
    Skip,
    /// Exactly this driver version.
    Version(Version),
}

impl DriverPolicy {
    /// Parses `auto`, `keep`, `latest` (and its synonyms `install` and `upgrade`), `skip`, or a
    /// driver version with at least two numbers.
    pub fn parse(s: &str) -> Option<DriverPolicy> {
        Some(match s {
            "auto" => Self::Auto,
            "keep" => Self::Keep,
            "latest" | "install" | "upgrade" => Self::Latest,
            "skip" => Self::Skip,
            v => VersionPin::parse(v)
                .ok()
                .filter(|p| p.version().parts().len() >= 2)
                .map(|p| Self::Version(p.version().clone()))?,
        })
    }
}

impl FromStr for DriverPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| {
            format!("`{s}` is not a driver policy: use auto, keep, latest, skip, or a version such as 580.95.05")
        })
    }
}

impl fmt::Display for DriverPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Keep => f.write_str("keep"),
            Self::Latest => f.write_str("latest"),
            Self::Skip => f.write_str("skip"),
            Self::Version(v) => write!(f, "{v}"),
        }
    }
}

/// Where the toolkit's bytes come from (`--source`, `[sources] source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SourceKind {
    /// NVIDIA's redistributable archives (`.tar.xz`), from NVIDIA or a mirror of its layout.
    Redist,
    /// NVIDIA's wheels from a Python package index (CUDA 13 and newer).
    Wheels,
}

impl SourceKind {
    /// The name on the command line and in the config file.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Redist => "redist",
            SourceKind::Wheels => "wheels",
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `--torch-source`: which kind of index may serve PyTorch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TorchSource {
    /// Ask each route, take the first that serves the plan.
    #[default]
    Auto,
    /// PyTorch's index (or a copy of its layout) only.
    Pytorch,
    /// PyPI (or a mirror) only: the planned build must be the one PyPI serves.
    Pypi,
}

impl TorchSource {
    /// The name on the command line, in the config file and in `CUDAUP_TORCH_SOURCE`.
    pub fn name(self) -> &'static str {
        match self {
            TorchSource::Auto => "auto",
            TorchSource::Pytorch => "pytorch",
            TorchSource::Pypi => "pypi",
        }
    }
}

impl FromStr for TorchSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(TorchSource::Auto),
            "pytorch" => Ok(TorchSource::Pytorch),
            "pypi" => Ok(TorchSource::Pypi),
            other => Err(format!("`{other}`: use auto, pytorch or pypi")),
        }
    }
}

impl fmt::Display for TorchSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Optional framework components (`--with`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WithComponent {
    /// TensorRT (`tensorrt-cu12` / `tensorrt-cu13` from PyPI; the libs from NVIDIA's index).
    Tensorrt,
}

/// Versions the user fixed, each parsed once where it entered (flag, variable or config file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    /// CUDA toolkit / wheel CUDA.
    pub cuda: Option<VersionPin>,
    /// cuDNN.
    pub cudnn: Option<VersionPin>,
    /// PyTorch.
    pub torch: Option<VersionPin>,
    /// TensorFlow.
    pub tensorflow: Option<VersionPin>,
    /// JAX.
    pub jax: Option<VersionPin>,
    /// Python.
    pub python: Option<VersionPin>,
}

/// Whether `version` fits `pin` (no pin fits everything).
pub fn pin_matches(pin: Option<&VersionPin>, version: &Version) -> bool {
    pin.is_none_or(|p| p.matches(version))
}

/// Everything the resolver needs besides the machine and the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The stack to set up.
    pub profile: Profile,
    /// Fixed versions.
    pub pins: Pins,
    /// Driver policy.
    pub driver: DriverPolicy,
    /// `--allow-unverified`: go on with a component whose GPU support the catalog cannot vouch
    /// for (a framework's exact cuDNN pin with no catalog row), saying so in the plan, instead of
    /// refusing it as unknown. A known failure is still refused.
    pub allow_unverified: bool,
}

impl Default for Request {
    fn default() -> Self {
        Self {
            profile: Profile::Full,
            pins: Pins::default(),
            driver: DriverPolicy::Auto,
            allow_unverified: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_source_parses() {
        assert_eq!("pypi".parse::<TorchSource>(), Ok(TorchSource::Pypi));
        assert!("conda".parse::<TorchSource>().is_err());
        assert_eq!(TorchSource::default().to_string(), "auto");
    }

    #[test]
    fn pins_match_by_prefix() {
        let v = Version::parse("12.8.1").unwrap();
        let pin = |s: &str| VersionPin::parse(s).unwrap();
        assert!(pin_matches(Some(&pin("12.8")), &v));
        assert!(pin_matches(Some(&pin("12")), &v));
        assert!(pin_matches(Some(&pin("12.8.1")), &v));
        assert!(!pin_matches(Some(&pin("12.80")), &v));
        assert!(!pin_matches(Some(&pin("12.8.2")), &v));
        assert!(pin_matches(None, &v));
    }

    #[test]
    fn driver_policy_parses() {
        assert_eq!("keep".parse::<DriverPolicy>(), Ok(DriverPolicy::Keep));
        assert!(matches!(
            "580.95.05".parse::<DriverPolicy>(),
            Ok(DriverPolicy::Version(_))
        ));
        assert!("580".parse::<DriverPolicy>().is_err());
        assert_eq!("skip".parse::<DriverPolicy>(), Ok(DriverPolicy::Skip));
        assert_eq!("install".parse::<DriverPolicy>(), Ok(DriverPolicy::Latest));
        assert_eq!(DriverPolicy::Skip.to_string(), "skip");
        assert!("newest".parse::<DriverPolicy>().is_err());
    }
}
