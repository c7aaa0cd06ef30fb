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

/// Whether `library` loads in the venv's Python with everything it needs (one start of the
/// interpreter, [`NATIVE_SCRIPT`]); `what` names it in the debug line when it does not, and the
/// caller then falls back to the full import.
fn loads(runner: &dyn Runner, venv: &Venv, library: &Path, what: &str) -> bool {
    let path = library.display().to_string();
    match super::report_with::<Native>(runner, venv, NATIVE_SCRIPT, &[&path]) {
        Ok(Native {
            loaded: true,
            error: None,
        }) => true,
        other => {
            tracing::debug!("{what} did not load ({other:?}): importing the framework");
            false
        }
    }
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
    if !loads(runner, venv, &native, "torch's native extension") {
        return full_import();
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

/// The PJRT plugin JAX loads for CUDA `major`: `jax_plugins/xla_cuda13/xla_cuda_plugin.so` (from
/// `jax-cuda13-pjrt`); on Windows a `.pyd`/`.dll` is not looked for (JAX has no CUDA wheels
/// there), so the import decides.
fn jax_plugin_library(site: &Path, major: u32) -> Option<PathBuf> {
    if cfg!(windows) {
        return None;
    }
    let mut found: Vec<PathBuf> =
        fs_err::read_dir(site.join(format!("jax_plugins/xla_cuda{major}")))
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "so"))
            .collect();
    found.sort();
    found.into_iter().next()
}

/// Proves the JAX in `venv` is the planned one without importing it (`import jax` costs
/// seconds): `jax` and the `jax-cuda<major>-plugin` distributions at the planned release and no
/// other CUDA plugin beside it, read from their `.dist-info/METADATA` (what the import check
/// reads through `importlib.metadata`) and judged by the same [`check::judge_jax`]; every file
/// the planned distributions' RECORDs list there at its size; and one start of the venv's Python
/// that loads the CUDA PJRT plugin's library with `ctypes`. Whether JAX sees the GPUs is
/// `cudaup verify`'s, as torch's CUDA is. Where this cannot decide (no metadata, no plugin
/// library, the load fails), the import runs as before and its verdict stands.
pub fn jax(
    runner: &dyn Runner,
    venv: &Venv,
    want: &JaxExpectation<'_>,
    names: &[String],
) -> Result<Vec<String>, PyEnvError> {
    let full_import = || -> Result<Vec<String>, PyEnvError> {
        let report: check::JaxReport = super::report(runner, venv, check::JAX_SCRIPT)?;
        check::judge_jax(
            &report,
            want.version,
            want.major,
            want.gpus_here,
            want.index_args,
        )
        .map_err(PyEnvError::Check)
    };
    let Some(site) = crate::install::guard::site_packages(&venv.dir) else {
        return full_import();
    };
    let installed = installed_versions(&venv.dir);
    let Some(version) = installed.get("jax").cloned() else {
        return full_import();
    };
    let report = check::JaxReport {
        version: Some(version.clone()),
        jaxlib: installed.get("jaxlib").cloned(),
        plugins: installed
            .iter()
            .filter(|(n, _)| n.starts_with("jax-cuda") && n.ends_with("-plugin"))
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect(),
        ..check::JaxReport::default()
    };
    // The GPUs are verify's: judged here as on a machine without them, whose note is not ours.
    check::judge_jax(&report, want.version, want.major, false, want.index_args)
        .map_err(PyEnvError::Check)?;
    let problems = super::record::problems(&venv.dir, names);
    if !problems.is_empty() {
        return Err(PyEnvError::Check(problems.join("; ")));
    }
    let Some(plugin) = jax_plugin_library(&site, want.major) else {
        return full_import();
    };
    if !loads(runner, venv, &plugin, "JAX's CUDA plugin") {
        return full_import();
    }
    let gpus = if want.gpus_here {
        "seeing the GPUs and computing on them: `cudaup verify`"
    } else {
        "no GPU on this machine: `cudaup verify` on a GPU machine runs its GPU check"
    };
    Ok(vec![format!(
        "JAX {version} with jax-cuda{}-plugin as planned, by their metadata; their files as their RECORDs list; its CUDA plugin loads here ({gpus})",
        want.major
    )])
}

