//! `manifests/driver_support.toml`: which NVIDIA driver releases list each GPU in their
//! supported-GPU table (the "Compatible GPUs" table of the open-gpu-kernel-modules README of
//! every release). A GPU reaches each branch at its own release (RTX 5060: 570.158.01 on R570,
//! 575.57.08 on R575; RTX 5050 on no R570 at all), so support is judged per release, not per
//! architecture.
//!
//! A release is judged by the newest release *read* of its branch at or below it: a later point
//! release the table has not read yet lists what its predecessor listed. A branch the table never
//! read (older than the open modules, or newer than the last release read) is not decided here;
//! the architecture windows and floors of drivers.toml decide it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::model::version::Version;

/// The whole driver_support.toml.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverSupport {
    /// Format version of the file.
    pub schema_version: u32,
    /// The releases whose table was read, oldest first.
    #[serde(default)]
    pub release: Vec<ReadRelease>,
    /// One row per PCI device id some table lists.
    #[serde(default)]
    pub gpu: Vec<SupportedGpu>,
}

/// A driver release whose supported-GPU table was read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadRelease {
    /// `570.158.01`.
    pub version: Version,
    /// The table's URL.
    pub source: String,
}

/// A GPU and the releases whose tables list it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SupportedGpu {
    /// `10de:2d05`.
    pub pci_id: String,
    /// The product name in the newest table listing it (`NVIDIA GeForce RTX 5060`).
    pub name: String,
    /// Runs of consecutive read releases of one branch that list it: `570.158.01..570.211.01`,
    /// or one release `580.94.13`.
    pub listed: Vec<String>,
    /// Where the row comes from.
    pub source: String,
}

/// A run `first..last` (or one release) of [`SupportedGpu::listed`].
pub fn parse_run(run: &str) -> Option<(Version, Version)> {
    let (a, b) = run.split_once("..").unwrap_or((run, run));
    let (a, b) = (Version::parse(a)?, Version::parse(b)?);
    (a.major() == b.major() && a <= b && a.parts().len() > 1).then_some((a, b))
}

/// What a release's table says about one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// The release (or the newest read release of its branch at or below it) lists the GPU.
    Listed,
    /// It does not. `judged_by` is the read release that decided; `first` the oldest read
    /// release of each branch that lists the GPU.
    NotListed {
        /// The release whose table was consulted.
        judged_by: Version,
        /// Per branch, the first read release listing the GPU.
        first: Vec<Version>,
    },
    /// The table cannot say (a branch it never read, or a release older than any read).
    Unknown,
}

impl SupportedGpu {
    fn runs(&self) -> impl Iterator<Item = (Version, Version)> + '_ {
        self.listed.iter().filter_map(|r| parse_run(r))
    }

    /// Whether the read release `r` lists this GPU.
    pub fn lists(&self, r: &Version) -> bool {
        self.runs().any(|(a, b)| a <= *r && *r <= b)
    }

    /// The first read release of each branch that lists this GPU, oldest branch first.
    pub fn first_per_branch(&self) -> Vec<Version> {
        let mut first: BTreeMap<u32, Version> = BTreeMap::new();
        for (a, _) in self.runs() {
            let e = first.entry(a.major()).or_insert_with(|| a.clone());
            if a < *e {
                *e = a;
            }
        }
        first.into_values().collect()
    }
}

impl DriverSupport {
    /// The row for a GPU: by PCI device id, else by its exact product name (a machine picture
    /// without ids; names that several ids share count as one GPU listed where any of them is).
    pub fn find(&self, pci_id: Option<&str>, name: &str) -> Vec<&SupportedGpu> {
        if let Some(id) = pci_id {
            let id = id.to_ascii_lowercase();
            let rows: Vec<&SupportedGpu> = self.gpu.iter().filter(|g| g.pci_id == id).collect();
            if !rows.is_empty() {
                return rows;
            }
        }
        self.gpu
            .iter()
            .filter(|g| g.name.eq_ignore_ascii_case(name.trim()))
            .collect()
    }

    /// The read releases of `branch`, oldest first.
    fn read_of(&self, branch: u32) -> impl Iterator<Item = &Version> {
        self.release
            .iter()
            .map(|r| &r.version)
            .filter(move |v| v.major() == branch)
    }

    /// Whether the tables list the GPU `rows` (from [`Self::find`]) in release `v`, or, with
    /// `v = None`, in any read release of `branch`.
    pub fn listing(&self, rows: &[&SupportedGpu], branch: u32, v: Option<&Version>) -> Listing {
        if rows.is_empty() {
            return Listing::Unknown;
        }
        let first = || {
            let mut all: BTreeSet<Version> = BTreeSet::new();
            rows.iter().for_each(|g| all.extend(g.first_per_branch()));
            // One per branch: the oldest.
            let mut seen = BTreeSet::new();
            all.into_iter()
                .filter(|f| seen.insert(f.major()))
                .collect::<Vec<_>>()
        };
        match v {
            Some(v) => {
                let Some(judge) = self.read_of(branch).filter(|r| *r <= v).max() else {
                    return Listing::Unknown;
                };
                if rows.iter().any(|g| g.lists(judge)) {
                    Listing::Listed
                } else {
                    Listing::NotListed {
                        judged_by: judge.clone(),
                        first: first(),
                    }
                }
            }
            None => {
                let Some(newest) = self.read_of(branch).max() else {
                    return Listing::Unknown;
                };
                if self
                    .read_of(branch)
                    .any(|r| rows.iter().any(|g| g.lists(r)))
                {
                    Listing::Listed
                } else {
                    Listing::NotListed {
                        judged_by: newest.clone(),
                        first: first(),
                    }
                }
            }
        }
    }

    /// The first read release, per branch, whose table lists the GPU (for floors' checks).
    pub fn first_in_branch(&self, rows: &[&SupportedGpu], branch: u32) -> Option<Version> {
        rows.iter()
            .flat_map(|g| g.first_per_branch())
            .filter(|f| f.major() == branch)
            .min()
    }

    /// The branches some release read belongs to.
    pub fn branches(&self) -> BTreeSet<u32> {
        self.release.iter().map(|r| r.version.major()).collect()
    }
}

#[cfg(test)]
mod tests;
