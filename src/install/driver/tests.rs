//! Driver-step tests: exact argv lists per distro family from System values and captured files,
//! execution through a recording Runner, and the reboot marker.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::catalog::Catalog;
use crate::model::plan::{Action, Component};
use crate::model::system::{KernelModule, Os, OsFamily, System};
use crate::world::runner::{Output, Runner};

const NOUVEAU_WRITE: &str = "printf '%s\\n' 'blacklist nouveau' 'options nouveau modeset=0' > /etc/modprobe.d/blacklist-nouveau.conf";

fn catalog() -> Catalog {
    Catalog::embedded()
}

fn system(distro: &str, version: &str, kernel: &str) -> System {
    System {
        schema_version: crate::model::system::SCHEMA_VERSION,
        os: Os {
            family: OsFamily::Linux,
            distro: Some(distro.into()),
            version: Some(version.into()),
            arch: "x86_64".into(),
            kernel: Some(kernel.into()),
            wsl: false,
            secure_boot: Some(false),
            jetson: None,
        },
        gpus: Vec::new(),
        driver: None,
        nouveau_loaded: false,
        toolkits: Vec::new(),
        cudnn: Vec::new(),
        pythons: Vec::new(),
    }
}

/// The driver component plan builds for `system` (commands from drivers.toml, as plan does).
fn driver(system: &System, version: &str, module: KernelModule) -> Component {
    let v = crate::model::version::Version::parse(version).unwrap();
    let mut c = Component::new("driver", Action::Install, Some(version.into()), "test");
    c.branch = Some(v.major());
    c.kernel_module = Some(module);
    c.commands = crate::resolve::driver::install_commands(
        &catalog(),
        system.os.distro.as_deref(),
        v.major(),
        &v,
        module,
    );
    c
}

/// A captured filesystem: files written under a temporary directory standing for `/`.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn with(self, path: &str, text: &str) -> Self {
        let host = self.dir.path().join(path.trim_start_matches('/'));
        fs_err::create_dir_all(host.parent().unwrap()).unwrap();
        fs_err::write(host, text).unwrap();
        self
    }
    fn root(&self) -> Root {
        Root::at(self.dir.path())
    }
}

fn cmds(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter()
        .map(|c| c.iter().map(|w| (*w).to_owned()).collect())
        .collect()
}

fn prep(system: &System, c: &Component, tree: &Tree) -> Result<DriverStep, DriverStepError> {
    prepare(system, c, &catalog(), &tree.root())
}

// ---- Ubuntu ------------------------------------------------------------------------------

#[test]
fn ubuntu_2404_open_with_nouveau_loaded() {
    let mut s = system("ubuntu", "24.04", "6.8.0-45-generic");
    s.nouveau_loaded = true;
    let step = prep(
        &s,
        &driver(&s, "580.95.05", KernelModule::Open),
        &Tree::new(),
    )
    .unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &["sudo", "apt-get", "update"],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "linux-headers-6.8.0-45-generic",
                "dkms"
            ],
            &["sudo", "apt-get", "install", "-y", "nvidia-driver-580-open"],
            &["sudo", "sh", "-c", NOUVEAU_WRITE],
            &["sudo", "update-initramfs", "-u"],
        ])
    );
    assert!(step.reboot_required && step.runnable);
    assert_eq!(step.family, Some(Family::Ubuntu));
    assert!(step.notices.iter().any(|n| n.contains("nouveau")));
    assert_eq!(step.mok_import, None);
    assert!(!step.mok_enrolment_needed);
    assert_eq!(
        step.shell_lines()[3],
        format!("sudo sh -c \"{NOUVEAU_WRITE}\"")
    );
}

#[test]
fn ubuntu_2204_proprietary_without_nouveau() {
    let s = system("ubuntu", "22.04", "5.15.0-119-generic");
    let step = prep(
        &s,
        &driver(&s, "580.95.05", KernelModule::Proprietary),
        &Tree::new(),
    )
    .unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &["sudo", "apt-get", "update"],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "linux-headers-5.15.0-119-generic",
                "dkms"
            ],
            &["sudo", "apt-get", "install", "-y", "nvidia-driver-580"],
        ])
    );
    assert!(!step.notices.iter().any(|n| n.contains("nouveau")));
}

