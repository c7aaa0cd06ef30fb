//! What an install will do, decided before anything is read from the network or changed:
//! [`InstallPlan::new`] takes the resolved settings, the machine and the catalog, and makes the
//! decisions only (the stack, the driver change, keeping or installing the toolkit and where,
//! the venv, what the framework step installs and what the environment step does). Asking the world (bundles, routes, archives) comes after, in the steps; nothing
//! here does I/O. [`survey`] is the one impure part that feeds it: the machine planned for (a
//! `--system` picture spliced with this machine's Pythons and toolkits) and an existing venv's
//! Python.

use std::path::{Path, PathBuf};

use crate::catalog::{Catalog, ComponentSelection};
use crate::model::plan::{Action, Component, Plan, Status};
use crate::model::request::WithComponent;
use crate::model::system::System;
use crate::model::version::Version;
use crate::settings::InstallSettings;
use crate::shell::Shell;
use crate::world::runner::Runner;

use super::home::Home;
use super::python::route::Want;

/// Which machine the plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// This machine: its driver may change.
    Here,
    /// Another machine's picture (`--system`): its GPUs and driver decide the stack, but the
    /// driver is never touched and the framework goes into a Python here.
    Picture,
}

/// Why there is no plan to run.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// No stack of the profile fits the machine; the plan says why (its `reasons`).
    #[error("no {} stack for this machine", .0.profile)]
    Unsupported(Box<Plan>),
    /// The profile installs a toolkit, and the resolver planned none.
    #[error("the {0} profile installs no CUDA toolkit")]
    NoToolkit(String),
    /// The resolver planned a toolkit without a version.
    #[error("the plan has no CUDA version")]
    NoCudaVersion,
    /// `--with tensorrt` on a profile without PyTorch (TensorRT's wheel goes with PyTorch only).
    #[error("--with tensorrt needs a PyTorch profile (full or pytorch)")]
    TensorrtNeedsTorch,
    /// `--components` names a set or component the catalog does not have.
    #[error("{0}")]
    Components(String),
}

/// The toolkit part of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolkitPlan {
    /// The machine's toolkit of the planned series stays (`--prefix DIR` installs a private
    /// copy instead).
    Keep {
        /// Its directory.
        path: PathBuf,
        /// Its version, as the plan has it (nvcc's for a detected toolkit).
        cuda: Version,
    },
    /// The catalog's release, into `prefix`.
    Install {
        /// The release to install.
        cuda: Version,
        /// The cuDNN release, unless left out.
        cudnn: Option<Version>,
        /// Where (`--prefix`, else `$CUDAUP_HOME/toolkits/cuda-<release>`).
        prefix: PathBuf,
        /// The machine architecture the archives are for (the planned machine's).
        arch: String,
        /// `--components`, resolved against the catalog.
        components: ComponentSelection,
    },
}

/// The framework part of an install: what the framework step installs, from the plan alone.
/// The routes that can serve it depend on the indexes and on a bundle found over the network,
/// so `locate` makes them, and with them what the check expects of the installed build.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameworkPlan {
    /// The packages, their build and the Python and platform they are for.
    pub want: Want,
    /// Whether the planned GPUs are this machine's and its driver stays, so the framework's
    /// check must see them.
    pub gpus_here: bool,
    /// `install --locked`: the lock's requirement lines with their sha256
    /// ([`crate::install::python::Packages::hashed`]); empty otherwise.
    pub hashed: Vec<String>,
}

/// What the environment step will do: the env scripts always, and the line that loads them in
/// the rc files of `shells` unless `--no-modify-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvPlan {
    /// `--shell` or the config's `[shell] shells`; `None`: the shells set up on this machine
    /// when the step runs ([`crate::install::env::shells_here`]).
    pub shells: Option<Vec<Shell>>,
    /// Hook the rc files (`false`: `--no-modify-path`).
    pub modify_path: bool,
}

