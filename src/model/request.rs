//! What the user asks for: a profile, pins and a driver policy (from flags, and later the config
//! file).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::version::Version;

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
            Profile::CudaDev => "cuda-dev",
            Profile::Cpu => "cpu",
        }
    }

    /// Whether the profile installs a CUDA toolkit and cuDNN.
    pub fn has_toolkit(self) -> bool {
        matches!(self, Profile::Full | Profile::CudaDev)
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
    /// Never change the driver.
    Keep,
    /// The newest branch every GPU supports.
    Latest,
    /// Exactly this driver version.
    Version(Version),
}

impl FromStr for DriverPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "keep" => Ok(Self::Keep),
            "latest" => Ok(Self::Latest),
            v => Version::parse(v)
                .filter(|v| v.parts().len() >= 2)
                .map(Self::Version)
                .ok_or_else(|| {
                    format!("`{s}` is not a driver policy: use keep, latest, or a version such as 580.95.05")
                }),
        }
    }
}

/// Versions the user fixed. Each matches by prefix: `12.8` matches `12.8.1`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pins {
    /// CUDA toolkit / wheel CUDA.
    pub cuda: Option<String>,
    /// cuDNN.
    pub cudnn: Option<String>,
    /// PyTorch.
    pub torch: Option<String>,
    /// TensorFlow.
    pub tensorflow: Option<String>,
    /// Python.
    pub python: Option<String>,
}

/// Whether `version` starts with every number of `pin` (`12.8` matches `12.8.1`, not `12.80`).
pub fn pin_matches(pin: Option<&str>, version: &Version) -> bool {
    let Some(pin) = pin else { return true };
    let Some(pin) = Version::parse(pin) else {
        return false;
    };
    pin.parts()
        .iter()
        .enumerate()
        .all(|(i, p)| version.parts().get(i).copied().unwrap_or(0) == *p)
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
}

impl Default for Request {
    fn default() -> Self {
        Self {
            profile: Profile::Full,
            pins: Pins::default(),
            driver: DriverPolicy::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_match_by_prefix() {
        let v = Version::parse("12.8.1").unwrap();
        assert!(pin_matches(Some("12.8"), &v));
        assert!(pin_matches(Some("12"), &v));
        assert!(pin_matches(Some("12.8.1"), &v));
        assert!(!pin_matches(Some("12.80"), &v));
        assert!(!pin_matches(Some("12.8.2"), &v));
        assert!(pin_matches(None, &v));
        assert!(!pin_matches(Some("twelve"), &v));
    }

    #[test]
    fn driver_policy_parses() {
        assert_eq!("keep".parse::<DriverPolicy>(), Ok(DriverPolicy::Keep));
        assert!(matches!(
            "580.95.05".parse::<DriverPolicy>(),
            Ok(DriverPolicy::Version(_))
        ));
        assert!("580".parse::<DriverPolicy>().is_err());
        assert!("newest".parse::<DriverPolicy>().is_err());
    }
}
