//! The driver options a plan may use: the installed driver, or a branch to install. On WSL2 and
//! Windows the driver belongs to Windows: it is kept, or the user is told what to install.

use crate::catalog::{Catalog, OpenModule};
use crate::plan::Action;
use crate::request::DriverPolicy;
use crate::system::{KernelModule, OsFamily, System};
use crate::version::Version;

use super::Target;

/// Where the driver comes from on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// A Linux machine whose driver cudaup may install.
    Linux,
    /// Linux under WSL2: the Windows driver serves it; never install a Linux driver.
    Wsl,
    /// Native Windows.
    Windows,
}

impl Host {
    /// Whether driver floors are Windows driver versions here.
    pub fn windows_driver(self) -> bool {
        matches!(self, Host::Wsl | Host::Windows)
    }
}

/// One driver a stack may be planned against.
#[derive(Debug, Clone)]
pub struct DriverOption {
    /// The version in effect. `None` for "whatever Windows driver the user installs": the
    /// plan then states the minimum.
    pub version: Option<Version>,
    /// Keep, install, upgrade or manual.
    pub action: Action,
    /// The branch, for installs.
    pub branch: Option<u32>,
    /// The kernel-module flavour to install.
    pub module: Option<KernelModule>,
    /// The commands the install step would run.
    pub commands: Vec<String>,
    /// Why this option.
    pub reason: String,
}

/// The newest driver release of a branch that cudaup knows: the driver the newest CUDA release
/// of that branch ships with (cuda.toml).
pub fn newest_of_branch(catalog: &Catalog, branch: u32) -> Option<Version> {
    catalog
        .cuda
        .release
        .iter()
        .map(|r| &r.driver_linux)
        .filter(|d| d.major() == branch)
        .max()
        .cloned()
}

/// Why `branch` cannot drive one of the targets, if it cannot.
pub fn branch_problem(catalog: &Catalog, targets: &[Target], branch: u32) -> Option<String> {
    targets.iter().find_map(|t| {
        let arch = catalog.drivers.architecture(t.architecture.as_deref()?)?;
        if let Some(last) = arch.last_branch.filter(|l| branch > *l) {
            return Some(format!(
                "{} ({}) is supported up to branch {last} only",
                t.name, arch.name
            ));
        }
        if let Some(min) = arch.min_branch.filter(|m| branch < *m) {
            return Some(format!(
                "{} ({}) needs branch {min} or newer",
                t.name, arch.name
            ));
        }
        None
    })
}

/// The kernel-module flavour for the targets: open when every GPU supports it (NVIDIA's
/// recommendation from Turing on, and the only one for Blackwell); `Err` when one GPU needs open
/// and another cannot use it.
pub fn module_for(catalog: &Catalog, targets: &[Target]) -> Result<KernelModule, String> {
    let flavours: Vec<(&Target, OpenModule)> = targets
        .iter()
        .filter_map(|t| {
            let a = catalog.drivers.architecture(t.architecture.as_deref()?)?;
            Some((t, a.open_module))
        })
        .collect();
    let required = flavours.iter().find(|(_, o)| *o == OpenModule::Required);
    let unsupported = flavours.iter().find(|(_, o)| *o == OpenModule::Unsupported);
    match (required, unsupported) {
        (Some((a, _)), Some((b, _))) => Err(format!(
            "{} needs NVIDIA's open kernel module and {} cannot use it: no single driver serves both",
            a.name, b.name
        )),
        (_, Some(_)) => Ok(KernelModule::Proprietary),
        _ => Ok(KernelModule::Open),
    }
}

/// The commands that install `version` of `branch` on this distro, from drivers.toml.
pub fn install_commands(
    catalog: &Catalog,
    distro: Option<&str>,
    branch: u32,
    version: &Version,
    module: KernelModule,
) -> Vec<String> {
    let distros: Vec<&str> = distro.into_iter().collect();
    let pick = |rule: &crate::catalog::PackageRule| match module {
        KernelModule::Open => rule.open.clone(),
        KernelModule::Proprietary => rule.proprietary.clone(),
    };
    let rule = catalog
        .drivers
        .package_rule(&distros, branch)
        .filter(|r| pick(r).is_some())
        .or_else(|| catalog.drivers.package_rule(&["*"], branch));
    let Some(rule) = rule else {
        return Vec::new();
    };
    let fill = |s: &str| {
        s.replace("{branch}", &branch.to_string())
            .replace("{version}", &version.to_string())
    };
    let Some(package) = pick(rule).map(|p| fill(&p)) else {
        return Vec::new();
    };
    let extra: Vec<String> = rule.extra.iter().map(|e| fill(e)).collect();
    let mut out = Vec::new();
    match rule.method.as_str() {
        "apt" => {
            out.push("sudo apt-get update".to_owned());
            // NVIDIA's pinning packages must be in place before the driver itself.
            if !extra.is_empty() {
                out.push(format!("sudo apt-get install -y {}", extra.join(" ")));
            }
            out.push(format!("sudo apt-get install -y {package}"));
        }
        "dnf" => {
            if !extra.is_empty() {
                out.push(format!("sudo dnf install -y {}", extra.join(" ")));
            }
            out.push(format!("sudo dnf install -y {package}"));
        }
        "dnf-module" => out.push(format!("sudo dnf module install -y {package}")),
        "pacman" => out.push(format!("sudo pacman -S --needed --noconfirm {package}")),
        "runfile" => {
            let flavour = match module {
                KernelModule::Open => "open",
                KernelModule::Proprietary => "proprietary",
            };
            out.push(format!(
                "sudo sh {package} --silent --dkms --kernel-module-type={flavour}"
            ));
        }
        _ => {}
    }
    out
}

