//! `manifests update`, part `pypi`: JAX releases the catalog lacks, read from the index. From the
//! `jax` wheel's METADATA: Requires-Python and the `cudaNN` extras, which pin `jaxlib` and
//! `jax-cudaNN-plugin[with-cuda]` to the release; from each plugin wheel's METADATA: its
//! `jax-cudaNN-pjrt` pin and the `with-cuda` extra's NVIDIA wheels; from jaxlib's page: the
//! newest CPython with a Linux x86_64 wheel. A plugin release no jax release asks for (the index
//! has jax-cuda13-plugin 0.12.1 and no jax 0.12.1) is never a row. The GPU floors of each CUDA
//! major (`[[cuda]]`) are JAX's installation guide's, curated: no index states them.

use super::marker::{self, Env};
use super::pypi::{metadata, project, Metadata, Project};
use super::rows::{lit, lit_strings, Doc};
use super::{Net, UpdateError};
use crate::catalog::{Catalog, Date, Requirement, Spec};
use crate::fetch::Location;
use crate::model::version::Version;

/// A JAX release as the index describes it.
#[derive(Debug, Clone)]
pub struct JaxObs {
    /// `0.12.0.1`.
    pub version: Version,
    /// From Requires-Python.
    pub python_min: Version,
    /// The newest CPython with a Linux x86_64 jaxlib wheel of the release.
    pub python_max: Version,
    /// The plugins its extras pin, newest CUDA first.
    pub plugins: Vec<PluginObs>,
    /// The jax wheel's METADATA.
    pub metadata_url: String,
    /// jaxlib's page.
    pub jaxlib_page: String,
}

/// A `jax-cudaNN-plugin` release as its wheel's METADATA states it.
#[derive(Debug, Clone)]
pub struct PluginObs {
    /// The CUDA major.
    pub cuda: u32,
    /// The plugin's version.
    pub version: Version,
    /// The `jax-cudaNN-pjrt` it pins.
    pub pjrt: Version,
    /// The `with-cuda` extra's requirements.
    pub with_cuda: Vec<String>,
    /// The plugin wheel's METADATA.
    pub metadata_url: String,
}

/// The version a `<=X,>=X` (or `==X`) requirement allows, if exactly one.
fn pinned(r: &Requirement) -> Option<Version> {
    let floor = r.spec.floor()?.clone();
    (r.spec.contains(&floor) && r.spec.clauses.len() <= 2 && {
        let next = Version::parse(&format!("{floor}.1"))?;
        !r.spec.contains(&next)
    })
    .then_some(floor)
}

/// The `with-cuda` extra's lines of a plugin's METADATA, as requirements cudaup can read.
fn with_cuda(m: &Metadata) -> Vec<String> {
    m.requires_dist
        .iter()
        .filter(|l| {
            l.split_once(';').is_some_and(|(_, mk)| {
                mk.contains("extra")
                    && marker::holds(mk, &Env::linux_x86_64(Some("with-cuda"))) == Some(true)
            })
        })
        .filter_map(|l| Requirement::parse(l).map(|r| r.to_string()))
        .collect()
}

/// The newest `cpXY` of a project's Linux x86_64 wheels of `version`, as `3.Y`.
fn newest_cpython(p: &Project, version: &Version) -> Option<Version> {
    p.files
        .iter()
        .filter(|f| f.filename.contains("x86_64") && f.filename.contains("manylinux"))
        .filter(|f| {
            f.filename
                .split('-')
                .nth(1)
                .and_then(Version::parse)
                .as_ref()
                == Some(version)
        })
        .filter_map(|f| {
            let tag = f.filename.split('-').nth(2)?;
            let digits = tag.strip_prefix("cp")?;
            (digits.len() >= 2)
                .then(|| Version::parse(&format!("{}.{}", &digits[..1], &digits[1..])))?
        })
        .max()
}

