//! The framework's routes (issue 14): PyTorch's index, PyPI (and its mirrors) when the planned
//! build is PyPI's, flat folders and flat listings, offline bundles — each served by a loopback
//! index of stand-in wheels built here (`common::wheels`), in PyPI's `<base>/<project>/` and
//! PyTorch's `<base>/<variant>/<project>/` layouts. Dead routes are ports nothing listens on.
//! Every plan is for the H200 machine's `detect --json`, with its Pythons replaced by this
//! machine's (the venv is made here).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::server::Server;
use crate::common::wheels::{self, WheelFile};
use crate::common::*;

const H200: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/h200-detect.json"
);

/// A URL nothing answers on: a port bound once and released.
fn dead() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

/// The torch build the plan names for the H200 with a profile, and its companions: `(torch,
/// torchvision, torchaudio, variant, cuda)`.
struct Build {
    torch: &'static str,
    vision: &'static str,
    audio: &'static str,
    variant: &'static str,
    cuda: &'static str,
}

/// `--profile pytorch`: torch 2.15.0 cu132, PyPI's build of 2.15.0.
const PYTORCH: Build = Build {
    torch: "2.15.0",
    vision: "0.29.2",
    audio: "2.11.1",
    variant: "cu132",
    cuda: "13.2",
};

/// torch 2.14.1 cu130, PyPI's build of 2.14.1 (what `--cuda 13.0` plans for the H200).
const CU130: Build = Build {
    torch: "2.14.1",
    vision: "0.29.1",
    audio: "2.11.0",
    variant: "cu130",
    cuda: "13.0",
};

const ARCH: &[&str] = &["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"];

/// Stand-in wheels of `b`, tagged (`2.15.0+cu132`, as on PyTorch's index) or not (PyPI's), with
/// no dependencies, so nothing but the loopback index is needed.
fn build_wheels(dir: &Path, b: &Build, tagged: bool) -> Vec<PathBuf> {
    let tag = |v: &str| {
        if tagged {
            format!("{v}+{}", b.variant)
        } else {
            v.to_owned()
        }
    };
    let torch = tag(b.torch);
    vec![
        wheels::fake_torch_with(dir, &torch, Some(b.cuda), ARCH, &[]),
        wheels::fake_companion(dir, "torchvision", &tag(b.vision), &torch),
        wheels::fake_companion(dir, "torchaudio", &tag(b.audio), &torch),
    ]
}

/// A PyPI-style index at `<root>/simple` with PyPI's (untagged) build of `b`.
fn pypi_index(b: &Build) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let built = build_wheels(&root.path().join("build"), b, false);
    wheels::write_index(&root.path().join("simple"), &built);
    root
}

/// This machine's Python, as detect reports it (`/usr/bin/python3`, `3.11.2`).
fn local_python() -> (String, String) {
    let out = Command::new("/usr/bin/python3")
        .args(["-c", "import platform; print(platform.python_version())"])
        .output()
        .expect("python3 runs");
    (
        "/usr/bin/python3".into(),
        String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    )
}

/// What the route tests do with a [`TestContext`] planning for the H200 picture: one venv
/// in the test's directory, installed over loopback HTTP.
trait RouteContext {
    fn venv(&self) -> PathBuf;
    /// Installs into [`Self::venv`] with `extra`.
    fn install_venv(&self, extra: &[&str]) -> Run;
    fn python(&self, code: &str) -> String;
    fn receipt(&self) -> serde_json::Value;
    fn install_logs(&self) -> usize;
}

/// The context every route test starts from.
fn context() -> TestContext {
    let mut ctx = TestContext::new().with_system_file(Path::new(H200));
    for (k, v) in env() {
        ctx = ctx.with_env(k, v);
    }
    ctx
}

