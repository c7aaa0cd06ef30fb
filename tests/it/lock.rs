//! `cudaup lock` and `install --locked` (issue 42, item 2): a lock made from two machine
//! pictures is the same bytes twice, installs on each picture and is refused on a third naming
//! what does not fit; a mirror whose wheel bytes changed is refused with nothing installed;
//! `lock --check` says whether a home has its part; the Python part exports as PEP 751
//! pylock.toml. Offline: the wheels are built here, the indexes are on loopback.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;
use crate::framework::ARCH;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);
const TAG: &str = "2.14.1+cu130";

/// `whl/cu130` with the planned torch and companions (built from `seed`: another seed gives
/// other bytes under the same file names), and an empty `simple/` standing in for PyPI.
fn index(seed: &str) -> tempfile::TempDir {
    index_with(seed, None)
}

/// [`index`], with torch requiring `cudaup-demo-dep==1.0`, which `simple/` serves, built from
/// `dep_seed` (`Some`).
fn index_with(seed: &str, dep_seed: Option<&str>) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let build = root.path().join("build");
    let requires: &[&str] = match dep_seed {
        Some(_) => &["cudaup-demo-dep==1.0"],
        None => &[],
    };
    let torch = wheels::build_wheel(
        &build,
        "torch",
        TAG,
        requires,
        &[
            wheels::WheelFile::new("torch/__init__.py", format!("# {seed}\n__version__ = '{TAG}'\nfrom . import version, cuda\n")),
            wheels::WheelFile::new("torch/version.py", "cuda = '13.0'\n"),
            wheels::WheelFile::new(
                "torch/cuda.py",
                format!("def is_available():\n    return True\ndef get_arch_list():\n    return {ARCH:?}\ndef device_count():\n    return 1\ndef get_device_capability(i=0):\n    return (9, 0)\ndef get_device_name(i=0):\n    return 'Fake GPU'\n"),
            ),
        ],
    );
    let built = vec![
        torch,
        wheels::fake_companion(&build, "torchvision", "0.29.1+cu130", TAG),
        wheels::fake_companion(&build, "torchaudio", "2.11.0+cu130", TAG),
    ];
    wheels::write_index(&root.path().join("whl/cu130"), &built);
    match dep_seed {
        Some(dep_seed) => {
            let dep = wheels::build_wheel(
                &build.join("dep"),
                "cudaup-demo-dep",
                "1.0",
                &[],
                &[wheels::WheelFile::new(
                    "cudaup_demo_dep/__init__.py",
                    format!("# {dep_seed}\n"),
                )],
            );
            wheels::write_index(&root.path().join("simple"), &[dep]);
        }
        None => {
            fs_err::create_dir_all(root.path().join("simple")).unwrap();
            fs_err::write(root.path().join("simple/index.html"), "<html></html>").unwrap();
        }
    }
    root
}

/// The H200 picture with this machine's Python (what the venv is made from here), as another
/// GPU (`name`, compute capability `cc`) and architecture.
fn picture(dir: &Path, file: &str, name: &str, cc: &str, arch: &str) -> String {
    let mut p: serde_json::Value = serde_json::from_slice(&fs_err::read(H200).unwrap()).unwrap();
    let python = tools().join("python3");
    let version = std::process::Command::new(&python)
        .args(["-c", "import platform; print(platform.python_version())"])
        .output()
        .unwrap();
    p["pythons"] = serde_json::json!([{
        "path": python.display().to_string(),
        "version": String::from_utf8_lossy(&version.stdout).trim(),
        "torch": null, "tensorflow": null
    }]);
    // What a bare host has: no toolkit or cuDNN to keep.
    p["toolkits"] = serde_json::json!([]);
    p["cudnn"] = serde_json::json!([]);
    p["gpus"][0]["name"] = name.into();
    p["gpus"][0]["compute_capability"] = cc.into();
    p["os"]["arch"] = arch.into();
    let path = dir.join(file);
    fs_err::write(&path, serde_json::to_vec_pretty(&p).unwrap()).unwrap();
    path.display().to_string()
}

