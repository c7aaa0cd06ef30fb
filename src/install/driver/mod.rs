//! The driver step of `cudaup install`: turns the plan's driver component into the commands that
//! install it on this machine, and runs them through a [`Runner`].
//!
//! [`prepare`] is pure: it reads the System, the plan's component, the catalog and a few files
//! (through a [`Root`]) and returns a [`DriverStep`] — notices to print before anything happens,
//! the commands (argv lists, every privileged one through `sudo`) and whether a reboot follows.
//! `--dry-run` prints the step and stops. [`execute`] runs it, echoing `$ command` before each
//! and stopping at the first failure. After a successful install the caller writes the reboot
//! marker ([`write_reboot_marker`]) so that the next run can tell the reboot happened.
//!
//! Per distro family (the catalog's package row for os-release `ID`, else for `ID_LIKE`):
//! - Ubuntu / Debian: the plan's apt commands, with `linux-headers-<kernel>` and `dkms` installed
//!   after `apt-get update`; Debian also gets `contrib non-free non-free-firmware` enabled and
//!   `firmware-misc-nonfree`.
//! - RHEL and rebuilds, Fedora: the plan's dnf commands, with `kernel-devel-<kernel>` and
//!   `kernel-headers`; EPEL (for dkms) on RHEL rebuilds.
//! - Anything else: NVIDIA's runfile — cudaup stops and says which file to download and what
//!   to run, since the catalog has no sha256 to verify the executable with.
//!
//! Packages that come from a repository that is not configured (NVIDIA's CUDA repository, RPM
//! Fusion, EPEL on RHEL itself) stop the step with the exact commands to add it.

mod distro;
mod execute;
/// POSIX shell quoting, for commands cudaup prints for the user to run.
pub(crate) use execute::quote as shell_quote;
mod marker;
mod nouveau;
mod secure_boot;
mod sources;
#[cfg(test)]
mod tests;

use std::path::Path;

use crate::catalog::Catalog;
use crate::detect::Root;
use crate::model::plan::{Action, Component};
use crate::model::system::{KernelModule, OsFamily, System};
use crate::model::version::Version;

pub use distro::Family;
pub use execute::{execute, shell_line, Executed, COMMAND_TIMEOUT};
pub use marker::{
    clear_if_rebooted, read_marker, reboot_pending, write_reboot_marker, Marker, BOOT_ID_PATH,
    MARKER_FILE,
};

/// What the driver step will do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverStep {
    /// Lines to print before anything is installed: Secure Boot and MOK enrolment, nouveau,
    /// repositories enabled, what the Windows installer needs.
    pub notices: Vec<String>,
    /// The commands, in order, as argv lists (`["sudo", "apt-get", "install", "-y", …]`).
    pub commands: Vec<Vec<String>>,
    /// Whether the machine must reboot afterwards for the new driver to load.
    pub reboot_required: bool,
    /// Secure Boot: the command that imports DKMS's Machine Owner Key, to run *interactively*
    /// after the install (mokutil asks for a one-time password on the terminal); `None` when
    /// Secure Boot is off or the key's path is not known for this distro.
    pub mok_import: Option<Vec<String>>,
    /// Secure Boot is on: the module's signing key must be enrolled (MOK Manager, next boot)
    /// before the driver loads, whether or not `mok_import` could name the key.
    pub mok_enrolment_needed: bool,
    /// Whether [`execute`] may run the commands (`false` for Windows: planned only).
    pub runnable: bool,
    /// The driver version installed.
    pub driver_version: Option<String>,
    /// The distro family whose packages are used; `None` when nothing is installed or on
    /// Windows.
    pub family: Option<Family>,
}

impl DriverStep {
    /// The commands as shell lines, quoted so that they can be pasted (`$ ` not included).
    pub fn shell_lines(&self) -> Vec<String> {
        self.commands.iter().map(|c| shell_line(c)).collect()
    }

    /// Whether there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }
}

