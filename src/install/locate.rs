//! Everything an install reads from the world before anything changes: the driver step's
//! commands (`/etc/os-release`), cudaup's own copy, an offline bundle, the toolkit's source and
//! its archives, the framework's route. [`locate`] turns an [`InstallPlan`] into a [`Located`]
//! with no change made, so a machine that cannot reach a source is told so with nothing done.
//! [`Net`] holds the download settings, read once from the environment, and the fetcher that
//! probes routes; every fetcher of an install is made from it.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::detect::Root;
use crate::fetch::{FetchError, Fetcher, GivenLocation, Location};
use crate::model::request::{SourceKind, WithComponent};
use crate::settings::{InstallSettings, SettingsError};
use crate::sources::{pypi, redist};
use crate::world::process::Process;
use crate::world::progress::Reporter;

use super::driver::DriverStep;
use super::home::Home;
use super::plan::{InstallPlan, ToolkitPlan};
use super::python::bundle::BundleManifest;
use super::python::route::IndexSettings;
use super::python::step::{Expect, FrameworkStep};
use super::python::PyEnvError;
use super::self_copy::{Planned as SelfCopyPlan, SelfCopyError};
use super::{InstallError, Receipt, Resolved, Source, ToolkitSpec};

/// The network of one command: the download settings, read once, and the route prober.
pub struct Net {
    settings: crate::fetch::Settings,
    probe_settings: crate::fetch::Settings,
    probe: Fetcher,
    cancel: Arc<AtomicBool>,
}

impl Net {
    /// Reads the `CUDAUP_HTTP_*` settings once; `cache` is the home's download cache.
    pub fn new(
        process: &Process,
        cache: &Path,
        allow_http: bool,
        cancel: Arc<AtomicBool>,
    ) -> Result<Net, SettingsError> {
        let settings = crate::settings::net::settings(process, cache, allow_http)?;
        let probe_settings = crate::settings::net::probe_settings(process, cache, allow_http)?;
        Ok(Net {
            settings,
            probe: Fetcher::new(
                probe_settings.clone(),
                cancel.clone(),
                Arc::new(crate::world::progress::Silent),
            ),
            probe_settings,
            cancel,
        })
    }

    /// The probe, refusing plain http whatever the command allowed: what an install on the
    /// target asks a bundle with (`mirror create` checks its bundle so).
    pub fn strict_probe(&self) -> Fetcher {
        let mut settings = self.probe_settings.clone();
        settings.allow_http = false;
        Fetcher::new(
            settings,
            self.cancel.clone(),
            Arc::new(crate::world::progress::Silent),
        )
    }

    /// The fetcher that asks routes and mirrors (one attempt, short timeouts).
    pub fn probe(&self) -> &Fetcher {
        &self.probe
    }

    /// A downloading fetcher that reports to `reporter`.
    pub fn fetcher(&self, reporter: Arc<dyn Reporter>) -> Fetcher {
        Fetcher::new(self.settings.clone(), self.cancel.clone(), reporter)
    }

    /// A downloading fetcher that reports nothing (listings, manifests).
    pub fn quiet(&self) -> Fetcher {
        self.fetcher(Arc::new(crate::world::progress::Silent))
    }
}

/// Why the world could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// A variable or location is unusable.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A source could not be read.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The toolkit cannot be had from its source, or its prefix cannot be used.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// The framework cannot be had.
    #[error(transparent)]
    PyEnv(#[from] PyEnvError),
    /// cudaup's own copy cannot go where it goes.
    #[error("{0}")]
    SelfCopy(SelfCopyError),
    /// The catalog has nothing for the request (TensorRT for this torch).
    #[error("{0}")]
    Unsupported(String),
}

impl From<SelfCopyError> for LocateError {
    fn from(e: SelfCopyError) -> Self {
        LocateError::SelfCopy(e)
    }
}

/// The driver step, as found.
#[derive(Debug)]
pub enum DriverLocated {
    /// The commands that install it.
    Ready(DriverStep),
    /// Why it cannot be installed automatically (the rest is installed anyway).
    Blocked(String),
}

/// The toolkit to install, with its archives.
#[derive(Debug)]
pub struct LocatedToolkit {
    /// What, from where, to where.
    pub spec: ToolkitSpec,
    /// The archives or wheels, and what the source does not have.
    pub resolved: Resolved,
    /// Why the source was chosen, when cudaup chose it (`--source auto`).
    pub source_note: Option<String>,
}

/// What the world said, before anything changed.
#[derive(Debug)]
pub struct Located {
    /// The driver step, when the plan changes the driver here.
    pub driver: Option<DriverLocated>,
    /// cudaup's own copy.
    pub self_copy: SelfCopyPlan,
    /// The receipt inside a kept toolkit, when cudaup installed it.
    pub kept_receipt: Option<Receipt>,
    /// The toolkit to install.
    pub toolkit: Option<LocatedToolkit>,
    /// The framework step, its route asked.
    pub framework: Option<FrameworkStep>,
}

