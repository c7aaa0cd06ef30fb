//! `cudaup doctor`: broken states built on purpose — captured machines (driver/library
//! mismatches, nouveau, Secure Boot, a Linux driver in WSL2, a Blackwell GPU on an old driver),
//! a synthetic toolkit install with deleted and modified files, a wrong environment and a
//! CPU-only torch — are each named by their id; a healthy install has no error.

use std::path::{Path, PathBuf};

use crate::common::*;

/// Runs `cudaup --home HOME doctor --json ARGS` with extra environment variables.
fn doctor(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let h = home.display().to_string();
    let mut all = vec!["--home", &h, "doctor", "--json"];
    all.extend_from_slice(args);
    cudaup_env(&all, home, env)
}

/// The ids of the findings, and the whole document for messages.
fn ids(run: &Run) -> Vec<String> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect()
}

fn finding<'a>(doc: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {doc:#}"))
}

fn errors(run: &Run) -> Vec<serde_json::Value> {
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .cloned()
        .collect()
}

/// A healthy machine: Ubuntu 24.04, an H200 on driver 580.95.05 (open module, NVML library of
/// the same version, written before boot), CUDA 13.0 in /usr/local, torch cu130 in a venv.
fn healthy_tree() -> Tree {
    let t = Tree::new();
    t.os_release(UBUNTU_2404)
        .proc_version(LINUX_VERSION)
        .file("/proc/stat", "cpu  1 2 3 4\nbtime 1000\n")
        .nvidia_module("580.95.05", true)
        .pci("0000:00:06.0", 0x10de, 0x2335, 0x030200)
        .file(
            "/usr/local/cuda-13.0/version.json",
            r#"{"cuda" : {"name" : "CUDA SDK", "version" : "13.0.2"}}"#,
        )
        .file("/usr/local/cuda-13.0/bin/nvcc", "")
        .symlink("/usr/local/cuda", "/usr/local/cuda-13.0")
        .file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05", "")
        .symlink(
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            "libnvidia-ml.so.580.95.05",
        )
        .venv("/opt/torch/.venv", "3.12.3", Some(TORCH_CU130));
    t
}

/// A tree with an NVIDIA GPU on the bus and no driver.
fn no_driver_tree() -> Tree {
    let t = Tree::new();
    t.os_release(UBUNTU_2204).proc_version(LINUX_VERSION).pci(
        "0000:01:00.0",
        0x10de,
        0x2684,
        0x030000,
    );
    t
}

#[test]
fn a_healthy_machine_has_no_error() {
    let t = healthy_tree();
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let doc = run.json();
    assert!(doc["findings"].as_array().unwrap().is_empty(), "{doc:#}");
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(doc["summary"]["ok"], true);
    // The human report says so, and what it skipped for a captured tree.
    let h = home.path().display().to_string();
    let human = cudaup(
        &["--home", &h, "doctor", "--system-root", &t.root_arg()],
        home.path(),
    );
    assert_eq!(human.code, 0);
    assert!(
        human.stdout.contains("nothing looks wrong"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("0 errors"), "{}", human.stdout);
    assert!(
        human.stdout.contains("skipped: environment"),
        "{}",
        human.stdout
    );
}

#[test]
fn driver_upgraded_without_reboot() {
    let t = healthy_tree();
    // The running module is 570; the library on disk is 580, written after boot.
    t.nvidia_module("570.124.06", true);
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    let f = finding(&doc, "driver-reboot-pending");
    assert_eq!(f["severity"], "error");
    assert!(f["fix"].as_str().unwrap().contains("reboot"));
    let evidence = f["evidence"].to_string();
    assert!(
        evidence.contains("570.124.06") && evidence.contains("580.95.05"),
        "{evidence}"
    );
    assert!(!ids(&run).contains(&"driver-library-mismatch".to_owned()));
}

#[test]
fn kernel_module_newer_than_the_library_is_really_broken() {
    let t = healthy_tree();
    t.nvidia_module("590.44.01", true);
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1);
    let doc = run.json();
    let f = finding(&doc, "driver-library-mismatch");
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("a reboot will not fix it"));
    assert!(!ids(&run).contains(&"driver-reboot-pending".to_owned()));

    // A newer library from before this boot: the machine was rebooted and the old module still
    // loads — not a pending reboot either.
    let t = healthy_tree();
    t.nvidia_module("570.124.06", true)
        .file("/proc/stat", "btime 4000000000\n");
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    let doc = run.json();
    let f = finding(&doc, "driver-library-mismatch");
    assert!(f["fix"].as_str().unwrap().contains("dkms"), "{f:#}");
}

