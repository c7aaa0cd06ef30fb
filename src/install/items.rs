//! From a component selection to the artifacts to fetch: the release's redistrib JSON (each
//! component's key), or the wheels its `cuda-toolkit` metapackage pins (from the catalog), on
//! the configured index.

use crate::catalog::{Catalog, ComponentDef, ComponentSelection};
use crate::fetch::{FetchError, Fetcher, Location};
use crate::model::version::Version;
use crate::sources::pypi;
use crate::sources::redist::{self, Redist, RedistError};

use super::{InstallError, Item, Shape, Source, ToolkitSpec};

/// The key and name version.json uses for cuDNN.
const CUDNN: (&str, &str) = ("cudnn", "NVIDIA CUDA Deep Neural Network library");

/// The artifacts of an install, and what was left out and why.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// What to fetch, in install order.
    pub items: Vec<Item>,
    /// Components of the selection that this release or route does not have.
    pub notes: Vec<String>,
}

/// NVIDIA's platform name for a Linux architecture.
fn redist_platform(arch: &str) -> Result<&'static str, InstallError> {
    match arch {
        "x86_64" => Ok("linux-x86_64"),
        "aarch64" => Ok("linux-sbsa"),
        other => Err(InstallError::Unsupported(format!(
            "NVIDIA publishes no Linux toolkit archives for {other}"
        ))),
    }
}

/// NVIDIA's key and name for an installed artifact (`nvidia-cublas` → `libcublas`, `CUDA
/// cuBLAS`), from the embedded catalog; for receipts, which name only the artifact.
pub(super) fn name_of(component: &str) -> (String, String) {
    if component == CUDNN.0 || component.starts_with("nvidia-cudnn") {
        return (CUDNN.0.to_owned(), CUDNN.1.to_owned());
    }
    let catalog = crate::catalog::Catalog::embedded();
    match catalog.components.component_by_artifact(component) {
        Some(c) => (c.redist.clone(), c.title.clone()),
        None => (component.to_owned(), component.to_owned()),
    }
}

