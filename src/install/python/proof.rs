//! What `install` proves about the torch it put into a venv, and what it leaves to `verify`.
//!
//! `import torch` costs seconds (2.3–2.5 CPU-s for torch 2.15, nearly all of it Python modules:
//! `torch._meta_registrations`, `torch._refs`, `torch.nn`, …), as much again as the rest of the
//! framework step beside the installer. So install proves from the files, which read in
//! milliseconds: `torch/version.py` is the planned version and CUDA build (it is what
//! `torch.__version__` and `torch.version.cuda` return), every file the planned distributions'
//! RECORDs list is there at its size (the check doctor and repair share,
//! [`super::record::problems`]), and the installed wheels are within the plan's constraints
//! (read from their `.dist-info`, with no interpreter). One start of the venv's Python then loads
//! torch's native extension with `ctypes` (well under a second): the interpreter runs, and the
//! libraries torch is built on — and every CUDA library they need, through their RPATH into the
//! NVIDIA wheels — load on this system. That is where an install goes wrong in practice (a
//! missing wheel, a glibc or libstdc++ too old for it).
//!
//! Left to `cudaup verify` (which `install --verify` and the wizard run): the Python-level
//! import, whether CUDA is available, kernels for each GPU, and computing on it. Where the fast
//! proof cannot decide (no native extension to load, or loading it fails), the full import runs
//! as before ([`super::check::TORCH_SCRIPT`]) and its verdict stands, so the shortcut never fails
//! an install the import would pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::check::{self, TorchExpectation, TorchReport};
use super::{PyEnvError, Venv};
use crate::world::runner::Runner;

/// Loads the library `sys.argv[1]` into the venv's Python; prints one JSON object.
pub const NATIVE_SCRIPT: &str = r#"
import ctypes, json, sys
r = {}
try:
    ctypes.CDLL(sys.argv[1])
    r["loaded"] = True
except OSError as e:
    r["error"] = str(e)
print(json.dumps(r))
"#;

/// What [`NATIVE_SCRIPT`] says.
#[derive(Debug, Default, Deserialize)]
struct Native {
    #[serde(default)]
    loaded: bool,
    error: Option<String>,
}

/// Each installed distribution's version, by normalised name, from the `Version:` line of its
/// `.dist-info/METADATA` (what `importlib.metadata` reads).
pub fn installed_versions(venv: &Path) -> BTreeMap<String, String> {
    let Some(site) = crate::install::guard::site_packages(venv) else {
        return BTreeMap::new();
    };
    super::record::dist_infos(&site)
        .into_iter()
        .filter_map(|(name, info)| {
            let text = crate::world::fs::read_regular_text(&info.join("METADATA"), 8 << 20).ok()?;
            let version = text
                .lines()
                .take_while(|l| !l.is_empty())
                .find_map(|l| l.strip_prefix("Version:"))?
                .trim()
                .to_owned();
            Some((name, version))
        })
        .collect()
}

/// The file name ending of a Python extension module here: a shared object, on Windows a DLL
/// named `.pyd`.
const EXTENSION: &str = if cfg!(windows) { ".pyd" } else { ".so" };

/// torch's native extension in `site`: `torch/_C.cpython-312-x86_64-linux-gnu.so`, on Windows
/// `torch\_C.cp312-win_amd64.pyd` (`site` is `Lib\site-packages` in a Windows venv).
fn native_extension(site: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs_err::read_dir(site.join("torch"))
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("_C.") && n.ends_with(EXTENSION)
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Proves the torch in `venv` is the planned one (see the module's text); `names`: the planned
/// distributions whose files are held against their RECORD. `Ok` carries notes.
pub fn torch(
    runner: &dyn Runner,
    venv: &Venv,
    want: &TorchExpectation,
    python: &str,
    names: &[String],
) -> Result<Vec<String>, PyEnvError> {
    let full_import = || -> Result<Vec<String>, PyEnvError> {
        let report: TorchReport = super::report(runner, venv, check::TORCH_SCRIPT)?;
        check::judge_torch(&report, want, python).map_err(PyEnvError::Check)
    };
    let Some(site) = crate::install::guard::site_packages(&venv.dir) else {
        return full_import();
    };
    let Some(files) = crate::world::fs::read_regular_text(&site.join("torch/version.py"), 1 << 20)
        .ok()
        .and_then(|t| crate::detect::python::parse_torch_version_py(&t))
    else {
        return full_import();
    };
    let report = TorchReport {
        version: Some(files.version.clone()),
        cuda: files.cuda.clone(),
        ..TorchReport::default()
    };
    check::judge_build(&report, want, python).map_err(PyEnvError::Check)?;
    let problems = super::record::problems(&venv.dir, names);
    if !problems.is_empty() {
        return Err(PyEnvError::Check(format!(
            "{}; {}",
            problems.join("; "),
            check::torch_fix(want, python)
        )));
    }
    let Some(native) = native_extension(&site) else {
        return full_import();
    };
    let path = native.display().to_string();
    let loaded = super::report_with::<Native>(runner, venv, NATIVE_SCRIPT, &[&path]);
    match loaded {
        Ok(Native {
            loaded: true,
            error: None,
        }) => {}
        other => {
            tracing::debug!("torch's native extension did not load ({other:?}): importing torch");
            return full_import();
        }
    }
    let cuda = files
        .cuda
        .as_deref()
        .map_or_else(|| "CPU".to_owned(), |c| format!("CUDA {c}"));
    Ok(vec![format!(
        "torch {} ({cuda}) as planned, by its torch/version.py; its files as its RECORD lists; its native libraries and the CUDA libraries they need load here (importing it and computing on the GPU: `cudaup verify`)",
        files.version
    )])
}

#[cfg(test)]
mod tests;
