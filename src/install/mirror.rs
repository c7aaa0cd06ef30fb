//! `cudaup mirror create` on the install's plan: [`create`] downloads everything an
//! [`InstallPlan`] needs into a directory, for a machine without network. The toolkit goes in
//! NVIDIA's layout (the redistrib JSONs byte for byte and every archive, verified) or, with
//! `--source wheels`, as NVIDIA's wheels in a PEP 503 tree; the framework goes with every
//! dependency for the target's Python and platform; a manifest (`cudaup-bundle.json`) says what
//! the bundle serves. What a person sees goes through [`MirrorEvents`], which the CLI implements;
//! the typed [`MirrorOutcome`] is what it prints at the end.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::catalog::{Catalog, ComponentSelection};
use crate::fetch::{FetchError, Fetcher, Location};
use crate::model::version::Version;
use crate::settings::SettingsError;
use crate::sources::redist;
use crate::world::process::Process;
use crate::world::progress::Reporter;
use crate::world::runner::Runner;

use super::home::Home;
use super::locate::{local_bundle, source_for, Net};
use super::plan::{InstallPlan, PlanError};
use super::python::bundle::{self, BundleFile, BundleManifest};
use super::python::route::Route;
use super::python::PyEnvError;
use super::run::Progress;
use super::{InstallError, Source, ToolkitSpec};

/// What `mirror create` is asked besides the plan.
#[derive(Debug, Clone)]
pub struct MirrorOptions {
    /// The directory to fill (created if needed; existing files are checked, not refetched).
    pub dir: PathBuf,
    /// The machine architectures to mirror the toolkit for (empty: the planned machine's).
    pub arches: Vec<String>,
    /// The target's glibc (`--glibc`), which decides the manylinux wheels it can run.
    pub glibc: Option<(u32, u32)>,
    /// The plan is for another machine's picture (`--system`): its glibc is not this one's.
    pub picture: bool,
}

/// Why a bundle could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The plan has no toolkit to mirror, or `--components` is unknown.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A variable is unusable (`CUDAUP_MAX_UNPACKED_BYTES`).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A download or a location failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The toolkit's source cannot serve the plan.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// The framework could not be downloaded, or the bundle does not serve it.
    #[error(transparent)]
    PyEnv(#[from] PyEnvError),
    /// No python3 with pip here to download the framework with.
    #[error("mirror create downloads the framework with pip, and no python3 with pip is on PATH here: install python3-pip (or bundle the toolkit alone with --profile cuda-dev)")]
    NoPip,
    /// A manifest names an archive outside the mirror's base (exit 2, as before it was typed).
    #[error("{location} is not under the mirror base {base}")]
    OutsideBase {
        /// The archive's location.
        location: String,
        /// The mirror's base.
        base: String,
    },
    /// Local I/O; the path is in the message.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// What a person sees while a bundle is made; each method may fail writing it.
pub trait MirrorEvents {
    /// The progress display for the toolkit's downloads or the framework's installer.
    fn progress(&mut self, kind: Progress) -> Arc<dyn Reporter>;
    /// A component the toolkit's source does not have.
    fn left_out(&mut self, note: &str) -> io::Result<()>;
    /// The toolkit is in the bundle.
    fn toolkit_done(&mut self, done: &MirroredToolkit) -> io::Result<()>;
    /// The framework is in the bundle.
    fn framework_done(&mut self, done: &MirroredFramework) -> io::Result<()>;
    /// uv's pinned wheel is in the bundle (`file`, `bytes`).
    fn uv_done(&mut self, file: &str, bytes: u64) -> io::Result<()>;
}

/// The toolkit's part of a bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirroredToolkit {
    /// NVIDIA's layout (`Redist`) or its wheels (`Wheels`).
    pub source: Source,
    /// Archives or wheels copied.
    pub count: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The redistrib JSONs copied (none for wheels).
    pub manifests: usize,
}

/// The framework's part of a bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct MirroredFramework {
    /// The route it came from.
    pub route: Route,
    /// The wheels added, every dependency with them.
    pub wheels: usize,
    /// Their bytes.
    pub bytes: u64,
    /// The target's Python.
    pub python: String,
    /// The target's first platform tag.
    pub platform: Option<String>,
    /// pip's log.
    pub log: PathBuf,
}

