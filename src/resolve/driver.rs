//! The driver options a plan may use: the installed driver, or a branch to install. On WSL2 and
//! Windows the driver belongs to Windows: it is kept, or the user is told what to install.

use crate::catalog::{Catalog, Date, OpenModule};
use crate::model::plan::Action;
use crate::model::request::DriverPolicy;
use crate::model::system::{KernelModule, OsFamily, System};
use crate::model::version::Version;

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

pub use super::branches::{branch_problem, driver_problem, newest_of_branch};

/// What NVIDIA's open kernel module is to a GPU (drivers.toml): a floor row for the GPU itself
/// (Grace Hopper) outranks its architecture's.
pub fn open_flavour(catalog: &Catalog, t: &Target) -> Option<OpenModule> {
    let own = catalog
        .drivers
        .floor
        .iter()
        .filter(|f| f.applies(&t.name, &t.cc))
        .find_map(|f| f.open_module);
    let arch = catalog
        .drivers
        .architecture(t.architecture.as_deref().unwrap_or_default())
        .map(|a| a.open_module);
    own.or(arch)
}

/// The kernel-module flavour for the targets: open when every GPU supports it (NVIDIA's
/// recommendation from Turing on, and the only one for Blackwell); `Err` when one GPU needs open
/// and another cannot use it.
pub fn module_for(catalog: &Catalog, targets: &[Target]) -> Result<KernelModule, String> {
    let flavours: Vec<(&Target, OpenModule)> = targets
        .iter()
        .filter_map(|t| Some((t, open_flavour(catalog, t)?)))
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

/// The driver options to try, best first, and what the user should know about them.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Best first.
    pub list: Vec<DriverOption>,
    /// Why the installed driver is not among them, when it is not.
    pub notes: Vec<String>,
}

/// The driver options to try, best first, under the user's policy.
pub fn options(
    system: &System,
    catalog: &Catalog,
    targets: &[Target],
    host: Host,
    policy: &DriverPolicy,
    today: &Date,
) -> Result<Options, String> {
    let installed = system
        .driver
        .as_ref()
        .and_then(|d| Version::parse(&d.version));
    if *policy == DriverPolicy::Skip {
        // The driver is someone else's: the stack is not bounded by it, and nothing about it is
        // planned, checked or run.
        return Ok(Options {
            list: vec![DriverOption {
                version: None,
                action: Action::Skip,
                branch: None,
                module: None,
                commands: Vec::new(),
                reason: "--driver skip: cudaup neither checks nor changes the driver".to_owned(),
            }],
            notes: Vec::new(),
        });
    }
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
                    // Shown, never run: NVIDIA's installer needs the user (and an administrator).
                    // winget's community repository has no NVIDIA display driver: it is refused
                    // there as hardware-specific (microsoft/winget-pkgs#18879, #283373).
                    "install or update NVIDIA's Windows driver with NVIDIA's installer (nvidia.com/drivers, or the NVIDIA App); cudaup runs nothing for it, and winget's repository has no NVIDIA display driver".to_owned()
                },
            });
        }
        return Ok(Options {
            list: out,
            notes: Vec::new(),
        });
    }

    let keep = installed.as_ref().map(|v| DriverOption {
        version: Some(v.clone()),
        action: Action::Keep,
        branch: Some(v.major()),
        module: system.driver.as_ref().and_then(|d| d.kernel_module),
        commands: Vec::new(),
        reason: format!("the installed driver {v}"),
    });
    let keep_problem = installed
        .as_ref()
        .and_then(|v| driver_problem(catalog, targets, v));
    let module = module_for(catalog, targets);
    let install = |version: Version| -> Result<DriverOption, String> {
        let branch = version.major();
        if let Some(p) = driver_problem(catalog, targets, &version) {
            return Err(format!("driver {version}: {p}"));
        }
        let mut module = module.clone()?;
        // A GPU that may use either flavour but that this release's open module does not list
        // (Tesla T4 before 575) is driven by the proprietary one.
        if module == KernelModule::Open
            && super::branches::open_module_lacks(catalog, targets, &version)
        {
            module = KernelModule::Proprietary;
        }
        if module == KernelModule::Proprietary
            && catalog.drivers.branch(branch).is_some_and(|b| b.open_only)
        {
            return Err(format!(
                "driver {version}: branch {branch} ships only the open kernel modules, which these GPUs cannot use"
            ));
        }
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
    let installable = |any_kind: bool| {
        super::branches::install_order(catalog, targets, today, any_kind)
            .into_iter()
            .filter_map(|b| newest_of_branch(catalog, b.branch).map(|v| (b, v)))
            .filter_map(|(b, v)| {
                install(v).ok().map(|mut o| {
                    o.reason = super::branches::install_reason(catalog, targets, b, today);
                    o
                })
            })
            .collect::<Vec<_>>()
    };
    let none_fits = || {
        module
            .clone()
            .err()
            .unwrap_or_else(|| "no driver branch in the catalog supports every GPU".to_owned())
    };
    let mut notes = Vec::new();
    if let (Some(v), Some(p)) = (&installed, &keep_problem) {
        notes.push(format!(
            "the installed driver {v} cannot drive every GPU: {p}"
        ));
    }

    let list = match policy {
        DriverPolicy::Keep => match (keep, keep_problem) {
            (Some(k), None) => vec![k],
            (Some(_), Some(p)) => return Err(format!("--driver keep, but {p}")),
            (None, _) => return Err("--driver keep, but no NVIDIA driver is installed".to_owned()),
        },
        DriverPolicy::Version(v) => vec![install(v.clone())?],
        DriverPolicy::Latest => match installable(true).into_iter().next() {
            Some(o) => vec![o],
            None => return Err(none_fits()),
        },
        DriverPolicy::Skip => unreachable!("answered above"),
        DriverPolicy::Auto => {
            let mut out: Vec<DriverOption> = keep
                .into_iter()
                .filter(|_| keep_problem.is_none())
                .collect();
            out.extend(installable(false));
            if out.is_empty() {
                return Err(none_fits());
            }
            out
        }
    };
    Ok(Options { list, notes })
}

/// The host kind of a System.
pub fn host_of(system: &System) -> Host {
    match (system.os.family, system.os.wsl) {
        (OsFamily::Windows, _) => Host::Windows,
        (_, true) => Host::Wsl,
        _ => Host::Linux,
    }
}
