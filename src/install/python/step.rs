//! The framework part of `cudaup install`: a venv with the planned PyTorch or TensorFlow, and the
//! check that what got installed is what was planned.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::fetch::Fetcher;
use crate::install::python::check::{self, TorchExpectation};
use crate::install::python::route::{self, Candidate, IndexSettings, Layout, Route, Want};
use crate::install::python::{Packages, PyEnvError, RouteRecord, Session, Tool, Venv, VenvReceipt};
use crate::model::plan::{Action, Plan};
use crate::model::request::Profile;
use crate::model::system::System;
use crate::model::version::Version;
use crate::world::progress::Reporter;
use crate::world::runner::Runner;

pub use crate::install::python::route::TORCH_INDEX;

/// What the framework step will check afterwards.
#[derive(Debug, Clone)]
pub enum Expect {
    /// A torch build.
    Torch(TorchExpectation),
    /// A TensorFlow release.
    Tensorflow(Version),
    /// A JAX release with the CUDA plugin of a major.
    Jax {
        /// The release.
        version: Version,
        /// The plugin's CUDA major.
        cuda: u32,
        /// Whether the planned GPUs are this machine's (so JAX must see them).
        gpus_here: bool,
    },
}

impl Expect {
    /// `torch 2.15.0 (cu130)`, `TensorFlow 2.21.0`, `JAX 0.12.0.1 (cuda13)`.
    pub fn describe(&self) -> String {
        match self {
            Expect::Torch(t) => format!("torch {} ({})", t.version, t.variant),
            Expect::Tensorflow(v) => format!("TensorFlow {v}"),
            Expect::Jax { version, cuda, .. } => format!("JAX {version} (cuda{cuda})"),
        }
    }
}

/// The framework step of an install.
#[derive(Debug, Clone)]
pub struct FrameworkStep {
    /// The venv to use or create.
    pub venv: Venv,
    /// The interpreter it is made from.
    pub base_python: PathBuf,
    /// Its version.
    pub python_version: String,
    /// What to install; `None` when the plan keeps what the venv has (then only the check runs).
    /// Until [`FrameworkStep::choose_route`] has run, the first route's guess.
    pub packages: Option<Packages>,
    /// What the check expects.
    pub expect: Expect,
    /// What must be installed, for the routes to be asked.
    pub want: Option<Want>,
    /// The routes, in the order they are asked.
    pub candidates: Vec<Candidate>,
    /// The index settings they came from.
    pub settings: IndexSettings,
    /// The route taken, once asked.
    pub route: Option<Route>,
    /// The plan's constraints: passed to pip/uv as `-c`, and checked after the install.
    pub constraints: Vec<String>,
    /// Build tools installed into the venv after the framework, from the same indexes (`ninja`
    /// when the plan has a CUDA toolkit: `torch.utils.cpp_extension` builds only with it). Not
    /// part of the framework: one that cannot be installed is a note, not a failed install.
    pub build_tools: Vec<String>,
}

/// The build tools a venv gets for `plan`: Ninja (PyPI `ninja`) when the plan has a CUDA
/// toolkit, so the extensions the toolkit is there for build (and `verify` can prove it).
/// Unpinned: a build tool, not part of the stack the catalog keeps compatible.
pub fn build_tools(plan: &Plan) -> Vec<String> {
    let toolkit = plan
        .component("cuda")
        .is_some_and(|c| c.action != Action::Skip);
    if toolkit {
        vec!["ninja".to_owned()]
    } else {
        Vec::new()
    }
}

/// Index settings for the framework step (kept under its old name).
pub type Indexes = IndexSettings;

