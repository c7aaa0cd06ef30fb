//! The lock: one TOML file (`schema_version = 1`) holding the whole stack for every machine
//! picture of a fleet — the driver, the toolkit release with each archive's sha256, cuDNN, the
//! framework wheels with their sha256 for each platform and GPU class, uv's pinned wheels, the
//! index or mirror each came from, and the catalog's date. [`make`] writes it from install
//! plans (the same `InstallPlan` and `locate` an install runs), [`Lock::host_for`] finds the
//! part of it a machine is, or says which part does not fit, [`verify`] refuses a mirror whose
//! bytes are not the locked ones before anything is installed, [`check`] compares what a host
//! has with its part, and [`pylock`] exports the Python part as PEP 751 `pylock.toml`.
//!
//! The file is made only of the plans and what the indexes list, never of the time or the
//! machine that wrote it: `cudaup lock` twice gives the same bytes.

pub mod check;
pub mod deps;
pub mod fleet;
pub mod make;
pub mod pylock;
pub mod verify;

use serde::{Deserialize, Serialize};

use crate::model::system::System;

/// The schema this cudaup writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The file's schema ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The day of the catalog the plans were made from.
    pub catalog_date: String,
    /// The profile every host installs.
    pub profile: String,
    /// uv, the installer cudaup brings.
    pub uv: LockedUv,
    /// One part per machine picture.
    #[serde(rename = "host")]
    pub hosts: Vec<Host>,
}

/// uv's pinned wheels (manifests/uv.toml).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedUv {
    /// Its version.
    pub version: String,
    /// Where the hashes were read.
    pub source: String,
    /// One wheel per architecture.
    pub wheel: Vec<LockedFile>,
}

/// One machine picture's stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// The picture's name (its file name without `.json`).
    pub name: String,
    /// `linux`, `windows`, `macos`.
    pub os: String,
    /// `x86_64`, `aarch64`.
    pub arch: String,
    /// The distribution and its release (`ubuntu 24.04`), as the picture says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distro: Option<String>,
    /// The GPU class: the NVIDIA GPUs' compute capabilities, sorted, each once (`["9.0"]`).
    pub gpus: Vec<String>,
    /// The Python the framework was planned for (`3.12`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The driver: its branch and version, and what the plan does with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<LockedDriver>,
    /// The CUDA toolkit release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    /// The cuDNN release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cudnn: Option<String>,
    /// The framework.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<LockedFramework>,
    /// The toolkit's archives (or wheels), each with its sha256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolkit: Vec<LockedFile>,
    /// The framework's wheels, each with its sha256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wheel: Vec<LockedFile>,
    /// Every other distribution the framework's install brings (its dependencies, as uv
    /// resolves them for this host's Python and platform), each wheel with its sha256. Empty in
    /// a lock made without uv: then only the framework's own wheels are held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependency: Vec<LockedFile>,
}

impl Host {
    /// What `install --locked` hands pip or uv: one `name==version --hash=sha256:…` line per
    /// distribution (the framework's wheels and the dependencies), every fitting wheel's hash
    /// on its line. Empty when the lock holds no dependencies: hash-checking is all or nothing
    /// for pip, so the framework's wheels alone are checked by cudaup before the install.
    pub fn hashed_requirements(&self) -> Vec<String> {
        if self.dependency.is_empty() {
            return Vec::new();
        }
        let mut lines: Vec<(String, String, Vec<String>)> = Vec::new();
        for f in self.wheel.iter().chain(&self.dependency) {
            match lines
                .iter_mut()
                .find(|(n, v, _)| n == &f.name && v == &f.version)
            {
                Some((_, _, hashes)) => hashes.push(f.sha256.clone()),
                None => lines.push((f.name.clone(), f.version.clone(), vec![f.sha256.clone()])),
            }
        }
        lines
            .into_iter()
            .map(|(name, version, hashes)| {
                let hashes: Vec<String> = hashes
                    .iter()
                    .map(|h| format!("--hash=sha256:{h}"))
                    .collect();
                format!("{name}=={version} {}", hashes.join(" "))
            })
            .collect()
    }
}

/// The driver of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedDriver {
    /// `keep`, `install`, `upgrade`, `skip`, `manual`.
    pub action: String,
    /// The version (kept or installed), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its branch (`580`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
}

/// The framework of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFramework {
    /// `torch`, `tensorflow`, `jax`.
    pub name: String,
    /// Its release.
    pub version: String,
    /// The build (`cu130`, `cpu`, `cuda13`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The index (or folder of wheels) the wheels came from.
    pub index: String,
    /// The requirement lines the install runs.
    pub requirements: Vec<String>,
}