#[test]
fn nouveau_and_no_driver() {
    let t = no_driver_tree();
    t.file(
        "/proc/modules",
        "nouveau 2379776 1 - Live 0x0000000000000000\ndrm 610304 3 nouveau, Live 0x0\n",
    );
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1);
    let ids = ids(&run);
    assert!(ids.contains(&"nouveau-loaded".to_owned()), "{ids:?}");
    assert!(ids.contains(&"no-driver".to_owned()), "{ids:?}");
    let doc = run.json();
    assert_eq!(finding(&doc, "nouveau-loaded")["severity"], "error");
    assert!(finding(&doc, "nouveau-loaded")["fix"]
        .as_str()
        .unwrap()
        .contains("update-initramfs"));
}

#[test]
fn secure_boot_refusing_the_module() {
    let t = no_driver_tree();
    t.file(
        "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
        [6u8, 0, 0, 0, 1],
    )
    .file(
        "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst",
        "",
    );
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1);
    let doc = run.json();
    let f = finding(&doc, "secure-boot-module-refused");
    assert!(f["evidence"].to_string().contains("nvidia.ko.zst"), "{f:#}");
    assert!(f["fix"].as_str().unwrap().contains("mokutil"));
    finding(&doc, "no-driver");
}

#[test]
fn a_linux_driver_inside_wsl() {
    let t = Tree::new();
    t.os_release(UBUNTU_2204)
        .proc_version("Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0, GNU ld (GNU Binutils) 2.37) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n")
        .file("/usr/lib/wsl/lib/libnvidia-ml.so.1", "")
        .file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.120", "")
        .file("/usr/lib/x86_64-linux-gnu/libcuda.so.550.120", "");
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    let f = finding(&doc, "wsl-linux-driver");
    assert!(f["evidence"].to_string().contains("libcuda.so.550.120"));
    assert!(!ids(&run).contains(&"no-driver".to_owned()));

    // WSL with only the Windows driver's libraries: fine.
    let t = Tree::new();
    t.os_release(UBUNTU_2204)
        .proc_version("Linux version 5.15.167.4-microsoft-standard-WSL2 (root@x) #1 SMP\n")
        .file("/usr/lib/wsl/lib/libnvidia-ml.so.1", "");
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert!(!ids(&run).contains(&"wsl-linux-driver".to_owned()));
}

#[test]
fn blackwell_on_an_old_proprietary_driver() {
    let t = Tree::new();
    t.os_release(UBUNTU_2404)
        .proc_version(LINUX_VERSION)
        .nvidia_module("560.35.03", false)
        .pci("0000:01:00.0", 0x10de, 0x2b85, 0x030000);
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1);
    let doc = run.json();
    let f = finding(&doc, "driver-too-old-for-gpu");
    assert!(f["message"].as_str().unwrap().contains("R570"), "{f:#}");
    assert!(f["evidence"].to_string().contains("drivers.toml"));
    finding(&doc, "driver-open-module-required");
}

#[test]
fn a_cpu_only_torch_where_cudaup_installed_a_cuda_one() {
    let t = healthy_tree();
    let venvs = Tree::new();
    venvs
        .venv("/torch-venv", "3.12.3", Some(TORCH_CPU))
        .file("/torch-venv/bin/python", "");
    let venv = venvs.path().join("torch-venv");
    let home = tempfile::tempdir().unwrap();
    let receipt = serde_json::json!({
        "schema_version": 1,
        "venv": venv,
        "base_python": "/usr/bin/python3",
        "created": true,
        "profile": "pytorch",
        "packages": {
            "requirements": ["torch==2.11.0+cu130"],
            "index_url": "https://download.pytorch.org/whl/cu130",
            "extra_index_urls": ["https://pypi.org/simple"]
        },
        "installed_at": 0
    });
    fs_err::create_dir_all(home.path().join("receipts")).unwrap();
    fs_err::write(
        home.path().join("receipts/venv-torch-venv.json"),
        receipt.to_string(),
    )
    .unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    let f = finding(&doc, "torch-cpu-only");
    assert_eq!(f["severity"], "error");
    assert!(f["fix"]
        .as_str()
        .unwrap()
        .contains("torch==2.11.0+cu130 --index-url https://download.pytorch.org/whl/cu130"));

    // Its interpreter gone (a dangling link to a removed base Python).
    fs_err::remove_file(venv.join("bin/python")).unwrap();
    std::os::unix::fs::symlink("/usr/bin/python3.99", venv.join("bin/python")).unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    let doc = run.json();
    assert!(finding(&doc, "venv-python-missing")["evidence"]
        .to_string()
        .contains("python3.99"));
    // The venv gone altogether.
    fs_err::remove_dir_all(&venv).unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    finding(&run.json(), "venv-missing");
}