/// The Python a framework's venv is made from: the plan's kept Python. `Ok(None)` for a profile
/// without a framework; refused when no Python in the range the stack needs is installed (what
/// the wizard previews, and the step says, before anything is asked).
pub fn base_python(plan: &Plan) -> Result<Option<String>, PyEnvError> {
    if !matches!(
        plan.profile,
        Profile::Full | Profile::Pytorch | Profile::Tensorflow | Profile::Jax | Profile::Cpu
    ) {
        return Ok(None);
    }
    let python = plan
        .component("python")
        .ok_or_else(|| PyEnvError::Plan("the plan has no Python".into()))?;
    let version = python.version.clone().unwrap_or_default();
    match python.path.clone().filter(|_| python.action == Action::Keep) {
        Some(base) => Ok(Some(base)),
        None => Err(PyEnvError::Unsupported(format!(
            "no Python in the range this stack needs is installed: {} — install Python {version} (Debian/Ubuntu: `sudo apt-get install python{version} python{version}-venv`; anywhere: `uv python install {version}`), then run cudaup again",
            python.reason
        ))),
    }
}

/// Whether `python` is the interpreter of the venv at `venv`: the plan keeps what the chosen
/// Python already has only then.
fn is_venv_python(python: &str, venv: &Path) -> bool {
    Path::new(python)
        .parent()
        .and_then(Path::parent)
        .is_some_and(|root| std::path::absolute(root).ok() == std::path::absolute(venv).ok())
}

/// Whether the framework step of `plan` into `venv` only checks what is there (its framework
/// kept, in that venv's own Python): then it downloads nothing. JAX is always reinstalled.
pub fn only_checks(plan: &Plan, venv: &Path) -> bool {
    let kept = |name: &str| {
        plan.component(name)
            .is_some_and(|c| c.action == Action::Keep)
    };
    let in_venv = plan
        .component("python")
        .and_then(|p| p.path.as_deref())
        .is_some_and(|p| is_venv_python(p, venv));
    match plan.profile {
        Profile::Tensorflow => kept("tensorflow") && in_venv,
        Profile::Full | Profile::Pytorch | Profile::Cpu => kept("torch") && in_venv,
        Profile::Jax | Profile::CudaDev => false,
    }
}

/// Builds the step from the plan and what the install plan wants of the framework (`want`,
/// [`route::want`]'s; `gpus_here`: the planned GPUs are this machine's). `venv` is `--venv` or
/// the default under the home.
pub fn step(
    plan: &Plan,
    want: Option<&Want>,
    gpus_here: bool,
    system: &System,
    venv: PathBuf,
    indexes: &IndexSettings,
) -> Result<Option<FrameworkStep>, PyEnvError> {
    let Some(base) = base_python(plan)? else {
        return Ok(None);
    };
    let version = plan
        .component("python")
        .and_then(|p| p.version.clone())
        .unwrap_or_default();
    let same_venv = is_venv_python(&base, &venv);
    let venv = Venv { dir: venv };
    let want = want
        .cloned()
        .ok_or_else(|| PyEnvError::Plan("the plan has no framework to install".into()))?;
    let candidates = route::candidates(&want, indexes);
    let (keep, expect) = match plan.profile {
        Profile::Jax => {
            let jax = plan
                .component("jax")
                .ok_or_else(|| PyEnvError::Plan("the plan has no JAX".into()))?;
            let v = jax.version.clone().unwrap_or_default();
            let cuda = jax
                .variant
                .as_deref()
                .and_then(|e| e.strip_prefix("cuda"))
                .and_then(|m| m.parse().ok())
                .ok_or_else(|| PyEnvError::Plan("the plan's JAX names no CUDA plugin".into()))?;
            (
                false,
                Expect::Jax {
                    version: Version::parse(&v)
                        .ok_or_else(|| PyEnvError::Plan(format!("bad version {v}")))?,
                    cuda,
                    gpus_here,
                },
            )
        }
        Profile::Tensorflow => {
            let tf = plan
                .component("tensorflow")
                .ok_or_else(|| PyEnvError::Plan("the plan has no TensorFlow".into()))?;
            let v = tf.version.clone().unwrap_or_default();
            (
                tf.action == Action::Keep && same_venv,
                Expect::Tensorflow(
                    Version::parse(&v)
                        .ok_or_else(|| PyEnvError::Plan(format!("bad version {v}")))?,
                ),
            )
        }
        _ => {
            let torch = plan
                .component("torch")
                .ok_or_else(|| PyEnvError::Plan("the plan has no torch".into()))?;
            let variant = want.variant.clone().unwrap_or_else(|| "cpu".into());
            let cuda = variant_cuda(&variant);
            let gpus = system
                .nvidia_gpus()
                .filter_map(|g| {
                    Some((
                        g.name.clone(),
                        Version::parse(g.compute_capability.as_deref()?)?,
                    ))
                })
                .collect();
            let first = candidates.iter().find(|c| c.refused.is_none());
            let expect = TorchExpectation {
                version: Version::parse(torch.version.as_deref().unwrap_or_default())
                    .ok_or_else(|| PyEnvError::Plan("the plan has no torch version".into()))?,
                variant,
                cuda,
                index_args: first
                    .map(|c| vec!["--index-url".to_owned(), c.base.to_string()])
                    .unwrap_or_default(),
                requirement: want.requirements(true).into_iter().next(),
                gpus,
                gpus_here,
            };
            (
                torch.action == Action::Keep && same_venv,
                Expect::Torch(expect),
            )
        }
    };
    let packages = (!keep).then(|| guess(&want, &candidates, indexes));
    Ok(Some(FrameworkStep {
        venv,
        base_python: PathBuf::from(base),
        python_version: version,
        packages,
        expect,
        want: Some(want),
        candidates,
        settings: indexes.clone(),
        route: None,
        constraints: plan
            .constraints
            .iter()
            .map(|c| c.requirement.clone())
            .collect(),
        build_tools: build_tools(plan),
    }))
}