#[test]
fn ubuntu_nouveau_shipped_with_the_kernel_is_blacklisted_once() {
    let s = system("ubuntu", "24.04", "6.8.0-45-generic");
    let dep = "kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst: kernel/drivers/gpu/drm/drm.ko.zst\n";
    let tree = Tree::new().with("/lib/modules/6.8.0-45-generic/modules.dep", dep);
    let c = driver(&s, "580.95.05", KernelModule::Open);
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(
        step.commands[3..],
        cmds(&[
            &["sudo", "sh", "-c", NOUVEAU_WRITE],
            &["sudo", "update-initramfs", "-u"]
        ])[..]
    );
    // Already blacklisted and not loaded: nothing to do about nouveau.
    let tree = tree.with(
        "/etc/modprobe.d/blacklist-nouveau.conf",
        "blacklist nouveau\noptions nouveau modeset=0\n",
    );
    assert_eq!(prep(&s, &c, &tree).unwrap().commands.len(), 3);
    // Blacklisted but still loaded (no reboot yet): only the initramfs.
    let mut loaded = s.clone();
    loaded.nouveau_loaded = true;
    let step = prep(&loaded, &c, &tree).unwrap();
    assert_eq!(
        step.commands.last().unwrap(),
        &cmds(&[&["sudo", "update-initramfs", "-u"]])[0]
    );
    assert_eq!(step.commands.len(), 4);
}

#[test]
fn ubuntu_headers_already_installed_are_not_asked_for() {
    let s = system("ubuntu", "24.04", "6.8.0-45-generic");
    let tree = Tree::new().with("/lib/modules/6.8.0-45-generic/build/Makefile", "");
    let step = prep(&s, &driver(&s, "580.95.05", KernelModule::Open), &tree).unwrap();
    assert_eq!(
        step.commands[1],
        cmds(&[&["sudo", "apt-get", "install", "-y", "dkms"]])[0]
    );
}

#[test]
fn ubuntu_secure_boot_explains_mok_before_installing() {
    let mut s = system("ubuntu", "24.04", "6.8.0-45-generic");
    s.os.secure_boot = Some(true);
    let c = driver(&s, "580.95.05", KernelModule::Open);
    let step = prep(&s, &c, &Tree::new()).unwrap();
    assert_eq!(
        step.mok_import,
        Some(cmds(&[&["sudo", "mokutil", "--import", "/var/lib/dkms/mok.pub"]])[0].clone())
    );
    let text = step.notices.join("\n");
    assert!(step.notices[0].starts_with("Secure Boot is on"), "{text}");
    assert!(text.contains("Machine Owner Key"));
    assert!(text.contains("sudo mokutil --import /var/lib/dkms/mok.pub"));
    assert!(text.contains("one-time password"));
    assert!(text.contains("\"Enroll MOK\" → \"Continue\""));
    // The commands themselves do not change: mokutil is interactive and run by the caller.
    assert_eq!(step.commands.len(), 3);

    // DKMS configured with another key: that one.
    let tree = Tree::new().with(
        "/etc/dkms/framework.conf",
        "# mok_certificate=/nope\nmok_certificate=\"/var/lib/shim-signed/mok/MOK.der\"\n",
    );
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(
        step.mok_import.unwrap()[3],
        "/var/lib/shim-signed/mok/MOK.der"
    );
}

#[test]
fn ubuntu_branch_from_nvidia_repo_needs_the_repo() {
    let s = system("ubuntu", "24.04", "6.8.0-45-generic");
    let c = driver(&s, "595.58.03", KernelModule::Open);
    let err = prep(&s, &c, &Tree::new()).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, DriverStepError::RepositoryMissing { .. }),
        "{msg}"
    );
    assert!(msg.contains("https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/cuda-keyring_1.1-1_all.deb"), "{msg}");
    assert!(msg.contains("nvidia-driver-pinning-595"), "{msg}");

    let tree = Tree::new().with(
        "/etc/apt/sources.list.d/cuda-ubuntu2404-x86_64.list",
        "deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/ /\n",
    );
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &["sudo", "apt-get", "update"],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "linux-headers-6.8.0-45-generic",
                "dkms"
            ],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "nvidia-driver-pinning-595"
            ],
            &["sudo", "apt-get", "install", "-y", "nvidia-open"],
        ])
    );
}

