//! Writes NVIDIA's CDI spec from the driver this machine has loaded, read over a [`Root`]: the
//! same device nodes, libraries, binaries and firmware `nvidia-ctk cdi generate` puts in its
//! spec (NVIDIA/nvidia-container-toolkit `pkg/nvcdi`), found by the driver's version.
//!
//! - Device nodes: `/dev/nvidia<minor>` per GPU (named by index and by UUID, from
//!   `/proc/driver/nvidia/gpus/*/information`), and `nvidiactl`, `nvidia-uvm`,
//!   `nvidia-uvm-tools`, `nvidia-modeset` for all of them.
//! - Libraries: every `lib*.so.<driver version>` of NVIDIA's in the driver's library
//!   directories, mounted at its own path and at each link beside it that points to it
//!   (`libcuda.so.1`, `libcuda.so`), so the loader finds the SONAME without the toolkit's
//!   `create-symlinks` hook.
//! - Binaries: `nvidia-smi`, `nvidia-debugdump`, `nvidia-persistenced`, the MPS pair.
//! - Firmware: `/lib/firmware/nvidia/<version>/*` (the GSP firmware the open module loads).
//! - `nvidia-persistenced`'s socket, when it runs.
//! - With the toolkit installed, its `update-ldcache` hook, so images whose loader does not
//!   search the host's library directory still find the libraries.
//!
//! On WSL2 the GPU is `/dev/dxg` and the libraries are those in `/usr/lib/wsl/lib` and the
//! driver store under `/usr/lib/wsl/drivers`.

use std::path::{Path, PathBuf};

use crate::detect::Root;

use super::{Device, DeviceNode, Edits, Hook, Mount, Spec, KIND};

/// Why no spec can be made.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// No loaded driver.
    #[error("no NVIDIA driver is loaded under {root} (no /proc/driver/nvidia/version and no /dev/nvidiactl): load the driver (or reboot after installing it) before generating a CDI spec")]
    NoDriver {
        /// The root read.
        root: String,
    },
    /// Driver loaded but no GPU device nodes.
    #[error("the driver {version} is loaded but {dev} has no nvidia<N> device nodes: run `nvidia-smi` once as root (it creates them) or install nvidia-modprobe")]
    NoDevices {
        /// The driver.
        version: String,
        /// The root's `/dev` folder, as a host path.
        dev: String,
    },
    /// Driver loaded, libraries of that version absent.
    #[error("no user-space library of driver {version} (libcuda.so.{version}) was found in {dirs}: the driver's user-space part is missing or of another version (reboot pending after an upgrade?)")]
    NoLibraries {
        /// The driver.
        version: String,
        /// Where it looked.
        dirs: String,
    },
}

/// Library directories the driver's user-space part is installed in, by distro.
const LIBRARY_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/nvidia/lib64",
];

/// NVIDIA's compute and utility libraries (the prefixes `nvidia-ctk` mounts for the
/// `compute,utility` capabilities; graphics libraries are not needed for CUDA).
const LIBRARY_PREFIXES: [&str; 12] = [
    "libcuda.so.",
    "libcudadebugger.so.",
    "libnvidia-allocator.so.",
    "libnvidia-cfg.so.",
    "libnvidia-gpucomp.so.",
    "libnvidia-ml.so.",
    "libnvidia-nvvm.so.",
    "libnvidia-opencl.so.",
    "libnvidia-pkcs11-openssl3.so.",
    "libnvidia-pkcs11.so.",
    "libnvidia-ptxjitcompiler.so.",
    "libnvidia-nscq.so.",
];

/// Binaries the spec mounts (`nvidia-ctk`'s list).
const BINARIES: [&str; 5] = [
    "nvidia-smi",
    "nvidia-debugdump",
    "nvidia-persistenced",
    "nvidia-cuda-mps-control",
    "nvidia-cuda-mps-server",
];

/// Device nodes every GPU needs.
const CONTROL_NODES: [&str; 4] = [
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
];

/// One GPU as the driver lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverGpu {
    /// `/dev/nvidia<minor>`.
    pub minor: u32,
    /// `GPU-…`.
    pub uuid: Option<String>,
}

/// What the spec was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The spec.
    pub spec: Spec,
    /// The driver version it was made for (`None` on WSL, whose driver is Windows').
    pub driver_version: Option<String>,
    /// GPUs found.
    pub gpus: Vec<DriverGpu>,
    /// What was left out of the spec, and why (a library whose link leads to something that is
    /// not a driver library, a GPU UUID that is no CDI device name).
    pub skipped: Vec<String>,
}

