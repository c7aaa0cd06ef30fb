//! The driver: loaded or not (nouveau, Secure Boot), its kernel module against its user-space
//! libraries, its branch against each GPU's window (drivers.toml), its version against the
//! stack's floors (cuda.toml). A Linux driver inside WSL2 is [`super::wsl`]'s.

use std::time::SystemTime;

use crate::model::finding::Severity;
use crate::model::system::{KernelModule, OsFamily};
use crate::model::version::Version;

use super::{Diagnosis, Inputs};

/// Every driver check.
pub fn check(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    out.extend(no_driver(inputs));
    out.extend(secure_boot(inputs));
    out.extend(nouveau(inputs));
    out.extend(library_mismatch(inputs));
    out.extend(branch_window(inputs));
    out.extend(stack_floors(inputs));
    out
}

fn gpu_list(inputs: &Inputs<'_>) -> String {
    inputs
        .nvidia_gpus()
        .iter()
        .map(|g| match &g.pci_id {
            Some(id) => format!("{} ({id})", g.name),
            None => g.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `no-driver`: NVIDIA GPUs on the bus, no driver loaded.
fn no_driver(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let s = inputs.system;
    let gpus = inputs.nvidia_gpus();
    if s.driver.is_some() || gpus.is_empty() || s.os.family != OsFamily::Linux || s.os.wsl {
        return None;
    }
    let mut d = Diagnosis::new(
        "no-driver",
        Severity::Error,
        format!(
            "{} NVIDIA GPU(s) on the PCI bus, but no NVIDIA driver is loaded",
            gpus.len()
        ),
    )
    .evidence(format!("GPUs from the PCI scan: {}", gpu_list(inputs)))
    .evidence("no /proc/driver/nvidia/version and no /sys/module/nvidia: the nvidia kernel module is not loaded");
    match inputs.facts.installed_modules.first() {
        Some(m) => {
            d = d.evidence(format!(
                "a module is installed for the running kernel ({}) but is not loaded",
                m.display()
            ));
        }
        None => {
            if let Some(k) = &s.os.kernel {
                d = d.evidence(format!(
                    "no nvidia.ko under /lib/modules/{k}: no driver is built for the running kernel"
                ));
            }
        }
    }
    if let Some(c) = &inputs.facts.container {
        return Some(
            d.evidence(format!("cudaup runs in a {c} container: the driver belongs to the host"))
                .fix("start the container with the GPUs exposed: docker run --gpus all … (needs the NVIDIA Container Toolkit on the host), or podman --device nvidia.com/gpu=all\nif the host has no driver either: install it there (cudaup plan on the host)"),
        );
    }
    let fix = if inputs.facts.installed_modules.is_empty() {
        "cudaup plan   # shows the driver branch these GPUs need, and the commands to install it\n\
         (if a driver was installed for another kernel: sudo dkms autoinstall, then reboot)"
    } else {
        "sudo modprobe nvidia   # the error it prints says why the module does not load\n\
         sudo dmesg | grep -i nvidia"
    };
    Some(d.fix(fix))
}

/// `secure-boot-module-refused`: Secure Boot on and no NVIDIA module loaded.
fn secure_boot(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let s = inputs.system;
    if s.os.secure_boot != Some(true)
        || s.driver.is_some()
        || inputs.facts.kernel_module_version.is_some()
        || inputs.nvidia_gpus().is_empty()
        || s.os.wsl
    {
        return None;
    }
    // A module on disk that did not load is most likely refused; with none yet, Secure Boot is
    // what the coming driver install must deal with.
    let refused = !inputs.facts.installed_modules.is_empty();
    let mut d = Diagnosis::new(
        "secure-boot-module-refused",
        if refused {
            Severity::Error
        } else {
            Severity::Warning
        },
        "Secure Boot is on and no NVIDIA kernel module is loaded: the kernel refuses modules that are not signed with an enrolled key",
    )
    .evidence("the SecureBoot EFI variable is 1 (/sys/firmware/efi/efivars/SecureBoot-8be4df61-…)");
    d = match inputs.facts.installed_modules.first() {
        Some(m) => d.evidence(format!(
            "{} is installed for the running kernel but not loaded: most likely refused for its signature",
            m.display()
        )),
        None => d.evidence("no nvidia.ko is installed for the running kernel yet: a driver built by DKMS will need a signing key enrolled"),
    };
    Some(d.fix(
        "sudo dmesg | grep -iE 'nvidia|Key was rejected|module verification failed'   # confirm\n\
         Ubuntu: sudo update-secureboot-policy --enroll-key, reboot and enrol the key in the blue MOK Manager screen\n\
         other distros: sudo mokutil --import /var/lib/dkms/mok.pub, reboot, enrol; or install the distro's signed driver packages\n\
         or turn Secure Boot off in the firmware settings",
    ))
}

/// `nouveau-loaded`.
fn nouveau(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let s = inputs.system;
    if !s.nouveau_loaded {
        return None;
    }
    let initramfs = match s.os.distro.as_deref() {
        Some("fedora" | "rhel" | "rocky" | "almalinux" | "centos" | "opensuse-leap" | "sles") => {
            "sudo dracut --force"
        }
        Some("arch" | "manjaro") => "sudo mkinitcpio -P",
        _ => "sudo update-initramfs -u",
    };
    Some(
        Diagnosis::new(
            "nouveau-loaded",
            if s.driver.is_some() {
                Severity::Warning
            } else {
                Severity::Error
            },
            "the open-source nouveau driver is loaded; NVIDIA's driver cannot bind to the GPU while it is",
        )
        .evidence("/proc/modules lists nouveau")
        .fix(format!(
            "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf\n{initramfs}\nsudo reboot"
        )),
    )
}

fn after(a: Option<SystemTime>, b: Option<SystemTime>) -> Option<bool> {
    Some(a? > b?)
}

fn describe_time(t: Option<SystemTime>) -> String {
    match t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()) {
        Some(d) => format!("@{} (Unix time)", d.as_secs()),
        None => "unknown".to_owned(),
    }
}

/// `driver-reboot-pending` (the libraries were upgraded, the old module still runs) against
/// `driver-library-mismatch` (they disagree and a reboot will not fix it).
fn library_mismatch(inputs: &Inputs<'_>) -> Option<Diagnosis> {
    let f = inputs.facts;
    let module = f.kernel_module_version.as_deref()?;
    let lib = f.nvml_library()?;
    if lib.version == module {
        return None;
    }
    let (mv, lv) = (Version::parse(module)?, Version::parse(&lib.version)?);
    let changed_since_boot = after(lib.modified, f.boot_time);
    let mut evidence = vec![
        format!("kernel module {module} (/proc/driver/nvidia/version)"),
        format!(
            "user-space library {} ({}), written {}",
            lib.version,
            lib.path.display(),
            describe_time(lib.modified)
        ),
        format!("boot time {}", describe_time(f.boot_time)),
    ];
    for other in f.driver_libraries.iter().filter(|l| l.path != lib.path) {
        evidence.push(format!("also: {} {}", other.path.display(), other.version));
    }
    let d = if lv > mv && changed_since_boot != Some(false) {
        let mut d = Diagnosis::new(
            "driver-reboot-pending",
            Severity::Error,
            format!(
                "the driver was upgraded to {} but the running kernel module is still {module}: CUDA fails with \"Driver/library version mismatch\" until a reboot",
                lib.version
            ),
        );
        d.evidence = evidence;
        d.evidence.push(match changed_since_boot {
            Some(_) => "the library file was written after boot: an upgrade since the last reboot"
                .to_owned(),
            None => {
                "the library is newer than the module (boot time or file time unknown)".to_owned()
            }
        });
        d.fix("sudo reboot\n(to avoid rebooting, when nothing uses the GPU: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia)")
    } else {
        let why = if lv > mv {
            "the library predates this boot, yet the old module loaded: the new module was not built for this kernel (DKMS) or the initramfs still carries the old one"
        } else {
            "the kernel module is newer than the user-space library: two driver installs are mixed (e.g. NVIDIA's .run installer over distro packages) or the libraries were downgraded"
        };
        let mut d = Diagnosis::new(
            "driver-library-mismatch",
            Severity::Error,
            format!(
                "driver/library version mismatch: kernel module {module}, user-space library {}; a reboot will not fix it",
                lib.version
            ),
        );
        d.evidence = evidence;
        d.evidence.push(why.to_owned());
        d.fix(if lv > mv {
            "sudo dkms autoinstall && sudo update-initramfs -u   # (Fedora/RHEL: sudo dracut --force)\nsudo reboot"
        } else {
            "reinstall one driver so both parts match: the distro packages (`cudaup plan` lists them) or NVIDIA's .run, not both\nsudo reboot"
        })
    };
    Some(d)
}

/// `driver-too-old-for-gpu`, `driver-too-new-for-gpu` (a legacy GPU past its last branch) and
/// `driver-open-module-required`, from drivers.toml's architecture rows.
fn branch_window(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let Some(driver) = &inputs.system.driver else {
        return out;
    };
    let Some(v) = inputs.driver_version() else {
        return out;
    };
    let branch = v.major();
    for g in inputs.nvidia_gpus() {
        let Some(arch) = g.architecture.as_deref() else {
            continue;
        };
        let Some(row) = inputs.catalog.drivers.architecture(arch) else {
            continue;
        };
        let row_evidence = format!(
            "drivers.toml: {arch} is served by branches {} to {}",
            row.min_branch
                .map_or("(any)".to_owned(), |b| format!("R{b}")),
            row.last_branch
                .map_or("(current)".to_owned(), |b| format!("R{b}"))
        );
        if let Some(min) = row.min_branch.filter(|m| branch < *m) {
            out.push(
                Diagnosis::new(
                    "driver-too-old-for-gpu",
                    Severity::Error,
                    format!(
                        "driver {} (R{branch}) is too old for the {} ({arch}): it needs R{min} or newer",
                        driver.version, g.name
                    ),
                )
                .evidence(format!("driver {} loaded", driver.version))
                .evidence(row_evidence.clone())
                .fix("cudaup plan --driver latest   # the branch and the commands to install it"),
            );
        }
        if let Some(last) = row.last_branch.filter(|l| branch > *l) {
            out.push(
                Diagnosis::new(
                    "driver-too-new-for-gpu",
                    Severity::Error,
                    format!(
                        "the {} ({arch}) is a legacy GPU whose last driver branch is R{last}, but driver {} (R{branch}) is loaded: it does not drive this GPU",
                        g.name, driver.version
                    ),
                )
                .evidence(format!("driver {} loaded", driver.version))
                .evidence(row_evidence.clone())
                .fix(format!(
                    "install the R{last} legacy branch: cudaup plan --driver {last}   # shows the packages\n\
                     or move the newer GPUs and this one to separate machines: no single driver serves both"
                )),
            );
        }
        if row.open_module == crate::catalog::OpenModule::Required
            && driver.kernel_module == Some(KernelModule::Proprietary)
        {
            out.push(
                Diagnosis::new(
                    "driver-open-module-required",
                    Severity::Error,
                    format!(
                        "the {} ({arch}) works only with NVIDIA's open kernel module, but the proprietary one is loaded",
                        g.name
                    ),
                )
                .evidence("/proc/driver/nvidia/version names the proprietary \"Kernel Module\", not the \"Open Kernel Module\"")
                .evidence(format!("drivers.toml: open_module = \"required\" for {arch}"))
                .fix("install the open flavour of the same branch (Ubuntu: nvidia-driver-<branch>-open; dnf: nvidia-open), then reboot; `cudaup plan` names the package"),
            );
        }
    }
    out
}

/// The driver floors of a CUDA version from cuda.toml: the major's minor-version-compatibility
/// floor, and the floor of the release itself (the series' first release when the exact version
/// is not in the catalog). Windows floors on WSL2 and Windows, where the driver is Windows'.
fn floors(inputs: &Inputs<'_>, cuda: &Version) -> (Option<Version>, Option<Version>) {
    let windows = inputs.system.os.wsl || inputs.system.os.family == OsFamily::Windows;
    let c = &inputs.catalog.cuda;
    // A release without a bundled driver (13.4+) has no floor of its own on Linux.
    let pick = |linux: Option<Version>, win: &Option<Version>| -> Option<Version> {
        match (windows, win) {
            (true, Some(w)) => Some(w.clone()),
            _ => linux,
        }
    };
    let major = c
        .major
        .iter()
        .find(|m| m.major == cuda.major())
        .and_then(|m| pick(Some(m.driver_linux.clone()), &m.driver_windows));
    let exact = c
        .release
        .iter()
        .find(|r| r.version == *cuda && cuda.parts().len() >= 3)
        .and_then(|r| pick(r.full_support_linux(), &r.driver_windows));
    let release = exact.or_else(|| {
        c.release
            .iter()
            .filter(|r| r.version.prefix(2) == cuda.prefix(2))
            .filter_map(|r| pick(r.full_support_linux(), &r.driver_windows))
            .min()
    });
    (major, release)
}

/// `toolkit-newer-than-driver`, `torch-cuda-newer-than-driver` (below the major's floor: nothing
/// runs) and `driver-minor-version-compat` (between the major's floor and the release's: runs,
/// with the limits of minor-version compatibility).
fn stack_floors(inputs: &Inputs<'_>) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let (Some(driver), Some(dv)) = (&inputs.system.driver, inputs.driver_version()) else {
        return out;
    };
    // Toolkits: detect's, plus cudaup's receipts (a --prefix outside $CUDAUP_HOME).
    let mut toolkits: Vec<(String, String, bool)> = inputs
        .system
        .toolkits
        .iter()
        .map(|t| {
            (
                t.version.clone(),
                t.path.clone(),
                t.owner == crate::model::system::Owner::Cudaup,
            )
        })
        .collect();
    for (_, r) in &inputs.receipts.toolkits {
        let path = r.prefix.display().to_string();
        if !toolkits.iter().any(|t| t.1 == path) {
            toolkits.push((r.cuda.clone(), path, true));
        }
    }
    for (version, path, cudaup) in toolkits {
        let Some(v) = Version::parse(&version) else {
            continue;
        };
        let (major, release) = floors(inputs, &v);
        let who = if cudaup { " (installed by cudaup)" } else { "" };
        if let Some(m) = major.as_ref().filter(|m| &dv < *m) {
            out.push(
                Diagnosis::new(
                    "toolkit-newer-than-driver",
                    Severity::Error,
                    format!(
                        "CUDA toolkit {version} at {path}{who} needs driver {m} or newer; driver {} is loaded: its programs will not run",
                        driver.version
                    ),
                )
                .evidence(format!("cuda.toml: CUDA {}.x needs driver >= {m} (minor-version compatibility floor)", v.major()))
                .evidence(format!("driver {} loaded", driver.version))
                .fix("upgrade the driver: cudaup plan --driver latest\nor use a toolkit of a CUDA major this driver runs"),
            );
        } else if let Some(r) = release.as_ref().filter(|r| &dv < *r) {
            out.push(
                Diagnosis::new(
                    "driver-minor-version-compat",
                    Severity::Warning,
                    format!(
                        "CUDA toolkit {version} at {path}{who} shipped with driver {r}; driver {} runs it only through minor-version compatibility: PTX it generates cannot be JIT-compiled, and newer APIs fail",
                        driver.version
                    ),
                )
                .evidence(format!("cuda.toml: CUDA {} ships with driver {r}", v.prefix(2)))
                .evidence(format!("driver {} loaded", driver.version))
                .fix("build with SASS for your GPU (-arch=sm_XY), or upgrade the driver: cudaup plan --driver latest"),
            );
        }
    }
    for site in inputs.torches() {
        let Some(cuda) = site.torch.cuda.as_deref().and_then(Version::parse) else {
            continue;
        };
        let (major, release) = floors(inputs, &cuda);
        if let Some(m) = major.as_ref().filter(|m| &dv < *m) {
            out.push(
                Diagnosis::new(
                    "torch-cuda-newer-than-driver",
                    Severity::Error,
                    format!(
                        "torch {} in {} is built for CUDA {cuda}, which needs driver {m} or newer; driver {} is loaded: torch.cuda.is_available() is False",
                        site.torch.version, site.python, driver.version
                    ),
                )
                .evidence(format!("cuda.toml: CUDA {}.x needs driver >= {m}", cuda.major()))
                .evidence(format!("torch/version.py: cuda = '{cuda}'"))
                .fix("upgrade the driver (cudaup plan --driver latest), or install a torch wheel for the driver's CUDA: cudaup plan --profile pytorch"),
            );
        } else if let Some(r) = release.as_ref().filter(|r| &dv < *r) {
            out.push(
                Diagnosis::new(
                    "driver-minor-version-compat",
                    Severity::Info,
                    format!(
                        "torch {} in {} is built for CUDA {cuda} (released with driver {r}); driver {} runs it through minor-version compatibility",
                        site.torch.version, site.python, driver.version
                    ),
                )
                .evidence(format!("cuda.toml: CUDA {} ships with driver {r}", cuda.prefix(2)))
                .fix("nothing, unless kernels fail to JIT-compile; then upgrade the driver (cudaup plan --driver latest)"),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::super::testing::*;
    use super::super::DriverLibrary;
    use super::*;
    use crate::model::system::Driver;

    fn lib(path: &str, version: &str, at: u64) -> DriverLibrary {
        DriverLibrary {
            path: PathBuf::from(path),
            name: "libnvidia-ml",
            version: version.into(),
            modified: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(at)),
        }
    }

    #[test]
    fn no_driver_and_secure_boot() {
        let mut s = h200();
        s.driver = None;
        s.os.secure_boot = Some(true);
        let mut w = World::new(s);
        w.facts.installed_modules = vec![PathBuf::from(
            "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst",
        )];
        let ids = w.ids();
        assert!(ids.contains(&"no-driver"), "{ids:?}");
        assert!(ids.contains(&"secure-boot-module-refused"), "{ids:?}");
        let d = check(&w.inputs());
        let sb = d
            .iter()
            .find(|d| d.id() == "secure-boot-module-refused")
            .unwrap();
        assert!(sb.evidence.iter().any(|e| e.contains("nvidia.ko.zst")));
        // Secure Boot off: only no-driver.
        w.system.os.secure_boot = Some(false);
        assert_eq!(w.ids(), vec!["no-driver"]);
    }

    #[test]
    fn the_soname_link_decides_which_library_counts() {
        let mut w = World::new(h200());
        w.facts.kernel_module_version = Some("580.95.05".into());
        w.facts.driver_libraries = vec![
            lib("/usr/lib/libnvidia-ml.so.535.129.03", "535.129.03", 0),
            lib("/usr/lib/libnvidia-ml.so.580.95.05", "580.95.05", 0),
        ];
        assert!(w.ids().contains(&"driver-library-mismatch"));
        w.facts.nvml_soname_target = Some(PathBuf::from("/usr/lib/libnvidia-ml.so.580.95.05"));
        assert!(w.ids().is_empty(), "{:?}", w.ids());
    }

    #[test]
    fn in_a_container_the_driver_is_the_hosts() {
        let mut s = h200();
        s.driver = None;
        let mut w = World::new(s);
        w.facts.container = Some("docker".into());
        let d = check(&w.inputs());
        assert_eq!(d[0].id(), "no-driver");
        assert!(d[0].finding.fix.as_ref().unwrap().contains("--gpus all"));
    }

    #[test]
    fn reboot_pending_against_really_broken() {
        let mut w = World::new(h200());
        w.facts.kernel_module_version = Some("570.124.06".into());
        w.facts.boot_time = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1000));
        // Upgraded after boot: reboot pending.
        w.facts.driver_libraries =
            vec![lib("/usr/lib/libnvidia-ml.so.580.95.05", "580.95.05", 2000)];
        assert!(w.ids().contains(&"driver-reboot-pending"));
        assert!(!w.ids().contains(&"driver-library-mismatch"));
        // Newer library from before boot: the old module came back; a reboot did not help.
        w.facts.driver_libraries =
            vec![lib("/usr/lib/libnvidia-ml.so.580.95.05", "580.95.05", 500)];
        assert!(w.ids().contains(&"driver-library-mismatch"));
        // Module newer than the library: broken either way.
        w.facts.kernel_module_version = Some("590.44.01".into());
        w.facts.driver_libraries =
            vec![lib("/usr/lib/libnvidia-ml.so.580.95.05", "580.95.05", 2000)];
        let ids = w.ids();
        assert!(ids.contains(&"driver-library-mismatch"), "{ids:?}");
        assert!(!ids.contains(&"driver-reboot-pending"));
        // Same versions: nothing.
        w.facts.kernel_module_version = Some("580.95.05".into());
        assert!(w.ids().is_empty());
    }

    #[test]
    fn branch_windows_from_the_catalog() {
        let mut s = h200();
        s.gpus = vec![gpu(
            "NVIDIA GeForce RTX 5090",
            "10de:2b85",
            "12.0",
            "Blackwell",
        )];
        s.driver = Some(Driver {
            version: "560.35.03".into(),
            cuda_version: Some("12.6".into()),
            kernel_module: Some(KernelModule::Proprietary),
        });
        s.toolkits.clear();
        s.pythons.clear();
        let w = World::new(s);
        let ids = w.ids();
        assert!(ids.contains(&"driver-too-old-for-gpu"), "{ids:?}");
        assert!(ids.contains(&"driver-open-module-required"), "{ids:?}");

        let mut s = h200();
        s.gpus = vec![gpu("NVIDIA GeForce GTX 780", "10de:1004", "3.5", "Kepler")];
        s.toolkits.clear();
        s.pythons.clear();
        let w = World::new(s);
        assert_eq!(w.ids(), vec!["driver-too-new-for-gpu"]);
    }

    #[test]
    fn stack_floors_from_cuda_toml() {
        let mut s = h200();
        s.driver = Some(Driver {
            version: "535.129.03".into(),
            cuda_version: Some("12.2".into()),
            kernel_module: Some(KernelModule::Open),
        });
        s.toolkits[0].version = "12.8.1".into();
        let w = World::new(s);
        let ids = w.ids();
        // torch cu130 needs R580: error; toolkit 12.8.1 runs through minor-version compat.
        assert!(ids.contains(&"torch-cuda-newer-than-driver"), "{ids:?}");
        assert!(ids.contains(&"driver-minor-version-compat"), "{ids:?}");
        assert!(!ids.contains(&"toolkit-newer-than-driver"), "{ids:?}");

        let mut s = h200();
        s.driver.as_mut().unwrap().version = "535.129.03".into();
        let w = World::new(s);
        assert!(w.ids().contains(&"toolkit-newer-than-driver"));
    }
}
