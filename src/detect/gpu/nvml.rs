//! NVML through `nvml-wrapper`. The library is opened at run time, so a machine without any
//! NVIDIA driver only loses this probe.

use std::ffi::OsStr;

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Nvml;

use crate::model::system::{Gpu, Vendor};

use super::DriverReport;

/// Why NVML gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvmlFailure {
    /// `libnvidia-ml.so.1` could not be loaded: no driver's user-space part installed.
    LibraryMissing(String),
    /// The library loaded but no kernel driver is running.
    DriverNotLoaded,
    /// Kernel module and user-space library are different versions (usually: reboot pending).
    VersionMismatch,
    /// Anything else NVML reported.
    Other(String),
}

/// The library name tried first. The unversioned `libnvidia-ml.so` is a development symlink
/// that most driver installs lack (rust-nvml/nvml-wrapper#47).
pub fn default_library() -> &'static str {
    if cfg!(windows) {
        "nvml.dll"
    } else {
        "libnvidia-ml.so.1"
    }
}

/// Asks NVML for the driver and every GPU.
pub fn probe(library: &str) -> Result<DriverReport, NvmlFailure> {
    if let Some(refusal) = crate::world::runner::nvml_refused_in_tests(library) {
        return Err(NvmlFailure::Other(refusal));
    }
    let nvml = Nvml::builder()
        .lib_path(OsStr::new(library))
        .init()
        .map_err(classify)?;
    let driver_version = nvml.sys_driver_version().ok();
    let cuda_version = nvml.sys_cuda_driver_version().ok().map(|v| {
        format!(
            "{}.{}",
            nvml_wrapper::cuda_driver_version_major(v),
            nvml_wrapper::cuda_driver_version_minor(v)
        )
    });
    let count = nvml.device_count().map_err(classify)?;
    let mut gpus = Vec::new();
    for index in 0..count {
        let device = match nvml.device_by_index(index) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!("NVML could not open GPU {index}: {e}");
                continue;
            }
        };
        let cc = device
            .cuda_compute_capability()
            .ok()
            .map(|c| format!("{}.{}", c.major, c.minor));
        let architecture = device
            .architecture()
            .ok()
            .map(|a| a.to_string())
            .filter(|a| a != "Unknown");
        gpus.push(Gpu {
            index,
            vendor: Vendor::Nvidia,
            name: device.name().unwrap_or_else(|_| "NVIDIA GPU".to_owned()),
            pci_id: device
                .pci_info()
                .ok()
                .map(|p| pci_id_from_combined(p.pci_device_id)),
            compute_capability: cc,
            architecture,
            memory_mib: device.memory_info().ok().map(|m| m.total / (1024 * 1024)),
        });
    }
    Ok(DriverReport {
        driver_version,
        cuda_version,
        gpus,
    })
}

/// NVML's `pciDeviceId` holds the device id in the high 16 bits and the vendor in the low 16
/// (nvidia-smi prints the same number, e.g. `0x233510DE` for an H200).
pub fn pci_id_from_combined(combined: u32) -> String {
    format!("{:04x}:{:04x}", combined & 0xffff, combined >> 16)
}

fn classify(e: NvmlError) -> NvmlFailure {
    match e {
        NvmlError::LibloadingError(e) => NvmlFailure::LibraryMissing(e.to_string()),
        NvmlError::DriverNotLoaded => NvmlFailure::DriverNotLoaded,
        NvmlError::LibRmVersionMismatch => NvmlFailure::VersionMismatch,
        other => NvmlFailure::Other(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_pci_id() {
        assert_eq!(pci_id_from_combined(0x2335_10DE), "10de:2335");
    }

    #[test]
    fn missing_library_is_not_fatal() {
        match probe("libcudaup-test-no-such-nvml.so.1") {
            Err(NvmlFailure::LibraryMissing(_)) => {}
            other => panic!("expected LibraryMissing, got {other:?}"),
        }
    }
}
