//! Where the framework's wheels come from: the routes that can serve a plan, in the order they
//! are tried, and the one that does.
//!
//! - **PyTorch's index** (`https://download.pytorch.org/whl`, or any copy of its
//!   `<base>/<variant>/<project>/` layout: `--torch-index`) serves every build with its local tag,
//!   `torch==2.15.0+cu132`.
//! - **PyPI** (or any mirror of it: `--pypi-index`) serves one build per release, untagged
//!   (`torch==2.15.0`): on Linux x86_64 the catalog's `pypi_default` variant. It is a route only
//!   when that is the planned build; the post-install check then proves it (`torch.version.cuda`).
//!   TensorFlow comes from PyPI only.
//! - **An offline bundle** (`cudaup mirror create`; `--index-url DIR` or `--mirror DIR`) is a
//!   PyPI-style index of exactly what the plan needs.
//!
//! `--torch-source auto` (the default) asks each route for the package's index page with a short
//! timeout ([`super::probe`]) and takes the first that lists the planned wheel for this Python
//! and platform; `pytorch` or `pypi` allows only that one. When none can, [`NoRoute`] names every
//! host tried and how it failed, and what would work instead — before any venv is made.

use std::fmt;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::fetch::GivenLocation;
use crate::model::plan::Plan;
use crate::model::request::Profile;
use crate::model::system::{OsFamily, System};
use crate::model::version::Version;

/// PyTorch's wheel index; a mirror replaces this base (`--torch-index`).
pub const TORCH_INDEX: &str = "https://download.pytorch.org/whl";

pub use super::mirrors::{KnownMirror, KNOWN_MIRRORS};
pub use super::view::{apply, describe_in_plan, RouteView};

pub use crate::model::request::TorchSource;

/// The kind of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RouteKind {
    /// PyTorch's index or a copy of its layout.
    Pytorch,
    /// PyPI or a mirror of it.
    Pypi,
    /// An offline bundle made by `cudaup mirror create`.
    Bundle,
}

impl RouteKind {
    /// How messages name it.
    pub fn label(self) -> &'static str {
        match self {
            RouteKind::Pytorch => "PyTorch's index",
            RouteKind::Pypi => "PyPI",
            RouteKind::Bundle => "the offline bundle",
        }
    }
}

impl fmt::Display for RouteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RouteKind::Pytorch => "pytorch",
            RouteKind::Pypi => "pypi",
            RouteKind::Bundle => "bundle",
        })
    }
}

/// One framework package to install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// The project (`torch`, `torchvision`, `tensorflow`).
    pub name: String,
    /// Extras in brackets (`[and-cuda]`), or empty.
    pub extras: String,
    /// The planned version (`2.15.0`).
    pub version: String,
    /// Whether the plan names its build by the variant tag (`+cu132`) on PyTorch's index.
    pub tagged: bool,
}

/// What the framework step must install, before a route is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct Want {
    /// torch or TensorFlow.
    pub framework: Framework,
    /// The main package first, then its companions.
    pub packages: Vec<Wanted>,
    /// The build's tag on PyTorch's index (`cu132`, `cpu`); `None` for TensorFlow.
    pub variant: Option<String>,
    /// Whether PyPI's untagged release is the planned build: `Ok(why)` or `Err(why not)`.
    pub pypi_build: Result<String, String>,
    /// The variant PyPI serves for this release, when the catalog says.
    pub pypi_variant: Option<String>,
    /// The plan itself names PyPI as the build's home (macOS wheels): ask it first.
    pub pypi_first: bool,
    /// The Python the venv is made from (major.minor).
    pub python: String,
    /// The machine the wheels must run on.
    pub os: OsFamily,
    /// Its architecture (`x86_64`, `aarch64`).
    pub arch: String,
}

/// Which framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    /// torch (with torchvision and torchaudio).
    Torch,
    /// TensorFlow (`tensorflow[and-cuda]`).
    Tensorflow,
    /// JAX (`jax[cuda13]` or `jax[cuda12]`).
    Jax,
}

impl Framework {
    /// Whether PyPI is its only home (PyTorch's own index serves torch alone).
    pub fn pypi_only(self) -> bool {
        matches!(self, Framework::Tensorflow | Framework::Jax)
    }
}

