//! Python interpreters and the frameworks installed into them, read from installed files
//! (torch/version.py, dist-info, TensorFlow's build_info.py) instead of importing them: importing
//! torch takes seconds; reading two files takes microseconds.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::system::{Framework, Python};
use crate::world::runner::Runner;

use super::root::Root;

/// A Python environment to inspect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The interpreter as found (not resolved, so venv paths stay recognisable).
    pub interpreter: PathBuf,
    /// The venv root when `<interpreter>/../../pyvenv.cfg` exists.
    pub venv: Option<PathBuf>,
}

/// Where an environment's packages are and which version it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// `3.12.3` (or `3.12` when only the directory name tells).
    pub version: Option<String>,
    /// site-packages / dist-packages directories in import order.
    pub site_dirs: Vec<PathBuf>,
}

/// A probed interpreter with the site directories its frameworks were read from.
#[derive(Debug, Clone)]
pub struct Found {
    /// What goes into the System document.
    pub python: Python,
    /// Where its packages are (the cuDNN probe looks for wheels there).
    pub site_dirs: Vec<PathBuf>,
}

/// `version = 3.12.3` (venv) or `version_info = 3.12.3` (uv) from pyvenv.cfg.
pub fn parse_pyvenv_cfg(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        matches!(k.trim(), "version" | "version_info").then(|| v.trim().to_owned())
    })
}

/// `__version__ = '2.11.0+cu130'` and `cuda: Optional[str] = '13.0'` (or `= None` for a CPU
/// build) from torch/version.py.
pub fn parse_torch_version_py(text: &str) -> Option<Framework> {
    let value_of = |key: &str| {
        text.lines().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix(key)?;
            // `key = …` or `key: Optional[str] = …`; not `key_suffix = …`.
            if !(rest.starts_with(' ') || rest.starts_with(':') || rest.starts_with('=')) {
                return None;
            }
            let value = rest.split_once('=')?.1.trim();
            Some(value.trim_matches(|c| c == '\'' || c == '"').to_owned())
        })
    };
    let version = value_of("__version__")?;
    let cuda = value_of("cuda").filter(|c| c != "None" && !c.is_empty());
    Some(Framework {
        version,
        cuda,
        cuda_available: None,
    })
}

/// `'cuda_version': '12.5.1'` from tensorflow/python/platform/build_info.py.
pub fn parse_tf_build_info(text: &str) -> Option<String> {
    let at = text.find("'cuda_version'")?;
    let rest = &text[at + "'cuda_version'".len()..];
    let value = rest.split_once(':')?.1.trim_start();
    let value = value.strip_prefix('\'')?;
    value
        .split_once('\'')
        .map(|(v, _)| v.to_owned())
        .filter(|v| !v.is_empty())
}

/// The version part of a dist-info directory for `package` (`torch-2.8.0+cu128.dist-info`).
fn dist_info_version(site: &[PathBuf], root: &Root, packages: &[&str]) -> Option<String> {
    site.iter().flat_map(|d| root.list(d)).find_map(|entry| {
        let name = entry.file_name()?.to_str()?.strip_suffix(".dist-info")?;
        let (pkg, version) = name.split_once('-')?;
        packages
            .iter()
            .any(|p| pkg.eq_ignore_ascii_case(p))
            .then(|| version.to_owned())
    })
}

/// Finds torch and TensorFlow in the first site directory that has each.
pub fn frameworks(root: &Root, site: &[PathBuf]) -> (Option<Framework>, Option<Framework>) {
    let torch = site
        .iter()
        .find_map(|d| root.read(d.join("torch/version.py")))
        .and_then(|t| parse_torch_version_py(&t))
        .or_else(|| {
            dist_info_version(site, root, &["torch"]).map(|version| Framework {
                cuda: cuda_from_local_tag(&version),
                version,
                cuda_available: None,
            })
        });
    let tensorflow = dist_info_version(
        site,
        root,
        &[
            "tensorflow",
            "tensorflow_cpu",
            "tensorflow_gpu",
            "tf_nightly",
        ],
    )
    .map(|version| Framework {
        version,
        cuda: site
            .iter()
            .find_map(|d| root.read(d.join("tensorflow/python/platform/build_info.py")))
            .and_then(|t| parse_tf_build_info(&t)),
        cuda_available: None,
    });
    (torch, tensorflow)
}