/// A file of the stack, known by its sha256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFile {
    /// The component or distribution (`cuda_nvcc`, `torch`); for uv, its architecture.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its file name.
    pub filename: String,
    /// Where it was read (any mirror with the same bytes serves).
    pub url: String,
    /// Its sha256.
    pub sha256: String,
    /// Its size, when stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Why a lock could not be made, read or used.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The file is not a lock this cudaup reads.
    #[error("{path}: not a cudaup lock: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The machine is none of the lock's hosts.
    #[error("this machine is not covered by the lock {path}: {why}")]
    NotCovered {
        /// The lock.
        path: String,
        /// Which part does not fit, for the nearest host.
        why: String,
    },
    /// An index or mirror lists no file of a locked wheel's version for the host.
    #[error("{index} lists no {name} {version} wheel for {target}")]
    NoWheel {
        /// The index.
        index: String,
        /// The distribution.
        name: String,
        /// Its version.
        version: String,
        /// The host, in words.
        target: String,
    },
    /// The mirror's bytes are not the locked ones: nothing was installed.
    #[error("{what}: the mirror has sha256 {found}, the lock says {locked}; nothing was installed (a mirror with the locked bytes serves, or make the lock again with `cudaup lock`)")]
    Mismatch {
        /// The file.
        what: String,
        /// What the mirror has.
        found: String,
        /// What the lock says.
        locked: String,
    },
    /// The plan made from the lock is not the locked stack.
    #[error("the plan made from the lock differs from it: {0}; nothing was installed")]
    Differs(String),
    /// uv could not resolve the framework's dependencies for a host.
    #[error("the framework's dependencies could not be resolved for the lock: {0}")]
    Resolve(String),
    /// A download failed.
    #[error(transparent)]
    Fetch(#[from] crate::fetch::FetchError),
    /// An index could not be read.
    #[error(transparent)]
    Index(#[from] crate::sources::pypi::IndexError),
    /// Local I/O.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Lock {
    /// The file's text: the same lock gives the same bytes.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).expect("a lock serialises");
        format!(
            "# cudaup lock (docs/lock.md): the whole stack for each host below. `cudaup install --locked FILE`\n# installs exactly this; `cudaup lock --check FILE` says whether this machine matches.\n{body}"
        )
    }

    /// Reads a lock; `path` names it in errors.
    pub fn parse(path: &str, text: &str) -> Result<Lock, LockError> {
        let lock: Lock = toml::from_str(text).map_err(|e| LockError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        if lock.schema_version != SCHEMA_VERSION {
            return Err(LockError::Parse {
                path: path.to_owned(),
                message: format!(
                    "schema_version {} (this cudaup reads {SCHEMA_VERSION})",
                    lock.schema_version
                ),
            });
        }
        Ok(lock)
    }

    /// The host `system` is (same OS, architecture and GPU class); otherwise which part of the
    /// nearest host does not fit.
    pub fn host_for(&self, system: &System, path: &str) -> Result<&Host, LockError> {
        let mut nearest: Option<(usize, Vec<String>)> = None;
        for h in &self.hosts {
            let misfits = misfits(h, system);
            if misfits.is_empty() {
                return Ok(h);
            }
            if nearest.as_ref().is_none_or(|(n, _)| misfits.len() < *n) {
                nearest = Some((misfits.len(), misfits));
            }
        }
        let names: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
        Err(LockError::NotCovered {
            path: path.to_owned(),
            why: match nearest {
                Some((_, m)) => {
                    format!("{} (the lock's hosts: {})", m.join("; "), names.join(", "))
                }
                None => "the lock has no hosts".into(),
            },
        })
    }
}

/// The GPU class of `system`: its NVIDIA GPUs' compute capabilities, sorted, each once.
pub fn gpu_class(system: &System) -> Vec<String> {
    let mut ccs: Vec<String> = system
        .nvidia_gpus()
        .filter_map(|g| g.compute_capability.clone())
        .collect();
    ccs.sort();
    ccs.dedup();
    ccs
}

/// What of `system` does not fit `host`, one phrase each.
fn misfits(host: &Host, system: &System) -> Vec<String> {
    let mut out = Vec::new();
    let os = crate::install::python::route::os_name(system.os.family);
    if host.os != os {
        out.push(format!("OS {os} (host {}: {})", host.name, host.os));
    }
    if host.arch != system.os.arch {
        out.push(format!(
            "architecture {} (host {}: {})",
            system.os.arch, host.name, host.arch
        ));
    }
    let class = gpu_class(system);
    if host.gpus != class {
        let show = |v: &[String]| {
            if v.is_empty() {
                "no NVIDIA GPU".to_owned()
            } else {
                v.iter()
                    .map(|c| format!("sm_{}", c.replace('.', "")))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        out.push(format!(
            "GPU class {} (host {}: {})",
            show(&class),
            host.name,
            show(&host.gpus)
        ));
    }
    out
}

#[cfg(test)]
mod tests;