impl Want {
    /// `torch 2.15.0 (cu132) for Python 3.11 on linux x86_64`.
    pub fn describe(&self) -> String {
        let main = &self.packages[0];
        let build = self
            .variant
            .as_ref()
            .map(|v| format!(" ({v})"))
            .unwrap_or_default();
        format!(
            "{} {}{build} for Python {} on {} {}",
            main.name,
            main.version,
            self.python,
            os_name(self.os),
            self.arch
        )
    }

    /// The main package's version string with the plan's tag (`2.15.0+cu132`), if it has one.
    pub fn tagged_version(&self) -> Option<String> {
        let main = &self.packages[0];
        match (&self.variant, main.tagged) {
            (Some(v), true) => Some(format!("{}+{v}", main.version)),
            _ => None,
        }
    }

    /// The requirement lines when the index serves the tagged build (`tagged`) or PyPI's.
    pub fn requirements(&self, tagged: bool) -> Vec<String> {
        self.packages
            .iter()
            .map(|p| match (&self.variant, tagged && p.tagged) {
                (Some(v), true) => format!("{}{}=={}+{v}", p.name, p.extras, p.version),
                _ => format!("{}{}=={}", p.name, p.extras, p.version),
            })
            .collect()
    }
}

/// `linux`, `windows`, `macos`.
pub fn os_name(os: OsFamily) -> &'static str {
    match os {
        OsFamily::Linux => "linux",
        OsFamily::Windows => "windows",
        OsFamily::Macos => "macos",
    }
}

/// What the plan's framework step installs, or `None` when the profile has no framework or the
/// plan keeps what is there.
pub fn want(plan: &Plan, system: &System, catalog: &Catalog) -> Option<Want> {
    let python = plan.component("python")?;
    let python = Version::parse(python.version.as_deref()?)?.prefix(2);
    let os = system.os.family;
    let arch = system.os.arch.clone();
    if plan.profile == Profile::Jax {
        let jax = plan.component("jax")?;
        return Some(Want {
            framework: Framework::Jax,
            packages: vec![Wanted {
                name: "jax".into(),
                extras: format!("[{}]", jax.variant.clone()?),
                version: jax.version.clone()?,
                tagged: false,
            }],
            variant: None,
            pypi_build: Ok("JAX and its CUDA plugins are published on PyPI only".into()),
            pypi_variant: None,
            pypi_first: true,
            python,
            os,
            arch,
        });
    }
    if plan.profile == Profile::Tensorflow {
        let tf = plan.component("tensorflow")?;
        return Some(Want {
            framework: Framework::Tensorflow,
            packages: vec![Wanted {
                name: "tensorflow".into(),
                extras: "[and-cuda]".into(),
                version: tf.version.clone()?,
                tagged: false,
            }],
            variant: None,
            pypi_build: Ok("TensorFlow is published on PyPI only".into()),
            pypi_variant: None,
            pypi_first: true,
            python,
            os,
            arch,
        });
    }
    if !plan.profile.has_torch() {
        return None;
    }
    let torch = plan.component("torch")?;
    let version = torch.version.clone()?;
    let variant = torch.variant.clone().unwrap_or_else(|| "cpu".into());
    let release = Version::parse(&version)
        .and_then(|v| catalog.pytorch.release.iter().find(|r| r.version == v));
    let pypi_variant = release.and_then(|r| r.pypi_default.clone());
    // The plan already says when PyPI is the only home of the build (macOS wheels).
    let plan_says_pypi = torch
        .index_url
        .as_deref()
        .is_some_and(|u| u.trim_end_matches('/') == crate::sources::pypi::PYPI_SIMPLE);
    let pypi_build = if plan_says_pypi {
        Ok(format!(
            "PyPI's torch {version} is the build the plan names for {}",
            os_name(os)
        ))
    } else if os != OsFamily::Linux || arch != "x86_64" {
        Err(format!(
            "the catalog says which build PyPI serves only for Linux x86_64, not {} {arch}",
            os_name(os)
        ))
    } else {
        match &pypi_variant {
            Some(d) if *d == variant => Ok(format!(
                "PyPI's torch {version} for Linux x86_64 is the {d} build (catalog: pypi_default)"
            )),
            // The CUDA build runs on the CPU as well: a CPU-only machine that reaches PyPI but
            // not PyTorch's index takes it rather than nothing.
            Some(d) if variant == "cpu" => Ok(cuda_build_on_the_cpu(catalog, &version, d, &arch)),
            Some(d) => Err(format!(
                "PyPI's torch {version} for Linux x86_64 is the {d} build; the plan needs {variant}"
            )),
            None => Err(format!(
                "the catalog does not say which build PyPI serves for torch {version}"
            )),
        }
    };
    let packages = plan
        .components
        .iter()
        .filter(|c| matches!(c.name.as_str(), "torch" | "torchvision" | "torchaudio"))
        .filter_map(|c| {
            Some(Wanted {
                name: c.name.clone(),
                extras: String::new(),
                version: c.version.clone()?,
                // macOS wheels (PyPI's) carry no tag; a companion the plan takes from PyPI
                // neither.
                tagged: c.variant.is_some() && !plan_says_pypi,
            })
        })
        .collect();
    Some(Want {
        framework: Framework::Torch,
        packages,
        variant: Some(variant),
        pypi_build,
        pypi_variant,
        pypi_first: plan_says_pypi,
        python,
        os,
        arch,
    })
}

