//! CDI specs (the Container Device Interface, `cdiVersion` 0.5.0): the document, cudaup's own
//! generator of NVIDIA's spec ([`generate`]), and a reader that says which driver a spec on disk
//! was made for ([`read`]).
//!
//! cudaup writes the same content `nvidia-ctk cdi generate` does — device nodes, the loaded
//! driver's user-space libraries and binaries, firmware — so a machine without the toolkit (a
//! rootless user, a CDI-only host) gets a working spec. Version 0.5.0 is the newest whose
//! fields Podman 4.1+ and Docker 25+ both read; its parser is strict, so nothing outside the
//! schema is written (the driver version is readable from the versioned library names).

pub mod generate;
pub mod read;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The vendor/class every NVIDIA spec uses: devices are `nvidia.com/gpu=0`, `=all`, `=GPU-…`.
pub const KIND: &str = "nvidia.com/gpu";

/// The file name cudaup gives its spec (the toolkit's is `nvidia.yaml`).
pub const FILE_NAME: &str = "cudaup-nvidia.json";

/// A CDI spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spec {
    /// `0.5.0`.
    pub cdi_version: String,
    /// `nvidia.com/gpu`.
    pub kind: String,
    /// The devices a container can ask for.
    pub devices: Vec<Device>,
    /// Edits every device of this spec brings.
    #[serde(default)]
    pub container_edits: Edits,
}

/// One named device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Device {
    /// `0`, `all`, `GPU-7f1a…`.
    pub name: String,
    /// What it brings.
    pub container_edits: Edits,
}

/// Changes to a container.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edits {
    /// `KEY=value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Character devices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_nodes: Vec<DeviceNode>,
    /// Bind mounts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<Mount>,
    /// OCI hooks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
}

impl Edits {
    /// Whether nothing is edited.
    pub fn is_empty(&self) -> bool {
        self.env.is_empty()
            && self.device_nodes.is_empty()
            && self.mounts.is_empty()
            && self.hooks.is_empty()
    }
}

/// A device node: `path` in the container, `host_path` on the host when it differs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceNode {
    /// Where the container sees it.
    pub path: PathBuf,
    /// Where it is on the host (absent: the same path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<PathBuf>,
    /// The device's major number, where a spec states it (cudaup's do not: the runtime takes
    /// the host node's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major: Option<u64>,
    /// Its minor number, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor: Option<u64>,
}

/// A bind mount.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mount {
    /// The host file.
    pub host_path: PathBuf,
    /// Where the container sees it.
    pub container_path: PathBuf,
    /// Mount options (`ro`, `nosuid`, `nodev`, `bind`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// An OCI hook (the toolkit's `update-ldcache`, when the toolkit is there to run it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hook {
    /// `createContainer`.
    pub hook_name: String,
    /// The program.
    pub path: PathBuf,
    /// argv, program name first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}

impl Spec {
    /// The JSON cudaup writes: pretty, with a final newline.
    pub fn to_json(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec_pretty(self).expect("a spec serialises");
        out.push(b'\n');
        out
    }

    /// Every device node the spec names, with the host path it is taken from.
    pub fn host_device_nodes(&self) -> Vec<PathBuf> {
        self.devices
            .iter()
            .map(|d| &d.container_edits)
            .chain(std::iter::once(&self.container_edits))
            .flat_map(|e| e.device_nodes.iter())
            .map(|n| n.host_path.clone().unwrap_or_else(|| n.path.clone()))
            .collect()
    }

    /// The device nodes whose numbers the spec states, by host path.
    pub fn host_device_numbers(&self) -> Vec<(PathBuf, (u64, u64))> {
        self.devices
            .iter()
            .map(|d| &d.container_edits)
            .chain(std::iter::once(&self.container_edits))
            .flat_map(|e| e.device_nodes.iter())
            .filter_map(|n| {
                let host = n.host_path.clone().unwrap_or_else(|| n.path.clone());
                Some((host, (n.major?, n.minor?)))
            })
            .collect()
    }

    /// Every host file the spec mounts.
    pub fn host_mounts(&self) -> Vec<PathBuf> {
        self.devices
            .iter()
            .map(|d| &d.container_edits)
            .chain(std::iter::once(&self.container_edits))
            .flat_map(|e| e.mounts.iter())
            .map(|m| m.host_path.clone())
            .collect()
    }
}
