//! `manifests/components.toml`: the toolkit's components, the sets they form (`minimal`,
//! `standard`, `complete`), and for each CUDA 13 release the wheel versions PyPI's `cuda-toolkit`
//! metapackage pins. `--components` is parsed here into a [`ComponentSelection`].

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::model::version::Version;

/// The set an install gets when nothing says otherwise.
pub const DEFAULT_SET: &str = "standard";

/// The set whose components an install cannot do without (an error, not a note, when missing).
pub const REQUIRED_SET: &str = "minimal";

/// The whole components.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentsManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Named sets.
    pub set: Vec<SetDef>,
    /// Every component, in install order.
    pub component: Vec<ComponentDef>,
    /// The cuDNN wheel per CUDA major.
    pub cudnn: Vec<CudnnWheel>,
    /// From which CUDA release each route serves a toolkit.
    pub route: Vec<RouteDef>,
    /// Archive sizes of releases whose redistrib JSON was read.
    #[serde(default)]
    pub redist_sizes: Vec<RedistSizes>,
    /// Per CUDA release, the wheels its metapackage pins.
    #[serde(default)]
    pub wheels: Vec<WheelRelease>,
}

/// A named set of components.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetDef {
    /// `minimal`, `standard`, `complete`.
    pub name: String,
    /// One line for `--help`, the wizard and plan.
    pub summary: String,
    /// Another set whose components come first.
    pub includes: Option<String>,
    /// Component names.
    pub components: Vec<String>,
    /// Where the set's definition comes from.
    pub source: String,
}

/// One piece of the toolkit, named once for both routes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentDef {
    /// cudaup's name (`cublas`).
    pub name: String,
    /// What it holds.
    pub summary: String,
    /// Its key in NVIDIA's redistrib JSON (`libcublas`).
    pub redist: String,
    /// NVIDIA's `name` for it there (`CUDA cuBLAS`).
    pub title: String,
    /// The first CUDA release in which it is a component of its own.
    pub redist_since: Option<String>,
    /// The component that held its files before `redist_since`.
    pub earlier: Option<String>,
    /// The PyPI project carrying it (none: no wheel route).
    pub wheel: Option<String>,
    /// Where the row comes from.
    pub source: String,
}

/// The cuDNN wheel of a CUDA major.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnWheel {
    /// CUDA major.
    pub cuda_major: u32,
    /// `nvidia-cudnn-cu13`.
    pub wheel: String,
    /// Where it comes from.
    pub source: String,
}

/// A route and the first CUDA release it serves.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteDef {
    /// `wheels`.
    pub name: String,
    /// The first release it serves.
    pub since: String,
    /// Why.
    pub source: String,
}

/// The archive sizes of one release, by redistrib key.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedistSizes {
    /// The release.
    pub cuda: String,
    /// The redistrib JSON they come from.
    pub source: String,
    /// `linux-x86_64` sizes.
    #[serde(default)]
    pub x86_64: BTreeMap<String, u64>,
    /// `linux-sbsa` sizes.
    #[serde(default)]
    pub aarch64: BTreeMap<String, u64>,
}

/// The wheels a CUDA release's `cuda-toolkit` metapackage pins.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WheelRelease {
    /// The toolkit release (`13.0.3`).
    pub cuda: String,
    /// The metapackage version it was read from (`13.0.3.0`).
    pub metapackage: String,
    /// The metadata URL and the date it was read.
    pub source: String,
    /// Wheel project → pin.
    pub packages: BTreeMap<String, WheelPin>,
}

/// One pinned wheel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WheelPin {
    /// The version (`==13.1.0.3.*` is `13.1.0.3`; a range gives the version the metapackage's
    /// own table names).
    pub version: String,
    /// The requirement as written when it is a range (`<14,>=13.2.78`).
    pub spec: Option<String>,
    /// Size of the x86_64 wheel (none: no such wheel).
    pub x86_64: Option<u64>,
    /// Size of the aarch64 wheel.
    pub aarch64: Option<u64>,
    /// Size of the Windows x64 (`win_amd64`) wheel.
    #[serde(default)]
    pub win_amd64: Option<u64>,
}

