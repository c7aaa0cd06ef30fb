//! `cudaup detect` on captured system-root trees (whole machines), on this machine, and with bad
//! input.

use std::collections::BTreeSet;

use crate::common::*;

/// The H200 machine as captured: Ubuntu 24.04 in a container, driver 580.159.04 (open module),
/// CUDA 13.0 under /usr/local, system cuDNN 9.14, torch 2.11 cu130 in /opt/torch/.venv.
fn h200_tree() -> Tree {
    let t = Tree::new();
    t.os_release(UBUNTU_2404)
        .proc_version("Linux version 6.18.44-fc-v657-gpu (nixbld@localhost) (gcc (GCC) 14.3.0) #1 SMP PREEMPT_DYNAMIC @0\n")
        .nvidia_module("580.159.04", true)
        .pci("0000:00:00.0", 0x8086, 0x1237, 0x060000)
        .pci("0000:00:06.0", 0x10de, 0x2335, 0x030200)
        .file("/.dockerenv", "")
        .file(
            "/usr/local/cuda-13.0/version.json",
            r#"{"cuda" : {"name" : "CUDA SDK", "version" : "13.0.2"}, "cuda_nvcc" : {"name" : "CUDA NVCC", "version" : "13.0.88"}}"#,
        )
        .symlink("/usr/local/cuda", "/usr/local/cuda-13.0")
        .symlink("/usr/local/cuda-13", "cuda-13.0")
        .file("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0", "")
        .symlink("/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcudnn.so.9.14.0")
        .file("/usr/local/nvidia/lib64/libnvidia-ml.so.580.159.04", "")
        .venv("/opt/torch/.venv", "3.12.3", Some(TORCH_CU130))
        .dir("/opt/torch/.venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info")
        .file("/usr/bin/python3.12", "")
        .symlink("/usr/bin/python3", "python3.12")
        .dir("/usr/lib/python3/dist-packages");
    t
}

