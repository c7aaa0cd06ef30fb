//! The first run on a GPU-less machine whose only way out is PyPI (issue 37's proof): the
//! wizard with every default (`wizard --yes`), in English and in Chinese, installs — the `cpu`
//! profile, whose torch is PyPI's build because PyTorch's index does not answer — verifies, and
//! `cudaup verify` exits 0 afterwards. PyTorch's index and NVIDIA's server are ports nothing
//! listens on; PyPI is a local index of stand-in wheels (torch 2.15.0's cu132 build, as PyPI
//! serves it, and its companions). Everything lands in the test's HOME.

use std::process::Command;

use crate::common::wheels::{self, WheelFile};
use crate::common::*;
use crate::dead_ends::dead;

/// A PyPI-style index at `<root>/simple` with what PyPI serves for torch 2.15.0 on Linux
/// x86_64 — the cu132 build, untagged — and its companions. The stand-in torch imports as the
/// real one does for verify's framework check without a GPU: `torch.version` says CUDA 13.2,
/// `torch.cuda` finds no device, and the CPU reference the check computes (`randn`, `@`,
/// `abs().max()`) is answered by a placeholder tensor (no arithmetic: the check compares nothing
/// without a device).
pub(crate) fn pypi_with_torch_that_imports() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("build");
    let files = [
        WheelFile::new(
            "torch/__init__.py",
            "__version__ = '2.15.0'\n\nimport torch.version as version\nimport torch.cuda as cuda\nimport torch.backends as backends\n\n\nclass Generator:\n    def manual_seed(self, seed):\n        return self\n\n\nclass _Tensor:\n    def __matmul__(self, other):\n        return _Tensor()\n\n    def abs(self):\n        return self\n\n    def max(self):\n        return 1.0\n\n\ndef randn(*size, generator=None):\n    return _Tensor()\n",
        ),
        WheelFile::new(
            "torch/version.py",
            "__version__ = '2.15.0'\ncuda = '13.2'\nhip = None\n",
        ),
        WheelFile::new(
            "torch/cuda/__init__.py",
            "def is_available():\n    return False\n\n\ndef device_count():\n    return 0\n\n\ndef get_arch_list():\n    return []\n",
        ),
        WheelFile::new(
            "torch/backends/__init__.py",
            "class _Matmul:\n    allow_tf32 = True\n\n\nclass _Cuda:\n    matmul = _Matmul()\n\n\ncuda = _Cuda()\n",
        ),
    ];
    let built = vec![
        wheels::build_wheel(&dir, "torch", "2.15.0", &[], &files),
        wheels::fake_companion(&dir, "torchvision", "0.29.2", "2.15.0"),
        wheels::fake_companion(&dir, "torchaudio", "2.11.1", "2.15.0"),
    ];
    wheels::write_index(&root.path().join("simple"), &built);
    root
}

