//! Chinese beyond the first run (issue 37): under `--lang zh` (here `LANG=zh_CN.UTF-8`) the
//! commands a user meets after the first install — install's progress and its step errors,
//! `verify`, `doctor` (on captured machines and on an install broken on purpose), `repair`,
//! `mirror create`, `uninstall`, `detect`, `container` and `fleet report` — print no English
//! sentence ([`crate::zh::english_lines`] says what counts as one). Every run is on a machine
//! picture, a captured tree or a fake home; the toolkit comes from the synthetic mirror.

use std::path::Path;

use crate::common::*;
use crate::zh::english_lines;

const H200_PICTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// Each flow: its name, its run, the exit codes it may end with.
type Flow = (String, Run, Vec<i32>);

/// Fails naming every English line of every flow (and any flow that ended otherwise, or said
/// nothing in Chinese).
fn assert_chinese(flows: &[Flow]) {
    let mut report = String::new();
    for (name, run, codes) in flows {
        let text = format!("{}\n{}", run.stdout, run.stderr);
        if !codes.contains(&run.code) {
            report.push_str(&format!("{name}: exit {}\n{text}\n", run.code));
        }
        if !text.chars().any(|c| (c as u32) >= 0x4E00) {
            report.push_str(&format!("{name} says nothing in Chinese:\n{text}\n"));
        }
        // The synthetic toolkit's programs speak for themselves (as the real nvcc does, in
        // English): verify shows what they printed.
        for line in english_lines(&text)
            .into_iter()
            .filter(|l| !l.contains("synthetic"))
        {
            report.push_str(&format!("{name}: {line}\n"));
        }
    }
    assert!(report.is_empty(), "English in a zh run:\n{report}");
}

fn zh() -> TestContext {
    TestContext::new()
        .with_env("LANG", "zh_CN.UTF-8")
        .with_env("CUDAUP_NO_UV", "1")
        .with_env("SHELL", "/bin/bash")
}

/// What `nvidia-smi` prints on an H200 machine (as tests/it/verify.rs's stand-in does).
const BANNER: &str =
    "+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 |
+-----------------------------------------+------------------------+----------------------+
";
const H200_QUERY: &str = "0, NVIDIA H200, 0x233510DE, 580.159.04, 143771, 9.0\n";

/// A healthy H200 machine's tree (driver 580.95.05, CUDA 13.0 in /usr/local).
fn h200_tree() -> Tree {
    let t = Tree::new();
    t.os_release(UBUNTU_2404)
        .proc_version(LINUX_VERSION)
        .file("/proc/stat", "cpu  1 2 3 4\nbtime 1000\n")
        .nvidia_module("580.95.05", true)
        .pci("0000:00:06.0", 0x10de, 0x2335, 0x030200)
        .file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05", "")
        .symlink(
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            "libnvidia-ml.so.580.95.05",
        );
    t
}

/// The toolkit's life in Chinese: installed from the synthetic mirror (progress notes), checked
/// by verify (whose synthetic nvcc cannot build the kernel), broken and found by doctor, put
/// back by repair (twice: the second finds nothing), copied by mirror create, removed by
/// uninstall; and an install whose archive does not match its sha256 (a step error).
#[test]
fn the_toolkits_life_in_chinese_prints_no_english_sentence() {
    let mirror = synthetic_mirror(&[]);
    let m = mirror.path().display().to_string();
    let ctx = zh().with_nvidia_smi(BANNER, H200_QUERY);
    let tree = h200_tree();
    let root = tree.root_arg();
    let toolkit = [
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--cudnn",
        "9.17.0",
        "--mirror",
        &m,
    ];
    let mut flows: Vec<Flow> = Vec::new();
    let mut install = vec!["--yes"];
    install.extend_from_slice(&toolkit);
    flows.push(("install".into(), ctx.install(&install), vec![0]));
    flows.push(("verify".into(), ctx.cudaup(&["verify"]), vec![4]));

    let prefix = ctx.cudaup_home().join("toolkits/cuda-13.0.2");
    fs_err::remove_file(prefix.join("bin/ptxas")).unwrap();
    fs_err::remove_file(ctx.cudaup_home().join("env")).unwrap();
    flows.push((
        "doctor (a broken install)".into(),
        ctx.cudaup(&["doctor", "--system-root", &root]),
        vec![1],
    ));
    flows.push((
        "repair --dry-run".into(),
        ctx.cudaup(&["repair", "--dry-run"]),
        vec![0],
    ));
    flows.push(("repair".into(), ctx.cudaup(&["repair", "--yes"]), vec![0]));
    flows.push((
        "repair (nothing to do)".into(),
        ctx.cudaup(&["repair", "--yes"]),
        vec![0],
    ));
    let out = ctx.dir().join("offline");
    let system = ctx.system_arg();
    let mut create = vec![
        "mirror",
        "create",
        out.to_str().unwrap(),
        "--system",
        &system,
        "--driver",
        "keep",
    ];
    create.extend_from_slice(&toolkit);
    flows.push(("mirror create".into(), ctx.cudaup(&create), vec![0]));
    flows.push((
        "uninstall --dry-run".into(),
        ctx.cudaup(&["uninstall", "--dry-run"]),
        vec![0],
    ));
    flows.push((
        "uninstall".into(),
        ctx.cudaup(&["uninstall", "--yes"]),
        vec![0],
    ));

    // An archive whose bytes are not the ones its manifest's sha256 names.
    let bad = synthetic_mirror(&[]);
    let nvcc = walk(bad.path())
        .into_iter()
        .find(|p| {
            p.to_str().unwrap().contains("linux-x86_64")
                && p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("cuda_nvcc-")
        })
        .expect("the mirror has cuda_nvcc for linux-x86_64");
    let mut bytes = fs_err::read(&nvcc).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs_err::write(&nvcc, bytes).unwrap();
    let b = bad.path().display().to_string();
    let other = zh();
    flows.push((
        "install from a mirror with a changed archive".into(),
        other.install(&[
            "--yes",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &b,
        ]),
        vec![1, 3, 4, 5, 6],
    ));
    assert_chinese(&flows);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for e in fs_err::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            found.extend(walk(&p));
        } else {
            found.push(p);
        }
    }
    found
}

