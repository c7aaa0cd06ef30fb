//! GPU probes, in order: NVML (through `nvml-wrapper`, loaded at run time), `nvidia-smi`, then a
//! sysfs PCI scan mapped through `manifests/gpus.toml`. Non-NVIDIA GPUs come from the PCI scan.

pub mod nvidia_smi;
pub mod nvml;
pub mod pci;

use crate::catalog::GpuTable;
use crate::model::system::Gpu;

/// What a driver-backed probe (NVML or nvidia-smi) reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriverReport {
    /// Driver version.
    pub driver_version: Option<String>,
    /// Newest CUDA the driver supports (`13.0`).
    pub cuda_version: Option<String>,
    /// NVIDIA GPUs in the driver's order.
    pub gpus: Vec<Gpu>,
}

/// Fills in what a driver probe left out (architecture, compute capability on old drivers) from
/// the PCI table.
pub fn complete_from_table(gpu: &mut Gpu, table: &GpuTable) {
    let known = gpu.pci_id.as_deref().and_then(|id| table.lookup(id));
    if gpu.compute_capability.is_none() {
        gpu.compute_capability = known.as_ref().map(|k| k.compute_capability.to_owned());
    }
    if gpu.architecture.is_none() {
        gpu.architecture = known
            .as_ref()
            .map(|k| k.architecture.to_owned())
            .or_else(|| {
                gpu.compute_capability
                    .as_deref()
                    .and_then(|cc| table.architecture_of(cc))
                    .map(str::to_owned)
            });
    }
}

/// Joins the driver's NVIDIA GPUs with the PCI scan: the driver's list wins for NVIDIA devices
/// (it knows names and memory); NVIDIA devices the driver did not report (no driver) and other
/// vendors' GPUs come from the scan. Indices are renumbered in the final order.
pub fn merge(driver_gpus: Vec<Gpu>, pci_gpus: Vec<Gpu>) -> Vec<Gpu> {
    let have_driver_view = !driver_gpus.is_empty();
    let mut out = driver_gpus;
    for g in pci_gpus {
        let nvidia = g.vendor == crate::model::system::Vendor::Nvidia;
        if !(nvidia && have_driver_view) {
            out.push(g);
        }
    }
    for (i, g) in out.iter_mut().enumerate() {
        g.index = i as u32;
    }
    out
}
