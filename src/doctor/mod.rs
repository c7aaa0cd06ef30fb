//! `cudaup doctor`: everything that looks wrong with the GPU stack, each with a stable id, a
//! severity, the evidence and the fix.
//!
//! The inputs are gathered once at the edge — the detected [`System`], a few more facts from the
//! same filesystem ([`Facts`]), the receipts, the process environment and the catalog — and every
//! check is a function of them ([`Inputs`]), so tests build broken states without a GPU. The
//! checks that must run something (`nvcc`, `df`) take a [`Runner`]; those that verify installed
//! files read the paths the receipts name.
//!
//! Groups, one module each: [`driver`] (the kernel module, its libraries, the GPU's branch window,
//! the stack's driver floors, Secure Boot, nouveau), [`wsl`] (a Linux driver inside WSL2), [`environment`] (`PATH`, `CUDA_HOME`,
//! `LD_LIBRARY_PATH`), [`python`] (torch builds, their kernels, cuDNN copies), [`compiler`] (the
//! host compiler nvcc accepts), [`disk`] (free space), [`installed`] (files against the
//! receipts) and [`self_copy`] (cudaup's own copy in `$CUDAUP_HOME/bin`). [`explain`] holds the `--explain` texts.

pub mod compiler;
pub mod deep;
pub mod disk;
pub mod driver;
pub mod environment;
pub mod explain;
pub mod guard;
pub mod installed;
pub mod jax;
pub mod python;
pub mod repair;
pub mod self_copy;
pub mod uv;
pub mod venv_files;
pub mod wsl;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::detect::Root;
use crate::install::python::VenvReceipt;
use crate::install::receipts::Receipts;
use crate::model::finding::{Finding, Severity};
use crate::model::system::{Framework, System};
use crate::world::process::Process;
use crate::world::runner::Runner;

pub use crate::model::finding::Diagnosis;

/// A versioned driver library file (`libnvidia-ml.so.580.95.05`, `libcuda.so.580.95.05`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverLibrary {
    /// Machine path.
    pub path: PathBuf,
    /// `libnvidia-ml` or `libcuda`.
    pub name: &'static str,
    /// The version in the file name.
    pub version: String,
    /// When the file was last written, if readable.
    pub modified: Option<SystemTime>,
}

/// Facts about the machine beyond the System document, read from the same filesystem.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The loaded kernel module's version (/proc/driver/nvidia/version, /sys/module/nvidia).
    pub kernel_module_version: Option<String>,
    /// Whether /proc/driver/nvidia/version exists.
    pub proc_driver_present: bool,
    /// Versioned NVML and libcuda files in the driver's library directories, in search order.
    pub driver_libraries: Vec<DriverLibrary>,
    /// Boot time (`btime` in /proc/stat).
    pub boot_time: Option<SystemTime>,
    /// NVIDIA kernel module files installed for the running kernel (searched only when no driver
    /// is loaded).
    pub installed_modules: Vec<PathBuf>,
    /// Where the first `libnvidia-ml.so.1` soname link points: the library the loader takes.
    pub nvml_soname_target: Option<PathBuf>,
    /// The container runtime, when cudaup runs in one (the driver is then the host's).
    pub container: Option<String>,
    /// Under WSL: how it was told, and a Linux driver's module files and packages.
    pub wsl: wsl::WslFacts,
}

