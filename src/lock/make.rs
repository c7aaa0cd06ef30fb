//! Making a lock: one [`Host`] per machine picture from the install plan made for it and what
//! `locate` found (the toolkit's archives with the sha256 its manifest states, the framework's
//! route), plus the framework wheels' sha256 read from the route's index page (or computed from
//! the bytes where the page states none).

use sha2::{Digest, Sha256};

use crate::catalog::Catalog;
use crate::fetch::{Fetcher, Location};
use crate::install::locate::Located;
use crate::install::plan::InstallPlan;
use crate::install::python::probe::{wheel_tags, Target};
use crate::install::python::route::{Layout, Route};
use crate::install::python::step::FrameworkStep;
use crate::model::plan::Action;
use crate::sources::page::IndexFile;

use super::{Host, Lock, LockError, LockedDriver, LockedFile, LockedFramework, LockedUv};

/// What `plan` needs, asked of the world as an install asks it ([`crate::install::locate`]),
/// with a quiet fetcher for the lock's own reads (index pages, wheels).
pub fn locate(
    plan: &InstallPlan,
    catalog: &Catalog,
    process: &crate::world::process::Process,
    home: &crate::install::home::Home,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<(Located, Fetcher), crate::install::locate::LocateError> {
    let net =
        crate::install::locate::Net::new(process, &home.cache(), plan.settings.allow_http, cancel)?;
    let located = crate::install::locate::locate(
        plan,
        &net,
        catalog,
        process,
        home,
        &crate::detect::Root::live(),
    )?;
    Ok((
        located,
        net.fetcher(std::sync::Arc::new(crate::world::progress::Silent)),
    ))
}

/// The lock of `hosts` (sorted by name) for `catalog`.
pub fn assemble(catalog: &Catalog, profile: &str, mut hosts: Vec<Host>) -> Lock {
    hosts.sort_by(|a, b| a.name.cmp(&b.name));
    let uv = &catalog.uv;
    // Linux's wheels always (as before Windows had one); another system's when a host runs it,
    // named `<os>-<arch>` beside Linux's bare architecture.
    let wanted = |w: &&crate::catalog::uv::UvWheel| {
        w.os == crate::catalog::uv::LINUX || hosts.iter().any(|h| h.os == w.os)
    };
    Lock {
        schema_version: super::SCHEMA_VERSION,
        catalog_date: catalog.meta.date.to_string(),
        profile: profile.to_owned(),
        uv: LockedUv {
            version: uv.version.clone(),
            source: uv.source.clone(),
            wheel: uv
                .wheel
                .iter()
                .filter(wanted)
                .map(|w| LockedFile {
                    name: if w.os == crate::catalog::uv::LINUX {
                        w.arch.clone()
                    } else {
                        format!("{}-{}", w.os, w.arch)
                    },
                    version: uv.version.clone(),
                    filename: w.filename.clone(),
                    url: format!("https://pypi.org/simple/uv/{}", w.filename),
                    sha256: w.sha256.clone(),
                    size: Some(w.size),
                })
                .collect(),
        },
        hosts,
    }
}

/// The framework's dependencies for the machine `plan` was made for ([`super::deps`]), with
/// the uv the install would use (fetched and verified into `home` when it must be); `Ok(Err(why))`
/// when no uv can be had, so the lock holds the framework's own wheels only.
pub fn dependencies(
    located: &Located,
    catalog: &Catalog,
    (process, runner, home): (
        &crate::world::process::Process,
        &dyn crate::world::runner::Runner,
        &crate::install::home::Home,
    ),
    fetcher: &Fetcher,
) -> Result<Result<Vec<LockedFile>, String>, LockError> {
    let Some(step) = &located.framework else {
        return Ok(Ok(Vec::new()));
    };
    let (Some(packages), Some(want)) = (&step.packages, &step.want) else {
        return Ok(Ok(Vec::new()));
    };
    let Some(target) = Target::of(want) else {
        return Ok(Ok(Vec::new()));
    };
    let no_uv = process.var(crate::world::vars::CUDAUP_NO_UV) == Some("1");
    let (tool, choice) = crate::install::uv::installer(
        &catalog.uv,
        home,
        runner,
        &process.path_entries(),
        no_uv,
        fetcher,
        Some(packages),
    );
    let crate::install::python::Tool::Uv(uv) = tool else {
        return Ok(Err(choice.describe()));
    };
    let own: Vec<String> = crate::install::guard::pins(&packages.requirements)
        .into_iter()
        .map(|p| p.name)
        .collect();
    let work = tempfile::tempdir()?;
    let cache = home.uv_cache();
    super::deps::resolve(
        &uv,
        runner,
        packages,
        &step.constraints,
        &target,
        &own,
        (work.path(), Some(&cache)),
    )
    .map(Ok)
}

/// The host part for the machine `plan` was made for, named `name`, with the framework's
/// `dependency` wheels ([`dependencies`]).
pub fn host(
    name: &str,
    plan: &InstallPlan,
    located: &Located,
    fetcher: &Fetcher,
    dependency: Vec<LockedFile>,
) -> Result<Host, LockError> {
    let p = &plan.plan;
    let system = &plan.system;
    let used = |n: &str| {
        p.component(n)
            .filter(|c| c.action != Action::Skip)
            .and_then(|c| c.version.clone())
    };
    let driver = p.component("driver").map(|d| LockedDriver {
        action: format!("{:?}", d.action).to_lowercase(),
        version: d.version.clone(),
        branch: d.branch.map(|b| b.to_string()).or_else(|| {
            d.version
                .as_deref()
                .and_then(|v| v.split('.').next())
                .map(str::to_owned)
        }),
    });
    let toolkit = located
        .toolkit
        .iter()
        .flat_map(|t| &t.resolved.items)
        .map(|i| LockedFile {
            name: i.component.clone(),
            version: i.version.clone(),
            filename: i.artifact.location.file_name(),
            url: i.artifact.location.to_string(),
            sha256: i.artifact.sha256.clone(),
            size: i.artifact.size,
        })
        .collect();
    let (framework, wheel) = match &located.framework {
        Some(step) => framework(step, fetcher)?,
        None => (None, Vec::new()),
    };
    Ok(Host {
        name: name.to_owned(),
        os: crate::install::python::route::os_name(system.os.family).to_owned(),
        arch: system.os.arch.clone(),
        distro: system.os.distro.as_ref().map(|d| {
            format!("{d} {}", system.os.version.clone().unwrap_or_default())
                .trim()
                .to_owned()
        }),
        gpus: super::gpu_class(system),
        python: used("python").map(|v| v.split('.').take(2).collect::<Vec<_>>().join(".")),
        driver,
        cuda: used("cuda"),
        cudnn: used("cudnn"),
        framework,
        toolkit,
        wheel,
        dependency,
    })
}

/// The framework and its wheels, from the step's route.
fn framework(
    step: &FrameworkStep,
    fetcher: &Fetcher,
) -> Result<(Option<LockedFramework>, Vec<LockedFile>), LockError> {
    let (Some(route), Some(want)) = (&step.route, &step.want) else {
        return Ok((None, Vec::new()));
    };
    let index = match &route.layout {
        Layout::Index { url } | Layout::FindLinks { url } => url.clone(),
    };
    let pins = crate::install::guard::pins(&route.requirements);
    let main = pins.first();
    let locked = main.map(|m| LockedFramework {
        name: m.name.clone(),
        version: m.version.split('+').next().unwrap_or(&m.version).to_owned(),
        variant: want.variant.clone(),
        index: index.clone(),
        requirements: route.requirements.clone(),
    });
    let target = Target::of(want);
    let mut wheels = Vec::new();
    for pin in &pins {
        let files = listing(fetcher, route, &pin.name)?;
        let mut fit: Vec<LockedFile> = Vec::new();
        for f in files.into_iter().filter(|f| !f.yanked) {
            let Some(tags) = wheel_tags(&f.filename) else {
                continue;
            };
            let same = crate::sources::pypi::normalize(&tags.name)
                == crate::sources::pypi::normalize(&pin.name)
                && tags.version == pin.version;
            if !same || !target.as_ref().is_none_or(|t| t.fits(&tags)) {
                continue;
            }
            let sha256 = match f.sha256.clone() {
                Some(s) => s,
                None => hex::encode(Sha256::digest(fetcher.get_bytes_at_most(
                    &f.location,
                    None,
                    u64::MAX,
                )?)),
            };
            fit.push(LockedFile {
                name: pin.name.clone(),
                version: pin.version.clone(),
                filename: f.filename.clone(),
                url: f.location.to_string(),
                sha256,
                size: f.size,
            });
        }
        if fit.is_empty() {
            return Err(LockError::NoWheel {
                index: index.clone(),
                name: pin.name.clone(),
                version: pin.version.clone(),
                target: target
                    .as_ref()
                    .map_or_else(|| "this host".into(), Target::describe),
            });
        }
        fit.sort_by(|a, b| a.filename.cmp(&b.filename));
        wheels.extend(fit);
    }
    Ok((locked, wheels))
}

/// The files the route lists for `project`.
fn listing(fetcher: &Fetcher, route: &Route, project: &str) -> Result<Vec<IndexFile>, LockError> {
    Ok(match &route.layout {
        Layout::Index { url } => {
            let index = Location::parse(url)?;
            crate::sources::pypi::list(fetcher, &index, project)?.1
        }
        Layout::FindLinks { url } => match Location::parse(url)? {
            Location::File(dir) => crate::sources::flat::list_dir(&dir, Some(project), true),
            page @ Location::Http(_) => {
                let bytes = fetcher.get_bytes(&page, Some("text/html"))?;
                crate::sources::pypi::parse_html(&page, &String::from_utf8_lossy(&bytes))
            }
        },
    })
}
