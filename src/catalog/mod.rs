//! The compatibility catalog: `manifests/*.toml`, embedded in the binary, replaceable with
//! `--manifests DIR` (env `CUDAUP_MANIFESTS`). Facts live here as data, never in `match` arms.

mod bench;
mod check;
mod components;
mod cross;
mod cuda;
mod cudnn;
mod date;
mod driver_support;
mod drivers;
mod gpus;
mod jax;
mod jetson;
mod meta;
mod pytorch;
pub mod select;
mod spec;
mod tensorflow;
mod tensorrt;
pub mod update;
pub mod uv;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

pub use bench::{BenchManifest, Reference, Workload};
pub use check::{check, Problem};
pub use components::{
    ComponentDef, ComponentSelection, ComponentsManifest, SizeEstimate, WheelPin, WheelRelease,
    DEFAULT_SET,
};
pub use cuda::{
    CudaMajor, CudaManifest, CudaRelease, CudaSeries, Platform, SassFamily, DEFAULT_PLATFORM,
};
pub use cudnn::{CudnnBuild, CudnnManifest, CudnnRelease};
pub use date::Date;
pub use driver_support::{parse_run, DriverSupport, Listing, ReadRelease, SupportedGpu};
pub use drivers::{
    ArchitectureDrivers, Branch, DriverManifest, GpuFloor, OpenModule, PackageRule, Preference,
    UnlistedEnded,
};
pub use gpus::{Chip, Device, DeviceRange, GpuTable, KnownGpu};
pub use jax::{JaxCuda, JaxManifest, JaxPlugin, JaxRelease};
pub use jetson::{JetsonManifest, JetsonModule, JetsonRelease, JetsonTorch, TorchKind};
pub use meta::{CatalogMeta, Part, Probe};
pub use pytorch::{
    requires_python, Kernels, LastLine, PytorchManifest, RequiresPython, TorchRelease, TorchVariant,
};
pub use select::{select, Selection};
pub use spec::{Clause, Op, Requirement, Spec};
pub use tensorflow::{TensorflowManifest, TfKnownFailure, TfPlatform, TfRelease};
pub use tensorrt::{TensorrtManifest, TrtRelease};

/// A catalog older than this many days makes `plan` suggest `cudaup manifests update`.
pub const STALE_AFTER_DAYS: i64 = 90;

/// The manifests compiled into the binary, by file name.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("catalog.toml", include_str!("../../manifests/catalog.toml")),
    ("gpus.toml", include_str!("../../manifests/gpus.toml")),
    ("cuda.toml", include_str!("../../manifests/cuda.toml")),
    ("drivers.toml", include_str!("../../manifests/drivers.toml")),
    (
        "driver_support.toml",
        include_str!("../../manifests/driver_support.toml"),
    ),
    ("cudnn.toml", include_str!("../../manifests/cudnn.toml")),
    ("pytorch.toml", include_str!("../../manifests/pytorch.toml")),
    (
        "tensorflow.toml",
        include_str!("../../manifests/tensorflow.toml"),
    ),
    ("jax.toml", include_str!("../../manifests/jax.toml")),
    (
        "components.toml",
        include_str!("../../manifests/components.toml"),
    ),
    ("bench.toml", include_str!("../../manifests/bench.toml")),
    ("jetson.toml", include_str!("../../manifests/jetson.toml")),
    (
        "tensorrt.toml",
        include_str!("../../manifests/tensorrt.toml"),
    ),
    ("uv.toml", include_str!("../../manifests/uv.toml")),
];

/// Where the catalog is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The copy compiled into the binary.
    Embedded,
    /// A directory holding the same file names.
    Dir(PathBuf),
}

/// The loaded catalog.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// PCI device → chip → architecture and compute capability.
    pub gpus: GpuTable,
    /// CUDA toolkit releases.
    pub cuda: CudaManifest,
    /// Driver branches and packages.
    pub drivers: DriverManifest,
    /// Which driver releases' supported-GPU tables list each GPU.
    pub driver_support: DriverSupport,
    /// cuDNN builds.
    pub cudnn: CudnnManifest,
    /// PyTorch releases.
    pub pytorch: PytorchManifest,
    /// TensorFlow releases.
    pub tensorflow: TensorflowManifest,
    /// JAX releases and their CUDA plugins.
    pub jax: JaxManifest,
    /// Toolkit components, their sets, and the wheel pins per CUDA release.
    pub components: ComponentsManifest,
    /// Reference throughput for `cudaup bench`.
    pub bench: BenchManifest,
    /// TensorRT's wheels per CUDA major.
    pub tensorrt: TensorrtManifest,
    /// Jetson modules and the JetPack releases that carry their stack.
    pub jetson: JetsonManifest,
    /// The uv cudaup brings.
    pub uv: uv::UvPin,
    /// The catalog's date and sources.
    pub meta: CatalogMeta,
    /// Where it was read from, for `plan` and `manifests status` (`embedded`, a directory).
    pub origin: String,
    /// What the user should know about the choice of catalog (a refreshed one not used).
    pub notes: Vec<String>,
}

