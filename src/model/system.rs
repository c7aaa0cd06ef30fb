//! The System document: what `detect` found, what `detect --json` prints and what
//! `plan --system FILE` reads back (ARCHITECTURE.md, schema_version 1).
//!
//! Keys are exactly the contract's. Probes that could not answer leave `null` (or an empty list),
//! so a file holding only `os` and `gpus` is a complete System for planning another machine.

use serde::{Deserialize, Serialize};

/// The schema version written into every System document.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything cudaup knows about a machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct System {
    /// Always [`SCHEMA_VERSION`] when written by this version.
    #[serde(default = "schema_version")]
    pub schema_version: u32,
    /// The operating system.
    pub os: Os,
    /// Every display-class GPU, NVIDIA or not, in index order.
    #[serde(default)]
    pub gpus: Vec<Gpu>,
    /// The loaded NVIDIA driver; `None` when none is loaded.
    #[serde(default)]
    pub driver: Option<Driver>,
    /// Whether the nouveau kernel module is loaded (it blocks NVIDIA's driver).
    #[serde(default)]
    pub nouveau_loaded: bool,
    /// CUDA toolkits found on disk.
    #[serde(default)]
    pub toolkits: Vec<Toolkit>,
    /// cuDNN copies found (system headers/libraries and pip wheels).
    #[serde(default)]
    pub cudnn: Vec<Cudnn>,
    /// Python interpreters with their deep-learning frameworks.
    #[serde(default)]
    pub pythons: Vec<Python>,
}

fn schema_version() -> u32 {
    SCHEMA_VERSION
}

/// Operating-system facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Os {
    /// `linux`, `windows` or `macos`.
    pub family: OsFamily,
    /// os-release `ID` (`ubuntu`, `debian`, `fedora`, `rocky`, `arch`, …); `None` when unknown.
    #[serde(default)]
    pub distro: Option<String>,
    /// os-release `VERSION_ID` (`22.04`, `12`, …).
    #[serde(default)]
    pub version: Option<String>,
    /// CPU architecture as Rust names it (`x86_64`, `aarch64`).
    #[serde(default = "default_arch")]
    pub arch: String,
    /// Kernel release (`6.5.0-35-generic`).
    #[serde(default)]
    pub kernel: Option<String>,
    /// Running inside WSL (Windows Subsystem for Linux).
    #[serde(default)]
    pub wsl: bool,
    /// UEFI Secure Boot state; `None` when it cannot be read (legacy BIOS boot, no efivars).
    #[serde(default)]
    pub secure_boot: Option<bool>,
    /// A Jetson module running NVIDIA's Linux for Tegra (L4T); absent (and not printed) on
    /// every other machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jetson: Option<Jetson>,
}

/// A Jetson (Orin, Thor) as its own files describe it: the stack on it comes with JetPack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Jetson {
    /// The board, from /proc/device-tree/model (`NVIDIA Jetson AGX Orin Developer Kit`).
    #[serde(default)]
    pub model: Option<String>,
    /// The L4T release, from /etc/nv_tegra_release (`36.4.3` for `# R36 (release), REVISION: 4.3`).
    #[serde(default)]
    pub l4t: Option<String>,
    /// The installed `nvidia-l4t-core` package's version (`36.4.3-20250107174145`).
    #[serde(default)]
    pub l4t_core: Option<String>,
}

fn default_arch() -> String {
    "x86_64".to_owned()
}

/// Operating-system family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OsFamily {
    /// Linux, including WSL.
    Linux,
    /// Native Windows.
    Windows,
    /// macOS.
    Macos,
}

/// GPU vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// NVIDIA (PCI vendor 0x10de).
    Nvidia,
    /// AMD (PCI vendor 0x1002).
    Amd,
    /// Intel (PCI vendor 0x8086).
    Intel,
    /// Apple silicon.
    Apple,
}

/// One GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// Position in the driver's (or the PCI bus's) order, from 0.
    pub index: u32,
    /// Who made it.
    pub vendor: Vendor,
    /// Marketing name (`NVIDIA H200`), or the PCI database's when no driver answers.
    pub name: String,
    /// `vendor:device` in lower-case hex (`10de:2335`); `None` when unknown.
    #[serde(default)]
    pub pci_id: Option<String>,
    /// CUDA compute capability (`9.0`); `None` for non-NVIDIA or unknown GPUs.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Architecture (`Hopper`); `None` when unknown.
    #[serde(default)]
    pub architecture: Option<String>,
    /// Total memory in MiB; `None` when no driver reports it.
    #[serde(default)]
    pub memory_mib: Option<u64>,
}

/// How the NVIDIA kernel module was built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelModule {
    /// NVIDIA's open GPU kernel modules (required for Blackwell).
    Open,
    /// The closed, proprietary kernel module.
    Proprietary,
}

/// The loaded NVIDIA driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Driver {
    /// Driver version (`580.95.05`).
    pub version: String,
    /// Newest CUDA version the driver supports (`13.0`), as nvidia-smi prints it.
    #[serde(default)]
    pub cuda_version: Option<String>,
    /// Kernel-module flavour; `None` when it cannot be told (WSL, Windows).
    #[serde(default)]
    pub kernel_module: Option<KernelModule>,
}

/// Who put a toolkit there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// Installed by cudaup under its home (it may repair and uninstall it).
    Cudaup,
    /// Anything else (distro packages, NVIDIA's runfile, conda…): cudaup never touches it.
    System,
}

/// A CUDA toolkit on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolkit {
    /// Full version (`13.0.88` from version.json, or `12.2` from nvcc when that is all there is).
    pub version: String,
    /// The toolkit root (the directory holding `bin/nvcc`).
    pub path: String,
    /// Who installed it.
    pub owner: Owner,
}

/// A cuDNN copy on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cudnn {
    /// Version (`9.10.2`, or `9.10.2.21` for pip wheels).
    pub version: String,
    /// The directory holding it (library dir, include dir or wheel directory).
    pub path: String,
}

/// A Python interpreter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Python {
    /// Interpreter path as found (not resolved through symlinks, so venvs stay recognisable).
    pub path: String,
    /// `3.11.7`.
    pub version: String,
    /// The installed PyTorch, if any.
    #[serde(default)]
    pub torch: Option<Framework>,
    /// The installed TensorFlow, if any.
    #[serde(default)]
    pub tensorflow: Option<Framework>,
}

/// A framework installed into a Python.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Framework {
    /// Version as the package states it (`2.8.0+cu128`).
    pub version: String,
    /// CUDA version it was built for (`12.8`); `None` for a CPU-only build.
    #[serde(default)]
    pub cuda: Option<String>,
    /// Whether CUDA worked when imported; `None` unless `detect --deep` ran it.
    #[serde(default)]
    pub cuda_available: Option<bool>,
}

impl System {
    /// The NVIDIA GPUs only.
    pub fn nvidia_gpus(&self) -> impl Iterator<Item = &Gpu> {
        self.gpus.iter().filter(|g| g.vendor == Vendor::Nvidia)
    }
}
