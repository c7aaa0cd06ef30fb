//! Which distro family's packages install the driver: the catalog's package row for os-release
//! `ID`, else for each `ID_LIKE` parent in order (Linux Mint and Pop!_OS name `ubuntu` there),
//! else none (the runfile).

use crate::catalog::{Catalog, PackageRule};
use crate::detect::Root;
use crate::model::system::{KernelModule, System};

/// A distro family, as far as installing the driver goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Ubuntu and derivatives: apt, `linux-headers-<kernel>`, `update-initramfs`.
    Ubuntu,
    /// Debian: apt, contrib/non-free/non-free-firmware, `firmware-misc-nonfree`.
    Debian,
    /// RHEL, Rocky, AlmaLinux, CentOS: NVIDIA's dnf module streams, EPEL for dkms, `dracut`.
    Rhel,
    /// Fedora: NVIDIA's repository or RPM Fusion's akmods, `dracut`.
    Fedora,
    /// A package route the step knows no extras for (e.g. pacman).
    Other,
}

impl Family {
    /// Whether packages come through apt.
    pub fn is_apt(self) -> bool {
        matches!(self, Family::Ubuntu | Family::Debian)
    }

    /// Whether packages come through dnf.
    pub fn is_dnf(self) -> bool {
        matches!(self, Family::Rhel | Family::Fedora)
    }
}

/// The catalog row that installs the driver here.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// The family whose tools and extras apply.
    pub family: Family,
    /// The os-release name the row matched (`ubuntu` for Linux Mint).
    pub distro: String,
    /// Matched through `ID_LIKE` rather than `ID`.
    pub via_like: bool,
    /// The driver package, `{branch}`/`{version}` filled in.
    pub package: String,
    /// The row's further packages, filled in.
    pub extra: Vec<String>,
}

impl Route {
    /// RPM Fusion's akmod packages build the module in the background after the install.
    pub fn is_akmod(&self) -> bool {
        self.package.starts_with("akmod-")
    }

    /// What to wait for before rebooting with akmods.
    pub fn akmod_notice(&self) -> Option<String> {
        self.is_akmod().then(|| {
            "akmods builds the kernel module in the background after the install: wait until `modinfo -F version nvidia` prints the driver's version before rebooting".to_owned()
        })
    }
}

/// os-release `ID` (from the System, else the file) followed by its `ID_LIKE` entries.
pub(crate) fn ids(system: &System, root: &Root) -> Vec<String> {
    let text = root
        .read("/etc/os-release")
        .or_else(|| root.read("/usr/lib/os-release"))
        .unwrap_or_default();
    let field = |key: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches(|c| c == '"' || c == '\'').to_owned())
        })
    };
    let mut out: Vec<String> = Vec::new();
    if let Some(id) = system.os.distro.clone().or_else(|| field("ID")) {
        out.push(id.to_lowercase());
    }
    // ID_LIKE belongs to the file's ID; a System describing another distro must not borrow it.
    let same_distro = field("ID").map(|f| f.to_lowercase()) == out.first().cloned();
    if same_distro {
        if let Some(like) = field("ID_LIKE") {
            out.extend(like.split_whitespace().map(str::to_lowercase));
        }
    }
    out.dedup();
    out
}

/// The first package row for `ids` (in order) that covers `branch` with the `module` flavour.
/// `*` rows (the runfile) and the Windows installer are not routes.
pub(crate) fn route(
    catalog: &Catalog,
    ids: &[String],
    branch: u32,
    module: KernelModule,
) -> Option<Route> {
    ids.iter().enumerate().find_map(|(i, id)| {
        // As resolve::driver::install_commands: the first row for the distro and branch decides.
        let rule = catalog.drivers.package.iter().find(|p| {
            p.distros.iter().any(|d| d == id)
                && p.min_branch.is_none_or(|m| branch >= m)
                && p.max_branch.is_none_or(|m| branch <= m)
        })?;
        let package = flavour(rule, module)?;
        if matches!(rule.method.as_str(), "runfile" | "windows-installer") {
            return None;
        }
        let fill = |s: &str| s.replace("{branch}", &branch.to_string());
        Some(Route {
            family: family_of(id, &rule.method),
            distro: id.clone(),
            via_like: i > 0,
            package: fill(&package),
            extra: rule.extra.iter().map(|e| fill(e)).collect(),
        })
    })
}

fn flavour(rule: &PackageRule, module: KernelModule) -> Option<String> {
    match module {
        KernelModule::Open => rule.open.clone(),
        KernelModule::Proprietary => rule.proprietary.clone(),
    }
}

fn family_of(id: &str, method: &str) -> Family {
    match id {
        "ubuntu" => Family::Ubuntu,
        "debian" => Family::Debian,
        "rhel" | "rocky" | "almalinux" | "centos" => Family::Rhel,
        "fedora" => Family::Fedora,
        _ => match method {
            "apt" => Family::Debian,
            "dnf-module" => Family::Rhel,
            "dnf" => Family::Fedora,
            _ => Family::Other,
        },
    }
}
