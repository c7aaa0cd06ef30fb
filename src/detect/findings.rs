//! What looks wrong in a detected machine.

use crate::catalog::Catalog;
use crate::model::finding::{Finding, Severity};
use crate::model::system::{OsFamily, System};
use crate::model::version::Version;

use super::Evidence;

/// Findings for `system`, most severe first.
pub(crate) fn findings(system: &System, evidence: &Evidence, catalog: &Catalog) -> Vec<Finding> {
    let mut out = Vec::new();
    let nvidia: Vec<_> = system.nvidia_gpus().collect();

    if nvidia.is_empty() {
        let others: Vec<&str> = system.gpus.iter().map(|g| g.name.as_str()).collect();
        let mut f = Finding::new(
            "no-nvidia-gpu",
            Severity::Info,
            if others.is_empty() {
                "no NVIDIA GPU found".to_owned()
            } else {
                format!("no NVIDIA GPU found (other GPUs: {})", others.join(", "))
            },
        );
        f = f.with_fix(
            "CUDA needs an NVIDIA GPU; `cudaup plan --profile cpu` sets up CPU-only frameworks",
        );
        out.push(f);
    }

    if system.driver.is_none() && evidence.nvidia_on_pci > 0 && system.os.family == OsFamily::Linux
    {
        let mut f = Finding::new(
            "no-driver",
            Severity::Error,
            format!(
                "{} NVIDIA GPU(s) on the PCI bus, but no NVIDIA driver is loaded",
                evidence.nvidia_on_pci
            ),
        )
        .with_fix(
            "`cudaup plan` shows the driver branch these GPUs need; a reboot may also be pending",
        );
        if system.os.secure_boot == Some(true) {
            f.message
                .push_str("; Secure Boot is on, so an unsigned module would be refused");
            f.fix = Some(
                "install a signed driver (distro packages) or enrol a Machine Owner Key (MOK) for DKMS before installing".into(),
            );
        }
        out.push(f);
    }

    if system.nouveau_loaded {
        out.push(
            Finding::new(
                "nouveau-loaded",
                if system.driver.is_some() { Severity::Warning } else { Severity::Error },
                "the open-source nouveau driver is loaded; NVIDIA's driver cannot bind to the GPU while it is",
            )
            .with_fix("blacklist nouveau (/etc/modprobe.d), rebuild the initramfs and reboot; the driver step does this"),
        );
    }

    let kernel = evidence.kernel_module_version.as_deref();
    let library = evidence.nvml_library_version.as_deref();
    if evidence.nvml_mismatch || matches!((kernel, library), (Some(k), Some(l)) if k != l) {
        out.push(
            Finding::new(
                "driver-library-mismatch",
                Severity::Error,
                format!(
                    "driver/library version mismatch: kernel module {}, user-space NVML library {}",
                    kernel.unwrap_or("unknown"),
                    library.unwrap_or("unknown")
                ),
            )
            .with_fix("the driver was updated without a reboot: reboot; if it persists, reinstall the driver so both parts match"),
        );
    }

    for g in &nvidia {
        if g.compute_capability.is_none() {
            out.push(Finding::new(
                "gpu-unknown",
                Severity::Warning,
                format!(
                    "{} ({}) is not in cudaup's GPU table; its compute capability is unknown",
                    g.name,
                    g.pci_id.as_deref().unwrap_or("no PCI id")
                ),
            ));
        }
    }

    let driver_cuda = system
        .driver
        .as_ref()
        .and_then(|d| d.cuda_version.as_deref())
        .and_then(Version::parse);
    if let Some(driver_cuda) = &driver_cuda {
        for t in &system.toolkits {
            let Some(v) = Version::parse(&t.version) else {
                continue;
            };
            if v.major() > driver_cuda.major() {
                let floor = catalog
                    .cuda
                    .major
                    .iter()
                    .find(|m| m.major == v.major())
                    .map(|m| format!(" (CUDA {}.x needs driver >= {})", v.major(), m.driver_linux))
                    .unwrap_or_default();
                out.push(Finding::new(
                    "toolkit-newer-than-driver",
                    Severity::Error,
                    format!(
                        "CUDA toolkit {} at {} is newer than the driver supports (CUDA {driver_cuda}){floor}: its programs will not run",
                        t.version, t.path
                    ),
                ).with_fix("upgrade the driver, or use a toolkit of the driver's CUDA major"));
            }
        }
        for p in &system.pythons {
            let Some(t) = &p.torch else { continue };
            let Some(tc) = t.cuda.as_deref().and_then(Version::parse) else {
                continue;
            };
            if tc.major() > driver_cuda.major() {
                out.push(
                    Finding::new(
                        "torch-cuda-newer-than-driver",
                        Severity::Error,
                        format!(
                            "torch {} in {} is built for CUDA {tc}, newer than the driver supports (CUDA {driver_cuda})",
                            t.version, p.path
                        ),
                    )
                    .with_fix("upgrade the driver, or install a torch wheel for the driver's CUDA (see `cudaup plan`)"),
                );
            }
        }
    }

    if !nvidia.is_empty() {
        for p in &system.pythons {
            if let Some(t) = &p.torch {
                if t.cuda.is_none() {
                    out.push(
                        Finding::new(
                            "torch-cpu-only",
                            Severity::Warning,
                            format!("torch {} in {} is a CPU-only build; it will not use the GPU", t.version, p.path),
                        )
                        .with_fix("reinstall torch from a CUDA index (see `cudaup plan --profile pytorch`)"),
                    );
                }
            }
        }
    }

    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}