/// Why PyPI's CUDA build `d` of torch `version` serves the cpu profile, and what it costs: the
/// CUDA libraries it brings (cuBLAS's size from the catalog's wheel table for the series, when
/// it has one).
fn cuda_build_on_the_cpu(catalog: &Catalog, version: &str, d: &str, arch: &str) -> String {
    let cuda = super::step::variant_cuda(d);
    let cublas = cuda
        .as_ref()
        .and_then(|c| {
            // The newest release of the series: the wheel's exact pin is not in the catalog.
            let series = c.prefix(2);
            catalog
                .components
                .wheels
                .iter()
                .filter(|w| Version::parse(&w.cuda).is_some_and(|v| v.prefix(2) == series))
                .max_by_key(|w| Version::parse(&w.cuda))
        })
        .and_then(|w| w.packages.get("nvidia-cublas"))
        .and_then(|p| p.size(arch))
        .map(|b| format!(" (cuBLAS alone: about {} MiB)", b / (1 << 20)))
        .unwrap_or_default();
    format!(
        "PyPI's torch {version} for Linux x86_64 is the {d} build, which runs on the CPU too; it is a larger download than the cpu build, as it brings CUDA {}'s libraries as nvidia-* wheels{cublas} that this machine will not use",
        cuda.map(|c| c.to_string()).unwrap_or_else(|| d.to_owned())
    )
}

/// Where each kind of index comes from: the settings, resolved.
#[derive(Debug, Clone, Default)]
pub struct IndexSettings {
    /// `--pypi-index` (or its variable or config key), when given.
    pub pypi: Option<GivenLocation>,
    /// `--torch-index`, when given.
    pub torch: Option<GivenLocation>,
    /// `--torch-source`.
    pub source: TorchSource,
    /// An offline bundle found at `--index-url` or `--mirror`.
    pub bundle: Option<GivenLocation>,
}

impl IndexSettings {
    /// PyPI's simple index or the mirror given (as the user spelled it: pip gets it so).
    pub fn pypi_base(&self) -> GivenLocation {
        self.pypi
            .clone()
            .unwrap_or_else(|| GivenLocation::known(crate::sources::pypi::PYPI_SIMPLE))
    }

    /// PyTorch's index base or the mirror given (as the user spelled it).
    pub fn torch_base(&self) -> GivenLocation {
        self.torch
            .clone()
            .unwrap_or_else(|| GivenLocation::known(TORCH_INDEX))
    }
}

/// One place the framework may come from, before it is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The kind of route.
    pub route: RouteKind,
    /// The base as configured (a URL or a directory).
    pub base: GivenLocation,
    /// Where the setting came from (`default`, `--torch-index` …).
    pub origin: String,
    /// Why it cannot serve the plan, known without asking it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// What taking it means, when it serves another build than the planned one (PyPI's CUDA
    /// torch for the cpu profile: larger, and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The routes for `want`, in the order they are tried; refused ones stay in the list with the
