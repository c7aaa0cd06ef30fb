//! `manifests/drivers.toml`: which driver branches serve which architectures, and how each
//! distro family names the packages.

use serde::Deserialize;

use super::Date;
use crate::model::version::Version;

/// The whole drivers.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverManifest {
    /// Format version of the file.
    pub schema_version: u32,
    /// Branch windows per architecture.
    pub architecture: Vec<ArchitectureDrivers>,
    /// Branches cudaup may plan.
    pub branch: Vec<Branch>,
    /// Package names per distro family, tried in order.
    pub package: Vec<PackageRule>,
    /// Driver floors finer than an architecture's first branch (one GPU, one compute
    /// capability).
    #[serde(default)]
    pub floor: Vec<GpuFloor>,
    /// Which kinds of branch to prefer when installing a driver, per class of GPU.
    #[serde(default)]
    pub preference: Vec<Preference>,
    /// Branches without a row that are past their end of life.
    #[serde(default)]
    pub unlisted_ended: Option<UnlistedEnded>,
}

/// Every branch below `before` that has no [[branch]] row ended by `eol` (NVIDIA lists the
/// supported ones; "all other previous driver branches ... are end of life").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnlistedEnded {
    /// Branches below this one.
    pub before: u32,
    /// Ended by then.
    pub eol: Date,
    /// Where the row comes from.
    pub source: String,
}

/// A driver floor for some GPUs, finer than the architecture's window (B300 needs R575 while
/// Blackwell starts at R570; HGX B200 needs 570.133.20 or newer).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuFloor {
    /// GPUs of this compute capability.
    pub compute_capability: Option<Version>,
    /// GPUs whose marketing name has this word (`B200` matches `NVIDIA B200`, not `GB200`).
    pub gpu: Option<String>,
    /// The first branch that drives them.
    pub min_branch: Option<u32>,
    /// The first driver release that drives them.
    pub min_version: Option<Version>,
    /// The first release per branch that drives them, where GPUs reached each branch at its
    /// own release (`["570.158.01", "575.57.08"]`): a release of a listed branch must be at
    /// least its entry, a branch newer than every entry passes, any other branch is refused.
    #[serde(default)]
    pub min_versions: Vec<Version>,
    /// The kernel-module flavour these GPUs need, where it differs from their architecture's
    /// (Grace Hopper needs the open module; discrete Hopper only has it recommended).
    pub open_module: Option<OpenModule>,
    /// Where the row comes from.
    pub source: String,
}

impl GpuFloor {
    /// Whether the floor applies to a GPU named `name` of compute capability `cc`.
    pub fn applies(&self, name: &str, cc: &Version) -> bool {
        let cc_ok = self.compute_capability.as_ref().is_none_or(|c| c == cc);
        let name_ok = self.gpu.as_ref().is_none_or(|g| {
            name.split(|c: char| c.is_whitespace() || c == '-')
                .any(|w| w.eq_ignore_ascii_case(g))
        });
        cc_ok && name_ok && (self.compute_capability.is_some() || self.gpu.is_some())
    }

    /// Why `driver` (or, with `version = None`, any release of `branch`) is below this floor.
    pub fn problem(&self, branch: u32, version: Option<&Version>) -> Option<String> {
        if let Some(min) = self.min_branch.filter(|m| branch < *m) {
            return Some(format!("needs branch {min} or newer"));
        }
        if let Some(why) = self.per_branch_problem(branch, version) {
            return Some(why);
        }
        match (&self.min_version, version) {
            (Some(min), Some(v)) if v < min => Some(format!("needs driver {min} or newer")),
            (Some(min), None) if min.major() > branch => {
                Some(format!("needs driver {min} or newer"))
            }
            _ => None,
        }
    }

    /// The per-branch floor of `min_versions`.
    fn per_branch_problem(&self, branch: u32, version: Option<&Version>) -> Option<String> {
        let newest = self.min_versions.iter().map(Version::major).max()?;
        let needs = || {
            let list: Vec<String> = self
                .min_versions
                .iter()
                .map(|m| format!("{m} on branch {}", m.major()))
                .collect();
            format!(
                "needs driver {} or newer, or a branch after {newest}",
                list.join(", ")
            )
        };
        match self.min_versions.iter().find(|m| m.major() == branch) {
            Some(min) => version.filter(|v| *v < min).map(|_| needs()),
            None if branch > newest => None,
            None => Some(needs()),
        }
    }

    /// The lowest release each branch allows (`min_versions`, else `min_version`), for
    /// checking the floor against NVIDIA's tables.
    pub fn allows_from(&self, branch: u32) -> Option<Version> {
        if let Some(newest) = self.min_versions.iter().map(Version::major).max() {
            return match self.min_versions.iter().find(|m| m.major() == branch) {
                Some(m) => Some(m.clone()),
                None if branch > newest => Version::parse(&format!("{branch}.0")),
                None => None,
            };
        }
        if self.min_branch.is_some_and(|m| branch < m) {
            return None;
        }
        match &self.min_version {
            Some(m) if m.major() > branch => None,
            Some(m) if m.major() == branch => Some(m.clone()),
            _ => Version::parse(&format!("{branch}.0")),
        }
    }
}

