//! The first run is never a dead end (issue 37): on a machine without a GPU whose only way out
//! is PyPI, the `cpu` profile takes PyPI's torch (the CUDA build, which runs on the CPU) instead
//! of failing; and no refusal recommends a command that is refused on the same machine.
//! PyTorch's index is a port nothing listens on; PyPI is a loopback index of stand-in wheels.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;

/// A URL nothing answers on: a port bound once and released.
fn dead() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// A PyPI-style index at `<root>/simple` holding what PyPI serves for torch 2.15.0 on Linux
/// x86_64: the cu132 build, untagged, and its companions.
fn pypi_with_the_cuda_build() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("build");
    let built = vec![
        wheels::fake_torch_with(&dir, "2.15.0", Some("13.2"), &["sm_90"], &[]),
        wheels::fake_companion(&dir, "torchvision", "0.29.2", "2.15.0"),
        wheels::fake_companion(&dir, "torchaudio", "2.11.1", "2.15.0"),
    ];
    wheels::write_index(&root.path().join("simple"), &built);
    root
}

fn context() -> TestContext {
    TestContext::new()
        .with_env("CUDAUP_NO_UV", "1")
        .with_env("CUDAUP_PROBE_TIMEOUT", "5")
}

#[test]
fn without_a_gpu_and_pytorchs_index_the_cpu_profile_takes_pypis_build() {
    let index = pypi_with_the_cuda_build();
    let server = Server::start(index.path().to_owned());
    let ctx = context();
    let pypi = format!("{}/simple", server.url());
    let torch_index = format!("{}/whl", dead());
    let venv = ctx.dir().join("venv");
    let venv_arg = venv.display().to_string();
    let sources = [
        "--pypi-index",
        &pypi,
        "--torch-index",
        &torch_index,
        "--allow-http",
    ];

    // The plan says, before anything is asked, what PyPI's build costs and why it would do.
    let system = ctx.system_arg();
    let mut plan = vec!["plan", "--system", &system, "--profile", "cpu"];
    plan.extend_from_slice(&sources);
    let shown = ctx.cudaup(&plan);
    assert_eq!(shown.code, 0, "{}\n{}", shown.stdout, shown.stderr);
    assert!(
        shown.stdout.contains(
            "PyPI's torch 2.15.0 for Linux x86_64 is the cu132 build, which runs on the CPU too; it is a larger download than the cpu build, as it brings CUDA 13.2's libraries"
        ) && shown.stdout.contains("(cuBLAS alone: about 386 MiB)"),
        "{}",
        shown.stdout
    );

    let mut args = vec![
        "--profile",
        "cpu",
        "--venv",
        &venv_arg,
        "--yes",
        "--no-modify-path",
    ];
    args.extend_from_slice(&sources);
    let run = ctx.install(&args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("which runs on the CPU too"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("not PyTorch's index {torch_index}")),
        "the dead route is named: {}",
        run.stdout
    );
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import torch; print(torch.__version__, torch.version.cuda)",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2.15.0 13.2");

    // The receipt records the route and the build it holds (verify's judgement of it:
    // verify::framework's what_is_skipped_or_excused).
    let receipts = ctx.cudaup_home().join("receipts");
    let receipt = fs_err::read_dir(&receipts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("venv-")
        })
        .expect("a venv receipt");
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(receipt).unwrap()).unwrap();
    assert_eq!(receipt["route"]["route"], "pypi", "{receipt:#}");
    assert_eq!(receipt["profile"], "cpu", "{receipt:#}");
    assert!(Path::new(&venv).join("bin/python").exists());
}