#[test]
fn derivative_uses_its_id_like_parent() {
    let s = system("linuxmint", "22", "6.8.0-45-generic");
    let c = driver(&s, "580.95.05", KernelModule::Open);
    // plan, which reads only ID, chose the runfile for Linux Mint.
    assert!(c.commands[0].contains(".run"));
    let tree = Tree::new().with(
        "/etc/os-release",
        "NAME=\"Linux Mint\"\nID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"22\"\n",
    );
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(step.family, Some(Family::Ubuntu));
    assert_eq!(
        step.commands[2],
        cmds(&[&["sudo", "apt-get", "install", "-y", "nvidia-driver-580-open"]])[0]
    );
    assert!(step.notices[0].contains("linuxmint is treated as ubuntu"));
    // Without ID_LIKE there is no source for the mapping: the runfile.
    assert!(matches!(
        prep(&s, &c, &Tree::new()),
        Err(DriverStepError::RunfileNeeded { .. })
    ));
}

// ---- Debian ------------------------------------------------------------------------------

const BOOKWORM: &str = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_ID=\"12\"\nVERSION_CODENAME=bookworm\nID=debian\n";

#[test]
fn debian_12_without_non_free_gets_it_enabled() {
    let s = system("debian", "12", "6.1.0-18-amd64");
    let tree = Tree::new().with("/etc/os-release", BOOKWORM).with(
        "/etc/apt/sources.list",
        "deb http://deb.debian.org/debian bookworm main\ndeb http://deb.debian.org/debian bookworm-updates main\ndeb http://security.debian.org/debian-security bookworm-security main\n",
    );
    let step = prep(
        &s,
        &driver(&s, "535.261.03", KernelModule::Proprietary),
        &tree,
    )
    .unwrap();
    let write = "printf '%s\\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' 'Components: contrib non-free non-free-firmware' > /etc/apt/sources.list.d/cudaup-debian-non-free.sources";
    assert_eq!(
        step.commands,
        cmds(&[
            &["sudo", "sh", "-c", write],
            &["sudo", "apt-get", "update"],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "linux-headers-6.1.0-18-amd64",
                "dkms"
            ],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "nvidia-driver",
                "firmware-misc-nonfree"
            ],
            &["sudo", "apt-get", "install", "-y", "nvidia-kernel-dkms"],
        ])
    );
    assert_eq!(step.family, Some(Family::Debian));
    assert!(step
        .notices
        .iter()
        .any(|n| n.contains("contrib, non-free, non-free-firmware component(s) are not enabled")));
}

#[test]
fn debian_12_with_non_free_changes_no_sources() {
    let s = system("debian", "12", "6.1.0-18-amd64");
    let tree = Tree::new().with("/etc/os-release", BOOKWORM).with(
        "/etc/apt/sources.list",
        "deb http://deb.debian.org/debian bookworm main contrib non-free non-free-firmware\n",
    );
    let step = prep(&s, &driver(&s, "535.261.03", KernelModule::Open), &tree).unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &["sudo", "apt-get", "update"],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "linux-headers-6.1.0-18-amd64",
                "dkms"
            ],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "nvidia-driver",
                "firmware-misc-nonfree"
            ],
            &[
                "sudo",
                "apt-get",
                "install",
                "-y",
                "nvidia-open-kernel-dkms"
            ],
        ])
    );
}