fn sources(server: &Server) -> Vec<String> {
    vec![
        "--torch-index".into(),
        format!("{}/whl", server.url()),
        "--pypi-index".into(),
        format!("{}/simple", server.url()),
        "--allow-http".into(),
        "--driver".into(),
        "keep".into(),
    ]
}

/// `cudaup --home MAKER lock --system … --profile pytorch --torch 2.14 -o OUT` from `server`.
fn lock_args(maker: &Path, systems: &[&str], out: &Path, server: &Server) -> Vec<String> {
    let mut args: Vec<String> = vec!["--home".into(), maker.display().to_string(), "lock".into()];
    for s in systems {
        args.extend(["--system".into(), (*s).to_owned()]);
    }
    args.extend(
        ["--profile", "pytorch", "--torch", "2.14", "-o"]
            .map(String::from)
            .into_iter()
            .chain([out.display().to_string()]),
    );
    args.extend(sources(server));
    args
}

fn cudaup_in(home: &Path, args: &[String]) -> Run {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    cudaup_env(
        &refs,
        home,
        &[("CUDAUP_NO_UV", "1"), ("CUDAUP_TEST_NO_RETRY_DELAY", "1")],
    )
}

fn install_locked(home: &Path, lock: &Path, system: &str, server: &Server) -> Run {
    cudaup_in(home, &install_locked_args(home, lock, system, server))
}

fn install_locked_args(home: &Path, lock: &Path, system: &str, server: &Server) -> Vec<String> {
    let mut args: Vec<String> = [
        "--home",
        &home.display().to_string(),
        "install",
        "--locked",
        &lock.display().to_string(),
        "--system",
        system,
        "--venv",
        &home.join("venv").display().to_string(),
        "--yes",
    ]
    .map(String::from)
    .to_vec();
    args.extend(sources(server));
    args
}

