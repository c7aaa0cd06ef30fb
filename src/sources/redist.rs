//! NVIDIA's redistributable layout, read as is: `<base>/compute/cuda/redist/redistrib_<ver>.json`
//! and `<base>/compute/cudnn/redist/redistrib_<ver>.json`, each component with per-platform
//! `relative_path`, `sha256` and `size` (cuDNN nested by `cudaNN` variant).

use serde_json::Value;

use crate::fetch::{Artifact, Location};

/// NVIDIA's download server, the default base.
pub const NVIDIA_BASE: &str = "https://developer.download.nvidia.com";

/// Why a redistrib document cannot serve a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedistError {
    /// Not JSON, or not the expected shape.
    #[error("{url}: not a redistrib JSON document: {message}")]
    Malformed {
        /// Where it came from.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// A component the profile needs is not in the release.
    #[error("{url}: release {release} has no component `{component}`")]
    MissingComponent {
        /// Where it came from.
        url: String,
        /// The release label.
        release: String,
        /// The component key.
        component: String,
    },
    /// The component exists but not for this platform (or CUDA variant).
    #[error("{url}: `{component}` {version} has no build for {platform}")]
    MissingPlatform {
        /// Where it came from.
        url: String,
        /// The component key.
        component: String,
        /// Its version.
        version: String,
        /// `linux-x86_64`, or `linux-x86_64/cuda13` for cuDNN.
        platform: String,
    },
}

/// The URL of a CUDA release's redistrib JSON under `base`.
pub fn cuda_manifest(base: &Location, release: &str) -> Location {
    base.join(&format!("compute/cuda/redist/redistrib_{release}.json"))
}

/// The URL of a cuDNN release's redistrib JSON under `base`.
pub fn cudnn_manifest(base: &Location, release: &str) -> Location {
    base.join(&format!("compute/cudnn/redist/redistrib_{release}.json"))
}

/// A parsed redistrib document.
#[derive(Debug, Clone)]
pub struct Redist {
    url: String,
    dir: Location,
    doc: Value,
}

/// One component chosen for a platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedistComponent {
    /// Component key (`cuda_nvcc`).
    pub key: String,
    /// Component version (`13.0.88`).
    pub version: String,
    /// The archive.
    pub artifact: Artifact,
}

impl Redist {
    /// Parses `bytes` fetched from `manifest` (the archives live next to it).
    pub fn parse(manifest: &Location, bytes: &[u8]) -> Result<Self, RedistError> {
        let url = manifest.to_string();
        let doc: Value = serde_json::from_slice(bytes).map_err(|e| RedistError::Malformed {
            url: url.clone(),
            message: e.to_string(),
        })?;
        if !doc.is_object() || doc.get("release_label").and_then(Value::as_str).is_none() {
            return Err(RedistError::Malformed {
                url,
                message: "no `release_label`".into(),
            });
        }
        let dir = match manifest {
            Location::Http(u) => {
                let mut d = u.clone();
                d.path_segments_mut()
                    .map(|mut s| {
                        s.pop();
                    })
                    .ok();
                Location::Http(d)
            }
            Location::File(p) => {
                Location::File(p.parent().map(|p| p.to_owned()).unwrap_or_default())
            }
        };
        Ok(Self { url, dir, doc })
    }

    /// `release_label`.
    pub fn release(&self) -> &str {
        self.doc["release_label"].as_str().unwrap_or("")
    }

    /// The component keys (everything but the three string-valued top-level keys).
    pub fn components(&self) -> Vec<&str> {
        self.doc
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(_, v)| v.is_object())
                    .map(|(k, _)| k.as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The archive of `key` for `platform`; for cuDNN, `variant` picks `cudaNN` inside it.
    pub fn component(
        &self,
        key: &str,
        platform: &str,
        variant: Option<&str>,
    ) -> Result<RedistComponent, RedistError> {
        let c = self.doc.get(key).filter(|c| c.is_object()).ok_or_else(|| {
            RedistError::MissingComponent {
                url: self.url.clone(),
                release: self.release().to_owned(),
                component: key.to_owned(),
            }
        })?;
        let version = c
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let label = match variant {
            Some(v) => format!("{platform}/{v}"),
            None => platform.to_owned(),
        };
        let missing = || RedistError::MissingPlatform {
            url: self.url.clone(),
            component: key.to_owned(),
            version: version.clone(),
            platform: label.clone(),
        };
        let mut entry = c.get(platform).ok_or_else(missing)?;
        if let Some(v) = variant {
            entry = entry.get(v).ok_or_else(missing)?;
        }
        let field = |name: &str| entry.get(name).and_then(Value::as_str);
        let malformed = |what: &str| RedistError::Malformed {
            url: self.url.clone(),
            message: format!("`{key}` {label}: {what}"),
        };
        let relative_path = field("relative_path").ok_or_else(|| malformed("no relative_path"))?;
        let location = self.dir.join(relative_path);
        if !plain_relative(relative_path) || !self.dir.contains(&location) {
            return Err(malformed(&format!(
                "relative_path `{}` leaves the mirror",
                relative_path.escape_debug()
            )));
        }
        let sha256 = field("sha256")
            .filter(|s| s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()))
            .ok_or_else(|| malformed("no valid sha256"))?
            .to_ascii_lowercase();
        // NVIDIA writes sizes as strings; accept numbers too.
        let size = entry.get("size").and_then(|s| {
            s.as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .or_else(|| s.as_u64())
        });
        Ok(RedistComponent {
            key: key.to_owned(),
            artifact: Artifact {
                name: format!("{key} {version}"),
                location,
                sha256,
                size,
                max: None,
            },
            version,
        })
    }
}