/// `2.8.0+cu128` → `12.8`.
fn cuda_from_local_tag(version: &str) -> Option<String> {
    let digits = version.split_once("+cu")?.1;
    let (major, minor) = digits.split_at(digits.len().checked_sub(1)?);
    Some(format!("{major}.{minor}"))
}

/// The venv root of an interpreter, if it lives in one.
pub fn venv_of(root: &Root, interpreter: &Path) -> Option<PathBuf> {
    let env = interpreter.parent()?.parent()?;
    root.exists(env.join("pyvenv.cfg"))
        .then(|| env.to_path_buf())
}

/// The layout of a venv from its files alone.
pub fn venv_layout(root: &Root, venv: &Path) -> Layout {
    let version = root
        .read(venv.join("pyvenv.cfg"))
        .and_then(|t| parse_pyvenv_cfg(&t));
    let mut site_dirs: Vec<PathBuf> = root
        .list(venv.join("lib"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python"))
        })
        .map(|p| p.join("site-packages"))
        .collect();
    site_dirs.push(venv.join("Lib/site-packages"));
    site_dirs.retain(|d| root.is_dir(d));
    Layout { version, site_dirs }
}

/// What a pyenv shim stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shim {
    /// The interpreter the shim would run.
    Real(PathBuf),
    /// pyenv's `system` version: the shim defers to an interpreter later on `PATH`.
    System,
}

/// Resolves `$PYENV_ROOT/shims/<name>` the way pyenv does: `PYENV_VERSION`, else the nearest
/// `.python-version` from the working directory up, else `$PYENV_ROOT/version`. `None` when the
/// path is not a pyenv shim or the version cannot be told (then the shim itself is run).
pub fn resolve_pyenv_shim(process: &crate::world::process::Process, shim: &Path) -> Option<Shim> {
    let shims = shim.parent()?;
    if shims.file_name()? != "shims" {
        return None;
    }
    let pyenv_root = shims.parent()?;
    let versions = pyenv_root.join("versions");
    if !versions.is_dir() {
        return None;
    }
    let first_word = |text: String| text.split_whitespace().next().map(str::to_owned);
    let version = process
        .var("PYENV_VERSION")
        .map(|v| v.split(':').next().unwrap_or(v).to_owned())
        .or_else(|| {
            process
                .cwd()
                .ancestors()
                .find_map(|d| fs_err::read_to_string(d.join(".python-version")).ok())
                .and_then(first_word)
        })
        .or_else(|| {
            fs_err::read_to_string(pyenv_root.join("version"))
                .ok()
                .and_then(first_word)
        })?;
    if version == "system" {
        return Some(Shim::System);
    }
    let real = versions.join(version).join("bin").join(shim.file_name()?);
    real.is_file().then_some(Shim::Real(real))
}

/// What a system interpreter says about itself: version, then one site directory a line.
pub const LAYOUT_SCRIPT: &str = "import sys,site\nprint(sys.version.split()[0])\nfor p in site.getsitepackages()+[site.getusersitepackages()]: print(p)";

/// Parses [`LAYOUT_SCRIPT`]'s output.
pub fn parse_layout_output(text: &str) -> Option<Layout> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let version = lines.next()?.to_owned();
    crate::model::version::Version::parse(&version)?;
    Some(Layout {
        version: Some(version),
        site_dirs: lines.map(PathBuf::from).collect(),
    })
}

/// The layout of a non-venv interpreter without running it (captured trees): Debian's and
/// upstream's directory conventions for the `pythonX.Y` the interpreter resolves to.
pub fn guessed_layout(root: &Root, interpreter: &Path) -> Layout {
    let real = super::toolkits::resolve(root, interpreter);
    let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let version = name
        .strip_prefix("python")
        .filter(|v| v.contains('.'))
        .map(str::to_owned);
    let prefix = real
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/usr"));
    let mut site_dirs = Vec::new();
    if let Some(v) = &version {
        site_dirs.push(Path::new("/usr/local/lib").join(format!("python{v}/dist-packages")));
        site_dirs.push(prefix.join(format!("lib/python{v}/site-packages")));
    }
    site_dirs.push(prefix.join("lib/python3/dist-packages"));
    site_dirs.retain(|d| root.is_dir(d));
    Layout { version, site_dirs }
}

