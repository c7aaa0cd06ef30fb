//! Operating-system probes: os-release, kernel, WSL, Secure Boot, containers.

use crate::model::system::{Os, OsFamily};

use super::root::Root;

/// Fields of an os-release file that cudaup uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct OsRelease {
    /// `ID` (`ubuntu`).
    pub id: Option<String>,
    /// `ID_LIKE` (`debian`), split on spaces.
    pub id_like: Vec<String>,
    /// `VERSION_ID` (`22.04`).
    pub version_id: Option<String>,
    /// `PRETTY_NAME` (`Ubuntu 22.04.4 LTS`).
    pub pretty_name: Option<String>,
}

/// Parses os-release(5): `KEY=value` lines, values optionally quoted.
///
/// ```text
/// PRETTY_NAME="Ubuntu 24.04.3 LTS"
/// ID=ubuntu
/// VERSION_ID="24.04"
/// ```
pub fn parse_os_release(text: &str) -> OsRelease {
    let mut out = OsRelease::default();
    for line in text.lines() {
        let Some((key, value)) = line.trim().split_once('=') else {
            continue;
        };
        let value = unquote(value.trim());
        if value.is_empty() {
            continue;
        }
        match key {
            "ID" => out.id = Some(value.to_ascii_lowercase()),
            "ID_LIKE" => out.id_like = value.split_whitespace().map(str::to_owned).collect(),
            "VERSION_ID" => out.version_id = Some(value),
            "PRETTY_NAME" => out.pretty_name = Some(value),
            _ => {}
        }
    }
    out
}

fn unquote(v: &str) -> String {
    let v = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
        .unwrap_or(v);
    v.replace("\\\"", "\"").replace("\\\\", "\\")
}

/// The kernel release from /proc/version (`Linux version 6.5.0-35-generic (…) …`).
pub fn parse_kernel_release(proc_version: &str) -> Option<String> {
    let mut words = proc_version.split_whitespace();
    while let Some(w) = words.next() {
        if w == "version" {
            return words.next().map(str::to_owned);
        }
    }
    None
}

/// Whether /proc/version reveals WSL (`…-microsoft-standard-WSL2 …`, or WSL1's `Microsoft`).
pub fn parse_is_wsl(proc_version: &str) -> bool {
    let lower = proc_version.to_ascii_lowercase();
    lower.contains("microsoft") || lower.contains("wsl")
}

/// Secure Boot from the EFI variable's bytes: 4 bytes of attributes, then 1 = enabled.
pub fn parse_secure_boot(efivar: &[u8]) -> Option<bool> {
    efivar.get(4).map(|b| *b == 1)
}

/// The container runtime, from marker files and PID 1's cgroup.
pub fn detect_container(root: &Root) -> Option<String> {
    if root.exists("/.dockerenv") {
        return Some("docker".into());
    }
    if root.exists("/run/.containerenv") {
        return Some("podman".into());
    }
    let cgroup = root.read("/proc/1/cgroup").unwrap_or_default();
    ["kubepods", "docker", "containerd", "lxc", "libpod"]
        .into_iter()
        .find(|k| cgroup.contains(k))
        .map(str::to_owned)
}

