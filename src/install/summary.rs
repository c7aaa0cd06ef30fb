//! What a component selection amounts to before anything is fetched: the components, and the
//! download on each route from the catalog's sizes (`plan` and the wizard show it).

use serde::Serialize;

use crate::catalog::{Catalog, ComponentSelection, DEFAULT_SET};
use crate::model::plan::{Action, Plan};
use crate::model::version::Version;

/// One route's download.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteSize {
    /// Bytes, cuDNN not included.
    pub bytes: u64,
    /// The release whose sizes these are.
    pub basis: String,
    /// Whether that is the planned release (else the nearest one the catalog has sizes for).
    pub exact: bool,
    /// Chosen components this route cannot install for the release.
    pub missing: Vec<String>,
}

/// The toolkit part of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolkitComponents {
    /// `--components` as given (or the default set).
    pub set: String,
    /// The chosen components.
    pub components: Vec<String>,
    /// The release they are for.
    pub cuda: String,
    /// Sizes as NVIDIA's wheels, where the catalog has the release's pins.
    pub wheels: Option<RouteSize>,
    /// Sizes as NVIDIA's redistributable archives, where the catalog has sizes for the major.
    pub redist: Option<RouteSize>,
}

/// The components and sizes for `selection` of CUDA `cuda` on `arch`.
pub fn summarize(
    catalog: &Catalog,
    selection: &ComponentSelection,
    cuda: &Version,
    arch: &str,
) -> ToolkitComponents {
    let m = &catalog.components;
    let wheels = m.estimate(selection, "wheels", cuda, arch).map(|e| {
        let pins = m.wheels_for(cuda);
        let missing = selection
            .components
            .iter()
            .filter(|n| {
                let w = m.component(n).and_then(|c| c.wheel.as_deref());
                w.and_then(|w| pins?.packages.get(w)?.size(arch)).is_none()
            })
            .cloned()
            .collect();
        RouteSize {
            bytes: e.bytes,
            basis: e.basis.unwrap_or_default(),
            exact: e.exact,
            missing,
        }
    });
    let redist = m
        .estimate(selection, "redist", cuda, arch)
        .map(|e| RouteSize {
            bytes: e.bytes,
            basis: e.basis.unwrap_or_default(),
            exact: e.exact,
            missing: Vec::new(),
        });
    ToolkitComponents {
        set: selection.spec.clone(),
        components: selection.components.clone(),
        cuda: cuda.to_string(),
        wheels,
        redist,
    }
}

/// The toolkit release to install for a planned CUDA version: the release itself when the
/// catalog has it (a pin such as `--cuda 13.0.2` means that release), else the newest release
/// of its series (a kept toolkit's nvcc says `13.0.88`).
pub fn release_to_install(catalog: &Catalog, planned: &Version) -> Version {
    if catalog.cuda.release.iter().any(|r| &r.version == planned) {
        return planned.clone();
    }
    catalog
        .cuda
        .newest_of_series(planned)
        .cloned()
        .unwrap_or_else(|| planned.clone())
}

/// The release to install or mirror: an exact release pin (`--cuda 13.0.2`) when the catalog
/// has it — also where the plan keeps this machine's toolkit of that series, whose version is
/// its nvcc's (13.0.88) — else [`release_to_install`]'s.
pub fn release_for(
    catalog: &Catalog,
    pin: Option<&crate::model::version::VersionPin>,
    planned: &Version,
) -> Version {
    // Only a full release (`13.0.2`); `12.1` means the newest of its series.
    let exact = pin.filter(|p| p.is_exact()).and_then(|p| {
        catalog
            .cuda
            .release
            .iter()
            .find(|r| &r.version == p.version())
    });
    if let Some(r) = exact {
        return r.version.clone();
    }
    release_to_install(catalog, planned)
}

/// For a plan that installs a toolkit: what `--components spec` installs and downloads. `arch`
/// is the wheels' platform ([`crate::sources::pypi::wheel_platform`]: `win_amd64` on Windows,
/// for which NVIDIA's archives have no recorded sizes).
pub fn for_plan(
    plan: &Plan,
    catalog: &Catalog,
    spec: Option<&str>,
    arch: &str,
) -> Result<Option<ToolkitComponents>, String> {
    let selection = catalog.components.select(spec.unwrap_or(DEFAULT_SET))?;
    let Some(cuda) = plan
        .component("cuda")
        .filter(|c| matches!(c.action, Action::Install | Action::Upgrade))
        .and_then(|c| c.version.as_deref().and_then(Version::parse))
    else {
        return Ok(None);
    };
    let cuda = release_to_install(catalog, &cuda);
    Ok(Some(summarize(catalog, &selection, &cuda, arch)))
}

impl ToolkitComponents {
    /// The download on the route an install takes first: NVIDIA's archives where the catalog
    /// sizes them, else the wheels.
    pub fn bytes(&self) -> Option<u64> {
        self.redist
            .as_ref()
            .or(self.wheels.as_ref())
            .map(|r| r.bytes)
    }

    /// Human lines: the set, its components, and the download per route.
    pub fn render(&self) -> String {
        let size = |r: &RouteSize, how: &str| {
            let basis = if r.exact {
                String::new()
            } else {
                format!(", from CUDA {}'s sizes", r.basis)
            };
            format!("{} {how}{basis}", indicatif::HumanBytes(r.bytes))
        };
        let mut o = format!(
            "\nToolkit components ({}), {} in all:\n  {}\n",
            self.set,
            self.components.len(),
            self.components.join(" ")
        );
        let mut sizes = Vec::new();
        if let Some(w) = &self.wheels {
            sizes.push(size(w, "as wheels (--source wheels)"));
        }
        if let Some(r) = &self.redist {
            sizes.push(size(r, "as NVIDIA's archives (--source redist)"));
        }
        if sizes.is_empty() {
            sizes.push("size unknown (--dry-run lists each download)".into());
        }
        o.push_str(&format!(
            "  download: {}; cuDNN comes on top\n",
            sizes.join(", ")
        ));
        if let Some(w) = self.wheels.as_ref().filter(|w| !w.missing.is_empty()) {
            o.push_str(&format!(
                "  not available as wheels for CUDA {}: {}\n",
                self.cuda,
                w.missing.join(", ")
            ));
        }
        o
    }
}