#[test]
fn debian_deb822_sources_keep_signed_by() {
    let mut s = system("debian", "13", "6.12.48+deb13-amd64");
    s.nouveau_loaded = true;
    let tree = Tree::new()
        .with("/etc/os-release", "ID=debian\nVERSION_ID=\"13\"\nVERSION_CODENAME=trixie\n")
        .with(
            "/etc/apt/sources.list.d/debian.sources",
            "Types: deb\nURIs: https://deb.debian.org/debian\nSuites: trixie trixie-updates\nComponents: main non-free-firmware\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n",
        );
    let step = prep(&s, &driver(&s, "550.163.01", KernelModule::Open), &tree).unwrap();
    let write = "printf '%s\\n' 'Types: deb' 'URIs: https://deb.debian.org/debian' 'Suites: trixie' 'Components: contrib non-free' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' > /etc/apt/sources.list.d/cudaup-debian-non-free.sources";
    assert_eq!(step.commands[0], cmds(&[&["sudo", "sh", "-c", write]])[0]);
    assert_eq!(
        step.commands[5..],
        cmds(&[
            &["sudo", "sh", "-c", NOUVEAU_WRITE],
            &["sudo", "update-initramfs", "-u"]
        ])[..]
    );
}

// ---- RHEL family and Fedora --------------------------------------------------------------

const CUDA_RHEL9_REPO: &str = "[cuda-rhel9-x86_64]\nname=cuda-rhel9-x86_64\nbaseurl=https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64\nenabled=1\ngpgcheck=1\n";
const EPEL_REPO: &str = "[epel]\nname=Extra Packages for Enterprise Linux 9 - $basearch\nmetalink=https://mirrors.fedoraproject.org/metalink?repo=epel-9&arch=$basearch\nenabled=1\n";

#[test]
fn rocky_9_dnf_module_with_headers_and_nouveau() {
    let mut s = system("rocky", "9.4", "5.14.0-427.13.1.el9_4.x86_64");
    s.nouveau_loaded = true;
    let tree = Tree::new()
        .with("/etc/yum.repos.d/cuda-rhel9.repo", CUDA_RHEL9_REPO)
        .with("/etc/yum.repos.d/epel.repo", EPEL_REPO);
    let step = prep(&s, &driver(&s, "580.95.05", KernelModule::Open), &tree).unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &[
                "sudo",
                "dnf",
                "install",
                "-y",
                "kernel-devel-5.14.0-427.13.1.el9_4.x86_64",
                "kernel-headers"
            ],
            &[
                "sudo",
                "dnf",
                "module",
                "install",
                "-y",
                "nvidia-driver:580-open"
            ],
            &["sudo", "sh", "-c", NOUVEAU_WRITE],
            &["sudo", "dracut", "--force"],
        ])
    );
    assert_eq!(step.family, Some(Family::Rhel));
}

#[test]
fn rocky_9_without_epel_enables_it_and_without_nvidia_repo_stops() {
    let s = system("rocky", "9.4", "5.14.0-427.13.1.el9_4.x86_64");
    let c = driver(&s, "580.95.05", KernelModule::Proprietary);
    let tree = Tree::new().with("/etc/yum.repos.d/cuda-rhel9.repo", CUDA_RHEL9_REPO);
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(
        step.commands[..2],
        cmds(&[
            &["sudo", "dnf", "install", "-y", "epel-release"],
            &[
                "sudo",
                "dnf",
                "install",
                "-y",
                "kernel-devel-5.14.0-427.13.1.el9_4.x86_64",
                "kernel-headers"
            ],
        ])[..]
    );
    assert_eq!(
        step.commands[2],
        cmds(&[&[
            "sudo",
            "dnf",
            "module",
            "install",
            "-y",
            "nvidia-driver:580-dkms"
        ]])[0]
    );

    let err = prep(&s, &c, &Tree::new()).unwrap_err().to_string();
    assert!(err.contains("sudo dnf config-manager --add-repo https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/cuda-rhel9.repo"), "{err}");
}