/// doctor on captured machines that are broken in the ways its findings name, and detect.
#[test]
fn doctor_and_detect_on_broken_machines_print_no_english_sentence() {
    let ctx = zh();
    let mut flows: Vec<Flow> = Vec::new();
    let doctor = |name: &str, tree: &Tree, codes: Vec<i32>| -> Flow {
        (
            format!("doctor ({name})"),
            ctx.cudaup(&["doctor", "--system-root", &tree.root_arg()]),
            codes,
        )
    };
    let healthy = h200_tree();
    flows.push(doctor("healthy", &healthy, vec![0]));

    let pending = h200_tree();
    pending.nvidia_module("570.124.06", true);
    flows.push(doctor(
        "a driver upgraded without a reboot",
        &pending,
        vec![1],
    ));

    let newer = h200_tree();
    newer.nvidia_module("590.44.01", true);
    flows.push(doctor("a module newer than its library", &newer, vec![1]));

    let nouveau = Tree::new();
    nouveau
        .os_release(UBUNTU_2204)
        .proc_version(LINUX_VERSION)
        .pci("0000:01:00.0", 0x10de, 0x2684, 0x030000)
        .file(
            "/proc/modules",
            "nouveau 2379776 1 - Live 0x0000000000000000\ndrm 610304 3 nouveau, Live 0x0\n",
        );
    flows.push(doctor("nouveau and no driver", &nouveau, vec![1]));

    let secure = Tree::new();
    secure
        .os_release(UBUNTU_2204)
        .proc_version(LINUX_VERSION)
        .pci("0000:01:00.0", 0x10de, 0x2684, 0x030000)
        .file(
            "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
            [6u8, 0, 0, 0, 1],
        )
        .file(
            "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst",
            "",
        );
    flows.push(doctor("Secure Boot refusing the module", &secure, vec![1]));

    let wsl = Tree::new();
    wsl.os_release(UBUNTU_2204)
        .proc_version("Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0, GNU ld (GNU Binutils) 2.37) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n")
        .file("/usr/lib/wsl/lib/libnvidia-ml.so.1", "")
        .file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.120", "")
        .file("/usr/lib/x86_64-linux-gnu/libcuda.so.550.120", "");
    flows.push(doctor("a Linux driver inside WSL", &wsl, vec![1]));

    let blackwell = Tree::new();
    blackwell
        .os_release(UBUNTU_2404)
        .proc_version(LINUX_VERSION)
        .nvidia_module("560.35.03", false)
        .pci("0000:01:00.0", 0x10de, 0x2b85, 0x030000);
    flows.push(doctor("Blackwell on an old driver", &blackwell, vec![1]));

    let torch = h200_tree();
    torch
        .file(
            "/usr/local/cuda-13.0/version.json",
            r#"{"cuda" : {"name" : "CUDA SDK", "version" : "13.0.2"}}"#,
        )
        .file("/usr/local/cuda-13.0/bin/nvcc", "")
        .symlink("/usr/local/cuda", "/usr/local/cuda-13.0")
        .venv("/opt/torch/.venv", "3.12.3", Some(TORCH_CU130))
        .file("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7", "")
        .dir("/opt/torch/.venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info");
    fs_err::remove_dir_all(torch.path().join("sys/bus/pci/devices/0000:00:06.0")).unwrap();
    torch.pci("0000:01:00.0", 0x10de, 0x1b80, 0x030000);
    flows.push(doctor(
        "a torch without kernels for the GPU, two cuDNNs",
        &torch,
        vec![1],
    ));

    let libs = ctx.dir().join("old-cuda/lib64");
    fs_err::create_dir_all(&libs).unwrap();
    fs_err::write(libs.join("libcudart.so.12"), "").unwrap();
    let ld = libs.display().to_string();
    // The environment is this process's: doctor checks it only without --system-root (it reads
    // this machine then, and changes nothing).
    flows.push((
        "doctor (a wrong environment)".into(),
        ctx.cudaup_env(
            &["doctor"],
            &[
                ("CUDA_HOME", "/nonexistent/cuda-12.4"),
                ("LD_LIBRARY_PATH", &ld),
            ],
        ),
        vec![1],
    ));

    flows.push((
        "detect".into(),
        ctx.cudaup(&["detect", "--system-root", &healthy.root_arg()]),
        vec![0],
    ));
    flows.push((
        "detect (no driver)".into(),
        ctx.cudaup(&["detect", "--system-root", &nouveau.root_arg()]),
        vec![0],
    ));
    flows.push((
        "plan (H200 picture)".into(),
        ctx.cudaup(&["plan", "--system", H200_PICTURE]),
        vec![0],
    ));
    assert_chinese(&flows);
}