/// Why the driver step cannot go on. Every message says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum DriverStepError {
    /// A Linux driver inside WSL2.
    #[error(
        "this is WSL2: the NVIDIA driver installed on Windows serves Linux here, and a Linux driver must never be installed inside WSL2 (NVIDIA's WSL guide). Install or update the driver on Windows{}, then restart WSL (`wsl --shutdown` from Windows)",
        .minimum.as_deref().map(|m| format!(" (at least the release matching {m})")).unwrap_or_default()
    )]
    Wsl {
        /// The minimum version the plan asks for, if any.
        minimum: Option<String>,
    },

    /// Nothing cudaup can install here (macOS, a manual driver on Linux…).
    #[error("{0}")]
    Unsupported(String),

    /// The plan's driver component lacks something the step needs.
    #[error("the plan's driver component is incomplete: {0}")]
    InvalidComponent(String),

    /// No distro package route: the runfile, which cudaup does not download unverified.
    #[error("{}", runfile_message(.file, .url, .steps))]
    RunfileNeeded {
        /// The runfile's name (`NVIDIA-Linux-x86_64-580.95.05.run`).
        file: String,
        /// Where NVIDIA publishes it.
        url: String,
        /// What to run, in order, once it is downloaded and checked.
        steps: Vec<String>,
    },

    /// A package repository the driver needs is not configured.
    #[error("{what} is not configured; add it and run cudaup again:\n{}", .commands.iter().map(|c| format!("  {c}")).collect::<Vec<_>>().join("\n"))]
    RepositoryMissing {
        /// Which repository, and what comes from it.
        what: String,
        /// The commands (or instructions) that add it.
        commands: Vec<String>,
    },

    /// The installed driver came from NVIDIA's runfile: distro packages would fight it.
    #[error("the installed NVIDIA driver was installed with NVIDIA's runfile ({path} exists); packages would fight it. Remove it first with `sudo {path}`, reboot, and run cudaup again")]
    RunfileDriverInstalled {
        /// The runfile's uninstaller.
        path: String,
    },

    /// Windows steps are planned, never run.
    #[error("the Windows driver step is planned only: run NVIDIA's installer yourself ({0})")]
    NotRunnable(String),

    /// A command could not be started.
    #[error("could not run `{command}`: {message}")]
    CommandStart {
        /// The command line.
        command: String,
        /// Why.
        message: String,
    },

    /// A command failed; the commands before it ran.
    #[error("`{command}` failed ({}){}", .status.map(|s| format!("exit status {s}")).unwrap_or_else(|| "killed or timed out".into()), if .output.is_empty() { String::new() } else { format!(":\n{}", .output) })]
    CommandFailed {
        /// The command line.
        command: String,
        /// Its exit status (`None`: killed or timed out).
        status: Option<i32>,
        /// The end of what it printed.
        output: String,
        /// How many commands succeeded before it.
        completed: usize,
    },

    /// Reading or writing the reboot marker failed.
    #[error("reboot marker {path}: {message}")]
    Marker {
        /// The marker file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

fn runfile_message(file: &str, url: &str, steps: &[String]) -> String {
    let mut s = format!(
        "no distro package in the catalog installs this driver here, so it takes NVIDIA's runfile {file}. \
         cudaup does not download it: the catalog has no sha256 to verify that executable with. \
         Download it from NVIDIA ({url}), check it, then run:"
    );
    for step in steps {
        s.push_str("\n  ");
        s.push_str(step);
    }
    s
}

/// Builds the driver step for `driver` (the plan's `driver` component) on this machine. Pure:
/// reads files through `root` (os-release, apt/dnf repositories, modprobe.d, DKMS's config),
/// runs nothing. An action other than install/upgrade/manual gives an empty step.
pub fn prepare(
    system: &System,
    driver: &Component,
    catalog: &Catalog,
    root: &Root,
) -> Result<DriverStep, DriverStepError> {
    if matches!(driver.action, Action::Keep | Action::Skip) {
        return Ok(DriverStep {
            runnable: true,
            ..DriverStep::default()
        });
    }
    match system.os.family {
        OsFamily::Windows => return Ok(windows_step(driver)),
        OsFamily::Macos => {
            return Err(DriverStepError::Unsupported(
                "macOS has no NVIDIA driver to install (Apple GPUs use Metal/MPS)".into(),
            ))
        }
        OsFamily::Linux => {}
    }
    if system.os.wsl {
        return Err(DriverStepError::Wsl {
            minimum: driver.version.clone(),
        });
    }
    if driver.action == Action::Manual {
        return Err(DriverStepError::Unsupported(format!(
            "the plan leaves the driver to you: {}",
            driver.reason
        )));
    }

    let version_text = driver
        .version
        .clone()
        .ok_or_else(|| DriverStepError::InvalidComponent("no version".into()))?;
    let version = Version::parse(&version_text).ok_or_else(|| {
        DriverStepError::InvalidComponent(format!("`{version_text}` is not a version"))
    })?;
    let branch = driver.branch.unwrap_or_else(|| version.major());
    let module = driver.kernel_module.ok_or_else(|| {
        DriverStepError::InvalidComponent("no kernel-module flavour (open or proprietary)".into())
    })?;

    let ids = distro::ids(system, root);
    let Some(route) = distro::route(catalog, &ids, branch, module) else {
        return Err(runfile(system, &version_text, module, root));
    };

    let uninstaller = "/usr/bin/nvidia-uninstall";
    if root.exists(uninstaller) {
        return Err(DriverStepError::RunfileDriverInstalled {
            path: uninstaller.into(),
        });
    }

    // The plan's commands come from the same catalog row when it matched os-release ID; a
    // derivative matched through ID_LIKE gets its parent's commands.
    let core: Vec<String> = if route.via_like || driver.commands.is_empty() {
        crate::resolve::driver::install_commands(
            catalog,
            Some(&route.distro),
            branch,
            &version,
            module,
        )
    } else {
        driver.commands.clone()
    };
    if core.is_empty() {
        return Err(DriverStepError::InvalidComponent(format!(
            "no install commands for {} branch {branch}",
            route.distro
        )));
    }
    let core: Vec<Vec<String>> = core.iter().map(|c| split_command(c)).collect();

    let mut step = DriverStep {
        runnable: true,
        reboot_required: true,
        driver_version: Some(version_text.clone()),
        family: Some(route.family),
        ..DriverStep::default()
    };
    if route.via_like {
        step.notices.push(format!(
            "{} is treated as {} (os-release ID_LIKE): its packages are used",
            ids.first().map(String::as_str).unwrap_or("this distro"),
            route.distro
        ));
    }

    // Repositories first: a missing one stops here, before anything is printed as planned.
    let repo = sources::repositories(system, &route, root)?;
    let secure = secure_boot::plan(system, &route, root);
    step.notices.extend(secure.notices);
    step.mok_import = secure.mok_import;
    step.mok_enrolment_needed = system.os.secure_boot == Some(true);
    step.notices.extend(repo.notices);

    let prereqs = prerequisites(system, &route, &core, root, &mut step.notices);
    let nouveau = nouveau::plan(system, route.family, root);
    step.notices.extend(nouveau.notices.iter().cloned());

    step.commands.extend(repo.commands);
    let mut rest = core.into_iter().peekable();
    // apt: the update (plan's first command) must see any newly enabled components, and the
    // prerequisites come right after it.
    if route.family.is_apt() {
        if rest.peek().is_some_and(|c| is_apt_update(c)) {
            step.commands.extend(rest.next());
        } else {
            step.commands.push(argv(&["sudo", "apt-get", "update"]));
        }
    }
    step.commands.extend(prereqs);
    step.commands.extend(rest);
    // nouveau last: a failed install leaves the machine's display driver alone.
    step.commands.extend(nouveau.commands);
    if let Some(n) = route.akmod_notice() {
        step.notices.push(n);
    }
    step.notices.push(format!(
        "after the install, reboot so that driver {version_text} loads (cudaup continues where it stopped)"
    ));
    Ok(step)
}

/// Kernel headers and DKMS (and Debian's firmware) for the running kernel.
fn prerequisites(
    system: &System,
    route: &distro::Route,
    core: &[Vec<String>],
    root: &Root,
    notices: &mut Vec<String>,
) -> Vec<Vec<String>> {
    let kernel = system.os.kernel.as_deref().filter(|k| !k.trim().is_empty());
    let headers_present = kernel.is_some_and(|k| {
        root.exists(format!("/lib/modules/{k}/build/Makefile"))
            || root.exists(format!("/usr/src/kernels/{k}/Makefile"))
    });
    if kernel.is_none() {
        notices.push(
            "the running kernel's release is unknown: make sure the headers for it are installed (the driver's kernel module is built against them)"
                .into(),
        );
    }
    let already = |pkg: &str| {
        core.iter()
            .any(|c| c.iter().skip(1).any(|a| a == pkg) && c.iter().any(|a| a == "install"))
    };
    let mut pkgs: Vec<String> = Vec::new();
    if route.family.is_apt() {
        if let Some(k) = kernel.filter(|_| !headers_present) {
            pkgs.push(format!("linux-headers-{k}"));
        }
        pkgs.push("dkms".into());
        if route.family == Family::Debian && !already("firmware-misc-nonfree") {
            pkgs.push("firmware-misc-nonfree".into());
        }
        pkgs.retain(|p| !already(p));
        if pkgs.is_empty() {
            return Vec::new();
        }
        let mut c = argv(&["sudo", "apt-get", "install", "-y"]);
        c.extend(pkgs);
        vec![c]
    } else if route.family.is_dnf() {
        if let Some(k) = kernel.filter(|_| !headers_present) {
            pkgs.push(format!("kernel-devel-{k}"));
        }
        pkgs.push("kernel-headers".into());
        let mut c = argv(&["sudo", "dnf", "install", "-y"]);
        c.extend(pkgs);
        vec![c]
    } else {
        Vec::new()
    }
}

/// The runfile route: the message that stops the step.
fn runfile(system: &System, version: &str, module: KernelModule, root: &Root) -> DriverStepError {
    let arch = system.os.arch.as_str();
    let file = format!("NVIDIA-Linux-{arch}-{version}.run");
    let url = format!("https://download.nvidia.com/XFree86/Linux-{arch}/{version}/{file}");
    let flavour = match module {
        KernelModule::Open => "open",
        KernelModule::Proprietary => "proprietary",
    };
    let mut steps = Vec::new();
    let kernel = system
        .os
        .kernel
        .clone()
        .unwrap_or_else(|| "the running kernel".into());
    steps.push(format!(
        "# install your distro's kernel headers for {kernel}, a C compiler, make and dkms"
    ));
    let n = nouveau::plan(system, Family::Other, root);
    if !n.commands.is_empty() {
        steps.push("# blacklist nouveau, rebuild the initramfs with your distro's tool, and reboot before installing:".into());
        steps.extend(n.commands.iter().map(|c| shell_line(c)));
    }
    steps.push(format!(
        "sudo sh ./{file} --silent --dkms --kernel-module-type={flavour}"
    ));
    steps.push("# then reboot".into());
    DriverStepError::RunfileNeeded { file, url, steps }
}

/// Windows: NVIDIA's installer, planned and never run.
fn windows_step(driver: &Component) -> DriverStep {
    let minimum = driver
        .version
        .as_deref()
        .map(|v| format!(" (one that runs what the plan needs: {v} or newer)"))
        .unwrap_or_default();
    DriverStep {
        notices: vec![
            format!(
                "download NVIDIA's Windows driver for your GPU{minimum} from https://www.nvidia.com/Download/index.aspx"
            ),
            "run it from an administrator prompt; `-s` installs silently and `-noreboot` leaves the reboot to you. cudaup does not run it: native Windows installs are planned only in this version".into(),
            "reboot afterwards".into(),
        ],
        commands: vec![argv(&["<installer>.exe", "-s", "-noreboot"])],
        reboot_required: true,
        mok_import: None,
        mok_enrolment_needed: false,
        runnable: false,
        driver_version: driver.version.clone(),
        family: None,
    }
}

/// Splits one of the catalog's command strings into argv. They never quote (package names,
/// flags, file names), so whitespace separates the words.
fn split_command(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_owned).collect()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

fn is_apt_update(c: &[String]) -> bool {
    let words: Vec<&str> = c.iter().map(String::as_str).collect();
    matches!(
        words.as_slice(),
        ["sudo", "apt-get", "update"] | ["sudo", "apt", "update"]
    )
}

/// A command that writes `lines` to `path` as root. The Runner gives commands no standard
/// input, so `sudo tee` cannot be fed: `sh -c` with `printf` and single-quoted lines instead.
fn write_file_command(path: &str, lines: &[String]) -> Vec<String> {
    let quoted: Vec<String> = lines.iter().map(|l| execute::single_quote(l)).collect();
    vec![
        "sudo".into(),
        "sh".into(),
        "-c".into(),
        format!(
            "printf '%s\\n' {} > {}",
            quoted.join(" "),
            execute::single_quote(path)
        ),
    ]
}

/// Used by the reboot marker and tests: the path of `$CUDAUP_HOME/reboot-pending.json`.
pub fn marker_path(home: &Path) -> std::path::PathBuf {
    home.join(MARKER_FILE)
}