/// A cancellation says what it leaves behind (`what`); other errors pass.
fn left(e: PyEnvError, what: String) -> PyEnvError {
    match e {
        PyEnvError::Cancelled {
            what: step, from, ..
        } => PyEnvError::Cancelled {
            what: step,
            left: format!("{what}, and what earlier steps installed stays"),
            from,
        },
        e => e,
    }
}

/// `cu132` → CUDA 13.2; `cpu` → none.
pub fn variant_cuda(variant: &str) -> Option<Version> {
    variant
        .strip_prefix("cu")
        .filter(|d| d.len() >= 2)
        .and_then(|d| Version::parse(&format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..])))
}

/// The packages of the first usable route, before anything was asked (what `--dry-run` showed
/// before routes existed, and what a caller that cannot ask gets).
fn guess(want: &Want, candidates: &[Candidate], s: &IndexSettings) -> Packages {
    let first = candidates.iter().find(|c| c.refused.is_none());
    match first.map(|c| c.route) {
        Some(route::RouteKind::Pytorch) => Packages {
            requirements: want.requirements(true),
            index_url: format!(
                "{}/{}",
                s.torch_base().as_str().trim_end_matches('/'),
                want.variant.as_deref().unwrap_or("cpu")
            ),
            extra_index_urls: vec![s.pypi_base().to_string()],
            ..Packages::default()
        },
        Some(_) | None => Packages {
            requirements: want.requirements(false),
            index_url: first
                .map_or_else(|| s.pypi_base(), |c| c.base.clone())
                .to_string(),
            ..Packages::default()
        },
    }
}

/// The pip arguments for a route.
pub fn packages_for(route: &Route) -> Packages {
    let mut p = Packages {
        requirements: route.requirements.clone(),
        ..Packages::default()
    };
    match &route.layout {
        Layout::Index { url } => {
            p.index_url = url.clone();
            p.extra_index_urls.extend(route.dependencies.clone());
        }
        Layout::FindLinks { url } => {
            p.find_links.push(url.clone());
            match &route.dependencies {
                Some(deps) => p.index_url = deps.clone(),
                None => p.no_index = true,
            }
        }
    }
    // A bundle is the whole world: nothing in pip's or uv's own config may add an index.
    p.isolated = route.route == route::RouteKind::Bundle;
    p
}