#[test]
fn fedora_40_nvidia_open_from_nvidia_repo() {
    let s = system("fedora", "40", "6.8.5-301.fc40.x86_64");
    let c = driver(&s, "580.95.05", KernelModule::Open);
    let tree = Tree::new().with(
        "/etc/yum.repos.d/cuda-fedora40.repo",
        "[cuda-fedora40-x86_64]\nbaseurl=https://developer.download.nvidia.com/compute/cuda/repos/fedora40/x86_64\n",
    );
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &[
                "sudo",
                "dnf",
                "install",
                "-y",
                "kernel-devel-6.8.5-301.fc40.x86_64",
                "kernel-headers"
            ],
            &["sudo", "dnf", "install", "-y", "nvidia-open"],
        ])
    );
    assert_eq!(step.family, Some(Family::Fedora));
    let err = prep(&s, &c, &Tree::new()).unwrap_err().to_string();
    assert!(err.contains("https://developer.download.nvidia.com/compute/cuda/repos/fedora40/x86_64/cuda-fedora40.repo"), "{err}");
}

#[test]
fn fedora_kepler_takes_rpm_fusion_akmod() {
    let mut s = system("fedora", "40", "6.8.5-301.fc40.x86_64");
    s.os.secure_boot = Some(true);
    let c = driver(&s, "470.256.02", KernelModule::Proprietary);
    let tree = Tree::new().with(
        "/etc/yum.repos.d/rpmfusion-nonfree.repo",
        "[rpmfusion-nonfree]\nname=RPM Fusion for Fedora $releasever - Nonfree\n",
    );
    let step = prep(&s, &c, &tree).unwrap();
    assert_eq!(
        step.commands,
        cmds(&[
            &[
                "sudo",
                "dnf",
                "install",
                "-y",
                "kernel-devel-6.8.5-301.fc40.x86_64",
                "kernel-headers"
            ],
            &[
                "sudo",
                "dnf",
                "install",
                "-y",
                "xorg-x11-drv-nvidia-470xx-cuda"
            ],
            &["sudo", "dnf", "install", "-y", "akmod-nvidia-470xx"],
        ])
    );
    assert!(step
        .notices
        .iter()
        .any(|n| n.contains("modinfo -F version nvidia")));
    assert!(step.notices[0].contains("akmods builds"));
    assert_eq!(step.mok_import, None);
    assert!(step.mok_enrolment_needed);
    let err = prep(&s, &c, &Tree::new()).unwrap_err().to_string();
    assert!(err.contains("RPM Fusion"), "{err}");
}

// ---- Other Linux, WSL, Windows, nothing to do ---------------------------------------------

#[test]
fn arch_linux_stops_at_the_runfile_with_what_to_do() {
    let mut s = system("arch", "rolling", "6.10.10-arch1-1");
    s.nouveau_loaded = true;
    let err = prep(
        &s,
        &driver(&s, "580.95.05", KernelModule::Open),
        &Tree::new(),
    )
    .unwrap_err();
    let DriverStepError::RunfileNeeded { file, url, steps } = &err else {
        panic!("{err}");
    };
    assert_eq!(file, "NVIDIA-Linux-x86_64-580.95.05.run");
    assert_eq!(
        url,
        "https://download.nvidia.com/XFree86/Linux-x86_64/580.95.05/NVIDIA-Linux-x86_64-580.95.05.run"
    );
    assert!(steps.contains(
        &"sudo sh ./NVIDIA-Linux-x86_64-580.95.05.run --silent --dkms --kernel-module-type=open"
            .to_owned()
    ));
    assert!(steps.iter().any(|s| s.contains("blacklist nouveau")));
    let msg = err.to_string();
    assert!(msg.contains("no sha256"), "{msg}");
}

#[test]
fn wsl_is_refused() {
    let mut s = system("ubuntu", "24.04", "6.6.87.2-microsoft-standard-WSL2");
    s.os.wsl = true;
    let mut c = Component::new("driver", Action::Manual, Some("580.65".into()), "wsl");
    let err = prep(&s, &c, &Tree::new()).unwrap_err().to_string();
    assert!(err.contains("WSL2") && err.contains("Windows"), "{err}");
    assert!(err.contains("580.65"), "{err}");
    c.action = Action::Install;
    assert!(matches!(
        prep(&s, &c, &Tree::new()),
        Err(DriverStepError::Wsl { .. })
    ));
    c.action = Action::Keep;
    assert!(prep(&s, &c, &Tree::new()).unwrap().is_empty());
}

