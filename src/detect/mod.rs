//! `cudaup detect`: an exact picture of the machine. Every probe may fail without failing the
//! command; what it could not learn stays `null`. With `--system-root` every file is read under
//! that directory and nothing is run (no commands, no NVML).

pub mod cudnn;
pub mod driver;
mod findings;
pub mod gpu;
pub mod jetson;
pub mod os;
pub mod picture;
pub mod python;
pub mod root;
pub mod toolkits;
pub mod windows;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::catalog::Catalog;
use crate::model::finding::Finding;
use crate::model::system::{Driver, OsFamily, System, SCHEMA_VERSION};
use crate::model::version::Version;
use crate::world::process::Process;
use crate::world::runner::{which, Runner};

pub use root::Root;

/// How to detect.
#[derive(Debug, Clone)]
pub struct Options {
    /// The filesystem to read.
    pub root: Root,
    /// Also import torch to see whether CUDA works (`--deep`; seconds per interpreter).
    pub deep: bool,
    /// The NVML library to load; `None` skips NVML.
    pub nvml_library: Option<String>,
    /// Where cudaup keeps its toolkits (`Home::toolkits`), searched on the live machine; handed
    /// down as a path so that detect never reaches up into the install layer.
    pub cudaup_toolkits: Option<PathBuf>,
    /// Where cudaup keeps its venvs (`Home::venvs`), whose interpreters are candidates.
    pub cudaup_venvs: Option<PathBuf>,
    /// Whether to look for Pythons (one process per interpreter): an install whose profile has
    /// no framework never reads them.
    pub pythons: bool,
}

/// What `detect` learned: the System document and what looks wrong.
#[derive(Debug, Clone)]
pub struct Detection {
    /// The contract document.
    pub system: System,
    /// Findings, most severe first.
    pub findings: Vec<Finding>,
    /// os-release `PRETTY_NAME`, for the human report.
    pub os_pretty_name: Option<String>,
    /// The container runtime, if cudaup runs in one.
    pub container: Option<String>,
    /// Which probe answered for the NVIDIA GPUs (`NVML`, `nvidia-smi`, `PCI scan`).
    pub gpu_source: &'static str,
    /// On Windows, the NVIDIA driver's own files found (`nvidia-smi.exe`, `nvml.dll`); empty
    /// elsewhere.
    pub driver_files: Vec<PathBuf>,
    /// On Windows, whether `wsl.exe` is in System32 (`Some(path)`) or not (`Some(None)`);
    /// `None` elsewhere.
    pub wsl_exe: Option<Option<PathBuf>>,
}

/// Facts that feed findings but are not part of the System document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evidence {
    kernel_module_version: Option<String>,
    nvml_library_version: Option<String>,
    nvml_mismatch: bool,
    nvidia_on_pci: usize,
}

