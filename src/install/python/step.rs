//! The framework part of `cudaup install`: a venv with the planned PyTorch or TensorFlow, and the
//! check that what got installed is what was planned.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::install::python::check::{self, TfReport, TorchExpectation, TorchReport};
use crate::install::python::{Packages, PyEnvError, Session, Tool, Venv, VenvReceipt};
use crate::model::plan::{Action, Plan};
use crate::model::request::Profile;
use crate::model::system::{OsFamily, System};
use crate::model::version::Version;
use crate::world::runner::Runner;

/// PyTorch's wheel index; a mirror replaces this base (`--torch-index`).
pub const TORCH_INDEX: &str = "https://download.pytorch.org/whl";

/// What the framework step will check afterwards.
#[derive(Debug, Clone)]
pub enum Expect {
    /// A torch build.
    Torch(TorchExpectation),
    /// A TensorFlow release.
    Tensorflow(Version),
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
    pub packages: Option<Packages>,
    /// What the check expects.
    pub expect: Expect,
    /// The plan's constraints: passed to pip/uv as `-c`, and checked after the install.
    pub constraints: Vec<String>,
}

/// Index settings for the framework step.
#[derive(Debug, Clone)]
pub struct Indexes {
    /// The PyPI index (or mirror).
    pub pypi: String,
    /// The base of PyTorch's index (or a mirror of it).
    pub torch: String,
}

/// Builds the step from the plan. `venv` is `--venv` or the default under the home.
pub fn step(
    plan: &Plan,
    system: &System,
    venv: PathBuf,
    indexes: &Indexes,
    gpus_here: bool,
) -> Result<Option<FrameworkStep>> {
    if !matches!(
        plan.profile,
        Profile::Full | Profile::Pytorch | Profile::Tensorflow | Profile::Cpu
    ) {
        return Ok(None);
    }
    let python = plan
        .component("python")
        .ok_or_else(|| Error::Usage("the plan has no Python".into()))?;
    let version = python.version.clone().unwrap_or_default();
    let Some(base) = python
        .path
        .clone()
        .filter(|_| python.action == Action::Keep)
    else {
        return Err(Error::Unsupported(format!(
            "no Python in the range this stack needs is installed: {} — install Python {version} (Debian/Ubuntu: `sudo apt-get install python{version} python{version}-venv`; anywhere: `uv python install {version}`), then run cudaup again",
            python.reason
        )));
    };
    let venv = Venv { dir: venv };
    // The plan keeps what the chosen Python already has only when that Python is the venv's.
    let same_venv = Path::new(&base)
        .parent()
        .and_then(Path::parent)
        .is_some_and(|root| std::path::absolute(root).ok() == std::path::absolute(&venv.dir).ok());
    let (packages, expect) = match plan.profile {
        Profile::Tensorflow => {
            let tf = plan
                .component("tensorflow")
                .ok_or_else(|| Error::Usage("the plan has no TensorFlow".into()))?;
            let v = tf.version.clone().unwrap_or_default();
            let packages = Packages {
                requirements: vec![format!("tensorflow[and-cuda]=={v}")],
                index_url: indexes.pypi.clone(),
                extra_index_urls: Vec::new(),
            };
            let keep = tf.action == Action::Keep && same_venv;
            (
                (!keep).then_some(packages),
                Expect::Tensorflow(
                    Version::parse(&v).ok_or_else(|| Error::Usage(format!("bad version {v}")))?,
                ),
            )
        }
        _ => {
            let torch = plan
                .component("torch")
                .ok_or_else(|| Error::Usage("the plan has no torch".into()))?;
            let variant = torch.variant.clone().unwrap_or_else(|| "cpu".into());
            let macos = system.os.family == OsFamily::Macos;
            let index = if macos {
                indexes.pypi.clone()
            } else {
                format!("{}/{variant}", indexes.torch.trim_end_matches('/'))
            };
            let requirements: Vec<String> = plan
                .components
                .iter()
                .filter(|c| matches!(c.name.as_str(), "torch" | "torchvision" | "torchaudio"))
                .map(|c| {
                    let v = c.version.clone().unwrap_or_default();
                    // PyTorch's index tags each build (`2.14.1+cu130`); pinning the tag keeps pip
                    // from taking PyPI's build of the same version instead. A companion the plan
                    // takes from PyPI (no variant) is pinned untagged.
                    if macos || c.variant.is_none() {
                        format!("{}=={v}", c.name)
                    } else {
                        format!("{}=={v}+{variant}", c.name)
                    }
                })
                .collect();
            let cuda = variant
                .strip_prefix("cu")
                .filter(|d| d.len() >= 2)
                .and_then(|d| {
                    Version::parse(&format!("{}.{}", &d[..d.len() - 1], &d[d.len() - 1..]))
                });
            let gpus = system
                .nvidia_gpus()
                .filter_map(|g| {
                    Some((
                        g.name.clone(),
                        Version::parse(g.compute_capability.as_deref()?)?,
                    ))
                })
                .collect();
            let expect = TorchExpectation {
                version: Version::parse(torch.version.as_deref().unwrap_or_default())
                    .ok_or_else(|| Error::Usage("the plan has no torch version".into()))?,
                variant,
                cuda,
                index_url: index.clone(),
                gpus,
                gpus_here,
            };
            let keep = torch.action == Action::Keep && same_venv;
            let packages = Packages {
                requirements,
                index_url: index,
                extra_index_urls: if macos {
                    Vec::new()
                } else {
                    vec![indexes.pypi.clone()]
                },
            };
            ((!keep).then_some(packages), Expect::Torch(expect))
        }
    };
    Ok(Some(FrameworkStep {
        venv,
        base_python: PathBuf::from(base),
        python_version: version,
        packages,
        expect,
        constraints: plan
            .constraints
            .iter()
            .map(|c| c.requirement.clone())
            .collect(),
    }))
}

