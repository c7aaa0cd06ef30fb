//! The arguments that several commands share, parsed once: where bytes come from
//! ([`SourceArgs`]), the framework's indexes ([`IndexArgs`]), what to set up ([`StackArgs`]),
//! and `--config` ([`load_config`]). Each becomes a layer of settings ([`source_options`]).

use std::path::Path;

use clap::Args;

use crate::error::Result;
use crate::model::request::{DriverPolicy, Profile, SourceKind, TorchSource};
use crate::model::version::VersionPin;
use crate::settings::file::Config;
use crate::settings::resolve::{check_location, check_pin};
use crate::settings::{InstallOptions, SettingsError};
use crate::world::process::Process;

/// Where bytes come from (shared by install and mirror create).
#[derive(Debug, Clone, Args)]
pub struct SourceArgs {
    /// Fetch from NVIDIA's redistributable archives, or from NVIDIA's wheels on a package index
    /// [default: the archives where NVIDIA's server answers, else its CUDA 13+ wheels from PyPI;
    /// a --mirror means redist]
    #[arg(long, value_enum)]
    pub source: Option<SourceKind>,
    /// A copy of NVIDIA's download layout (https://…, http://…, file://… or a directory), e.g.
    /// one made by `cudaup mirror create` [default: https://developer.download.nvidia.com]
    #[arg(long, value_name = "URL|DIR")]
    pub mirror: Option<String>,
    /// The package index for `--source wheels` (PEP 691/503: PyPI or any mirror of it, or a
    /// directory laid out the same way) [default: https://pypi.org/simple]
    #[arg(long, value_name = "URL|DIR")]
    pub index_url: Option<String>,
    /// Accept a plain-http mirror. Its bytes are still checked against the sha256s in its
    /// manifests, but nothing proves those manifests are the mirror's own
    #[arg(long)]
    pub allow_http: bool,
}

/// `--torch-source`'s values, listed in `--help`.
pub fn torch_source_parser() -> impl clap::builder::TypedValueParser<Value = TorchSource> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["auto", "pytorch", "pypi"])
        .map(|s| s.parse::<TorchSource>().expect("a listed value"))
}

/// The framework's indexes (shared by install, mirror create and plan).
#[derive(Debug, Clone, Args)]
pub struct IndexArgs {
    /// PyPI or a mirror of it (a URL, a PEP 503 directory or a flat folder of wheels), for
    /// TensorFlow, the frameworks' dependencies, PyTorch when the planned build is PyPI's, and
    /// NVIDIA's CUDA wheels when the toolkit comes as wheels without --index-url
    /// [default: https://pypi.org/simple]
    #[arg(long, value_name = "URL|DIR")]
    pub pypi_index: Option<String>,
    /// PyTorch's wheel index or a copy of its layout (`<base>/<variant>/<project>/`, a flat
    /// `<base>/<variant>/` listing, or one variant's index), a URL or a directory
    /// [default: https://download.pytorch.org/whl]
    #[arg(long, value_name = "URL|DIR")]
    pub torch_index: Option<String>,
    /// Which index may serve PyTorch: auto (ask PyTorch's index and PyPI with a short timeout,
    /// take the first that has the planned build), pytorch, or pypi (only when the planned build
    /// is the one PyPI serves) [default: auto]
    #[arg(long, value_name = "SOURCE", value_parser = torch_source_parser())]
    pub torch_source: Option<TorchSource>,
}

impl IndexArgs {
    /// The indexes as one layer of settings, each location checked as its config key is.
    pub fn options(&self, process: &Process) -> Result<InstallOptions> {
        let cwd = process.cwd();
        let location = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|v| check_location(flag, v, cwd))
                .transpose()
        };
        Ok(InstallOptions {
            pypi_index: location("--pypi-index", &self.pypi_index)?,
            torch_index: location("--torch-index", &self.torch_index)?,
            torch_source: self.torch_source,
            ..InstallOptions::default()
        })
    }
}