/// Plain names separated by `/`: none empty, `.` or `..` (percent-decoded too), no backslash,
/// `%2f` or control character. NVIDIA's paths look like `cuda_nvcc/linux-x86_64/<file>`.
fn plain_relative(path: &str) -> bool {
    !path.is_empty()
        && path.split('/').all(|seg| {
            let decoded = super::page::percent_decode(seg);
            !seg.is_empty()
                && decoded.as_deref().is_some_and(|d| {
                    d != "."
                        && d != ".."
                        && !d.contains(['/', '\\'])
                        && !d.chars().any(char::is_control)
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    // NVIDIA's format (compat.md §7, from nixpkgs' copy of redistrib_12.8.1.json), trimmed.
    const CUDA: &str = r#"{
    "release_date": "2025-03-06",
    "release_label": "12.8.1",
    "release_product": "cuda",
    "cuda_cccl": {
        "name": "CXX Core Compute Libraries",
        "license": "CUDA Toolkit",
        "license_path": "cuda_cccl/LICENSE.txt",
        "version": "12.8.90",
        "linux-x86_64": {
            "relative_path": "cuda_cccl/linux-x86_64/cuda_cccl-linux-x86_64-12.8.90-archive.tar.xz",
            "sha256": "0740e9e01e4f15e17c5ab8d68bba4f8ec0eb6b84edccba4ac45112d2d2174e4b",
            "md5": "97f6ad8c8717cc555974d03483200f43",
            "size": "928524"
        }
    }
}"#;
    const CUDNN: &str = r#"{
    "release_date": "2025-05-07", "release_label": "9.10.0", "release_product": "cudnn",
    "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn", "license_path": "cudnn/LICENSE.txt", "version": "9.10.0.56",
        "linux-x86_64": {
            "cuda12": {"relative_path": "cudnn/linux-x86_64/cudnn-linux-x86_64-9.10.0.56_cuda12-archive.tar.xz",
                "sha256": "cc0ad9eaaf6ef6569b20250111f9df0569816c17076c58aad8aea1661e2fc781", "md5": "a854357768cad19d3c18dee59ee770e8", "size": "1003184568"}},
        "cuda_variant": ["11", "12"]}
}"#;

    #[test]
    fn reads_nvidia_cuda_manifest() {
        let base = Location::parse("https://developer.download.nvidia.com").unwrap();
        let m = cuda_manifest(&base, "12.8.1");
        let r = Redist::parse(&m, CUDA.as_bytes()).unwrap();
        assert_eq!(r.release(), "12.8.1");
        assert_eq!(r.components(), ["cuda_cccl"]);
        let c = r.component("cuda_cccl", "linux-x86_64", None).unwrap();
        assert_eq!(c.version, "12.8.90");
        assert_eq!(c.artifact.size, Some(928524));
        assert_eq!(
            c.artifact.location.to_string(),
            "https://developer.download.nvidia.com/compute/cuda/redist/cuda_cccl/linux-x86_64/cuda_cccl-linux-x86_64-12.8.90-archive.tar.xz"
        );
        assert!(matches!(
            r.component("cuda_cccl", "windows-x86_64", None),
            Err(RedistError::MissingPlatform { .. })
        ));
        assert!(matches!(
            r.component("cuda_nvcc", "linux-x86_64", None),
            Err(RedistError::MissingComponent { .. })
        ));
    }

    #[test]
    fn reads_cudnn_variants() {
        let m = cudnn_manifest(&Location::parse("/srv/mirror").unwrap(), "9.10.0");
        let r = Redist::parse(&m, CUDNN.as_bytes()).unwrap();
        let c = r
            .component("cudnn", "linux-x86_64", Some("cuda12"))
            .unwrap();
        assert_eq!(c.artifact.location, Location::File("/srv/mirror/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-9.10.0.56_cuda12-archive.tar.xz".into()));
        assert!(r
            .component("cudnn", "linux-x86_64", Some("cuda13"))
            .is_err());
    }

    #[test]
    fn rejects_hostile_and_broken_documents() {
        let m = cuda_manifest(&Location::parse("/m").unwrap(), "1");
        assert!(Redist::parse(&m, b"not json").is_err());
        assert!(Redist::parse(&m, b"{}").is_err());
        let evil = CUDA.replace("cuda_cccl/linux-x86_64/cuda_cccl", "../../../etc/cuda_cccl");
        let r = Redist::parse(&m, evil.as_bytes()).unwrap();
        assert!(r.component("cuda_cccl", "linux-x86_64", None).is_err());
        let base = Location::parse("https://m.example/mirror").unwrap();
        let m = cuda_manifest(&base, "1");
        for path in [
            "%2e%2e/%2e%2e/%2e%2e/evil.tar.xz",
            "cuda_cccl/%2E%2E/%2e%2E/../evil.tar.xz",
            r#"cuda_cccl\\..\\..\\evil.tar.xz"#,
            "cuda_cccl/..%5c..%5cevil.tar.xz",
            "cuda_cccl/%2fetc/passwd",
            "cuda_cccl//x",
            "/abs",
        ] {
            let evil = CUDA.replace(
                "cuda_cccl/linux-x86_64/cuda_cccl-linux-x86_64-12.8.90-archive.tar.xz",
                path,
            );
            let r = Redist::parse(&m, evil.as_bytes()).unwrap();
            let err = r.component("cuda_cccl", "linux-x86_64", None).unwrap_err();
            assert!(
                err.to_string().contains("leaves the mirror"),
                "{path}: {err}"
            );
        }
        let m = cuda_manifest(&Location::parse("/m").unwrap(), "1");
        let bad_hash = CUDA.replace("0740e9e01e4f", "zz");
        let r = Redist::parse(&m, bad_hash.as_bytes()).unwrap();
        assert!(r.component("cuda_cccl", "linux-x86_64", None).is_err());
    }
}