impl FrameworkStep {
    /// Asks the routes (when something is to be installed) and takes the first that serves the
    /// plan; nothing is changed on the machine. `Err` names every host asked and what works
    /// instead.
    pub fn choose_route(&mut self, fetcher: &Fetcher) -> Result<(), PyEnvError> {
        let (Some(_), Some(want)) = (&self.packages, &self.want) else {
            return Ok(());
        };
        let chosen = super::probe::choose(fetcher, want, &self.candidates, &self.settings);
        // A Ctrl-C while the routes were asked ends here, whatever they answered.
        if fetcher
            .cancel_flag()
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return Err(PyEnvError::Cancelled {
                what: "asking where the framework comes from".into(),
                left:
                    "nothing was changed for the framework, and what earlier steps installed stays"
                        .into(),
                from: "from this step".into(),
            });
        }
        let route = chosen?;
        let p = packages_for(&route);
        if let Expect::Torch(t) = &mut self.expect {
            t.index_args = p.index_args(&Tool::Pip);
            t.requirement = route.requirements.first().cloned();
        }
        self.packages = Some(p);
        self.route = Some(route);
        Ok(())
    }

    /// The route as `plan` and `install --json` show it.
    pub fn route_view(&self) -> route::RouteView {
        match &self.route {
            Some(r) => route::RouteView::Chosen(Box::new(r.clone())),
            None => route::RouteView::NotProbed {
                source: self.settings.source,
                variant: self.want.as_ref().and_then(|w| w.variant.clone()),
                candidates: self.candidates.clone(),
            },
        }
    }
}

/// Describes the step for the pre-install summary.
pub fn describe(step: &FrameworkStep, out: &mut dyn Write) -> std::io::Result<()> {
    let verb = if step.venv.exists() {
        "into the existing venv"
    } else {
        "into a new venv"
    };
    writeln!(
        out,
        "Python framework {verb} {} (from {})",
        step.venv.dir.display(),
        step.base_python.display()
    )?;
    match &step.packages {
        Some(p) => {
            writeln!(out, "  pip install {}", p.requirements.join(" "))?;
            match &step.route {
                Some(r) => {
                    writeln!(
                        out,
                        "  from {} {} ({})",
                        r.route.label(),
                        p.origin(),
                        r.route
                    )?;
                    writeln!(out, "  why: {}", r.why)?;
                    for a in &r.tried {
                        writeln!(out, "  not {} {}: {}", a.route.label(), a.base, a.outcome)?;
                    }
                }
                None => writeln!(out, "  from {}", p.origin())?,
            }
            if !step.constraints.is_empty() {
                writeln!(
                    out,
                    "  with -c constraints: {}",
                    step.constraints.join(", ")
                )?;
            }
            for e in &p.extra_index_urls {
                writeln!(out, "  and  {e} (dependencies)")?;
            }
            if !step.build_tools.is_empty() {
                writeln!(
                    out,
                    "  then pip install {} (CUDA extensions build with it)",
                    step.build_tools.join(" ")
                )?;
            }
        }
        None => writeln!(out, "  already installed as planned: only checked")?,
    }
    Ok(())
}

/// The distributions an install proof checks: `names` (the framework's own), then each package
/// the step installs that is not among them yet.
fn with_requirements(step: &FrameworkStep, mut names: Vec<String>) -> Vec<String> {
    let Some(p) = &step.packages else {
        return names;
    };
    for r in p
        .requirements
        .iter()
        .filter_map(|r| crate::catalog::Requirement::parse(r))
    {
        if !names.contains(&r.name) {
            names.push(r.name);
        }
    }
    names
}