impl WheelPin {
    /// The wheel's size on `platform` (a Linux architecture, or a Windows wheel tag such as
    /// `win_amd64`: [`crate::sources::pypi::wheel_platform`]), if there is a wheel for it.
    pub fn size(&self, platform: &str) -> Option<u64> {
        match platform {
            "x86_64" => self.x86_64,
            "aarch64" => self.aarch64,
            "win_amd64" => self.win_amd64,
            _ => None,
        }
    }
}

/// What `--components` asked for, resolved against the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentSelection {
    /// As written (`standard`, `minimal,cufft`, `standard,-npp`).
    pub spec: String,
    /// The chosen component names, in the manifest's order.
    pub components: Vec<String>,
    /// Names given on their own rather than through a set: an install fails when one of them
    /// cannot be had, instead of leaving it out with a note.
    pub explicit: BTreeSet<String>,
}

impl ComponentSelection {
    /// Whether `name` is chosen.
    pub fn has(&self, name: &str) -> bool {
        self.components.iter().any(|c| c == name)
    }
}

/// The download size of a selection, and how sure it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeEstimate {
    /// Bytes to download (components with a known size).
    pub bytes: u64,
    /// The release whose sizes were used (the asked one, or the nearest with data).
    pub basis: Option<String>,
    /// Whether the basis is the release asked for.
    pub exact: bool,
}

impl ComponentsManifest {
    /// The set called `name`.
    pub fn set(&self, name: &str) -> Option<&SetDef> {
        self.set.iter().find(|s| s.name == name)
    }

    /// The component called `name`.
    pub fn component(&self, name: &str) -> Option<&ComponentDef> {
        self.component.iter().find(|c| c.name == name)
    }

    /// The component whose redist key or wheel is `id`.
    pub fn component_by_artifact(&self, id: &str) -> Option<&ComponentDef> {
        self.component
            .iter()
            .find(|c| c.redist == id || c.wheel.as_deref() == Some(id))
    }

    /// A set's components, `includes` first (a cycle stops where it repeats).
    pub fn members(&self, name: &str) -> Vec<&str> {
        let mut seen = Vec::new();
        let mut out: Vec<&str> = Vec::new();
        self.collect(name, &mut seen, &mut out);
        out
    }