/// A catalog that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A manifest in the catalog could not be read or does not fit the schema.
    #[error("manifest {path}: {message}")]
    Manifest {
        /// The manifest file (or `<embedded>/name.toml`).
        path: PathBuf,
        /// What is wrong, with line and column where known.
        message: String,
    },
}

impl Catalog {
    /// Loads every manifest from `source`.
    pub fn load(source: &Source) -> Result<Self, CatalogError> {
        Ok(Self {
            gpus: load_one(source, "gpus.toml")?,
            cuda: load_one(source, "cuda.toml")?,
            drivers: load_one(source, "drivers.toml")?,
            driver_support: load_one(source, "driver_support.toml")?,
            cudnn: load_one(source, "cudnn.toml")?,
            pytorch: load_one(source, "pytorch.toml")?,
            tensorflow: load_one(source, "tensorflow.toml")?,
            jax: load_one(source, "jax.toml")?,
            components: load_one(source, "components.toml")?,
            bench: load_one(source, "bench.toml")?,
            tensorrt: load_one(source, "tensorrt.toml")?,
            jetson: load_one(source, "jetson.toml")?,
            uv: load_uv(source)?,
            meta: load_one(source, "catalog.toml")?,
            origin: match source {
                Source::Embedded => "embedded".to_owned(),
                Source::Dir(d) => d.display().to_string(),
            },
            notes: Vec::new(),
        })
    }

    /// The embedded catalog. It is validated by the test suite, so failing here is a build bug.
    pub fn embedded() -> Self {
        Self::load(&Source::Embedded).expect("the embedded catalog is valid (tested)")
    }

    /// How many days old the catalog is on `today`.
    pub fn age_days(&self, today: &Date) -> i64 {
        self.meta.date.days_until(today)
    }
}

/// The text of one embedded manifest.
pub fn embedded_text(name: &str) -> Option<&'static str> {
    EMBEDDED.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// `uv.toml`, parsed and checked ([`uv::UvPin::check`]).
fn load_uv(source: &Source) -> Result<uv::UvPin, CatalogError> {
    let pin: uv::UvPin = load_one(source, "uv.toml")?;
    pin.check().map_err(|message| CatalogError::Manifest {
        path: match source {
            Source::Embedded => Path::new("<embedded>/manifests").join("uv.toml"),
            Source::Dir(d) => d.join("uv.toml"),
        },
        message,
    })?;
    Ok(pin)
}

/// Reads and parses one manifest file, naming the file and position of any error.
fn load_one<T: DeserializeOwned>(source: &Source, name: &str) -> Result<T, CatalogError> {
    let (path, text) = match source {
        Source::Embedded => {
            let text = EMBEDDED
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| (*t).to_owned())
                .expect("every manifest name is embedded");
            (Path::new("<embedded>/manifests").join(name), text)
        }
        Source::Dir(dir) => {
            let path = dir.join(name);
            let text = fs_err::read_to_string(&path).map_err(|e| CatalogError::Manifest {
                path: path.clone(),
                message: format!("cannot read it: {}", e.kind()),
            })?;
            (path, text)
        }
    };
    toml::from_str(&text).map_err(|e| CatalogError::Manifest {
        message: describe_toml_error(&text, &e),
        path,
    })
}

/// `line L, column C: message`, from a TOML error's byte span.
pub(crate) fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let (line, col) = line_col(text, span.start);
            format!("line {line}, column {col}: {}", e.message())
        }
        None => e.message().to_owned(),
    }
}

/// One-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalog_loads() {
        let c = Catalog::load(&Source::Embedded).unwrap();
        assert!(!c.gpus.device.is_empty());
        assert!(!c.cuda.release.is_empty());
    }

    #[test]
    fn broken_manifest_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in EMBEDDED {
            fs_err::write(dir.path().join(name), text).unwrap();
        }
        fs_err::write(
            dir.path().join("cuda.toml"),
            "schema_version = 1\n[[release]]\nversion = 12\n",
        )
        .unwrap();
        let err = Catalog::load(&Source::Dir(dir.path().into())).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("cuda.toml"), "{msg}");
        assert!(msg.contains("line 3"), "{msg}");
    }
}