impl RouteContext for TestContext {
    fn venv(&self) -> PathBuf {
        self.dir().join("venv")
    }
    fn install_venv(&self, extra: &[&str]) -> Run {
        let venv = self.venv().display().to_string();
        let mut args = vec!["--venv", &venv, "--yes", "--allow-http", "--no-modify-path"];
        args.extend_from_slice(extra);
        TestContext::install(self, &args)
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
    fn receipt(&self) -> serde_json::Value {
        let dir = self.cudaup_home().join("receipts");
        let path = fs_err::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("venv-")
            })
            .expect("a venv receipt");
        serde_json::from_slice(&fs_err::read(path).unwrap()).unwrap()
    }
    fn install_logs(&self) -> usize {
        fs_err::read_dir(self.cudaup_home().join("logs"))
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with("install-")
                })
                .count()
            })
            .unwrap_or(0)
    }
}

fn env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("CUDAUP_TEST_NO_RETRY_DELAY", "1"),
        ("CUDAUP_NO_UV", "1"),
        ("CUDAUP_PROBE_TIMEOUT", "5"),
    ]
}

#[test]
fn pypi_route_when_pytorchs_index_is_down_and_the_build_is_pypis() {
    let index = pypi_index(&PYTORCH);
    let server = Server::start(index.path().to_owned());
    let b = context();
    let pypi = format!("{}/simple", server.url());
    let down = dead();
    let run = b.install_venv(&[
        "--profile",
        "pytorch",
        "--pypi-index",
        &pypi,
        "--torch-index",
        &format!("{down}/whl"),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // The plan said cu132; PyPI's untagged 2.15.0 is that build, and the check proved it.
    assert!(
        run.stdout
            .contains("pip install torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("is the cu132 build (catalog: pypi_default)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("not PyTorch's index {down}/whl")),
        "the dead route is named: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains("installed torch 2.15.0 (cu132)"),
        "{}",
        run.stdout
    );
    assert_eq!(
        b.python("import torch; print(torch.__version__, torch.version.cuda)"),
        "2.15.0 13.2"
    );
    let receipt = b.receipt();
    assert_eq!(receipt["route"]["route"], "pypi");
    assert_eq!(receipt["route"]["variant"], "cu132");
    assert_eq!(receipt["packages"]["index_url"], pypi);
    assert!(server.requests().iter().any(|r| r.path == "/simple/torch/"));
    // pip's own output went to the log, not to the terminal.
    assert!(!run.stderr.contains("Looking in indexes"), "{}", run.stderr);
    // The second run keeps it: PyPI's build (no tag) with CUDA 13.2 is the planned cu132.
    server.clear_log();
    let again = b.install_venv(&[
        "--profile",
        "pytorch",
        "--pypi-index",
        &pypi,
        "--torch-index",
        &format!("{down}/whl"),
        "--json",
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    // The outcome: the venv was only checked (no route, nothing installed), nothing changed.
    let done = again.installed();
    assert!(!done.changed, "{}", again.stdout);
    let venv = done.venv.expect("the venv is reported");
    assert_eq!(venv.path, b.venv());
    assert!(venv.route.is_null(), "only checked: {}", again.stdout);
    assert!(venv.packages.requirements.is_empty(), "{:?}", venv.packages);
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn pypi_is_refused_with_the_reason_when_its_build_is_not_the_plan() {
    // torch 2.14.1 cu132: PyPI's 2.14.1 is the cu130 build.
    let b214 = Build {
        variant: "cu132",
        cuda: "13.2",
        ..CU130
    };
    let index = pypi_index(&b214);
    let server = Server::start(index.path().to_owned());
    let b = context();
    let pypi = format!("{}/simple", server.url());
    let down = dead();
    let pins = [
        "--profile",
        "pytorch",
        "--torch",
        "2.14",
        "--cuda",
        "13.2",
        "--pypi-index",
        &pypi,
    ];
    let torch_index = format!("{down}/whl");
    let mut args = pins.to_vec();
    args.extend(["--torch-index", &torch_index]);
    let run = b.install_venv(&args);
    // PyTorch's index is down and PyPI cannot serve it: a network failure, with the reason PyPI
    // was not taken.
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    let err = &run.stderr;
    assert!(
        err.contains("no route can serve torch 2.14.1 (cu132)"),
        "{err}"
    );
    assert!(
        err.contains(
            "PyPI's torch 2.14.1 for Linux x86_64 is the cu130 build; the plan needs cu132"
        ),
        "{err}"
    );
    assert!(err.contains(&down["http://".len()..]), "the host: {err}");
    assert!(err.contains("--torch-index URL"), "{err}");
    assert!(
        err.contains("--cuda 13.0 plans torch 2.14.1 cu130"),
        "{err}"
    );
    assert!(!b.venv().exists(), "no venv is made");
    assert_eq!(b.install_logs(), 0, "pip never ran");

    // Forced onto PyPI, the refusal is the whole story: no compatible route (exit 5).
    let mut args = pins.to_vec();
    args.extend(["--torch-source", "pypi"]);
    let run = b.install_venv(&args);
    assert_eq!(run.code, 5, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("not asked: PyPI's torch 2.14.1 for Linux x86_64 is the cu130 build"),
        "{}",
        run.stderr
    );
    // PyTorch's index is out of reach here: `--torch-source auto` would be refused too, so it
    // is not offered.
    assert!(
        !run.stderr.contains("--torch-source auto"),
        "{}",
        run.stderr
    );
    assert!(!b.venv().exists());

    // With a copy of PyTorch's index that lists the build, it is, naming it.
    let mirror = tempfile::tempdir().unwrap();
    let built = build_wheels(&mirror.path().join("build"), &b214, true);
    wheels::write_index(&mirror.path().join("whl/cu132"), &built);
    let torch_server = Server::start(mirror.path().to_owned());
    let torch_index = format!("{}/whl", torch_server.url());
    let mut args = pins.to_vec();
    args.extend(["--torch-source", "pypi", "--torch-index", &torch_index]);
    let run = b.install_venv(&args);
    assert_eq!(run.code, 5, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "--torch-source auto (now: pypi): PyTorch's index {torch_index} lists the planned wheel"
        )),
        "{}",
        run.stderr
    );
    assert!(!b.venv().exists());
}

#[test]
fn nothing_answers_exit_3_with_cudaups_own_message_and_no_venv() {
    let b = context();
    let (pypi, torch) = (dead(), dead());
    let run = b.install_venv(&[
        "--profile",
        "pytorch",
        "--pypi-index",
        &format!("{pypi}/simple"),
        "--torch-index",
        &format!("{torch}/whl"),
    ]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    let err = &run.stderr;
    // The download sites are asked before anything else (issue 37): the refusal names both.
    assert!(
        err.contains("pytorch cannot work here: nothing that serves PyTorch answered:"),
        "{err}"
    );
    for host in [&pypi, &torch] {
        assert!(
            err.contains(&host["http://".len()..]),
            "{host} named: {err}"
        );
    }
    for fix in [
        "--pypi-index URL",
        "--torch-index URL",
        "an offline bundle",
        "HTTPS_PROXY",
    ] {
        assert!(err.contains(fix), "{fix}: {err}");
    }
    // cudaup's message, not pip's retries: pip never ran, nothing was made.
    assert!(!err.contains("Retrying"), "{err}");
    assert!(!b.venv().exists());
    assert_eq!(b.install_logs(), 0);
}

#[test]
fn a_pytorch_layout_mirror_and_a_flat_variant_listing_are_both_routes() {
    // A copy of PyTorch's layout: <base>/cu132/<project>/.
    let mirror = tempfile::tempdir().unwrap();
    let built = build_wheels(&mirror.path().join("build"), &PYTORCH, true);
    wheels::write_index(&mirror.path().join("whl/cu132"), &built);
    // A flat <base>/cu132/ listing for pip --find-links (how Alibaba Cloud's pytorch-wheels is
    // used): one page linking the wheels beside it.
    let flat = mirror.path().join("flat/cu132");
    fs_err::create_dir_all(&flat).unwrap();
    let mut links = String::new();
    for w in &built {
        let name = w.file_name().unwrap().to_str().unwrap();
        fs_err::copy(w, flat.join(name)).unwrap();
        links += &format!("<a href=\"{}\">{name}</a><br/>\n", name.replace('+', "%2B"));
    }
    fs_err::write(
        flat.join("index.html"),
        format!("<html><body>{links}</body></html>"),
    )
    .unwrap();
    // PyPI for the dependencies: an index that is up (the stand-ins need none).
    fs_err::create_dir_all(mirror.path().join("simple")).unwrap();
    fs_err::write(mirror.path().join("simple/index.html"), "<html></html>").unwrap();
    let server = Server::start(mirror.path().to_owned());
    let pypi = format!("{}/simple", server.url());

    for (base, layout) in [("whl", "index"), ("flat", "find-links")] {
        let b = context();
        let torch_index = format!("{}/{base}", server.url());
        let run = b.install_venv(&[
            "--profile",
            "pytorch",
            "--torch-index",
            &torch_index,
            "--pypi-index",
            &pypi,
        ]);
        assert_eq!(run.code, 0, "{base}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stdout
                // The catalog plans PyPI's companions (a `+cu132` torchvision on PyTorch's
                // index is unconfirmed): they carry no tag.
                .contains("pip install torch==2.15.0+cu132 torchvision==0.29.2 torchaudio==2.11.1"),
            "{}",
            run.stdout
        );
        assert_eq!(
            b.python("import torch; print(torch.__version__, torch.version.cuda)"),
            "2.15.0+cu132 13.2"
        );
        let receipt = b.receipt();
        assert_eq!(receipt["route"]["route"], "pytorch", "{base}");
        match layout {
            "index" => assert_eq!(
                receipt["packages"]["index_url"],
                format!("{torch_index}/cu132")
            ),
            _ => assert_eq!(
                receipt["packages"]["find_links"][0],
                format!("{torch_index}/cu132/")
            ),
        }
    }
}

#[test]
fn a_flat_folder_of_wheels_serves_the_framework_and_the_toolkit() {
    // What `pip download -d DIR` leaves: wheels side by side, no index pages.
    let flat = tempfile::tempdir().unwrap();
    build_wheels(flat.path(), &PYTORCH, false);
    let b = context();
    let dir = flat.path().display().to_string();
    let down = dead();
    let run = b.install_venv(&[
        "--profile",
        "pytorch",
        "--pypi-index",
        &dir,
        "--torch-index",
        &format!("{down}/whl"),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        b.python("import torch; print(torch.__version__, torch.version.cuda)"),
        "2.15.0 13.2"
    );
    let receipt = b.receipt();
    assert_eq!(receipt["packages"]["no_index"], true);
    assert_eq!(receipt["packages"]["find_links"][0], dir);

    // cudaup's own index reader takes a flat folder too: the toolkit from NVIDIA's wheels.
    let nvidia = tempfile::tempdir().unwrap();
    nvidia_stand_ins(nvidia.path(), "13.0.2");
    let b = context();
    let prefix = b.dir().join("cuda");
    let run = b.install_venv(&[
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--no-cudnn",
        "--source",
        "wheels",
        "--index-url",
        &nvidia.path().display().to_string(),
        "--prefix",
        &prefix.display().to_string(),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(prefix.join("include/nvidia-cuda-runtime.h").is_file());
}

/// Stand-ins for the NVIDIA wheels the catalog's `cuda-toolkit` pins for a CUDA release
/// (`13.0.2` exactly, or the newest of a series such as `13.2`), each at its pinned version with
/// one header in NVIDIA's `nvidia/cu13/` layout.
fn nvidia_stand_ins(dir: &Path, release: &str) -> Vec<PathBuf> {
    let catalog = cudaup::catalog::Catalog::embedded();
    let key = |v: &str| -> Vec<u64> { v.split('.').filter_map(|p| p.parse().ok()).collect() };
    let pinned = catalog
        .components
        .wheels
        .iter()
        .filter(|w| w.cuda == release || w.cuda.starts_with(&format!("{release}.")))
        .max_by_key(|w| key(&w.cuda))
        .unwrap_or_else(|| panic!("no cuda-toolkit pins for {release} in the catalog"));
    pinned
        .packages
        .iter()
        .map(|(p, pin)| {
            wheels::build_wheel(
                dir,
                p,
                &pin.version,
                &[],
                &[WheelFile::new(
                    &format!("nvidia/cu13/include/{p}.h"),
                    format!("/* {p} stand-in */\n"),
                )],
            )
        })
        .collect()
}

/// A System like the H200's, with this machine's Python (a bundle is for the Python it will be
/// installed with).
fn h200_with_local_python(dir: &Path) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(H200).unwrap()).unwrap();
    let (path, version) = local_python();
    doc["pythons"] =
        serde_json::json!([{"path": path, "version": version, "torch": null, "tensorflow": null}]);
    let file = dir.join("target-system.json");
    fs_err::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    file
}

/// Makes a `--profile full --source wheels` bundle of stand-ins for the H200 (its plan: CUDA
/// 13.2's toolkit wheels and PyPI's torch 2.15.0, the cu132 build, from a loopback PyPI,
/// PyTorch's index dead); returns it with the system file it was made for.
fn make_bundle() -> (tempfile::TempDir, PathBuf) {
    make_bundle_with(None)
}

/// [`make_bundle`], with `uv` (the real wheel manifests/uv.toml pins) on the loopback PyPI.
fn make_bundle_with(uv: Option<&Path>) -> (tempfile::TempDir, PathBuf) {
    let upstream = tempfile::tempdir().unwrap();
    let build = upstream.path().join("build");
    let mut built = build_wheels(&build, &PYTORCH, false);
    built.extend(nvidia_stand_ins(&build, "13.2"));
    built.extend(uv.map(Path::to_owned));
    wheels::write_index(&upstream.path().join("simple"), &built);
    let server = Server::start(upstream.path().to_owned());
    let out = tempfile::tempdir().unwrap();
    let system = h200_with_local_python(out.path());
    let bundle = out.path().join("bundle");
    let home = tempfile::tempdir().unwrap();
    let index = format!("{}/simple", server.url());
    let run = cudaup_env(
        &[
            "--home",
            &home.path().display().to_string(),
            "mirror",
            "create",
            &bundle.display().to_string(),
            "--system",
            &system.display().to_string(),
            "--profile",
            "full",
            "--driver",
            "keep",
            "--source",
            "wheels",
            "--no-cudnn",
            "--index-url",
            &index,
            "--pypi-index",
            &index,
            "--torch-index",
            &format!("{}/whl", dead()),
            "--allow-http",
        ],
        home.path(),
        &env(),
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("install from it"), "{}", run.stdout);
    // uv's wheel goes in beside the framework's; an index without it is said, not silent.
    if uv.is_some() {
        assert!(bundle.join("uv/index.html").is_file(), "{}", run.stdout);
        assert!(
            run.stdout.contains(
                "bundled uv/uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl (18.40 MiB), checked against manifests/uv.toml"
            ),
            "{}",
            run.stdout
        );
    } else {
        assert!(
            run.stdout.contains("left out: uv 0.13.9 for x86_64:")
                && run.stdout.contains("installs from this bundle use pip"),
            "{}",
            run.stdout
        );
    }
    // A PEP 503 tree with hashes, and a manifest of what it is for.
    let page = fs_err::read_to_string(bundle.join("torch/index.html")).unwrap();
    assert!(
        page.contains("torch-2.15.0-py3-none-any.whl#sha256="),
        "{page}"
    );
    assert!(bundle.join("nvidia-cuda-nvcc/index.html").is_file());
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs_err::read(bundle.join("cudaup-bundle.json")).unwrap()).unwrap();
    assert_eq!(manifest["profile"], "full");
    assert_eq!(manifest["toolkit"]["source"], "wheels");
    assert_eq!(manifest["framework"]["route"], "pypi");
    assert_eq!(manifest["framework"]["requirements"][0], "torch==2.15.0");
    assert_eq!(manifest["target"]["gpus"][0], "NVIDIA H200");
    assert_eq!(
        manifest["target"]["platforms"][0], "manylinux_2_28_x86_64",
        "another machine's glibc defaults to 2.28"
    );
    assert!(manifest["files"].as_array().unwrap().len() >= 9);
    assert!(
        !fs_err::read_dir(&bundle).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".cudaup")),
        "no staging folder left"
    );
    drop(server);
    (out, system)
}

/// The install from a bundle (`--index-url DIR`, or `--mirror URL` for one served over http),
/// every other source pointing at a dead port.
fn install_from_bundle(
    bundle: (&str, &str),
    system: &Path,
    home: &Path,
    wrap: Option<&str>,
) -> (Run, PathBuf) {
    let venv = home.join("venv");
    let prefix = home.join("cuda");
    let down = dead();
    let args: Vec<String> = [
        "--home",
        &home.display().to_string(),
        "install",
        "--system",
        &system.display().to_string(),
        "--profile",
        "full",
        "--driver",
        "keep",
        "--no-cudnn",
        bundle.0,
        bundle.1,
        "--pypi-index",
        &format!("{down}/simple"),
        "--torch-index",
        &format!("{down}/whl"),
        "--venv",
        &venv.display().to_string(),
        "--prefix",
        &prefix.display().to_string(),
        "--no-modify-path",
        "--yes",
        "--allow-http",
    ]
    .map(str::to_owned)
    .to_vec();
    let mut cmd = match wrap {
        Some(w) => {
            let mut c = Command::new(w);
            c.args(["--net", "--"]).arg(env!("CARGO_BIN_EXE_cudaup"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_cudaup")),
    };
    cmd.args(&args).current_dir(home);
    hermetic(&mut cmd, home);
    for (k, v) in env() {
        cmd.env(k, v);
    }
    (crate::common::context::run(&mut cmd), venv)
}

fn assert_installed_from_bundle(run: &Run, venv: &Path, home: &Path) {
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("from the offline bundle"),
        "{}",
        run.stdout
    );
    assert!(home.join("cuda/include/nvidia-cuda-nvcc.h").is_file());
    let out = Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import torch, torchvision; print(torch.__version__, torch.version.cuda)",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2.15.0 13.2");
}

#[test]
fn a_bundle_installs_with_every_other_source_dead() {
    let (out, system) = make_bundle();
    let bundle = out.path().join("bundle");
    let home = tempfile::tempdir().unwrap();
    let dir = bundle.display().to_string();
    let (run, venv) = install_from_bundle(("--index-url", &dir), &system, home.path(), None);
    assert_installed_from_bundle(&run, &venv, home.path());
    // The same bundle served over http for a lab: found by its manifest, its toolkit read as
    // the wheels it is.
    let server = Server::start(bundle.clone());
    let home = tempfile::tempdir().unwrap();
    let (run, venv) = install_from_bundle(("--mirror", &server.url()), &system, home.path(), None);
    assert_installed_from_bundle(&run, &venv, home.path());
    assert!(server
        .requests()
        .iter()
        .any(|r| r.path == "/cudaup-bundle.json"));
}

#[test]
#[allow(clippy::print_stderr)]
fn needs_root_a_bundle_installs_in_a_network_namespace_without_network() {
    // `unshare --net` gives the install a network namespace with only a downed loopback: no
    // route to anything, loopback included.
    let probe = Command::new("unshare").args(["--net", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: needs_root_a_bundle_installs_in_a_network_namespace_without_network (unshare --net needs root)");
        return;
    }
    let (out, system) = make_bundle();
    let home = tempfile::tempdir().unwrap();
    let dir = out.path().join("bundle").display().to_string();
    let (run, venv) =
        install_from_bundle(("--index-url", &dir), &system, home.path(), Some("unshare"));
    assert_installed_from_bundle(&run, &venv, home.path());
}

#[test]
fn tensorflow_gets_the_same_errors_when_pypi_does_not_answer() {
    let b = context();
    let down = dead();
    let run = b.install_venv(&[
        "--profile",
        "tensorflow",
        "--pypi-index",
        &format!("{down}/simple"),
    ]);
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("no route can serve tensorflow 2."),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&down["http://".len()..]),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("a PyPI mirror this machine reaches"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("--torch-index"),
        "TensorFlow has no PyTorch route: {}",
        run.stderr
    );
    assert!(!b.venv().exists());
}

#[test]
fn plan_shows_the_route_and_asks_it_with_probe() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();
    // Without --probe: the order install asks in, and the index of the first.
    let run = cudaup(
        &[
            "--home",
            &h,
            "plan",
            "--system",
            H200,
            "--profile",
            "pytorch",
            "--json",
        ],
        home.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = run.json();
    assert_eq!(doc["framework_route"]["status"], "not-probed");
    let torch = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "torch")
        .unwrap()
        .clone();
    assert_eq!(torch["route"], "pytorch");
    assert_eq!(torch["index_url"], "https://download.pytorch.org/whl/cu132");
    assert!(torch["route_reason"]
        .as_str()
        .unwrap()
        .contains("then PyPI https://pypi.org/simple"));

    // With --probe: PyTorch's index is down, PyPI's build is the plan's.
    let index = pypi_index(&PYTORCH);
    let server = Server::start(index.path().to_owned());
    let pypi = format!("{}/simple", server.url());
    let torch_index = format!("{}/whl", dead());
    let run = cudaup_env(
        &[
            "--home",
            &h,
            "plan",
            "--system",
            H200,
            "--profile",
            "pytorch",
            "--json",
            "--probe",
            "--allow-http",
            "--pypi-index",
            &pypi,
            "--torch-index",
            &torch_index,
        ],
        home.path(),
        &env(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = run.json();
    let route = &doc["framework_route"];
    assert_eq!(route["status"], "chosen");
    assert_eq!(route["route"], "pypi");
    assert_eq!(route["requirements"][0], "torch==2.15.0");
    assert_eq!(route["tried"][0]["route"], "pytorch");
    assert_eq!(route["tried"][0]["network"], true);
    let torch = doc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "torch")
        .unwrap()
        .clone();
    assert_eq!(torch["index_url"], pypi);
    assert_eq!(torch["route"], "pypi");

    // The human plan says it too; nothing answering is exit 3 even for plan.
    let run = cudaup_env(
        &[
            "--home",
            &h,
            "plan",
            "--system",
            H200,
            "--profile",
            "pytorch",
            "--probe",
            "--allow-http",
            "--pypi-index",
            &format!("{}/simple", dead()),
            "--torch-index",
            &torch_index,
        ],
        home.path(),
        &env(),
    );
    assert_eq!(run.code, 3, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("Framework route"), "{}", run.stdout);
    assert!(run.stdout.contains("no route can serve"), "{}", run.stdout);
}

#[test]
fn needs_network_a_bundle_carries_uv_and_the_install_from_it_brings_it() {
    const NAME: &str = "needs_network_a_bundle_carries_uv_and_the_install_from_it_brings_it";
    // The real wheel manifests/uv.toml pins, from PyPI (pip here fetches it once).
    let wheels = tempfile::tempdir().unwrap();
    let got = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "musllinux_1_1_x86_64",
            "--python-version",
            "3.12",
            "uv==0.13.9",
            "-d",
        ])
        .arg(wheels.path())
        .status();
    let wheel = fs_err::read_dir(wheels.path())
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.path());
    let (Ok(status), Some(wheel)) = (got, wheel) else {
        skipped(NAME, "pip could not download uv's wheel from PyPI");
        return;
    };
    assert!(status.success());
    let (out, system) = make_bundle_with(Some(&wheel));
    let bundle = out.path().join("bundle");
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs_err::read(bundle.join("cudaup-bundle.json")).unwrap()).unwrap();
    assert!(
        manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "uv/uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl"),
        "{manifest}"
    );
    // The install from it, every other source dead and no uv on PATH, brings uv from it.
    let home = tempfile::tempdir().unwrap();
    let down = dead();
    let run = cudaup_env(
        &[
            "--home",
            &home.path().display().to_string(),
            "install",
            "--system",
            &system.display().to_string(),
            "--profile",
            "pytorch",
            "--driver",
            "keep",
            "--index-url",
            &bundle.display().to_string(),
            "--pypi-index",
            &format!("{down}/simple"),
            "--torch-index",
            &format!("{down}/whl"),
            "--venv",
            &home.path().join("venv").display().to_string(),
            "--no-modify-path",
            "--yes",
            "--allow-http",
        ],
        home.path(),
        &[
            ("CUDAUP_TEST_NO_RETRY_DELAY", "1"),
            ("CUDAUP_PROBE_TIMEOUT", "5"),
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        format!("{}{}", run.stdout, run.stderr)
            .contains("installer: uv 0.13.9 (fetched and verified by cudaup"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}
