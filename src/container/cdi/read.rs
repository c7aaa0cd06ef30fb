//! Reads the CDI specs an engine would load — cudaup's JSON and the toolkit's YAML alike — far
//! enough to tell which driver each was made for and whether its device nodes still exist.
//!
//! A YAML spec is read line by line rather than parsed: the facts doctor needs (`kind:`, the
//! `path:`/`hostPath:` of device nodes, the versioned `libcuda.so.<version>` it mounts) are
//! single-line scalars in every spec `nvidia-ctk cdi generate` writes.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::detect::Root;

/// One spec file found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// Machine path of the file.
    pub path: PathBuf,
    /// Its `kind` (`nvidia.com/gpu`), when readable.
    pub kind: Option<String>,
    /// The driver the spec mounts the libraries of (`libcuda.so.<version>`).
    pub driver_version: Option<String>,
    /// Host device nodes it names.
    pub device_nodes: Vec<PathBuf>,
    /// Its `cdiVersion` (`0.5.0`; toolkit 1.19.1+ writes `0.7.0`, which Podman 4 cannot read).
    pub cdi_version: Option<String>,
    /// The device numbers the spec states for its nodes (`major`/`minor`), beside what the node
    /// on the host is now: a module reloaded with another major (nvidia-uvm's is dynamic) leaves
    /// a spec that still names the node but gives containers the old numbers.
    pub numbers: Vec<NodeNumbers>,
    /// The file's permission bits (`0o644`); a spec others cannot read fails for rootless
    /// engines (toolkit #146).
    pub mode: Option<u32>,
    /// Why the file could not be read as a spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// One device node's numbers, as the spec states them and as the host has them now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeNumbers {
    /// The host node.
    pub path: PathBuf,
    /// `(major, minor)` in the spec.
    pub spec: (u64, u64),
    /// `(major, minor)` of the character device on the host; `None` when it is not one.
    pub host: Option<(u64, u64)>,
}

/// The `(major, minor)` of the character device at `path` (glibc's split of `st_rdev`).
#[cfg(unix)]
pub fn device_numbers(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let m = std::fs::metadata(path).ok()?;
    if !m.file_type().is_char_device() {
        return None;
    }
    let dev = m.rdev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    Some((major, minor))
}

/// No character devices off Unix: a spec's nodes are never found on the host.
#[cfg(not(unix))]
pub fn device_numbers(_path: &Path) -> Option<(u64, u64)> {
    None
}

impl Found {
    /// Whether other users can read it.
    pub fn world_readable(&self) -> bool {
        self.mode.is_none_or(|m| m & 0o004 != 0)
    }
}

/// The spec files (`*.json`, `*.yaml`, `*.yml`) in `dirs`, machine paths read over `root`.
pub fn scan(root: &Root, dirs: &[PathBuf]) -> Vec<Found> {
    let mut out = Vec::new();
    for dir in dirs {
        for path in root.list(dir) {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !matches!(ext, "json" | "yaml" | "yml") {
                continue;
            }
            out.push(read_one(root, &path));
        }
    }
    out
}

/// Reads one spec file.
pub fn read_one(root: &Root, path: &Path) -> Found {
    // No permission bits off Unix (read as readable by all, as `world_readable` says).
    #[cfg(unix)]
    let mode = std::fs::metadata(root.host_path(path)).ok().map(|m| {
        use std::os::unix::fs::PermissionsExt;
        m.permissions().mode() & 0o7777
    });
    #[cfg(not(unix))]
    let mode = None;
    let mut found = Found {
        path: path.to_path_buf(),
        kind: None,
        driver_version: None,
        device_nodes: Vec::new(),
        cdi_version: None,
        numbers: Vec::new(),
        mode,
        unreadable: None,
    };
    // A spec directory is anyone's to fill: a FIFO or /dev/zero there must not hang or fill
    // the doctor (read without blocking, at most a spec's size).
    let text = match root
        .read_at_most(path, crate::container::setup::MAX_CONFIG)
        .and_then(|b| {
            String::from_utf8(b)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
        }) {
        Ok(t) => t,
        Err(e) => {
            found.unreadable = Some(e.to_string());
            return found;
        }
    };
    if path.extension().is_some_and(|e| e == "json") {
        match serde_json::from_str::<super::Spec>(&text) {
            Ok(spec) => {
                found.kind = Some(spec.kind.clone());
                found.cdi_version = Some(spec.cdi_version.clone());
                found.numbers = spec
                    .host_device_numbers()
                    .into_iter()
                    .map(|(path, numbers)| NodeNumbers {
                        host: device_numbers(&path),
                        path,
                        spec: numbers,
                    })
                    .collect();
                found.device_nodes = spec.host_device_nodes();
                found.driver_version = spec.host_mounts().iter().find_map(|m| libcuda_version(m));
            }
            Err(e) => found.unreadable = Some(format!("not a CDI spec: {e}")),
        }
        return found;
    }
    let mut node_path: Option<PathBuf> = None;
    // The node being read's `major:` and `minor:`.
    let mut numbers: (Option<u64>, Option<u64>) = (None, None);
    let finish = |found: &mut Found, node: PathBuf, numbers: (Option<u64>, Option<u64>)| {
        if let (Some(major), Some(minor)) = numbers {
            found.numbers.push(NodeNumbers {
                host: device_numbers(&node),
                path: node.clone(),
                spec: (major, minor),
            });
        }
        found.device_nodes.push(node);
    };
    for line in text.lines() {
        let l = line.trim().trim_start_matches("- ").trim();
        let value = |key: &str| {
            l.strip_prefix(key)
                .map(|v| v.trim().trim_matches(|c| c == '"' || c == '\'').to_owned())
        };
        if let Some(k) = value("kind:") {
            found.kind.get_or_insert(k);
        } else if let Some(v) = value("cdiVersion:") {
            found.cdi_version.get_or_insert(v);
        } else if let Some(p) = value("path:") {
            if p.starts_with("/dev/") {
                if let Some(prev) = node_path.take() {
                    finish(&mut found, prev, numbers);
                }
                numbers = (None, None);
                node_path = Some(PathBuf::from(p));
            }
        } else if let Some(n) = value("major:").filter(|_| node_path.is_some()) {
            numbers.0 = n.parse().ok();
        } else if let Some(n) = value("minor:").filter(|_| node_path.is_some()) {
            numbers.1 = n.parse().ok();
        } else if let Some(h) = value("hostPath:") {
            if h.starts_with("/dev/") || node_path.is_some() && !h.contains(".so") {
                node_path = Some(PathBuf::from(h));
            } else if found.driver_version.is_none() {
                found.driver_version = libcuda_version(Path::new(&h));
            }
        }
    }
    if let Some(last) = node_path {
        finish(&mut found, last, numbers);
    }
    if found.kind.is_none() {
        found.unreadable = Some("no `kind:` line: not a CDI spec".to_owned());
    }
    found
}