#[test]
fn a_torch_without_kernels_for_the_gpu() {
    // A GTX 1080 (Pascal, 6.1) with torch 2.11 cu130, whose arch list starts at sm_75.
    let t = healthy_tree();
    fs_err::remove_dir_all(t.path().join("sys/bus/pci/devices/0000:00:06.0")).unwrap();
    t.pci("0000:01:00.0", 0x10de, 0x1b80, 0x030000);
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1);
    let doc = run.json();
    let f = finding(&doc, "torch-no-kernels-for-gpu");
    assert!(f["evidence"].to_string().contains("pytorch.toml"));
}

#[test]
fn system_and_wheel_cudnn_disagree() {
    let t = healthy_tree();
    t.file("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7", "")
        .dir("/opt/torch/.venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info");
    let home = tempfile::tempdir().unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 0, "a warning only: {}", run.stdout);
    let doc = run.json();
    let f = finding(&doc, "cudnn-mismatch");
    assert_eq!(f["severity"], "warning");
    assert!(f["message"].as_str().unwrap().contains("different majors"));
    assert!(f["evidence"]
        .to_string()
        .contains("torch loads the wheel's copy"));
}

#[test]
fn an_installed_toolkit_checked_against_its_receipt() {
    let m = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let prefix = root.path().join("cuda");
    let (h, p, mirror) = (
        home.path().display().to_string(),
        prefix.display().to_string(),
        m.path().display().to_string(),
    );
    let install = cudaup(
        &[
            "--home",
            &h,
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &mirror,
            "--prefix",
            &p,
            "--yes",
        ],
        home.path(),
    );
    assert_eq!(install.code, 0, "{}\n{}", install.stdout, install.stderr);

    // Healthy: files, env script and rc hook all as installed; no error.
    let t = healthy_tree();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(errors(&run).is_empty(), "{}", run.stdout);

    // Break it: delete a file, change a library's bytes (same size), re-point a symlink, take
    // the hook out of .profile and delete the env script.
    fs_err::remove_file(prefix.join("bin/ptxas")).unwrap();
    let so = fs_err::read_dir(prefix.join("lib64"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("libcudart.so.13.")
                && !p.is_symlink()
        })
        .expect("a versioned libcudart");
    let mut bytes = fs_err::read(&so).unwrap();
    bytes[0] ^= 0xff;
    fs_err::write(&so, &bytes).unwrap();
    let link = prefix.join("lib64/libcudart.so");
    fs_err::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("libcudart.so.12", &link).unwrap();
    let profile = home.path().join(".profile");
    let text = fs_err::read_to_string(&profile).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains("cudaup") && !l.contains("/env\""))
        .map(|l| format!("{l}\n"))
        .collect();
    fs_err::write(&profile, kept).unwrap();
    fs_err::remove_file(home.path().join("env")).unwrap();

    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    let missing = finding(&doc, "toolkit-files-missing");
    assert!(
        missing["evidence"].to_string().contains("bin/ptxas"),
        "{missing:#}"
    );
    assert!(missing["fix"]
        .as_str()
        .unwrap()
        .contains("cudaup repair --fix toolkit-files"));
    let changed = finding(&doc, "toolkit-files-changed")["evidence"].to_string();
    assert!(changed.contains("has sha256"), "{changed}");
    assert!(changed.contains("points to libcudart.so.12"), "{changed}");
    finding(&doc, "shell-hook-missing");
    finding(&doc, "env-script-missing");

    // The prefix gone altogether.
    fs_err::remove_dir_all(&prefix).unwrap();
    let run = doctor(home.path(), &["--system-root", &t.root_arg()], &[]);
    let doc = run.json();
    finding(&doc, "toolkit-prefix-missing");
    finding(&doc, "active-toolkit-missing");
}

