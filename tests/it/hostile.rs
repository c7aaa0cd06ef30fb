//! The attacker's kit for the `hostile_*` tests: archives, wheels, redistrib mirrors and wheel
//! indexes built here, byte by byte, by the tests themselves (no Python, no fixtures), a sandbox
//! with an isolated HOME and CUDAUP_HOME, and a canary directory outside every prefix whose
//! snapshot must not change.
//!
//! The mirror is CUDA 13.0.2's seven redist components (`manifests/components.toml`), each a
//! tiny tar.gz in NVIDIA's shape (`<component>-linux-x86_64-<version>-archive/...`), or the
//! same files as NVIDIA wheels (`nvidia/cu13/...`) on a PEP 503 directory index that states no
//! sizes. Any component's members can be replaced by hostile ones.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::common::*;

pub const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// The redist components of CUDA 13 and the versions of 13.0.2.
pub const COMPONENTS: [(&str, &str); 7] = [
    ("cuda_nvcc", "13.0.88"),
    ("cuda_crt", "13.0.88"),
    ("libnvvm", "13.0.88"),
    ("cuda_cudart", "13.0.96"),
    ("cuda_cccl", "13.0.85"),
    ("cuda_nvrtc", "13.0.88"),
    ("libcublas", "13.1.0.3"),
];

/// The wheels of the CUDA 13 wheel route, with the redist component whose files they carry.
pub const WHEELS: [(&str, &str); 6] = [
    ("nvidia-cuda-nvcc", "cuda_nvcc"),
    ("nvidia-cuda-crt", "cuda_crt"),
    ("nvidia-nvvm", "libnvvm"),
    ("nvidia-cuda-runtime", "cuda_cudart"),
    ("nvidia-cuda-cccl", "cuda_cccl"),
    ("nvidia-cuda-nvrtc", "cuda_nvrtc"),
];

/// One archive member, its path relative to the component's root.
#[derive(Clone, Debug)]
pub enum Member {
    File(String, Vec<u8>),
    /// An executable file (mode 0755).
    Exe(String, Vec<u8>),
    Dir(String),
    Link(String, String),
}

pub fn file(path: &str, contents: &str) -> Member {
    Member::File(path.into(), contents.as_bytes().to_vec())
}

/// A `bin/nvcc` that answers `--version` like CUDA 13.0.2's, so detect sees the toolkit.
pub fn nvcc() -> Member {
    Member::Exe(
        "bin/nvcc".into(),
        b"#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n".to_vec(),
    )
}

pub fn link(path: &str, target: &str) -> Member {
    Member::Link(path.into(), target.into())
}

pub fn dir(path: &str) -> Member {
    Member::Dir(path.into())
}

/// What a harmless component holds.
pub fn harmless(component: &str) -> Vec<Member> {
    vec![
        file("LICENSE", &format!("{component} license\n")),
        file(
            &format!("include/{component}.h"),
            &format!("#define {} 1\n", component.to_uppercase()),
        ),
    ]
}