impl Facts {
    /// Reads the facts from `root` (`LD_LIBRARY_PATH` counts only on the live machine, as in
    /// detect).
    pub fn gather(root: &Root, process: &Process, system: &System) -> Facts {
        let ld_path: Vec<PathBuf> = if root.is_live() {
            process
                .var("LD_LIBRARY_PATH")
                .map(|p| std::env::split_paths(p).collect())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut driver_libraries = Vec::new();
        let mut nvml_soname_target = None;
        for dir in crate::detect::driver::driver_library_dirs(&ld_path) {
            if nvml_soname_target.is_none() {
                nvml_soname_target = root
                    .read_link(dir.join("libnvidia-ml.so.1"))
                    .map(|t| dir.join(t));
            }
            for path in root.list(&dir) {
                let Some((name, version)) = driver_library_version(&path) else {
                    continue;
                };
                if driver_libraries
                    .iter()
                    .any(|l: &DriverLibrary| l.path == path)
                {
                    continue;
                }
                let modified = fs_err::symlink_metadata(root.host_path(&path))
                    .and_then(|m| m.modified())
                    .ok();
                driver_libraries.push(DriverLibrary {
                    path,
                    name,
                    version,
                    modified,
                });
            }
        }
        let boot_time = root
            .read("/proc/stat")
            .and_then(|t| parse_boot_time(&t))
            .map(|secs| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(secs));
        let installed_modules = match (&system.driver, &system.os.kernel) {
            (None, Some(kernel)) => find_modules(root, &Path::new("/lib/modules").join(kernel)),
            _ => Vec::new(),
        };
        Facts {
            kernel_module_version: crate::detect::driver::probe_kernel_driver(root).map(|k| k.0),
            proc_driver_present: root.exists("/proc/driver/nvidia/version"),
            driver_libraries,
            boot_time,
            installed_modules,
            nvml_soname_target,
            container: crate::detect::os::detect_container(root),
            wsl: wsl::WslFacts::gather(root, process, system),
        }
    }

    /// The user-space NVML library the driver would load: the one the `libnvidia-ml.so.1` link
    /// names (a stale file of an old driver beside it does not count), else the first versioned
    /// one found.
    pub fn nvml_library(&self) -> Option<&DriverLibrary> {
        let nvml = || {
            self.driver_libraries
                .iter()
                .filter(|l| l.name == "libnvidia-ml")
        };
        self.nvml_soname_target
            .as_ref()
            .and_then(|t| nvml().find(|l| &l.path == t))
            .or_else(|| nvml().next())
    }
}

/// `("libnvidia-ml", "580.95.05")` from `…/libnvidia-ml.so.580.95.05`; the soname links
/// (`.so.1`) carry no version.
pub fn driver_library_version(path: &Path) -> Option<(&'static str, String)> {
    let file = path.file_name()?.to_str()?;
    for name in ["libnvidia-ml", "libcuda"] {
        if let Some(v) = file.strip_prefix(name).and_then(|r| r.strip_prefix(".so.")) {
            if v.contains('.') && v.chars().all(|c| c.is_ascii_digit() || c == '.') {
                return Some((name, v.to_owned()));
            }
        }
    }
    None
}

/// `btime 1718000000` from /proc/stat.
pub fn parse_boot_time(proc_stat: &str) -> Option<u64> {
    proc_stat
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// `nvidia.ko`, `nvidia.ko.xz`, `nvidia.ko.zst` under a kernel's module tree (bounded walk).
fn find_modules(root: &Root, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        for entry in root.list(&d) {
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "nvidia.ko" || name.starts_with("nvidia.ko.") {
                out.push(entry);
            } else if depth < 6 && root.is_dir(&entry) && !name.starts_with('.') {
                stack.push((entry, depth + 1));
            }
        }
    }
    out.sort();
    out
}

/// Everything the checks look at.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// What detect found.
    pub system: &'a System,
    /// More facts from the same filesystem.
    pub facts: &'a Facts,
    /// What cudaup installed.
    pub receipts: &'a Receipts,
    /// The environment of this process.
    pub process: &'a Process,
    /// The compatibility catalog.
    pub catalog: &'a Catalog,
    /// Whether `system` is this machine (no `--system-root`). Checks of this process's
    /// environment, and those that run commands, only make sense then.
    pub live: bool,
}

/// One torch install, wherever it was found.
#[derive(Debug, Clone)]
pub struct TorchSite<'a> {
    /// The interpreter (or the venv, for a receipt whose interpreter is gone).
    pub python: String,
    /// The torch build.
    pub torch: Framework,
    /// The receipt of the venv cudaup installed it into, if any.
    pub receipt: Option<&'a VenvReceipt>,
}

impl Inputs<'_> {
    /// The NVIDIA GPUs.
    pub fn nvidia_gpus(&self) -> Vec<&crate::model::system::Gpu> {
        self.system.nvidia_gpus().collect()
    }

    /// Every torch: detect's Pythons, plus the venvs cudaup's receipts name (read from their
    /// files, not imported), each once.
    pub fn torches(&self) -> Vec<TorchSite<'_>> {
        let mut out: Vec<TorchSite<'_>> = Vec::new();
        for p in &self.system.pythons {
            let receipt = self
                .receipts
                .venvs
                .iter()
                .map(|(_, r)| r)
                .find(|r| Path::new(&p.path).starts_with(&r.venv));
            if let Some(t) = &p.torch {
                out.push(TorchSite {
                    python: p.path.clone(),
                    torch: t.clone(),
                    receipt,
                });
            }
        }
        let live = Root::live();
        for (_, r) in &self.receipts.venvs {
            if self
                .system
                .pythons
                .iter()
                .any(|p| Path::new(&p.path).starts_with(&r.venv))
            {
                continue;
            }
            let layout = crate::detect::python::venv_layout(&live, &r.venv);
            let (torch, _) = crate::detect::python::frameworks(&live, &layout.site_dirs);
            if let Some(torch) = torch {
                let venv = crate::install::python::Venv {
                    dir: r.venv.clone(),
                };
                out.push(TorchSite {
                    python: venv.python().display().to_string(),
                    torch,
                    receipt: Some(r),
                });
            }
        }
        out
    }

    /// The driver version as a [`crate::model::version::Version`].
    pub fn driver_version(&self) -> Option<crate::model::version::Version> {
        self.system
            .driver
            .as_ref()
            .and_then(|d| crate::model::version::Version::parse(&d.version))
    }

    /// The toolkit the user means: `CUDA_HOME`, else `CUDA_PATH` (on the live machine, when they
    /// hold a directory), else cudaup's active one. With where that came from.
    pub fn intended_toolkit(&self) -> Option<(PathBuf, &'static str)> {
        if self.live {
            for var in ["CUDA_HOME", "CUDA_PATH"] {
                if let Some(p) = self.process.path_var(var).filter(|p| p.is_dir()) {
                    return Some((p, var));
                }
            }
        }
        self.receipts
            .active
            .toolkit
            .clone()
            .map(|t| (t, "cudaup's active toolkit ($CUDAUP_HOME/active.json)"))
    }
}