#[test]
fn a_lock_of_two_pictures_installs_on_each_is_refused_on_a_third_and_on_changed_bytes() {
    let good = index("one");
    let server = Server::start(good.path().to_owned());
    let work = tempfile::tempdir().unwrap();
    let h200 = picture(work.path(), "h200.json", "NVIDIA H200", "9.0", "x86_64");
    let a100 = picture(
        work.path(),
        "a100.json",
        "NVIDIA A100-SXM4-80GB",
        "8.0",
        "x86_64",
    );
    let lock_once = |out: &Path| {
        let maker = work.path().join("maker");
        cudaup_in(
            work.path(),
            &lock_args(&maker, &[&h200, &a100], out, &server),
        )
    };
    let first = work.path().join("cudaup.lock");
    let made = lock_once(&first);
    assert_eq!(made.code, 0, "{}\n{}", made.stdout, made.stderr);
    let second = work.path().join("again.lock");
    assert_eq!(lock_once(&second).code, 0);
    let text = fs_err::read_to_string(&first).unwrap();
    assert_eq!(
        text,
        fs_err::read_to_string(&second).unwrap(),
        "lock twice is byte-identical"
    );
    let doc: toml::Value = toml::from_str(&text).unwrap();
    let hosts = doc["host"].as_array().unwrap();
    let names: Vec<&str> = hosts.iter().map(|h| h["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a100", "h200"]);
    assert_eq!(
        hosts[0]["gpus"].as_array().unwrap()[0].as_str(),
        Some("8.0")
    );
    assert_eq!(doc["uv"]["version"].as_str(), Some("0.13.9"));
    assert!(doc["catalog_date"].as_str().is_some());
    // Each wheel is locked with the sha256 of its bytes.
    let torch = hosts[1]["wheel"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"].as_str() == Some("torch"))
        .unwrap();
    let file = good
        .path()
        .join("whl/cu130/torch")
        .join(torch["filename"].as_str().unwrap());
    assert_eq!(
        torch["sha256"].as_str().unwrap(),
        hex::encode(Sha256::digest(fs_err::read(file).unwrap()))
    );

    // It installs on each picture, and lock --check agrees afterwards.
    for (name, system) in [("h200", &h200), ("a100", &a100)] {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().display().to_string();
        let lock = first.display().to_string();
        let check = || {
            cudaup(
                &["--home", &h, "lock", "--check", &lock, "--system", system],
                home.path(),
            )
        };
        let before = check();
        assert_eq!(before.code, 1, "{}\n{}", before.stdout, before.stderr);
        assert!(
            before
                .stdout
                .contains("no venv cudaup installed holds torch==2.14.1+cu130"),
            "{}",
            before.stdout
        );
        let r = install_locked(home.path(), &first, system, &server);
        assert_eq!(r.code, 0, "{name}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains(&format!("locked: host {name} of")),
            "{}",
            r.stdout
        );
        let after = check();
        assert_eq!(after.code, 0, "{}\n{}", after.stdout, after.stderr);
        assert!(
            after.stdout.contains(&format!("matches host {name}")),
            "{}",
            after.stdout
        );
    }

    // A third machine is refused, naming the part that does not fit; nothing is installed.
    let rtx = picture(
        work.path(),
        "rtx.json",
        "NVIDIA GeForce RTX 5090",
        "12.0",
        "x86_64",
    );
    let home = tempfile::tempdir().unwrap();
    let r = install_locked(home.path(), &first, &rtx, &server);
    assert_eq!(r.code, 5, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("is not covered by the lock"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("GPU class sm_120 (host"), "{}", r.stderr);
    assert!(!home.path().join("venv").exists());
    assert!(!home.path().join("receipts").exists());

    // A mirror with other bytes under the same names (its page lists their sha256) is refused
    // before anything is installed.
    let changed = index("two");
    let other = Server::start(changed.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let r = install_locked(home.path(), &first, &h200, &other);
    assert_eq!(r.code, 4, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!("torch-{TAG}-py3-none-any.whl")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("the lock says"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was installed"), "{}", r.stderr);
    assert!(!home.path().join("venv").exists());
    assert!(!home.path().join("receipts").exists());

    // The Python part as PEP 751 pylock.toml.
    let py = cudaup(
        &["lock", "--pylock", &first.display().to_string()],
        work.path(),
    );
    assert_eq!(py.code, 0, "{}", py.stderr);
    let pylock: toml::Value = toml::from_str(&py.stdout).unwrap();
    assert_eq!(pylock["lock-version"].as_str(), Some("1.0"));
    let packages = pylock["packages"].as_array().unwrap();
    let torch = packages
        .iter()
        .find(|p| p["name"].as_str() == Some("torch"))
        .unwrap();
    assert_eq!(torch["version"].as_str(), Some(TAG));
    assert_eq!(
        torch["wheels"][0]["hashes"]["sha256"].as_str(),
        hosts[1]["wheel"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"].as_str() == Some("torch"))
            .unwrap()["sha256"]
            .as_str()
    );
}

#[test]
fn fleet_report_names_the_hosts_that_drifted_from_the_lock() {
    let good = index("one");
    let server = Server::start(good.path().to_owned());
    let work = tempfile::tempdir().unwrap();
    let h200 = picture(work.path(), "h200.json", "NVIDIA H200", "9.0", "x86_64");
    let a100 = picture(
        work.path(),
        "a100.json",
        "NVIDIA A100-SXM4-80GB",
        "8.0",
        "x86_64",
    );
    let rtx = picture(
        work.path(),
        "rtx.json",
        "NVIDIA GeForce RTX 5090",
        "12.0",
        "x86_64",
    );
    let lock = work.path().join("cudaup.lock");
    let maker = work.path().join("maker");
    let args = lock_args(&maker, &[&h200, &a100], &lock, &server);
    assert_eq!(cudaup_in(work.path(), &args).code, 0);
    // What the Ansible role collects: install.json (`install --json`) and system.json per host.
    let reports = work.path().join("reports");
    let collect = |host: &str, system: &str, install: &serde_json::Value| {
        let dir = reports.join(host);
        fs_err::create_dir_all(&dir).unwrap();
        fs_err::copy(system, dir.join("system.json")).unwrap();
        fs_err::write(dir.join("install.json"), install.to_string()).unwrap();
    };
    let mut installed = Vec::new();
    for system in [&h200, &a100] {
        let home = tempfile::tempdir().unwrap();
        let mut args = install_locked_args(home.path(), &lock, system, &server);
        args.push("--json".into());
        let r = cudaup_in(home.path(), &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        installed.push(r.json());
    }
    collect("node-h200", &h200, &installed[0]);
    // A host whose torch moved on since (its report says another release) ...
    let mut moved = installed[1].clone();
    for c in moved["plan"]["components"].as_array_mut().unwrap() {
        if c["name"] == "torch" {
            c["version"] = "2.13.0".into();
        }
    }
    collect("node-a100", &a100, &moved);
    // ... and one the lock does not cover.
    collect("node-rtx", &rtx, &installed[0]);

    let r = cudaup(
        &[
            "fleet",
            "report",
            &reports.display().to_string(),
            "--lock",
            &lock.display().to_string(),
        ],
        work.path(),
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Held against the lock"), "{}", r.stdout);
    assert!(
        r.stdout.contains("node-a100 drifted (host a100 of the lock): framework torch 2.13.0 (cu130) (the lock: torch 2.14.1 (cu130))"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("node-rtx drifted: this machine is not covered by the lock"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("node-h200 drifted"), "{}", r.stdout);
    let json = cudaup(
        &[
            "fleet",
            "report",
            &reports.display().to_string(),
            "--lock",
            &lock.display().to_string(),
            "--json",
        ],
        work.path(),
    )
    .json();
    let drifted: Vec<&str> = json["lock"]["drifted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["host"].as_str().unwrap())
        .collect();
    assert_eq!(drifted, ["node-a100", "node-rtx"]);
}

#[test]
fn a_toolkit_lock_holds_each_archives_hash_and_refuses_a_mirror_with_other_archives() {
    let mirror = synthetic_mirror(&[]);
    let other = synthetic_mirror(&["--pad-mib", "1"]);
    let work = tempfile::tempdir().unwrap();
    let h200 = picture(work.path(), "h200.json", "NVIDIA H200", "9.0", "x86_64");
    let lock = work.path().join("cuda.lock");
    let stack = |mirror: &Path| -> Vec<String> {
        [
            "--system",
            &h200,
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--driver",
            "keep",
            "--mirror",
            &mirror.display().to_string(),
        ]
        .map(String::from)
        .to_vec()
    };
    let mut args: Vec<String> = [
        "--home",
        &work.path().join("maker").display().to_string(),
        "lock",
        "-o",
        &lock.display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    args.extend(stack(mirror.path()));
    let made = cudaup_in(work.path(), &args);
    assert_eq!(made.code, 0, "{}\n{}", made.stdout, made.stderr);
    let doc: toml::Value = toml::from_str(&fs_err::read_to_string(&lock).unwrap()).unwrap();
    let host = &doc["host"][0];
    assert_eq!(host["cuda"].as_str(), Some("13.0.2"));
    assert_eq!(host["cudnn"].as_str(), Some("9.17.0"));
    let archives = host["toolkit"].as_array().unwrap();
    let nvcc = archives
        .iter()
        .find(|a| a["name"].as_str() == Some("cuda_nvcc"))
        .unwrap_or_else(|| panic!("{archives:?}"));
    let file = mirror
        .path()
        .join("compute/cuda/redist/cuda_nvcc/linux-x86_64")
        .join(nvcc["filename"].as_str().unwrap());
    assert_eq!(
        nvcc["sha256"].as_str().unwrap(),
        hex::encode(Sha256::digest(fs_err::read(file).unwrap()))
    );

    let install = |home: &Path, mirror: &Path| {
        let mut args: Vec<String> = [
            "--home",
            &home.display().to_string(),
            "install",
            "--locked",
            &lock.display().to_string(),
            "--no-modify-path",
            "--yes",
        ]
        .map(String::from)
        .to_vec();
        args.extend(stack(mirror));
        cudaup_in(home, &args)
    };
    // Another mirror's cuda_nvcc (its manifest agrees with its bytes): refused, nothing installed.
    let home = tempfile::tempdir().unwrap();
    let r = install(home.path(), other.path());
    assert_eq!(r.code, 4, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("cuda_nvcc-linux-x86_64-"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was installed"), "{}", r.stderr);
    assert!(!home.path().join("toolkits").exists());
    assert!(!home.path().join("receipts").exists());
    // The locked mirror installs, and lock --check agrees.
    let r = install(home.path(), mirror.path());
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let h = home.path().display().to_string();
    let check = cudaup(
        &[
            "--home",
            &h,
            "lock",
            "--check",
            &lock.display().to_string(),
            "--system",
            &h200,
        ],
        home.path(),
    );
    assert_eq!(check.code, 0, "{}\n{}", check.stdout, check.stderr);
}

#[test]
fn needs_network_the_exported_pylock_installs_with_uv_into_a_fresh_venv() {
    let good = index("one");
    let server = Server::start(good.path().to_owned());
    let work = tempfile::tempdir().unwrap();
    let h200 = picture(work.path(), "h200.json", "NVIDIA H200", "9.0", "x86_64");
    let lock = work.path().join("cudaup.lock");
    let maker = work.path().join("maker");
    let args = lock_args(&maker, &[&h200], &lock, &server);
    assert_eq!(cudaup_in(work.path(), &args).code, 0);
    let pylock = work.path().join("pylock.toml");
    let out = cudaup(
        &[
            "lock",
            "--pylock",
            &lock.display().to_string(),
            "-o",
            &pylock.display().to_string(),
        ],
        work.path(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let home = tempfile::tempdir().unwrap();
    let Some(uv) = bring_uv(home.path(), &h200, &server) else {
        skipped(
            "needs_network_the_exported_pylock_installs_with_uv_into_a_fresh_venv",
            "PyPI did not answer: no uv was brought",
        );
        return;
    };
    let fresh = work.path().join("fresh");
    let uv_run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(&uv);
        cmd.args(args)
            .env("UV_CACHE_DIR", work.path().join("uv-cache"))
            .env("UV_NO_CONFIG", "1");
        crate::common::context::run(&mut cmd)
    };
    let made = uv_run(&[
        "venv",
        "--python",
        &tools().join("python3").display().to_string(),
        &fresh.display().to_string(),
    ]);
    assert_eq!(made.code, 0, "{}", made.stderr);
    let installed = uv_run(&[
        "pip",
        "install",
        "--python",
        &fresh.join("bin/python").display().to_string(),
        "--allow-insecure-host",
        "127.0.0.1",
        "-r",
        &pylock.display().to_string(),
    ]);
    assert_eq!(
        installed.code, 0,
        "{}\n{}",
        installed.stdout, installed.stderr
    );
    let out = std::process::Command::new(fresh.join("bin/python"))
        .args(["-c", "import torch; print(torch.__version__)"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), TAG);
}

/// uv, as cudaup brings it: an install into `home` (torch from `server`, everything else from
/// PyPI) fetches the pinned uv wheel from PyPI — the part that needs the network. `None` when
/// PyPI did not answer.
fn bring_uv(home: &Path, h200: &str, server: &Server) -> Option<std::path::PathBuf> {
    let torch = format!("{}/whl", server.url());
    let args = crate::common::pytorch::install_args(home, &home.join("uv-venv"), h200, &torch);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = cudaup_env(&argv, home, &[("CUDAUP_TEST_NO_RETRY_DELAY", "1")]);
    let uv = home.join("tools/uv-0.13.9/uv");
    (r.code == 0 && uv.is_file()).then_some(uv)
}

/// Issue 42, left from the first round: a lock holds the framework's dependencies (resolved by
/// the uv cudaup brings, each wheel with its sha256), the exported pylock.toml lists them, and
/// `install --locked` hands pip and uv every hash (`--require-hashes`): a mirror whose
/// dependency changed bytes (the framework's own wheels unchanged, so cudaup's own check
/// passes) is refused by the installer, with no venv left.
#[test]
fn needs_network_a_lock_holds_the_dependencies_and_the_installer_checks_every_hash() {
    let name = "needs_network_a_lock_holds_the_dependencies_and_the_installer_checks_every_hash";
    let work = tempfile::tempdir().unwrap();
    let h200 = picture(work.path(), "h200.json", "NVIDIA H200", "9.0", "x86_64");
    // The maker's home gets cudaup's uv once, from PyPI; the lock is then made offline.
    let maker = work.path().join("maker");
    fs_err::create_dir_all(&maker).unwrap();
    let plain = index("one");
    let Some(_) = bring_uv(&maker, &h200, &Server::start(plain.path().to_owned())) else {
        skipped(name, "PyPI did not answer: no uv was brought");
        return;
    };
    let good = index_with("one", Some("dep-one"));
    let server = Server::start(good.path().to_owned());
    let lock = work.path().join("cudaup.lock");
    let with_uv = [("CUDAUP_TEST_NO_RETRY_DELAY", "1")];
    let args = lock_args(&maker, &[&h200], &lock, &server);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let made = cudaup_env(&argv, work.path(), &with_uv);
    assert_eq!(made.code, 0, "{}\n{}", made.stdout, made.stderr);
    let doc: toml::Value = toml::from_str(&fs_err::read_to_string(&lock).unwrap()).unwrap();
    let deps = doc["host"][0]["dependency"].as_array().unwrap();
    let names: Vec<&str> = deps.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["cudaup-demo-dep"],
        "torch and its companions are held as wheels"
    );
    let dep_file = good
        .path()
        .join("simple/cudaup-demo-dep")
        .join(deps[0]["filename"].as_str().unwrap());
    assert_eq!(
        deps[0]["sha256"].as_str().unwrap(),
        hex::encode(Sha256::digest(fs_err::read(&dep_file).unwrap()))
    );
    let py = cudaup(
        &["lock", "--pylock", &lock.display().to_string()],
        work.path(),
    );
    let pylock: toml::Value = toml::from_str(&py.stdout).unwrap();
    assert!(
        pylock["packages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"].as_str() == Some("cudaup-demo-dep")
                && p["wheels"][0]["hashes"]["sha256"] == deps[0]["sha256"]),
        "{}",
        py.stdout
    );

    // pip (no uv) and uv each install the locked stack, checking every hash.
    let pip_home = tempfile::tempdir().unwrap();
    let no_uv = [("CUDAUP_NO_UV", "1"), ("CUDAUP_TEST_NO_RETRY_DELAY", "1")];
    for (home, env) in [
        (pip_home.path(), &no_uv[..]),
        (maker.as_path(), &with_uv[..]),
    ] {
        let args = install_locked_args(home, &lock, &h200, &server);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = cudaup_env(&argv, home, env);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stdout.contains(
                "the installer checks each of the 4 distributions it installs against the lock's sha256"
            ),
            "{}",
            r.stdout
        );
        let out = std::process::Command::new(home.join("venv/bin/python"))
            .args([
                "-c",
                "import cudaup_demo_dep, torch; print(torch.__version__)",
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), TAG);
    }

    // The dependency's bytes changed on the mirror (torch's did not): the installer refuses,
    // pip in a fresh home, uv (cudaup's copy) in the maker's, into a new venv.
    let changed = index_with("one", Some("dep-two"));
    let other = Server::start(changed.path().to_owned());
    let fresh = tempfile::tempdir().unwrap();
    for (home, env) in [(fresh.path(), &no_uv[..]), (maker.as_path(), &with_uv[..])] {
        let mut args = install_locked_args(home, &lock, &h200, &other);
        let venv = home.join("venv-changed");
        let at = args.iter().position(|a| a == "--venv").unwrap();
        args[at + 1] = venv.display().to_string();
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = cudaup_env(&argv, home, env);
        assert_ne!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        let said = format!("{}{}", r.stdout, r.stderr).to_lowercase();
        assert!(said.contains("hash"), "{}\n{}", r.stdout, r.stderr);
        assert!(!venv.exists(), "no venv is left");
    }
}
