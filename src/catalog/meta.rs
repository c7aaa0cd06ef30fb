//! `manifests/catalog.toml`: the catalog's own facts — its date, when each publisher's source was
//! last read and from where, which wheel member carries the compute capabilities of a package,
//! and (in a catalog `manifests update` wrote) the sha256 of every file it checked.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Date;

/// The whole catalog.toml.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogMeta {
    /// Format version of the file.
    pub schema_version: u32,
    /// The day every part was last brought up to date: what `plan` names, and ages.
    pub date: Date,
    /// How this catalog was made (hand-curated, `manifests update`).
    pub origin: String,
    /// One row per publisher source.
    #[serde(default)]
    pub part: Vec<Part>,
    /// Where a wheel keeps the device code that says which GPUs it runs on.
    #[serde(default)]
    pub probe: Vec<Probe>,
    /// sha256 of each manifest, written by `manifests update` after `manifests check` passed; a
    /// catalog whose files do not match is never used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
}

/// A publisher source and the last time it was read.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// `nvidia-redist`, `pypi`, `pytorch-index`, `fatbin`.
    pub name: String,
    /// Where it was read from (a mirror's URL when one was used).
    pub url: String,
    /// When it was last read successfully; absent when it never was.
    pub read: Option<Date>,
    /// `ok`, or what went wrong the last time (`unreachable: …`): the rows it feeds then stay as
    /// they were.
    pub status: String,
    /// Bytes fetched the last time.
    #[serde(default)]
    pub bytes: u64,
    /// What the part feeds, and why it is trusted.
    pub source: String,
}

/// The zip member of a package's wheels whose fatbin lists the GPUs the package carries code for.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Distribution name (`nvidia-cudnn-cu13`).
    pub package: String,
    /// Member path inside the wheel.
    pub member: String,
    /// The most compressed bytes worth reading for one wheel; above it the curated list stays.
    pub max_bytes: u64,
    /// Why this member speaks for the package.
    pub source: String,
}

impl CatalogMeta {
    /// The probe for a package.
    pub fn probe(&self, package: &str) -> Option<&Probe> {
        self.probe.iter().find(|p| p.package == package)
    }

    /// The part named `name`.
    pub fn part(&self, name: &str) -> Option<&Part> {
        self.part.iter().find(|p| p.name == name)
    }
}