#[test]
fn on_a_pypi_only_machine_the_wizards_defaults_install_and_verify_passes_in_both_languages() {
    for (lang, installed, checked, from) in [
        (
            "en_US.UTF-8",
            "Checking that it works (cudaup verify)",
            "1 passed, 6 skipped",
            "from",
        ),
        ("zh_CN.UTF-8", "cudaup verify", "通过 1 项", "来自"),
    ] {
        let index = pypi_with_torch_that_imports();
        // https, as the real sites are (a plain-http index is refused before it is asked).
        let down = dead().replace("http://", "https://");
        let pypi = index.path().join("simple").display().to_string();
        let ctx = TestContext::new()
            .with_env("LANG", lang)
            .with_env("CUDAUP_NO_UV", "1")
            .with_env("CUDAUP_PROBE_TIMEOUT", "5")
            .with_env("CUDAUP_PYPI_INDEX", &pypi)
            .with_env("CUDAUP_TORCH_INDEX", &format!("{down}/whl"))
            .with_env("CUDAUP_MIRROR", &down)
            .with_env("SHELL", "/bin/bash");

        let wizard = ctx.cudaup(&["wizard", "--yes"]);
        let text = format!("{}\n{}", wizard.stdout, wizard.stderr);
        assert_eq!(wizard.code, 0, "{lang}:\n{text}");
        assert!(text.contains(installed), "{lang}:\n{text}");
        assert!(text.contains(checked), "{lang}:\n{text}");
        if lang.starts_with("zh") {
            assert!(
                crate::zh::english_lines(&text).is_empty(),
                "English in the zh run: {:?}",
                crate::zh::english_lines(&text)
            );
        }

        // The plan shown named the route taken: PyPI's build, from the local index.
        assert!(text.contains(&format!("{from} {pypi}")), "{lang}:\n{text}");
        assert!(!text.contains("download.pytorch.org"), "{lang}:\n{text}");

        // The venv holds PyPI's torch (the CUDA build, run on the CPU) and verify passes.
        let python = ctx.cudaup_home().join("venvs/cpu/bin/python");
        let out = Command::new(&python)
            .args([
                "-c",
                "import torch; print(torch.__version__, torch.version.cuda)",
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "2.15.0 13.2",
            "{lang}:\n{text}"
        );
        let verify = ctx.cudaup(&["verify"]);
        assert_eq!(
            verify.code, 0,
            "{lang}:\n{}\n{}",
            verify.stdout, verify.stderr
        );
    }
}

/// NVIDIA's server silent and a PyPI mirror named (`--pypi-index`, the site the wizard's and
/// `plan`'s Download sites ask for NVIDIA's wheels): `install --profile cuda-dev` takes the CUDA
/// wheels from that mirror, never from pypi.org, and says so.
#[test]
fn with_nvidia_silent_the_toolkits_wheels_come_from_the_pypi_index_given() {
    let wheels = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    wheels::write_index(index.path(), &crate::toolkit::minimal_wheels(wheels.path()));
    let mirror = index.path().display().to_string();
    // Every request over the network goes to a proxy that is not there.
    let ctx = TestContext::new().with_env("HTTPS_PROXY", &dead());
    let prefix = ctx.dir().join("cuda");
    let run = ctx.install(&[
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--components",
        "minimal",
        "--no-cudnn",
        "--pypi-index",
        &mirror,
        "--prefix",
        &prefix.display().to_string(),
        "--yes",
        "--no-modify-path",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let text = format!("{}\n{}", run.stdout, run.stderr);
    assert!(
        text.contains(&format!(
            "taking NVIDIA's CUDA 13.0.2 wheels from {mirror} instead"
        )),
        "{text}"
    );
    assert!(!text.contains("pypi.org"), "{text}");
    let receipt: serde_json::Value =
        serde_json::from_slice(&fs_err::read(prefix.join(".cudaup-receipt.json")).unwrap())
            .unwrap();
    assert_eq!(
        receipt["source"].as_str().unwrap(),
        format!("wheels {mirror}"),
        "{receipt:#}"
    );
    assert!(prefix.join("bin/nvcc").is_file());
}

/// A PyPI-style index at `<root>/simple` holding NVIDIA's real wheels of the CUDA release the
/// wizard's `cuda-dev` takes on this machine (its `standard` set) and of its cuDNN, fetched once
/// from pypi.org into target/tmp/nvidia-wheels; with that release. `None`, the skip recorded,
/// where PyPI cannot be reached.
fn pypi_with_nvidias_cuda_wheels(test: &str) -> Option<(tempfile::TempDir, String)> {
    let plan = TestContext::new()
        .cudaup(&["plan", "--profile", "cuda-dev", "--json"])
        .json();
    let cuda = plan["toolkit_components"]["cuda"]
        .as_str()
        .unwrap()
        .to_owned();
    let cudnn = plan["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "cudnn")
        .unwrap()["version"]
        .as_str()
        .unwrap()
        .to_owned();
    let wheels = match crate::toolkit::real_wheels(&cuda, &cudnn) {
        Ok(w) => w,
        Err(why) => {
            skipped(test, &format!("PyPI is not reachable: {why}"));
            return None;
        }
    };
    let index = tempfile::tempdir().unwrap();
    wheels::write_index_with(
        &index.path().join("simple"),
        &wheels,
        Some(&index.path().join("packages")),
    );
    Some((index, cuda))
}

/// `cudaup verify --json` in `ctx` after a cuda-dev install of `cuda` on this GPU-less machine:
/// exit 0, the driver check skipped, nvcc, addKernel and the libraries' program passed — built
/// by the installed toolkit's own nvcc — and nothing failed.
fn assert_verify_passes_without_a_gpu(ctx: &TestContext, cuda: &str, lang: &str) {
    let prefix = ctx.cudaup_home().join(format!("toolkits/cuda-{cuda}"));
    let run = ctx.cudaup(&["verify", "--json"]);
    let doc = run.json();
    assert_eq!(run.code, 0, "{lang}: {doc:#}");
    let checks = doc["checks"].as_array().unwrap();
    let status = |id: &str| {
        checks
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{lang}: no {id} in {doc:#}"))["status"]
            .clone()
    };
    // No GPU: the driver check and every run are skipped; what compiles is compiled.
    assert_eq!(status("driver"), "skip", "{doc:#}");
    for id in ["nvcc", "addkernel", "libraries"] {
        assert_eq!(status(id), "pass", "{lang}: {id}: {doc:#}");
    }
    assert!(
        checks.iter().all(|c| c["status"] != "fail"),
        "{lang}: {doc:#}"
    );
    let nvcc = prefix.join("bin/nvcc").display().to_string();
    let addkernel = checks.iter().find(|c| c["id"] == "addkernel").unwrap();
    assert!(addkernel.to_string().contains(&nvcc), "{addkernel:#}");
}

/// The wizard's `cuda-dev` with every other answer its default (`wizard --config` naming only
/// the profile, `--yes`), in English and in Chinese, on the same machine: NVIDIA's server does
/// not answer, so the toolkit comes as NVIDIA's CUDA wheels from PyPI — the real ones, fetched
/// once from pypi.org into a cache under target/ and served from a local index in PyPI's layout —
/// and the wizard's verify and `cudaup verify` pass: the toolkit's own nvcc, driving this
/// machine's C++ compiler, compiles and links addKernel and a program calling every library;
/// what needs a GPU is skipped, as verify does on any GPU-less machine.
#[test]
fn needs_network_on_a_pypi_only_machine_the_wizards_cuda_dev_installs_from_pypi_and_verify_passes_in_both_languages(
) {
    let test = "needs_network_on_a_pypi_only_machine_the_wizards_cuda_dev_installs_from_pypi_and_verify_passes_in_both_languages";
    let Some((index, cuda)) = pypi_with_nvidias_cuda_wheels(test) else {
        return;
    };
    let pypi = index.path().join("simple").display().to_string();
    // Nothing on the network answers: every request goes to a proxy that is not there, so
    // NVIDIA's own server (the default, asked as a new user's machine would) cannot be reached;
    // PyPI is the local copy.
    let proxy = dead();

    for (lang, taking, passed) in [
        ("en", "taking NVIDIA's CUDA", " passed, "),
        ("zh", "改用", "通过 "),
    ] {
        // One machine at a time: each install is gigabytes.
        let ctx = TestContext::new()
            .with_env("CUDAUP_PROBE_TIMEOUT", "5")
            .with_env("CUDAUP_PYPI_INDEX", &pypi)
            .with_env("HTTPS_PROXY", &proxy)
            .with_env("SHELL", "/bin/bash");
        let config = ctx.dir().join("cudaup.toml");
        fs_err::write(&config, "version = 1\nprofile = \"cuda-dev\"\n").unwrap();
        let config = config.display().to_string();
        let wizard = ctx.cudaup(&["wizard", "--lang", lang, "--config", &config, "--yes"]);
        let text = format!("{}\n{}", wizard.stdout, wizard.stderr);
        assert_eq!(wizard.code, 0, "{lang}:\n{text}");
        // NVIDIA's server was asked and the wheels taken from PyPI instead, as the plan said.
        assert!(text.contains(taking), "{lang}:\n{text}");
        assert!(text.contains(&format!("wheels {pypi}")), "{lang}:\n{text}");
        assert!(text.contains(&format!("CUDA {cuda}")), "{lang}:\n{text}");
        assert!(text.contains(passed), "{lang}:\n{text}");
        if lang == "zh" {
            assert!(
                crate::zh::english_lines(&text).is_empty(),
                "English in the zh run: {:?}",
                crate::zh::english_lines(&text)
            );
        }

        assert_verify_passes_without_a_gpu(&ctx, &cuda, lang);
    }
}

/// The same in a terminal, as a person answers: one arrow key up from the suggested `cpu` to
/// `cuda-dev` on the profile list, then Enter at "Go ahead?" — in English, and in Chinese
/// (`--lang zh`, no English sentence on the terminal). Then `cudaup verify` passes.
#[test]
fn needs_network_on_a_pypi_only_machine_the_wizards_cuda_dev_in_a_terminal_installs_from_pypi_and_verify_passes_in_both_languages(
) {
    use crate::common::pty::Pty;
    use std::time::Duration;
    let test = "needs_network_on_a_pypi_only_machine_the_wizards_cuda_dev_in_a_terminal_installs_from_pypi_and_verify_passes_in_both_languages";
    let Some((index, cuda)) = pypi_with_nvidias_cuda_wheels(test) else {
        return;
    };
    let pypi = index.path().join("simple").display().to_string();
    let proxy = dead();
    for (lang, profiles, plan, go_ahead, verifying, passed, done) in [
        (
            "en",
            "cpu         PyTorch without a GPU",
            "Plan (cuda-dev profile)",
            "Go ahead?",
            "Checking that it works (cudaup verify)",
            " passed, ",
            "Done. Next steps:",
        ),
        (
            "zh",
            "cpu         不用显卡的 PyTorch",
            "（cuda-dev 配置）",
            "开始安装吗？",
            "正在检查能否正常工作（cudaup verify）",
            "通过 ",
            "完成。接下来：",
        ),
    ] {
        // One machine at a time: each install is gigabytes.
        let ctx = TestContext::new()
            .with_env("LANG", "en_US.UTF-8")
            .with_env("CUDAUP_PROBE_TIMEOUT", "5")
            .with_env("CUDAUP_PYPI_INDEX", &pypi)
            .with_env("HTTPS_PROXY", &proxy)
            .with_env("SHELL", "/bin/bash");
        let mut term = Pty::start(ctx.command(&["wizard", "--lang", lang]));
        // The list shows with `cpu` selected; `cuda-dev` is the row above it.
        term.answer(profiles, "\x1b[A\r");
        term.expect(plan);
        term.answer(go_ahead, "\r");
        term.session
            .set_expect_timeout(Some(Duration::from_secs(600)));
        term.expect(&format!("CUDA {cuda}"));
        term.expect(verifying);
        term.expect(passed);
        term.expect(done);
        let code = term.finish();
        let text = term.text();
        assert_eq!(code, 0, "{lang}:\n{text}");
        assert!(text.contains(&format!("wheels {pypi}")), "{lang}:\n{text}");
        if lang == "zh" {
            assert!(
                crate::zh::english_lines(&text).is_empty(),
                "English in the zh run: {:?}",
                crate::zh::english_lines(&text)
            );
        }
        assert_verify_passes_without_a_gpu(&ctx, &cuda, lang);
    }
}