/// Asks the world what `plan` needs: nothing changes. The framework's check runs on this
/// machine when the plan is for it, it has an NVIDIA GPU and its driver stays.
pub fn locate(
    plan: &InstallPlan,
    net: &Net,
    catalog: &Catalog,
    process: &Process,
    home: &Home,
    root: &Root,
) -> Result<Located, LocateError> {
    let s = &plan.settings;
    let system = &plan.system;
    // A file of the user's where cudaup's copy goes stops the install before anything changes.
    let self_copy = super::self_copy::plan(process, home.root())?;
    let driver =
        plan.driver
            .as_ref()
            .map(|d| match super::driver::prepare(system, d, catalog, root) {
                Ok(step) => DriverLocated::Ready(step),
                Err(e) => DriverLocated::Blocked(e.to_string()),
            });
    // An offline bundle at --index-url or --mirror serves the toolkit and the framework.
    let bundle = find_bundle(s, net);
    let mut kept_receipt = None;
    let mut toolkit = None;
    match &plan.toolkit {
        None => {}
        Some(ToolkitPlan::Keep { path, .. }) => {
            kept_receipt = Receipt::read(path).ok().flatten();
        }
        Some(ToolkitPlan::Install {
            cuda,
            cudnn,
            prefix,
            arch,
            components,
        }) => {
            let windows = system.os.family == crate::model::system::OsFamily::Windows;
            // Windows: NVIDIA's wheels are the route cudaup installs there (not yet its
            // Windows archives), so NVIDIA's site is not asked.
            let auto = if windows {
                None
            } else {
                auto_source(s, bundle.as_ref(), net, cuda)?
            };
            let (source, source_note) = match auto {
                Some(chosen) => chosen,
                None => (
                    source_for(s, bundle.as_ref().map(|(_, m)| m), windows)?,
                    None,
                ),
            };
            let spec = ToolkitSpec {
                cuda: cuda.clone(),
                cudnn: cudnn.clone(),
                prefix: prefix.clone(),
                source,
                arch: arch.clone(),
                os: system.os.family,
                max_unpacked: crate::settings::net::max_unpacked(process)?,
                register_in: Some(home.root().to_owned()),
            };
            // The real run's checks, in the dry run too (exit 2 for `/`, `/usr`, ...).
            super::transaction::usable_prefix(&spec.prefix, Some(home))?;
            let meta = net.quiet();
            let resolved = super::resolve_items(&meta, catalog, &spec, components)?;
            super::space::check(meta.cache(), &spec.prefix, &resolved.items)?;
            toolkit = Some(LocatedToolkit {
                spec,
                resolved,
                source_note,
            });
        }
    }
    // The framework: its route is asked before anything changes, so a machine that cannot
    // reach it is told so (exit 3) with nothing made.
    let indexes = index_settings(s, bundle.as_ref());
    refuse_plain_http(&indexes, s.allow_http)?;
    let mut framework = super::python::step::step(
        &plan.plan,
        plan.framework.as_ref().map(|f| &f.want),
        plan.framework.as_ref().is_some_and(|f| f.gpus_here),
        system,
        plan.venv.clone(),
        &indexes,
    )?;
    if let Some(f) = framework.as_mut() {
        f.choose_route(net.probe())?;
        // The real run's room check, in the dry run too, before the installer downloads.
        if let Some(route) = f.route.as_ref().filter(|_| f.packages.is_some()) {
            let local = route.base.as_path().is_some();
            super::space::check_framework(&home.cache(), &f.venv.dir, route.wheel_size, local)?;
        }
    }
    if s.with.contains(&WithComponent::Tensorrt) {
        add_tensorrt(framework.as_mut(), catalog, indexes.pypi_base().as_str())?;
    }
    // A locked install hands the installer the lock's hashes for everything it installs.
    let hashed = plan.framework.as_ref().map(|f| &f.hashed);
    if let (Some(p), Some(hashed)) = (
        framework.as_mut().and_then(|f| f.packages.as_mut()),
        hashed.filter(|h| !h.is_empty()),
    ) {
        p.hashed = hashed.clone();
    }
    Ok(Located {
        driver,
        self_copy,
        kept_receipt,
        toolkit,
        framework,
    })
}

/// A local offline bundle at the settings' `index_url` or `mirror` (its manifest is there).
pub fn local_bundle(s: &InstallSettings) -> Option<(PathBuf, BundleManifest)> {
    [&s.index_url, &s.mirror]
        .into_iter()
        .flatten()
        .filter_map(GivenLocation::as_path)
        .find_map(|dir| super::python::bundle::read_dir(dir).map(|m| (dir.to_owned(), m)))
}