#[test]
fn h200_machine_from_its_files() {
    let t = h200_tree();
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["detect", "--json", "--system-root", &t.root_arg()],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["os"]["distro"], "ubuntu");
    assert_eq!(j["os"]["version"], "24.04");
    assert_eq!(j["os"]["wsl"], false);
    let gpus = j["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 1, "the host bridge is not a GPU");
    assert_eq!(gpus[0]["vendor"], "nvidia");
    assert!(gpus[0]["name"].as_str().unwrap().contains("H200"));
    assert_eq!(gpus[0]["compute_capability"], "9.0");
    assert_eq!(gpus[0]["architecture"], "Hopper");
    assert_eq!(j["driver"]["version"], "580.159.04");
    assert_eq!(j["driver"]["kernel_module"], "open");
    // No NVML in a captured tree: the newest CUDA comes from the catalog's driver table, and
    // agrees with what nvidia-smi printed on the real machine.
    assert_eq!(j["driver"]["cuda_version"], "13.0");
    let toolkits = j["toolkits"].as_array().unwrap();
    assert_eq!(toolkits.len(), 1, "three names, one toolkit: {toolkits:?}");
    assert_eq!(toolkits[0]["version"], "13.0.2");
    assert_eq!(toolkits[0]["path"], "/usr/local/cuda-13.0");
    assert_eq!(toolkits[0]["owner"], "system");
    let cudnn: Vec<(String, String)> = j["cudnn"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["version"].as_str().unwrap().into(),
                c["path"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        cudnn.contains(&("9.14.0".into(), "/usr/lib/x86_64-linux-gnu".into())),
        "{cudnn:?}"
    );
    assert!(
        cudnn.contains(&(
            "9.19.0.56".into(),
            "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn".into()
        )),
        "{cudnn:?}"
    );
    let pythons = j["pythons"].as_array().unwrap();
    let venv = pythons
        .iter()
        .find(|p| p["path"] == "/opt/torch/.venv/bin/python3")
        .expect("the venv's python is found");
    assert_eq!(venv["version"], "3.12.3");
    assert_eq!(venv["torch"]["version"], "2.11.0+cu130");
    assert_eq!(venv["torch"]["cuda"], "13.0");
    assert_eq!(venv["torch"]["cuda_available"], serde_json::Value::Null);
    let system = pythons
        .iter()
        .find(|p| p["path"] == "/usr/bin/python3")
        .unwrap();
    assert_eq!(system["version"], "3.12");
    assert_eq!(system["torch"], serde_json::Value::Null);

    let human = cudaup(&["detect", "--system-root", &t.root_arg()], home.path());
    assert_eq!(human.code, 0);
    for needle in [
        "Ubuntu 24.04.3 LTS",
        "in a docker container",
        "H200",
        "compute capability 9.0",
        "580.159.04, open kernel module (runs CUDA up to 13.0)",
        "/usr/local/cuda-13.0",
        "torch 2.11.0+cu130 (CUDA 13.0)",
        "CUDA 11.8 and newer toolkits build for it (sm_90)",
        "nothing looks wrong",
    ] {
        assert!(
            human.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            human.stdout
        );
    }
}

#[test]
fn json_has_exactly_the_contract_keys() {
    let t = h200_tree();
    let home = tempfile::tempdir().unwrap();
    let j = cudaup(
        &["detect", "--json", "--system-root", &t.root_arg()],
        home.path(),
    )
    .json();
    let keys = |v: &serde_json::Value| -> BTreeSet<String> {
        v.as_object().unwrap().keys().cloned().collect()
    };
    let set = |k: &[&str]| -> BTreeSet<String> { k.iter().map(|s| s.to_string()).collect() };
    assert_eq!(
        keys(&j),
        set(&[
            "schema_version",
            "os",
            "gpus",
            "driver",
            "nouveau_loaded",
            "toolkits",
            "cudnn",
            "pythons"
        ])
    );
    assert_eq!(j["schema_version"], 1);
    assert_eq!(
        keys(&j["os"]),
        set(&[
            "family",
            "distro",
            "version",
            "arch",
            "kernel",
            "wsl",
            "secure_boot"
        ])
    );
    assert_eq!(
        keys(&j["gpus"][0]),
        set(&[
            "index",
            "vendor",
            "name",
            "pci_id",
            "compute_capability",
            "architecture",
            "memory_mib"
        ])
    );
    assert_eq!(
        keys(&j["driver"]),
        set(&["version", "cuda_version", "kernel_module"])
    );
    assert_eq!(keys(&j["toolkits"][0]), set(&["version", "path", "owner"]));
    assert_eq!(keys(&j["cudnn"][0]), set(&["version", "path"]));
    // `tensorflow` sits beside `torch` (documented in the README).
    assert_eq!(
        keys(&j["pythons"][0]),
        set(&["path", "version", "torch", "tensorflow"])
    );
    assert_eq!(
        keys(&j["pythons"][0]["torch"]),
        set(&["version", "cuda", "cuda_available"])
    );
}

#[test]
fn workstation_without_driver_nouveau_and_secure_boot() {
    let t = Tree::new();
    t.os_release(UBUNTU_2204)
        .proc_version(LINUX_VERSION)
        .file("/proc/modules", "nouveau 2842624 3 - Live 0x0000000000000000\ndrm 2433024 5 nouveau, Live 0x0000000000000000\n")
        .file(
            "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
            [6u8, 0, 0, 0, 1],
        )
        .pci("0000:01:00.0", 0x10de, 0x2b85, 0x030000) // RTX 5090
        .pci("0000:01:00.1", 0x10de, 0x22e8, 0x040300) // its HD Audio function
        .pci("0000:02:00.0", 0x10de, 0x1b06, 0x030000); // GTX 1080 Ti
    let home = tempfile::tempdir().unwrap();
    let j = cudaup(
        &["detect", "--json", "--system-root", &t.root_arg()],
        home.path(),
    )
    .json();
    assert_eq!(j["driver"], serde_json::Value::Null);
    assert_eq!(j["nouveau_loaded"], true);
    assert_eq!(j["os"]["secure_boot"], true);
    let gpus = j["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2, "audio functions are not GPUs: {gpus:?}");
    assert_eq!(gpus[0]["compute_capability"], "12.0");
    assert_eq!(gpus[0]["architecture"], "Blackwell");
    assert!(gpus[0]["name"].as_str().unwrap().contains("RTX 5090"));
    assert_eq!(gpus[1]["compute_capability"], "6.1");
    assert_eq!(gpus[1]["architecture"], "Pascal");
    assert_eq!(gpus[1]["index"], 1);

    let human = cudaup(&["detect", "--system-root", &t.root_arg()], home.path()).stdout;
    assert!(
        human.contains("error: 2 NVIDIA GPU(s) on the PCI bus, but no NVIDIA driver is loaded"),
        "{human}"
    );
    assert!(human.contains("Secure Boot is on"), "{human}");
    assert!(human.contains("nouveau driver is loaded"), "{human}");
    assert!(
        human.contains("CUDA 11.0 to 12.9 toolkits build for it (sm_61); newer ones dropped it"),
        "{human}"
    );
}

#[test]
fn driver_library_mismatch_is_a_finding() {
    let t = Tree::new();
    t.os_release(UBUNTU_2204)
        .nvidia_module("580.95.05", false)
        .file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.575.57.08", "")
        .symlink(
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
            "libnvidia-ml.so.575.57.08",
        )
        .pci("0000:01:00.0", 0x10de, 0x2204, 0x030000);
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(&["detect", "--system-root", &t.root_arg()], home.path());
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("driver/library version mismatch: kernel module 580.95.05, user-space NVML library 575.57.08"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("proprietary kernel module"),
        "{}",
        run.stdout
    );
}

#[test]
fn toolkit_and_torch_newer_than_the_driver() {
    let t = Tree::new();
    t.os_release(UBUNTU_2204)
        .nvidia_module("535.129.03", false)
        .pci("0000:01:00.0", 0x10de, 0x2204, 0x030000)
        .file(
            "/usr/local/cuda-13.0/version.json",
            r#"{"cuda": {"name": "CUDA SDK", "version": "13.0.2"}}"#,
        )
        .file(
            "/usr/local/cuda-12.8/version.json",
            r#"{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}"#,
        )
        .venv("/opt/lab/.venv", "3.11.9", Some(TORCH_CU130))
        .venv("/home/ada/.venv", "3.12.1", Some(TORCH_CPU));
    let home = tempfile::tempdir().unwrap();
    let out = cudaup(&["detect", "--system-root", &t.root_arg()], home.path()).stdout;
    assert!(out.contains("runs CUDA up to 12.2"), "{out}");
    assert!(
        out.contains(
            "CUDA toolkit 13.0.2 at /usr/local/cuda-13.0 is newer than the driver supports"
        ),
        "{out}"
    );
    assert!(
        !out.contains("12.8.1 at /usr/local/cuda-12.8 is newer"),
        "same major runs under minor-version compatibility:\n{out}"
    );
    assert!(
        out.contains("torch 2.11.0+cu130 in /opt/lab/.venv/bin/python3 is built for CUDA 13.0"),
        "{out}"
    );
    assert!(
        out.contains("torch 2.11.0+cpu in /home/ada/.venv/bin/python3 is a CPU-only build"),
        "{out}"
    );
}

#[test]
fn wsl2_amd_and_intel() {
    let t = Tree::new();
    t.os_release(UBUNTU_2204)
        .proc_version("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0, GNU ld (GNU Binutils) 2.40) #1 SMP Fri Mar 29 23:14:13 UTC 2024\n")
        .pci("0000:03:00.0", 0x1002, 0x73bf, 0x030000)
        .pci("0000:00:02.0", 0x8086, 0xa780, 0x030000);
    let home = tempfile::tempdir().unwrap();
    let j = cudaup(
        &["detect", "--json", "--system-root", &t.root_arg()],
        home.path(),
    )
    .json();
    assert_eq!(j["os"]["wsl"], true);
    assert_eq!(j["os"]["kernel"], "5.15.153.1-microsoft-standard-WSL2");
    let vendors: Vec<&str> = j["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["vendor"].as_str().unwrap())
        .collect();
    assert_eq!(vendors, ["intel", "amd"]);
    assert!(j["gpus"][0]["compute_capability"].is_null());
    let human = cudaup(&["detect", "--system-root", &t.root_arg()], home.path()).stdout;
    assert!(human.contains("inside WSL2"), "{human}");
    assert!(human.contains("no CUDA (use ROCm builds)"), "{human}");
    assert!(
        human.contains("no NVIDIA GPU found (other GPUs:"),
        "{human}"
    );
}

#[test]
fn empty_tree_is_a_machine_with_nothing() {
    let t = Tree::new();
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["detect", "--json", "--system-root", &t.root_arg()],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert!(j["gpus"].as_array().unwrap().is_empty());
    assert!(j["driver"].is_null());
    assert!(j["os"]["distro"].is_null());
}

#[test]
fn this_machine_detects_and_exits_zero() {
    let home = tempfile::tempdir().unwrap();
    // NVML is tried (a library the test names, which is not there: the load fails as on a
    // machine without a driver) and never the host's; the host's nvidia-smi is not on PATH.
    let nvml = home.path().join("no-driver/libnvidia-ml.so.1");
    let nvml = nvml.to_str().unwrap();
    let env = [("CUDAUP_NO_NVML", "0"), ("CUDAUP_NVML_LIBRARY", nvml)];
    let run = cudaup_env(&["detect"], home.path(), &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("GPUs ("), "{}", run.stdout);
    // CI machines have no NVIDIA GPU: there, detect must say so plainly.
    if !std::path::Path::new("/proc/driver/nvidia/version").exists() {
        assert!(
            run.stdout.contains("no NVIDIA GPU found")
                || run.stdout.contains("no NVIDIA driver loaded"),
            "{}",
            run.stdout
        );
    }
    let json = cudaup_env(&["detect", "--json"], home.path(), &env);
    assert_eq!(json.code, 0);
    assert_eq!(json.json()["schema_version"], 1);
}

#[test]
fn h200_fixture_round_trips_as_a_system() {
    let text = include_str!("../fixtures/h200-detect.json");
    let system: cudaup::model::system::System = serde_json::from_str(text).unwrap();
    assert_eq!(system.gpus[0].compute_capability.as_deref(), Some("9.0"));
    assert_eq!(
        system.driver.as_ref().unwrap().cuda_version.as_deref(),
        Some("13.0")
    );
    let again = serde_json::to_string_pretty(&system).unwrap();
    assert_eq!(again.trim(), text.trim());
}

#[test]
fn bad_system_root_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["detect", "--system-root", "/nonexistent/cudaup-tree"],
        home.path(),
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("--system-root /nonexistent/cudaup-tree: not a directory"),
        "{}",
        run.stderr
    );
}

#[test]
fn broken_manifest_dir_is_a_usage_error_naming_the_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["--manifests", &dir.path().display().to_string(), "detect"],
        home.path(),
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("gpus.toml"), "{}", run.stderr);
}

