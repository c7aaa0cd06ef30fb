//! A venv whose framework files are not what their RECORD lists (a library deleted by hand or
//! by a cleanup tool): `doctor` names it (`venv-files-missing`) although torch's version still
//! reads right, `repair` finds the same and reinstalls, and `doctor` is clean again. Found on a
//! GPU (docs/h200/proof-2026-12-05.md, session 5): doctor passed a torch without
//! `libtorch_cuda.so` that only repair's import noticed.

use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;
use crate::framework::{torch_index, ARCH};

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

#[test]
fn a_deleted_torch_file_is_named_by_doctor_and_reinstalled_by_repair() {
    // The stand-in torch and companions, and its one dependency (filelock) on a loopback PyPI.
    let index = torch_index(Some("13.0"), ARCH);
    let dep = wheels::build_wheel(
        &index.path().join("build-dep"),
        "filelock",
        "3.20.0",
        &[],
        &[wheels::WheelFile::new("filelock/__init__.py", "")],
    );
    wheels::write_index(&index.path().join("simple"), &[dep]);
    let server = Server::start(index.path().to_owned());
    let home = tempfile::tempdir().unwrap();
    let venv = home.path().join("venv");
    let torch = format!("{}/whl", server.url());
    let mut args = crate::common::pytorch::install_args(home.path(), &venv, H200, &torch);
    args.extend([
        "--pypi-index".to_owned(),
        format!("{}/simple", server.url()),
    ]);
    let env = [("CUDAUP_NO_UV", "1"), ("CUDAUP_TEST_NO_RETRY_DELAY", "1")];
    let run = |a: &[&str]| cudaup_env(a, home.path(), &env);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let installed = run(&argv);
    assert_eq!(
        installed.code, 0,
        "{}\n{}",
        installed.stdout, installed.stderr
    );

    let h = home.path().display().to_string();
    let tree = no_gpu_tree();
    let root = tree.root_arg();
    let doctor = || run(&["--home", &h, "doctor", "--json", "--system-root", &root]);
    let finding = |d: &Run| {
        d.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "venv-files-missing")
            .cloned()
    };
    assert!(
        finding(&doctor()).is_none(),
        "an intact venv has no finding"
    );

    let site = glob_site(&venv);
    let gone = site.join("torch/cuda/__init__.py");
    fs_err::remove_file(&gone).unwrap();
    let d = doctor();
    assert_eq!(d.code, 1, "{}\n{}", d.stdout, d.stderr);
    let found = finding(&d).unwrap_or_else(|| panic!("{}", d.stdout));
    assert!(
        found.to_string().contains("torch/cuda/__init__.py"),
        "{found}"
    );
    assert!(
        found.to_string().contains("repair --fix venv-packages"),
        "{found}"
    );

    let r = run(&["--home", &h, "repair", "--yes"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("[venv-packages]"), "{}", r.stdout);
    assert!(gone.is_file(), "repair put the file back");
    assert!(finding(&doctor()).is_none());
    let again = run(&["--home", &h, "repair", "--yes"]);
    assert!(
        again.stdout.contains("nothing to repair"),
        "{}",
        again.stdout
    );
}

/// `venv/lib/python3.X/site-packages`.
fn glob_site(venv: &std::path::Path) -> std::path::PathBuf {
    fs_err::read_dir(venv.join("lib"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.is_dir())
        .unwrap()
}
