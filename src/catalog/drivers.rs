//! `manifests/drivers.toml`: which driver branches serve which architectures, and how each
//! distro family names the packages.

use serde::Deserialize;

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
    /// Where the row comes from.
    pub source: String,
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
