//! Shared test scaffolding: a hermetic way to run the cudaup binary, and builders for captured
//! system-root trees.

#![allow(dead_code)]

pub mod context;
pub mod mirror;
pub mod pty;
pub mod pytorch;
pub mod server;
pub mod wheels;

pub use context::TestContext;
pub use mirror::synthetic_mirror;

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

    /// stdout read back as `install --json`'s document, the library's own type.
    pub fn outcome(&self) -> cudaup::install::report::Outcome {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not an install outcome ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// The installed shape of [`Self::outcome`]; any other shape fails the test.
    pub fn installed(&self) -> cudaup::install::report::Installed {
        match self.outcome() {
            cudaup::install::report::Outcome::Installed(done) => *done,
            other => panic!("not the installed shape: {other:?}"),
        }
    }
}

/// Runs the real binary with a scrubbed environment: a temporary HOME, no colours, no NVML, a
/// `PATH` of [`tools`] only and the test guard set (tests must not depend on the machine they
/// run on).
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
    cmd.args(args).current_dir(home);
    hermetic(&mut cmd, home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = guarded_output(&mut cmd);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The environment every command a test starts gets: nothing of the caller's but what is set
/// here — HOME, a `PATH` of [`tools`] only, no colours, no NVML, and the test guard naming the
/// running test (so the host's `nvidia-smi`, NVML and privileged commands are refused).
pub fn hermetic<'a>(cmd: &'a mut Command, home: &Path) -> &'a mut Command {
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", tools_path())
        .env("NO_COLOR", "1")
        .env("CUDAUP_NO_NVML", "1")
        .env(cudaup::world::vars::CUDAUP_TEST_GUARD, test_name())
}

/// `cmd` run through `wrapper args…` (a shell that sets a limit, then `exec "$@"`s the rest):
/// the same program and arguments after the wrapper's, in the same directory with the same
/// environment (and nothing else: `cmd` is built on [`hermetic`]).
pub fn through(cmd: &Command, wrapper: &Path, args: &[&str]) -> Command {
    let mut out = Command::new(wrapper);
    out.args(args)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear();
    if let Some(dir) = cmd.get_current_dir() {
        out.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            out.env(k, v);
        }
    }
    out
}

/// The test guard's variable: set to the running test's name on every command a test starts.
pub const GUARD: &str = cudaup::world::vars::CUDAUP_TEST_GUARD;

/// The name of the running test (the harness names each test's thread after it).
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("an unnamed test thread")
        .to_owned()
}

/// Runs `cmd` to the end and fails the test if the guard refused anything in it.
pub fn guarded_output(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().expect("the command runs");
    assert_unguarded(&String::from_utf8_lossy(&out.stderr));
    out
}

/// Fails the test if `output` (a command's stderr, or a terminal's text) carries the guard's
/// refusal: a test that reached for the host's machine is wrong even when it would pass.
pub fn assert_unguarded(output: &str) {
    let marker = cudaup::world::runner::GUARD_MARKER;
    if let Some(line) = output.lines().find(|l| l.contains(marker)) {
        panic!("{line}\n--- the whole output ---\n{output}");
    }
}

/// Program names a test must never find on the host: the guard's list, and the driver's and the
/// CUDA toolkit's own programs (a lab machine's `/usr/bin/nvcc` is not a test's toolkit).
fn host_only(name: &str) -> bool {
    cudaup::world::runner::GUARDED_PROGRAMS.contains(&name)
        || name.starts_with("nvidia")
        || name.starts_with("cuda")
        || matches!(
            name,
            "nvcc" | "ptxas" | "nvlink" | "fatbinary" | "nvdisasm" | "cuobjdump" | "nvprune"
        )
}

/// A directory of links to the host's ordinary tools (`/usr/bin` and `/bin`: shells, Python, a
/// C compiler, tar, …) without [`host_only`] ones, made once per test run: the `PATH` every test
/// command gets, so no test finds the host's `nvidia-smi` or `sudo` even on a GPU machine.
pub fn tools() -> &'static Path {
    static TOOLS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        let dir = run_dir().join("bin");
        fs_err::create_dir_all(&dir).unwrap();
        for host_dir in ["/usr/bin", "/bin"] {
            let Ok(entries) = std::fs::read_dir(host_dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(n) = name.to_str() else { continue };
                let link = dir.join(n);
                if host_only(n) || link.symlink_metadata().is_ok() {
                    continue;
                }
                std::os::unix::fs::symlink(entry.path(), link).unwrap();
            }
        }
        dir
    })
}

