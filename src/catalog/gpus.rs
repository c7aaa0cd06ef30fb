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
    /// Ranges of PCI device ids a source assigns to one chip as a whole (DGX Spark's GB10),
    /// for chips no single id is published for. An exact [`Device`] row wins.
    #[serde(default)]
    pub device_range: Vec<DeviceRange>,
}

/// A range of PCI device ids, all of one chip.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceRange {
    /// The first id (`10de:2e00`).
    pub first: String,
    /// The last id, inclusive (`10de:2e3f`).
    pub last: String,
    /// The chip's codename; names a [`Chip`].
    pub chip: String,
    /// The name to report (`GB10`).
    pub name: String,
    /// Where the row comes from.
    pub source: String,
}

/// `10de:2e12` → (0x10de, 0x2e12).
fn parse_id(id: &str) -> Option<(u16, u16)> {
    let (v, d) = id.split_once(':')?;
    Some((
        u16::from_str_radix(v, 16).ok()?,
        u16::from_str_radix(d, 16).ok()?,
    ))
}

impl DeviceRange {
    /// Whether `pci_id` lies in the range.
    pub fn contains(&self, pci_id: &str) -> bool {
        match (
            parse_id(pci_id),
            parse_id(&self.first),
            parse_id(&self.last),
        ) {
            (Some((v, d)), Some((fv, fd)), Some((lv, ld))) => {
                v == fv && v == lv && fd <= d && d <= ld
            }
            _ => false,
        }
    }
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
        let (name, chip) = match self.device.iter().find(|d| d.pci_id == pci_id) {
            Some(d) => (&d.name, &d.chip),
            None => {
                let r = self.device_range.iter().find(|r| r.contains(&pci_id))?;
                (&r.name, &r.chip)
            }
        };
        let chip = self.chip(chip)?;
        Some(KnownGpu {
            name,
            architecture: &chip.architecture,
            compute_capability: &chip.compute_capability,
        })
    }

    /// Looks a GPU up by its name as nvidia-smi or a person writes it (`NVIDIA GeForce RTX
    /// 4090`, `geforce rtx 4090`): pci.ids' name, case and spacing aside, with or without
    /// `NVIDIA ` before it. `Ok(None)`: no device has that name. `Err` names the PCI ids when
    /// the name is two chips of different compute capability (pci.ids names a Kepler and a
    /// Maxwell "GeForce GTX 750 Ti"): the picture must say which.
    pub fn by_name(&self, name: &str) -> Result<Option<(&str, KnownGpu<'_>)>, String> {
        let norm = |s: &str| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        };
        let wanted = norm(name);
        let wanted = wanted.strip_prefix("nvidia ").unwrap_or(&wanted).to_owned();
        let found: Vec<(&str, KnownGpu<'_>)> = self
            .device
            .iter()
            .filter(|d| norm(&d.name) == wanted)
            .filter_map(|d| Some((d.pci_id.as_str(), self.lookup(&d.pci_id)?)))
            .collect();
        let Some(first) = found.first() else {
            return Ok(None);
        };
        if found
            .iter()
            .any(|(_, k)| k.compute_capability != first.1.compute_capability)
        {
            return Err(format!(
                "{name} is more than one GPU in the catalog's gpus.toml ({}): give its `pci_id`",
                found
                    .iter()
                    .map(|(id, k)| format!("{id}: {} {}", k.architecture, k.compute_capability))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(Some(first.clone()))
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

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;

    /// Looks a GPU up by its exact pci.ids name.
    fn by_name(name: &str) -> (String, String) {
        let t = Catalog::embedded().gpus;
        let d = t
            .device
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("{name} is in the table"));
        let k = t.lookup(&d.pci_id).unwrap();
        (k.architecture.to_owned(), k.compute_capability.to_owned())
    }

    #[test]
    fn every_generation_maps_geforce_workstation_and_data_center() {
        let cases = [
            ("Tesla K80", "Kepler", "3.7"),
            ("GeForce GTX TITAN X", "Maxwell", "5.2"),
            ("Tesla P100 PCIe 16GB", "Pascal", "6.0"),
            ("GeForce GTX 1080", "Pascal", "6.1"),
            ("Tesla V100 PCIe 16GB", "Volta", "7.0"),
            ("Quadro RTX 6000", "Turing", "7.5"),
            ("Tesla T4", "Turing", "7.5"),
            ("A100 SXM4 40GB", "Ampere", "8.0"),
            ("RTX A6000", "Ampere", "8.6"),
            ("A10", "Ampere", "8.6"),
            ("RTX 6000 Ada Generation", "Ada", "8.9"),
            ("L40S", "Ada", "8.9"),
            ("GeForce RTX 4090", "Ada", "8.9"),
            ("H100 PCIe", "Hopper", "9.0"),
            ("H200 SXM 141GB", "Hopper", "9.0"),
            ("B200", "Blackwell", "10.0"),
            (
                "RTX PRO 6000 Blackwell Workstation Edition",
                "Blackwell",
                "12.0",
            ),
            ("GeForce RTX 5090", "Blackwell", "12.0"),
            ("GeForce RTX 5060", "Blackwell", "12.0"),
        ];
        for (name, arch, cc) in cases {
            assert_eq!(by_name(name), (arch.to_owned(), cc.to_owned()), "{name}");
        }
        // pci.ids names two chips "GeForce GTX 750 Ti": a Kepler GK106 and the Maxwell GM107.
        let t = Catalog::embedded().gpus;
        assert_eq!(t.lookup("10de:1380").unwrap().compute_capability, "5.0");
        assert_eq!(t.lookup("10de:11c7").unwrap().compute_capability, "3.0");
        assert_eq!(t.lookup("10DE:2335").unwrap().architecture, "Hopper");
        assert!(t.lookup("10de:0000").is_none());
    }

    #[test]
    fn a_gpu_is_found_by_the_name_nvidia_smi_prints() {
        let t = Catalog::embedded().gpus;
        let (id, k) = t.by_name("NVIDIA GeForce RTX 4090").unwrap().unwrap();
        assert_eq!((id, k.compute_capability), ("10de:2684", "8.9"));
        let (_, k) = t.by_name("  geforce   rtx 4090 ").unwrap().unwrap();
        assert_eq!(k.architecture, "Ada");
        assert_eq!(t.by_name("NVIDIA Mystery Board").unwrap(), None);
        let e = t.by_name("GeForce GTX 750 Ti").unwrap_err();
        assert!(
            e.contains("10de:1380: Maxwell 5.0") && e.contains("give its `pci_id`"),
            "{e}"
        );
    }

    #[test]
    fn table_is_consistent() {
        let t = Catalog::embedded().gpus;
        for d in &t.device {
            assert!(
                t.chip(&d.chip).is_some(),
                "{} names unknown chip {}",
                d.pci_id,
                d.chip
            );
            assert!(
                d.pci_id.starts_with("10de:") && d.pci_id.len() == 9,
                "{}",
                d.pci_id
            );
            assert!(!d.source.is_empty());
        }
        for c in &t.chip {
            assert!(
                c.source.contains("http"),
                "{} has no source URL",
                c.codename
            );
            assert!(
                t.device.iter().any(|d| d.chip == c.codename)
                    || t.device_range.iter().any(|r| r.chip == c.codename),
                "{} is unused",
                c.codename
            );
        }
        let mut ids: Vec<_> = t.device.iter().map(|d| &d.pci_id).collect();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate PCI ids");
    }
}