/// Ids doctor decides itself; detect's findings with other ids are passed through.
const OWN_IDS: &[&str] = &[
    "no-driver",
    "nouveau-loaded",
    "driver-library-mismatch",
    "driver-reboot-pending",
    "toolkit-newer-than-driver",
    "torch-cuda-newer-than-driver",
    "torch-cpu-only",
];

/// What doctor found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Most severe first.
    pub findings: Vec<Diagnosis>,
    /// Groups of checks that did not run, and why.
    pub skipped: Vec<String>,
}

impl Report {
    /// How many findings have this severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity() == severity)
            .count()
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }

    /// The finding with this id, if any.
    pub fn get(&self, id: &str) -> Option<&Diagnosis> {
        self.findings.iter().find(|f| f.id() == id)
    }

    /// The JSON document: `{"findings": [...], "summary": {...}}`.
    pub fn document(&self) -> Document<'_> {
        Document {
            findings: &self.findings,
            summary: Summary {
                errors: self.count(Severity::Error),
                warnings: self.count(Severity::Warning),
                info: self.count(Severity::Info),
                ok: !self.has_errors(),
                skipped: &self.skipped,
            },
        }
    }
}

/// What `doctor --json` prints.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    /// Most severe first.
    pub findings: &'a [Diagnosis],
    /// Counts.
    pub summary: Summary<'a>,
}

/// The counts of a report.
#[derive(Debug, Serialize)]
pub struct Summary<'a> {
    /// Error-severity findings (the exit code is 1 when there are any).
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Notes.
    pub info: usize,
    /// No errors.
    pub ok: bool,
    /// Groups of checks that did not run, and why.
    pub skipped: &'a [String],
}

/// The checks that need nothing but the inputs.
pub fn pure_checks(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = driver::check(inputs);
    out.extend(wsl::check(inputs));
    out.extend(python::check(inputs));
    out.extend(jax::check(inputs));
    if inputs.live {
        out.extend(environment::check(inputs));
    }
    out
}

/// Runs every check. `detect_findings` are detect's own; those whose ids doctor does not decide
/// itself are kept. `scratch` is a directory for the compiler check's empty source file.
pub fn diagnose(
    inputs: &Inputs<'_>,
    detect_findings: &[Finding],
    runner: &dyn Runner,
    scratch: &Path,
) -> Report {
    let mut report = Report::default();
    let mut out = pure_checks(inputs);
    out.extend(installed::check(inputs));
    out.extend(self_copy::check(inputs));
    out.extend(uv::check(inputs));
    out.extend(guard::check(inputs));
    out.extend(venv_files::check(inputs));
    if inputs.live {
        out.extend(compiler::check(inputs, runner, scratch));
        out.extend(disk::check(inputs, runner));
        // GPUs in containers, once they are set up (`cudaup container doctor` always checks).
        let root = Root::live();
        if let Some(home) = inputs.process.cudaup_home() {
            if crate::container::doctor::in_use(&root, inputs.process, &home) {
                out.extend(crate::container::doctor::for_process(
                    &root,
                    inputs.process,
                    runner,
                    &home,
                ));
            }
        }
    } else {
        report.skipped.push(
            "environment (PATH, CUDA_HOME, LD_LIBRARY_PATH), host compiler and disk space: they describe this process and this machine, not the --system-root tree".to_owned(),
        );
    }
    let has = |out: &[Diagnosis], id: &str| out.iter().any(|d| d.id() == id);
    for f in detect_findings {
        let keep = if f.id == "driver-library-mismatch" {
            // NVML's own "version mismatch" answer, when the versions could not be read.
            !has(&out, "driver-library-mismatch") && !has(&out, "driver-reboot-pending")
        } else {
            !OWN_IDS.contains(&f.id)
        };
        if keep && !has(&out, f.id) {
            out.push(f.clone().into());
        }
    }
    out.sort_by_key(|d| std::cmp::Reverse(d.severity()));
    report.findings = out;
    report
}