/// This test process's own directory under the target directory (the host's tools may change
/// between runs, so each run makes its own); those of finished runs are removed.
pub fn run_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let parent = Path::new(env!("CARGO_TARGET_TMPDIR"));
        for old in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = old.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("test-run.") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = fs_err::remove_dir_all(old.path());
                }
            }
        }
        let dir = parent.join(format!("test-run.{}", std::process::id()));
        let _ = fs_err::remove_dir_all(&dir);
        fs_err::create_dir_all(&dir).unwrap();
        dir
    })
}

/// [`tools`] as a `PATH` value.
pub fn tools_path() -> String {
    tools().display().to_string()
}

/// `dir` in front of [`tools`], as a `PATH` value.
pub fn path_with(dirs: &[&Path]) -> String {
    let mut parts: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    parts.push(tools_path());
    parts.join(":")
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

/// A captured machine with no GPU and no driver: Ubuntu 24.04 on x86_64. The `--system-root`
/// of a test that only needs "some machine without a GPU".
pub fn no_gpu_tree() -> Tree {
    let t = Tree::new();
    t.os_release(UBUNTU_2404)
        .proc_version(LINUX_VERSION)
        .file("/proc/stat", "cpu  1 2 3 4\nbtime 1000\n");
    t
}

pub const UBUNTU_2404: &str = "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nVERSION=\"24.04.3 LTS (Noble Numbat)\"\nVERSION_CODENAME=noble\nID=ubuntu\nID_LIKE=debian\n";
pub const UBUNTU_2204: &str = "PRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nID_LIKE=debian\n";
pub const LINUX_VERSION: &str = "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024\n";
pub const TORCH_CU130: &str = "__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n";
pub const TORCH_CPU: &str = "__version__ = '2.11.0+cpu'\ndebug = False\ncuda: Optional[str] = None\nhip: Optional[str] = None\n";

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

/// A PEP 503 index of the wheels in the directory `wheels`, laid out as
/// `scripts/make-wheel-mirror.py` lays out a mirror: `packages/` (hard links) and `simple/`.
pub fn wheel_index(wheels: &Path) -> tempfile::TempDir {
    let index = tempfile::tempdir().unwrap();
    let mut found: Vec<PathBuf> = fs_err::read_dir(wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    found.sort();
    wheels::write_index_with(
        &index.path().join("simple"),
        &found,
        Some(&index.path().join("packages")),
    );
    index
}

/// A picture (`detect --json`) of a machine with no GPU and no driver — this machine's OS
/// family and architecture, and its Python (the one a venv made here would get) — written once
/// per test run: the `--system` an install test plans for, so no test plans for the host it
/// happens to run on.
pub fn no_gpu_system() -> &'static str {
    static FILE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let file = run_dir().join("no-gpu-system.json");
        fs_err::write(
            &file,
            serde_json::to_vec_pretty(&no_gpu_system_json()).unwrap(),
        )
        .unwrap();
        file.display().to_string()
    })
}

/// The document [`no_gpu_system`] writes.
pub fn no_gpu_system_json() -> serde_json::Value {
    let (python, version) = local_python();
    serde_json::json!({
        "schema_version": 1,
        "os": {
            "family": "linux", "distro": "ubuntu", "version": "24.04",
            "arch": std::env::consts::ARCH, "kernel": "6.8.0-45-generic",
            "wsl": false, "secure_boot": null
        },
        "gpus": [], "driver": null, "nouveau_loaded": false,
        "toolkits": [], "cudnn": [],
        "pythons": [{"path": python, "version": version, "torch": null, "tensorflow": null}]
    })
}

/// The `python3` on the tests' `PATH` and its version (`3.11.2`).
pub fn local_python() -> (String, String) {
    let python = tools().join("python3");
    let out = Command::new(&python)
        .args(["-c", "import platform; print(platform.python_version())"])
        .output()
        .expect("python3 runs");
    (
        python.display().to_string(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// Records a skipped test where `.ci/run` counts and prints it (`skipped-tests.txt`), and says
/// so on stderr.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write as _;
    let line = format!("{test}: {why}");
    #[allow(clippy::print_stderr)] // a skip must be seen, and counted (below)
    {
        eprintln!("SKIPPED {line}");
    }
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    let mut f = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}
