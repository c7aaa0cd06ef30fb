//! `cudaup uninstall`: everything cudaup installed goes, nothing else does, and rc files come
//! back byte for byte.

use std::path::Path;
use std::process::Command;

use crate::common::server::Server;
use crate::common::*;
use crate::framework::{torch_index, ARCH};

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// A home where the user already had a CRLF .bashrc without a final newline and a .zshenv.
fn user_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    fs_err::write(
        home.path().join(".bashrc"),
        b"alias ll='ls -l'\r\nexport EDITOR=vim",
    )
    .unwrap();
    home
}

fn full_install(home: &Path, mirror: &Path, torch: &str, extra: &[&str]) -> Run {
    let h = home.display().to_string();
    let m = mirror.display().to_string();
    let mut args = vec![
        "--home",
        &h,
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
        &m,
        "--allow-http",
        "--yes",
    ];
    args.extend_from_slice(extra);
    cudaup_env(
        &args,
        home,
        &[("CUDAUP_NO_UV", "1"), ("SHELL", "/bin/bash")],
    )
}

#[test]
fn needs_network_uninstall_removes_everything_cudaup_put_there_and_nothing_else() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let home = user_home();
    let bashrc_before = fs_err::read(home.path().join(".bashrc")).unwrap();
    let torch = format!("{}/whl", server.url());
    let run = full_install(home.path(), mirror.path(), &torch, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_ne!(
        fs_err::read(home.path().join(".bashrc")).unwrap(),
        bashrc_before,
        "hooked"
    );
    // A file of the user's own inside the toolkit prefix.
    let prefix = home.path().join("toolkits/cuda-13.0.2");
    fs_err::write(prefix.join("bin/my-tool"), "#!/bin/sh\n").unwrap();

    let h = home.path().display().to_string();
    let dry = cudaup(&["--home", &h, "uninstall", "--dry-run"], home.path());
    assert_eq!(dry.code, 0);
    assert!(
        dry.stdout.contains("remove the toolkit in") && dry.stdout.contains("remove the venv"),
        "{}",
        dry.stdout
    );
    assert!(
        prefix.join("bin/nvcc").exists(),
        "a dry run removes nothing"
    );

    let run = cudaup(&["--home", &h, "uninstall", "--yes"], home.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        fs_err::read(home.path().join(".bashrc")).unwrap(),
        bashrc_before,
        ".bashrc is byte-identical"
    );
    assert!(
        !home.path().join(".profile").exists(),
        "the .profile cudaup created is gone"
    );
    assert!(!prefix.join("bin/nvcc").exists());
    assert!(prefix.join("bin/my-tool").exists(), "the user's file stays");
    assert!(
        run.stdout.contains("left in place") && run.stdout.contains("files cudaup did not install"),
        "{}",
        run.stdout
    );
    assert!(
        !home.path().join("venvs/full").exists(),
        "the venv cudaup created is gone"
    );
    for f in [
        "env",
        "env.fish",
        "env.ps1",
        "active.json",
        "receipts",
        "logs",
    ] {
        assert!(!home.path().join(f).exists(), "{f} is gone");
    }
    assert!(
        home.path().join("cache").exists(),
        "the cache stays without --purge"
    );
    let again = cudaup(
        &["--home", &h, "uninstall", "--yes", "--purge"],
        home.path(),
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(!home.path().join("cache").exists());
}

#[test]
fn needs_network_a_venv_cudaup_did_not_create_is_left_alone() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("my-venv");
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(out.status.success());
    let torch = format!("{}/whl", server.url());
    let v = venv.display().to_string();
    let run = full_install(
        home.path(),
        mirror.path(),
        &torch,
        &["--venv", &v, "--no-modify-path"],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let h = home.path().display().to_string();
    let run = cudaup(&["--home", &h, "uninstall", "--yes"], home.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(venv.join("bin/python").exists(), "the user's venv stays");
    assert!(
        run.stdout.contains("cudaup did not create"),
        "{}",
        run.stdout
    );
}

#[test]
fn uninstall_with_nothing_installed_and_without_yes() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();
    let run = cudaup(&["--home", &h, "uninstall", "--yes"], home.path());
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("installed nothing"), "{}", run.stdout);
    // Something installed, no terminal, no --yes: refuse.
    fs_err::create_dir_all(home.path().join("receipts")).unwrap();
    fs_err::write(home.path().join("env"), "").unwrap();
    let run = cudaup(&["--home", &h, "uninstall"], home.path());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(home.path().join("env").exists());
}