/// Writes an executable shell script.
fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake toolkit whose nvcc prints the banner of `version` and, asked to compile, CUDA's
/// refusal of a too-new gcc when `refuses_gcc`.
fn fake_toolkit(dir: &Path, version: &str, refuses_gcc: bool) -> PathBuf {
    let refusal = if refuses_gcc {
        "case \"$*\" in *-ccbin*) echo '/x/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 13 are not supported!' >&2; exit 1;; esac\n"
    } else {
        ""
    };
    script(
        &dir.join("bin/nvcc"),
        &format!("{refusal}echo 'Cuda compilation tools, release {version}, V{version}.1'\n"),
    );
    fs_err::write(
        dir.join("version.json"),
        format!(r#"{{"cuda": {{"version": "{version}.0"}}}}"#),
    )
    .unwrap();
    dir.to_path_buf()
}

#[test]
fn a_wrong_environment() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let libs = tmp.path().join("old-cuda/lib64");
    fs_err::create_dir_all(&libs).unwrap();
    fs_err::write(libs.join("libcudart.so.12"), "").unwrap();
    fs_err::write(libs.join("libcublas.so.12"), "").unwrap();
    let other = tmp.path().join("other");
    fs_err::create_dir_all(&other).unwrap();
    let ld = format!("{}:{}", libs.display(), other.display());
    let run = doctor(
        home.path(),
        &[],
        &[
            ("CUDA_HOME", "/nonexistent/cuda-12.4"),
            ("LD_LIBRARY_PATH", &ld),
        ],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    let f = finding(&doc, "cuda-home-invalid");
    assert_eq!(f["severity"], "error");
    assert!(f["message"]
        .as_str()
        .unwrap()
        .contains("/nonexistent/cuda-12.4"));
    let f = finding(&doc, "ld-library-path-shadowing");
    assert!(f["evidence"].to_string().contains("libcudart.so.12"));
    assert_eq!(
        f["fix"],
        format!(
            "export LD_LIBRARY_PATH={}   # and change it where your shell profile sets it",
            other.display()
        )
    );
}

#[test]
fn nvcc_on_path_is_not_cuda_home_and_gcc_is_too_new() {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let old = fake_toolkit(&tmp.path().join("cuda-12.4"), "12.4", true);
    let new = fake_toolkit(&tmp.path().join("cuda-13.0"), "13.0", false);
    let gcc_bin = tmp.path().join("gcc-bin");
    script(&gcc_bin.join("gcc"), "echo 14.2.0\n");
    let path = format!(
        "{}:{}:{}:{}",
        old.join("bin").display(),
        new.join("bin").display(),
        gcc_bin.display(),
        tools_path()
    );
    let run = doctor(
        home.path(),
        &[],
        &[("PATH", &path), ("CUDA_HOME", new.to_str().unwrap())],
    );
    let doc = run.json();
    let f = finding(&doc, "nvcc-path-order");
    assert_eq!(f["severity"], "warning");
    assert!(f["evidence"].to_string().contains("CUDA 12.4.0"), "{f:#}");
    assert!(!ids(&run).contains(&"host-compiler-unsupported".to_owned()));

    // CUDA_HOME at the old toolkit, whose nvcc refuses gcc 14.
    let path = format!(
        "{}:{}:{}",
        old.join("bin").display(),
        gcc_bin.display(),
        tools_path()
    );
    let run = doctor(
        home.path(),
        &[],
        &[("PATH", &path), ("CUDA_HOME", old.to_str().unwrap())],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    let doc = run.json();
    let f = finding(&doc, "host-compiler-unsupported");
    assert!(f["message"].as_str().unwrap().contains("14.2.0"), "{f:#}");
    assert!(f["evidence"]
        .to_string()
        .contains("unsupported GNU version"));
    assert!(f["fix"].as_str().unwrap().contains("gcc-13"));
    assert!(!ids(&run).contains(&"nvcc-path-order".to_owned()));
}

#[test]
fn explain_and_usage() {
    let home = tempfile::tempdir().unwrap();
    let oom = cudaup(&["doctor", "--explain", "oom"], home.path());
    assert_eq!(oom.code, 0);
    for needle in [
        "gradient accumulation",
        "bf16",
        "expandable_segments:True",
        "empty_cache",
        "memory_summary",
    ] {
        assert!(
            oom.stdout.to_lowercase().contains(&needle.to_lowercase()),
            "{needle}"
        );
    }
    let util = cudaup(&["doctor", "--explain", "util", "--json"], home.path());
    assert_eq!(util.code, 0);
    assert_eq!(util.json()["explain"], "util");
    assert!(util.json()["text"].as_str().unwrap().contains("pin_memory"));

    assert_eq!(
        cudaup(&["doctor", "--explain", "speed"], home.path()).code,
        2
    );
    assert_eq!(
        cudaup(&["doctor", "--system-root", "/does/not/exist"], home.path()).code,
        2
    );
    let help = cudaup(&["doctor", "--help"], home.path());
    assert!(
        help.stdout.contains("1 at least one error"),
        "{}",
        help.stdout
    );
}