/// The flags where bytes come from (shared by install and mirror create), over the indexes' and
/// the stack's flags, each location checked as its config key is.
pub fn source_options(
    source: &SourceArgs,
    index: &IndexArgs,
    stack: &StackArgs,
    process: &Process,
) -> Result<InstallOptions> {
    let cwd = process.cwd();
    let location = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|v| check_location(flag, v, cwd))
            .transpose()
    };
    let mirror = location("--mirror", &source.mirror)?;
    let index_url = location("--index-url", &source.index_url)?;
    let indexes = index.options(process)?;
    Ok(InstallOptions {
        source: source.source,
        mirror,
        index_url,
        pypi_index: indexes.pypi_index,
        torch_index: indexes.torch_index,
        torch_source: indexes.torch_source,
        allow_http: source.allow_http.then_some(true),
        ..stack.options()?
    })
}

/// What to set up: the profile, pins and driver policy (shared by plan, install and mirror).
#[derive(Debug, Clone, Args)]
pub struct StackArgs {
    /// What to set up: full (driver + CUDA + cuDNN + PyTorch), pytorch, tensorflow, jax, cuda-dev,
    /// cpu [default: full]
    #[arg(long, value_enum)]
    pub profile: Option<Profile>,
    /// Pin the CUDA version (toolkit and wheel), e.g. 12.8 or 12.8.1
    #[arg(long, value_name = "VERSION")]
    pub cuda: Option<String>,
    /// Pin cuDNN, e.g. 9.10
    #[arg(long, value_name = "VERSION")]
    pub cudnn: Option<String>,
    /// Pin PyTorch, e.g. 2.8
    #[arg(long, value_name = "VERSION")]
    pub torch: Option<String>,
    /// Pin TensorFlow, e.g. 2.20
    #[arg(long, value_name = "VERSION")]
    pub tensorflow: Option<String>,
    /// Pin JAX, e.g. 0.12 (the jax, jaxlib and CUDA plugin release)
    #[arg(long, value_name = "VERSION")]
    pub jax: Option<String>,
    /// Pin Python, e.g. 3.12
    #[arg(long, value_name = "VERSION")]
    pub python: Option<String>,
    /// Driver policy: keep (never change it), latest (newest branch every GPU supports), or a
    /// version such as 580.95.05 [default: keep the installed driver when a good stack fits it,
    /// otherwise the newest branch every GPU supports]
    #[arg(long, value_name = "POLICY")]
    pub driver: Option<String>,
    /// The toolkit's components: minimal, standard or complete, or a comma-separated list of
    /// sets and components, `-name` leaving one out (`standard,-npp,cufile`) [default: standard]
    #[arg(long, value_name = "SET|LIST")]
    pub components: Option<String>,
    /// Go on with a framework whose exact cuDNN pin the catalog has no row for (its GPU support
    /// is then unverified, and the plan says so) instead of refusing it; a release known to fail
    /// on a GPU is still refused
    #[arg(long)]
    pub allow_unverified: bool,
}

impl StackArgs {
    /// The profile, pins, driver policy and components as one layer of settings, each value
    /// parsed once (a bad one names its flag).
    pub fn options(&self) -> Result<InstallOptions> {
        let pin = |flag: &str, v: &Option<String>| -> Result<Option<VersionPin>> {
            Ok(v.as_deref().map(|v| check_pin(flag, v)).transpose()?)
        };
        let driver = match &self.driver {
            Some(d) => Some(
                d.parse::<DriverPolicy>()
                    .map_err(|e| SettingsError::invalid("--driver", d, e))?,
            ),
            None => None,
        };
        Ok(InstallOptions {
            profile: self.profile,
            cuda: pin("--cuda", &self.cuda)?,
            cudnn: pin("--cudnn", &self.cudnn)?,
            torch: pin("--torch", &self.torch)?,
            tensorflow: pin("--tensorflow", &self.tensorflow)?,
            jax: pin("--jax", &self.jax)?,
            python: pin("--python", &self.python)?,
            driver,
            components: self.components.clone(),
            allow_unverified: self.allow_unverified.then_some(true),
            ..InstallOptions::default()
        })
    }
}

/// Reads `--config` (exit code 2 with FILE:LINE:COLUMN when it is broken).
pub fn load_config(path: Option<&Path>) -> Result<Option<Config>> {
    Ok(path
        .map(Config::load)
        .transpose()
        .map_err(SettingsError::from)?)
}
