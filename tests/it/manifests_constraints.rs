//! The plan's constraints reach pip: TensorFlow's `and-cuda` extra floats cuDNN, the plan for a
//! GTX 1080 Ti bounds it below 9.11 (the catalog's GPU lists say 9.11 dropped sm_61), the install
//! passes that bound as `-c`, and the post-install check reads what pip installed. The index is a
//! loopback mirror of small wheels; pip is real.

use std::process::Command;

use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;

#[test]
fn tensorflow_for_a_gtx_1080_ti_installs_the_bounded_cudnn() {
    let index = tempfile::tempdir().unwrap();
    let build = index.path().join("build");
    fs_err::create_dir_all(&build).unwrap();
    let tf = wheels::fake_tensorflow_requiring(
        &build,
        "2.21.0",
        Some("12.5.1"),
        // As tensorflow-2.21.0's METADATA writes it (tests/fixtures/sources/pypi).
        &["nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == \"and-cuda\""],
    );
    let old = wheels::build_wheel(&build, "nvidia-cudnn-cu12", "9.10.2.21", &[], &[]);
    let new = wheels::build_wheel(&build, "nvidia-cudnn-cu12", "9.28.0.42", &[], &[]);
    wheels::write_index(&index.path().join("simple"), &[tf, old, new]);
    let server = Server::start(index.path().to_owned());

    let home = tempfile::tempdir().unwrap();
    let system = home.path().join("pascal.json");
    fs_err::write(
        &system,
        r#"{"os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64", "wsl": false},
            "gpus": [{"index": 0, "vendor": "nvidia", "name": "NVIDIA GeForce GTX 1080 Ti", "compute_capability": "6.1", "architecture": "Pascal"}],
            "driver": {"version": "580.95.05"}}"#,
    )
    .unwrap();
    let venv = home.path().join("venv");
    let pypi = format!("{}/simple", server.url());
    let run = cudaup_env(
        &[
            "--home",
            &home.path().display().to_string(),
            "install",
            "--system",
            &system.display().to_string(),
            "--profile",
            "tensorflow",
            "--pypi-index",
            &pypi,
            "--venv",
            &venv.display().to_string(),
            "--allow-http",
            "--yes",
        ],
        home.path(),
        &[("CUDAUP_TEST_NO_RETRY_DELAY", "1"), ("CUDAUP_NO_UV", "1")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("with -c constraints: nvidia-cudnn-cu12<9.11"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("nvidia-cudnn-cu12 9.10.2.21 is within nvidia-cudnn-cu12<9.11"),
        "{}",
        run.stdout
    );
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "from importlib import metadata; print(metadata.version('nvidia-cudnn-cu12'))",
        ])
        .output()
        .unwrap();
    // Without the bound pip would have taken 9.28.0.42, which has no sm_61 code.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "9.10.2.21");
    // The constraints file sits beside the installer's log.
    let logs = fs_err::read_dir(home.path().join("logs")).unwrap();
    let constraints: Vec<_> = logs
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".constraints.txt"))
        .collect();
    assert_eq!(constraints.len(), 1);
    assert_eq!(
        fs_err::read_to_string(&constraints[0]).unwrap(),
        "nvidia-cudnn-cu12<9.11\n"
    );
}
