//! `cudaup install --profile pytorch|tensorflow|full`: a venv with the planned framework,
//! installed by pip from a loopback index of small wheels built here (a `torch` whose module
//! reports its CUDA build), with one real dependency (`filelock`) from the package registry —
//! then checked against the plan. The H200 machine's `detect --json` is the plan's target.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::server::Server;
use crate::common::wheels;
use crate::common::*;
use cudaup::install::report::InstalledStatus;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);
const TORCH: &str = "2.14.1";
pub(crate) const ARCH: &[&str] = &["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"];

/// A PyTorch-style index (`<root>/whl/cu130/torch/…`) with torch 2.14.1+cu130 and its companions
/// as the catalog pairs them. `cuda: None` makes the torch a CPU build that lies about its tag.
pub(crate) fn torch_index(cuda: Option<&str>, arch: &[&str]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let build = root.path().join("build");
    fs_err::create_dir_all(&build).unwrap();
    let tag = format!("{TORCH}+cu130");
    let built = vec![
        wheels::fake_torch(&build, &tag, cuda, arch),
        wheels::fake_companion(&build, "torchvision", "0.29.1+cu130", &tag),
        wheels::fake_companion(&build, "torchaudio", "2.11.0+cu130", &tag),
    ];
    wheels::write_index(&root.path().join("whl/cu130"), &built);
    root
}

/// One test's machine: a [`TestContext`] planning for the H200 picture (its driver as the
/// picture has it: the plan may upgrade it, and a picture's driver is never touched), with
/// cudaup's own uv left out.
struct Box_ {
    ctx: TestContext,
}