/// Probes one candidate: files for venvs and captured trees, one short run otherwise.
pub fn inspect(root: &Root, runner: &dyn Runner, c: &Candidate) -> Option<Found> {
    let layout = match &c.venv {
        Some(venv) => {
            let l = venv_layout(root, venv);
            if l.version.is_some() {
                l
            } else {
                run_layout(runner, &c.interpreter)?
            }
        }
        None if root.is_live() => run_layout(runner, &c.interpreter)?,
        None => guessed_layout(root, &c.interpreter),
    };
    let site_dirs: Vec<PathBuf> = layout
        .site_dirs
        .into_iter()
        .filter(|d| root.is_dir(d))
        .collect();
    let (torch, tensorflow) = frameworks(root, &site_dirs);
    Some(Found {
        python: Python {
            path: c.interpreter.display().to_string(),
            version: layout.version?,
            torch,
            tensorflow,
        },
        site_dirs,
    })
}

fn run_layout(runner: &dyn Runner, interpreter: &Path) -> Option<Layout> {
    // -I: ignore PYTHON* variables and the current directory, so a stray `site.py` in the cwd
    // cannot change (or hijack) the answer. -S: skip site's start-up, which runs every .pth
    // file (30 ms with a few); `site.getsitepackages()` still answers without it.
    let out = runner
        .run(
            interpreter,
            &["-I", "-S", "-c", LAYOUT_SCRIPT],
            Duration::from_secs(10),
        )
        .ok()?;
    if !out.success() {
        tracing::debug!(interpreter = %interpreter.display(), stderr = %out.stderr, "python probe failed");
        return None;
    }
    parse_layout_output(&out.stdout)
}

/// `detect --deep`: imports torch and asks whether CUDA works (slow: seconds).
pub fn torch_cuda_available(runner: &dyn Runner, interpreter: &Path) -> Option<bool> {
    let out = runner
        .run(
            interpreter,
            &["-I", "-c", "import torch;print(torch.cuda.is_available())"],
            Duration::from_secs(120),
        )
        .ok()?;
    match out.stdout.trim() {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // torch/version.py of the torch on the H200 machine, and of a CPU-only build.
    const TORCH_CU130: &str = "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = '70d99e998b2a4e1e2a5d3e5c1e1f1e9c2b3a4d5e'\nhip: Optional[str] = None\nrocm: Optional[str] = None\nxpu: Optional[str] = None\n";
    const TORCH_CPU: &str = "__version__ = '2.8.0+cpu'\ndebug = False\ncuda: Optional[str] = None\nhip: Optional[str] = None\n";

    #[test]
    fn torch_version_py() {
        let t = parse_torch_version_py(TORCH_CU130).unwrap();
        assert_eq!(t.version, "2.11.0+cu130");
        assert_eq!(t.cuda.as_deref(), Some("13.0"));
        let t = parse_torch_version_py(TORCH_CPU).unwrap();
        assert_eq!(t.cuda, None);
    }

    #[test]
    fn tf_build_info() {
        let text = "build_info = {'cpu_compiler': '/usr/lib/llvm-18/bin/clang', 'cuda_compute_capabilities': ['sm_60', 'sm_70'], 'cuda_version': '12.5.1', 'cudnn_version': '9', 'is_cuda_build': True}\n";
        assert_eq!(parse_tf_build_info(text).as_deref(), Some("12.5.1"));
        assert_eq!(
            parse_tf_build_info("build_info = {'is_cuda_build': False}"),
            None
        );
    }

    #[test]
    fn pyvenv_and_layout_output() {
        assert_eq!(
            parse_pyvenv_cfg(
                "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"
            )
            .as_deref(),
            Some("3.12.3")
        );
        assert_eq!(
            parse_pyvenv_cfg("home = /x\nversion_info = 3.11.7\n").as_deref(),
            Some("3.11.7")
        );
        let l = parse_layout_output(
            "3.12.3\n/usr/local/lib/python3.12/dist-packages\n/usr/lib/python3/dist-packages\n",
        )
        .unwrap();
        assert_eq!(l.version.as_deref(), Some("3.12.3"));
        assert_eq!(l.site_dirs.len(), 2);
        assert!(parse_layout_output("Traceback (most recent call last):\n").is_none());
    }

    #[test]
    fn local_tag() {
        assert_eq!(cuda_from_local_tag("2.8.0+cu128").as_deref(), Some("12.8"));
        assert_eq!(cuda_from_local_tag("2.11.0+cu130").as_deref(), Some("13.0"));
        assert_eq!(cuda_from_local_tag("2.8.0"), None);
    }
}