/// Everything an install decided, before it asks the world anything.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallPlan {
    /// The settings it was made from.
    pub settings: InstallSettings,
    /// The machine planned for, as [`survey`] made it (a picture's GPUs with this machine's
    /// Pythons and toolkits, or this machine).
    pub system: System,
    /// The resolver's plan (status ok).
    pub plan: Plan,
    /// The machine planned for.
    pub target: Target,
    /// The driver change: only for this machine, when the plan installs, upgrades or asks for
    /// a manual driver.
    pub driver: Option<Component>,
    /// The toolkit, for the profiles that have one.
    pub toolkit: Option<ToolkitPlan>,
    /// The framework's venv (`--venv`, else `$CUDAUP_HOME/venvs/<profile>`).
    pub venv: PathBuf,
    /// The framework, for the profiles that have one.
    pub framework: Option<FrameworkPlan>,
    /// The environment step.
    pub env: EnvPlan,
}

impl InstallPlan {
    /// The decisions for `settings` on `system` (already [`survey`]ed), from `catalog`. Pure.
    pub fn new(
        settings: &InstallSettings,
        system: &System,
        catalog: &Catalog,
        home: &Home,
        target: Target,
    ) -> Result<InstallPlan, PlanError> {
        let request = &settings.request;
        let plan = crate::resolve::resolve(system, request, catalog);
        if plan.status == Status::Unsupported {
            return Err(PlanError::Unsupported(Box::new(plan)));
        }
        // Said before any route or archive is asked.
        if settings.with.contains(&WithComponent::Tensorrt) && !request.profile.has_torch() {
            return Err(PlanError::TensorrtNeedsTorch);
        }
        let driver = plan
            .component("driver")
            .filter(|d| {
                matches!(d.action, Action::Install | Action::Upgrade | Action::Manual)
                    && target == Target::Here
            })
            .cloned();
        let toolkit = if request.profile.has_toolkit() {
            let (cuda, cudnn, kept) = toolkit_of(&plan, settings.no_cudnn)?;
            Some(match (kept, &settings.prefix) {
                (Some(path), None) => ToolkitPlan::Keep {
                    path: PathBuf::from(path),
                    cuda,
                },
                (_, prefix) => {
                    let cuda =
                        super::summary::release_for(catalog, request.pins.cuda.as_ref(), &cuda);
                    ToolkitPlan::Install {
                        prefix: prefix.clone().unwrap_or_else(|| home.toolkit(&cuda)),
                        cuda,
                        cudnn,
                        arch: archive_arch(&system.os.arch),
                        components: components(catalog, settings.components.as_deref())?,
                    }
                }
            })
        } else {
            None
        };
        let framework =
            super::python::route::want(&plan, system, catalog).map(|want| FrameworkPlan {
                want,
                gpus_here: target == Target::Here
                    && driver.is_none()
                    && system.nvidia_gpus().next().is_some(),
                hashed: Vec::new(),
            });
        Ok(InstallPlan {
            settings: settings.clone(),
            system: system.clone(),
            venv: venv_dir(settings, home),
            framework,
            env: EnvPlan {
                shells: settings.shells.clone(),
                modify_path: settings.modify_path,
            },
            plan,
            target,
            driver,
            toolkit,
        })
    }

    /// The prefix the toolkit goes into when `--prefix` does not say: the catalog's release of
    /// the planned series (an exact `--cuda` pin when the catalog has it) under the home. `None`
    /// for a profile without a toolkit.
    pub fn default_prefix(&self, catalog: &Catalog, home: &Home) -> Option<PathBuf> {
        if !self.settings.request.profile.has_toolkit() {
            return None;
        }
        let (cuda, _, _) = toolkit_of(&self.plan, self.settings.no_cudnn).ok()?;
        let pin = self.settings.request.pins.cuda.as_ref();
        Some(home.toolkit(&super::summary::release_for(catalog, pin, &cuda)))
    }