impl Box_ {
    fn new() -> Self {
        Self {
            ctx: TestContext::new()
                .with_system_file(Path::new(H200))
                .with_env("CUDAUP_NO_UV", "1"),
        }
    }
    /// `$CUDAUP_HOME`.
    fn home(&self) -> PathBuf {
        self.ctx.cudaup_home()
    }
    fn venv(&self) -> PathBuf {
        self.ctx.home().join("venv")
    }
    fn install(&self, extra: &[&str]) -> Run {
        self.install_env(extra, &[])
    }
    fn install_env(&self, extra: &[&str], env: &[(&str, &str)]) -> Run {
        let system = self.ctx.system_arg();
        let venv = self.venv().display().to_string();
        let mut args = vec![
            "install",
            "--system",
            &system,
            "--venv",
            &venv,
            "--yes",
            "--allow-http",
        ];
        args.extend_from_slice(extra);
        self.ctx.cudaup_env(&args, env)
    }
    fn python(&self, code: &str) -> String {
        let out = Command::new(self.venv().join("bin/python"))
            .args(["-c", code])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

#[test]
fn pytorch_into_a_new_venv_then_checked_and_kept() {
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let b = Box_::new();
    let torch_index = format!("{}/whl", server.url());
    let run = b.install(&[
        "--profile",
        "pytorch",
        "--torch",
        "2.14",
        "--torch-index",
        &torch_index,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("installed torch 2.14.1 (cu130)"),
        "{}",
        run.stdout
    );
    // The fake torch reports a GPU; its arch list was checked against the H200 (sm_90).
    assert!(run.stdout.contains("sees 1 GPU(s)"), "{}", run.stdout);
    // The venv has what was planned — and filelock, a real package from the registry.
    assert_eq!(
        b.python("import torch; print(torch.__version__, torch.version.cuda)"),
        "2.14.1+cu130 13.0"
    );
    assert_eq!(
        b.python("import filelock, torchvision, torchaudio; print(torchvision.__version__)"),
        "0.29.1+cu130"
    );
    let log = server.requests();
    assert!(log.iter().any(|r| r.path == "/whl/cu130/torch/"), "{log:?}");
    // The receipt records the venv and what went into it.
    let receipts: Vec<PathBuf> = fs_err::read_dir(b.home().join("receipts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("venv-")
        })
        .collect();
    assert_eq!(receipts.len(), 1);
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(&receipts[0]).unwrap()).unwrap();
    assert_eq!(receipt["created"], true);
    assert!(receipt["packages"]["requirements"]
        .to_string()
        .contains("torch==2.14.1+cu130"));
    assert_eq!(
        receipt["packages"]["index_url"],
        format!("{torch_index}/cu130")
    );
    // The installer's log is kept.
    assert!(fs_err::read_dir(b.home().join("logs")).unwrap().count() >= 1);

    // A second run finds the planned torch in the venv: nothing to install, only the check.
    server.clear_log();
    let again = b.install(&[
        "--profile",
        "pytorch",
        "--torch",
        "2.14",
        "--torch-index",
        &torch_index,
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("only checked"), "{}", again.stdout);
    assert!(
        again.stdout.contains("checked torch 2.14.1 (cu130)"),
        "{}",
        again.stdout
    );
    assert!(
        server.requests().is_empty(),
        "nothing fetched: {:?}",
        server.requests()
    );
}

#[test]
fn a_cpu_only_torch_where_cuda_was_planned_is_an_error_with_the_fix() {
    let index = torch_index(None, &[]);
    let server = Server::start(index.path().to_owned());
    let b = Box_::new();
    let torch_index = format!("{}/whl", server.url());
    let run = b.install(&[
        "--profile",
        "pytorch",
        "--torch",
        "2.14",
        "--torch-index",
        &torch_index,
    ]);
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("a CPU-only torch (2.14.1+cu130) is installed where the CUDA 13.0 build (cu130) was planned"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("-m pip install --force-reinstall torch==2.14.1+cu130 --index-url"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failed_pip_install_removes_the_venv_it_created() {
    // An index whose torch page lists the planned wheel, which is not there: the route is
    // taken, and pip fails fetching it.
    let index = tempfile::tempdir().unwrap();
    let page = index.path().join("whl/cu130/torch");
    fs_err::create_dir_all(&page).unwrap();
    fs_err::write(
        page.join("index.html"),
        "<html><body><a href=\"torch-2.14.1%2Bcu130-py3-none-any.whl#sha256=00\">torch-2.14.1+cu130-py3-none-any.whl</a></body></html>",
    )
    .unwrap();
    let server = Server::start(index.path().to_owned());
    let b = Box_::new();
    let torch_index = format!("{}/whl", server.url());
    let run = b.install(&[
        "--profile",
        "pytorch",
        "--torch",
        "2.14",
        "--torch-index",
        &torch_index,
        "--torch-source",
        "pytorch",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("installing the framework failed"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("full log:"), "{}", run.stderr);
    assert!(
        !b.venv().exists(),
        "the venv made by this run is removed again"
    );
}

#[test]
fn no_python_in_range_says_what_to_install() {
    let b = Box_::new();
    let run = b.install(&["--profile", "pytorch", "--python", "3.9"]);
    assert_eq!(run.code, 5, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("install Python 3.9"), "{}", run.stderr);
    assert!(
        run.stderr.contains("uv python install 3.9"),
        "{}",
        run.stderr
    );
    assert!(!b.venv().exists());
}

#[test]
fn tensorflow_with_and_cuda_from_the_pypi_mirror() {
    let index = tempfile::tempdir().unwrap();
    let build = index.path().join("build");
    fs_err::create_dir_all(&build).unwrap();
    let tf = wheels::fake_tensorflow(&build, "2.21.0", Some("12.5.1"));
    wheels::write_index(&index.path().join("simple"), &[tf]);
    let server = Server::start(index.path().to_owned());
    let b = Box_::new();
    let pypi = format!("{}/simple", server.url());
    let run = b.install(&["--profile", "tensorflow", "--pypi-index", &pypi, "--json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The outcome: TensorFlow 2.21.0 from the PyPI mirror as the user spelled it, into the venv.
    let done = run.installed();
    assert_eq!(done.status, InstalledStatus::Installed);
    assert_eq!(done.profile, "tensorflow");
    assert!(done.changed);
    let venv = done.venv.expect("the venv is reported");
    assert_eq!(venv.path, b.venv());
    assert_eq!(venv.route["route"], "pypi", "{}", run.stdout);
    assert_eq!(venv.route["base"], pypi.as_str(), "{}", run.stdout);
    assert_eq!(venv.packages.index_url, pypi);
    assert_eq!(
        venv.packages.requirements,
        ["tensorflow[and-cuda]==2.21.0"],
        "{}",
        run.stdout
    );
    assert_eq!(
        b.python("import tensorflow as tf; print(tf.__version__)"),
        "2.21.0"
    );
}

#[test]
fn full_profile_installs_toolkit_framework_and_environment() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let b = Box_::new();
    let torch_index = format!("{}/whl", server.url());
    let mirror_arg = mirror.path().display().to_string();
    let run = b.install_env(
        &[
            "--profile",
            "full",
            "--torch",
            "2.14",
            "--torch-index",
            &torch_index,
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &mirror_arg,
        ],
        &[("SHELL", "/bin/bash")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let toolkit = b.home().join("toolkits/cuda-13.0.2");
    assert!(toolkit.join("bin/nvcc").is_file());
    assert!(
        run.stdout.contains("installed torch 2.14.1 (cu130)"),
        "{}",
        run.stdout
    );
    // The env script is hooked into .profile and sets the toolkit up, for sh and for fish.
    let profile = fs_err::read_to_string(b.ctx.home().join(".profile")).unwrap();
    assert!(
        profile.contains(&format!(". \"{}/env\"", b.home().display())),
        "{profile}"
    );
    let home = b.home().display().to_string();
    let sh = b.ctx.cudaup(&["env", "--shell", "sh"]);
    assert!(
        sh.stdout
            .contains(&toolkit.join("bin").display().to_string()),
        "{}",
        sh.stdout
    );
    let fish = b.ctx.cudaup(&["env", "--shell", "fish"]);
    assert!(fish.stdout.contains("CUDA_HOME"), "{}", fish.stdout);
    // Sourcing it in a real shell gives nvcc on PATH and CUDA_HOME.
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(format!(
        ". \"{home}/env\"; command -v nvcc; echo \"$CUDA_HOME\""
    ));
    let probe = guarded_output(hermetic(&mut sh, &b.ctx.home()));
    let text = String::from_utf8_lossy(&probe.stdout);
    assert!(
        text.contains(&toolkit.join("bin/nvcc").display().to_string()),
        "{text}"
    );
    assert!(text.contains(&toolkit.display().to_string()), "{text}");
}

#[test]
fn no_modify_path_leaves_rc_files_alone_and_ld_library_path_is_warned_about() {
    let mirror = synthetic_mirror(&[]);
    let index = torch_index(Some("13.0"), ARCH);
    let server = Server::start(index.path().to_owned());
    let b = Box_::new();
    let shadow = b.ctx.dir().join("oldcuda/lib64");
    fs_err::create_dir_all(&shadow).unwrap();
    fs_err::write(shadow.join("libcudnn.so.8"), "").unwrap();
    let torch_index = format!("{}/whl", server.url());
    let mirror_arg = mirror.path().display().to_string();
    let ld = shadow.display().to_string();
    let run = b.install_env(
        &[
            "--profile",
            "full",
            "--torch",
            "2.14",
            "--torch-index",
            &torch_index,
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &mirror_arg,
            "--no-modify-path",
        ],
        &[("LD_LIBRARY_PATH", &ld)],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !b.ctx.home().join(".profile").exists(),
        ".profile untouched"
    );
    assert!(
        b.home().join("env").is_file(),
        "the env script is still written"
    );
    assert!(
        run.stdout.contains("can shadow the CUDA libraries"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("libcudnn.so.8"), "{}", run.stdout);
}
