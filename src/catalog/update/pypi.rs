//! PyPI (or a mirror): PEP 691 JSON pages (PEP 503 HTML as a fallback) and each wheel's core
//! metadata — the PEP 658 `.metadata` file where the index serves one, else the `METADATA`
//! member read with HTTP ranges. Never a whole wheel.

use std::collections::BTreeMap;

use super::marker::{self, Env};
use super::{zip, Net, Targets, UpdateError};
use crate::catalog::{Catalog, Date, Requirement};
use crate::fetch::Location;
use crate::model::version::Version;
use crate::sources::page::{self, IndexFile};
use crate::sources::pypi::{normalize, parse_wheel_name, runs_on, ACCEPT};

/// A file an index page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelFile {
    /// File name.
    pub filename: String,
    /// Where it is.
    pub url: Location,
    /// Its sha256, as the index states it.
    pub sha256: Option<String>,
    /// `requires-python`.
    pub requires_python: Option<String>,
    /// The index serves `<url>.metadata` (PEP 658 / 714).
    pub core_metadata: bool,
    /// `upload-time`.
    pub uploaded: Option<Date>,
    /// Its size, as the index states it (PEP 700).
    pub size: Option<u64>,
}

/// A project page.
#[derive(Debug, Clone)]
pub struct Project {
    /// The page.
    pub page: Location,
    /// Its files (yanked ones left out).
    pub files: Vec<WheelFile>,
}

/// Whether a version string is a final release (`9.28.1.4`; not `2.15.0.post1`, `9.26.0.17.dev…`,
/// `13.4.0rc1`).
pub fn is_final(v: &str) -> bool {
    // A local label (`2.15.0+cu132`) is PyTorch's index naming the build, not a pre-release.
    let v = v.split('+').next().unwrap_or(v);
    !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') && !v.ends_with('.')
}

