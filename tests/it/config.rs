//! `--config cudaup.toml`: every answer from a file, flags over `CUDAUP_*` variables over the
//! file, and broken files refused with FILE:LINE:COLUMN.

use std::path::Path;

use crate::common::*;

fn write(dir: &Path, text: &str) -> String {
    let p = dir.join("cudaup.toml");
    fs_err::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn install_takes_every_answer_from_the_file() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let prefix = home.path().join("opt/cuda");
    let config = write(
        home.path(),
        &format!(
            "version = 1\nprofile = \"cuda-dev\"\n\n[pins]\ncuda = \"13.0.2\"\n\n[install]\nprefix = \"{}\"\nno_cudnn = true\n\n[shell]\nmodify_path = false\n\n[sources]\nnvidia_mirror = \"{}\"\n",
            prefix.display(),
            mirror.path().display()
        ),
    );
    let h = home.path().display().to_string();
    let run = cudaup(
        &[
            "--home",
            &h,
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--config",
            &config,
            "--yes",
            "--json",
        ],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    assert_eq!(j["profile"], "cuda-dev");
    assert_eq!(j["toolkit"]["cuda"], "13.0.2");
    assert_eq!(
        j["toolkit"]["cudnn"],
        serde_json::Value::Null,
        "no_cudnn from the file"
    );
    assert!(prefix.join("bin/nvcc").is_file(), "prefix from the file");
    assert!(
        !home.path().join(".profile").exists(),
        "modify_path = false from the file"
    );
}

#[test]
fn flags_override_variables_which_override_the_file() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let config = write(
        home.path(),
        "version = 1\nprofile = \"cuda-dev\"\n\n[pins]\ncuda = \"13.0.2\"\ncudnn = \"9.17.0\"\n\n[sources]\nnvidia_mirror = \"/nonexistent/from-the-file\"\n",
    );
    let h = home.path().display().to_string();
    let m = mirror.path().display().to_string();
    // The file's mirror does not exist; the variable's does.
    let run = cudaup_env(
        &[
            "--home",
            &h,
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--config",
            &config,
            "--dry-run",
        ],
        home.path(),
        &[("CUDAUP_MIRROR", &m)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("from redist {m}")),
        "{}",
        run.stdout
    );
    // A flag beats the variable.
    let run = cudaup_env(
        &[
            "--home",
            &h,
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--config",
            &config,
            "--dry-run",
            "--mirror",
            "/nonexistent/from-the-flag",
        ],
        home.path(),
        &[("CUDAUP_MIRROR", &m)],
    );
    // A flag's directory is checked before anything is planned, as the file's keys are.
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("--mirror /nonexistent/from-the-flag"),
        "{}",
        run.stderr
    );
    // A flag's profile must still fit the file's other answers.
    let run = cudaup(
        &[
            "--home",
            &h,
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--config",
            &config,
            "--profile",
            "cpu",
            "--dry-run",
        ],
        home.path(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("cudaup.toml:"), "{}", run.stderr);
}

#[test]
fn broken_configs_name_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        ("version = 1\nprofle = \"full\"\n", ":2:1:"),
        ("version = 1\n[pins]\ncuda = 12.8\n", ":3:8:"),
        ("version = 2\n", "this cudaup reads config version 1"),
        (
            "version = 1\nprofile = \"cpu\"\n[pins]\ncuda = \"12.8\"\n",
            ":4:",
        ),
        (
            "version = 1\n[install]\nprefix = \"relative/path\"\n",
            "absolute path",
        ),
    ] {
        let config = write(dir.path(), text);
        let h = dir.path().display().to_string();
        let run = cudaup(
            &[
                "--home",
                &h,
                "install",
                "--system",
                no_gpu_system(),
                "--driver",
                "keep",
                "--config",
                &config,
                "--dry-run",
            ],
            dir.path(),
        );
        assert_eq!(run.code, 2, "{text}: {}", run.stderr);
        assert!(
            run.stderr.contains("cudaup.toml") && run.stderr.contains(needle),
            "{text}: {}",
            run.stderr
        );
        let plan = cudaup(&["plan", "--config", &config], dir.path());
        assert_eq!(plan.code, 2, "{text}: plan reads the same file");
    }
    let missing = cudaup(
        &[
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--config",
            "/nonexistent/cudaup.toml",
            "--dry-run",
        ],
        dir.path(),
    );
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("/nonexistent/cudaup.toml"),
        "{}",
        missing.stderr
    );
}

#[test]
fn plan_reads_the_profile_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = write(
        dir.path(),
        "version = 1\nprofile = \"pytorch\"\n\n[pins]\ntorch = \"2.8\"\n",
    );
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let run = cudaup(
        &["plan", "--system", fixture, "--config", &config, "--json"],
        dir.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let j = run.json();
    assert_eq!(j["profile"], "pytorch");
    let torch = j["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "torch")
        .unwrap()
        .clone();
    assert_eq!(torch["version"], "2.8.0");
}

#[test]
fn a_second_run_reports_nothing_changed() {
    let mirror = synthetic_mirror(&[]);
    let home = tempfile::tempdir().unwrap();
    let m = mirror.path().display().to_string();
    // A relative --home must name the same place on both runs (receipts record it).
    let args = [
        "--home",
        "state",
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
        &m,
        "--yes",
        "--json",
    ];
    let first = cudaup(&args, home.path());
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(first.json()["changed"], true);
    assert_eq!(first.json()["reboot_required"], false);
    let second = cudaup(&args, home.path());
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(second.json()["changed"], false, "{}", second.stdout);
}
