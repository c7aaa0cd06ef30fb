//! JAX venvs cudaup installed: a jaxlib without its CUDA plugin (JAX then runs on the CPU and
//! says so only in a warning, jax-ml/jax #29068), and JAX beside TensorFlow in one venv
//! (importing TensorFlow first makes its CUDA libraries resident and glibc keeps the first copy
//! of a soname, so JAX's plugin can fail). Read from the venv's `*.dist-info` directories, never
//! by importing anything.

use std::path::{Path, PathBuf};

use crate::install::driver::shell_line;
use crate::install::python::{Tool, VenvReceipt};
use crate::model::finding::Severity;

use super::{Diagnosis, Inputs};

/// One JAX venv from the receipts, and what its site-packages holds.
#[derive(Debug, Clone)]
pub struct JaxSite<'a> {
    /// Its receipt.
    pub receipt: &'a VenvReceipt,
    /// The planned requirement (`jax[cuda13]==0.12.0.1`).
    pub requirement: String,
    /// The plugin the plan named (`jax-cuda13-plugin`).
    pub plugin: String,
    /// The distributions installed (normalised names, `jax_cuda13_plugin` → `jax-cuda13-plugin`)
    /// with their versions.
    pub installed: Vec<(String, String)>,
}

impl JaxSite<'_> {
    fn has(&self, name: &str) -> Option<&str> {
        self.installed
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The venv's `lib/pythonX.Y/site-packages` directories.
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(venv.join("lib")) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect()
}

/// The distributions a venv holds, from its `NAME-VERSION.dist-info` directories.
pub fn installed(venv: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in site_packages(venv) {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for e in entries.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some((n, v)) = name
                .strip_suffix(".dist-info")
                .and_then(|s| s.split_once('-'))
            {
                out.push((crate::sources::pypi::normalize(n), v.to_owned()));
            }
        }
    }
    out.sort();
    out
}

/// The JAX venvs the receipts name, with what each holds.
pub fn sites<'a>(inputs: &'a Inputs<'_>) -> Vec<JaxSite<'a>> {
    inputs
        .receipts
        .venvs
        .iter()
        .filter(|(_, r)| r.profile == "jax" && r.venv.is_dir())
        .filter_map(|(_, r)| {
            let (requirement, (_, cuda)) = r.packages.requirements.iter().find_map(|q| {
                crate::install::python::check::jax_planned(q).map(|p| (q.clone(), p))
            })?;
            Some(JaxSite {
                receipt: r,
                requirement,
                plugin: format!("jax-cuda{cuda}-plugin"),
                installed: installed(&r.venv),
            })
        })
        .collect()
}

/// Every JAX check.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    for site in sites(inputs) {
        let venv = site.receipt.venv.display().to_string();
        let python = crate::install::python::Venv {
            dir: site.receipt.venv.clone(),
        }
        .python()
        .display()
        .to_string();
        if site.has("jax").is_some() && site.has(&site.plugin).is_none() {
            out.push(
                Diagnosis::new(
                    "jax-cpu-only",
                    Severity::Error,
                    format!(
                        "JAX in {venv} has no CUDA plugin ({} is not installed): it runs on the CPU only, and says so only in a warning",
                        site.plugin
                    ),
                )
                .evidence(format!(
                    "cudaup installed this venv with profile jax, asking for {}",
                    site.requirement
                ))
                .evidence(format!(
                    "installed: {}",
                    site.installed
                        .iter()
                        .filter(|(n, _)| n.starts_with("jax"))
                        .map(|(n, v)| format!("{n} {v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .fix(format!(
                    "{}   # reinstalls {} into the venv\nor: {python} -m pip install --force-reinstall '{}' {}",
                    super::repair("venv-packages"),
                    site.requirement,
                    site.requirement,
                    shell_line(&site.receipt.packages.index_args(&Tool::Pip))
                ).trim_end().to_owned()),
            );
        }
        if let Some(tf) = site.has("tensorflow") {
            out.push(
                Diagnosis::new(
                    "jax-with-tensorflow",
                    Severity::Warning,
                    format!(
                        "JAX and TensorFlow {tf} share the venv {venv}: whichever is imported first loads its CUDA libraries, and glibc keeps the first copy of each soname, so the other can fail or fall back to the CPU"
                    ),
                )
                .evidence(format!("{} and tensorflow {tf} are installed there", site.requirement))
                .fix(format!(
                    "one venv per framework: cudaup install --profile tensorflow --venv DIR puts TensorFlow in its own, then: {python} -m pip uninstall -y tensorflow"
                )),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
