//! The sysfs PCI scan: works with no driver at all, and sees AMD and Intel GPUs.

use crate::catalog::GpuTable;
use crate::model::system::{Gpu, Vendor};

use super::super::root::Root;

/// One PCI function as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciFunction {
    /// Vendor id (`0x10de`).
    pub vendor: u16,
    /// Device id.
    pub device: u16,
    /// Class code (`0x030000` = VGA controller).
    pub class: u32,
}

fn parse_hex(text: &str) -> Option<u32> {
    let t = text.trim();
    u32::from_str_radix(t.strip_prefix("0x").unwrap_or(t), 16).ok()
}

/// Reads every function under /sys/bus/pci/devices.
pub fn scan(root: &Root) -> Vec<PciFunction> {
    root.list("/sys/bus/pci/devices")
        .into_iter()
        .filter_map(|dev| {
            Some(PciFunction {
                vendor: parse_hex(&root.read(dev.join("vendor"))?)? as u16,
                device: parse_hex(&root.read(dev.join("device"))?)? as u16,
                class: parse_hex(&root.read(dev.join("class"))?)?,
            })
        })
        .collect()
}

/// Turns the display-class functions of known vendors into GPUs. Audio functions (class 0x04xx)
/// of the same cards, bridges and everything else are skipped.
pub fn gpus_from_functions(functions: &[PciFunction], table: &GpuTable) -> Vec<Gpu> {
    functions
        .iter()
        .filter(|f| f.class >> 16 == 0x03)
        .filter_map(|f| {
            let vendor = match f.vendor {
                0x10de => Vendor::Nvidia,
                0x1002 => Vendor::Amd,
                0x8086 => Vendor::Intel,
                _ => return None,
            };
            let pci_id = format!("{:04x}:{:04x}", f.vendor, f.device);
            let known = table.lookup(&pci_id);
            let name = match (&known, vendor) {
                (Some(k), _) => format!("NVIDIA {}", k.name),
                (None, Vendor::Nvidia) => format!("NVIDIA GPU (unknown device {pci_id})"),
                (None, Vendor::Amd) => format!("AMD GPU ({pci_id})"),
                (None, _) => format!("Intel GPU ({pci_id})"),
            };
            Some(Gpu {
                index: 0,
                vendor,
                name,
                compute_capability: known.as_ref().map(|k| k.compute_capability.to_owned()),
                architecture: known.as_ref().map(|k| k.architecture.to_owned()),
                pci_id: Some(pci_id),
                memory_mib: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn skips_audio_and_bridges_and_maps_known_devices() {
        let funcs = [
            PciFunction {
                vendor: 0x10de,
                device: 0x2204,
                class: 0x030000,
            }, // RTX 3090
            PciFunction {
                vendor: 0x10de,
                device: 0x1aef,
                class: 0x040300,
            }, // its HD audio
            PciFunction {
                vendor: 0x8086,
                device: 0x7a84,
                class: 0x060400,
            }, // PCIe bridge
            PciFunction {
                vendor: 0x1002,
                device: 0x73bf,
                class: 0x030000,
            }, // AMD Navi 21
            PciFunction {
                vendor: 0x8086,
                device: 0xa780,
                class: 0x030000,
            }, // Intel UHD 770
            PciFunction {
                vendor: 0x10de,
                device: 0x2335,
                class: 0x030200,
            }, // H200 (3D controller)
        ];
        let gpus = gpus_from_functions(&funcs, &Catalog::embedded().gpus);
        let ids: Vec<_> = gpus.iter().map(|g| g.pci_id.clone().unwrap()).collect();
        assert_eq!(ids, ["10de:2204", "1002:73bf", "8086:a780", "10de:2335"]);
        assert_eq!(gpus[0].compute_capability.as_deref(), Some("8.6"));
        assert_eq!(gpus[0].architecture.as_deref(), Some("Ampere"));
        assert_eq!(gpus[1].vendor, Vendor::Amd);
        assert_eq!(gpus[1].compute_capability, None);
        assert_eq!(gpus[3].compute_capability.as_deref(), Some("9.0"));
    }
}