/// The branch kinds to prefer, for GPUs whose names carry one of `gpus` (or every GPU when the
/// list is empty).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preference {
    /// `data-center`, `other`.
    pub class: String,
    /// Words of marketing names that put a GPU in this class; empty: every GPU.
    #[serde(default)]
    pub gpus: Vec<String>,
    /// Branch kinds, most preferred first.
    pub kinds: Vec<String>,
    /// Why, in one clause (shown in the plan).
    pub why: String,
    /// Where the row comes from.
    pub source: String,
}

impl Preference {
    /// Whether a GPU named `name` is in this class.
    pub fn covers(&self, name: &str) -> bool {
        self.gpus.is_empty()
            || name
                .split(|c: char| c.is_whitespace() || c == '-')
                .any(|w| self.gpus.iter().any(|g| w.eq_ignore_ascii_case(g)))
    }
}

/// Whether NVIDIA's open kernel modules drive an architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpenModule {
    /// Only the open modules work (Blackwell).
    Required,
    /// Both work.
    Supported,
    /// Only the proprietary module works (before Turing).
    Unsupported,
}

/// The driver branches that serve one architecture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchitectureDrivers {
    /// Architecture name as in gpus.toml.
    pub name: String,
    /// First branch that supports it.
    pub min_branch: Option<u32>,
    /// Last branch that supports it (legacy GPUs).
    pub last_branch: Option<u32>,
    /// Open kernel module support.
    pub open_module: OpenModule,
    /// Compute capabilities of the architecture that no chip in gpus.toml carries yet (a GPU the
    /// PCI table does not know, reported by the driver).
    #[serde(default)]
    pub compute_capabilities: Vec<Version>,
    /// Where the row comes from.
    pub source: String,
}

/// A driver branch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Branch {
    /// Branch number (`580`).
    pub branch: u32,
    /// NVIDIA's label: production, new-feature, lts (or unknown).
    pub kind: String,
    /// The last month (or day) NVIDIA supports the branch, where NVIDIA states it.
    pub eol: Option<Date>,
    /// NVIDIA ships only the open kernel modules for this branch (615, 620).
    #[serde(default)]
    pub open_only: bool,
    /// The newest release of the branch that a cited source names; otherwise the newest that
    /// cuda.toml knows (the driver a toolkit shipped with) is used.
    pub latest: Option<Version>,
    /// Where the row comes from.
    pub source: String,
}

impl Branch {
    /// Whether the branch is past its end of life on `today`.
    pub fn ended(&self, today: &Date) -> bool {
        self.eol.is_some_and(|e| e.days() < today.days())
    }

    /// `lts, supported to September 2029` / `new-feature, ended August 2026`.
    pub fn describe(&self, today: &Date) -> String {
        match &self.eol {
            Some(e) if self.ended(today) => format!("{}, ended {}", self.kind, e.human()),
            Some(e) => format!("{}, supported to {}", self.kind, e.human()),
            None => self.kind.clone(),
        }
    }
}

/// How a distro family installs a branch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackageRule {
    /// os-release IDs this row applies to (`*` for any Linux).
    pub distros: Vec<String>,
    /// Lowest branch the row covers.
    pub min_branch: Option<u32>,
    /// Highest branch the row covers.
    pub max_branch: Option<u32>,
    /// Package for the proprietary module (`{branch}` / `{version}` substituted).
    pub proprietary: Option<String>,
    /// Package for the open module.
    pub open: Option<String>,
    /// Further packages.
    #[serde(default)]
    pub extra: Vec<String>,
    /// The installer (`apt`, `dnf`, `dnf-module`, `pacman`, `runfile`, `windows-installer`).
    pub method: String,
    /// Where the row comes from.
    pub source: String,
}

impl DriverManifest {
    /// The branch window of an architecture.
    pub fn architecture(&self, name: &str) -> Option<&ArchitectureDrivers> {
        self.architecture.iter().find(|a| a.name == name)
    }

    /// The architecture that lists compute capability `cc` (for GPUs gpus.toml has no chip for).
    pub fn architecture_for_cc(&self, cc: &Version) -> Option<&ArchitectureDrivers> {
        self.architecture
            .iter()
            .find(|a| a.compute_capabilities.iter().any(|c| c == cc))
    }

    /// The branch row.
    pub fn branch(&self, branch: u32) -> Option<&Branch> {
        self.branch.iter().find(|b| b.branch == branch)
    }

    /// The first package rule for this distro (or its ID_LIKE parents) and branch.
    pub fn package_rule(&self, distros: &[&str], branch: u32) -> Option<&PackageRule> {
        self.package.iter().find(|p| {
            let distro_ok = p
                .distros
                .iter()
                .any(|d| d == "*" || distros.contains(&d.as_str()));
            distro_ok
                && p.min_branch.is_none_or(|m| branch >= m)
                && p.max_branch.is_none_or(|m| branch <= m)
        })
    }
}