/// The driver options to try, best first, under the user's policy.
pub fn options(
    system: &System,
    catalog: &Catalog,
    targets: &[Target],
    host: Host,
    policy: &DriverPolicy,
) -> Result<Vec<DriverOption>, String> {
    let installed = system
        .driver
        .as_ref()
        .and_then(|d| Version::parse(&d.version));
    if host.windows_driver() {
        let mut out = Vec::new();
        // A Windows driver below a GPU's first branch cannot drive it (Blackwell needs R570).
        if let Some(v) = installed
            .as_ref()
            .filter(|v| branch_problem(catalog, targets, v.major()).is_none())
            .filter(|_| *policy != DriverPolicy::Latest)
        {
            out.push(DriverOption {
                version: Some(v.clone()),
                action: Action::Keep,
                branch: None,
                module: None,
                commands: Vec::new(),
                reason: format!("the Windows driver {v} serves this system"),
            });
        }
        if *policy != DriverPolicy::Keep || installed.is_none() {
            out.push(DriverOption {
                version: None,
                action: Action::Manual,
                branch: None,
                module: None,
                commands: Vec::new(),
                reason: if host == Host::Wsl {
                    "under WSL2 the Windows driver serves Linux: install or update it on Windows (never a Linux driver inside WSL2)".to_owned()
                } else {
                    "install or update NVIDIA's Windows driver (the installer from nvidia.com)".to_owned()
                },
            });
        }
        return Ok(out);
    }

    let keep = installed.as_ref().map(|v| DriverOption {
        version: Some(v.clone()),
        action: Action::Keep,
        branch: Some(v.major()),
        module: system.driver.as_ref().and_then(|d| d.kernel_module),
        commands: Vec::new(),
        reason: format!("the installed driver {v}"),
    });
    let keep_ok =
        |o: &DriverOption| branch_problem(catalog, targets, o.branch.unwrap_or(0)).is_none();
    let module = module_for(catalog, targets);
    let install = |version: Version| -> Result<DriverOption, String> {
        let branch = version.major();
        if let Some(p) = branch_problem(catalog, targets, branch) {
            return Err(format!("driver {version}: {p}"));
        }
        let module = module.clone()?;
        let commands = install_commands(
            catalog,
            system.os.distro.as_deref(),
            branch,
            &version,
            module,
        );
        let action = match &installed {
            None => Action::Install,
            Some(i) if *i == version => Action::Keep,
            Some(_) => Action::Upgrade,
        };
        Ok(DriverOption {
            reason: format!("branch {branch} ({version})"),
            version: Some(version),
            action,
            branch: Some(branch),
            module: Some(module),
            commands,
        })
    };
    // Newest first; by default production and LTS branches before new-feature ones, which
    // NVIDIA supports for a shorter time (`--driver latest` takes the newest of any kind).
    let stable = |b: &crate::catalog::Branch| matches!(b.kind.as_str(), "production" | "lts");
    let mut branches: Vec<&crate::catalog::Branch> = catalog.drivers.branch.iter().collect();
    branches.sort_by_key(|b| std::cmp::Reverse(b.branch));
    let installable = |prefer_stable: bool| {
        let mut order: Vec<&crate::catalog::Branch> = branches.clone();
        if prefer_stable {
            order.sort_by_key(|b| !stable(b));
        }
        order
            .iter()
            .filter_map(|b| newest_of_branch(catalog, b.branch).map(|v| (b, v)))
            .filter_map(|(b, v)| {
                install(v).ok().map(|mut o| {
                    o.reason = format!("branch {} ({})", b.branch, b.kind);
                    o
                })
            })
            .collect::<Vec<_>>()
    };

    match policy {
        DriverPolicy::Keep => match keep {
            Some(k) if keep_ok(&k) => Ok(vec![k]),
            Some(k) => Err(format!(
                "--driver keep, but {}",
                branch_problem(catalog, targets, k.branch.unwrap_or(0)).unwrap_or_default()
            )),
            None => Err("--driver keep, but no NVIDIA driver is installed".to_owned()),
        },
        DriverPolicy::Version(v) => install(v.clone()).map(|o| vec![o]),
        DriverPolicy::Latest => {
            let all = installable(false);
            match all.into_iter().next() {
                Some(o) => Ok(vec![o]),
                None => Err(module.err().unwrap_or_else(|| {
                    "no driver branch in the catalog supports every GPU".to_owned()
                })),
            }
        }
        DriverPolicy::Auto => {
            let mut out: Vec<DriverOption> = keep.into_iter().filter(keep_ok).collect();
            out.extend(installable(true));
            if out.is_empty() {
                return Err(module.err().unwrap_or_else(|| {
                    "no driver branch in the catalog supports every GPU".to_owned()
                }));
            }
            Ok(out)
        }
    }
}

/// The host kind of a System.
pub fn host_of(system: &System) -> Host {
    match (system.os.family, system.os.wsl) {
        (OsFamily::Windows, _) => Host::Windows,
        (_, true) => Host::Wsl,
        _ => Host::Linux,
    }
}