    fn collect<'a>(&'a self, name: &str, seen: &mut Vec<String>, out: &mut Vec<&'a str>) {
        if seen.iter().any(|s| s == name) {
            return;
        }
        seen.push(name.to_owned());
        let Some(set) = self.set(name) else { return };
        if let Some(inc) = &set.includes {
            self.collect(inc, seen, out);
        }
        for c in &set.components {
            if !out.contains(&c.as_str()) {
                out.push(c);
            }
        }
    }

    /// Parses `--components`: comma-separated set and component names; `-name` takes a
    /// component (or every component of a set) out again. `standard,-npp,cufile` is standard
    /// without NPP, with cuFile.
    pub fn select(&self, spec: &str) -> Result<ComponentSelection, String> {
        let items: Vec<&str> = spec
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if items.is_empty() {
            return Err(format!(
                "--components {spec:?}: name a set ({}) or components",
                self.set_names()
            ));
        }
        let mut chosen: BTreeSet<&str> = BTreeSet::new();
        let mut explicit = BTreeSet::new();
        for item in items {
            let (remove, name) = match item.strip_prefix('-') {
                Some(n) => (true, n.trim()),
                None => (false, item.strip_prefix('+').unwrap_or(item).trim()),
            };
            let names: Vec<&str> = if self.set(name).is_some() {
                self.members(name)
            } else if let Some(c) = self.component(name) {
                if !remove {
                    explicit.insert(c.name.clone());
                }
                vec![c.name.as_str()]
            } else {
                return Err(format!(
                    "--components: unknown set or component `{name}`; sets: {}; components: {}",
                    self.set_names(),
                    self.component
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            for n in names {
                if remove {
                    chosen.remove(n);
                    explicit.remove(n);
                } else {
                    chosen.insert(n);
                }
            }
        }
        if chosen.is_empty() {
            return Err(format!(
                "--components {spec}: that leaves nothing to install"
            ));
        }
        Ok(ComponentSelection {
            spec: spec.trim().to_owned(),
            components: self
                .component
                .iter()
                .filter(|c| chosen.contains(c.name.as_str()))
                .map(|c| c.name.clone())
                .collect(),
            explicit,
        })
    }

    /// The default selection ([`DEFAULT_SET`]).
    pub fn default_selection(&self) -> ComponentSelection {
        self.select(DEFAULT_SET)
            .expect("the default set exists (checked by the catalog tests)")
    }

    fn set_names(&self) -> String {
        self.set
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether `name` must be installed when it is chosen (a member of [`REQUIRED_SET`] that is
    /// a component of its own in `cuda`).
    pub fn required(&self, name: &str, cuda: &Version) -> bool {
        self.members(REQUIRED_SET).contains(&name)
            && self
                .component(name)
                .is_some_and(|c| self.exists_in(c, cuda))
    }

    /// Whether `c` is a component of its own in `cuda`'s redistrib JSON (from `redist_since`).
    pub fn exists_in(&self, c: &ComponentDef, cuda: &Version) -> bool {
        c.redist_since
            .as_deref()
            .and_then(Version::parse)
            .is_none_or(|since| cuda >= &since)
    }

    /// The metapackage pins of exactly this release.
    pub fn wheels_for(&self, cuda: &Version) -> Option<&WheelRelease> {
        self.wheels
            .iter()
            .find(|w| Version::parse(&w.cuda).as_ref() == Some(cuda))
    }

    /// The releases that have wheel pins.
    pub fn wheel_releases(&self) -> Vec<&str> {
        self.wheels.iter().map(|w| w.cuda.as_str()).collect()
    }

    /// The first release a route serves (`None`: every release).
    pub fn route_since(&self, route: &str) -> Option<Version> {
        self.route
            .iter()
            .find(|r| r.name == route)
            .and_then(|r| Version::parse(&r.since))
    }

    /// The cuDNN wheel for a CUDA major.
    pub fn cudnn_wheel(&self, major: u32) -> Option<&str> {
        self.cudnn
            .iter()
            .find(|c| c.cuda_major == major)
            .map(|c| c.wheel.as_str())
    }

    /// What `selection` downloads for `cuda` on `arch`, by route (`wheels` or `redist`); cuDNN
    /// not included. Wheel sizes are the release's own; redist sizes those of the nearest
    /// release whose redistrib JSON was read.
    pub fn estimate(
        &self,
        selection: &ComponentSelection,
        route: &str,
        cuda: &Version,
        arch: &str,
    ) -> Option<SizeEstimate> {
        let parts = |s: &str| Version::parse(s);
        let distance = |v: &Version| {
            let a: Vec<i64> = v.parts().iter().map(|p| i64::from(*p)).collect();
            let b: Vec<i64> = cuda.parts().iter().map(|p| i64::from(*p)).collect();
            (0..3)
                .map(|i| {
                    (a.get(i).unwrap_or(&0) - b.get(i).unwrap_or(&0)).abs()
                        * 1000i64.pow(2 - i as u32)
                })
                .sum::<i64>()
        };
        match route {
            "wheels" => {
                let w = self.wheels_for(cuda)?;
                let bytes = selection
                    .components
                    .iter()
                    .filter_map(|n| self.component(n)?.wheel.as_deref())
                    .filter_map(|p| w.packages.get(p)?.size(arch))
                    .sum();
                Some(SizeEstimate {
                    bytes,
                    basis: Some(w.cuda.clone()),
                    exact: true,
                })
            }
            _ => {
                let r = self
                    .redist_sizes
                    .iter()
                    .filter(|r| parts(&r.cuda).is_some_and(|v| v.major() == cuda.major()))
                    .min_by_key(|r| parts(&r.cuda).map_or(i64::MAX, |v| distance(&v)))?;
                let table = match arch {
                    "aarch64" => &r.aarch64,
                    "x86_64" => &r.x86_64,
                    // The Linux archives' sizes only (no Windows ones are recorded).
                    _ => return None,
                };
                let bytes = selection
                    .components
                    .iter()
                    .filter_map(|n| table.get(&self.component(n)?.redist))
                    .sum();
                Some(SizeEstimate {
                    bytes,
                    exact: parts(&r.cuda).as_ref() == Some(cuda),
                    basis: Some(r.cuda.clone()),
                })
            }
        }
    }

    /// What is wrong with the file, as (text to find in it, message) pairs.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut names = BTreeSet::new();
        for c in &self.component {
            if !names.insert(c.name.as_str()) {
                out.push((
                    format!("name = \"{}\"", c.name),
                    format!("component `{}` is listed twice", c.name),
                ));
            }
            for v in c.redist_since.iter() {
                if Version::parse(v).is_none() {
                    out.push((
                        v.clone(),
                        format!(
                            "component `{}`: redist_since `{v}` is not a version",
                            c.name
                        ),
                    ));
                }
            }
        }
        for s in &self.set {
            for c in &s.components {
                if self.component(c).is_none() {
                    out.push((
                        format!("name = \"{}\"", s.name),
                        format!("set `{}` names unknown component `{c}`", s.name),
                    ));
                }
            }
            if let Some(inc) = &s.includes {
                if self.set(inc).is_none() {
                    out.push((
                        format!("includes = \"{inc}\""),
                        format!("set `{}` includes unknown set `{inc}`", s.name),
                    ));
                }
            }
        }
        for name in [DEFAULT_SET, REQUIRED_SET] {
            if self.set(name).is_none() {
                out.push(("schema_version".into(), format!("there is no `{name}` set")));
            }
        }
        let wheels: BTreeSet<&str> = self
            .component
            .iter()
            .filter_map(|c| c.wheel.as_deref())
            .collect();
        for w in &self.wheels {
            if Version::parse(&w.cuda).is_none() {
                out.push((
                    format!("cuda = \"{}\"", w.cuda),
                    format!("wheels row `{}` is not a version", w.cuda),
                ));
            }
            for name in self.members(REQUIRED_SET) {
                let Some(p) = self.component(name).and_then(|c| c.wheel.as_deref()) else {
                    continue;
                };
                if !w.packages.contains_key(p) {
                    out.push((format!("cuda = \"{}\"", w.cuda), format!("CUDA {}: the metapackage pins no {p}, which the `{REQUIRED_SET}` set needs", w.cuda)));
                }
            }
            for (p, pin) in &w.packages {
                if wheels.contains(p.as_str()) && Version::parse(&pin.version).is_none() {
                    out.push((
                        format!("cuda = \"{}\"", w.cuda),
                        format!(
                            "CUDA {}: {p} version `{}` is not a version",
                            w.cuda, pin.version
                        ),
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> ComponentsManifest {
        crate::catalog::Catalog::embedded().components
    }

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn the_embedded_file_is_sound() {
        let m = manifest();
        assert_eq!(m.schema_version, 2);
        assert_eq!(m.problems(), Vec::<(String, String)>::new());
    }

    #[test]
    fn sets_nest() {
        let m = manifest();
        let minimal = m.members("minimal");
        assert_eq!(
            minimal,
            ["nvcc", "crt", "nvvm", "cudart", "cccl", "nvrtc", "cublas"]
        );
        let standard = m.members("standard");
        assert!(standard.starts_with(&minimal));
        for c in [
            "cufft",
            "curand",
            "cusparse",
            "cusolver",
            "nvjitlink",
            "npp",
            "nvjpeg",
            "cupti",
            "nvtx",
            "nvml",
            "profiler",
            "sanitizer",
            "cuobjdump",
            "nvdisasm",
            "cuxxfilt",
        ] {
            assert!(standard.contains(&c), "{c}");
        }
        let complete = m.members("complete");
        assert!(complete.starts_with(&standard));
        for c in ["gdb", "nsight-compute", "nsight-systems"] {
            assert!(complete.contains(&c) && !standard.contains(&c), "{c}");
        }
    }

    #[test]
    fn selections_add_and_remove() {
        let m = manifest();
        let s = m.select("standard,-npp, cufile").unwrap();
        assert!(!s.has("npp") && s.has("cufile") && s.has("cufft"));
        assert!(s.explicit.contains("cufile") && !s.explicit.contains("cufft"));
        // Manifest order, whatever the spec's.
        let s = m.select("cublas,nvcc").unwrap();
        assert_eq!(s.components, ["nvcc", "cublas"]);
        let s = m.select("complete,-standard").unwrap();
        assert_eq!(
            s.components,
            [
                "gdb",
                "nsight-compute",
                "nsight-systems",
                "nvfatbin",
                "cufile",
                "opencl"
            ]
        );
        assert!(m
            .select("standard,bogus")
            .unwrap_err()
            .contains("unknown set or component `bogus`"));
        assert!(m.select(" , ").is_err());
        assert!(m
            .select("minimal,-minimal")
            .unwrap_err()
            .contains("nothing to install"));
        assert_eq!(
            m.default_selection().components.len(),
            m.members("standard").len()
        );
    }

    #[test]
    fn required_components_follow_the_release() {
        let m = manifest();
        assert!(m.required("nvcc", &v("11.8.0")));
        assert!(m.required("crt", &v("13.0.2")));
        assert!(
            !m.required("crt", &v("12.8.1")),
            "inside cuda_nvcc before 13"
        );
        assert!(!m.required("cufft", &v("13.0.2")));
    }

    #[test]
    fn every_cuda_13_metapackage_is_pinned() {
        let m = manifest();
        let w = m.wheels_for(&v("13.0.2")).unwrap();
        assert_eq!(w.packages["nvidia-cublas"].version, "13.1.0.3");
        assert_eq!(w.packages["nvidia-cufft"].version, "12.0.0.61");
        assert_eq!(w.packages["nvidia-nvml-dev"].version, "13.0.87");
        assert!(w.source.contains("cuda_toolkit-13.0.2"), "{}", w.source);
        // Re-published metapackages map to the toolkit release: 13.0.3.0 is CUDA 13.0.3.
        assert_eq!(m.wheels_for(&v("13.0.3")).unwrap().metapackage, "13.0.3.0");
        for r in [
            "13.0.0", "13.0.1", "13.1.0", "13.1.1", "13.2.0", "13.2.2", "13.3.0", "13.4.2",
            "13.5.0",
        ] {
            assert!(m.wheels_for(&v(r)).is_some(), "{r}");
        }
        assert!(m.wheels_for(&v("12.8.1")).is_none());
        assert_eq!(m.route_since("wheels"), Some(v("13.0")));
    }

    #[test]
    fn sizes_per_route() {
        let m = manifest();
        let std = m.default_selection();
        let min = m.select("minimal").unwrap();
        let w = m.estimate(&std, "wheels", &v("13.0.2"), "x86_64").unwrap();
        assert!(w.exact);
        let wmin = m.estimate(&min, "wheels", &v("13.0.2"), "x86_64").unwrap();
        assert!(
            w.bytes > wmin.bytes && wmin.bytes > 500_000_000,
            "{w:?} {wmin:?}"
        );
        let r = m.estimate(&std, "redist", &v("13.0.2"), "x86_64").unwrap();
        assert!(r.exact && r.bytes > 2_000_000_000, "{r:?}");
        let near = m.estimate(&std, "redist", &v("13.2.1"), "x86_64").unwrap();
        assert!(!near.exact);
        assert_eq!(near.basis.as_deref(), Some("13.0.2"));
        assert!(m.estimate(&std, "redist", &v("12.8.1"), "x86_64").is_none());
    }
}
