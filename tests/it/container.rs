//! `cudaup container`: engines read from their real `info` documents (recorded, served by
//! stand-in programs on PATH), setup's edits undone byte for byte by `cudaup uninstall`, the
//! doctor's checks on pictures, the Dockerfile of a plan, and — as root with Podman installed
//! (`.ci/run` installs it) — a real container that sees the devices and libraries of a CDI spec
//! cudaup wrote over a fake driver root.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

/// Records a skipped test where `.ci/run` counts and prints it, and says so on stderr.
fn skipped(test: &str, why: &str) {
    let line = format!("{test}: {why}");
    #[allow(clippy::print_stderr)] // a skip must be seen, and counted
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

/// Docker 28.2.2's `docker info --format '{{json .}}'`, trimmed (rootful, CDI on).
pub(crate) const DOCKER_28: &str = r#"{"ServerVersion":"28.2.2","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"DefaultRuntime":"runc","SecurityOptions":["name=seccomp,profile=builtin","name=cgroupns"],"CDISpecDirs":["/etc/cdi","/var/run/cdi"],"OperatingSystem":"Ubuntu 24.04.1 LTS"}"#;
/// Docker 26 without the CDI feature.
pub(crate) const DOCKER_26: &str = r#"{"ServerVersion":"26.1.4","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"DefaultRuntime":"runc","SecurityOptions":["name=seccomp,profile=builtin"]}"#;
/// Rootless Docker 20.10 (Debian 12's docker.io), which predates CDI.
pub(crate) const DOCKER_20_ROOTLESS: &str = r#"{"ServerVersion":"20.10.24+dfsg1","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"DefaultRuntime":"runc","SecurityOptions":["name=seccomp,profile=default","name=rootless","name=cgroupns"]}"#;
/// Podman 4.3.1 (Debian 12) as a user.
pub(crate) const PODMAN_4_3_ROOTLESS: &str = r#"{"host":{"cgroupManager":"systemd","cgroupVersion":"v2","ociRuntime":{"name":"crun"},"security":{"rootless":true,"selinuxEnabled":false}},"version":{"Version":"4.3.1"}}"#;

/// A directory of stand-in programs: each prints a recorded answer. Written as
/// [`TestContext::stand_in`] writes its own (`write_exe`), and put in front of the same host
/// tools (`path_with`), so no host engine, `nvidia-ctk` or `nvidia-smi` is found behind them.
pub(crate) struct Bin(tempfile::TempDir);

impl Bin {
    pub(crate) fn new() -> Self {
        Bin(tempfile::tempdir().unwrap())
    }
    pub(crate) fn program(&self, name: &str, script: &str) -> &Self {
        crate::common::context::write_exe(
            &self.0.path().join(name),
            &format!("#!/bin/sh\n{script}\n"),
        );
        self
    }
    /// An engine whose `info` prints `default`, and `other` when asked at `-H`.
    pub(crate) fn engine(&self, name: &str, default: &str, other: Option<&str>) -> &Self {
        let other = other.unwrap_or(default);
        self.program(
            name,
            &format!("case \"$1\" in -H) echo '{other}' ;; info) echo '{default}' ;; *) echo \"unexpected: $*\" >&2; exit 2 ;; esac"),
        )
    }
    pub(crate) fn path(&self) -> String {
        path_with(&[self.0.path()])
    }
}

/// A fake driver root: /proc's driver files, device nodes (real ones made with mknod when root,
/// else empty files), stand-in libraries with their SONAME links, nvidia-smi, firmware.
pub(crate) fn fake_driver(tree: &Tree, version: &str, real_nodes: bool) {
    tree.nvidia_module(version, true);
    tree.file(
        "/proc/driver/nvidia/gpus/0000:19:00.0/information",
        "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-5f3a1b2c-0000-1111-2222-333344445555\nDevice Minor: \t 0\n",
    );
    for (name, minor) in [("nvidia0", 0), ("nvidiactl", 255), ("nvidia-uvm", 254)] {
        let p = tree.path().join("dev").join(name);
        fs_err::create_dir_all(p.parent().unwrap()).unwrap();
        if real_nodes {
            let st = Command::new("mknod")
                .arg(&p)
                .arg("c")
                .arg("195")
                .arg(minor.to_string())
                .status()
                .unwrap();
            assert!(st.success(), "mknod {}", p.display());
            fs_err::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        } else {
            fs_err::write(&p, "").unwrap();
        }
    }
    let lib = "/usr/lib/x86_64-linux-gnu";
    for name in [
        "libcuda.so",
        "libnvidia-ml.so",
        "libnvidia-ptxjitcompiler.so",
    ] {
        tree.file(
            &format!("{lib}/{name}.{version}"),
            format!("stand-in {name} {version}\n"),
        );
        tree.symlink(&format!("{lib}/{name}.1"), &format!("{name}.{version}"));
    }
    tree.file(
        "/usr/bin/nvidia-smi",
        "#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-5f3a1b2c-0000-1111-2222-333344445555)'\n",
    );
    fs_err::set_permissions(
        tree.path().join("usr/bin/nvidia-smi"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    tree.file(
        &format!("/lib/firmware/nvidia/{version}/gsp_ga10x.bin"),
        "firmware",
    );
}

/// `container setup --engine ENGINE` over a host picture, a root prefix and a driver root.
fn setup_args(engine: &str, host: &Tree, prefix: &Path, driver: &Tree) -> Vec<String> {
    [
        "container",
        "setup",
        "--engine",
        engine,
        "--system-root",
        &host.root_arg(),
        "--root-prefix",
        prefix.to_str().unwrap(),
        "--driver-root",
        driver.path().to_str().unwrap(),
    ]
    .map(str::to_owned)
    .to_vec()
}

pub(crate) fn host_picture(uid: u32) -> Tree {
    let t = Tree::new();
    t.file(
        "/proc/self/status",
        format!("Name:\tcudaup\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n"),
    );
    t.file("/sys/fs/cgroup/cgroup.controllers", "cpu memory io pids\n");
    t.os_release("ID=ubuntu\nVERSION_ID=\"24.04\"\n");
    t
}

#[test]
fn container_plan_reads_every_engines_info_and_explains_the_choice() {
    let home = tempfile::tempdir().unwrap();
    let bin = Bin::new();
    bin.engine("docker", DOCKER_28, Some(DOCKER_20_ROOTLESS))
        .engine("podman", PODMAN_4_3_ROOTLESS, None);
    let runtime = tempfile::tempdir().unwrap();
    fs_err::write(runtime.path().join("docker.sock"), "").unwrap();
    let host = host_picture(1000);
    let r = cudaup_env(
        &[
            "container",
            "plan",
            "--json",
            "--system-root",
            &host.root_arg(),
        ],
        home.path(),
        &[
            ("PATH", &bin.path()),
            ("XDG_RUNTIME_DIR", &runtime.path().display().to_string()),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let choices = j["choices"].as_array().unwrap();
    let paths: Vec<(&str, &str)> = choices
        .iter()
        .map(|c| (c["engine"].as_str().unwrap(), c["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        paths,
        [
            ("Docker 28.2.2", "cdi"),
            ("rootless Docker 20.10.24+dfsg1", "legacy"),
            ("rootless Podman 4.3.1", "cdi")
        ]
    );
    // Podman 4.3 reads /etc/cdi only: the reason says so.
    assert!(choices[2]["reasons"].to_string().contains("#25691"));
    assert_eq!(choices[2]["spec_dir"], "/etc/cdi");
    assert_eq!(
        j["engines"][1]["host"],
        format!("unix://{}/docker.sock", runtime.path().display())
    );
    let text = cudaup_env(
        &["container", "plan", "--system-root", &host.root_arg()],
        home.path(),
        &[("PATH", &bin.path())],
    );
    assert!(
        text.stdout
            .contains("run with  docker run --device=nvidia.com/gpu=all IMAGE"),
        "{}",
        text.stdout
    );
}

/// Rootful Docker 26 (CDI feature off) and rootless Docker 20.10 (legacy) on one machine: setup
/// writes the spec, both daemon.json files and the user's toolkit config; `cudaup uninstall`
/// puts every byte back.
#[test]
fn container_setup_then_uninstall_round_trips_daemon_json_and_the_toolkit_config() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".config");
    let prefix = tempfile::tempdir().unwrap();
    let driver = Tree::new();
    fake_driver(&driver, "580.95.05", false);
    let bin = Bin::new();
    bin.engine("docker", DOCKER_26, Some(DOCKER_20_ROOTLESS))
        .program(
            "nvidia-ctk",
            "echo 'NVIDIA Container Toolkit CLI version 1.17.8'; echo 'commit: f202b80'",
        );
    let runtime = tempfile::tempdir().unwrap();
    fs_err::write(runtime.path().join("docker.sock"), "").unwrap();
    let host = host_picture(0);
    host.symlink("/dev/char/195:0", "../nvidia0");

    // What was there: odd bytes on purpose (CRLF, trailing blanks, no final newline).
    let daemon = prefix.path().join("etc/docker/daemon.json");
    let daemon_before = b"{\r\n  \"log-driver\":   \"journald\" \r\n}".to_vec();
    fs_err::create_dir_all(daemon.parent().unwrap()).unwrap();
    fs_err::write(&daemon, &daemon_before).unwrap();
    let system_toml = prefix
        .path()
        .join("etc/nvidia-container-runtime/config.toml");
    let toml_before = "disable-require = false\n\n[nvidia-container-cli]\nenvironment = []\nload-kmods = true\n#no-cgroups = false\n\n[nvidia-container-runtime]\nmode = \"auto\"\n";
    fs_err::create_dir_all(system_toml.parent().unwrap()).unwrap();
    fs_err::write(&system_toml, toml_before).unwrap();
    let user_daemon = config.join("docker/daemon.json");
    fs_err::create_dir_all(user_daemon.parent().unwrap()).unwrap();
    let user_daemon_before = b"{\"data-root\": \"/home/u/docker\"}\n".to_vec();
    fs_err::write(&user_daemon, &user_daemon_before).unwrap();

    let env = [
        ("PATH", bin.path()),
        ("XDG_RUNTIME_DIR", runtime.path().display().to_string()),
        ("XDG_CONFIG_HOME", config.display().to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let args = setup_args("docker", &host, prefix.path(), &driver);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let dry = cudaup_env(&[&args[..], &["--dry-run"]].concat(), home.path(), &env);
    assert_eq!(dry.code, 0, "{}\n{}", dry.stdout, dry.stderr);
    assert_eq!(
        fs_err::read(&daemon).unwrap(),
        daemon_before,
        "a dry run writes nothing"
    );

    let r = cudaup_env(&args, home.path(), &env);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // Without --yes the restarts are printed, not run.
    assert!(
        r.stdout.contains("systemctl restart docker"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("systemctl --user restart docker"),
        "{}",
        r.stdout
    );
    let d: serde_json::Value = serde_json::from_slice(&fs_err::read(&daemon).unwrap()).unwrap();
    assert_eq!(d["features"]["cdi"], true);
    assert_eq!(d["log-driver"], "journald");
    let u: serde_json::Value =
        serde_json::from_slice(&fs_err::read(&user_daemon).unwrap()).unwrap();
    assert_eq!(u["runtimes"]["nvidia"]["path"], "nvidia-container-runtime");
    let user_toml =
        fs_err::read_to_string(config.join("nvidia-container-runtime/config.toml")).unwrap();
    assert_eq!(
        user_toml,
        toml_before.replace("#no-cgroups = false", "no-cgroups = true")
    );
    assert_eq!(
        fs_err::read_to_string(&system_toml).unwrap(),
        toml_before,
        "the rootful config keeps its value"
    );
    let spec = prefix.path().join("etc/cdi/cudaup-nvidia.json");
    let s: serde_json::Value = serde_json::from_slice(&fs_err::read(&spec).unwrap()).unwrap();
    assert_eq!(s["kind"], "nvidia.com/gpu");
    assert_eq!(
        fs_err::metadata(&spec).unwrap().permissions().mode() & 0o777,
        0o644
    );

    // A second setup changes nothing.
    let again = cudaup_env(&args, home.path(), &env);
    assert!(
        again.stdout.contains("nothing to change"),
        "{}",
        again.stdout
    );

    let un = cudaup(&["uninstall", "--yes"], home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert_eq!(fs_err::read(&daemon).unwrap(), daemon_before);
    assert_eq!(fs_err::read_to_string(&system_toml).unwrap(), toml_before);
    assert_eq!(fs_err::read(&user_daemon).unwrap(), user_daemon_before);
    assert!(
        !config.join("nvidia-container-runtime").exists(),
        "the directory setup made is gone"
    );
    assert!(!spec.exists() && !prefix.path().join("etc/cdi").exists());
}

#[test]
fn container_setup_refuses_the_legacy_path_without_the_toolkit_and_plans_its_install() {
    let home = tempfile::tempdir().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let bin = Bin::new();
    bin.engine("docker", r#"{"ServerVersion":"20.10.24","CgroupDriver":"cgroupfs","CgroupVersion":"1","Runtimes":{"runc":{"path":"runc"}},"SecurityOptions":[]}"#, None);
    let host = host_picture(0);
    host.file(
        "/etc/apt/sources.list.d/nvidia-docker.list",
        "deb https://nvidia.github.io/nvidia-docker/ubuntu18.04/$(ARCH) /\n",
    );
    let base = [
        "container",
        "setup",
        "--engine",
        "docker",
        "--system-root",
        &host.root_arg(),
        "--root-prefix",
        prefix.path().to_str().unwrap(),
    ];
    let r = cudaup_env(&base, home.path(), &[("PATH", &bin.path())]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("predates CDI") && r.stderr.contains("--toolkit"),
        "{}",
        r.stderr
    );
    let r = cudaup_env(
        &[&base[..], &["--toolkit", "--dry-run", "--json"]].concat(),
        home.path(),
        &[("PATH", &bin.path())],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let commands: Vec<String> = j["plan"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c.as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert!(commands.iter().any(|c| c == "apt-get install -y nvidia-container-toolkit=1.20.0-1 nvidia-container-toolkit-base=1.20.0-1 libnvidia-container-tools=1.20.0-1 libnvidia-container1=1.20.0-1"), "{commands:?}");
    assert!(
        commands.iter().any(|c| c == "systemctl restart docker"),
        "{commands:?}"
    );
    let removes = j["plan"]["edits"].to_string();
    assert!(removes.contains("nvidia-docker.list"), "{removes}");
}

#[test]
fn container_doctor_flags_a_stale_toolkit_spec_the_cve_floor_and_maps_errors() {
    let home = tempfile::tempdir().unwrap();
    let bin = Bin::new();
    bin.engine("podman", r#"{"host":{"cgroupManager":"systemd","cgroupVersion":"v2","security":{"rootless":false,"selinuxEnabled":true}},"version":{"Version":"5.4.2"}}"#, None)
        .program("nvidia-ctk", "echo 'NVIDIA Container Toolkit CLI version 1.17.5'");
    let host = host_picture(0);
    host.nvidia_module("580.95.05", true);
    host.file(
        "/etc/cdi/nvidia.yaml",
        "---\ncdiVersion: 0.5.0\ncontainerEdits:\n  mounts:\n  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\n    hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\ndevices:\n- containerEdits:\n    deviceNodes:\n    - path: /dev/nvidia0\n  name: \"0\"\nkind: nvidia.com/gpu\n",
    );
    host.file(
        "/usr/share/containers/oci/hooks.d/oci-nvidia-hook.json",
        "{}",
    );
    let r = cudaup_env(
        &[
            "container",
            "doctor",
            "--json",
            "--system-root",
            &host.root_arg(),
        ],
        home.path(),
        &[("PATH", &bin.path())],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    let ids: Vec<&str> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    for id in [
        "ctk-cve",
        "cdi-spec-stale",
        "cdi-legacy-conflict",
        "selinux-label",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    let stale = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "cdi-spec-stale")
        .unwrap();
    assert!(
        stale["evidence"].to_string().contains("550.54.15"),
        "{stale}"
    );
    assert!(stale["fix"]
        .as_str()
        .unwrap()
        .contains("nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml"));
    let e = cudaup(&["container", "doctor", "--error", "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]]."], home.path());
    assert_eq!(
        e.stdout.trim(),
        "ctk-runtime-unregistered: run `cudaup container doctor` for its evidence and fix"
    );
}

#[test]
fn container_dockerfile_is_the_plans_stack() {
    let home = tempfile::tempdir().unwrap();
    let system = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let r = cudaup(
        &[
            "container",
            "dockerfile",
            "--system",
            system,
            "--profile",
            "pytorch",
        ],
        home.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let plan = cudaup(
        &["plan", "--system", system, "--profile", "pytorch", "--json"],
        home.path(),
    )
    .json();
    let torch = plan["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "torch")
        .unwrap();
    let line = format!(
        "RUN pip install --no-cache-dir --index-url {} --extra-index-url https://pypi.org/simple torch=={}",
        torch["index_url"].as_str().unwrap(),
        torch["version"].as_str().unwrap()
    );
    assert!(r.stdout.contains(&line), "{line}\n{}", r.stdout);
    assert!(r.stdout.contains("FROM python:3.12-slim"));
}

/// Held while a test has made (and will remove) the host's `/etc/cdi` mount point for its private
/// mount namespace: two tests at once would race on making and removing it.
pub(crate) static ETC_CDI: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs a command, saying what failed.
pub(crate) fn sh(cmd: &mut Command) -> std::process::Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

/// Podman's settings for this machine: crun refuses a hybrid cgroup layout ("cgroups in hybrid
/// mode not supported, drop all controllers from cgroupv2") and a process without
/// CAP_SYS_RESOURCE cannot take Podman's default RLIMIT_NOFILE/NPROC; both are probed, and the
/// containers.conf that works is returned (or why none does).
fn podman_conf(dir: &Path, image: &str) -> Result<PathBuf, String> {
    podman_conf_with(dir, image, &|| Command::new("podman"))
}

/// [`podman_conf`] for the Podman that `podman` starts (another user's, say).
pub(crate) fn podman_conf_with(
    dir: &Path,
    image: &str,
    podman: &dyn Fn() -> Command,
) -> Result<PathBuf, String> {
    let conf = dir.join("containers.conf");
    let mut last = String::new();
    for (runtime, ulimits) in [
        (None, false),
        (None, true),
        (Some("runc"), false),
        (Some("runc"), true),
    ] {
        let mut text = String::new();
        if let Some(r) = runtime {
            text.push_str(&format!("[engine]\nruntime = \"{r}\"\n"));
        }
        if ulimits {
            text.push_str(
                "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n",
            );
        }
        fs_err::write(&conf, &text).unwrap();
        let o = sh(podman().env("CONTAINERS_CONF", &conf).args([
            "run",
            "--rm",
            "--network=none",
            image,
            "/bin/true",
        ]));
        if o.status.success() {
            return Ok(conf);
        }
        last = String::from_utf8_lossy(&o.stderr).trim().to_owned();
    }
    Err(last)
}

#[test]
fn needs_root_podman_container_sees_the_cdi_devices_and_libraries() {
    let test = "needs_root_podman_container_sees_the_cdi_devices_and_libraries";
    if !sh(Command::new("id").arg("-u")).stdout.starts_with(b"0") {
        return skipped(
            test,
            "not root: the device nodes need mknod and rootful Podman",
        );
    }
    if Command::new("podman").arg("--version").output().is_err() {
        return skipped(
            test,
            "podman is not installed (.ci/run installs Debian's podman as root)",
        );
    }
    let busybox = ["/bin/busybox", "/usr/bin/busybox"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    let Some(busybox) = busybox else {
        return skipped(test, "no busybox-static to build the test image from");
    };
    let work = tempfile::tempdir().unwrap();
    // The image: busybox alone (no registry is reachable).
    let rootfs = work.path().join("rootfs");
    fs_err::create_dir_all(rootfs.join("bin")).unwrap();
    fs_err::copy(busybox, rootfs.join("bin/busybox")).unwrap();
    for app in ["sh", "ls", "cat", "env", "true", "readlink"] {
        std::os::unix::fs::symlink("busybox", rootfs.join("bin").join(app)).unwrap();
    }
    let tar = work.path().join("rootfs.tar");
    assert!(sh(Command::new("tar")
        .arg("-C")
        .arg(&rootfs)
        .arg("-cf")
        .arg(&tar)
        .arg("."))
    .status
    .success());
    let image = "localhost/cudaup-test-busybox:latest";
    let imported = sh(Command::new("podman").arg("import").arg(&tar).arg(image));
    if !imported.status.success() {
        return skipped(
            test,
            &format!(
                "podman import failed: {}",
                String::from_utf8_lossy(&imported.stderr).trim()
            ),
        );
    }
    let conf = match podman_conf(work.path(), image) {
        Ok(c) => c,
        Err(why) => return skipped(test, &format!("podman cannot run a container here: {why}")),
    };

    let driver = Tree::new();
    fake_driver(&driver, "580.95.05", true);
    let prefix = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let path = "/usr/bin:/bin:/usr/sbin:/sbin";
    let r = cudaup_env(
        &[
            "container",
            "setup",
            "--engine",
            "podman",
            "--root-prefix",
            prefix.path().to_str().unwrap(),
            "--driver-root",
            driver.path().to_str().unwrap(),
        ],
        home.path(),
        &[("PATH", path), ("CONTAINERS_CONF", conf.to_str().unwrap())],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let spec_dir = prefix.path().join("etc/cdi");
    assert!(spec_dir.join("cudaup-nvidia.json").is_file());

    // Podman 4.3 reads /etc/cdi only (containers.conf cdi_spec_dirs is ignored before 5.5), so
    // the spec directory is bind-mounted there in a private mount namespace: nothing is written
    // to the host's /etc/cdi. The mount point must exist; it is made (and removed) if missing.
    let _etc_cdi = ETC_CDI.lock().unwrap_or_else(|e| e.into_inner());
    let made_mount_point = !Path::new("/etc/cdi").exists();
    if made_mount_point {
        fs_err::create_dir("/etc/cdi").unwrap();
    }
    let script = format!(
        "mount --bind {} /etc/cdi && exec podman run --rm --network=none --device nvidia.com/gpu=all {image} /bin/sh -c 'ls -ln /dev/nvidia0 /dev/nvidiactl; cat /usr/lib/x86_64-linux-gnu/libcuda.so.1; readlink -f /usr/lib/x86_64-linux-gnu/libcuda.so.1; ls /lib/firmware/nvidia/580.95.05; nvidia-smi -L; env'",
        spec_dir.display()
    );
    let o = sh(Command::new("unshare")
        .arg("-m")
        .arg("sh")
        .arg("-c")
        .arg(&script)
        .env("CONTAINERS_CONF", &conf));
    if made_mount_point {
        let _ = fs_err::remove_dir("/etc/cdi");
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The device nodes, at the paths CUDA opens, with the host's major/minor numbers.
    assert!(
        out.lines()
            .any(|l| l.starts_with('c') && l.contains("195,   0") && l.ends_with("/dev/nvidia0")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("195, 255") && l.ends_with("/dev/nvidiactl")),
        "{out}"
    );
    // The driver's library under its SONAME, in the multiarch directory the loader searches.
    assert!(out.contains("stand-in libcuda.so 580.95.05"), "{out}");
    assert!(out.contains("gsp_ga10x.bin"), "{out}");
    assert!(
        out.contains("GPU 0: NVIDIA H200 (UUID: GPU-5f3a1b2c-0000-1111-2222-333344445555)"),
        "{out}"
    );
    assert!(out.contains("NVIDIA_VISIBLE_DEVICES=void"), "{out}");

    // And back: the spec goes, with the directory setup made.
    let un = cudaup(&["container", "uninstall"], home.path());
    assert_eq!(un.code, 0, "{}", un.stdout);
    assert!(!spec_dir.exists());
    let _ = Command::new("podman").args(["rmi", "-f", image]).output();
}

#[test]
fn verify_container_adds_the_in_container_checks() {
    let home = tempfile::tempdir().unwrap();
    // No engine on PATH: the container check is a skip that says what to do, never a pass.
    let r = cudaup_env(
        &["verify", "--container", "--json"],
        home.path(),
        &[("PATH", "/nonexistent")],
    );
    let j = r.json();
    let c = j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "container-kernel")
        .unwrap();
    assert_eq!(c["status"], "skip");
    assert!(
        c["evidence"][0]
            .as_str()
            .unwrap()
            .contains("cudaup container setup"),
        "{c}"
    );
}

/// Issue 39, finding 8: the toolkit cudaup installs is 1.20.0 (above the 1.19.1 floor of
/// CVE-2026-24260), and a plan that installs it next to Podman before 5 says that its CDI 0.7.0
/// specs cannot be read there; next to Podman 5 it says nothing of the kind.
#[test]
fn the_toolkit_1_20_install_warns_a_podman_4_host_about_cdi_0_7() {
    for (version, warned) in [("4.9.3", true), ("5.4.2", false)] {
        let home = tempfile::tempdir().unwrap();
        let prefix = tempfile::tempdir().unwrap();
        let driver = Tree::new();
        fake_driver(&driver, "580.95.05", false);
        let bin = Bin::new();
        bin.engine(
            "podman",
            &format!(r#"{{"host":{{"cgroupManager":"systemd","cgroupVersion":"v2","security":{{"rootless":false,"selinuxEnabled":false}}}},"version":{{"Version":"{version}"}}}}"#),
            None,
        );
        let host = host_picture(0);
        let args = setup_args("podman", &host, prefix.path(), &driver);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = cudaup_env(
            &[&args[..], &["--toolkit", "--dry-run", "--json"]].concat(),
            home.path(),
            &[("PATH", &bin.path())],
        );
        assert_eq!(r.code, 0, "{version}: {}\n{}", r.stdout, r.stderr);
        let j = r.json();
        let commands = j["plan"]["commands"].to_string();
        assert!(
            commands.contains("nvidia-container-toolkit=1.20.0-1"),
            "{version}: {commands}"
        );
        let notices = j["plan"]["notices"].to_string();
        assert_eq!(
            notices.contains("CDI 0.7.0") && notices.contains("Podman before 5"),
            warned,
            "{version}: {notices}"
        );
    }
}

/// Debian's Docker through CDI (issue 39): Debian 13's docker.io 26.1.5 injects CDI devices once
/// `features.cdi` is on, so setup writes the spec to /etc/cdi, turns the feature on in
/// daemon.json and restarts the daemon; the run line uses the CDI device. Debian 12's docker.io
/// 20.10 cannot, and the plan names the package that can. (Docker itself is not run: CI's Debian
/// 12 has only 20.10.)
#[test]
fn container_setup_turns_cdi_on_for_debian_13s_docker_and_names_it_to_debian_12() {
    let home = tempfile::tempdir().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let driver = Tree::new();
    fake_driver(&driver, "580.95.05", false);
    let log = home.path().join("commands.log");
    let bin = Bin::new();
    bin.engine(
        "docker",
        r#"{"ServerVersion":"26.1.5+dfsg1","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"DefaultRuntime":"runc","SecurityOptions":["name=seccomp,profile=builtin","name=cgroupns"],"OperatingSystem":"Debian GNU/Linux 13 (trixie)"}"#,
        None,
    )
    .program("systemctl", &format!("echo \"systemctl $*\" >> {}", log.display()));
    let host = host_picture(0);
    let mut args = setup_args("docker", &host, prefix.path(), &driver);
    args.extend(["--yes".to_owned(), "--json".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = cudaup_env(&args, home.path(), &[("PATH", &bin.path())]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let daemon: serde_json::Value = serde_json::from_str(
        &fs_err::read_to_string(prefix.path().join("etc/docker/daemon.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(daemon["features"]["cdi"], true, "{daemon}");
    assert!(prefix.path().join("etc/cdi/cudaup-nvidia.json").is_file());
    assert_eq!(
        fs_err::read_to_string(&log).unwrap(),
        "systemctl restart docker\n"
    );
    let j = r.json();
    assert_eq!(
        j["plan"]["run_lines"][0],
        "docker run --rm --device=nvidia.com/gpu=all IMAGE nvidia-smi -L",
        "{j}"
    );
    let un = cudaup(&["container", "uninstall"], home.path());
    assert_eq!(un.code, 0, "{}\n{}", un.stdout, un.stderr);
    assert!(!prefix.path().join("etc").exists());

    // Debian 12's docker.io: the legacy runtime, and where a Docker with CDI comes from.
    let old = Bin::new();
    old.engine("docker", DOCKER_20_ROOTLESS, None);
    let r = cudaup_env(
        &["container", "plan", "--system-root", &host.root_arg()],
        home.path(),
        &[("PATH", &old.path())],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("this is Debian 12 (bookworm)'s docker.io 20.10.24+dfsg1; Debian 13 (trixie)'s docker.io 26.1.5+dfsg1 has CDI"),
        "{}",
        r.stdout
    );
}
