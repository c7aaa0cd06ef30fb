//! Shared test scaffolding: a hermetic way to run the cudaup binary, and builders for captured
//! system-root trees.

#![allow(dead_code)]

pub mod server;
pub mod wheels;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The output of one cudaup run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }
}

/// Runs the real binary with a scrubbed environment: a temporary HOME, no colours, no NVML
/// (tests must not depend on the machine they run on unless they say so).
pub fn cudaup(args: &[&str], home: &Path) -> Run {
    cudaup_env(args, home, &[])
}

/// Like [`cudaup`], with extra environment variables.
pub fn cudaup_env(args: &[&str], home: &Path, env: &[(&str, &str)]) -> Run {
    cudaup_exe(Path::new(env!("CARGO_BIN_EXE_cudaup")), args, home, env)
}

/// Like [`cudaup_env`], running `exe`: the cudaup binary or a copy of it (another build, the
/// copy in `$CUDAUP_HOME/bin`).
pub fn cudaup_exe(exe: &Path, args: &[&str], home: &Path, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(exe);
    // Run in HOME so a relative path a test passes can never land in the checkout.
    cmd.args(args)
        .current_dir(home)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("NO_COLOR", "1")
        .env("CUDAUP_NO_NVML", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the cudaup binary runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A captured machine: a directory standing for `/`.
pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn root_arg(&self) -> String {
        self.path().display().to_string()
    }

    fn host(&self, machine_path: &str) -> PathBuf {
        self.path().join(machine_path.trim_start_matches('/'))
    }

    /// Writes a file (creating its directories).
    pub fn file(&self, machine_path: &str, contents: impl AsRef<[u8]>) -> &Self {
        let p = self.host(machine_path);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        fs_err::write(p, contents).unwrap();
        self
    }

    /// Creates a directory.
    pub fn dir(&self, machine_path: &str) -> &Self {
        fs_err::create_dir_all(self.host(machine_path)).unwrap();
        self
    }

    /// Creates a symlink `machine_path` → `target` (as written in the link).
    pub fn symlink(&self, machine_path: &str, target: &str) -> &Self {
        let p = self.host(machine_path);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, p).unwrap();
        self
    }

    /// A PCI function with the given ids and class.
    pub fn pci(&self, slot: &str, vendor: u16, device: u16, class: u32) -> &Self {
        let d = format!("/sys/bus/pci/devices/{slot}");
        self.file(&format!("{d}/vendor"), format!("0x{vendor:04x}\n"));
        self.file(&format!("{d}/device"), format!("0x{device:04x}\n"));
        self.file(&format!("{d}/class"), format!("0x{class:06x}\n"))
    }

    pub fn os_release(&self, text: &str) -> &Self {
        self.file("/etc/os-release", text)
    }

    pub fn proc_version(&self, text: &str) -> &Self {
        self.file("/proc/version", text)
    }

    /// A loaded NVIDIA kernel module of `version`, open or proprietary.
    pub fn nvidia_module(&self, version: &str, open: bool) -> &Self {
        let line = if open {
            format!("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {version}  Release Build  (dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:55:41 UTC 2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n")
        } else {
            format!("NVRM version: NVIDIA UNIX x86_64 Kernel Module  {version}  Thu Oct 19 18:56:32 UTC 2023\nGCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
        };
        self.file("/proc/driver/nvidia/version", line);
        self.file("/sys/module/nvidia/version", format!("{version}\n"));
        self.file(
            "/proc/modules",
            "nvidia_uvm 1790976 0 - Live 0x0000000000000000\nnvidia 60162048 1 nvidia_uvm, Live 0x0000000000000000 (POE)\n",
        )
    }

    /// A Python venv with an optional torch (version.py text).
    pub fn venv(&self, root: &str, python: &str, torch_version_py: Option<&str>) -> &Self {
        let minor: String = python.split('.').take(2).collect::<Vec<_>>().join(".");
        self.file(
            &format!("{root}/pyvenv.cfg"),
            format!("home = /usr/bin\ninclude-system-site-packages = false\nversion = {python}\n"),
        );
        self.file(&format!("{root}/bin/python3"), "");
        let site = format!("{root}/lib/python{minor}/site-packages");
        self.dir(&site);
        if let Some(text) = torch_version_py {
            self.file(&format!("{site}/torch/version.py"), text);
        }
        self
    }
}

pub const UBUNTU_2404: &str = "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nVERSION=\"24.04.3 LTS (Noble Numbat)\"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n";
pub const UBUNTU_2204: &str = "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nID_LIKE=debian\n";
pub const LINUX_VERSION: &str = "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024\n";
pub const TORCH_CU130: &str = "__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n";
pub const TORCH_CPU: &str = "__version__ = '2.11.0+cpu'\ndebug = False\ncuda: Optional[str] = None\nhip: Optional[str] = None\n";

/// A synthetic mirror in NVIDIA's layout (CUDA 13.0.2, cuDNN 9.17.0), made by
/// `scripts/make-synthetic-mirror.py` with `extra` options (`--evil`, `--pad-mib N`).
pub fn synthetic_mirror(extra: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/make-synthetic-mirror.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(dir.path())
        .args(extra)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Starts `cmd` (a cudaup run with `CUDAUP_TEST_CHECKPOINT=checkpoint`), waits (at most two
/// minutes) until it parks at that checkpoint, and kills it there.
pub fn kill_at_checkpoint(mut cmd: Command, checkpoint: &str) {
    use std::io::BufRead;
    use std::time::{Duration, Instant};
    let mut child = cmd
        .env("CUDAUP_TEST_CHECKPOINT", checkpoint)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.contains("parked at checkpoint") => break,
            Ok(line) => seen.push(line),
            Err(_) => {}
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{checkpoint}: never parked: {seen:?}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "{checkpoint}: exited early: {seen:?}"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Real wheels from PyPI (`pip download --no-deps` of `requirements`, once per `platforms` entry:
/// `None` is this machine's), cached under the test target directory as `cache` so only the
/// first run needs the network.
pub fn pypi_wheels(cache: &str, requirements: &[&str], platforms: &[Option<&str>]) -> PathBuf {
    let wheels = Path::new(env!("CARGO_TARGET_TMPDIR")).join(cache);
    if !wheels.join("done").exists() {
        for platform in platforms {
            let mut cmd = Command::new("python3");
            cmd.args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
                .arg(&wheels);
            if let Some(p) = platform {
                cmd.args(["--platform", p, "--only-binary=:all:"]);
            }
            let out = cmd.args(requirements).output().expect("pip runs");
            assert!(
                out.status.success(),
                "pip download: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        fs_err::write(wheels.join("done"), "").unwrap();
    }
    wheels
}

/// A PEP 503 index of the wheels in `wheels` (scripts/make-wheel-mirror.py), under `simple/`.
pub fn wheel_index(wheels: &Path) -> tempfile::TempDir {
    let index = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/make-wheel-mirror.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(wheels)
        .arg(index.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    index
}