/// The GUID under which UEFI keeps the SecureBoot variable.
const SECURE_BOOT_VAR: &str = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// Reads the OS facts from `root`. On a live machine the family and architecture are the
/// running binary's; a captured tree is a Linux machine whose architecture shows in its
/// multiarch library directories.
pub fn probe(root: &Root) -> (Os, OsRelease) {
    let release = root
        .read("/etc/os-release")
        .or_else(|| root.read("/usr/lib/os-release"))
        .map(|t| parse_os_release(&t))
        .unwrap_or_default();
    let proc_version = root.read("/proc/version").unwrap_or_default();
    let family = if !root.is_live() || cfg!(target_os = "linux") {
        OsFamily::Linux
    } else if cfg!(target_os = "macos") {
        OsFamily::Macos
    } else {
        OsFamily::Windows
    };
    let jetson = super::jetson::probe(root);
    let arch = if root.is_live() {
        std::env::consts::ARCH.to_owned()
    } else if root.is_dir("/usr/lib/aarch64-linux-gnu")
        || proc_version.contains("aarch64-linux-gnu")
        || jetson.is_some()
    {
        "aarch64".to_owned()
    } else {
        "x86_64".to_owned()
    };
    let os = Os {
        family,
        distro: release.id.clone(),
        version: release.version_id.clone(),
        arch,
        kernel: parse_kernel_release(&proc_version),
        // A WSL kernel's release (`…-microsoft-standard-WSL2`) is in both files.
        wsl: parse_is_wsl(&proc_version)
            || root
                .read("/proc/sys/kernel/osrelease")
                .is_some_and(|r| parse_is_wsl(&r)),
        secure_boot: root
            .read_bytes(format!("/sys/firmware/efi/efivars/{SECURE_BOOT_VAR}"))
            .and_then(|b| parse_secure_boot(&b)),
        jetson,
    };
    (os, release)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured os-release files (trimmed to the keys that matter and a few that don't).
    const UBUNTU: &str = "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nVERSION=\"24.04.3 LTS (Noble Numbat)\"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\nHOME_URL=\"https://www.ubuntu.com/\"\n";
    const DEBIAN: &str = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n";
    const FEDORA: &str = "NAME=\"Fedora Linux\"\nVERSION=\"40 (Workstation Edition)\"\nID=fedora\nVERSION_ID=40\nPLATFORM_ID=\"platform:f40\"\nPRETTY_NAME=\"Fedora Linux 40 (Workstation Edition)\"\n";
    const ROCKY: &str = "NAME=\"Rocky Linux\"\nVERSION=\"9.4 (Blue Onyx)\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.4\"\nPLATFORM_ID=\"platform:el9\"\nPRETTY_NAME=\"Rocky Linux 9.4 (Blue Onyx)\"\n";
    const ARCH: &str = "NAME=\"Arch Linux\"\nPRETTY_NAME=\"Arch Linux\"\nID=arch\nBUILD_ID=rolling\nANSI_COLOR=\"38;2;23;147;209\"\n";
    const WSL2: &str = "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0, GNU ld (GNU Binutils) 2.40) #1 SMP Fri Mar 29 23:14:13 UTC 2024\n";
    const H200_PROC_VERSION: &str = "Linux version 6.18.44-fc-v657-gpu (nixbld@localhost) (gcc (GCC) 14.3.0) #1 SMP PREEMPT_DYNAMIC @0\n";

    #[test]
    fn parses_each_distro() {
        let cases = [
            (UBUNTU, "ubuntu", Some("24.04"), vec!["debian"]),
            (DEBIAN, "debian", Some("12"), vec![]),
            (FEDORA, "fedora", Some("40"), vec![]),
            (
                ROCKY,
                "rocky",
                Some("9.4"),
                vec!["rhel", "centos", "fedora"],
            ),
            (ARCH, "arch", None, vec![]),
        ];
        for (text, id, version, like) in cases {
            let r = parse_os_release(text);
            assert_eq!(r.id.as_deref(), Some(id));
            assert_eq!(r.version_id.as_deref(), version, "{id}");
            assert_eq!(r.id_like, like, "{id}");
        }
    }

    #[test]
    fn wsl_from_the_kernels_osrelease_alone() {
        let d = tempfile::tempdir().unwrap();
        let put = |path: &str, text: &str| {
            let p = d.path().join(path);
            fs_err::create_dir_all(p.parent().unwrap()).unwrap();
            fs_err::write(p, text).unwrap();
        };
        put(
            "proc/version",
            "Linux version 6.8.0-45-generic (buildd@lcy02) #45\n",
        );
        let root = crate::detect::Root::at(d.path());
        assert!(!probe(&root).0.wsl);
        put(
            "proc/sys/kernel/osrelease",
            "5.15.167.4-microsoft-standard-WSL2\n",
        );
        assert!(probe(&root).0.wsl);
    }

    #[test]
    fn wsl_and_kernel() {
        assert!(parse_is_wsl(WSL2));
        assert_eq!(
            parse_kernel_release(WSL2).as_deref(),
            Some("5.15.153.1-microsoft-standard-WSL2")
        );
        assert!(!parse_is_wsl(H200_PROC_VERSION));
        assert_eq!(
            parse_kernel_release(H200_PROC_VERSION).as_deref(),
            Some("6.18.44-fc-v657-gpu")
        );
    }

    #[test]
    fn secure_boot_byte() {
        assert_eq!(parse_secure_boot(&[6, 0, 0, 0, 1]), Some(true));
        assert_eq!(parse_secure_boot(&[6, 0, 0, 0, 0]), Some(false));
        assert_eq!(parse_secure_boot(&[6, 0]), None);
    }
}