/// Whether `name` is a CDI device name (the spec's grammar: letters, digits, `-`, `_`, `.`,
/// `:`; a letter or digit first), which an engine accepts after `nvidia.com/gpu=`.
pub fn is_device_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The host path to mount for machine path `path`: every link followed inside the root (a
/// picture's absolute links are its own `/`), and the file it ends at a regular file (or a
/// character device, for device nodes) named as `expected` allows. A link from a library's name
/// to `/etc/shadow` must not become a mount of that file into every GPU container.
fn vetted(
    root: &Root,
    path: &Path,
    expected: &dyn Fn(&str) -> bool,
    device: bool,
) -> Result<PathBuf, String> {
    // The live machine's links are the system's own (canonicalize follows them as the engine
    // will); a picture's are followed inside it.
    let resolved = if root.is_live() {
        std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?
    } else {
        root.resolve(path)
            .ok_or_else(|| format!("{}: too many levels of symbolic links", path.display()))?
    };
    let name = resolved
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if !expected(name) {
        return Err(format!(
            "{} leads to {}, which is not what that name stands for",
            path.display(),
            resolved.display()
        ));
    }
    let meta = resolved
        .symlink_metadata()
        .map_err(|e| format!("{}: {e}", resolved.display()))?;
    let kind_ok = if device {
        // A picture's stand-ins are empty regular files; a live one's are character devices.
        is_char_device(&meta) || meta.is_file()
    } else {
        meta.is_file()
    };
    if !kind_ok {
        return Err(format!(
            "{} is not a {}",
            resolved.display(),
            if device {
                "device node"
            } else {
                "regular file"
            }
        ));
    }
    Ok(resolved)
}

#[cfg(unix)]
fn is_char_device(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_char_device()
}

/// No device nodes off Unix: only a picture's stand-ins (regular files) pass.
#[cfg(not(unix))]
fn is_char_device(_meta: &std::fs::Metadata) -> bool {
    false
}

/// Parses `/proc/driver/nvidia/gpus/<pci>/information`: `GPU UUID:` and `Device Minor:`.
pub fn parse_gpu_information(text: &str) -> Option<DriverGpu> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim_start_matches(':').trim().to_owned())
    };
    let minor = field("Device Minor")?.parse().ok()?;
    let uuid = field("GPU UUID").filter(|u| u.starts_with("GPU-"));
    Some(DriverGpu { minor, uuid })
}