/// Reads the source's metadata and lists the artifacts `selection` needs for `spec`.
/// A component the release (or route, or machine) does not have is left out with a note — an
/// error instead when it is one of the `minimal` set's or was named on its own.
pub fn resolve_items(
    fetcher: &Fetcher,
    catalog: &Catalog,
    spec: &ToolkitSpec,
    selection: &ComponentSelection,
) -> Result<Resolved, InstallError> {
    let m = &catalog.components;
    let chosen: Vec<&ComponentDef> = selection
        .components
        .iter()
        .filter_map(|n| m.component(n))
        .collect();
    let must =
        |c: &ComponentDef| m.required(&c.name, &spec.cuda) || selection.explicit.contains(&c.name);
    let mut items = Vec::new();
    let mut notes = Vec::new();
    let major = spec.cuda.major();
    match &spec.source {
        Source::Redist(_) if spec.os == crate::model::system::OsFamily::Windows => {
            return Err(InstallError::Unsupported(
                "NVIDIA's Windows archives (windows-x86_64 .zip) are not installed by cudaup yet: install the toolkit from NVIDIA's wheels (--source wheels)".into(),
            ));
        }
        Source::Redist(base) => {
            let platform = redist_platform(&spec.arch)?;
            let manifest = redist::cuda_manifest(base, &spec.cuda.to_string());
            let doc = Redist::parse(
                &manifest,
                &get_manifest(fetcher, &manifest, "CUDA", &spec.cuda)?,
            )?;
            for c in chosen {
                if !m.exists_in(c, &spec.cuda) {
                    if selection.explicit.contains(&c.name) {
                        notes.push(format!(
                            "{}: before CUDA {} it is part of {}",
                            c.name,
                            c.redist_since.as_deref().unwrap_or("?"),
                            c.earlier.as_deref().unwrap_or("another component")
                        ));
                    }
                    continue;
                }
                match doc.component(&c.redist, platform, None) {
                    Ok(r) => items.push(Item {
                        component: r.key,
                        version: r.version,
                        key: c.redist.clone(),
                        title: c.title.clone(),
                        artifact: r.artifact,
                        shape: Shape::RedistArchive,
                    }),
                    Err(
                        e @ (RedistError::MissingComponent { .. }
                        | RedistError::MissingPlatform { .. }),
                    ) => {
                        if must(c) {
                            return Err(e.into());
                        }
                        notes.push(match e {
                            RedistError::MissingComponent { .. } => format!(
                                "{} ({}): not in CUDA {}'s redistrib JSON",
                                c.name, c.redist, spec.cuda
                            ),
                            _ => format!(
                                "{} ({}): no {platform} build in CUDA {}",
                                c.name, c.redist, spec.cuda
                            ),
                        });
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if let Some(cudnn) = &spec.cudnn {
                let manifest = redist::cudnn_manifest(base, &cudnn.to_string());
                let doc = Redist::parse(
                    &manifest,
                    &get_manifest(fetcher, &manifest, "cuDNN", cudnn)?,
                )?;
                let c = doc.component("cudnn", platform, Some(&format!("cuda{major}")))?;
                items.push(Item {
                    component: c.key,
                    version: c.version,
                    key: CUDNN.0.into(),
                    title: CUDNN.1.into(),
                    artifact: c.artifact,
                    shape: Shape::RedistArchive,
                });
            }
        }
        Source::Wheels(index) => {
            if m.route_since("wheels")
                .is_some_and(|since| spec.cuda < since)
            {
                return Err(InstallError::Unsupported(format!(
                    "NVIDIA's wheels carry a complete toolkit only from CUDA 13; install CUDA {} from NVIDIA's redistributable archives (--source redist)",
                    spec.cuda
                )));
            }
            let pins = m.wheels_for(&spec.cuda).ok_or_else(|| {
                InstallError::Unsupported(format!(
                    "the catalog records no wheel versions for CUDA {} (PyPI's cuda-toolkit metapackage is read for {}); pin one of those with --cuda, or use --source redist",
                    spec.cuda,
                    m.wheel_releases().join(", ")
                ))
            })?;
            // The wheels' platform: the architecture on Linux, `win_amd64` on Windows.
            let platform = pypi::wheel_platform(spec.os, &spec.arch);
            let mut wanted: Vec<(&ComponentDef, &str, String, u64)> = Vec::new();
            for c in chosen {
                let why = match c.wheel.as_deref() {
                    None => Some(format!(
                        "{}: NVIDIA publishes no wheel of it (use --source redist)",
                        c.name
                    )),
                    Some(w) => match pins.packages.get(w) {
                        None => Some(format!(
                            "{} ({w}): cuda-toolkit {} pins no such wheel",
                            c.name, pins.metapackage
                        )),
                        Some(p) => match p.size(&platform) {
                            None => Some(format!(
                                "{} ({w} {}): no {platform} wheel on PyPI",
                                c.name, p.version
                            )),
                            Some(size) => {
                                wanted.push((c, w, p.version.clone(), size));
                                None
                            }
                        },
                    },
                };
                if let Some(why) = why {
                    if must(c) {
                        return Err(InstallError::Unsupported(why));
                    }
                    notes.push(why);
                }
            }
            // One index page per wheel: ask for them side by side.
            let picked: Vec<
                Result<(crate::model::version::Version, crate::fetch::Artifact), pypi::IndexError>,
            > = std::thread::scope(|s| {
                let platform = platform.as_str();
                let handles: Vec<_> = wanted
                    .chunks(6)
                    .map(|chunk| {
                        s.spawn(move || {
                            chunk
                                .iter()
                                .map(|(_, w, v, _)| pypi::pick(fetcher, index, w, v, platform))
                                .collect::<Vec<_>>()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| h.join().expect("index lookups do not panic"))
                    .collect()
            });
            for ((c, w, _, recorded), got) in wanted.iter().zip(picked) {
                let (version, mut artifact) = got?;
                if artifact.size.is_none() {
                    // The index states no size (a PEP 503 page): the catalog's record of this
                    // wheel bounds it, not the 2 GiB any wheel may have.
                    artifact.max = Some(crate::fetch::Cap::recorded(*recorded));
                }
                items.push(Item {
                    component: (*w).to_owned(),
                    version: version.to_string(),
                    key: c.redist.clone(),
                    title: c.title.clone(),
                    shape: super::layout::wheel_shape(&artifact.location.file_name()),
                    artifact,
                });
            }
            if let Some(cudnn) = &spec.cudnn {
                let wheel = m.cudnn_wheel(major).ok_or_else(|| {
                    InstallError::Unsupported(format!(
                        "the catalog names no cuDNN wheel for CUDA {major}"
                    ))
                })?;
                let (version, artifact) =
                    pypi::pick(fetcher, index, wheel, &cudnn.to_string(), &platform)?;
                items.push(Item {
                    component: wheel.to_owned(),
                    version: version.to_string(),
                    key: CUDNN.0.into(),
                    title: CUDNN.1.into(),
                    shape: super::layout::wheel_shape(&artifact.location.file_name()),
                    artifact,
                });
            }
        }
    }
    Ok(Resolved { items, notes })
}

/// A redistrib JSON; a source without it cannot serve the release (not a network failure).
fn get_manifest(
    fetcher: &Fetcher,
    manifest: &Location,
    what: &str,
    version: &Version,
) -> Result<Vec<u8>, InstallError> {
    let missing = |e: &FetchError| match e {
        FetchError::Status { status: 404, .. } => true,
        FetchError::Local(io) => io.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    };
    fetcher.get_bytes(manifest, None).map_err(|e| {
        if missing(&e) {
            InstallError::Unsupported(format!(
                "{manifest} does not exist: this source has no {what} {version}; pin a release it has (--cuda / --cudnn) or add it to the mirror (cudaup mirror create)"
            ))
        } else {
            e.into()
        }
    })
}
