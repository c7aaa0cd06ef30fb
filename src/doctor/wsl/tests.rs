//! The WSL check against fake roots: WSL told by its kernel's release, a distribution's driver
//! package inside it named for removal, and the Windows driver's own files left alone.

use std::path::{Path, PathBuf};

use super::super::testing::*;
use super::super::{DriverLibrary, Facts};
use super::*;
use crate::detect::Root;

const WSL_KERNEL: &str = "5.15.167.4-microsoft-standard-WSL2";

/// A fake root with `files` (machine path, bytes) under a temporary folder.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let host = d.path().join(path.trim_start_matches('/'));
        fs_err::create_dir_all(host.parent().unwrap()).unwrap();
        fs_err::write(host, text).unwrap();
    }
    d
}

/// The healthy H200 picture, as detect would make it of a WSL kernel whose /proc/version it
/// did not read (`os.wsl` false): WSL is then told by the other facts alone.
fn system() -> System {
    let mut s = h200();
    s.os.kernel = Some(WSL_KERNEL.into());
    s
}

fn facts(root: &Path, process: &Process, s: &System) -> Facts {
    Facts::gather(&Root::at(root), process, s)
}

fn no_env() -> Process {
    Process::with_vars(Vec::<(String, String)>::new(), "/")
}

const STRAY: &str = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.120";

#[test]
fn a_distributions_driver_inside_wsl_is_an_error_whose_fix_names_its_packages() {
    let t = tree(&[
        ("/proc/sys/kernel/osrelease", &format!("{WSL_KERNEL}\n")),
        ("/usr/lib/wsl/lib/libcuda.so.1.1", ""),
        (STRAY, ""),
        (
            &format!("/lib/modules/{WSL_KERNEL}/updates/dkms/nvidia.ko"),
            "",
        ),
        (
            "/var/lib/dpkg/info/libnvidia-compute-550:amd64.list",
            &format!("/.\n/usr/lib/x86_64-linux-gnu\n{STRAY}\n"),
        ),
        (
            "/var/lib/dpkg/info/nvidia-dkms-550.list",
            &format!("/lib/modules/{WSL_KERNEL}/updates/dkms/nvidia.ko\n"),
        ),
        // The toolkit from NVIDIA's WSL-Ubuntu repo owns none of it: it stays.
        (
            "/var/lib/dpkg/info/cuda-toolkit-12-6.list",
            "/usr/local/cuda-12.6/bin/nvcc\n",
        ),
        ("/var/lib/dpkg/info/bash.list", "/usr/bin/bash\n"),
    ]);
    let s = system();
    let mut w = World::new(s.clone());
    w.facts = facts(t.path(), &no_env(), &s);
    assert!(w.facts.wsl.detected, "the kernel's osrelease says WSL");
    let d = check(&w.inputs()).expect("a Linux driver inside WSL");
    assert_eq!(d.id(), "wsl-linux-driver");
    assert_eq!(d.severity(), Severity::Error);
    let ev = d.evidence.join("\n");
    assert!(
        ev.contains(&format!(
            "{STRAY} (libcuda 550.120) is outside /usr/lib/wsl/lib"
        )),
        "{ev}"
    );
    assert!(!ev.contains("/usr/lib/wsl/lib/libcuda.so.1.1"), "{ev}");
    assert!(
        ev.contains("dkms/nvidia.ko: an NVIDIA kernel module"),
        "{ev}"
    );
    assert!(
        ev.contains("https://docs.nvidia.com/cuda/wsl-user-guide/index.html"),
        "{ev}"
    );
    let fix = d.finding.fix.clone().unwrap();
    assert!(
        fix.starts_with(
            "sudo apt-get remove --purge libnvidia-compute-550:amd64 nvidia-dkms-550   #"
        ),
        "{fix}"
    );
    assert!(
        !fix.contains("cuda-toolkit") && !fix.contains("bash"),
        "{fix}"
    );
    assert!(fix.contains("wsl --shutdown"), "{fix}");
    assert!(fix.contains("driver in Windows only"), "{fix}");
    // The whole doctor says it once.
    assert_eq!(
        w.ids().iter().filter(|i| **i == "wsl-linux-driver").count(),
        1
    );
}

#[test]
fn only_the_windows_drivers_files_is_healthy() {
    let t = tree(&[
        ("/proc/sys/kernel/osrelease", &format!("{WSL_KERNEL}\n")),
        ("/usr/lib/wsl/lib/libcuda.so.1.1", ""),
        ("/usr/lib/wsl/lib/libnvidia-ml.so.1", ""),
    ]);
    let s = system();
    let mut w = World::new(s.clone());
    w.facts = facts(t.path(), &no_env(), &s);
    // The picture's driver is Windows' (nvidia-smi answers through /usr/lib/wsl/lib); no module
    // of a Linux driver is loaded inside WSL.
    w.facts.proc_driver_present = false;
    assert!(w.facts.wsl.detected);
    assert_eq!(check(&w.inputs()), None);
    assert!(!w.ids().contains(&"wsl-linux-driver"));
}

#[test]
fn outside_wsl_a_linux_driver_is_no_wsl_finding_and_nothing_more_is_read() {
    let t = tree(&[
        ("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n"),
        (STRAY, ""),
        (
            "/var/lib/dpkg/info/libnvidia-compute-550:amd64.list",
            &format!("{STRAY}\n"),
        ),
    ]);
    let s = h200();
    // WSL_DISTRO_NAME counts on the live machine only: a capture's is not this shell's.
    let process = Process::with_vars([("WSL_DISTRO_NAME", "Ubuntu")], "/");
    let mut w = World::new(s.clone());
    w.facts = facts(t.path(), &process, &s);
    assert_eq!(w.facts.wsl, WslFacts::default());
    assert_eq!(check(&w.inputs()), None);
}

/// detect's /proc/version alone is enough, and a loaded module or a stray library is found
/// without any dpkg list: the fix then falls back to the driver's package patterns and NVIDIA's
/// .run uninstaller.
#[test]
fn wsl_by_proc_version_and_a_driver_no_package_owns() {
    let mut s = h200();
    s.os.wsl = true;
    let mut w = World::new(s);
    w.facts = Facts {
        driver_libraries: vec![DriverLibrary {
            path: PathBuf::from("/usr/lib/wsl/lib/libnvidia-ml.so.1.0"),
            name: "libnvidia-ml",
            version: "1.0".into(),
            modified: None,
        }],
        ..Facts::default()
    };
    assert_eq!(check(&w.inputs()), None);
    w.facts.driver_libraries.push(DriverLibrary {
        path: PathBuf::from("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05"),
        name: "libnvidia-ml",
        version: "580.95.05".into(),
        modified: None,
    });
    let d = check(&w.inputs()).expect("a stray library");
    let fix = d.finding.fix.unwrap();
    assert!(
        fix.contains("'^libnvidia-.*'") && fix.contains("nvidia-uninstall"),
        "{fix}"
    );
}