/// The CUDA version a TensorFlow build names in `tensorflow/python/platform/build_info.py`
/// (`('cuda_version', '12.5.1')`: what `build_info.build_info["cuda_version"]` returns); `None`
/// when the file or the entry is not there (the import then decides).
fn tf_build_cuda(site: &Path) -> Option<String> {
    let text = crate::world::fs::read_regular_text(
        &site.join("tensorflow/python/platform/build_info.py"),
        1 << 20,
    )
    .ok()?;
    let rest = &text[text.find("'cuda_version'")? + "'cuda_version'".len()..];
    let rest = rest.trim_start().strip_prefix(',')?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let value = &rest[1..];
    let end = value.find(quote)?;
    crate::model::version::Version::parse(&value[..end]).map(|_| value[..end].to_owned())
}

/// Proves the TensorFlow in `venv` is the planned `version` without importing it (`import
/// tensorflow` costs seconds): the `tensorflow` distribution's version from its METADATA and the
/// CUDA it was built for from its `build_info.py`, judged by the same [`check::judge_tf`]; every
/// file the planned distributions' RECORDs list at its size; one start of the venv's Python that
/// loads `tensorflow/libtensorflow_framework.so.2` with `ctypes`. Where this cannot decide (no
/// metadata, no CUDA entry in build_info.py, no library, the load fails), the import runs as
/// before and its verdict stands.
pub fn tensorflow(
    runner: &dyn Runner,
    venv: &Venv,
    version: &crate::model::version::Version,
    names: &[String],
) -> Result<Vec<String>, PyEnvError> {
    let full_import = || -> Result<Vec<String>, PyEnvError> {
        let report: check::TfReport = super::report(runner, venv, check::TF_SCRIPT)?;
        check::judge_tf(&report, version, false).map_err(PyEnvError::Check)
    };
    let Some(site) = crate::install::guard::site_packages(&venv.dir) else {
        return full_import();
    };
    let Some(got) = installed_versions(&venv.dir).get("tensorflow").cloned() else {
        return full_import();
    };
    let Some(cuda) = tf_build_cuda(&site) else {
        return full_import();
    };
    let report = check::TfReport {
        version: Some(got.clone()),
        cuda: Some(cuda.clone()),
        ..check::TfReport::default()
    };
    let notes = check::judge_tf(&report, version, false).map_err(PyEnvError::Check)?;
    let problems = super::record::problems(&venv.dir, names);
    if !problems.is_empty() {
        return Err(PyEnvError::Check(problems.join("; ")));
    }
    let library = site.join("tensorflow/libtensorflow_framework.so.2");
    if cfg!(windows) || !library.is_file() {
        return full_import();
    }
    if !loads(runner, venv, &library, "TensorFlow's framework library") {
        return full_import();
    }
    let mut notes = notes;
    notes.push(format!(
        "TensorFlow {got} (built for CUDA {cuda}) as planned, by its metadata and build_info.py; its files as its RECORD lists; its framework library loads here (importing it and seeing the GPUs: `cudaup verify`)"
    ));
    Ok(notes)
}

/// What install planned for JAX ([`jax`]).
#[derive(Debug, Clone, Copy)]
pub struct JaxExpectation<'a> {
    /// The planned release.
    pub version: &'a crate::model::version::Version,
    /// The CUDA major of its plugin.
    pub major: u32,
    /// Whether the machine has NVIDIA GPUs.
    pub gpus_here: bool,
    /// pip's flags for where the planned wheels come from (for the printed fix).
    pub index_args: &'a [String],
}

#[cfg(test)]
mod tests;
