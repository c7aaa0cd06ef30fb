//! `manifests/tensorrt.toml`: TensorRT's Python wheels per CUDA major, for the optional
//! `tensorrt` framework component.

use serde::Deserialize;

use crate::model::version::Version;

/// The whole tensorrt.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorrtManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// The index that serves the `tensorrt-cuNN-libs` wheels (PyPI has only a stub for them).
    pub libs_index: String,
    /// Releases, newest first.
    pub release: Vec<TrtRelease>,
}

/// One TensorRT release for one CUDA major.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrtRelease {
    /// `11.4.0.106`.
    pub version: Version,
    /// The CUDA major its libraries are built for.
    pub cuda_major: u32,
    /// The PyPI package (`tensorrt-cu13`).
    pub package: String,
    /// Oldest Python with bindings (major.minor).
    pub python_min: Version,
    /// Newest Python with bindings (major.minor).
    pub python_max: Version,
    /// Wheel platform tags of the bindings.
    pub platforms: Vec<String>,
    /// Size of the cp312 x86_64 bindings wheel, where recorded.
    #[serde(default)]
    pub bindings_cp312_x86_64_bytes: Option<u64>,
    /// Whether PyPI itself holds the libs wheel (false: only a stub that fetches it).
    pub libs_on_pypi: bool,
    /// Upload date on PyPI.
    pub released: String,
    /// Where the row comes from.
    pub source: String,
}

impl TensorrtManifest {
    /// The newest release for `cuda_major` with bindings for `python` (major.minor).
    pub fn choose(&self, cuda_major: u32, python: &Version) -> Option<&TrtRelease> {
        let py = Version::parse(&python.prefix(2))?;
        self.release
            .iter()
            .filter(|r| r.cuda_major == cuda_major && r.python_min <= py && py <= r.python_max)
            .max_by(|a, b| a.version.cmp(&b.version))
    }

    /// What pip installs for a release: the pinned metadata package, and NVIDIA's index for
    /// the libs wheel when PyPI does not hold it.
    pub fn requirement(&self, r: &TrtRelease) -> (String, Option<String>) {
        (
            format!("{}=={}", r.package, r.version),
            (!r.libs_on_pypi).then(|| self.libs_index.clone()),
        )
    }

    /// The pip requirement (and the extra index, where PyPI lacks the libs) of the TensorRT that
    /// fits a torch build (`cu130`: CUDA 13) and a Python (`3.12.3`).
    pub fn for_torch(
        &self,
        variant: &str,
        python: &str,
    ) -> Result<(String, Option<String>), String> {
        let major = variant
            .strip_prefix("cu")
            .filter(|d| d.len() >= 3 && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d[..d.len() - 1].parse::<u32>().ok())
            .ok_or_else(|| {
                format!("TensorRT needs a CUDA build of torch; this plan installs the `{variant}` build")
            })?;
        let py = Version::parse(python).ok_or_else(|| format!("bad Python version {python}"))?;
        let r = self.choose(major, &py).ok_or_else(|| {
            format!(
                "manifests/tensorrt.toml has no TensorRT for CUDA {major} with Python {} bindings",
                py.prefix(2)
            )
        })?;
        Ok(self.requirement(r))
    }

    /// Problems a schema cannot see, as `(text to find the row by, message)`.
    pub fn problems(&self, cuda_majors: &[u32]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (i, r) in self.release.iter().enumerate() {
            let at = format!("version = \"{}\"", r.version);
            let what = format!("TensorRT {} for CUDA {}", r.version, r.cuda_major);
            if r.package != format!("tensorrt-cu{}", r.cuda_major) {
                out.push((
                    at.clone(),
                    format!("{what}: package should be tensorrt-cu{}", r.cuda_major),
                ));
            }
            if !cuda_majors.contains(&r.cuda_major) {
                out.push((
                    at.clone(),
                    format!("{what}: CUDA {} is not in cuda.toml", r.cuda_major),
                ));
            }
            if r.python_min > r.python_max {
                out.push((at.clone(), format!("{what}: python_min above python_max")));
            }
            if self.release[..i]
                .iter()
                .any(|o| o.version == r.version && o.cuda_major == r.cuda_major)
            {
                out.push((at, format!("{what} is listed twice")));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedded() -> TensorrtManifest {
        toml::from_str(include_str!("../../manifests/tensorrt.toml")).unwrap()
    }

    #[test]
    fn chooses_the_newest_release_for_the_cuda_major_and_python() {
        let m = embedded();
        assert!(
            m.problems(&[12, 13]).is_empty(),
            "{:?}",
            m.problems(&[12, 13])
        );
        let py = |s: &str| Version::parse(s).unwrap();
        let r = m.choose(13, &py("3.12.3")).unwrap();
        assert_eq!(r.package, "tensorrt-cu13");
        assert_eq!(r.version.to_string(), "11.4.0.106");
        let (req, index) = m.requirement(r);
        assert_eq!(req, "tensorrt-cu13==11.4.0.106");
        assert_eq!(index.as_deref(), Some("https://pypi.nvidia.com"));
        // Python 3.14 bindings start with 11.3; CUDA 11 has no TensorRT wheels listed.
        assert_eq!(
            m.choose(12, &py("3.14")).unwrap().version.to_string(),
            "11.4.0.106"
        );
        assert!(m.choose(11, &py("3.12")).is_none());
        assert!(m.choose(13, &py("3.7")).is_none());
        let (req, _) = m.for_torch("cu130", "3.12.3").unwrap();
        assert_eq!(req, "tensorrt-cu13==11.4.0.106");
        assert_eq!(
            m.for_torch("cu128", "3.12").unwrap().0,
            "tensorrt-cu12==11.4.0.106"
        );
        assert!(m
            .for_torch("cpu", "3.12")
            .unwrap_err()
            .contains("CUDA build of torch"));
        assert!(m
            .for_torch("cu118", "3.12")
            .unwrap_err()
            .contains("no TensorRT for CUDA 11"));
    }

    #[test]
    fn problems_are_found() {
        let mut m = embedded();
        m.release[0].package = "tensorrt".into();
        let dup = m.release[1].clone();
        m.release.push(dup);
        let p = m.problems(&[13]);
        assert!(
            p.iter().any(|(_, m)| m.contains("package should be")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|(_, m)| m.contains("CUDA 12 is not in cuda.toml")),
            "{p:?}"
        );
        assert!(p.iter().any(|(_, m)| m.contains("listed twice")), "{p:?}");
    }
}