#[test]
fn help_teaches() {
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(&["detect", "--help"], home.path());
    assert_eq!(run.code, 0);
    for needle in [
        "--json",
        "--system-root",
        "--deep",
        "capture-system-root.sh",
    ] {
        assert!(run.stdout.contains(needle), "{}", run.stdout);
    }
    let top = cudaup(&[], home.path());
    assert_eq!(top.code, 0);
    assert!(top.stdout.contains("Exit codes"), "{}", top.stdout);
}

/// The tree `scripts/capture-system-root.sh` captured on the real H200 machine agrees with what
/// the live `detect --json` reported there (NVML and running Pythons) on everything a file can
/// tell.
#[test]
fn captured_h200_tree_agrees_with_the_live_run() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/h200-root");
    let live: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/h200-detect.json")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(&["detect", "--json", "--system-root", root], home.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let cap = run.json();
    assert_eq!(cap["os"], live["os"]);
    assert_eq!(cap["driver"], live["driver"]);
    assert_eq!(cap["nouveau_loaded"], live["nouveau_loaded"]);
    for key in ["compute_capability", "architecture", "pci_id", "vendor"] {
        assert_eq!(cap["gpus"][0][key], live["gpus"][0][key], "{key}");
    }
    assert_eq!(cap["cudnn"], live["cudnn"]);
    assert_eq!(cap["pythons"][0], live["pythons"][0]);
    assert_eq!(cap["toolkits"][0]["path"], live["toolkits"][0]["path"]);
    assert_eq!(
        cap["toolkits"][0]["version"], "13.0",
        "from the directory name"
    );
}