/// Runs every probe.
pub fn detect(
    process: &Process,
    runner: &dyn Runner,
    catalog: &Catalog,
    opts: &Options,
) -> Detection {
    let root = &opts.root;
    let live = root.is_live();
    let (mut os, mut release) = os::probe(root);
    let mut container = os::detect_container(root);
    // Windows has no os-release: its version comes from `ver`, its driver files from System32.
    let on_windows = live && os.family == OsFamily::Windows;
    let wsl_exe = on_windows.then(|| windows::wsl_exe(process));
    let driver_files = if on_windows {
        // Nor /proc: what a Linux path answers there is Wine's view of its Linux host.
        os.kernel = None;
        os.wsl = false;
        container = None;
        os.version = windows::version(runner);
        release.pretty_name = Some(match &os.version {
            Some(v) => format!("Windows {v}"),
            None => "Windows".to_owned(),
        });
        windows::driver_files(process)
    } else {
        Vec::new()
    };

    // The slow probes (NVML's start-up, one Python per interpreter) run side by side.
    let python_candidates = if !opts.pythons {
        Vec::new()
    } else if live {
        python_candidates(process, root, opts.cudaup_venvs.as_deref())
    } else {
        captured_python_candidates(root)
    };
    let (nvml_result, pythons) = std::thread::scope(|s| {
        let nvml = s.spawn(|| match (&opts.nvml_library, live) {
            (Some(lib), true) => Some(gpu::nvml::probe(lib)),
            _ => None,
        });
        let handles: Vec<_> = python_candidates
            .iter()
            .map(|c| s.spawn(move || python::inspect(root, runner, c)))
            .collect();
        let mut pythons: Vec<python::Found> = Vec::new();
        for found in handles.into_iter().filter_map(|h| h.join().ok().flatten()) {
            // Launchers (pyenv shims, `python` next to `python3`) that land in the same
            // environment are one interpreter.
            let same = |p: &python::Found| {
                p.python.version == found.python.version && p.site_dirs == found.site_dirs
            };
            if !pythons.iter().any(same) {
                pythons.push(found);
            }
        }
        (nvml.join().ok().flatten(), pythons)
    });

    let mut evidence = Evidence::default();
    let kernel = driver::probe_kernel_driver(root);
    evidence.kernel_module_version = kernel.as_ref().map(|k| k.0.clone());
    let ld_path: Vec<PathBuf> = if live {
        process
            .var("LD_LIBRARY_PATH")
            .map(|p| std::env::split_paths(p).collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    evidence.nvml_library_version =
        driver::probe_nvml_library_version(root, &driver::driver_library_dirs(&ld_path));

    let (report, gpu_source) = match nvml_result {
        Some(Ok(r)) => (Some(r), "NVML"),
        Some(Err(failure)) => {
            tracing::debug!(?failure, "NVML unavailable");
            evidence.nvml_mismatch = failure == gpu::nvml::NvmlFailure::VersionMismatch;
            (
                live.then(|| nvidia_smi(process, runner, &driver_files))
                    .flatten(),
                "nvidia-smi",
            )
        }
        None => (
            live.then(|| nvidia_smi(process, runner, &driver_files))
                .flatten(),
            "nvidia-smi",
        ),
    };
    let pci_gpus = gpu::pci::gpus_from_functions(&gpu::pci::scan(root), &catalog.gpus);
    evidence.nvidia_on_pci = pci_gpus
        .iter()
        .filter(|g| g.vendor == crate::model::system::Vendor::Nvidia)
        .count();
    let mut driver_gpus = report.as_ref().map(|r| r.gpus.clone()).unwrap_or_default();
    for g in &mut driver_gpus {
        gpu::complete_from_table(g, &catalog.gpus);
    }
    let gpu_source = if driver_gpus.is_empty() {
        "PCI scan"
    } else {
        gpu_source
    };
    let mut gpus = gpu::merge(driver_gpus, pci_gpus);
    // A Jetson's GPU sits on no PCI bus: name it from the board when nothing else answered.
    if let Some(j) = &os.jetson {
        if !gpus
            .iter()
            .any(|g| g.vendor == crate::model::system::Vendor::Nvidia)
        {
            gpus.extend(jetson::integrated_gpu(j, &catalog.jetson));
        }
    }

    let driver_version = report
        .as_ref()
        .and_then(|r| r.driver_version.clone())
        .or_else(|| kernel.as_ref().map(|k| k.0.clone()));
    let driver = driver_version.map(|version| {
        let cuda_version = report
            .as_ref()
            .and_then(|r| r.cuda_version.clone())
            .or_else(|| {
                Version::parse(&version)
                    .and_then(|v| catalog.cuda.newest_supported_by_linux_driver(&v))
            });
        Driver {
            version,
            cuda_version,
            kernel_module: kernel.as_ref().and_then(|k| k.1),
        }
    });
    let modules = root.read("/proc/modules").unwrap_or_default();
    let nouveau_loaded = driver::parse_loaded_modules(&modules).contains(&"nouveau");

    let hints = toolkit_hints(process, root, live, opts.cudaup_toolkits.clone());
    let toolkits = toolkits::probe(root, &hints, &|nvcc| nvcc_version(runner, nvcc));
    let mut include_dirs: Vec<PathBuf> = [
        "/usr/include",
        "/usr/include/x86_64-linux-gnu",
        "/usr/include/aarch64-linux-gnu",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let mut lib_dirs: Vec<PathBuf> = [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for t in &toolkits {
        include_dirs.push(Path::new(&t.path).join("include"));
        lib_dirs.push(Path::new(&t.path).join("lib64"));
    }
    let site_dirs: Vec<PathBuf> = pythons.iter().flat_map(|p| p.site_dirs.clone()).collect();
    let cudnn = cudnn::probe(root, &lib_dirs, &include_dirs, &site_dirs);

    let mut pythons: Vec<crate::model::system::Python> =
        pythons.into_iter().map(|f| f.python).collect();
    if opts.deep && live {
        std::thread::scope(|s| {
            for p in pythons.iter_mut().filter(|p| p.torch.is_some()) {
                s.spawn(move || {
                    let ok = python::torch_cuda_available(runner, Path::new(&p.path));
                    if let Some(t) = p.torch.as_mut() {
                        t.cuda_available = ok;
                    }
                });
            }
        });
    }

    let system = System {
        schema_version: SCHEMA_VERSION,
        os,
        gpus,
        driver,
        nouveau_loaded,
        toolkits,
        cudnn,
        pythons,
    };
    let findings = findings::findings(&system, &evidence, catalog);
    Detection {
        system,
        findings,
        os_pretty_name: release.pretty_name,
        container,
        gpu_source,
        driver_files,
        wsl_exe,
    }
}

fn nvidia_smi(
    process: &Process,
    runner: &dyn Runner,
    driver_files: &[PathBuf],
) -> Option<gpu::DriverReport> {
    let mut path = process.path_entries();
    path.push(PathBuf::from("/usr/lib/wsl/lib"));
    // Windows: where the driver put nvidia-smi.exe, also when that folder is not on PATH.
    path.extend(
        driver_files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf)),
    );
    let smi = which("nvidia-smi", &path)?;
    let timeout = Duration::from_secs(20);
    let query = |fields: &str| {
        runner
            .run(
                &smi,
                &[
                    &format!("--query-gpu={fields}"),
                    "--format=csv,noheader,nounits",
                ],
                timeout,
            )
            .ok()
            .filter(|o| o.success())
    };
    let out = query(gpu::nvidia_smi::QUERY).or_else(|| query(gpu::nvidia_smi::QUERY_WITHOUT_CC))?;
    let (gpus, driver_version) = gpu::nvidia_smi::parse_query(&out.stdout);
    // The banner of a plain run carries "CUDA Version"; it costs one more start of nvidia-smi,
    // paid only on this fallback path.
    let cuda_version = runner
        .run(&smi, &[], timeout)
        .ok()
        .and_then(|o| gpu::nvidia_smi::parse_cuda_version(&o.stdout));
    Some(gpu::DriverReport {
        driver_version,
        cuda_version,
        gpus,
    })
}

fn nvcc_version(runner: &dyn Runner, nvcc: &Path) -> Option<String> {
    let out = runner
        .run(nvcc, &["--version"], Duration::from_secs(20))
        .ok()?;
    toolkits::parse_nvcc_version(&out.stdout)
}

fn toolkit_hints(
    process: &Process,
    root: &Root,
    live: bool,
    cudaup_toolkits: Option<PathBuf>,
) -> toolkits::ToolkitHints {
    if !live {
        return toolkits::ToolkitHints {
            from_env: Vec::new(),
            cudaup_toolkits: None,
        };
    }
    let mut from_env: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| process.path_var(v))
        .collect();
    // NVIDIA's Windows installer names each toolkit in CUDA_PATH_V<major>_<minor>.
    if cfg!(windows) {
        from_env.extend(windows::cuda_path_vars(process));
    }
    if let Some(nvcc) = which("nvcc", &process.path_entries()) {
        let real = toolkits::resolve(root, &nvcc);
        if let Some(top) = real.parent().and_then(Path::parent) {
            from_env.push(top.to_path_buf());
        }
    }
    toolkits::ToolkitHints {
        from_env,
        cudaup_toolkits,
    }
}

/// Interpreters on `PATH` and in the environments a user is likely to mean.
fn python_candidates(
    process: &Process,
    root: &Root,
    cudaup_venvs: Option<&Path>,
) -> Vec<python::Candidate> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut env_roots: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"]
        .iter()
        .filter_map(|v| process.path_var(v))
        .collect();
    if let Some(venvs) = cudaup_venvs {
        env_roots.extend(root.list(venvs));
    }
    env_roots.push(process.cwd().join(".venv"));
    for env in env_roots {
        let prefix = crate::model::layout::Prefix::at(&env);
        // A venv's `Scripts\python.exe` on Windows; a conda env's `python.exe` at its root.
        for p in [
            prefix.python3(),
            prefix.python(),
            prefix.venv_python(),
            env.join("python.exe"),
        ] {
            if p.is_file() {
                found.push(p);
                break;
            }
        }
    }
    for dir in process.path_entries() {
        for name in ["python3", "python"] {
            if let Some(p) = which(name, std::slice::from_ref(&dir)) {
                // A pyenv shim is a shell script that costs ~100 ms per start; ask for the
                // interpreter it would run instead.
                match python::resolve_pyenv_shim(process, &p) {
                    Some(python::Shim::Real(real)) => found.push(real),
                    Some(python::Shim::System) => {}
                    None => found.push(p),
                }
            }
        }
    }
    if cfg!(windows) {
        found.extend(windows::python_installs(process));
    }
    dedupe_interpreters(root, found)
}

