//! `nvidia-smi --query-gpu`: the fallback when NVML cannot be loaded (WSL keeps both in
//! /usr/lib/wsl/lib, which may not be on the loader's path).

use crate::model::system::{Gpu, Vendor};

use super::nvml::pci_id_from_combined;

/// The fields asked for, in order. `compute_cap` is missing on old drivers; then the query is
/// repeated with [`QUERY_WITHOUT_CC`] and the capability comes from the PCI table.
pub const QUERY: &str = "index,name,pci.device_id,driver_version,memory.total,compute_cap";
/// The same query without `compute_cap`.
pub const QUERY_WITHOUT_CC: &str = "index,name,pci.device_id,driver_version,memory.total";

/// Parses `--format=csv,noheader,nounits` output of [`QUERY`] or [`QUERY_WITHOUT_CC`]: one line
/// per GPU. Returns the GPUs and the driver version (the lowest, should lines disagree).
///
/// ```text
/// 0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0
/// ```
pub fn parse_query(text: &str) -> (Vec<Gpu>, Option<String>) {
    let mut gpus = Vec::new();
    let mut driver: Option<String> = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() < 5 {
            continue;
        }
        let Ok(index) = f[0].parse::<u32>() else {
            continue;
        };
        let pci_id = f[2]
            .strip_prefix("0x")
            .or_else(|| f[2].strip_prefix("0X"))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .map(pci_id_from_combined);
        let cc = f
            .get(5)
            .filter(|c| c.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .map(|c| (*c).to_owned());
        let v = f[3].to_owned();
        if driver.as_ref().is_none_or(|d| lower_version(&v, d)) {
            driver = Some(v);
        }
        gpus.push(Gpu {
            index,
            vendor: Vendor::Nvidia,
            name: f[1].to_owned(),
            pci_id,
            compute_capability: cc,
            architecture: None,
            memory_mib: f[4].parse().ok(),
        });
    }
    (gpus, driver)
}

fn lower_version(a: &str, b: &str) -> bool {
    match (
        crate::model::version::Version::parse(a),
        crate::model::version::Version::parse(b),
    ) {
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}

/// The `CUDA Version: 13.0` of nvidia-smi's banner or `-q` output.
pub fn parse_cuda_version(text: &str) -> Option<String> {
    let at = text.find("CUDA Version")?;
    text[at..]
        .split(|c: char| c.is_whitespace() || c == ':' || c == '|')
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured on the H200 machine (driver 580.159.04).
    const ONE: &str = "0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0\n";
    // An 8-GPU node and a mixed workstation, in the same format.
    const MIXED: &str = "0, NVIDIA GeForce RTX 5090, 0x2B8510DE, 575.57.08, 32607, 12.0\n1, NVIDIA GeForce GTX 1080 Ti, 0x1B0610DE, 575.57.08, 11264, 6.1\n";
    const OLD_DRIVER: &str = "0, Tesla K80, 0x102D10DE, 470.256.02, 11441\n1, Tesla K80, 0x102D10DE, 470.256.02, 11441\n";

    #[test]
    fn one_gpu() {
        let (gpus, driver) = parse_query(ONE);
        assert_eq!(driver.as_deref(), Some("580.159.04"));
        assert_eq!(gpus.len(), 1);
        assert_eq!(gpus[0].name, "NVIDIA H200");
        assert_eq!(gpus[0].pci_id.as_deref(), Some("10de:2335"));
        assert_eq!(gpus[0].compute_capability.as_deref(), Some("9.0"));
        assert_eq!(gpus[0].memory_mib, Some(143771));
    }

    #[test]
    fn several_gpus_every_line() {
        let (gpus, _) = parse_query(MIXED);
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[1].pci_id.as_deref(), Some("10de:1b06"));
        assert_eq!(gpus[1].compute_capability.as_deref(), Some("6.1"));
        let (gpus, driver) = parse_query(OLD_DRIVER);
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].compute_capability, None);
        assert_eq!(driver.as_deref(), Some("470.256.02"));
    }

    #[test]
    fn cuda_version_from_banner() {
        let banner = "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |";
        assert_eq!(parse_cuda_version(banner).as_deref(), Some("13.0"));
        assert_eq!(
            parse_cuda_version("    CUDA Version                          : 12.2\n").as_deref(),
            Some("12.2")
        );
    }
}
