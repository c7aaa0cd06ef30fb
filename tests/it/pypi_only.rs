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