/// reason, so the plan and the error can say why they were not taken.
pub fn candidates(want: &Want, s: &IndexSettings) -> Vec<Candidate> {
    let origin = |given: bool, flag: &str| {
        if given {
            flag.to_owned()
        } else {
            "default".to_owned()
        }
    };
    let pypi = Candidate {
        route: RouteKind::Pypi,
        base: s.pypi_base(),
        origin: origin(s.pypi.is_some(), "--pypi-index"),
        refused: None,
        note: match (&want.pypi_build, &want.pypi_variant, &want.variant) {
            (Ok(why), Some(d), Some(v)) if d != v => Some(why.clone()),
            _ => None,
        },
    };
    let mut out = Vec::new();
    if let Some(dir) = &s.bundle {
        out.push(Candidate {
            route: RouteKind::Bundle,
            base: dir.clone(),
            origin: "bundle".into(),
            refused: None,
            note: None,
        });
    }
    if want.framework.pypi_only() {
        out.push(pypi);
        return out;
    }
    let torch = Candidate {
        route: RouteKind::Pytorch,
        base: s.torch_base(),
        origin: origin(s.torch.is_some(), "--torch-index"),
        refused: None,
        note: None,
    };
    // A PyPI-style index with no tagged builds serves only PyPI's build; a local directory may
    // hold tagged ones too and is always looked at.
    let mut pypi = pypi;
    if let Err(why) = &want.pypi_build {
        if pypi.base.as_path().is_none() {
            pypi.refused = Some(why.clone());
        }
    }
    match s.source {
        TorchSource::Pytorch => out.push(torch),
        TorchSource::Pypi => out.push(pypi),
        // A PyPI mirror given on its own says where this machine reaches, and a build the plan
        // names on PyPI lives there: ask it first.
        TorchSource::Auto if (s.pypi.is_some() && s.torch.is_none()) || want.pypi_first => {
            out.push(pypi);
            out.push(torch);
        }
        TorchSource::Auto => {
            out.push(torch);
            out.push(pypi);
        }
    }
    out
}

/// What `plan` (and the wizard) show without asking the routes: the framework `plan` installs
/// and the routes in install's order, those the up-front check (`reach`, this machine's sites)
/// found silent marked not usable. `None` where the plan installs no framework or no stack fits.
pub fn unasked(
    plan: &Plan,
    system: &System,
    catalog: &Catalog,
    index: &IndexSettings,
    reach: Option<&crate::install::reach::Reach>,
) -> Option<(Want, Vec<Candidate>)> {
    if plan.status != crate::model::plan::Status::Ok {
        return None;
    }
    let want = want(plan, system, catalog)?;
    let mut candidates = candidates(&want, index);
    if let Some(r) = reach {
        leave_out_unreached(&mut candidates, r);
    }
    Some((want, candidates))
}

/// Marks the candidates that `reach` (the download sites asked up front, on this machine) found
/// silent as not usable, with how they failed: the plan then names the route install will
/// actually take — PyPI's build when PyTorch's index does not answer — and says why.
pub fn leave_out_unreached(candidates: &mut [Candidate], reach: &crate::install::reach::Reach) {
    use crate::install::reach::Service;
    for c in candidates.iter_mut().filter(|c| c.refused.is_none()) {
        let service = match c.route {
            RouteKind::Pytorch => Service::PytorchIndex,
            RouteKind::Pypi => Service::Pypi,
            RouteKind::Bundle => continue,
        };
        let silent = reach
            .answers
            .iter()
            .any(|a| a.route.service == service && a.route.base == c.base && !a.reached);
        if silent {
            // How it failed is in the plan's "Download sites" section, in the run's language.
            c.refused = Some("it did not answer just now (see Download sites)".to_owned());
        }
    }
}

/// How pip finds the files on a route that answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// A PEP 503/691 index: `--index-url URL` (a directory as a `file://` URL).
    Index {
        /// The index (its project pages are `URL/<project>/`).
        url: String,
    },
    /// A page or directory listing wheels: `--find-links URL`.
    FindLinks {
        /// The page or directory.
        url: String,
    },
}

/// How one route answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attempt {
    /// The route.
    pub route: RouteKind,
    /// Its base.
    pub base: String,
    /// The host asked (or the directory read).
    pub host: String,
    /// What happened, in words.
    pub outcome: String,
    /// Whether it failed on the network (unreachable, refused, timed out, an HTTP error), as
    /// opposed to answering without the planned wheel.
    pub network: bool,
}