/// In a captured tree there is no environment to follow: the usual system interpreters and venvs
/// in the usual places are what can be found.
fn captured_python_candidates(root: &Root) -> Vec<python::Candidate> {
    let mut envs: Vec<PathBuf> = vec![PathBuf::from("/root/.venv")];
    for parent in ["/opt", "/home"] {
        for dir in root.list(parent) {
            envs.push(dir.join(".venv"));
            envs.push(dir.join("venv"));
        }
    }
    let found: Vec<PathBuf> = envs
        .iter()
        .map(|e| crate::model::layout::Prefix::at(e).python3())
        .chain(["/usr/bin/python3", "/usr/local/bin/python3"].map(PathBuf::from))
        .filter(|p| root.exists(p))
        .collect();
    dedupe_interpreters(root, found)
}

/// One candidate per environment: a venv's `python` and `python3` are one; so are /usr/bin/python3
/// and /bin/python3 on a merged-/usr system.
fn dedupe_interpreters(root: &Root, found: Vec<PathBuf>) -> Vec<python::Candidate> {
    let mut keys: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for interpreter in found {
        let venv = python::venv_of(root, &interpreter);
        let key = match &venv {
            Some(v) => toolkits::resolve(root, v),
            None => toolkits::resolve(root, &interpreter),
        };
        if keys.contains(&key) {
            continue;
        }
        keys.push(key);
        out.push(python::Candidate { interpreter, venv });
    }
    out
}
