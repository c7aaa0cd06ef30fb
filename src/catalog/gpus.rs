//! `manifests/gpus.toml`: NVIDIA PCI device ids → chip → architecture and compute capability,
//! generated from pci.ids and NVIDIA's compute-capability lists by `scripts/gen_gpus_table.py`.

use std::collections::HashMap;

use serde::Deserialize;

/// The whole gpus.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuTable {
    /// Format version of the file.
    pub schema_version: u32,
    /// GPU chips (`GA102`) with their architecture and compute capability.
    pub chip: Vec<Chip>,
    /// PCI devices (`10de:2204`) and the chip each carries.
    pub device: Vec<Device>,
}

/// A GPU chip.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// NVIDIA's codename (`GA102`).
    pub codename: String,
    /// Architecture (`Ampere`).
    pub architecture: String,
    /// Compute capability (`8.6`).
    pub compute_capability: String,
    /// Where the row comes from.
    pub source: String,
}

/// A PCI device.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// `10de:2204`.
    pub pci_id: String,
    /// The chip's codename; names a [`Chip`].
    pub chip: String,
    /// Marketing name from pci.ids (`GeForce RTX 3090`).
    pub name: String,
    /// Where the row comes from.
    pub source: String,
}

/// A GPU as the table describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownGpu<'a> {
    /// Marketing name.
    pub name: &'a str,
    /// Architecture.
    pub architecture: &'a str,
    /// Compute capability.
    pub compute_capability: &'a str,
}

impl GpuTable {
    /// Looks a `vendor:device` id up (case-insensitive hex).
    pub fn lookup(&self, pci_id: &str) -> Option<KnownGpu<'_>> {
        let pci_id = pci_id.to_ascii_lowercase();
        let device = self.device.iter().find(|d| d.pci_id == pci_id)?;
        let chip = self.chip(&device.chip)?;
        Some(KnownGpu {
            name: &device.name,
            architecture: &chip.architecture,
            compute_capability: &chip.compute_capability,
        })
    }

    /// The chip with this codename.
    pub fn chip(&self, codename: &str) -> Option<&Chip> {
        self.chip.iter().find(|c| c.codename == codename)
    }

    /// The architecture a compute capability belongs to (`9.0` → `Hopper`), from the chip rows.
    pub fn architecture_of(&self, compute_capability: &str) -> Option<&str> {
        let by_cc: HashMap<&str, &str> = self
            .chip
            .iter()
            .map(|c| (c.compute_capability.as_str(), c.architecture.as_str()))
            .collect();
        by_cc.get(compute_capability).copied()
    }
}