/// The route the framework comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Route {
    /// Which kind.
    pub route: RouteKind,
    /// Its base as configured.
    pub base: GivenLocation,
    /// Where pip finds the framework.
    pub layout: Layout,
    /// PyPI (or its mirror) for the dependencies, when the route needs it and it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<String>,
    /// Whether the index lists the tagged build (`torch==2.15.0+cu132`) rather than PyPI's.
    pub tagged: bool,
    /// The requirement lines.
    pub requirements: Vec<String>,
    /// Why this route.
    pub why: String,
    /// The routes asked before it, and how they answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tried: Vec<Attempt>,
    /// The framework wheel's size as the listing states it (PEP 700; PyPI states it, a plain
    /// HTML index or a folder may not): the free-space check's lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wheel_size: Option<u64>,
}

/// No route can serve the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRoute {
    /// What was wanted, in words.
    pub wanted: String,
    /// Every route and how it answered (or why it was not asked).
    pub attempts: Vec<Attempt>,
    /// What would work instead.
    pub fixes: Vec<String>,
}

impl NoRoute {
    /// Whether a network failure is among the causes (exit code 3); otherwise every route
    /// answered without the planned wheel, or could not serve it (exit code 5).
    pub fn is_network(&self) -> bool {
        self.attempts.iter().any(|a| a.network)
    }
}

