//! The kernel side of the NVIDIA driver: procfs and sysfs, the module list, and the version of
//! the user-space NVML library next to it.

use std::path::{Path, PathBuf};

use crate::model::system::KernelModule;

use super::root::Root;

/// What /proc/driver/nvidia/version says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDriver {
    /// Version of the loaded kernel module.
    pub version: String,
    /// Open or proprietary module.
    pub module: KernelModule,
}

/// Parses the `NVRM version:` line.
///
/// ```text
/// NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)
/// NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023
/// ```
pub fn parse_proc_driver_version(text: &str) -> Option<KernelDriver> {
    let line = text.lines().find(|l| l.starts_with("NVRM version:"))?;
    let module = if line.contains("Open Kernel Module") {
        KernelModule::Open
    } else {
        KernelModule::Proprietary
    };
    // The version is the first word made of digits and dots with at least one dot; "x86_64" and
    // "aarch64" are not.
    let version = line
        .split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))?;
    Some(KernelDriver {
        version: version.to_owned(),
        module,
    })
}

/// The loaded modules named in /proc/modules (first word of each line).
pub fn parse_loaded_modules(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// Reads the kernel driver: /proc/driver/nvidia/version, else /sys/module/nvidia/version (which
/// has the version but not the flavour).
pub fn probe_kernel_driver(root: &Root) -> Option<(String, Option<KernelModule>)> {
    if let Some(k) = root
        .read("/proc/driver/nvidia/version")
        .and_then(|t| parse_proc_driver_version(&t))
    {
        return Some((k.version, Some(k.module)));
    }
    root.read("/sys/module/nvidia/version")
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .map(|v| (v, None))
}

/// Library directories where the driver's user-space libraries live on common distros.
pub fn driver_library_dirs(ld_library_path: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ld_library_path.to_vec();
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/nvidia/lib64",
        "/usr/lib/wsl/lib",
    ] {
        let d = PathBuf::from(d);
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs
}

/// The version of the user-space NVML library, from its versioned file name
/// (`libnvidia-ml.so.580.159.04`).
pub fn probe_nvml_library_version(root: &Root, dirs: &[PathBuf]) -> Option<String> {
    dirs.iter()
        .flat_map(|d| root.list(d))
        .find_map(|p| nvml_version_from_name(&p))
}

fn nvml_version_from_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let v = name.strip_prefix("libnvidia-ml.so.")?;
    // `libnvidia-ml.so.1` is the soname link, not a version.
    (v.contains('.') && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: &str = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n";
    const PROPRIETARY: &str = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n";
    const ARM_OPEN: &str = "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.124.06  Release Build  (dvs-builder@U16-I2-C03-12-4)  Wed Feb 26 01:12:57 UTC 2025\n";

    #[test]
    fn open_and_proprietary_modules() {
        assert_eq!(
            parse_proc_driver_version(OPEN),
            Some(KernelDriver {
                version: "580.159.04".into(),
                module: KernelModule::Open
            })
        );
        assert_eq!(
            parse_proc_driver_version(PROPRIETARY),
            Some(KernelDriver {
                version: "535.129.03".into(),
                module: KernelModule::Proprietary
            })
        );
        assert_eq!(
            parse_proc_driver_version(ARM_OPEN).unwrap().version,
            "570.124.06"
        );
        assert_eq!(parse_proc_driver_version("garbage"), None);
    }

    #[test]
    fn modules_list() {
        let text = "nouveau 2professional 0 - Live 0x0\nnvidia_uvm 1congrats 0 - Live 0x0\n";
        assert_eq!(parse_loaded_modules(text), vec!["nouveau", "nvidia_uvm"]);
    }

    #[test]
    fn nvml_file_names() {
        assert_eq!(
            nvml_version_from_name(Path::new("/usr/lib/libnvidia-ml.so.580.159.04")).as_deref(),
            Some("580.159.04")
        );
        assert_eq!(
            nvml_version_from_name(Path::new("/usr/lib/libnvidia-ml.so.1")),
            None
        );
        assert_eq!(
            nvml_version_from_name(Path::new("/usr/lib/libcuda.so.580.1")),
            None
        );
    }
}