    /// The NVIDIA GPUs planned for, as the report names them.
    pub fn gpus(&self) -> Vec<super::report::PlannedGpu> {
        self.system
            .nvidia_gpus()
            .map(|g| super::report::PlannedGpu {
                name: g.name.clone(),
                compute_capability: g.compute_capability.clone(),
                architecture: g.architecture.clone(),
            })
            .collect()
    }

    /// The toolkit the plan keeps on this machine, if it keeps one (whatever `--prefix` says:
    /// the environment falls back to it when nothing is installed).
    pub fn kept_toolkit(&self) -> Option<PathBuf> {
        self.plan
            .component("cuda")
            .filter(|c| c.action == Action::Keep)
            .and_then(|c| c.path.as_ref().map(PathBuf::from))
    }
}

/// `--components` (or the config's `install.components`), against the catalog.
pub fn components(catalog: &Catalog, spec: Option<&str>) -> Result<ComponentSelection, PlanError> {
    catalog
        .components
        .select(spec.unwrap_or(crate::catalog::DEFAULT_SET))
        .map_err(PlanError::Components)
}

/// The venv the framework goes into.
pub fn venv_dir(settings: &InstallSettings, home: &Home) -> PathBuf {
    settings
        .venv
        .clone()
        .unwrap_or_else(|| home.venv(settings.request.profile.name()))
}

/// The toolkit part of a plan: (release, cuDNN release, kept toolkit path).
pub fn toolkit_of(
    plan: &Plan,
    no_cudnn: bool,
) -> Result<(Version, Option<Version>, Option<String>), PlanError> {
    let cuda = plan
        .component("cuda")
        .ok_or_else(|| PlanError::NoToolkit(plan.profile.name().to_owned()))?;
    let kept = (cuda.action == Action::Keep)
        .then(|| cuda.path.clone())
        .flatten();
    // A kept toolkit's version is what is on disk; install the catalog's release of that series.
    let version = Version::parse(cuda.version.as_deref().unwrap_or_default())
        .ok_or(PlanError::NoCudaVersion)?;
    let cudnn = plan
        .component("cudnn")
        .filter(|c| c.action != Action::Skip && !no_cudnn)
        .and_then(|c| c.version.as_deref().and_then(Version::parse));
    Ok((version, cudnn, kept))
}

/// The machine architecture in NVIDIA's archive names: a picture of an aarch64 machine
/// (`arm64` in some pictures) gets its linux-sbsa archives.
fn archive_arch(arch: &str) -> String {
    match arch {
        "arm64" => "aarch64".to_owned(),
        a => a.to_owned(),
    }
}

/// The machine to plan for: `live` (this machine, as detect saw it), or the `picture`'s GPUs
/// and driver with this machine's Pythons, toolkits and cuDNN (the framework goes into a
/// Python here). An existing venv at `venv` is the Python to plan for: what it has decides
/// keep or upgrade.
pub fn survey(live: &System, picture: Option<System>, venv: &Path, runner: &dyn Runner) -> System {
    let mut system = match picture {
        Some(mut other) => {
            other.pythons = live.pythons.clone();
            other.toolkits = live.toolkits.clone();
            other.cudnn = live.cudnn.clone();
            other
        }
        None => live.clone(),
    };
    if let Some(found) = probe_venv(runner, venv) {
        system.pythons.retain(|p| p.path != found.path);
        system.pythons.insert(0, found);
    }
    system
}

/// The Python of an existing venv, as detect sees it.
pub fn probe_venv(runner: &dyn Runner, dir: &Path) -> Option<crate::model::system::Python> {
    let venv = super::python::Venv {
        dir: dir.to_owned(),
    };
    if !venv.exists() {
        return None;
    }
    let candidate = crate::detect::python::Candidate {
        interpreter: venv.python(),
        venv: Some(dir.to_owned()),
    };
    crate::detect::python::inspect(&crate::detect::Root::live(), runner, &candidate)
        .map(|f| f.python)
}

#[cfg(test)]
mod tests;