/// The toolkit's source (wheels from `index_url`, else `mirror`, else `pypi_index`, else PyPI);
/// an offline bundle found at `index_url` or `mirror` says how its toolkit is stored when
/// `--source` does not; else NVIDIA's archives, or its wheels for a `windows` machine.
pub fn source_for(
    s: &InstallSettings,
    bundle: Option<&BundleManifest>,
    windows: bool,
) -> Result<Source, FetchError> {
    let bundled = bundle.and_then(|m| m.toolkit.as_ref()).map(|t| {
        if t.source == "wheels" {
            SourceKind::Wheels
        } else {
            SourceKind::Redist
        }
    });
    // The user's location as it was parsed when it was checked; a default is a constant's.
    let given = |l: Option<&GivenLocation>, default: &str| match l {
        Some(l) => Ok(l.location().clone()),
        None => Location::parse(default),
    };
    let default = if windows {
        SourceKind::Wheels
    } else {
        SourceKind::Redist
    };
    Ok(match s.source.or(bundled).unwrap_or(default) {
        SourceKind::Redist => Source::Redist(given(s.mirror.as_ref(), redist::NVIDIA_BASE)?),
        SourceKind::Wheels => Source::Wheels(given(
            s.index_url
                .as_ref()
                .or(s.mirror.as_ref())
                .or(s.pypi_index.as_ref()),
            pypi::PYPI_SIMPLE,
        )?),
    })
}

/// `--source auto` when nothing chose the toolkit's source (no `--source`, mirror, index or
/// bundle): NVIDIA's archives where NVIDIA answers, else its CUDA wheels from PyPI or the
/// `--pypi-index` given ([`super::source_choice::auto`]). `None` when something else chose.
fn auto_source(
    s: &InstallSettings,
    bundle: Option<&(GivenLocation, BundleManifest)>,
    net: &Net,
    cuda: &crate::model::version::Version,
) -> Result<Option<(Source, Option<String>)>, FetchError> {
    if s.source.is_some() || bundle.is_some() || s.mirror.is_some() || s.index_url.is_some() {
        return Ok(None);
    }
    let nvidia = Location::parse(redist::NVIDIA_BASE)?;
    // PyPI, or the PyPI mirror the user named: the site `reach` asked for these wheels.
    let index = match &s.pypi_index {
        Some(given) => given.location().clone(),
        None => Location::parse(pypi::PYPI_SIMPLE)?,
    };
    Ok(Some(super::source_choice::auto(
        net.probe(),
        &nvidia,
        &index,
        cuda,
    )?))
}

/// An offline bundle at `index_url` or `mirror`: a directory, or an http(s) mirror serving one
/// (asked for its manifest with the probe's short timeout).
fn find_bundle(s: &InstallSettings, net: &Net) -> Option<(GivenLocation, BundleManifest)> {
    if let Some((dir, m)) = local_bundle(s) {
        return Some((GivenLocation::dir(&dir), m));
    }
    [&s.index_url, &s.mirror]
        .into_iter()
        .flatten()
        .filter(|u| u.is_http())
        .find_map(|u| {
            super::python::bundle::read(net.probe(), u.location()).map(|m| (u.clone(), m))
        })
}

/// A framework index given as plain http, without `--allow-http`, is refused (the hop a
/// download would take unencrypted is named).
pub(super) fn refuse_plain_http(
    indexes: &IndexSettings,
    allow_http: bool,
) -> Result<(), FetchError> {
    match [&indexes.pypi, &indexes.torch]
        .into_iter()
        .flatten()
        .find(|url| url.is_plain_http() && !allow_http)
    {
        Some(url) => Err(FetchError::InsecureHttp {
            url: url.to_string(),
        }),
        None => Ok(()),
    }
}

/// The framework's index settings: the flags (and their variables), and the offline bundle
/// found at `--index-url` or `--mirror` when it holds a framework.
pub(super) fn index_settings(
    s: &InstallSettings,
    bundle: Option<&(GivenLocation, BundleManifest)>,
) -> IndexSettings {
    IndexSettings {
        pypi: s.pypi_index.clone(),
        torch: s.torch_index.clone(),
        source: s.torch_source,
        bundle: bundle
            .filter(|(_, m)| m.framework.is_some())
            .map(|(at, _)| at.clone()),
    }
}

/// Adds TensorRT for the planned torch's CUDA major to the framework step (the plan checked
/// that the profile has PyTorch: TensorRT's wheel goes with PyTorch only).
fn add_tensorrt(
    step: Option<&mut FrameworkStep>,
    catalog: &Catalog,
    pypi: &str,
) -> Result<(), LocateError> {
    let Some(step) = step else { return Ok(()) };
    let Expect::Torch(torch) = &step.expect else {
        return Ok(());
    };
    let (requirement, libs_index) = catalog
        .tensorrt
        .for_torch(&torch.variant, &step.python_version)
        .map_err(LocateError::Unsupported)?;
    let packages = step
        .packages
        .get_or_insert_with(|| super::python::Packages {
            index_url: pypi.to_owned(),
            ..Default::default()
        });
    packages.requirements.push(requirement);
    packages.extra_index_urls.extend(libs_index);
    Ok(())
}
