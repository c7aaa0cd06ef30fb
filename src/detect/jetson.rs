//! Jetson (L4T) probes: /etc/nv_tegra_release, the device-tree model, and the installed
//! `nvidia-l4t-core` package. A Jetson's GPU is integrated (not on the PCI bus), and its stack
//! comes with JetPack.

use crate::catalog::JetsonManifest;
use crate::model::system::{Gpu, Jetson, OsFamily, System, Vendor};
use crate::model::version::Version;

use super::root::Root;

/// `36.4.3` from `# R36 (release), REVISION: 4.3, GCID: …, BOARD: generic, EABI: aarch64, …`.
pub fn parse_nv_tegra_release(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.trim_start().starts_with("# R"))?;
    let mut parts = line.split(',').map(str::trim);
    let release = parts
        .next()?
        .trim_start_matches('#')
        .trim()
        .strip_prefix('R')?
        .split_whitespace()
        .next()?;
    if release.is_empty() || !release.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let revision = parts.find_map(|p| p.strip_prefix("REVISION:"))?.trim();
    if revision.is_empty() || !revision.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    Some(format!("{release}.{revision}"))
}

/// The board from /proc/device-tree/model (NUL-terminated).
pub fn parse_model(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let model = text.trim_end_matches('\0').trim();
    (!model.is_empty()).then(|| model.to_owned())
}

/// The version of an installed package in a dpkg status file.
pub fn dpkg_version(status: &str, package: &str) -> Option<String> {
    for stanza in status.split("\n\n") {
        let field = |name: &str| {
            stanza.lines().find_map(|l| {
                l.strip_prefix(name)
                    .and_then(|r| r.strip_prefix(':'))
                    .map(|v| v.trim().to_owned())
            })
        };
        if field("Package").as_deref() == Some(package)
            && field("Status").is_some_and(|s| s.ends_with(" installed"))
        {
            return field("Version");
        }
    }
    None
}

/// The Jetson this root is, if it is one: L4T's release file, or a device-tree model that names
/// a Jetson.
pub fn probe(root: &Root) -> Option<Jetson> {
    let release = root.read("/etc/nv_tegra_release");
    let model = root
        .read_bytes("/proc/device-tree/model")
        .and_then(|b| parse_model(&b));
    let named = model
        .as_deref()
        .is_some_and(|m| m.to_ascii_lowercase().contains("jetson"));
    if release.is_none() && !named {
        return None;
    }
    let l4t_core = root
        .read("/var/lib/dpkg/status")
        .and_then(|s| dpkg_version(&s, "nvidia-l4t-core"));
    let l4t = release
        .as_deref()
        .and_then(parse_nv_tegra_release)
        // The package's version starts with the release (`36.4.3-20250107174145`).
        .or_else(|| {
            l4t_core
                .as_deref()
                .and_then(|v| v.split('-').next())
                .map(str::to_owned)
        });
    Some(Jetson {
        model,
        l4t,
        l4t_core,
    })
}

/// The Jetson a machine is by its GPU, whatever else its picture says: on Linux aarch64, an
/// NVIDIA GPU with no PCI id (integrated, not on the bus) whose compute capability is a Tegra
/// one of the catalog's module table (Maxwell 5.3, Pascal 6.2, Xavier 7.2, Orin 8.7, Thor 11.0)
/// is a Jetson's. No discrete GPU has those capabilities with no PCI id. The L4T release is not
/// known this way (the picture did not carry /etc/nv_tegra_release), so the plan names the
/// module's JetPacks.
pub fn from_gpu(system: &System, table: &JetsonManifest) -> Option<(Jetson, String)> {
    if system.os.family != OsFamily::Linux || system.os.arch != "aarch64" {
        return None;
    }
    system.gpus.iter().find_map(|g| {
        if g.vendor != Vendor::Nvidia || g.pci_id.is_some() {
            return None;
        }
        let cc = Version::parse(g.compute_capability.as_deref()?)?;
        let m = table.module.iter().find(|m| m.compute_capability == cc)?;
        let why = format!(
            "the {} has no PCI id and compute capability {cc}, the integrated GPU of a Jetson {} module on aarch64: this machine is planned as a Jetson",
            g.name, m.name
        );
        Some((
            Jetson {
                model: Some(format!("Jetson {} module", m.name)),
                l4t: None,
                l4t_core: None,
            },
            why,
        ))
    })
}

