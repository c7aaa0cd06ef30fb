//! Linux aarch64 machines as `detect` reads them from a captured tree (GH200, DGX Spark, a
//! Jetson Orin), and the plans made from what it reads. No ARM64 machine was at hand: each tree
//! holds the files these machines are known to have, in the shape of the real H200 capture
//! (`tests/fixtures/h200-root`), with the values named below.

use crate::common::*;

/// `/proc/driver/nvidia/version` of the open module on aarch64, as NVIDIA's aarch64 driver prints
/// it (the header line's shape is the one `src/detect/driver.rs` tests with, `for aarch64`).
fn arm_open_module(t: &Tree, version: &str) {
    t.file(
        "/proc/driver/nvidia/version",
        format!("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  {version}  Release Build  (dvs-builder@U22-I3-AM25-25-1)  Tue Sep 23 10:14:24 UTC 2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"),
    );
    t.file("/sys/module/nvidia/version", format!("{version}\n"));
    t.file(
        "/proc/modules",
        "nvidia_uvm 1900544 0 - Live 0x0000000000000000\nnvidia 14286848 1 nvidia_uvm, Live 0x0000000000000000 (OE)\n",
    );
}

fn ubuntu_2404_arm(t: &Tree, kernel: &str) {
    t.os_release("PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n");
    t.proc_version(&format!("Linux version {kernel} (buildd@bos03-arm64-012) (aarch64-linux-gnu-gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0, GNU ld (GNU Binutils for Ubuntu) 2.42) #17-Ubuntu SMP PREEMPT_DYNAMIC\n"));
    t.dir("/usr/lib/aarch64-linux-gnu");
    t.file("/usr/bin/python3", "");
}

/// A GH200: the Hopper GPU at 10de:2342 (pci.ids: `GH100 [GH200 120GB / 480GB]`), 3D controller.
fn gh200() -> Tree {
    let t = Tree::new();
    ubuntu_2404_arm(&t, "6.8.0-1015-nvidia-64k");
    arm_open_module(&t, "580.95.05");
    t.pci("0009:01:00.0", 0x10de, 0x2342, 0x030200);
    t
}

/// A DGX Spark: GB10's integrated GPU at a device id inside the range NVIDIA's kernel treats as
/// the DGX Spark iGPU (10de:2e00-2e3f, NVIDIA/NV-Kernels#396); the exact id is a pick in it.
fn dgx_spark() -> Tree {
    let t = Tree::new();
    ubuntu_2404_arm(&t, "6.11.0-1016-nvidia");
    arm_open_module(&t, "580.95.05");
    t.pci("000f:01:00.0", 0x10de, 0x2e12, 0x030000);
    t
}