/// A tar.gz with every member under `top/`.
pub fn tar_gz(top: &str, members: &[Member]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut dir_header = tar::Header::new_gnu();
    dir_header.set_entry_type(tar::EntryType::Directory);
    dir_header.set_mode(0o755);
    dir_header.set_size(0);
    tar.append_data(&mut dir_header, format!("{top}/"), std::io::empty())
        .unwrap();
    for m in members {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(1_700_000_000);
        match m {
            Member::File(p, bytes) | Member::Exe(p, bytes) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(if matches!(m, Member::Exe(..)) {
                    0o755
                } else {
                    0o644
                });
                h.set_size(bytes.len() as u64);
                tar.append_data(&mut h, format!("{top}/{p}"), &bytes[..])
                    .unwrap();
            }
            Member::Dir(p) => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                tar.append_data(&mut h, format!("{top}/{p}/"), std::io::empty())
                    .unwrap();
            }
            Member::Link(p, target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                tar.append_link(&mut h, format!("{top}/{p}"), target)
                    .unwrap();
            }
        }
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// An NVIDIA-style wheel: members under `nvidia/cu13/`, symlinks as zip symlinks.
pub fn wheel(project: &str, version: &str, members: &[Member]) -> (String, Vec<u8>) {
    let dist = project.replace('-', "_");
    let name = format!("{dist}-{version}-py3-none-manylinux_2_27_x86_64.whl");
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    for m in members {
        match m {
            Member::File(p, bytes) => {
                zip.start_file(format!("nvidia/cu13/{p}"), opts).unwrap();
                zip.write_all(bytes).unwrap();
            }
            Member::Exe(p, bytes) => {
                zip.start_file(format!("nvidia/cu13/{p}"), opts.unix_permissions(0o755))
                    .unwrap();
                zip.write_all(bytes).unwrap();
            }
            Member::Dir(p) => zip
                .add_directory(format!("nvidia/cu13/{p}/"), opts)
                .unwrap(),
            Member::Link(p, target) => zip
                .add_symlink(format!("nvidia/cu13/{p}"), target, opts)
                .unwrap(),
        }
    }
    let info = format!("{dist}-{version}.dist-info");
    zip.start_file(format!("{info}/METADATA"), opts).unwrap();
    write!(
        zip,
        "Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n"
    )
    .unwrap();
    (name, zip.finish().unwrap().into_inner())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A CUDA 13.0.2 redist mirror (no cuDNN: install with `--no-cudnn`).
pub struct Redist {
    pub dir: tempfile::TempDir,
}

impl Redist {
    /// Every component harmless except those in `overrides`.
    pub fn new(overrides: &[(&str, Vec<Member>)]) -> Redist {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("compute/cuda/redist");
        let mut doc = serde_json::json!({
            "release_date": "2025-10-09",
            "release_label": "13.0.2",
            "release_product": "cuda",
        });
        for (component, version) in COMPONENTS {
            let members = overrides
                .iter()
                .find(|(c, _)| *c == component)
                .map(|(_, m)| m.clone())
                .unwrap_or_else(|| harmless(component));
            let top = format!("{component}-linux-x86_64-{version}-archive");
            let bytes = tar_gz(&top, &members);
            let rel = format!("{component}/linux-x86_64/{top}.tar.gz");
            fs_err::create_dir_all(base.join(&rel).parent().unwrap()).unwrap();
            fs_err::write(base.join(&rel), &bytes).unwrap();
            doc[component] = serde_json::json!({
                "name": component, "license": "CUDA Toolkit", "version": version,
                "linux-x86_64": {
                    "relative_path": rel, "sha256": sha256_hex(&bytes),
                    "size": bytes.len().to_string(),
                },
            });
        }
        fs_err::write(
            base.join("redistrib_13.0.2.json"),
            serde_json::to_string_pretty(&doc).unwrap(),
        )
        .unwrap();
        Redist { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn arg(&self) -> String {
        self.dir.path().display().to_string()
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir
            .path()
            .join("compute/cuda/redist/redistrib_13.0.2.json")
    }

    /// Rewrites the redistrib JSON through `edit`.
    pub fn edit(&self, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut doc: serde_json::Value =
            serde_json::from_slice(&fs_err::read(self.manifest()).unwrap()).unwrap();
        edit(&mut doc);
        fs_err::write(self.manifest(), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }

    /// The URL path (from the mirror's root) of `component`'s archive.
    pub fn archive_path(&self, component: &str) -> String {
        let doc: serde_json::Value =
            serde_json::from_slice(&fs_err::read(self.manifest()).unwrap()).unwrap();
        format!(
            "/compute/cuda/redist/{}",
            doc[component]["linux-x86_64"]["relative_path"]
                .as_str()
                .unwrap()
        )
    }
}

/// The CUDA 13 wheels on a PEP 503 directory index (no sizes stated), harmless except those in
/// `overrides` (keyed by the redist component whose files the wheel carries).
pub fn wheel_index(overrides: &[(&str, Vec<Member>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let built = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (project, component) in WHEELS {
        let members = overrides
            .iter()
            .find(|(c, _)| *c == component)
            .map(|(_, m)| m.clone())
            .unwrap_or_else(|| harmless(component)[1..].to_vec());
        // The versions CUDA 13.0.2's cuda-toolkit metapackage pins (the redist ones).
        let version = COMPONENTS
            .iter()
            .find(|(c, _)| *c == component)
            .map_or("13.0.88", |(_, v)| *v);
        let (name, bytes) = wheel(project, version, &members);
        let p = built.path().join(name);
        fs_err::write(&p, bytes).unwrap();
        paths.push(p);
    }
    crate::common::wheels::write_index(dir.path(), &paths);
    dir
}

/// Every entry under `dir`: kind, bytes or target, and mode.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(rd) = fs_err::read_dir(dir) else {
            return;
        };
        for e in rd {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_owned();
            let meta = fs_err::symlink_metadata(&p).unwrap();
            let mode = meta.permissions().mode();
            if meta.file_type().is_symlink() {
                out.insert(rel, format!("link {:?}", fs_err::read_link(&p).unwrap()));
            } else if meta.is_dir() {
                out.insert(rel, format!("dir {mode:o}"));
                walk(root, &p, out);
            } else {
                let bytes = fs_err::read(&p).unwrap();
                out.insert(rel, format!("file {mode:o} {}", sha256_hex(&bytes)));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// An isolated user on a [`TestContext`]: HOME, a CUDAUP_HOME inside it, an rc file of their
/// own, bash as their shell, a `PATH` with nothing of the host's on it (no Python to probe, no
/// fish or zsh to hook), the H200 picture, and a `root` directory holding prefixes
/// (`root/a/b/cuda`) and the canary (`root/canary`), so a link that climbs four levels out of a
/// staging directory lands in the canary.
pub struct Sandbox {
    pub ctx: TestContext,
    before: BTreeMap<PathBuf, String>,
    bashrc: Vec<u8>,
}

pub const BASHRC: &[u8] = b"alias ll='ls -l'\nexport EDITOR=vim\n";

impl Sandbox {
    pub fn new() -> Sandbox {
        let ctx = TestContext::new()
            .with_bare_path()
            .with_system_file(Path::new(H200))
            .with_env("SHELL", "/bin/bash");
        fs_err::write(ctx.home().join(".bashrc"), BASHRC).unwrap();
        let canary = ctx.dir().join("root/canary");
        fs_err::create_dir_all(canary.join("sub")).unwrap();
        fs_err::write(canary.join("victim"), "precious\n").unwrap();
        fs_err::write(canary.join("sub/deep"), "also precious\n").unwrap();
        fs_err::write(canary.join("a.h"), "the user's header\n").unwrap();
        let before = snapshot(&canary);
        Sandbox {
            ctx,
            before,
            bashrc: BASHRC.to_vec(),
        }
    }

    /// The user's HOME.
    pub fn home(&self) -> PathBuf {
        self.ctx.home()
    }

    /// The directory of prefixes and the canary, beside HOME.
    pub fn root(&self) -> PathBuf {
        self.ctx.dir().join("root")
    }

    pub fn cudaup_home(&self) -> PathBuf {
        self.ctx.cudaup_home()
    }

    pub fn canary(&self) -> PathBuf {
        self.root().join("canary")
    }

    /// The prefix four levels below `root`'s parent... see [`Sandbox`].
    pub fn prefix(&self) -> PathBuf {
        self.root().join("a/b/cuda")
    }

    /// Runs cudaup with this sandbox's HOME and `--home`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        crate::common::context::run(&mut self.command(args, env))
    }

    /// cudaup with this sandbox's HOME and `--home` ([`TestContext::command`]), then `env`.
    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Command {
        let mut cmd = self.ctx.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// The install arguments for a toolkit from `source` into `prefix` (None: the default
    /// prefix under CUDAUP_HOME), planned for the H200 picture, driver kept.
    pub fn install_args(&self, source: &[&str], prefix: Option<&Path>) -> Vec<String> {
        let system = self.ctx.system_arg();
        let mut args: Vec<String> = [
            "install",
            "--system",
            system.as_str(),
            "--driver",
            "keep",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--no-cudnn",
            "--yes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(source.iter().map(|s| s.to_string()));
        // Exactly what the kit serves: the seven archives (`minimal`), or the six wheels
        // (NVIDIA's cuBLAS wheel is not among them).
        args.push("--components".into());
        args.push(
            if source.contains(&"wheels") {
                "minimal,-cublas"
            } else {
                "minimal"
            }
            .into(),
        );
        if let Some(p) = prefix {
            args.push("--prefix".into());
            args.push(p.display().to_string());
        }
        args
    }

    pub fn install(&self, source: &[&str], prefix: Option<&Path>) -> Run {
        self.install_env(source, prefix, &[])
    }

    pub fn install_env(&self, source: &[&str], prefix: Option<&Path>, env: &[(&str, &str)]) -> Run {
        let args = self.install_args(source, prefix);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run_env(&refs, env)
    }

    pub fn uninstall(&self) -> Run {
        self.run(&["uninstall", "--yes"])
    }

    /// The canary is byte-identical to what it was.
    pub fn assert_canary(&self, what: &str) {
        assert_eq!(
            snapshot(&self.canary()),
            self.before,
            "{what}: something outside the prefix changed"
        );
    }

    /// Nothing is left of cudaup: no prefix, no litter beside it, HOME as it was (the cache may
    /// stay), the user's rc file byte for byte.
    pub fn assert_clean(&self, what: &str) {
        self.assert_canary(what);
        assert_eq!(
            fs_err::read(self.home().join(".bashrc")).unwrap(),
            self.bashrc,
            "{what}: .bashrc is not what it was"
        );
        let parent = self.prefix().parent().unwrap().to_owned();
        let left: Vec<String> = fs_err::read_dir(&parent)
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(left.is_empty(), "{what}: left beside the prefix: {left:?}");
        let cudaup_home = self.cudaup_home();
        let cudaup_home = cudaup_home.file_name().unwrap();
        let home_left: Vec<String> = fs_err::read_dir(self.home())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != ".bashrc" && n.as_str() != cudaup_home)
            .collect();
        assert!(home_left.is_empty(), "{what}: left in HOME: {home_left:?}");
        // The home's marker stays as long as cudaup's cache does (so `--purge` still works).
        let cache_left = self.cudaup_home().join("cache").exists();
        let cudaup_left: Vec<String> = fs_err::read_dir(self.cudaup_home())
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| n != "cache" && !(cache_left && n == ".cudaup-home"))
                    .collect()
            })
            .unwrap_or_default();
        // What a folder left holds, so a rare leftover names itself (seen once per few CI runs
        // of the random-kill test: `receipts` after a kill near 300 ms on a cold cache).
        let inside: Vec<String> = cudaup_left
            .iter()
            .filter_map(|n| fs_err::read_dir(self.cudaup_home().join(n)).ok())
            .flat_map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path().display().to_string())
            })
            .collect();
        assert!(
            cudaup_left.is_empty(),
            "{what}: left in CUDAUP_HOME: {cudaup_left:?} (holding {inside:?})"
        );
    }

    /// A hostile install was refused with exit 4 and left nothing; then `uninstall` runs and
    /// still touches nothing outside.
    pub fn assert_refused(&self, run: &Run, needle: &str, what: &str) {
        assert_eq!(run.code, 4, "{what}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(needle),
            "{what}: `{needle}` not in:\n{}",
            run.stderr
        );
        self.assert_canary(what);
        let un = self.uninstall();
        assert_eq!(un.code, 0, "{what}: uninstall: {}", un.stderr);
        self.assert_clean(what);
    }
}

/// Starts cudaup with this sandbox's HOME, parked at `checkpoint` (CUDAUP_TEST_CHECKPOINT);
/// returns once it says so, for the caller to kill.
pub fn parked(sb: &Sandbox, args: &[String], checkpoint: &str) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    let mut child = sb.spawn(args, &[("CUDAUP_TEST_CHECKPOINT", checkpoint)]);
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = std::time::Instant::now();
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(line) if line.contains("parked at checkpoint") => return child,
            Ok(line) => seen.push(line),
            Err(_) => {}
        }
        assert!(
            started.elapsed().as_secs() < 60,
            "{checkpoint}: never parked: {seen:?}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "{checkpoint}: exited: {seen:?}"
        );
    }
}

impl Sandbox {
    /// Starts cudaup (this sandbox's HOME and `--home`), stdout discarded, stderr piped.
    pub fn spawn(&self, args: &[String], env: &[(&str, &str)]) -> std::process::Child {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.command(&args, env)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cudaup starts")
    }
}

/// SIGKILL, and reap.
pub fn kill(mut child: std::process::Child) {
    let _ = child.kill();
    let _ = child.wait();
}