/// Generates the spec over `root`. Host paths in the spec are where the files are on this
/// host ([`Root::host_path`]); container paths are the machine paths.
pub fn generate(root: &Root) -> Result<Generated, GenerateError> {
    let proc_version = root.read("/proc/version").unwrap_or_default();
    if super::super::host::parse_wsl_version(&proc_version) == Some(2) && root.exists("/dev/dxg") {
        return Ok(generate_wsl(root));
    }
    let root_name = root.host_path(Path::new("/")).display().to_string();
    // The folder itself, so a live root reads `/dev`, not `//dev`.
    let dev_name = root.host_path(Path::new("/dev")).display().to_string();
    let Some((version, _)) = crate::detect::driver::probe_kernel_driver(root) else {
        return Err(GenerateError::NoDriver { root: root_name });
    };
    let mut gpus: Vec<DriverGpu> = root
        .list("/proc/driver/nvidia/gpus")
        .iter()
        .filter_map(|d| root.read(d.join("information")))
        .filter_map(|t| parse_gpu_information(&t))
        .collect();
    if gpus.is_empty() {
        // No procfs listing (a captured tree, a container): the device nodes say it.
        gpus = root
            .list("/dev")
            .iter()
            .filter_map(|p| {
                p.file_name()?
                    .to_str()?
                    .strip_prefix("nvidia")?
                    .parse()
                    .ok()
            })
            .map(|minor| DriverGpu { minor, uuid: None })
            .collect();
    }
    let mut skipped = Vec::new();
    for g in &mut gpus {
        if let Some(uuid) = g.uuid.take() {
            if is_device_name(&uuid) {
                g.uuid = Some(uuid);
            } else {
                skipped.push(format!(
                    "GPU {}'s UUID `{}` is not a CDI device name: it is named by index only",
                    g.minor,
                    uuid.escape_default()
                ));
            }
        }
    }
    gpus.sort_by_key(|g| g.minor);
    gpus.retain(|g| root.exists(format!("/dev/nvidia{}", g.minor)));
    if gpus.is_empty() {
        return Err(GenerateError::NoDevices {
            version,
            dev: dev_name.clone(),
        });
    }

    let node = |path: &str| -> Result<DeviceNode, String> {
        let path = PathBuf::from(path);
        let want = path.file_name().map(|n| n.to_owned());
        let host = vetted(root, &path, &|n| Some(n.as_ref()) == want.as_deref(), true)?;
        Ok(DeviceNode {
            host_path: (host != path).then_some(host),
            path,
            ..DeviceNode::default()
        })
    };
    let nodes = |paths: Vec<String>, skipped: &mut Vec<String>| -> Vec<DeviceNode> {
        paths
            .iter()
            .filter_map(|p| match node(p) {
                Ok(n) => Some(n),
                Err(why) => {
                    skipped.push(why);
                    None
                }
            })
            .collect()
    };
    let mut devices: Vec<Device> = Vec::new();
    gpus.retain(|g| match node(&format!("/dev/nvidia{}", g.minor)) {
        Ok(_) => true,
        Err(why) => {
            skipped.push(why);
            false
        }
    });
    if gpus.is_empty() {
        return Err(GenerateError::NoDevices {
            version,
            dev: dev_name.clone(),
        });
    }
    for (index, gpu) in gpus.iter().enumerate() {
        let edits = Edits {
            device_nodes: nodes(vec![format!("/dev/nvidia{}", gpu.minor)], &mut skipped),
            ..Edits::default()
        };
        devices.push(Device {
            name: index.to_string(),
            container_edits: edits.clone(),
        });
        if let Some(uuid) = &gpu.uuid {
            devices.push(Device {
                name: uuid.clone(),
                container_edits: edits,
            });
        }
    }
    devices.push(Device {
        name: "all".to_owned(),
        container_edits: Edits {
            device_nodes: nodes(
                gpus.iter()
                    .map(|g| format!("/dev/nvidia{}", g.minor))
                    .collect(),
                &mut skipped,
            ),
            ..Edits::default()
        },
    });

    let mut common = Edits {
        // Keeps the legacy hook, if one is still installed, from acting on the same container
        // (cdi-support.md: CDI "can conflict with" it); `nvidia-ctk` sets the same.
        env: vec!["NVIDIA_VISIBLE_DEVICES=void".to_owned()],
        device_nodes: nodes(
            CONTROL_NODES
                .iter()
                .filter(|p| root.exists(p))
                .map(|p| (*p).to_owned())
                .collect(),
            &mut skipped,
        ),
        ..Edits::default()
    };
    let mut library_dirs: Vec<PathBuf> = Vec::new();
    let suffix = format!(".so.{version}");
    // A driver kept outside the distro's directories (`/usr/local/nvidia/lib64`, the GPU
    // Operator's and many clouds' layout) is also mounted into the multiarch directory, which
    // the loader of Debian and Ubuntu images searches without an ld.so.cache entry.
    let multiarch =
        if root.is_dir("/usr/lib/aarch64-linux-gnu") && !root.is_dir("/usr/lib/x86_64-linux-gnu") {
            "/usr/lib/aarch64-linux-gnu"
        } else {
            "/usr/lib/x86_64-linux-gnu"
        };
    for dir in LIBRARY_DIRS {
        let entries = root.list(dir);
        let also = (!dir.ends_with("-linux-gnu")).then(|| PathBuf::from(multiarch));
        // Each link read once (`libcuda.so.1 -> libcuda.so.580.95.05`), by the name it points
        // to: a directory of thousands of libraries and links stays linear.
        let mut links_to: std::collections::HashMap<std::ffi::OsString, Vec<PathBuf>> =
            std::collections::HashMap::new();
        for link in &entries {
            if let Some(target) = root.read_link(link) {
                if let Some(name) = target.file_name() {
                    links_to
                        .entry(name.to_owned())
                        .or_default()
                        .push(link.clone());
                }
            }
        }
        for lib in entries.iter().filter(|p| is_driver_library(p, &suffix)) {
            let host = match vetted(
                root,
                lib,
                &|n| is_driver_library(Path::new(n), &suffix),
                false,
            ) {
                Ok(h) => h,
                Err(why) => {
                    skipped.push(why);
                    continue;
                }
            };
            let mut names = vec![lib.clone()];
            names.extend(
                lib.file_name()
                    .and_then(|n| links_to.get(n))
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
            for name in names {
                if let (Some(also), Some(file)) = (&also, name.file_name()) {
                    common.mounts.push(ro_mount(host.clone(), also.join(file)));
                }
                common.mounts.push(ro_mount(host.clone(), name));
            }
            if !library_dirs.iter().any(|d| d == Path::new(dir)) {
                library_dirs.push(PathBuf::from(dir));
            }
        }
    }
    if library_dirs.is_empty() {
        return Err(GenerateError::NoLibraries {
            version,
            dirs: LIBRARY_DIRS.join(", "),
        });
    }
    // Mounted at /usr/bin, on every image's PATH, wherever the host keeps them.
    for bin in BINARIES {
        let found: Vec<PathBuf> = ["/usr/bin", "/usr/local/nvidia/bin"]
            .iter()
            .map(|d| PathBuf::from(d).join(bin))
            .filter(|p| root.exists(p))
            .collect();
        // A wrapper script (`exec /usr/local/nvidia/bin/nvidia-smi`, as on some cloud images)
        // would name a path the container lacks: the program it wraps is mounted instead.
        let is_script = |p: &PathBuf| root.read_bytes(p).is_some_and(|b| b.starts_with(b"#!"));
        if let Some(path) = found.iter().find(|p| !is_script(p)).or(found.first()) {
            match vetted(root, path, &|n| n == bin, false) {
                Ok(host) => common
                    .mounts
                    .push(ro_mount(host, PathBuf::from("/usr/bin").join(bin))),
                Err(why) => skipped.push(why),
            }
        }
    }
    let firmware = PathBuf::from("/lib/firmware/nvidia").join(&version);
    let firmware_dir = root.resolve(&firmware);
    for file in root.list(&firmware) {
        // Firmware files keep their own names; one that leads out of the firmware directory is
        // not the driver's.
        match vetted(root, &file, &|_| true, false) {
            Ok(host) if firmware_dir.as_ref().is_some_and(|d| host.starts_with(d)) => {
                common.mounts.push(ro_mount(host, file));
            }
            Ok(host) => skipped.push(format!(
                "{} leads to {}, outside the driver's firmware directory",
                file.display(),
                host.display()
            )),
            Err(why) => skipped.push(why),
        }
    }
    for socket in ["/run/nvidia-persistenced/socket"] {
        if root.exists(socket) {
            let path = PathBuf::from(socket);
            common.mounts.push(ro_mount(root.host_path(&path), path));
        }
    }
    // The toolkit's hook refreshes the image's loader cache with the library directories; only
    // when the toolkit is installed (the spec must not name a program that is not there).
    if let Some(hook) = ["/usr/bin/nvidia-cdi-hook"]
        .into_iter()
        .find(|p| root.exists(p))
    {
        let mut args = vec!["nvidia-cdi-hook".to_owned(), "update-ldcache".to_owned()];
        for d in &library_dirs {
            args.extend(["--folder".to_owned(), d.display().to_string()]);
        }
        common.hooks.push(Hook {
            hook_name: "createContainer".to_owned(),
            path: root.host_path(Path::new(hook)),
            args,
        });
    }
    Ok(Generated {
        spec: Spec {
            cdi_version: "0.5.0".to_owned(),
            kind: KIND.to_owned(),
            devices,
            container_edits: common,
        },
        driver_version: Some(version),
        gpus,
        skipped,
    })
}

fn is_driver_library(path: &Path, suffix: &str) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    name.ends_with(suffix) && LIBRARY_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn ro_mount(host_path: PathBuf, container_path: PathBuf) -> Mount {
    Mount {
        host_path,
        container_path,
        options: ["ro", "nosuid", "nodev", "bind"]
            .map(str::to_owned)
            .to_vec(),
    }
}

/// WSL2: `/dev/dxg`, the libraries Windows' driver puts in `/usr/lib/wsl/lib`, and its driver
/// store directory (`nvidia-ctk`'s WSL mode).
fn generate_wsl(root: &Root) -> Generated {
    let dxg = PathBuf::from("/dev/dxg");
    let host = root.host_path(&dxg);
    let node = DeviceNode {
        host_path: (host != dxg).then_some(host),
        path: dxg,
        ..DeviceNode::default()
    };
    let mut common = Edits {
        env: vec!["NVIDIA_VISIBLE_DEVICES=void".to_owned()],
        ..Edits::default()
    };
    for lib in root.list("/usr/lib/wsl/lib") {
        common.mounts.push(ro_mount(root.host_path(&lib), lib));
    }
    for store in root.list("/usr/lib/wsl/drivers") {
        let is_nvidia = store
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("nv"));
        if is_nvidia {
            common.mounts.push(ro_mount(root.host_path(&store), store));
        }
    }
    let edits = Edits {
        device_nodes: vec![node],
        ..Edits::default()
    };
    Generated {
        spec: Spec {
            cdi_version: "0.5.0".to_owned(),
            kind: KIND.to_owned(),
            devices: vec![
                Device {
                    name: "0".to_owned(),
                    container_edits: edits.clone(),
                },
                Device {
                    name: "all".to_owned(),
                    container_edits: edits,
                },
            ],
            container_edits: common,
        },
        driver_version: None,
        gpus: vec![DriverGpu {
            minor: 0,
            uuid: None,
        }],
        skipped: Vec::new(),
    }
}