/// What `mirror create` made.
#[derive(Debug, Clone)]
pub struct MirrorOutcome {
    /// The manifest written into the bundle.
    pub manifest: BundleManifest,
    /// The install flags that read the bundle (`--mirror DIR`, `--index-url DIR`).
    pub install_from: Vec<String>,
}

/// What a bundle is made with.
pub struct MirrorCtx<'a> {
    /// The process (its variables, `PATH`, home).
    pub process: &'a Process,
    /// Runs pip.
    pub runner: &'a dyn Runner,
    /// The catalog the plan was made from.
    pub catalog: &'a Catalog,
    /// `$CUDAUP_HOME` (pip's log goes there).
    pub home: &'a Home,
    /// The fetchers.
    pub net: &'a Net,
    /// What a person sees.
    pub events: &'a mut dyn MirrorEvents,
}

/// Downloads everything `plan` needs into `options.dir`, and writes its manifest.
pub fn create(
    plan: &InstallPlan,
    options: &MirrorOptions,
    ctx: &mut MirrorCtx<'_>,
) -> Result<MirrorOutcome, MirrorError> {
    let (s, system) = (&plan.settings, &plan.system);
    let request = &s.request;
    let arches = if options.arches.is_empty() {
        vec![system.os.arch.clone()]
    } else {
        options.arches.clone()
    };
    let dir = &options.dir;
    fs_err::create_dir_all(dir)?;
    let fetcher = ctx
        .net
        .fetcher(ctx.events.progress(Progress::Download { total: 0 }));
    let mut files: Vec<BundleFile> = bundle::read_dir(dir).map(|m| m.files).unwrap_or_default();
    let mut wheels_added = false;
    let mut toolkit_part = None;
    let mut install_from = Vec::new();

    // The toolkit: NVIDIA's layout (redist) or its wheels in the PEP 503 tree.
    if request.profile.has_toolkit() {
        let (cuda, cudnn, _) = super::plan::toolkit_of(&plan.plan, s.no_cudnn)?;
        let cuda = super::summary::release_for(ctx.catalog, request.pins.cuda.as_ref(), &cuda);
        let selection = super::plan::components(ctx.catalog, s.components.as_deref())?;
        let source = source_for(s, local_bundle(s).map(|(_, m)| m).as_ref(), false)?;
        let toolkit = Toolkit {
            cuda: &cuda,
            cudnn: &cudnn,
            arches: &arches,
            dir,
            selection: &selection,
        };
        let done = match &source {
            Source::Redist(base) => {
                install_from.push(format!("--mirror {}", dir.display()));
                mirror_redist(&fetcher, ctx, base, &toolkit)?
            }
            Source::Wheels(_) => {
                let mut done = MirroredToolkit {
                    source: source.clone(),
                    count: 0,
                    bytes: 0,
                    manifests: 0,
                };
                let mut per_arch = Vec::new();
                for arch in &arches {
                    let spec = mirror_spec(ctx.process, &toolkit, &source, arch)?;
                    let resolved = super::resolve_items(&fetcher, ctx.catalog, &spec, &selection)?;
                    for n in &resolved.notes {
                        ctx.events.left_out(n)?;
                    }
                    per_arch.push(resolved.items);
                }
                // Room for every architecture's wheels, before the first download.
                super::space::check_mirror(fetcher.cache(), dir, &per_arch.concat())?;
                for items in &per_arch {
                    for (id, item) in items.iter().enumerate() {
                        let f = bundle::add_fetched(dir, &fetcher, id, &item.artifact)?;
                        done.bytes += f.size;
                        done.count += 1;
                        files.retain(|k| k.path != f.path);
                        files.push(f);
                    }
                }
                wheels_added = true;
                install_from.push(format!("--index-url {}", dir.display()));
                done
            }
        };
        ctx.events.toolkit_done(&done)?;
        toolkit_part = Some(bundle::BundleToolkit {
            source: match source {
                Source::Redist(_) => "redist".into(),
                Source::Wheels(_) => "wheels".into(),
            },
            cuda: cuda.to_string(),
            cudnn: cudnn.map(|c| c.to_string()),
            arches: arches.clone(),
        });
    }

    // The framework with every dependency, for the target's Python and platform.
    let mut framework_part = None;
    let mut platforms = Vec::new();
    let want = plan.framework.as_ref().map(|f| &f.want);
    if let Some(want) = want {
        let pip =
            bundle::pip_here(ctx.runner, &ctx.process.path_entries()).ok_or(MirrorError::NoPip)?;
        let glibc = match (&options.glibc, options.picture) {
            (Some(g), _) => *g,
            (None, false) => bundle::glibc_of(ctx.runner, &pip).unwrap_or((2, 28)),
            (None, true) => (2, 28),
        };
        platforms = bundle::platform_tags(system, glibc);
        // A bundle is made from the indexes, never from another bundle.
        let settings = super::locate::index_settings(s, None);
        super::locate::refuse_plain_http(&settings, s.allow_http)?;
        let candidates = super::python::route::candidates(want, &settings);
        let log = ctx.home.log("mirror", bundle::now_secs());
        let progress = ctx.events.progress(Progress::Framework);
        let job = bundle::FrameworkJob {
            want,
            candidates: &candidates,
            settings: &settings,
            target: super::python::DownloadTarget {
                python: want.python.clone(),
                platforms: platforms.clone(),
            },
            pip: &pip,
            constraints: plan
                .plan
                .constraints
                .iter()
                .map(|c| c.requirement.clone())
                .collect(),
        };
        let done = {
            let mut session = super::python::Session::new(
                ctx.runner,
                super::python::Tool::Pip,
                log.clone(),
                progress.as_ref(),
            )?;
            bundle::add_framework(dir, &job, ctx.net.probe(), &mut session)
        };
        drop(progress);
        let (route, added) = done?;
        ctx.events.framework_done(&MirroredFramework {
            route: route.clone(),
            wheels: added.len(),
            bytes: added.iter().map(|f| f.size).sum(),
            python: want.python.clone(),
            platform: platforms.first().cloned(),
            log,
        })?;
        for f in added {
            files.retain(|k| k.path != f.path);
            files.push(f);
        }
        wheels_added = true;
        framework_part = Some(bundle::BundleFramework {
            route: route.route,
            from: route.base.to_string(),
            requirements: route.requirements.clone(),
            variant: want.variant.clone(),
        });
        if install_from.is_empty() {
            install_from.push(format!("--index-url {}", dir.display()));
        }
    }
    if want.is_some() {
        // uv's wheel beside the framework's: the install from the bundle then brings cudaup's
        // installer from it, checked against manifests/uv.toml there as here. Without it (an
        // index that lacks it, or bytes that are not the pinned ones) the bundle still serves,
        // and its installs use pip: said, never silent.
        let pin = &ctx.catalog.uv;
        let index = match &s.pypi_index {
            Some(given) => Ok(given.location().clone()),
            None => crate::fetch::Location::parse(crate::sources::pypi::PYPI_SIMPLE),
        };
        // The framework's machine: the bundle's Python wheels are for it alone.
        let arch = &system.os.arch;
        let got = index.map_err(|e| e.to_string()).and_then(|at| {
            crate::install::uv::verified_wheel(pin, arch, &fetcher, &[at])
                .map_err(|e| e.to_string())
        });
        match got {
            Ok((path, wheel)) => {
                let f = bundle::add_wheel(dir, &path, Some(&wheel.filename), Some(&wheel.sha256))?;
                ctx.events.uv_done(&f.path, f.size)?;
                files.retain(|k| k.path != f.path);
                files.push(f);
                wheels_added = true;
            }
            Err(why) => ctx.events.left_out(&format!(
                "uv {} for {arch}: {why}; installs from this bundle use pip",
                pin.version
            ))?,
        }
    }
    if wheels_added {
        files = bundle::write_pages(dir, &files)?;
    }
    if let Some(want) = &want {
        // The bundle must serve the plan by itself, as the install on the target will ask it
        // (over plain http only as that install would: never).
        bundle::check_serves(dir, want, &ctx.net.strict_probe()).map_err(PyEnvError::from)?;
    }
    let manifest = BundleManifest {
        schema_version: 1,
        made_by: concat!("cudaup ", env!("CARGO_PKG_VERSION")).to_owned(),
        created: bundle::today(),
        profile: plan.plan.profile.name().to_owned(),
        target: bundle::BundleTarget {
            os: super::python::route::os_name(system.os.family).to_owned(),
            arch: system.os.arch.clone(),
            gpus: system.nvidia_gpus().map(|g| g.name.clone()).collect(),
            python: want.as_ref().map(|w| w.python.clone()),
            platforms,
        },
        plan: plan
            .plan
            .components
            .iter()
            .map(|c| bundle::Planned {
                name: c.name.clone(),
                version: c.version.clone(),
                variant: c.variant.clone().or_else(|| c.cuda_variant.clone()),
            })
            .collect(),
        toolkit: toolkit_part,
        framework: framework_part,
        files,
    };
    bundle::write_manifest(dir, &manifest)?;
    Ok(MirrorOutcome {
        manifest,
        install_from,
    })
}

