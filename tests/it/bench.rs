//! `cudaup bench` from the outside: the refusals and their exit codes (the real probe script
//! run by a real python3 that has no torch), the flags, and the reference manifest's check.

use std::path::Path;

use crate::common::cudaup;

fn python3() -> Option<&'static Path> {
    ["/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
}

/// A venv-shaped directory whose python is this machine's python3 (which has no torch).
fn venv_without_torch(root: &Path, python: &Path) -> std::path::PathBuf {
    let v = root.join("venv");
    fs_err::create_dir_all(v.join("bin")).unwrap();
    fs_err::write(v.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::os::unix::fs::symlink(python, v.join("bin/python")).unwrap();
    v
}

#[test]
#[allow(clippy::print_stderr)]
fn bench_refuses_a_venv_without_torch_with_exit_5_and_leaves_no_scratch() {
    let Some(python) = python3() else {
        eprintln!("SKIPPED bench_refuses_a_venv_without_torch: no python3 here");
        return;
    };
    if std::process::Command::new(python)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("SKIPPED bench_refuses_a_venv_without_torch: this python3 has torch");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let venv = venv_without_torch(home.path(), python);
    let out = home.path().join("run");
    let r = cudaup(
        &[
            "bench",
            "--venv",
            &venv.display().to_string(),
            "--out",
            &out.display().to_string(),
        ],
        home.path(),
    );
    assert_eq!(r.code, 5, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("torch does not import in"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("No module named 'torch'"), "{}", r.stderr);
    // This machine (the test's, without a GPU) is offered cpu: no install is advised.
    assert!(
        r.stderr
            .contains("this machine's default profile is cpu (no NVIDIA GPU here")
            && !r.stderr.contains("cudaup install"),
        "{}",
        r.stderr
    );
    // The progress line came through while it ran; nothing is left in the output directory.
    assert!(r.stderr.contains("checking the torch in"), "{}", r.stderr);
    assert_eq!(fs_err::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn bench_without_any_venv_says_so_with_exit_5() {
    let home = tempfile::tempdir().unwrap();
    let r = cudaup(&["bench", "--quick"], home.path());
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert!(
        r.stderr.contains("no PyTorch venv to bench"),
        "{}",
        r.stderr
    );
    // Nothing was written under the home either.
    assert!(!home.path().join(".local/share/cudaup/bench").exists());
}

#[test]
fn bench_rejects_bad_flags_with_exit_2() {
    let home = tempfile::tempdir().unwrap();
    let r = cudaup(&["bench", "--venv", "/nonexistent/venv"], home.path());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--venv /nonexistent/venv: not a Python environment"),
        "{}",
        r.stderr
    );
    let r = cudaup(&["bench", "--batch", "0"], home.path());
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = cudaup(&["bench", "--help"], home.path());
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("--effective-batch"), "{}", r.stdout);
    assert!(r.stdout.contains("cudaup bench --quick"), "{}", r.stdout);
}

#[test]
fn manifests_check_reads_the_bench_and_tensorrt_manifests() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("m");
    fs_err::create_dir_all(&dir).unwrap();
    for (name, text) in cudaup::catalog::EMBEDDED {
        fs_err::write(dir.join(name), text).unwrap();
    }
    let r = cudaup(
        &["manifests", "check", &dir.display().to_string()],
        home.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let bench = fs_err::read_to_string(dir.join("bench.toml")).unwrap();
    let broken = bench
        .replacen("precision = \"tf32\"", "precision = \"fp8\"", 1)
        .replacen("images_per_s = 2470", "images_per_s = -1", 1);
    fs_err::write(dir.join("bench.toml"), broken).unwrap();
    let trt = fs_err::read_to_string(dir.join("tensorrt.toml")).unwrap();
    fs_err::write(
        dir.join("tensorrt.toml"),
        trt.replacen("cuda_major = 13", "cuda_major = 99", 1),
    )
    .unwrap();
    let r = cudaup(
        &["manifests", "check", &dir.display().to_string()],
        home.path(),
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stdout.contains("bench.toml:") && r.stdout.contains("unknown precision"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("images_per_s must be positive"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("tensorrt.toml:") && r.stdout.contains("CUDA 99 is not in cuda.toml"),
        "{}",
        r.stdout
    );
    // A row without its source is caught as in every manifest.
    let bench = bench.replacen(
        "source = \"https://github.com/NVIDIA",
        "note = \"https://github.com/NVIDIA",
        1,
    );
    fs_err::write(dir.join("bench.toml"), bench).unwrap();
    fs_err::write(dir.join("tensorrt.toml"), trt).unwrap();
    let r = cudaup(
        &["manifests", "check", &dir.display().to_string()],
        home.path(),
    );
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stdout.contains("bench.toml:"), "{}", r.stdout);
}

#[test]
#[allow(clippy::print_stderr)]
fn install_with_tensorrt_adds_the_wheel_for_the_stacks_cuda_major() {
    let home = tempfile::tempdir().unwrap();
    let h200 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-detect.json"
    );
    let venv = home.path().join("venv").display().to_string();
    // A dry run asks the framework's routes: local ones, so nothing reaches the network. A
    // copy of PyTorch's layout listing the planned wheel, and an empty PyPI.
    let routes = tempfile::tempdir().unwrap();
    let torch_page = routes.path().join("whl/cu132/torch");
    fs_err::create_dir_all(&torch_page).unwrap();
    fs_err::write(
        torch_page.join("index.html"),
        "<a href=\"torch-2.15.0%2Bcu132-py3-none-any.whl\">torch-2.15.0+cu132-py3-none-any.whl</a>\n",
    )
    .unwrap();
    fs_err::create_dir_all(routes.path().join("simple")).unwrap();
    fs_err::write(routes.path().join("simple/index.html"), "<html></html>").unwrap();
    let torch_index = routes.path().join("whl").display().to_string();
    let pypi_index = routes.path().join("simple").display().to_string();
    let base = [
        "install",
        "--system",
        h200,
        "--venv",
        &venv,
        "--dry-run",
        "--with",
        "tensorrt",
        "--torch-source",
        "pytorch",
        "--torch-index",
        &torch_index,
        "--pypi-index",
        &pypi_index,
    ];
    let mut args = base.to_vec();
    args.extend(["--profile", "pytorch"]);
    let r = cudaup(&args, home.path());
    if r.stderr.contains("no Python in the range") {
        eprintln!("SKIPPED install_with_tensorrt: the plan needs a Python this machine lacks");
        return;
    }
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let pip = r
        .stdout
        .lines()
        .find(|l| l.contains("pip install"))
        .unwrap_or_default();
    assert!(
        pip.contains("+cu13") && pip.contains(" tensorrt-cu13=="),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("and  https://pypi.nvidia.com"),
        "{}",
        r.stdout
    );
    assert!(
        !home.path().join("venv").exists(),
        "a dry run creates nothing"
    );
    let mut args = base.to_vec();
    args.extend(["--profile", "tensorflow"]);
    let r = cudaup(&args, home.path());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--with tensorrt needs a PyTorch profile"),
        "{}",
        r.stderr
    );
}
