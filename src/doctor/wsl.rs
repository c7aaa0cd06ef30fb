//! `wsl-linux-driver`: a Linux NVIDIA driver installed inside WSL2. Under WSL2 the GPU is
//! reached through the Windows driver: NVIDIA's CUDA on WSL User Guide
//! (<https://docs.nvidia.com/cuda/wsl-user-guide/index.html>, "Step 1: Install NVIDIA Driver for
//! GPU Support" and "CUDA Support for WSL 2") says the Windows driver is the only one to install,
//! that it is stubbed inside WSL 2 as `libcuda.so` (mapped from `/usr/lib/wsl/lib`), and that no
//! NVIDIA GPU Linux driver may be installed within WSL 2: a Linux driver's `libcuda.so` and
//! `libnvidia-ml.so` are found before the stubs and break the passthrough.
//!
//! WSL is told by `/proc/version` (detect), `/proc/sys/kernel/osrelease` (both carry
//! `microsoft` or `WSL` in a WSL kernel's release) or, on the live machine, `WSL_DISTRO_NAME`,
//! which WSL sets in every shell it starts. The driver is told by its files: versioned driver
//! libraries outside `/usr/lib/wsl/lib`, a loaded kernel module, its module files for the
//! running kernel and DKMS's `nvidia` trees; the fix names the dpkg packages that own them.

use std::path::{Path, PathBuf};

use crate::detect::Root;
use crate::model::finding::Severity;
use crate::model::system::System;
use crate::world::process::Process;

use super::{Diagnosis, Inputs};

/// Where WSL maps the Windows driver's libraries.
const WSL_LIB: &str = "/usr/lib/wsl/lib";

/// Facts read only when the machine is WSL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WslFacts {
    /// WSL, by `/proc/sys/kernel/osrelease` or `WSL_DISTRO_NAME` (detect's `os.wsl` reads
    /// `/proc/version`).
    pub detected: bool,
    /// NVIDIA kernel module files for the running kernel, and DKMS's `nvidia*` trees.
    pub modules: Vec<PathBuf>,
    /// dpkg's files lists (`/var/lib/dpkg/info/PKG.list`) of packages whose name says NVIDIA
    /// or CUDA, with the paths each lists: read to name the packages that own what is found.
    pub dpkg_lists: Vec<(String, Vec<PathBuf>)>,
}

impl WslFacts {
    /// Reads the facts from `root` (`WSL_DISTRO_NAME` counts only on the live machine).
    pub fn gather(root: &Root, process: &Process, system: &System) -> WslFacts {
        // WSL is Linux. A live Windows machine is never inside it (and under Wine `/proc` would
        // be the Linux host's, through the Z: drive).
        if root.is_live() && !cfg!(target_os = "linux") {
            return WslFacts::default();
        }
        let says_wsl = |t: Option<String>| t.is_some_and(|t| crate::detect::os::parse_is_wsl(&t));
        let detected = system.os.wsl
            || says_wsl(root.read("/proc/sys/kernel/osrelease"))
            || (root.is_live() && process.var("WSL_DISTRO_NAME").is_some());
        if !detected {
            return WslFacts::default();
        }
        let mut modules = match &system.os.kernel {
            Some(kernel) => super::find_modules(root, &Path::new("/lib/modules").join(kernel)),
            None => Vec::new(),
        };
        modules.extend(
            root.list("/var/lib/dkms")
                .into_iter()
                .filter(|p| name_of(p).starts_with("nvidia")),
        );
        // Bounded: only the lists of packages named for NVIDIA or CUDA, never all of dpkg's.
        let dpkg_lists = root
            .list("/var/lib/dpkg/info")
            .into_iter()
            .filter_map(|p| {
                let package = name_of(&p).strip_suffix(".list")?.to_owned();
                let lower = package.to_ascii_lowercase();
                (lower.contains("nvidia") || lower.contains("cuda")).then_some((package, p))
            })
            .map(|(package, p)| {
                let paths = root
                    .read(&p)
                    .unwrap_or_default()
                    .lines()
                    .map(PathBuf::from)
                    .collect();
                (package, paths)
            })
            .collect();
        WslFacts {
            detected,
            modules,
            dpkg_lists,
        }
    }

    /// The packages whose files lists name one of `paths`, each once.
    fn owners(&self, paths: &[&Path]) -> Vec<&str> {
        self.dpkg_lists
            .iter()
            .filter(|(_, listed)| listed.iter().any(|l| paths.contains(&l.as_path())))
            .map(|(package, _)| package.as_str())
            .collect()
    }
}

fn name_of(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

/// `wsl-linux-driver`, when the machine is WSL and a Linux driver is installed inside it.
pub fn check(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let f = inputs.facts;
    if !(inputs.system.os.wsl || f.wsl.detected) {
        return None;
    }
    let stray: Vec<&super::DriverLibrary> = f
        .driver_libraries
        .iter()
        .filter(|l| !l.path.starts_with(WSL_LIB))
        .collect();
    let modules = &f.wsl.modules;
    if !f.proc_driver_present && stray.is_empty() && modules.is_empty() {
        return None;
    }
    let mut d = Diagnosis::new(
        "wsl-linux-driver",
        Severity::Error,
        "a Linux NVIDIA driver is installed inside WSL2; WSL2 uses the Windows driver through /usr/lib/wsl/lib, and a Linux driver's libraries shadow it",
    );
    if f.proc_driver_present {
        d = d.evidence("/proc/driver/nvidia/version exists: a Linux kernel module is loaded");
    }
    for l in &stray {
        d = d.evidence(format!(
            "{} ({} {}) is outside /usr/lib/wsl/lib",
            l.path.display(),
            l.name,
            l.version
        ));
    }
    for m in modules {
        d = d.evidence(format!(
            "{}: an NVIDIA kernel module of a Linux driver",
            m.display()
        ));
    }
    d = d.evidence(
        "NVIDIA's CUDA on WSL User Guide: the Windows driver is the only driver to install; no NVIDIA GPU Linux driver may be installed within WSL 2 (https://docs.nvidia.com/cuda/wsl-user-guide/index.html)",
    );
    let owned: Vec<&Path> = stray
        .iter()
        .map(|l| l.path.as_path())
        .chain(modules.iter().map(PathBuf::as_path))
        .collect();
    let packages = f.wsl.owners(&owned);
    let remove = if packages.is_empty() {
        "sudo apt-get remove --purge '^nvidia-driver-.*' '^libnvidia-.*' '^nvidia-dkms-.*'   # keep the CUDA toolkit, remove only the driver\n\
         (files no package owns came from NVIDIA's .run installer: sudo nvidia-uninstall)"
            .to_owned()
    } else {
        format!(
            "sudo apt-get remove --purge {}   # the Linux driver's packages; the CUDA toolkit stays",
            packages.join(" ")
        )
    };
    Some(d.fix(format!(
        "{remove}\n\
         then, in Windows: wsl --shutdown, and start WSL again\n\
         install or update the driver in Windows only (cudaup plan says which version)"
    )))
}

// The fake roots are Linux trees, spelled with '/'; WSL is Linux.
#[cfg(all(test, unix))]
mod tests;
