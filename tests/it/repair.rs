//! `cudaup repair`: breakage built on purpose is found and fixed, and repair converges; and the
//! installer killed at each named checkpoint converges on a re-run.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::server::Server;
use crate::common::*;
use crate::framework::{torch_index, ARCH};

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

fn install_args(home: &Path, mirror: &Path, torch: &str) -> Vec<String> {
    [
        "--home",
        &home.display().to_string(),
        "install",
        "--system",
        H200,
        "--driver",
        "keep",
        "--profile",
        "full",
        "--torch",
        "2.14",
        "--torch-index",
        torch,
        "--cuda",
        "13.0.2",
        "--cudnn",
        "9.17.0",
        "--mirror",
        &mirror.display().to_string(),
        "--allow-http",
        "--yes",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run_install(home: &Path, mirror: &Path, torch: &str) -> Run {
    let args = install_args(home, mirror, torch);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    cudaup_env(
        &refs,
        home,
        &[("CUDAUP_NO_UV", "1"), ("SHELL", "/bin/bash")],
    )
}

fn repair(home: &Path, extra: &[&str]) -> Run {
    let h = home.display().to_string();
    let mut args = vec!["--home", &h, "repair"];
    args.extend_from_slice(extra);
    cudaup_env(&args, home, &[("CUDAUP_NO_UV", "1")])
}

/// The whole stack works: nvcc answers, torch is the planned CUDA build, the env script is
/// there and .profile sources it once.
fn assert_healthy(home: &Path) {
    let toolkit = home.join("toolkits/cuda-13.0.2");
    let out = Command::new(toolkit.join("bin/nvcc"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("V13.0.88"));
    let out = Command::new(home.join("venvs/full/bin/python"))
        .args([
            "-c",
            "import torch; print(torch.__version__, torch.version.cuda)",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "2.14.1+cu130 13.0",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(home.join("env").is_file());
    let profile = fs_err::read_to_string(home.join(".profile")).unwrap();
    assert_eq!(
        profile
            .matches(&format!(". \"{}/env\"", home.display()))
            .count(),
        1,
        "{profile}"
    );
}

fn python_site(venv: &Path) -> std::path::PathBuf {
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().into()
}

#[test]
fn needs_network_repair_fixes_each_breakage_and_converges() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let torch = format!("{}/whl", server.url());
    let home = tempfile::tempdir().unwrap();
    let run = run_install(home.path(), mirror.path(), &torch);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_healthy(home.path());
    let nothing = repair(home.path(), &["--yes"]);
    assert!(
        nothing.stdout.contains("nothing to repair"),
        "{}",
        nothing.stdout
    );

    // Break it in four ways.
    let toolkit = home.path().join("toolkits/cuda-13.0.2");
    fs_err::remove_file(toolkit.join("bin/nvcc")).unwrap();
    let cudart = toolkit.join("lib64/libcudart.so.13.0.96");
    fs_err::write(&cudart, "corrupted").unwrap();
    fs_err::remove_file(home.path().join("env")).unwrap();
    let profile = home.path().join(".profile");
    let text = fs_err::read_to_string(&profile).unwrap();
    fs_err::write(
        &profile,
        text.replace(&format!(". \"{}/env\"", home.path().display()), ""),
    )
    .unwrap();
    let site = python_site(&home.path().join("venvs/full"));
    fs_err::write(
        site.join("torch/version.py"),
        "__version__ = '2.14.1+cu130'\ncuda = None\n",
    )
    .unwrap();

    // Doctor names each breakage.
    let h = home.path().display().to_string();
    // Doctor reads a picture of a machine without a GPU, not the host it runs on.
    let machine = no_gpu_tree();
    let root = machine.root_arg();
    let doctor = cudaup_env(
        &["--home", &h, "doctor", "--system-root", &root, "--json"],
        home.path(),
        &[],
    );
    assert_eq!(doctor.code, 1, "{}", doctor.stderr);
    let ids: Vec<String> = doctor.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect();
    for id in [
        "toolkit-files-missing",
        "toolkit-files-changed",
        "env-script-missing",
        "shell-hook-missing",
        "torch-cpu-only",
    ] {
        assert!(ids.iter().any(|i| i == id), "doctor names {id}: {ids:?}");
    }

    let dry = repair(home.path(), &["--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    for id in [
        "[toolkit-files]",
        "[venv-packages]",
        "[env-scripts]",
        "[rc-hook]",
    ] {
        assert!(dry.stdout.contains(id), "{id} in\n{}", dry.stdout);
    }
    assert!(
        dry.stdout.contains("1 file(s) missing") && dry.stdout.contains("libcudart.so.13.0.96"),
        "{}",
        dry.stdout
    );
    assert!(dry.stdout.contains("CPU-only torch"), "{}", dry.stdout);
    assert!(
        !toolkit.join("bin/nvcc").exists(),
        "a dry run changes nothing"
    );

    let fixed = repair(home.path(), &["--yes"]);
    assert_eq!(fixed.code, 0, "{}\n{}", fixed.stdout, fixed.stderr);
    assert_healthy(home.path());
    assert_ne!(
        fs_err::read(&cudart).unwrap(),
        b"corrupted",
        "the damaged library is replaced, not relinked"
    );
    let again = repair(home.path(), &["--yes"]);
    assert_eq!(again.code, 0);
    assert!(
        again.stdout.contains("nothing to repair"),
        "repair converges:\n{}",
        again.stdout
    );
    // And doctor is clean again.
    let doctor = cudaup_env(
        &["--home", &h, "doctor", "--system-root", &root, "--json"],
        home.path(),
        &[],
    );
    assert_eq!(doctor.code, 0, "{}\n{}", doctor.stdout, doctor.stderr);
}

#[test]
fn needs_network_repair_fix_limits_to_one_kind() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let torch = format!("{}/whl", server.url());
    let home = tempfile::tempdir().unwrap();
    assert_eq!(run_install(home.path(), mirror.path(), &torch).code, 0);
    fs_err::remove_file(home.path().join("env")).unwrap();
    fs_err::remove_file(home.path().join("toolkits/cuda-13.0.2/bin/nvcc")).unwrap();
    // A doctor finding id names the same repair.
    let run = repair(home.path(), &["--fix", "env-script-missing", "--yes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(home.path().join("env").is_file());
    assert!(
        !home.path().join("toolkits/cuda-13.0.2/bin/nvcc").exists(),
        "--fix env-scripts leaves the toolkit alone"
    );
    let bad = repair(home.path(), &["--fix", "everything"]);
    assert_eq!(bad.code, 2);
}

/// Kill the installer at each checkpoint; a plain re-run converges, and repair then has nothing
/// to do.
#[test]
fn needs_network_killed_at_any_checkpoint_a_rerun_converges() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let torch = format!("{}/whl", server.url());
    for checkpoint in [
        "toolkit-unpacked",
        "toolkit-staged",
        "toolkit-committed",
        "venv-created",
        "framework-installed",
        "env-written",
    ] {
        let home = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudaup"));
        cmd.args(install_args(home.path(), mirror.path(), &torch));
        let mut child = hermetic(&mut cmd, home.path())
            .env("CUDAUP_NO_UV", "1")
            .env("SHELL", "/bin/bash")
            .env("CUDAUP_TEST_CHECKPOINT", checkpoint)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
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
        let rerun = run_install(home.path(), mirror.path(), &torch);
        assert_eq!(
            rerun.code, 0,
            "{checkpoint}: {}\n{}",
            rerun.stdout, rerun.stderr
        );
        std::panic::catch_unwind(|| assert_healthy(home.path()))
            .unwrap_or_else(|_| panic!("{checkpoint}: not healthy after the re-run"));
        let after = repair(home.path(), &["--yes"]);
        assert!(
            after.stdout.contains("nothing to repair"),
            "{checkpoint}:\n{}\n{}",
            after.stdout,
            after.stderr
        );
        let leftovers: Vec<String> = fs_err::read_dir(home.path().join("toolkits"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("staging") || n.contains(".old-"))
            .collect();
        assert!(leftovers.is_empty(), "{checkpoint}: {leftovers:?}");
    }
}