/// Docker's `docker info`, trimmed (rootful 28.2.2 with CDI; tests/it/container.rs's).
const DOCKER_28: &str = r#"{"ServerVersion":"28.2.2","CgroupDriver":"systemd","CgroupVersion":"2","Runtimes":{"runc":{"path":"runc"}},"DefaultRuntime":"runc","SecurityOptions":["name=seccomp,profile=builtin","name=cgroupns"],"CDISpecDirs":["/etc/cdi","/var/run/cdi"],"OperatingSystem":"Ubuntu 24.04.1 LTS"}"#;

/// container plan and doctor; fleet report over three hosts and over a directory without
/// reports. (`container dockerfile` prints a file, comments included, which stays as written,
/// as JSON does.)
#[test]
fn container_and_fleet_print_no_english_sentence() {
    let ctx = zh();
    ctx.stand_in(
        "docker",
        &format!("#!/bin/sh\ncase \"$1\" in info) echo '{DOCKER_28}' ;; *) echo \"unexpected: $*\" >&2; exit 2 ;; esac\n"),
    );
    let runtime = ctx.dir().join("run");
    fs_err::create_dir_all(&runtime).unwrap();
    let host = h200_tree();
    host.file("/proc/self/status", "Name:\tcudaup\nUid:\t0\t0\t0\t0\n")
        .file("/sys/fs/cgroup/cgroup.controllers", "cpu memory io pids\n");
    let root = host.root_arg();
    let xdg = runtime.display().to_string();
    let env = [("XDG_RUNTIME_DIR", xdg.as_str())];
    let mut flows: Vec<Flow> = vec![
        (
            "container plan".into(),
            ctx.cudaup_env(&["container", "plan", "--system-root", &root], &env),
            vec![0],
        ),
        (
            "container doctor".into(),
            ctx.cudaup_env(&["container", "doctor", "--system-root", &root], &env),
            vec![0, 1],
        ),
    ];

    let fleet = ctx.dir().join("fleet");
    for (host, cuda) in [("a", "13.0.2"), ("b", "12.9.1"), ("c", "13.0.2")] {
        let dir = fleet.join(host);
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::copy(H200_PICTURE, dir.join("system.json")).unwrap();
        fs_err::write(
            dir.join("install.json"),
            serde_json::json!({
                "schema_version": 1, "status": "installed", "profile": "cuda-dev", "changed": true,
                "reboot_required": false,
                "gpus": [{"name": "NVIDIA H200", "compute_capability": "9.0"}],
                "plan": {"status": "ok", "profile": "cuda-dev", "components": [
                    {"name": "driver", "action": "keep", "version": "580.95.05", "reason": ""},
                    {"name": "cuda", "action": "install", "version": cuda, "reason": ""},
                ], "reasons": [], "warnings": []},
                "toolkit": {"cuda": cuda},
            })
            .to_string(),
        )
        .unwrap();
    }
    flows.push((
        "fleet report".into(),
        ctx.cudaup(&["fleet", "report", fleet.to_str().unwrap()]),
        vec![0, 1],
    ));
    flows.push((
        "fleet report (no hosts)".into(),
        ctx.cudaup(&["fleet", "report", ctx.dir().join("run").to_str().unwrap()]),
        vec![1, 2],
    ));
    assert_chinese(&flows);
}

/// The refusal a PyPI-only network meets first when PyPI lacks the build: no route can serve
/// the framework, each route's answer, and what would work instead — in Chinese, line by line.
#[test]
fn a_framework_no_route_can_serve_is_refused_in_chinese() {
    let empty = tempfile::tempdir().unwrap();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://127.0.0.1:{}", l.local_addr().unwrap().port())
    };
    let ctx = zh()
        .with_env("CUDAUP_PROBE_TIMEOUT", "2")
        .with_env("CUDAUP_PYPI_INDEX", empty.path().to_str().unwrap())
        .with_env("CUDAUP_TORCH_INDEX", &format!("{down}/whl"))
        .with_env("CUDAUP_MIRROR", &down);
    let run = ctx.install(&["--profile", "cpu", "--dry-run", "--allow-http"]);
    assert!(
        run.stderr.contains("没有下载途径能提供 torch") && run.stderr.contains("可以改用："),
        "{}",
        run.stderr
    );
    assert_chinese(&[("install, no route".into(), run, vec![3])]);
}