/// The JAX releases newer than the catalog's newest, each with its plugins. The index having no
/// `jax` project leaves jax.toml as it is (said in `notes`).
pub fn read(
    net: &mut Net<'_>,
    index: &Location,
    catalog: &Catalog,
    notes: &mut Vec<String>,
) -> Result<Vec<JaxObs>, UpdateError> {
    let Some(jax) = project(net, index, "jax")? else {
        notes.push("the index has no jax: jax.toml is kept as it was".into());
        return Ok(Vec::new());
    };
    let newest = catalog
        .jax
        .release
        .iter()
        .map(|r| &r.version)
        .max()
        .cloned();
    let fresh: Vec<Version> = jax
        .releases()
        .into_iter()
        .filter(|v| newest.as_ref().is_none_or(|n| v > n))
        .collect();
    if fresh.is_empty() {
        return Ok(Vec::new());
    }
    let Some(jaxlib) = project(net, index, "jaxlib")? else {
        notes.push("the index has no jaxlib: no JAX row was added".into());
        return Ok(Vec::new());
    };
    let mut plugin_pages: Vec<(u32, Option<Project>)> = Vec::new();
    let mut out = Vec::new();
    for v in fresh {
        let Some(w) = jax.wheel(&v) else { continue };
        let m = metadata(net, w)?;
        let python_min = m
            .requires_python
            .as_deref()
            .and_then(Spec::parse)
            .and_then(|s| s.floor().cloned())
            .and_then(|f| Version::parse(&f.prefix(2)));
        let python_max = newest_cpython(&jaxlib, &v);
        let (Some(python_min), Some(python_max)) = (python_min, python_max) else {
            notes.push(format!(
                "JAX {v}: no Requires-Python in {} or no Linux x86_64 jaxlib wheel, so no row was added",
                m.url
            ));
            continue;
        };
        let mut plugins = Vec::new();
        for major in [13u32, 12] {
            let name = format!("jax-cuda{major}-plugin");
            let Some(req) = m.requirement(&name, Some(&format!("cuda{major}"))) else {
                continue;
            };
            let Some(pv) = pinned(&req) else {
                notes.push(format!(
                    "JAX {v}: its cuda{major} extra asks for {req}, not one release"
                ));
                continue;
            };
            if !plugin_pages.iter().any(|(m, _)| *m == major) {
                let page = project(net, index, &name)?;
                plugin_pages.push((major, page));
            }
            let Some((_, Some(page))) = plugin_pages.iter().find(|(m, _)| *m == major) else {
                notes.push(format!("JAX {v}: the index has no {name}"));
                continue;
            };
            let Some(pw) = page.wheel(&pv) else {
                notes.push(format!("JAX {v}: {name} {pv} has no Linux x86_64 wheel"));
                continue;
            };
            let pm = metadata(net, pw)?;
            let Some(pjrt) = pm
                .requirement(&format!("jax-cuda{major}-pjrt"), None)
                .and_then(|r| pinned(&r))
            else {
                notes.push(format!("JAX {v}: {name} {pv} pins no jax-cuda{major}-pjrt"));
                continue;
            };
            plugins.push(PluginObs {
                cuda: major,
                version: pv,
                pjrt,
                with_cuda: with_cuda(&pm),
                metadata_url: pm.url.clone(),
            });
        }
        if plugins.is_empty() {
            notes.push(format!(
                "JAX {v}: no CUDA plugin could be read, so no row was added"
            ));
            continue;
        }
        out.push(JaxObs {
            version: v,
            python_min,
            python_max,
            plugins,
            metadata_url: m.url.clone(),
            jaxlib_page: jaxlib.page.to_string(),
        });
    }
    Ok(out)
}

/// Writes the row of `o` into jax.toml (newest first), unless the catalog has it.
pub fn apply(doc: &mut Doc, base: &Catalog, o: &JaxObs, today: Date, changes: &mut Vec<String>) {
    if base.jax.release.iter().any(|r| r.version == o.version) {
        return;
    }
    let version = o.version.to_string();
    let mut block = Doc::block(
        "release",
        &[
            ("version", lit(&version)),
            ("python_min", lit(&o.python_min.to_string())),
            ("python_max", lit(&o.python_max.to_string())),
            ("derived", lit(&today.to_string())),
            (
                "source",
                lit(&format!(
                    "{} (Requires-Python >={}; extras cuda12/cuda13: jaxlib=={version}, jax-cudaNN-plugin[with-cuda]=={version}); {} (Linux x86_64 wheels up to cp{})",
                    o.metadata_url,
                    o.python_min,
                    o.jaxlib_page,
                    o.python_max.to_string().replace('.', "")
                )),
            ),
        ],
    );
    for p in &o.plugins {
        block.extend(Doc::block(
            "release.plugin",
            &[
                ("cuda", p.cuda.to_string()),
                ("version", lit(&p.version.to_string())),
                ("pjrt", lit(&p.pjrt.to_string())),
                ("with_cuda_requires", lit_strings(&p.with_cuda)),
                ("source", lit(&p.metadata_url)),
            ],
        ));
    }
    match doc.position("release", "version", &o.version, true) {
        Some(at) => doc.insert(at, block),
        None => doc.append(block),
    }
    changes.push(format!(
        "jax.toml: + JAX {version} ({}; {})",
        o.plugins
            .iter()
            .map(|p| format!("jax[cuda{}] -> {}-plugin {}", p.cuda, p.cuda, p.version))
            .collect::<Vec<_>>()
            .join(", "),
        o.metadata_url
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        fs_err::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/sources/pypi")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn the_real_jax_metadata_pins_one_plugin_release_per_extra() {
        let m = Metadata::parse(&fixture("jax-0.12.0.1.METADATA"), "x").unwrap();
        let r = m.requirement("jax-cuda13-plugin", Some("cuda13")).unwrap();
        assert_eq!(pinned(&r).unwrap().to_string(), "0.12.0.1");
        assert!(m.requirement("jax-cuda13-plugin", Some("cuda12")).is_none());
        assert_eq!(m.requires_python.as_deref().map(str::trim), Some(">=3.12"));
        let floor = Requirement::parse("jaxlib>=0.11.2").unwrap();
        assert_eq!(pinned(&floor), None);
    }

    #[test]
    fn the_real_plugin_metadata_gives_pjrt_and_with_cuda() {
        let m = Metadata::parse(&fixture("jax_cuda13_plugin-0.12.0.1.METADATA"), "x").unwrap();
        let pjrt = m.requirement("jax-cuda13-pjrt", None).unwrap();
        assert_eq!(pinned(&pjrt).unwrap().to_string(), "0.12.0.1");
        let w = with_cuda(&m);
        assert!(
            w.contains(&"nvidia-cudnn-cu13<10.0,>=9.12.0.46".to_owned()),
            "{w:?}"
        );
        assert!(w.contains(&"nvidia-nvvm".to_owned()), "{w:?}");
        assert_eq!(w.len(), 13, "{w:?}");
        // The embedded row says the same.
        let c = Catalog::embedded();
        let row = c
            .jax
            .release
            .iter()
            .find(|r| r.version.to_string() == "0.12.0.1")
            .unwrap();
        let p = row.plugin.iter().find(|p| p.cuda == 13).unwrap();
        assert_eq!(p.with_cuda_requires, w);
    }
}