fn detect(t: &Tree) -> serde_json::Value {
    let home = tempfile::tempdir().unwrap();
    let run = cudaup(
        &["detect", "--json", "--system-root", &t.root_arg()],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

/// `plan --system` over what `detect` wrote.
fn plan_of(system: &serde_json::Value, extra: &[&str]) -> (i32, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("system.json");
    fs_err::write(&file, serde_json::to_vec(system).unwrap()).unwrap();
    let mut args = vec!["plan", "--system", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let run = cudaup(&args, dir.path());
    (
        run.code,
        serde_json::from_str(&run.stdout).unwrap_or_default(),
    )
}

fn component<'a>(plan: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    plan["components"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {plan:#}"))
}

#[test]
fn gh200_tree_detects_aarch64_hopper_and_plans_the_sbsa_stack() {
    let sys = detect(&gh200());
    assert_eq!(sys["os"]["arch"], "aarch64");
    assert_eq!(sys["gpus"][0]["pci_id"], "10de:2342");
    assert_eq!(sys["gpus"][0]["compute_capability"], "9.0");
    assert_eq!(sys["gpus"][0]["architecture"], "Hopper");
    assert_eq!(sys["driver"]["version"], "580.95.05");
    let (code, plan) = plan_of(&sys, &["--profile", "pytorch"]);
    assert_eq!(code, 0, "{plan:#}");
    assert!(plan.to_string().contains("sm_90 SASS"), "{plan:#}");
    // Grace Hopper needs the open kernel module; the one loaded is open, so it is kept.
    assert_eq!(component(&plan, "driver")["action"], "keep", "{plan:#}");
}

#[test]
fn dgx_spark_tree_detects_gb10_by_nvidias_range_and_gets_sm120_sass() {
    let sys = detect(&dgx_spark());
    assert_eq!(sys["os"]["arch"], "aarch64");
    assert_eq!(sys["gpus"][0]["pci_id"], "10de:2e12");
    assert_eq!(sys["gpus"][0]["compute_capability"], "12.1");
    assert_eq!(sys["gpus"][0]["architecture"], "Blackwell");
    let (code, plan) = plan_of(&sys, &["--profile", "pytorch"]);
    assert_eq!(code, 0, "{plan:#}");
    let text = plan.to_string();
    assert!(text.contains("sm_120 SASS"), "{plan:#}");
    assert!(!text.contains("PTX, compiled by the driver"), "{plan:#}");
}

#[test]
fn jetson_orin_tree_says_the_stack_comes_with_jetpack() {
    let t = Tree::new();
    t.os_release("NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nID_LIKE=debian\n");
    // /etc/nv_tegra_release of L4T R36.4.3 (JetPack 6.2), the board's device-tree model.
    t.file("/etc/nv_tegra_release", "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n# KERNEL_VARIANT: oot\nTARGET_USERSPACE_LIB_DIR=nvidia\nTARGET_USERSPACE_LIB_DIR_PATH=usr/lib/aarch64-linux-gnu/nvidia\n");
    t.file(
        "/proc/device-tree/model",
        "NVIDIA Jetson AGX Orin Developer Kit\0",
    );
    t.file("/usr/bin/python3", "");
    let sys = detect(&t);
    assert_eq!(sys["os"]["arch"], "aarch64");
    assert_eq!(sys["os"]["jetson"]["l4t"], "36.4.3");
    assert_eq!(sys["gpus"][0]["compute_capability"], "8.7");
    let (code, plan) = plan_of(&sys, &["--profile", "pytorch"]);
    assert_eq!(code, 5, "no desktop packages on a Jetson: {plan:#}");
    assert_eq!(plan["jetson"]["jetpack"], "6.2");
    assert!(plan["components"].as_array().is_none_or(|c| c.is_empty()));
    assert!(plan.to_string().contains("jetson-ai-lab"), "{plan:#}");
}

/// A `--system` picture of a GH200 with its open driver, for installs made here for it.
fn gh200_picture(dir: &std::path::Path) -> String {
    let sys = serde_json::json!({
        "os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "aarch64", "wsl": false},
        "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA GH200 480GB", "pci_id": "10de:2342",
                  "compute_capability": "9.0", "architecture": "Hopper"}],
        "driver": {"version": "580.95.05", "kernel_module": "open"},
        "pythons": [{"path": "/usr/bin/python3", "version": "3.12.3"}]
    });
    let file = dir.join("gh200.json");
    fs_err::write(&file, serde_json::to_vec(&sys).unwrap()).unwrap();
    file.display().to_string()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Every receipt file entry matches the bytes on disk.
fn receipt_matches_disk(prefix: &std::path::Path) -> serde_json::Value {
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(prefix.join(".cudaup-receipt.json")).unwrap())
            .unwrap();
    for f in receipt["files"].as_array().unwrap() {
        let path = prefix.join(f["path"].as_str().unwrap());
        if let Some(link) = f["link"].as_str() {
            assert_eq!(
                fs_err::read_link(&path).unwrap(),
                std::path::Path::new(link)
            );
        } else {
            let bytes = fs_err::read(&path).unwrap();
            assert_eq!(f["size"], bytes.len(), "{}", path.display());
            assert_eq!(f["sha256"].as_str().unwrap(), sha256_hex(&bytes));
        }
    }
    receipt
}