/// Runs the step: venv, install, check. A venv created here is removed again if the install
/// fails, so a failed run leaves the machine as it was. pip's and uv's output goes to `log_path`
/// and, as packages and bytes, to `progress`.
#[allow(clippy::too_many_arguments)]
pub fn execute(
    step: &FrameworkStep,
    runner: &dyn Runner,
    tool: Tool,
    log_path: PathBuf,
    profile: Profile,
    progress: &dyn Reporter,
    cache: Option<PathBuf>,
    cancel: Option<&std::sync::atomic::AtomicBool>,
) -> Result<(VenvReceipt, Vec<String>), PyEnvError> {
    let mut session = Session::new(runner, tool, log_path, progress)?;
    session.set_cache(cache);
    session.set_cancel(cancel);
    let dir = step.venv.dir.display().to_string();
    let created = session
        .create(&step.base_python, &step.python_version, &step.venv)
        .map_err(|e| left(e, format!("no venv was made at {dir}")))?;
    crate::world::checkpoint::reach("venv-created");
    if let Some(p) = &step.packages {
        if let Err(e) = session.install_constrained(&step.venv, p, &step.constraints) {
            if created {
                let _ = fs_err::remove_dir_all(&step.venv.dir);
            }
            return Err(left(
                e,
                if created {
                    format!("the venv it was making at {dir} is removed")
                } else {
                    format!("the venv {dir} was there before and may hold some of the new packages")
                },
            ));
        }
    }
    if matches!(step.expect, Expect::Jax { .. }) {
        // Before the check imports JAX: a toolkit on LD_LIBRARY_PATH must not shadow its wheels.
        crate::install::python::preload::write(&step.venv.dir)?;
    }
    let python = step.venv.python().display().to_string();
    let mut tool_notes = Vec::new();
    if let (Some(p), false) = (&step.packages, step.build_tools.is_empty()) {
        let tools = Packages {
            requirements: step.build_tools.clone(),
            ..p.clone()
        };
        if let Err(e) = session.install(&step.venv, &tools) {
            tool_notes.push(format!(
                "{} could not be installed into the venv ({e}): verify skips the CUDA-extension check; `{python} -m pip install {}` adds it",
                step.build_tools.join(", "),
                step.build_tools.join(" ")
            ));
        }
    }
    let mut notes = match &step.expect {
        Expect::Torch(want) => {
            // From its files and one load of its native libraries; the import is verify's
            // (src/install/python/proof.rs says why and what that leaves out).
            let names = with_requirements(step, vec!["torch".to_owned()]);
            super::proof::torch(runner, &step.venv, want, &python, &names)?
        }
        Expect::Tensorflow(v) => {
            // From its metadata, build_info.py, files and one load of its framework library;
            // the import is the fallback (proof.rs).
            let names = with_requirements(step, vec!["tensorflow".to_owned()]);
            super::proof::tensorflow(runner, &step.venv, v, &names)?
        }
        Expect::Jax {
            version,
            cuda,
            gpus_here,
        } => {
            let index_args = step
                .packages
                .as_ref()
                .map(|p| p.index_args(&Tool::Pip))
                .unwrap_or_default();
            // From its metadata, files and one load of its CUDA plugin; the import is the
            // fallback (proof.rs), seeing the GPUs is verify's.
            let names = with_requirements(
                step,
                vec!["jax".to_owned(), format!("jax-cuda{cuda}-plugin")],
            );
            let want = super::proof::JaxExpectation {
                version,
                major: *cuda,
                gpus_here: *gpus_here,
                index_args: &index_args,
            };
            super::proof::jax(runner, &step.venv, &want, &names)?
        }
    };
    if !step.constraints.is_empty() {
        // The installed cuDNN (and any other bounded wheel) must serve every planned GPU.
        let installed = super::proof::installed_versions(&step.venv.dir);
        notes.extend(
            check::judge_constraints(&installed, &step.constraints).map_err(PyEnvError::Check)?,
        );
    }
    notes.extend(tool_notes);
    let receipt = VenvReceipt {
        schema_version: 1,
        venv: std::path::absolute(&step.venv.dir)?,
        base_python: step.base_python.display().to_string(),
        created,
        profile: profile.name().to_owned(),
        packages: step.packages.clone().unwrap_or_default(),
        route: step.route.as_ref().map(|r| RouteRecord {
            route: r.route,
            base: r.base.to_string(),
            variant: step.want.as_ref().and_then(|w| w.variant.clone()),
        }),
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        guard: None,
    };
    Ok((receipt, notes))
}
