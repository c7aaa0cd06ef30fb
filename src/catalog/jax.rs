//! `manifests/jax.toml`: JAX releases, the CUDA plugins their `cudaNN` extras bring, and the GPUs
//! each CUDA major of those plugins serves.

use serde::Deserialize;

use super::{Date, Requirement};
use crate::model::version::Version;

/// The whole jax.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// What a plugin of each CUDA major needs of the GPU.
    pub cuda: Vec<JaxCuda>,
    /// Releases, newest first.
    pub release: Vec<JaxRelease>,
}

/// One CUDA major JAX publishes plugins for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxCuda {
    /// `13`.
    pub major: u32,
    /// The extra of `jax` that installs it (`cuda13`).
    pub extra: String,
    /// The oldest compute capability JAX supports on it.
    pub sm_min: Version,
    /// Where the row comes from.
    pub source: String,
}

/// One JAX release (`jax` and `jaxlib` share the version).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxRelease {
    /// `0.12.0.1`.
    pub version: Version,
    /// Oldest Python (major.minor), from Requires-Python.
    pub python_min: Version,
    /// Newest Python with a jaxlib wheel (major.minor).
    pub python_max: Version,
    /// The CUDA plugins its extras pin.
    pub plugin: Vec<JaxPlugin>,
    /// When the row was read from `source`.
    pub derived: Option<Date>,
    /// Where the row comes from.
    pub source: String,
}

/// `jax-cudaNN-plugin` as one release's `cudaNN` extra pins it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JaxPlugin {
    /// The CUDA major (`13`).
    pub cuda: u32,
    /// The plugin's version (the extra pins it exactly).
    pub version: Version,
    /// The `jax-cudaNN-pjrt` version the plugin pins.
    pub pjrt: Version,
    /// The `with-cuda` extra's requirements as the wheel's METADATA states them: floors pip floats
    /// to the newest.
    pub with_cuda_requires: Vec<String>,
    /// Where the row comes from.
    pub source: String,
}

impl JaxManifest {
    /// What plugins of CUDA major `major` need, when the catalog says.
    pub fn cuda_major(&self, major: u32) -> Option<&JaxCuda> {
        self.cuda.iter().find(|c| c.major == major)
    }

    /// Rows that do not hold together, as (needle, message) for `manifests check`.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for r in &self.release {
            if r.python_min > r.python_max {
                out.push((
                    format!("version = \"{}\"", r.version),
                    format!(
                        "python_min {} is above python_max {}",
                        r.python_min, r.python_max
                    ),
                ));
            }
            for p in &r.plugin {
                if self.cuda_major(p.cuda).is_none() {
                    out.push((
                        format!("version = \"{}\"", r.version),
                        format!(
                            "a CUDA {} plugin, but no [[cuda]] row for major {}",
                            p.cuda, p.cuda
                        ),
                    ));
                }
                for req in &p.with_cuda_requires {
                    if Requirement::parse(req).is_none() {
                        out.push((
                            req.clone(),
                            format!("`{req}` is not a requirement cudaup can read"),
                        ));
                    }
                }
            }
        }
        out
    }
}

impl JaxPlugin {
    /// The `with-cuda` requirement on distribution `name`, if the extra has one.
    pub fn with_cuda(&self, name: &str) -> Option<Requirement> {
        self.with_cuda_requires
            .iter()
            .filter_map(|r| Requirement::parse(r))
            .find(|r| r.name == name)
    }

    /// The plugin's distribution name (`jax-cuda13-plugin`).
    pub fn name(&self) -> String {
        format!("jax-cuda{}-plugin", self.cuda)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_rows_pin_one_version_and_read_every_requirement() {
        let c = crate::catalog::Catalog::embedded();
        assert!(c.jax.problems().is_empty(), "{:?}", c.jax.problems());
        let newest = &c.jax.release[0];
        assert_eq!(newest.version.to_string(), "0.12.0.1");
        let cu13 = newest.plugin.iter().find(|p| p.cuda == 13).unwrap();
        assert_eq!(cu13.version, newest.version);
        let cudnn = cu13.with_cuda("nvidia-cudnn-cu13").unwrap();
        assert_eq!(cudnn.to_string(), "nvidia-cudnn-cu13<10.0,>=9.12.0.46");
        assert_eq!(c.jax.cuda_major(13).unwrap().sm_min.to_string(), "7.5");
        assert_eq!(c.jax.cuda_major(12).unwrap().sm_min.to_string(), "5.2");
    }
}