/// Describes the step for the pre-install summary.
pub fn describe(step: &FrameworkStep, out: &mut dyn Write) -> Result<()> {
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
            if !step.constraints.is_empty() {
                writeln!(
                    out,
                    "  with -c constraints: {}",
                    step.constraints.join(", ")
                )?;
            }
            writeln!(out, "  from {}", p.index_url)?;
            for e in &p.extra_index_urls {
                writeln!(out, "  and  {e}")?;
            }
        }
        None => writeln!(out, "  already installed as planned: only checked")?,
    }
    Ok(())
}

/// Runs the step: venv, install, check. A venv created here is removed again if the install
/// fails, so a failed run leaves the machine as it was.
pub fn execute(
    step: &FrameworkStep,
    runner: &dyn Runner,
    tool: Tool,
    log_path: PathBuf,
    profile: Profile,
    show: &mut dyn FnMut(&str),
) -> std::result::Result<(VenvReceipt, Vec<String>), PyEnvError> {
    let mut session = Session::new(runner, tool, log_path, show)?;
    let created = session.create(&step.base_python, &step.python_version, &step.venv)?;
    crate::world::checkpoint::reach("venv-created");
    if let Some(p) = &step.packages {
        if let Err(e) = session.install_constrained(&step.venv, p, &step.constraints) {
            if created {
                let _ = fs_err::remove_dir_all(&step.venv.dir);
            }
            return Err(e);
        }
    }
    let python = step.venv.python().display().to_string();
    let mut notes = match &step.expect {
        Expect::Torch(want) => {
            let report: TorchReport =
                crate::install::python::report(runner, &step.venv, check::TORCH_SCRIPT)?;
            check::judge_torch(&report, want, &python).map_err(PyEnvError::Check)?
        }
        Expect::Tensorflow(v) => {
            let report: TfReport =
                crate::install::python::report(runner, &step.venv, check::TF_SCRIPT)?;
            check::judge_tf(&report, v, false).map_err(PyEnvError::Check)?
        }
    };
    if !step.constraints.is_empty() {
        // The installed cuDNN (and any other bounded wheel) must serve every planned GPU.
        let installed: std::collections::BTreeMap<String, String> =
            crate::pyenv::report(runner, &step.venv, check::WHEELS_SCRIPT)?;
        notes.extend(
            check::judge_constraints(&installed, &step.constraints).map_err(PyEnvError::Check)?,
        );
    }
    let receipt = VenvReceipt {
        schema_version: 1,
        venv: std::path::absolute(&step.venv.dir)?,
        base_python: step.base_python.display().to_string(),
        created,
        profile: profile.name().to_owned(),
        packages: step.packages.clone().unwrap_or(Packages {
            requirements: Vec::new(),
            index_url: String::new(),
            extra_index_urls: Vec::new(),
        }),
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    Ok((receipt, notes))
}