#[test]
fn windows_is_planned_only() {
    let mut s = system("windows", "11", "10.0.26100");
    s.os.family = OsFamily::Windows;
    s.os.distro = None;
    let c = Component::new("driver", Action::Manual, Some("580.65".into()), "windows");
    let step = prep(&s, &c, &Tree::new()).unwrap();
    assert_eq!(
        step.commands,
        cmds(&[&["<installer>.exe", "-s", "-noreboot"]])
    );
    assert_eq!(step.shell_lines(), ["<installer>.exe -s -noreboot"]);
    assert!(!step.runnable && step.reboot_required);
    let runner = Recorder::failing_at(None);
    let err = execute(&step, &runner, &mut |_| {}).unwrap_err();
    assert!(matches!(err, DriverStepError::NotRunnable(_)));
    assert!(runner.calls().is_empty());
}

#[test]
fn keep_and_skip_do_nothing() {
    let s = system("ubuntu", "24.04", "6.8.0-45-generic");
    for action in [Action::Keep, Action::Skip] {
        let c = Component::new("driver", action, Some("580.95.05".into()), "kept");
        let step = prep(&s, &c, &Tree::new()).unwrap();
        assert!(step.is_empty() && !step.reboot_required);
    }
}

#[test]
fn a_runfile_installed_driver_must_go_first() {
    let s = system("ubuntu", "24.04", "6.8.0-45-generic");
    let tree = Tree::new().with("/usr/bin/nvidia-uninstall", "#!/bin/sh\n");
    let err = prep(&s, &driver(&s, "580.95.05", KernelModule::Open), &tree).unwrap_err();
    assert!(
        err.to_string().contains("sudo /usr/bin/nvidia-uninstall"),
        "{err}"
    );
}

// ---- execute -----------------------------------------------------------------------------

/// Records every call; the Nth (1-based) fails with exit status 100.
struct Recorder {
    fail_at: Option<usize>,
    calls: Mutex<Vec<Vec<String>>>,
}

impl Recorder {
    fn failing_at(fail_at: Option<usize>) -> Self {
        Self {
            fail_at,
            calls: Mutex::new(Vec::new()),
        }
    }
    fn calls(&self) -> Vec<Vec<String>> {
        self.calls.lock().unwrap().clone()
    }
}

impl Runner for Recorder {
    fn run(
        &self,
        program: &Path,
        args: &[&str],
        _timeout: Duration,
    ) -> Result<Output, crate::world::runner::RunError> {
        let mut calls = self.calls.lock().unwrap();
        let mut argv = vec![program.display().to_string()];
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        calls.push(argv);
        if Some(calls.len()) == self.fail_at {
            return Ok(Output {
                status: Some(100),
                stdout: "Reading package lists...\n".into(),
                stderr: "E: Unable to locate package linux-headers-6.8.0-45-generic\n".into(),
            });
        }
        Ok(Output {
            status: Some(0),
            stdout: format!("ok {}\n", calls.len()),
            stderr: String::new(),
        })
    }
}

fn ubuntu_step() -> DriverStep {
    let mut s = system("ubuntu", "24.04", "6.8.0-45-generic");
    s.nouveau_loaded = true;
    s.os.secure_boot = Some(true);
    prep(
        &s,
        &driver(&s, "580.95.05", KernelModule::Open),
        &Tree::new(),
    )
    .unwrap()
}

#[test]
fn execute_runs_every_command_and_echoes_it_first() {
    let step = ubuntu_step();
    let runner = Recorder::failing_at(None);
    let mut seen = Vec::new();
    let done = execute(&step, &runner, &mut |l| seen.push(l.to_owned())).unwrap();
    assert_eq!(runner.calls(), step.commands);
    assert_eq!(done.commands_run, step.commands);
    assert!(done.reboot_required && done.mok_enrolment_needed);
    assert_eq!(seen[0], "$ sudo apt-get update");
    assert_eq!(seen[1], "ok 1");
    assert_eq!(
        seen[2],
        "$ sudo apt-get install -y linux-headers-6.8.0-45-generic dkms"
    );
    assert_eq!(seen.len(), 2 * step.commands.len());
}

