//! Fleet reports: what `cudaup fleet report DIR` makes of the reports a fleet tool (the Ansible
//! role in `scripts/ansible/`) collects from every host — `DIR/<host>/install.json`
//! (`install --json`), `verify.json` (`verify --json`) and `system.json` (`detect --json`, the
//! machine cudaup planned for).
//!
//! Pure: [`host_row`] turns one host's file contents into a [`HostRow`]; [`aggregate`] groups the
//! rows by GPU architecture set and flags hosts whose stack (CUDA, cuDNN, framework) differs from
//! the majority of their group. Different GPUs rightly get different stacks (a GTX 1080 Ti cannot
//! use CUDA 13; an RTX 5090 needs 12.8 or newer), so hosts are only compared with hosts that have
//! the same architectures. Reading the directory and rendering are the CLI's job.

mod compare;
mod host;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use compare::aggregate;
pub use host::host_row;

/// The schema version of the `fleet report --json` document.
pub const SCHEMA_VERSION: u32 = 1;

/// What the output says about how hosts are compared.
pub const COMPARISON_NOTE: &str = "stacks are compared only among hosts with the same GPU architectures: different GPUs may rightly get different stacks";

/// One host's collected files, as text; `None` when the file is absent.
#[derive(Debug, Clone, Default)]
pub struct HostFiles {
    /// The host's name (its directory's name: the inventory name).
    pub host: String,
    /// `install.json`.
    pub install: Option<String>,
    /// `verify.json`.
    pub verify: Option<String>,
    /// `system.json`.
    pub system: Option<String>,
    /// Files that exist but could not be read (`verify.json: permission denied`).
    pub errors: Vec<String>,
}

/// One GPU of a host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuInfo {
    /// The name as detect reports it (`NVIDIA GeForce RTX 5090`).
    pub name: String,
    /// Compute capability (`12.0`), when known.
    pub compute_capability: Option<String>,
    /// Architecture (`Blackwell`), when known.
    pub architecture: Option<String>,
}

/// The driver as the host's plan has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DriverInfo {
    /// The version kept, or installed / upgraded to (for `manual`: the minimum).
    pub version: Option<String>,
    /// `keep`, `install`, `upgrade`, `skip` or `manual`.
    pub action: String,
}

/// What `verify --json` counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyCounts {
    /// No check failed.
    pub ok: bool,
    /// Checks passed.
    pub passed: u64,
    /// Checks failed.
    pub failed: u64,
    /// Checks that could not apply on the host.
    pub skipped: u64,
}

/// The part of a host's stack that hosts with the same GPUs should share.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Stack {
    /// The CUDA toolkit release (`12.9.1`).
    pub cuda: Option<String>,
    /// cuDNN and the CUDA major of its build (`9.17.0 (cuda12)`).
    pub cudnn: Option<String>,
    /// The framework (`torch 2.8.0 (cu128)`, `tensorflow 2.20.0`, `jax 0.12.0.1 (cuda13)`).
    pub framework: Option<String>,
}

impl Stack {
    /// `CUDA 12.9.1, cuDNN 9.17.0 (cuda12), no framework`.
    pub fn describe(&self) -> String {
        format!(
            "CUDA {}, cuDNN {}, {}",
            self.cuda.as_deref().unwrap_or("none"),
            self.cudnn.as_deref().unwrap_or("none"),
            self.framework.as_deref().unwrap_or("no framework")
        )
    }
}

/// One row of the fleet report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostRow {
    /// The host.
    pub host: String,
    /// The install report's status (`installed`, `nothing to do`, `installed, verification
    /// failed`), `failed` when the install failed, `missing` when there is no install report.
    pub status: String,
    /// Whether the last install run changed the host.
    pub changed: Option<bool>,
    /// A new driver waits for a reboot.
    pub reboot_required: bool,
    /// The host's GPUs (from system.json, else from the plan's reasons).
    pub gpus: Vec<GpuInfo>,
    /// The sorted set of NVIDIA GPU architectures (`cc X.Y` where the architecture is unknown);
    /// empty without an NVIDIA GPU. Hosts are compared within the same set.
    pub architectures: Vec<String>,
    /// The driver.
    pub driver: Option<DriverInfo>,
    /// The stack, when the install report has a plan.
    pub stack: Option<Stack>,
    /// What verify counted, when there is a verify report.
    pub verify: Option<VerifyCounts>,
    /// Everything that needs a look: failures, failed checks, plan warnings, pending reboots.
    pub problems: Vec<String>,
    /// Set by [`aggregate`]: the stack differs from the majority of the hosts with the same
    /// architectures (or they have no majority).
    pub differs_from_majority: bool,
}

impl HostRow {
    /// Whether this host is done: installed, verified, no reboot pending, not flagged.
    pub fn healthy(&self) -> bool {
        self.stack.is_some()
            && self.verify.as_ref().is_some_and(|v| v.ok)
            && !self.reboot_required
            && !self.differs_from_majority
    }
}

/// Hosts with the same GPU architectures, and the stack most of them have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The architecture set (empty: hosts without an NVIDIA GPU).
    pub architectures: Vec<String>,
    /// The hosts with a stack in this group.
    pub hosts: Vec<String>,
    /// The stack more than half of them have; `None` with one host or without a majority.
    pub majority: Option<Stack>,
    /// How many hosts have the majority's stack.
    pub majority_count: usize,
}

/// A host whose stack differs from its group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// The host.
    pub host: String,
    /// Its group's architectures.
    pub architectures: Vec<String>,
    /// Its stack.
    pub stack: Stack,
    /// The group's majority stack; `None` when the group has none.
    pub majority: Option<Stack>,
    /// One line for people.
    pub message: String,
}

/// The whole report (`fleet report --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Every host is healthy (see [`HostRow::healthy`]).
    pub ok: bool,
    /// One row per host, sorted by name.
    pub hosts: Vec<HostRow>,
    /// The architecture groups, sorted.
    pub groups: Vec<Group>,
    /// Hosts whose stack differs from their group's majority.
    pub flagged: Vec<Flag>,
    /// [`COMPARISON_NOTE`].
    pub note: String,
    /// The hosts held against a lock (`fleet report --lock FILE`), when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockReport>,
}

/// The fleet held against one lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockReport {
    /// The lock file.
    pub file: String,
    /// The hosts whose stack is not their part of the lock (or that it does not cover).
    pub drifted: Vec<LockDrift>,
}

/// A host that drifted from the lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockDrift {
    /// The host.
    pub host: String,
    /// The lock's host part it is (`None`: the lock does not cover it).
    pub lock_host: Option<String>,
    /// What differs, one phrase each.
    pub differences: Vec<String>,
}