/// `580.95.05` from `…/libcuda.so.580.95.05`.
pub fn libcuda_version(path: &Path) -> Option<String> {
    let v = path.file_name()?.to_str()?.strip_prefix("libcuda.so.")?;
    (v.contains('.') && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_owned())
}

// Linux device numbers (`/dev/null`) and the Linux driver picture (containers are Linux-only).
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The shape of `nvidia-ctk cdi generate` 1.17's YAML (trimmed).
    const TOOLKIT_YAML: &str = "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  deviceNodes:\n  - path: /dev/nvidia-modeset\n  - path: /dev/nvidia-uvm\n  - path: /dev/nvidiactl\n  hooks:\n  - args:\n    - nvidia-cdi-hook\n    - create-symlinks\n    hookName: createContainer\n    path: /usr/bin/nvidia-cdi-hook\n  mounts:\n  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n    options:\n    - ro\ndevices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: \"0\"\nkind: nvidia.com/gpu\n";

    #[test]
    fn a_toolkit_yaml_spec_is_read() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(dir.path().join("var/run/cdi")).unwrap();
        fs_err::write(dir.path().join("var/run/cdi/nvidia.yaml"), TOOLKIT_YAML).unwrap();
        fs_err::write(dir.path().join("var/run/cdi/notes.txt"), "x").unwrap();
        let found = scan(&Root::at(dir.path()), &["/var/run/cdi".into()]);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert_eq!(f.kind.as_deref(), Some("nvidia.com/gpu"));
        assert_eq!(f.driver_version.as_deref(), Some("550.54.15"));
        assert_eq!(
            f.device_nodes,
            [
                "/dev/nvidia-modeset",
                "/dev/nvidia-uvm",
                "/dev/nvidiactl",
                "/dev/nvidia0"
            ]
            .map(PathBuf::from)
        );
    }

    /// A spec that states device numbers: read with the host's numbers beside them (a node
    /// that is not a character device has none), and its `cdiVersion`.
    #[test]
    fn device_numbers_and_the_cdi_version_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let uvm = dir.path().join("nvidia-uvm");
        fs_err::write(&uvm, "").unwrap();
        let yaml = format!(
            "---\ncdiVersion: 0.7.0\ncontainerEdits:\n  deviceNodes:\n  - path: /dev/null\n    major: 1\n    minor: 3\n  - path: /dev/nvidia-uvm\n    hostPath: {}\n    major: 510\n    minor: 0\n  - path: /dev/nvidiactl\nkind: nvidia.com/gpu\n",
            uvm.display()
        );
        fs_err::create_dir_all(dir.path().join("etc/cdi")).unwrap();
        fs_err::write(dir.path().join("etc/cdi/nvidia.yaml"), yaml).unwrap();
        let f = read_one(&Root::at(dir.path()), Path::new("/etc/cdi/nvidia.yaml"));
        assert_eq!(f.cdi_version.as_deref(), Some("0.7.0"));
        assert_eq!(
            f.numbers,
            vec![
                NodeNumbers {
                    path: "/dev/null".into(),
                    spec: (1, 3),
                    host: Some((1, 3)),
                },
                NodeNumbers {
                    path: uvm.clone(),
                    spec: (510, 0),
                    host: None,
                },
            ]
        );
        assert_eq!(f.device_nodes.len(), 3);
    }

    #[test]
    fn cudaups_json_spec_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        super::super::generate::tests::fake_driver(dir.path(), "580.95.05");
        let g = super::super::generate::generate(&Root::at(dir.path())).unwrap();
        let path = dir.path().join("etc/cdi/cudaup-nvidia.json");
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, g.spec.to_json()).unwrap();
        let f = read_one(
            &Root::at(dir.path()),
            Path::new("/etc/cdi/cudaup-nvidia.json"),
        );
        assert_eq!(f.driver_version.as_deref(), Some("580.95.05"));
        assert!(f.unreadable.is_none());
        assert!(f.device_nodes.iter().all(|n| n.starts_with(dir.path())));
    }
}