#[test]
fn execute_stops_at_the_first_failure_with_its_output() {
    let step = ubuntu_step();
    let runner = Recorder::failing_at(Some(2));
    let mut seen = Vec::new();
    let err = execute(&step, &runner, &mut |l| seen.push(l.to_owned())).unwrap_err();
    assert_eq!(runner.calls(), step.commands[..2]);
    let DriverStepError::CommandFailed {
        command,
        status,
        output,
        completed,
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!(
        command,
        "sudo apt-get install -y linux-headers-6.8.0-45-generic dkms"
    );
    assert_eq!(*status, Some(100));
    assert_eq!(*completed, 1);
    assert!(output.contains("E: Unable to locate package"));
    assert!(err.to_string().contains("exit status 100"));
    assert!(!seen.iter().any(|l| l.contains("nvidia-driver-580-open")));
}

#[test]
fn dry_run_is_prepare_alone() {
    // prepare runs nothing; the lines are what --dry-run prints.
    let step = ubuntu_step();
    assert_eq!(
        step.shell_lines(),
        [
            "sudo apt-get update".to_owned(),
            "sudo apt-get install -y linux-headers-6.8.0-45-generic dkms".into(),
            "sudo apt-get install -y nvidia-driver-580-open".into(),
            format!("sudo sh -c \"{NOUVEAU_WRITE}\""),
            "sudo update-initramfs -u".into(),
        ]
    );
}

#[test]
fn quoting() {
    use super::execute::quote;
    assert_eq!(quote("nvidia-driver:580-open"), "nvidia-driver:580-open");
    assert_eq!(quote("a b"), "\"a b\"");
    assert_eq!(quote("it's $x"), "'it'\\''s $x'");
    assert_eq!(quote(""), "\"\"");
}

// ---- reboot marker -----------------------------------------------------------------------

#[test]
fn reboot_marker_round_trip() {
    let home = tempfile::tempdir().unwrap();
    let before = Tree::new().with(BOOT_ID_PATH, "1f6a0d4e-0000-4000-8000-000000000001\n");
    assert_eq!(reboot_pending(home.path(), &before.root()), None);
    assert!(!clear_if_rebooted(home.path(), &before.root()).unwrap());

    let m =
        write_reboot_marker(home.path(), &before.root(), "580.95.05", "driver installed").unwrap();
    assert_eq!(
        m.since.as_deref(),
        Some("1f6a0d4e-0000-4000-8000-000000000001")
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(home.path().join(MARKER_FILE)).unwrap())
            .unwrap();
    assert_eq!(json["driver"], "580.95.05");
    assert_eq!(json["since"], "1f6a0d4e-0000-4000-8000-000000000001");

    // Same boot: still pending, not cleared.
    assert_eq!(reboot_pending(home.path(), &before.root()), Some(m.clone()));
    assert!(!clear_if_rebooted(home.path(), &before.root()).unwrap());
    assert!(home.path().join(MARKER_FILE).exists());

    // A new boot id: rebooted, cleared once.
    let after = Tree::new().with(BOOT_ID_PATH, "9b2c0d4e-0000-4000-8000-000000000002\n");
    assert_eq!(reboot_pending(home.path(), &after.root()), None);
    assert!(clear_if_rebooted(home.path(), &after.root()).unwrap());
    assert!(!home.path().join(MARKER_FILE).exists());
    assert!(!clear_if_rebooted(home.path(), &after.root()).unwrap());
}

#[test]
fn reboot_marker_without_a_boot_id_stays_pending() {
    let home = tempfile::tempdir().unwrap();
    let none = Tree::new();
    let m =
        write_reboot_marker(home.path(), &none.root(), "580.95.05", "driver installed").unwrap();
    assert_eq!(m.since, None);
    let later = Tree::new().with(BOOT_ID_PATH, "9b2c0d4e\n");
    assert_eq!(reboot_pending(home.path(), &later.root()), Some(m));
    assert!(!clear_if_rebooted(home.path(), &later.root()).unwrap());
}