// A picture of a Linux driver tree, with its Unix symlinks (containers are Linux-only).
#[cfg(all(test, unix))]
pub(crate) mod tests {
    use super::*;

    /// A fake driver root: regular files stand in for the device nodes (the generator only
    /// needs them to exist; the container tests make real ones with mknod).
    pub(crate) fn fake_driver(dir: &Path, version: &str) {
        let w = |p: &str, s: &str| {
            let f = dir.join(p.trim_start_matches('/'));
            fs_err::create_dir_all(f.parent().unwrap()).unwrap();
            fs_err::write(f, s).unwrap();
        };
        w(
            "/proc/driver/nvidia/version",
            &format!("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  (dvs-builder@U22)\n"),
        );
        w(
            "/proc/driver/nvidia/gpus/0000:19:00.0/information",
            "Model: \t\t NVIDIA H200\nIRQ:   \t\t 0\nGPU UUID: \t GPU-5f3a1b2c-0000-1111-2222-333344445555\nVideo BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t 0000:19:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n",
        );
        for n in ["nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"] {
            w(&format!("/dev/{n}"), "");
        }
        let lib = "/usr/lib/x86_64-linux-gnu";
        for name in [
            "libcuda.so",
            "libnvidia-ml.so",
            "libnvidia-ptxjitcompiler.so",
        ] {
            w(&format!("{lib}/{name}.{version}"), "stand-in");
            std::os::unix::fs::symlink(
                format!("{name}.{version}"),
                dir.join(format!("{}/{name}.1", lib.trim_start_matches('/'))),
            )
            .unwrap();
        }
        std::os::unix::fs::symlink(
            "libcuda.so.1",
            dir.join("usr/lib/x86_64-linux-gnu/libcuda.so"),
        )
        .unwrap();
        // An older driver's library left behind, and a library that is not the driver's.
        w(&format!("{lib}/libcuda.so.535.129.03"), "old");
        w(&format!("{lib}/libc.so.6"), "glibc");
        w("/usr/bin/nvidia-smi", "#!/bin/sh\n");
        w(
            &format!("/lib/firmware/nvidia/{version}/gsp_ga10x.bin"),
            "fw",
        );
    }