#[test]
fn linux_sbsa_redist_route_installs_nvidias_arm_archives_with_their_layout() {
    let m = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let prefix = root.path().join("cuda");
    let system = gh200_picture(root.path());
    let run = cudaup_env(
        &[
            "--home",
            &home.path().display().to_string(),
            "install",
            "--profile",
            "cuda-dev",
            "--system",
            &system,
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &m.path().display().to_string(),
            "--prefix",
            &prefix.display().to_string(),
            "--driver",
            "keep",
            "--yes",
        ],
        home.path(),
        &[("CUDAUP_TEST_NO_RETRY_DELAY", "1")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("built for aarch64: not run"),
        "{}",
        run.stdout
    );
    // NVIDIA's Arm server layout: targets/sbsa-linux, never targets/x86_64-linux.
    assert!(prefix
        .join("targets/sbsa-linux/include/cuda_runtime.h")
        .is_file());
    assert!(!prefix.join("targets/x86_64-linux").exists());
    assert!(prefix.join("bin/nvcc").is_file());
    assert!(prefix.join("lib64/libcudart.so.13.0.96").is_file());
    let receipt = receipt_matches_disk(&prefix);
    let text = receipt.to_string();
    assert!(
        text.contains("linux-sbsa"),
        "the sbsa archives: {receipt:#}"
    );
    assert!(
        !text.contains("linux-x86_64"),
        "no x86_64 archive: {receipt:#}"
    );
    // The archives' bytes are the mirror's, as its manifest states them.
    let manifest: serde_json::Value = serde_json::from_slice(
        &fs_err::read(m.path().join("compute/cuda/redist/redistrib_13.0.2.json")).unwrap(),
    )
    .unwrap();
    let nvcc = &manifest["cuda_nvcc"]["linux-sbsa"];
    let archive = fs_err::read(
        m.path()
            .join("compute/cuda/redist")
            .join(nvcc["relative_path"].as_str().unwrap()),
    )
    .unwrap();
    assert_eq!(nvcc["sha256"].as_str().unwrap(), sha256_hex(&archive));
    assert!(
        text.contains(nvcc["sha256"].as_str().unwrap()),
        "{receipt:#}"
    );
}

#[test]
fn mirror_create_for_aarch64_copies_the_sbsa_archives_only() {
    let upstream = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("mirror");
    let run = cudaup_env(
        &[
            "--home",
            &home.path().display().to_string(),
            "mirror",
            "create",
            &dir.display().to_string(),
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &upstream.path().display().to_string(),
            "--arch",
            "aarch64",
        ],
        home.path(),
        &[("CUDAUP_TEST_NO_RETRY_DELAY", "1")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let redist = dir.join("compute/cuda/redist");
    assert!(redist.join("cuda_nvcc/linux-sbsa").is_dir());
    assert!(!redist.join("cuda_nvcc/linux-x86_64").exists());
    assert!(dir.join("compute/cudnn/redist/cudnn/linux-sbsa").is_dir());
    // Byte for byte what upstream serves.
    let rel = "compute/cuda/redist/redistrib_13.0.2.json";
    assert_eq!(
        fs_err::read(dir.join(rel)).unwrap(),
        fs_err::read(upstream.path().join(rel)).unwrap()
    );
    // An unknown architecture is a clear error.
    let bad = out.path().join("bad");
    let run = cudaup(
        &[
            "--home",
            &home.path().display().to_string(),
            "mirror",
            "create",
            &bad.display().to_string(),
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &upstream.path().display().to_string(),
            "--arch",
            "riscv64",
        ],
        home.path(),
    );
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("riscv64"), "{}", run.stderr);
}

/// The wheel route for aarch64 with real NVIDIA wheels (the two small ones, both architectures,
/// fetched from PyPI once with pip: this test needs the network the first time) through a
/// loopback index: the manylinux aarch64 wheel is picked, its files land in NVIDIA's layout, and
/// the libraries are Arm ELF files.
#[test]
fn aarch64_wheel_route_with_real_wheels_from_pypi_network() {
    let wheels = crate::common::pypi_wheels(
        "nvidia-wheels-aarch64",
        &["nvidia-cuda-runtime==13.0.96", "nvidia-cuda-crt==13.0.88"],
        &[None, Some("manylinux2014_aarch64")],
    );
    let index = crate::common::wheel_index(&wheels);
    let server = crate::common::server::Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let prefix = root.path().join("cuda");
    let system = gh200_picture(root.path());
    let run = cudaup(
        &[
            "--home",
            &home.path().display().to_string(),
            "install",
            "--profile",
            "cuda-dev",
            // The two real wheels this test fetched (the index serves no others).
            "--components",
            "cudart,crt",
            "--system",
            &system,
            "--cuda",
            "13.0.2",
            "--no-cudnn",
            "--source",
            "wheels",
            "--index-url",
            &format!("{}/simple", server.url()),
            "--allow-http",
            "--prefix",
            &prefix.display().to_string(),
            "--driver",
            "keep",
            "--yes",
        ],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let lib = fs_err::read(prefix.join("lib64/libcudart.so.13")).unwrap();
    // ELF e_machine 183 = EM_AARCH64.
    assert_eq!(&lib[..4], b"\x7fELF");
    assert_eq!(
        u16::from_le_bytes([lib[18], lib[19]]),
        183,
        "an aarch64 library"
    );
    assert!(prefix.join("include/crt/host_config.h").is_file());
    assert!(prefix.join("targets/sbsa-linux/lib").exists());
    let receipt = receipt_matches_disk(&prefix);
    let text = receipt.to_string();
    assert!(text.contains("aarch64.whl"), "{receipt:#}");
    assert!(!text.contains("x86_64.whl"), "{receipt:#}");
    // The receipt records the aarch64 wheel by its sha256.
    let crt = fs_err::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("nvidia_cuda_crt") && n.contains("aarch64")
        })
        .unwrap();
    assert!(
        text.contains(&sha256_hex(&fs_err::read(crt).unwrap())),
        "{receipt:#}"
    );
    let served: Vec<_> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(served.iter().any(|p| p.contains("aarch64")), "{served:?}");
    assert!(
        !served.iter().any(|p| p.contains("x86_64.whl")),
        "{served:?}"
    );
}