/// The integrated GPU of a Jetson, from the catalog's module table.
pub fn integrated_gpu(j: &Jetson, table: &JetsonManifest) -> Option<Gpu> {
    let m = table.module_of(j.model.as_deref()?)?;
    Some(Gpu {
        index: 0,
        vendor: Vendor::Nvidia,
        name: format!("NVIDIA {}", m.gpu),
        pci_id: None,
        compute_capability: Some(m.compute_capability.to_string()),
        architecture: Some(m.architecture.clone()),
        memory_mib: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // /etc/nv_tegra_release of L4T R36.4.3 (JetPack 6.2), as printed by `cat` on an Orin.
    const R36: &str = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\nTARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n";

    #[test]
    fn release_lines() {
        assert_eq!(parse_nv_tegra_release(R36).as_deref(), Some("36.4.3"));
        assert_eq!(
            parse_nv_tegra_release("# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: Fri Aug 22 00:55:42 UTC 2025").as_deref(),
            Some("38.2.0")
        );
        assert_eq!(parse_nv_tegra_release("garbage"), None);
        assert_eq!(parse_nv_tegra_release("# R36 (release), GCID: 1"), None);
        assert_eq!(
            parse_nv_tegra_release("# R3x (release), REVISION: 4.3"),
            None
        );
    }

    #[test]
    fn model_and_package() {
        assert_eq!(
            parse_model(b"NVIDIA Jetson AGX Orin Developer Kit\0").as_deref(),
            Some("NVIDIA Jetson AGX Orin Developer Kit")
        );
        assert_eq!(parse_model(b"\0"), None);
        let status = "Package: nvidia-l4t-kernel\nStatus: install ok installed\nVersion: 5.15.148-tegra-36.4.3-20250107174145\n\nPackage: nvidia-l4t-core\nStatus: install ok installed\nPriority: standard\nVersion: 36.4.3-20250107174145\n\nPackage: gone\nStatus: deinstall ok config-files\nVersion: 1\n";
        assert_eq!(
            dpkg_version(status, "nvidia-l4t-core").as_deref(),
            Some("36.4.3-20250107174145")
        );
        assert_eq!(dpkg_version(status, "gone"), None);
    }

    /// A captured-tree picture of a Jetson AGX Orin on JetPack 6.2 (the files L4T writes): the OS
    /// probe says aarch64 and Jetson, and the board's integrated GPU is named from the catalog.
    #[test]
    fn an_orin_tree_is_a_jetson_on_aarch64_with_its_gpu() {
        let dir = tempfile::tempdir().unwrap();
        let put = |path: &str, bytes: &[u8]| {
            let p = dir.path().join(path);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(p, bytes).unwrap();
        };
        put("etc/nv_tegra_release", R36.as_bytes());
        put(
            "proc/device-tree/model",
            b"NVIDIA Jetson AGX Orin Developer Kit\0",
        );
        put(
            "var/lib/dpkg/status",
            b"Package: nvidia-l4t-core\nStatus: install ok installed\nVersion: 36.4.3-20250107174145\n",
        );
        put(
            "etc/os-release",
            b"NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\n",
        );
        let root = Root::at(dir.path());
        let (os, _) = super::super::os::probe(&root);
        assert_eq!(os.arch, "aarch64");
        let j = os.jetson.clone().expect("a Jetson");
        assert_eq!(j.l4t.as_deref(), Some("36.4.3"));
        assert_eq!(j.l4t_core.as_deref(), Some("36.4.3-20250107174145"));
        let gpu = integrated_gpu(&j, &crate::catalog::Catalog::embedded().jetson).unwrap();
        assert_eq!(gpu.compute_capability.as_deref(), Some("8.7"));
        // Without the release file, the package still names the release.
        fs_err::remove_file(dir.path().join("etc/nv_tegra_release")).unwrap();
        assert_eq!(probe(&root).unwrap().l4t.as_deref(), Some("36.4.3"));
        // A machine with neither file is no Jetson.
        let other = tempfile::tempdir().unwrap();
        assert!(probe(&Root::at(other.path())).is_none());
    }
}
