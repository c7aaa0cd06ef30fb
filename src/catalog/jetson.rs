//! `manifests/jetson.toml`: Jetson modules and the L4T / JetPack releases that carry their whole
//! stack (driver, CUDA, cuDNN, TensorRT), with the PyTorch builds that fit each.

use serde::Deserialize;

use crate::model::version::Version;

/// The whole jetson.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JetsonManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Jetson modules and their integrated GPU.
    pub module: Vec<JetsonModule>,
    /// L4T releases, each the base of one JetPack.
    pub release: Vec<JetsonRelease>,
}

/// A family of Jetson modules (Orin, Thor) and its integrated GPU.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JetsonModule {
    /// `Orin`: the word of /proc/device-tree/model that names the family.
    pub name: String,
    /// The GPU's name as cudaup reports it (`Orin (nvgpu)`).
    pub gpu: String,
    /// Its compute capability.
    pub compute_capability: Version,
    /// Its architecture (as in gpus.toml).
    pub architecture: String,
    /// Where the row comes from.
    pub source: String,
}

/// One L4T release and the JetPack built on it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JetsonRelease {
    /// The L4T (Jetson Linux) release: `36.4.3` for `# R36 (release), REVISION: 4.3`.
    pub l4t: Version,
    /// NVIDIA's JetPack version (`6.2`).
    pub jetpack: String,
    /// The module families it supports (`Orin`, `Thor`).
    pub modules: Vec<String>,
    /// The Ubuntu release it is built on.
    pub ubuntu: Option<String>,
    /// The CUDA it ships.
    pub cuda: Option<Version>,
    /// The cuDNN it ships.
    pub cudnn: Option<String>,
    /// The TensorRT it ships.
    pub tensorrt: Option<String>,
    /// Where the row comes from.
    pub source: String,
    /// The PyTorch builds that fit it.
    #[serde(default)]
    pub pytorch: Vec<JetsonTorch>,
}

/// How PyTorch gets onto a JetPack release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TorchKind {
    /// One of NVIDIA's PyTorch-for-Jetson wheels (`developer.download.nvidia.com/compute/redist/jp/…`).
    Wheel,
    /// A package index built for this JetPack (Jetson AI Lab's).
    Index,
    /// PyTorch's own Linux aarch64 (linux-sbsa) CUDA wheels: the catalog's pytorch.toml rows of
    /// the release's CUDA major that serve the module's GPU.
    Upstream,
}

/// One PyTorch build for a JetPack release.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JetsonTorch {
    /// How it is installed.
    pub kind: TorchKind,
    /// The torch version (`2.5.0a0+872d972e41.nv24.08`); absent for an index or upstream.
    pub version: Option<String>,
    /// The wheel or the index.
    pub url: Option<String>,
    /// The Python it is built for (`3.10`).
    pub python: Option<String>,
    /// The modules it serves, where narrower than the release's (`Thor`).
    #[serde(default)]
    pub modules: Vec<String>,
    /// What the user should know (one clause).
    pub note: Option<String>,
    /// Where the row comes from.
    pub source: String,
}

impl JetsonManifest {
    /// The module family named by a word of the board's model string.
    pub fn module_of(&self, model: &str) -> Option<&JetsonModule> {
        self.module.iter().find(|m| {
            model
                .split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w.eq_ignore_ascii_case(&m.name))
        })
    }

    /// The row of an L4T release.
    pub fn release(&self, l4t: &Version) -> Option<&JetsonRelease> {
        self.release.iter().find(|r| &r.l4t == l4t)
    }

    /// The newest release that supports `module`.
    pub fn newest_for(&self, module: &str) -> Option<&JetsonRelease> {
        self.release
            .iter()
            .filter(|r| r.modules.iter().any(|m| m == module))
            .max_by(|a, b| a.l4t.cmp(&b.l4t))
    }
}

impl JetsonTorch {
    /// Whether it serves `module`.
    pub fn serves(&self, module: &str) -> bool {
        self.modules.is_empty() || self.modules.iter().any(|m| m == module)
    }
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;
    use crate::model::version::Version;

    #[test]
    fn models_and_releases_resolve() {
        let j = Catalog::embedded().jetson;
        let orin = j.module_of("NVIDIA Jetson AGX Orin Developer Kit").unwrap();
        assert_eq!(orin.compute_capability.to_string(), "8.7");
        assert_eq!(
            j.module_of("NVIDIA Jetson AGX Thor Developer Kit")
                .unwrap()
                .compute_capability
                .to_string(),
            "11.0"
        );
        assert!(j.module_of("Raspberry Pi 5 Model B Rev 1.0").is_none());
        let r = j.release(&Version::parse("36.4.3").unwrap()).unwrap();
        assert_eq!(r.jetpack, "6.2");
        assert!(j.newest_for("Thor").unwrap().l4t >= Version::parse("38.2").unwrap());
    }
}