impl fmt::Display for NoRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "no route can serve {}:", self.wanted)?;
        for a in &self.attempts {
            writeln!(f, "  - {} {}: {}", a.route.label(), a.base, a.outcome)?;
        }
        write!(f, "what would work instead:")?;
        for fix in &self.fixes {
            write!(f, "\n  - {fix}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NoRoute {}

/// What was learnt, after every route failed, about the fixes that change the request: each is
/// offered only when asking showed it would work here, so no fix is a command refused on the
/// same machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Alternatives {
    /// PyPI (or its mirror) answered and lists its untagged build of the release (the build of
    /// the catalog's `pypi_default` variant), so pinning that build's CUDA would install.
    pub pypi_lists_release: bool,
    /// With `--torch-source auto`, this route (in words) lists the planned wheel.
    pub auto_serves: Option<String>,
}

/// The fixes for a plan no route could serve.
pub fn fixes(
    want: &Want,
    s: &IndexSettings,
    attempts: &[Attempt],
    found: &Alternatives,
) -> Vec<String> {
    let mut out = Vec::new();
    let mirrors = |kind: RouteKind| -> String {
        KNOWN_MIRRORS
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| format!("{} ({})", m.url, m.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let pypi_failed = attempts
        .iter()
        .any(|a| a.route == RouteKind::Pypi && a.network);
    let pypi_ok = want.pypi_build.is_ok();
    if pypi_ok || want.framework.pypi_only() {
        out.push(format!(
            "a PyPI mirror this machine reaches: --pypi-index URL, e.g. {}",
            mirrors(RouteKind::Pypi)
        ));
    }
    if want.framework == Framework::Torch {
        out.push(format!(
            "a copy of PyTorch's index: --torch-index URL, e.g. {}",
            mirrors(RouteKind::Pytorch)
        ));
        if let (Err(_), Some(d), Some(v)) = (&want.pypi_build, &want.pypi_variant, &want.variant) {
            if d != v
                && want.os == OsFamily::Linux
                && want.arch == "x86_64"
                && found.pypi_lists_release
            {
                let cuda = d
                    .strip_prefix("cu")
                    .filter(|n| n.len() >= 2)
                    .map(|n| format!("{}.{}", &n[..n.len() - 1], &n[n.len() - 1..]));
                // (The cpu profile takes PyPI's CUDA build itself: `want`.)
                if let Some(cuda) = cuda {
                    out.push(format!(
                        "the build PyPI serves: --cuda {cuda} plans torch {} {d}, which PyPI (and its mirrors) carry",
                        want.packages[0].version
                    ));
                }
            }
        }
        if let (true, Some(route)) = (s.source != TorchSource::Auto, &found.auto_serves) {
            out.push(format!(
                "--torch-source auto (now: {}): {route} lists the planned wheel",
                s.source
            ));
        }
    }
    out.push(
        "an offline bundle: on a machine with network, `cudaup mirror create DIR --system FILE` \
         (FILE: this machine's `cudaup detect --json`), copy DIR here, then `cudaup install \
         --index-url DIR`"
            .into(),
    );
    if pypi_failed || attempts.iter().any(|a| a.network) {
        out.push(
            "a proxy: set HTTPS_PROXY (cudaup, pip and uv all honour it), or raise the probe's \
             timeout with CUDAUP_PROBE_TIMEOUT=SECONDS on a slow link"
                .into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torch_want(variant: &str, pypi: Option<&str>) -> Want {
        Want {
            framework: Framework::Torch,
            packages: vec![
                Wanted {
                    name: "torch".into(),
                    extras: String::new(),
                    version: "2.15.0".into(),
                    tagged: true,
                },
                Wanted {
                    name: "torchvision".into(),
                    extras: String::new(),
                    version: "0.29.2".into(),
                    tagged: false,
                },
            ],
            variant: Some(variant.into()),
            pypi_build: match pypi {
                Some(d) if d == variant => Ok("PyPI's".into()),
                Some(d) => Err(format!("PyPI's is {d}")),
                None => Err("unknown".into()),
            },
            pypi_variant: pypi.map(str::to_owned),
            pypi_first: false,
            python: "3.12".into(),
            os: OsFamily::Linux,
            arch: "x86_64".into(),
        }
    }

    #[test]
    fn requirements_carry_the_tag_only_where_the_index_does() {
        let w = torch_want("cu132", Some("cu132"));
        assert_eq!(
            w.requirements(true),
            ["torch==2.15.0+cu132", "torchvision==0.29.2"]
        );
        assert_eq!(
            w.requirements(false),
            ["torch==2.15.0", "torchvision==0.29.2"]
        );
        assert_eq!(w.tagged_version().as_deref(), Some("2.15.0+cu132"));
        assert_eq!(
            w.describe(),
            "torch 2.15.0 (cu132) for Python 3.12 on linux x86_64"
        );
    }

    #[test]
    fn candidate_order_follows_the_settings() {
        let w = torch_want("cu132", Some("cu132"));
        let kinds = |s: &IndexSettings| -> Vec<RouteKind> {
            candidates(&w, s).iter().map(|c| c.route).collect()
        };
        let mut s = IndexSettings::default();
        assert_eq!(kinds(&s), [RouteKind::Pytorch, RouteKind::Pypi]);
        s.pypi =
            crate::fetch::GivenLocation::parse("https://pypi.tuna.tsinghua.edu.cn/simple").ok();
        assert_eq!(kinds(&s), [RouteKind::Pypi, RouteKind::Pytorch]);
        s.torch = crate::fetch::GivenLocation::parse("https://mirrors.nju.edu.cn/pytorch/whl").ok();
        assert_eq!(kinds(&s), [RouteKind::Pytorch, RouteKind::Pypi]);
        s.source = TorchSource::Pypi;
        assert_eq!(kinds(&s), [RouteKind::Pypi]);
        s.source = TorchSource::Pytorch;
        s.bundle = crate::fetch::GivenLocation::parse("/srv/bundle").ok();
        assert_eq!(kinds(&s), [RouteKind::Bundle, RouteKind::Pytorch]);
    }

    #[test]
    fn pypi_is_refused_with_the_reason_when_its_build_is_not_the_plan() {
        let w = torch_want("cu130", Some("cu132"));
        let c = candidates(&w, &IndexSettings::default());
        assert_eq!(c[1].route, RouteKind::Pypi);
        assert_eq!(c[1].refused.as_deref(), Some("PyPI's is cu132"));
        // A directory is looked at anyway: it may hold the tagged build.
        let s = IndexSettings {
            pypi: crate::fetch::GivenLocation::parse("/srv/wheels").ok(),
            ..IndexSettings::default()
        };
        assert!(candidates(&w, &s).iter().all(|c| c.refused.is_none()));
        let listed = Alternatives {
            pypi_lists_release: true,
            auto_serves: None,
        };
        let fixes_if = |found: &Alternatives| fixes(&w, &IndexSettings::default(), &[], found);
        assert!(
            fixes_if(&listed)
                .iter()
                .any(|f| f.contains("--cuda 13.2 plans torch 2.15.0 cu132")),
            "{:?}",
            fixes_if(&listed)
        );
        // Not shown to list it: the pin is not offered (it would be refused here too).
        assert!(
            !fixes_if(&Alternatives::default())
                .iter()
                .any(|f| f.contains("--cuda")),
            "{:?}",
            fixes_if(&Alternatives::default())
        );
    }
}