/// The toolkit a bundle copies.
struct Toolkit<'a> {
    cuda: &'a Version,
    cudnn: &'a Option<Version>,
    arches: &'a [String],
    dir: &'a Path,
    selection: &'a ComponentSelection,
}

/// The toolkit a mirror copies, for one architecture (its prefix is the mirror: nothing is
/// unpacked there).
fn mirror_spec(
    process: &Process,
    t: &Toolkit<'_>,
    source: &Source,
    arch: &str,
) -> Result<ToolkitSpec, MirrorError> {
    Ok(ToolkitSpec {
        cuda: t.cuda.clone(),
        cudnn: t.cudnn.clone(),
        prefix: t.dir.to_owned(),
        source: source.clone(),
        arch: arch.to_owned(),
        // Mirrors hold NVIDIA's Linux archives and wheels.
        os: crate::model::system::OsFamily::Linux,
        max_unpacked: crate::settings::net::max_unpacked(process)?,
        // A bundle is not an install: nothing to register.
        register_in: None,
    })
}

/// NVIDIA's layout: the redistrib JSONs byte for byte and every archive, verified.
fn mirror_redist(
    fetcher: &Fetcher,
    ctx: &mut MirrorCtx<'_>,
    base: &Location,
    t: &Toolkit<'_>,
) -> Result<MirroredToolkit, MirrorError> {
    let mut count = 0;
    let mut bytes = 0u64;
    let mut manifests = vec![redist::cuda_manifest(base, &t.cuda.to_string())];
    if let Some(c) = t.cudnn {
        manifests.push(redist::cudnn_manifest(base, &c.to_string()));
    }
    let source = Source::Redist(base.clone());
    let mut per_arch = Vec::new();
    for arch in t.arches {
        let spec = mirror_spec(ctx.process, t, &source, arch)?;
        let resolved = super::resolve_items(fetcher, ctx.catalog, &spec, t.selection)?;
        for n in &resolved.notes {
            ctx.events.left_out(n)?;
        }
        per_arch.push(resolved.items);
    }
    // Room for every architecture's archives, before the first download.
    super::space::check_mirror(fetcher.cache(), t.dir, &per_arch.concat())?;
    for m in &manifests {
        let body = fetcher.get_bytes(m, None)?;
        let rel = relative(base, m)?;
        write_file(&t.dir.join(&rel), &body)?;
    }
    for items in &per_arch {
        for (id, item) in items.iter().enumerate() {
            let target = t.dir.join(relative(base, &item.artifact.location)?);
            let fetched = fetcher
                .fetch::<()>(id, &item.artifact, None)
                .map_err(InstallError::Fetch)?;
            fetcher.reporter().finish(id, "mirrored");
            if fetched.path != target {
                if let Some(parent) = target.parent() {
                    fs_err::create_dir_all(parent)?;
                }
                let _ = fs_err::remove_file(&target);
                if std::fs::hard_link(&fetched.path, &target).is_err() {
                    fs_err::copy(&fetched.path, &target)?;
                }
            }
            count += 1;
            bytes += item.artifact.size.unwrap_or(0);
        }
    }
    Ok(MirroredToolkit {
        source,
        count,
        bytes,
        manifests: manifests.len(),
    })
}

/// The path of `loc` under `base`, as the mirror's relative path.
fn relative(base: &Location, loc: &Location) -> Result<PathBuf, MirrorError> {
    let (b, l) = (base.to_string(), loc.to_string());
    let rel = l
        .strip_prefix(b.trim_end_matches('/'))
        .map(|r| r.trim_start_matches('/'))
        .filter(|r| !r.is_empty() && !r.split('/').any(|p| p == ".."))
        .map(PathBuf::from);
    rel.ok_or(MirrorError::OutsideBase {
        location: l,
        base: b,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), MirrorError> {
    if let Some(parent) = path.parent() {
        fs_err::create_dir_all(parent)?;
    }
    use crate::world::fs::{write_atomic, Durability, Temp};
    Ok(write_atomic(path, bytes, Temp::Unique, Durability::Fast)?)
}
