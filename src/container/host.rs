//! What the host says about itself that decides how containers reach its GPUs: the cgroup
//! layout, SELinux, WSL, the loaded driver, the legacy OCI hook, stale apt lists. All read
//! through a [`Root`], so tests point it at a picture.

use std::path::PathBuf;

use serde::Serialize;

use crate::detect::Root;

/// The legacy hook that Podman runs for every container when the old toolkit packages put it
/// there; CDI and it "can conflict" (NVIDIA's cdi-support.md).
pub const LEGACY_HOOK: &str = "/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json";

/// Old apt list files that make `apt update` fail with "Conflicting values set for option
/// Signed-By" next to the current `nvidia-container-toolkit.list` (troubleshooting doc).
pub const STALE_APT_LISTS: [&str; 2] = [
    "/etc/apt/sources.list.d/nvidia-docker.list",
    "/etc/apt/sources.list.d/libnvidia-container.list",
];

/// The cgroup layout of `/sys/fs/cgroup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cgroups {
    /// cgroup v2 alone (`cgroup.controllers` at the top).
    V2,
    /// v1 controllers with an empty v2 tree at `unified/` (systemd's hybrid mode).
    Hybrid,
    /// cgroup v1.
    V1,
    /// Nothing readable.
    Unknown,
}

/// SELinux as the kernel reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Selinux {
    /// Not loaded.
    Off,
    /// Loaded, not enforcing.
    Permissive,
    /// Enforcing: containers need `--security-opt=label=disable` to open the GPU.
    Enforcing,
}

/// WSL, when this is WSL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wsl {
    /// 1 or 2.
    pub version: u8,
    /// `/dev/dxg`, the paravirtualised GPU.
    pub dxg: bool,
    /// `/usr/lib/wsl/lib/libdxcore.so`, which NVML needs there (toolkit #1739).
    pub libdxcore: bool,
    /// Linux driver libraries installed inside the distro, which collide with
    /// `/usr/lib/wsl/lib` (`libnvidia-ml.so.1: file exists`, toolkit #289).
    pub linux_driver_libraries: Vec<PathBuf>,
}

/// The facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Host {
    /// cgroup layout.
    pub cgroups: Cgroups,
    /// SELinux.
    pub selinux: Selinux,
    /// WSL, if this is WSL.
    pub wsl: Option<Wsl>,
    /// The loaded kernel module's version (`/proc/driver/nvidia/version`).
    pub driver_version: Option<String>,
    /// Whether this process runs as root (`Uid:` of `/proc/self/status`).
    pub root: bool,
    /// The legacy hook file, when present.
    pub legacy_hook: bool,
    /// `/dev/char/195:*` links, which systemd needs to keep device access across a
    /// `daemon-reload` in legacy mode (toolkit #48).
    pub dev_char_links: bool,
    /// Old apt lists present.
    pub stale_apt_lists: Vec<PathBuf>,
}

impl Host {
    /// Reads the facts from `root`.
    pub fn probe(root: &Root) -> Host {
        let cgroups = if root.exists("/sys/fs/cgroup/cgroup.controllers") {
            Cgroups::V2
        } else if root.is_dir("/sys/fs/cgroup/unified") {
            Cgroups::Hybrid
        } else if root.is_dir("/sys/fs/cgroup/devices") || root.is_dir("/sys/fs/cgroup/memory") {
            Cgroups::V1
        } else {
            Cgroups::Unknown
        };
        let selinux = match root
            .read("/sys/fs/selinux/enforce")
            .as_deref()
            .map(str::trim)
        {
            Some("1") => Selinux::Enforcing,
            Some(_) => Selinux::Permissive,
            None => Selinux::Off,
        };
        let proc_version = root.read("/proc/version").unwrap_or_default();
        let wsl = parse_wsl_version(&proc_version).map(|version| Wsl {
            version,
            dxg: root.exists("/dev/dxg"),
            libdxcore: root.exists("/usr/lib/wsl/lib/libdxcore.so"),
            linux_driver_libraries: ["/usr/lib/x86_64-linux-gnu", "/usr/lib64"]
                .iter()
                .flat_map(|d| root.list(d))
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("libnvidia-ml.so") || n.starts_with("libcuda.so")
                    })
                })
                .collect(),
        });
        let root_user = root
            .read("/proc/self/status")
            .and_then(|s| parse_uid(&s))
            .is_some_and(|uid| uid == 0);
        Host {
            cgroups,
            selinux,
            wsl,
            driver_version: crate::detect::driver::probe_kernel_driver(root).map(|(v, _)| v),
            root: root_user,
            legacy_hook: root.exists(LEGACY_HOOK),
            dev_char_links: root.list("/dev/char").iter().any(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("195:"))
            }),
            stale_apt_lists: STALE_APT_LISTS
                .iter()
                .map(PathBuf::from)
                .filter(|p| root.exists(p))
                .collect(),
        }
    }
}

/// WSL's version from `/proc/version`: WSL2 kernels say `microsoft-standard-WSL2`, WSL1's
/// emulated one says `Microsoft` (capitalised, no `standard`).
pub fn parse_wsl_version(proc_version: &str) -> Option<u8> {
    let lower = proc_version.to_ascii_lowercase();
    if lower.contains("wsl2") || lower.contains("microsoft-standard") {
        Some(2)
    } else if lower.contains("microsoft") {
        Some(1)
    } else {
        None
    }
}

/// The real uid from `/proc/self/status` (`Uid:\t1000\t1000\t1000\t1000`).
fn parse_uid(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wsl_versions() {
        assert_eq!(
            parse_wsl_version(
                "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1)"
            ),
            Some(2)
        );
        assert_eq!(
            parse_wsl_version("Linux version 4.4.0-22621-Microsoft (Microsoft@Microsoft.com)"),
            Some(1)
        );
        assert_eq!(parse_wsl_version("Linux version 6.8.0-49-generic"), None);
    }

    #[test]
    fn a_picture_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str, s: &str| {
            let f = dir.path().join(p.trim_start_matches('/'));
            fs_err::create_dir_all(f.parent().unwrap()).unwrap();
            fs_err::write(f, s).unwrap();
        };
        w("/sys/fs/cgroup/cgroup.controllers", "cpu memory io\n");
        w("/sys/fs/selinux/enforce", "1");
        w(
            "/proc/self/status",
            "Name:\tcudaup\nUid:\t1000\t1000\t1000\t1000\n",
        );
        w(
            "/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n",
        );
        w(LEGACY_HOOK, "{}");
        w(
            STALE_APT_LISTS[0],
            "deb https://nvidia.github.io/nvidia-docker/ubuntu22.04/$(ARCH) /\n",
        );
        let h = Host::probe(&Root::at(dir.path()));
        assert_eq!(h.cgroups, Cgroups::V2);
        assert_eq!(h.selinux, Selinux::Enforcing);
        assert_eq!(h.driver_version.as_deref(), Some("580.95.05"));
        assert!(!h.root && h.legacy_hook && h.wsl.is_none());
        assert_eq!(h.stale_apt_lists, vec![PathBuf::from(STALE_APT_LISTS[0])]);
    }
}