/// `cudaup repair --fix ID`, the fix line for findings repair can put right. Repair names its
/// repairs by what it rebuilds (`toolkit-files`, `venv-packages`, `env-scripts`, `rc-hook`);
/// several doctor findings map onto one of them.
pub(crate) fn repair(id: &str) -> String {
    format!("cudaup repair --fix {id}")
}

#[cfg(test)]
pub(crate) mod testing {
    //! Builders for unit tests: a healthy H200 system and empty inputs around it.

    use super::*;
    use crate::model::system::*;

    pub fn h200() -> System {
        System {
            schema_version: 1,
            os: Os {
                family: OsFamily::Linux,
                distro: Some("ubuntu".into()),
                version: Some("24.04".into()),
                arch: "x86_64".into(),
                kernel: Some("6.8.0-45-generic".into()),
                wsl: false,
                secure_boot: Some(false),
                jetson: None,
            },
            gpus: vec![gpu("NVIDIA H200", "10de:2335", "9.0", "Hopper")],
            driver: Some(Driver {
                version: "580.95.05".into(),
                cuda_version: Some("13.0".into()),
                kernel_module: Some(KernelModule::Open),
            }),
            nouveau_loaded: false,
            toolkits: vec![Toolkit {
                version: "13.0.2".into(),
                path: "/usr/local/cuda-13.0".into(),
                owner: Owner::System,
            }],
            cudnn: Vec::new(),
            pythons: vec![Python {
                path: "/opt/torch/.venv/bin/python3".into(),
                version: "3.12.3".into(),
                torch: Some(Framework {
                    version: "2.11.0+cu130".into(),
                    cuda: Some("13.0".into()),
                    cuda_available: None,
                }),
                tensorflow: None,
            }],
        }
    }

    pub fn gpu(name: &str, pci: &str, cc: &str, arch: &str) -> Gpu {
        Gpu {
            index: 0,
            vendor: Vendor::Nvidia,
            name: name.into(),
            pci_id: Some(pci.into()),
            compute_capability: Some(cc.into()),
            architecture: Some(arch.into()),
            memory_mib: None,
        }
    }

    pub struct World {
        pub system: System,
        pub facts: Facts,
        pub receipts: Receipts,
        pub process: Process,
        pub catalog: Catalog,
        pub live: bool,
    }

    impl World {
        pub fn new(system: System) -> Self {
            let facts = Facts {
                kernel_module_version: system.driver.as_ref().map(|d| d.version.clone()),
                proc_driver_present: system.driver.is_some(),
                ..Facts::default()
            };
            Self {
                system,
                facts,
                receipts: Receipts::default(),
                process: Process::with_vars(Vec::<(String, String)>::new(), "/"),
                catalog: Catalog::embedded(),
                live: false,
            }
        }

        pub fn inputs(&self) -> Inputs<'_> {
            Inputs {
                system: &self.system,
                facts: &self.facts,
                receipts: &self.receipts,
                process: &self.process,
                catalog: &self.catalog,
                live: self.live,
            }
        }

        pub fn ids(&self) -> Vec<&'static str> {
            pure_checks(&self.inputs()).iter().map(|d| d.id()).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn a_healthy_machine_has_nothing_to_report() {
        let w = World::new(h200());
        assert!(w.ids().is_empty(), "{:?}", pure_checks(&w.inputs()));
    }

    #[test]
    fn library_names_and_boot_time() {
        assert_eq!(
            driver_library_version(Path::new("/usr/lib/libnvidia-ml.so.580.95.05")),
            Some(("libnvidia-ml", "580.95.05".to_owned()))
        );
        assert_eq!(
            driver_library_version(Path::new("/usr/lib/libcuda.so.535.1")),
            Some(("libcuda", "535.1".to_owned()))
        );
        assert_eq!(
            driver_library_version(Path::new("/usr/lib/libnvidia-ml.so.1")),
            None
        );
        assert_eq!(
            driver_library_version(Path::new("/usr/lib/libcudart.so.12.1")),
            None
        );
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nbtime 1718000000\nprocesses 5\n"),
            Some(1_718_000_000)
        );
        assert_eq!(parse_boot_time("cpu 1\n"), None);
    }

    #[test]
    fn json_keys_are_in_the_contract_order() {
        let d = Diagnosis::new("x-y", Severity::Warning, "m")
            .evidence("e")
            .fix("f");
        assert_eq!(
            serde_json::to_string(&d).unwrap(),
            r#"{"id":"x-y","severity":"warning","message":"m","evidence":["e"],"fix":"f"}"#
        );
    }
}
