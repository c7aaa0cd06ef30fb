//! The install pipeline's house rules, end to end: one writer at a time per home (the lock),
//! `--driver skip` plans nothing for the driver, and errors map to their own exit codes.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

fn install_args<'a>(mirror: &'a str, prefix: &'a str) -> Vec<&'a str> {
    vec![
        "install",
        "--system",
        H200,
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--no-cudnn",
        "--components",
        "minimal",
        "--mirror",
        mirror,
        "--prefix",
        prefix,
        "--no-modify-path",
        "--yes",
    ]
}

fn command(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cudaup"));
    cmd.args(args).current_dir(home);
    hermetic(&mut cmd, home);
    cmd
}

#[test]
fn a_held_home_is_waited_for_or_named_under_no_wait() {
    let mirror = synthetic_mirror(&[]);
    let m = mirror.path().display().to_string();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cudaup_home = h.join(".local/share/cudaup");
    fs_err::create_dir_all(&cudaup_home).unwrap();
    // Another cudaup's lock, as it holds it: the file locked, its pid inside.
    let lock_path = cudaup_home.join(".cudaup.lock");
    let held = fs_err::File::create(&lock_path).unwrap().into_parts().0;
    held.lock().unwrap();
    fs_err::write(&lock_path, "pid 4242").unwrap();

    let prefix = h.join("cuda-a").display().to_string();
    let mut no_wait = install_args(&m, &prefix);
    no_wait.insert(0, "--no-wait");
    let run = cudaup(&no_wait, h);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("pid 4242"), "{}", run.stderr);
    assert!(!Path::new(&prefix).exists(), "nothing was installed");

    // Without --no-wait it says whom it waits for, and goes on once the lock is free.
    let mut child = command(h, &install_args(&m, &prefix))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the install waits while the home is held"
    );
    held.unlock().unwrap();
    drop(held);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("waiting for another cudaup (pid 4242)"),
        "{stderr}"
    );
    assert!(Path::new(&prefix).join("bin/nvcc").is_file());
}

#[test]
fn two_installs_into_one_home_with_different_prefixes_both_succeed_and_agree() {
    let mirror = synthetic_mirror(&[]);
    let m = mirror.path().display().to_string();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let a = h.join("cuda-a").display().to_string();
    let b = h.join("cuda-b").display().to_string();
    for _ in 0..2 {
        let first = command(h, &install_args(&m, &a))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let second = command(h, &install_args(&m, &b))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        for child in [first, second] {
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // Both toolkits are registered and cudaup's copy has its receipt.
    let receipts = h.join(".local/share/cudaup/receipts");
    let names: Vec<String> = fs_err::read_dir(&receipts)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.iter().filter(|n| n.starts_with("toolkit-")).count(),
        2,
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.ends_with("tmp")),
        "no temporary left: {names:?}"
    );
    assert!(h.join(".local/share/cudaup/bin/cudaup").is_file());
    assert!(receipts.join("self.json").is_file());
}

#[test]
fn driver_skip_plans_and_runs_nothing_for_the_driver() {
    let home = tempfile::tempdir().unwrap();
    // A picture whose old driver (510) serves no current stack: keep refuses, skip goes on.
    let picture = home.path().join("old-driver.json");
    fs_err::write(
        &picture,
        r#"{"os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64"},
            "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA H200", "pci_id": "10de:2335",
                      "compute_capability": "9.0"}],
            "driver": {"version": "510.47.03", "cuda_version": "11.6", "kernel_module": "proprietary"}}"#,
    )
    .unwrap();
    let p = picture.display().to_string();
    let keep = cudaup(
        &["plan", "--system", &p, "--driver", "keep", "--json"],
        home.path(),
    );
    assert_eq!(keep.code, 5, "{}", keep.stdout);
    let run = cudaup(
        &[
            "plan",
            "--system",
            &p,
            "--driver",
            "skip",
            "--profile",
            "cuda-dev",
            "--json",
        ],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let driver = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "driver")
        .unwrap();
    assert_eq!(driver["action"], "skip", "{driver}");
    assert!(
        driver["commands"].as_array().is_none_or(|c| c.is_empty()),
        "{driver}"
    );
    // The install's own plan shows no driver step either.
    let mirror = synthetic_mirror(&[]);
    let m = mirror.path().display().to_string();
    let mut args = install_args(&m, "/nonexistent/prefix");
    args[4] = "skip";
    args[2] = &p;
    args.retain(|a| *a != "--yes");
    args.push("--dry-run");
    let run = cudaup(&args, home.path());
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("The driver:"), "{}", run.stdout);
}

#[test]
fn a_local_index_without_a_project_is_exit_5_naming_it() {
    let home = tempfile::tempdir().unwrap();
    let index = home.path().join("empty-index");
    fs_err::create_dir_all(&index).unwrap();
    let i = index.display().to_string();
    // The install of the other tests, from a wheel index that has no page for any project.
    let mut args = install_args("unused", "/nonexistent/prefix");
    let at = args.iter().position(|a| *a == "--mirror").unwrap();
    args.splice(at..at + 2, ["--source", "wheels", "--index-url", &i]);
    args.retain(|a| *a != "--yes");
    args.push("--dry-run");
    let run = cudaup(&args, home.path());
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(run.stderr.contains("has no nvidia-"), "{}", run.stderr);
    assert!(run.stderr.contains(&i), "{}", run.stderr);
}