    #[test]
    fn the_spec_names_the_driver_files_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        fake_driver(dir.path(), "580.95.05");
        let g = generate(&Root::at(dir.path())).unwrap();
        assert_eq!(g.driver_version.as_deref(), Some("580.95.05"));
        let names: Vec<&str> = g.spec.devices.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            ["0", "GPU-5f3a1b2c-0000-1111-2222-333344445555", "all"]
        );
        let host = |p: &str| dir.path().join(p.trim_start_matches('/'));
        assert_eq!(
            g.spec.devices[0].container_edits.device_nodes,
            vec![DeviceNode {
                path: "/dev/nvidia0".into(),
                host_path: Some(host("/dev/nvidia0")),
                ..DeviceNode::default()
            }]
        );
        let mounts: Vec<(PathBuf, PathBuf)> = g
            .spec
            .container_edits
            .mounts
            .iter()
            .map(|m| (m.host_path.clone(), m.container_path.clone()))
            .collect();
        let lib = "/usr/lib/x86_64-linux-gnu";
        assert!(mounts.contains(&(
            host(&format!("{lib}/libcuda.so.580.95.05")),
            format!("{lib}/libcuda.so.1").into()
        )));
        assert!(mounts.contains(&(
            host(&format!("{lib}/libcuda.so.580.95.05")),
            format!("{lib}/libcuda.so.580.95.05").into()
        )));
        assert!(mounts
            .iter()
            .any(|(_, c)| c == Path::new("/usr/bin/nvidia-smi")));
        assert!(mounts
            .iter()
            .any(|(_, c)| c.ends_with("580.95.05/gsp_ga10x.bin")));
        assert!(!mounts
            .iter()
            .any(|(h, _)| h.ends_with("libcuda.so.535.129.03") || h.ends_with("libc.so.6")));
        // No toolkit: no hook that names a missing program.
        assert!(g.spec.container_edits.hooks.is_empty());
        assert_eq!(g.spec.container_edits.env, ["NVIDIA_VISIBLE_DEVICES=void"]);
        let nodes: Vec<PathBuf> = g
            .spec
            .container_edits
            .device_nodes
            .iter()
            .map(|n| n.path.clone())
            .collect();
        assert_eq!(
            nodes,
            [
                PathBuf::from("/dev/nvidiactl"),
                "/dev/nvidia-uvm".into(),
                "/dev/nvidia-uvm-tools".into()
            ]
        );
    }

    #[test]
    fn with_the_toolkit_its_ldcache_hook_is_added() {
        let dir = tempfile::tempdir().unwrap();
        fake_driver(dir.path(), "570.124.06");
        fs_err::write(dir.path().join("usr/bin/nvidia-cdi-hook"), "").unwrap();
        let g = generate(&Root::at(dir.path())).unwrap();
        let hook = &g.spec.container_edits.hooks[0];
        assert_eq!(
            hook.args,
            [
                "nvidia-cdi-hook",
                "update-ldcache",
                "--folder",
                "/usr/lib/x86_64-linux-gnu"
            ]
        );
    }

    #[test]
    fn no_driver_and_no_devices_are_typed_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            generate(&Root::at(dir.path())),
            Err(GenerateError::NoDriver { .. })
        ));
        fake_driver(dir.path(), "580.95.05");
        fs_err::remove_file(dir.path().join("dev/nvidia0")).unwrap();
        assert!(matches!(
            generate(&Root::at(dir.path())),
            Err(GenerateError::NoDevices { .. })
        ));
    }

    #[test]
    fn a_driver_under_usr_local_nvidia_is_also_mounted_where_the_loader_looks() {
        let dir = tempfile::tempdir().unwrap();
        fake_driver(dir.path(), "580.159.04");
        let from = dir.path().join("usr/lib/x86_64-linux-gnu");
        let to = dir.path().join("usr/local/nvidia/lib64");
        fs_err::create_dir_all(to.parent().unwrap()).unwrap();
        crate::world::fs::publish_dir(&from, &to).unwrap();
        fs_err::create_dir_all(dir.path().join("usr/local/nvidia/bin")).unwrap();
        // /usr/bin/nvidia-smi stays a wrapper script; the program is beside the driver.
        fs_err::write(
            dir.path().join("usr/local/nvidia/bin/nvidia-smi"),
            b"\x7fELF",
        )
        .unwrap();
        let g = generate(&Root::at(dir.path())).unwrap();
        let smi = g
            .spec
            .container_edits
            .mounts
            .iter()
            .find(|m| m.container_path == Path::new("/usr/bin/nvidia-smi"))
            .unwrap();
        assert!(
            smi.host_path.ends_with("usr/local/nvidia/bin/nvidia-smi"),
            "the program, not the wrapper script"
        );
        let containers: Vec<&Path> = g
            .spec
            .container_edits
            .mounts
            .iter()
            .map(|m| m.container_path.as_path())
            .collect();
        for p in [
            "/usr/local/nvidia/lib64/libcuda.so.1",
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
            "/usr/bin/nvidia-smi",
        ] {
            assert!(containers.contains(&Path::new(p)), "{p} in {containers:?}");
        }
    }

    #[test]
    fn wsl2_uses_dxg_and_the_wsl_libraries() {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str| {
            let f = dir.path().join(p);
            fs_err::create_dir_all(f.parent().unwrap()).unwrap();
            fs_err::write(f, "x").unwrap();
        };
        fs_err::create_dir_all(dir.path().join("proc")).unwrap();
        fs_err::write(
            dir.path().join("proc/version"),
            "Linux version 5.15.153.1-microsoft-standard-WSL2",
        )
        .unwrap();
        w("dev/dxg");
        w("usr/lib/wsl/lib/libcuda.so.1");
        w("usr/lib/wsl/lib/libdxcore.so");
        w("usr/lib/wsl/drivers/nvmdi.inf_amd64_0123/nvidia-smi");
        let g = generate(&Root::at(dir.path())).unwrap();
        assert_eq!(g.driver_version, None);
        assert_eq!(g.spec.container_edits.mounts.len(), 3);
    }
}