impl Project {
    /// The final releases that have a Linux x86_64 (or pure-Python) wheel, oldest first.
    pub fn releases(&self) -> Vec<Version> {
        let mut out: Vec<Version> = self
            .files
            .iter()
            .filter_map(|f| {
                let w = parse_wheel_name(&f.filename)?;
                let raw = f.filename.split('-').nth(1)?;
                (is_final(raw) && runs_on(&w.platforms, "x86_64")).then_some(w.version)
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The Linux x86_64 wheel of `version` to read (the newest CPython tag, else any).
    pub fn wheel(&self, version: &Version) -> Option<&WheelFile> {
        self.wheel_for(version, "x86_64")
    }

    /// The Linux wheel of `version` for `machine` (`x86_64`, `aarch64`) to read.
    pub fn wheel_for(&self, version: &Version, machine: &str) -> Option<&WheelFile> {
        let mut fit: Vec<&WheelFile> = self
            .files
            .iter()
            .filter(|f| {
                parse_wheel_name(&f.filename).is_some_and(|w| {
                    &w.version == version
                        && f.filename.split('-').nth(1).is_some_and(is_final)
                        && runs_on(&w.platforms, machine)
                })
            })
            .collect();
        // Prefer a manylinux wheel over a pure one, and a real CPython tag over the
        // free-threaded build (`cp314t`).
        let free_threaded = |f: &WheelFile| {
            let parts: Vec<&str> = f.filename.trim_end_matches(".whl").split('-').collect();
            parts.len() >= 3 && parts[parts.len() - 2].ends_with('t')
        };
        fit.sort_by_key(|f| {
            (
                !f.filename.contains("linux"),
                free_threaded(f),
                std::cmp::Reverse(f.filename.clone()),
            )
        });
        fit.first().copied()
    }
}

/// The files of a page that are not yanked, as the catalog reads them.
fn wheel_files(files: Vec<IndexFile>) -> Vec<WheelFile> {
    files
        .into_iter()
        .filter(|f| !f.yanked)
        .map(|f| WheelFile {
            uploaded: f.upload_time.as_deref().and_then(Date::parse),
            filename: f.filename,
            url: f.location,
            sha256: f.sha256,
            requires_python: f.requires_python,
            core_metadata: f.core_metadata,
            size: f.size,
        })
        .collect()
}

/// A project page (PEP 691 or PEP 503) through the one index reader the install routes use.
pub(super) fn parse_page(page: &Location, bytes: &[u8]) -> Result<Vec<WheelFile>, String> {
    page::parse_page(page, bytes).map(wheel_files)
}

/// A project's page on `index`; `None` when the index does not have the project.
pub fn project(
    net: &mut Net<'_>,
    index: &Location,
    name: &str,
) -> Result<Option<Project>, UpdateError> {
    let n = normalize(name);
    let page = match index {
        Location::Http(_) => index.join(&format!("{n}/")),
        Location::File(_) => index.join(&format!("{n}/index.json")),
    };
    let (page, bytes) = match net.get_optional(&page, Some(ACCEPT))? {
        Some(b) => (page, b),
        None => match index {
            // A static mirror may have only the PEP 503 page.
            Location::File(_) => {
                let html = index.join(&format!("{n}/index.html"));
                match net.get_optional(&html, None)? {
                    Some(b) => (html, b),
                    None => return Ok(None),
                }
            }
            Location::Http(_) => return Ok(None),
        },
    };
    let files = parse_page(&page, &bytes).map_err(|message| UpdateError::BadData {
        url: page.to_string(),
        message,
    })?;
    Ok(Some(Project { page, files }))
}

/// A wheel's core metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    /// `Name`.
    pub name: String,
    /// `Version`.
    pub version: String,
    /// `Requires-Python`.
    pub requires_python: Option<String>,
    /// `Requires-Dist` lines, markers included.
    pub requires_dist: Vec<String>,
    /// Pythons the classifiers list (`Programming Language :: Python :: 3.12`).
    pub pythons: Vec<Version>,
    /// Where it was read (the `.metadata` file, or the wheel).
    pub url: String,
}

impl Metadata {
    /// Parses an RFC 822-style METADATA file (the header part).
    pub fn parse(text: &str, url: &str) -> Result<Self, String> {
        let mut m = Metadata {
            url: url.to_owned(),
            ..Metadata::default()
        };
        for line in text.lines() {
            if line.is_empty() {
                break;
            }
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k {
                "Name" => m.name = v.to_owned(),
                "Version" => m.version = v.to_owned(),
                "Requires-Python" => m.requires_python = Some(v.to_owned()),
                "Requires-Dist" => m.requires_dist.push(v.to_owned()),
                "Classifier" => {
                    if let Some(p) = v.strip_prefix("Programming Language :: Python :: ") {
                        if let Some(ver) = Version::parse(p).filter(|x| x.parts().len() == 2) {
                            if p.chars().all(|c| c.is_ascii_digit() || c == '.') {
                                m.pythons.push(ver);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        if m.name.is_empty() || m.version.is_empty() {
            return Err("no Name/Version header: not a wheel's METADATA".into());
        }
        m.pythons.sort();
        Ok(m)
    }

    /// The requirements that apply on Linux x86_64 with `extra`.
    pub fn requires(&self, extra: Option<&str>) -> Vec<Requirement> {
        self.requires_on("x86_64", extra)
    }

    /// The requirements that apply on Linux `machine` with `extra`.
    pub fn requires_on(&self, machine: &str, extra: Option<&str>) -> Vec<Requirement> {
        let env = Env::linux(machine, extra);
        self.requires_dist
            .iter()
            .filter(|line| {
                let marker = line.split_once(';').map_or("", |(_, m)| m);
                let holds = marker::holds(marker, &env).unwrap_or(false);
                // With an extra asked for, only that extra's requirements.
                holds && (extra.is_none() || marker.contains("extra"))
            })
            .filter_map(|line| Requirement::parse(line))
            .collect()
    }

    /// The requirement on `name`, if any.
    pub fn requirement(&self, name: &str, extra: Option<&str>) -> Option<Requirement> {
        self.requires(extra).into_iter().find(|r| r.name == name)
    }
}

/// The core metadata of `file`.
pub fn metadata(net: &mut Net<'_>, file: &WheelFile) -> Result<Metadata, UpdateError> {
    let bad = |url: &str, m: String| UpdateError::BadData {
        url: url.to_owned(),
        message: m,
    };
    if file.core_metadata {
        let url = Location::parse(&format!("{}.metadata", file.url))
            .map_err(|e| UpdateError::Usage(e.to_string()))?;
        let bytes = net.get_at_most(&url, None, zip::MAX_METADATA)?;
        return Metadata::parse(&String::from_utf8_lossy(&bytes), &url.to_string())
            .map_err(|m| bad(&url.to_string(), m));
    }
    let member = zip::find(net, &file.url, &|e| {
        e.name.ends_with(".dist-info/METADATA") && e.name.matches('/').count() == 1
    })?
    .ok_or_else(|| {
        bad(
            &file.url.to_string(),
            "the wheel has no .dist-info/METADATA".into(),
        )
    })?;
    let bytes = zip::read(net, &file.url, &member, zip::MAX_METADATA)?;
    let url = format!("{}#{}", file.url, member.name);
    Metadata::parse(&String::from_utf8_lossy(&bytes), &url).map_err(|m| bad(&url, m))
}

/// A torch release as PyPI's wheel states it.
#[derive(Debug, Clone)]
pub struct TorchObs {
    /// `2.15.0`.
    pub version: Version,
    /// From Requires-Python.
    pub python_min: Option<Version>,
    /// The newest Python classifier.
    pub python_max: Option<Version>,
    /// The CUDA of PyPI's build (from its `cuda-toolkit` / `nvidia-cuda-runtime` pin).
    pub cuda: Option<Version>,
    /// The cuDNN wheel it pins.
    pub cudnn: Option<String>,
    /// The wheel read.
    pub wheel: WheelFile,
    /// The metadata's URL.
    pub metadata_url: String,
    /// torchvision / torchaudio releases whose torch requirement admits this release.
    pub torchvision: Option<Version>,
    /// See `torchvision`.
    pub torchaudio: Option<Version>,
    /// Filled by the fatbin probe.
    pub targets: Option<Targets>,
}

/// A TensorFlow release as PyPI's wheel states it.
#[derive(Debug, Clone)]
pub struct TfObs {
    /// `2.19.1`.
    pub version: Version,
    /// From Requires-Python.
    pub python_min: Option<Version>,
    /// The newest Python classifier.
    pub python_max: Option<Version>,
    /// The `and-cuda` extra, as written.
    pub and_cuda: Vec<String>,
    /// The metadata's URL.
    pub metadata_url: String,
}

/// A cuDNN wheel.
#[derive(Debug, Clone)]
pub struct CudnnWheelObs {
    /// `nvidia-cudnn-cu13`.
    pub package: String,
    /// `13`.
    pub major: String,
    /// `9.28.1.4`.
    pub version: Version,
    /// The wheel.
    pub wheel: WheelFile,
    /// The project page.
    pub page: String,
    /// Filled by the fatbin probe.
    pub targets: Option<Targets>,
    /// The same version's manylinux aarch64 wheel (the linux-sbsa build), if the index has one.
    pub sbsa: Option<WheelFile>,
    /// Its targets, filled by the fatbin probe.
    pub sbsa_targets: Option<Targets>,
}

/// Everything read from PyPI.
#[derive(Debug, Default)]
pub struct PypiObs {
    /// New torch releases (and the newest catalogued one, re-read).
    pub torch: Vec<TorchObs>,
    /// TensorFlow releases the catalog lacks, or whose `and-cuda` extra it lacks.
    pub tensorflow: Vec<TfObs>,
    /// cuDNN wheels of minors the catalog lacks, and wheel versions of catalogued rows.
    pub cudnn: Vec<CudnnWheelObs>,
    /// `cuda-toolkit` versions on the index.
    pub cuda_toolkit: Vec<Version>,
    /// The Linux aarch64 wheels of the torch releases read, where they are CUDA builds (the
    /// catalog's `platform = "linux-sbsa"`, `pypi = true` rows).
    pub torch_sbsa: Vec<TorchObs>,
    /// The project pages read, by name.
    pub pages: BTreeMap<String, String>,
    /// The pages of the wheels a plan installs beside the framework (torchvision, torchaudio,
    /// tensorflow), by name: their `requires-python` becomes the `[[requires_python]]` rows.
    pub indexed: BTreeMap<String, Project>,
}

fn major_minor(v: &Version) -> Option<Version> {
    Version::parse(&v.prefix(2))
}

/// The CUDA a torch wheel was built for, from what it pins.
fn torch_cuda(m: &Metadata) -> Option<Version> {
    torch_cuda_on(m, "x86_64")
}

/// The CUDA a torch wheel for Linux `machine` was built for; `None` for a CPU build (an aarch64
/// wheel whose nvidia-* requirements hold only on x86_64).
pub fn torch_cuda_on(m: &Metadata, machine: &str) -> Option<Version> {
    let reqs = m.requires_on(machine, None);
    if let Some(r) = reqs.iter().find(|r| r.name == "cuda-toolkit") {
        return r.spec.floor().and_then(major_minor);
    }
    reqs.iter()
        .find(|r| r.name.starts_with("nvidia-cuda-runtime"))
        .and_then(|r| r.spec.floor())
        .and_then(major_minor)
}

/// The newest release of a companion (torchvision, torchaudio) whose `torch` requirement admits
/// `torch`; the newest few are read.
fn companion(
    net: &mut Net<'_>,
    project: &Project,
    torch: &Version,
) -> Result<Option<Version>, UpdateError> {
    for v in project.releases().iter().rev().take(4) {
        let Some(w) = project.wheel(v) else { continue };
        let m = metadata(net, w)?;
        if m.requirement("torch", None)
            .is_some_and(|r| !r.spec.clauses.is_empty() && r.spec.contains(torch))
        {
            return Ok(Some(v.clone()));
        }
    }
    Ok(None)
}

/// Reads what the catalog needs from the index.
pub fn read(
    net: &mut Net<'_>,
    index: &Location,
    catalog: &Catalog,
    notes: &mut Vec<String>,
) -> Result<PypiObs, UpdateError> {
    let mut obs = PypiObs::default();
    let need = |net: &mut Net<'_>, name: &str| -> Result<Project, UpdateError> {
        project(net, index, name)?.ok_or_else(|| UpdateError::BadData {
            url: index.join(name).to_string(),
            message: format!("the index has no `{name}` project"),
        })
    };

    // torch: releases newer than the catalog's newest, and the newest catalogued one again.
    let torch = need(net, "torch")?;
    obs.pages.insert("torch".into(), torch.page.to_string());
    let newest = catalog
        .pytorch
        .release
        .iter()
        .map(|r| &r.version)
        .max()
        .cloned();
    let wanted: Vec<Version> = torch
        .releases()
        .into_iter()
        .filter(|v| newest.as_ref().is_none_or(|n| v >= n))
        .collect();
    // The companions' pages: read once, for the companions of new releases and for the
    // Requires-Python of every release the catalog names.
    let vision = project(net, index, "torchvision")?;
    let audio = project(net, index, "torchaudio")?;
    for (name, p) in [("torchvision", &vision), ("torchaudio", &audio)] {
        match p {
            Some(p) => {
                obs.indexed.insert(name.to_owned(), p.clone());
            }
            None => notes.push(format!(
                "the index has no {name}: its Requires-Python rows are kept as they were"
            )),
        }
    }
    // The aarch64 side: PyPI's manylinux aarch64 wheel of the same releases. A CPU build (its
    // nvidia-* requirements hold only on x86_64) gives no linux-sbsa row.
    for v in &wanted {
        let Some(w) = torch.wheel_for(v, "aarch64") else {
            continue;
        };
        let m = metadata(net, w)?;
        let Some(cuda) = torch_cuda_on(&m, "aarch64") else {
            notes.push(format!(
                "torch {v}: PyPI's aarch64 wheel is a CPU build ({}), so no linux-sbsa row comes from it",
                m.url
            ));
            continue;
        };
        obs.torch_sbsa.push(TorchObs {
            python_min: None,
            python_max: None,
            cuda: Some(cuda),
            cudnn: m
                .requires_on("aarch64", None)
                .iter()
                .find(|r| r.name.starts_with("nvidia-cudnn-cu"))
                .and_then(|r| {
                    r.spec
                        .is_exact()
                        .then(|| r.spec.floor().map(|f| f.to_string()))
                })
                .flatten(),
            wheel: w.clone(),
            metadata_url: m.url.clone(),
            torchvision: None,
            torchaudio: None,
            targets: None,
            version: v.clone(),
        });
    }
    for v in wanted {
        let Some(w) = torch.wheel(&v) else { continue };
        let m = metadata(net, w)?;
        let is_new = newest.as_ref().is_none_or(|n| &v > n);
        let (tv, ta) = if is_new {
            (
                match &vision {
                    Some(p) => companion(net, p, &v)?,
                    None => None,
                },
                match &audio {
                    Some(p) => companion(net, p, &v)?,
                    None => None,
                },
            )
        } else {
            (None, None)
        };
        obs.torch.push(TorchObs {
            python_min: m
                .requires_python
                .as_deref()
                .or(w.requires_python.as_deref())
                .and_then(crate::catalog::Spec::parse)
                .and_then(|s| s.floor().cloned()),
            python_max: m.pythons.last().cloned(),
            cuda: torch_cuda(&m),
            cudnn: m
                .requires(None)
                .iter()
                .find(|r| r.name.starts_with("nvidia-cudnn-cu"))
                .and_then(|r| {
                    r.spec
                        .is_exact()
                        .then(|| r.spec.floor().map(|f| f.to_string()))
                })
                .flatten(),
            wheel: w.clone(),
            metadata_url: m.url.clone(),
            torchvision: tv,
            torchaudio: ta,
            targets: None,
            version: v,
        });
    }

    // TensorFlow: releases from the catalog's oldest Linux GPU row on that it lacks, and rows
    // without their `and-cuda` extra.
    let tf = need(net, "tensorflow")?;
    obs.pages.insert("tensorflow".into(), tf.page.to_string());
    obs.indexed.insert("tensorflow".into(), tf.clone());
    let oldest = catalog
        .tensorflow
        .release
        .iter()
        .filter(|r| r.and_cuda)
        .map(|r| r.version.clone())
        .min();
    for v in tf.releases() {
        if oldest.as_ref().is_none_or(|o| &v < o) {
            continue;
        }
        let row = catalog.tensorflow.release.iter().find(|r| r.version == v);
        if row.is_some_and(|r| !r.and_cuda_requires.is_empty()) {
            continue;
        }
        let Some(w) = tf.wheel(&v) else { continue };
        let m = metadata(net, w)?;
        obs.tensorflow.push(TfObs {
            python_min: m
                .requires_python
                .as_deref()
                .and_then(crate::catalog::Spec::parse)
                .and_then(|s| s.floor().cloned()),
            python_max: m.pythons.last().cloned(),
            and_cuda: m
                .requires_dist
                .iter()
                .filter(|l| {
                    l.split_once(';').is_some_and(|(_, mk)| {
                        marker::holds(mk, &Env::linux_x86_64(Some("and-cuda"))) == Some(true)
                            && mk.contains("extra")
                    })
                })
                .filter_map(|l| Requirement::parse(l).map(|r| r.to_string()))
                .collect(),
            metadata_url: m.url.clone(),
            version: v,
        });
    }

    // cuDNN wheels: the newest build of every minor the catalog lacks for the variant, and the
    // wheel version of the catalogued rows.
    for major in ["12", "13"] {
        let name = format!("nvidia-cudnn-cu{major}");
        let Some(p) = project(net, index, &name)? else {
            notes.push(format!("the index has no {name}"));
            continue;
        };
        obs.pages.insert(name.clone(), p.page.to_string());
        // Every release a framework may pin (torch 2.15 pins 9.26.0, not the newer 9.26.1): the
        // newest build of each x.y.z.
        let mut by_release: BTreeMap<String, Version> = BTreeMap::new();
        for v in p
            .releases()
            .into_iter()
            .filter(|v| v.major() >= 9 && v.parts().len() == 4)
        {
            by_release.insert(v.prefix(3), v);
        }
        for (release, v) in by_release.iter().rev() {
            let rows: Vec<_> = catalog
                .cudnn
                .release
                .iter()
                .filter(|r| r.cuda_variant == major && r.version.prefix(3) == *release)
                .collect();
            let catalogued = !rows.is_empty();
            // A curated row without a wheel that another row of the release already names is
            // not missing one (9.10.2 cuda12: two matrix rows, one package).
            let needs_wheel = rows.iter().all(|r| r.wheel.is_none());
            if catalogued && !needs_wheel {
                continue;
            }
            let Some(w) = p.wheel(v) else { continue };
            obs.cudnn.push(CudnnWheelObs {
                package: name.clone(),
                major: major.to_owned(),
                version: v.clone(),
                wheel: w.clone(),
                page: p.page.to_string(),
                targets: None,
                sbsa: p.wheel_for(v, "aarch64").cloned(),
                sbsa_targets: None,
            });
        }
    }

    // cuda-toolkit: which releases PyPI carries as the metapackage.
    if let Some(p) = project(net, index, "cuda-toolkit")? {
        obs.pages.insert("cuda-toolkit".into(), p.page.to_string());
        obs.cuda_toolkit = p.releases();
        for v in &obs.cuda_toolkit {
            if !catalog.cuda.release.iter().any(|r| &r.version == v) {
                notes.push(format!(
                    "PyPI has cuda-toolkit {v}, which is not a CUDA release in the catalog: not added (NVIDIA's redist is what names releases)"
                ));
            }
        }
    }
    Ok(obs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        fs_err::read_to_string(format!(
            "{}/tests/fixtures/sources/pypi/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    /// The aarch64 wheels' real METADATA: 2.15.0's pins CUDA 13.2 on every Linux machine; 2.10.0's
    /// pins nvidia-* wheels only where `platform_machine == "x86_64"`, so its aarch64 wheel is
    /// the CPU build and gives no CUDA.
    #[test]
    fn real_aarch64_torch_metadata_tells_cuda_from_cpu_builds() {
        let m = Metadata::parse(&fixture("torch-2.15.0-aarch64.METADATA"), "x").unwrap();
        assert_eq!(torch_cuda_on(&m, "aarch64").unwrap().to_string(), "13.2");
        let m = Metadata::parse(&fixture("torch-2.10.0-aarch64.METADATA"), "x").unwrap();
        assert_eq!(torch_cuda_on(&m, "aarch64"), None);
        assert_eq!(
            torch_cuda_on(&m, "x86_64").unwrap().to_string(),
            "12.8",
            "the same file read for x86_64"
        );
    }

    #[test]
    fn real_torch_2_15_0_metadata() {
        let m = Metadata::parse(&fixture("torch-2.15.0.METADATA"), "x").unwrap();
        assert_eq!(m.version, "2.15.0");
        assert_eq!(m.requires_python.as_deref(), Some(">=3.11"));
        assert_eq!(m.pythons.last().unwrap().to_string(), "3.15");
        assert_eq!(torch_cuda(&m).unwrap().to_string(), "13.2");
        let cudnn = m.requirement("nvidia-cudnn-cu13", None).unwrap();
        assert_eq!(cudnn.to_string(), "nvidia-cudnn-cu13==9.26.0.51");
        assert!(
            m.requirement("optree", None).is_none(),
            "extras are not requirements"
        );
    }

    #[test]
    fn real_tensorflow_2_21_0_and_cuda_floats() {
        let m = Metadata::parse(&fixture("tensorflow-2.21.0.METADATA"), "x").unwrap();
        let r = m
            .requirement("nvidia-cudnn-cu12", Some("and-cuda"))
            .unwrap();
        assert_eq!(r.to_string(), "nvidia-cudnn-cu12<10.0,>=9.3.0.75");
        assert!(!r.spec.is_exact());
        assert!(m.requirement("nvidia-cudnn-cu12", None).is_none());
    }

    #[test]
    fn real_cuda_toolkit_extras_pin_components() {
        let m = Metadata::parse(&fixture("cuda_toolkit-13.2.2.METADATA"), "x").unwrap();
        let rt = m
            .requirement("nvidia-cuda-runtime", Some("cudart"))
            .unwrap();
        assert_eq!(rt.to_string(), "nvidia-cuda-runtime==13.2.86.*");
        assert!(
            m.requirement("nvidia-cudla", Some("cudla")).is_none(),
            "aarch64 only"
        );
    }

    #[test]
    fn real_pep691_page() {
        let page = Location::parse("https://pypi.org/simple/torch/").unwrap();
        let files = parse_page(&page, fixture("torch.json").as_bytes()).unwrap();
        let p = Project { page, files };
        let releases: Vec<String> = p.releases().iter().map(|v| v.to_string()).collect();
        assert!(releases.contains(&"2.15.0".to_owned()), "{releases:?}");
        let w = p.wheel(&Version::parse("2.15.0").unwrap()).unwrap();
        assert!(
            w.filename.contains("manylinux") && w.filename.contains("x86_64"),
            "{}",
            w.filename
        );
        assert!(!w.filename.contains("cp315t"), "{}", w.filename);
        assert_eq!(w.requires_python.as_deref(), Some(">=3.11"));
        assert!(
            is_final("9.28.1.4") && !is_final("9.26.0.17.dev59162438") && !is_final("2.15.0.post1")
        );
    }

    #[test]
    fn pep503_html_with_metadata_attributes() {
        let page = Location::parse("https://download.pytorch.org/whl/cu132/torch/").unwrap();
        let html = r#"<html><body><a href="/whl/cu132/torch-2.15.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=00ab" data-requires-python="&gt;=3.11" data-dist-info-metadata="sha256=11">torch-2.15.0+cu132-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/></body></html>"#;
        let f = parse_page(&page, html.as_bytes()).unwrap();
        assert_eq!(f.len(), 1);
        assert!(f[0].core_metadata);
        assert_eq!(f[0].requires_python.as_deref(), Some(">=3.11"));
        assert_eq!(
            f[0].url.to_string(),
            "https://download.pytorch.org/whl/cu132/torch-2.15.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl"
        );
    }
}
