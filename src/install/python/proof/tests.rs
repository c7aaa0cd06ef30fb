//! install's proof of a torch on a venv laid out on disk, with the venv's Python scripted: what
//! the files decide alone, the one load of the native extension, and the import as fallback.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::model::version::Version;
use crate::world::runner::{Output, RunError};

// The venv as each system lays it out, torch's native extension as its wheel names it there.
#[cfg(not(windows))]
const SITE: &str = "lib/python3.12/site-packages";
#[cfg(windows)]
const SITE: &str = r"Lib\site-packages";
#[cfg(not(windows))]
const C_EXT: &str = "torch/_C.cpython-312-x86_64-linux-gnu.so";
#[cfg(windows)]
const C_EXT: &str = r"torch\_C.cp312-win_amd64.pyd";

/// The venv's Python: answers the native load and the import with the given JSON lines.
struct Python {
    native: &'static str,
    import: &'static str,
    calls: Mutex<Vec<Vec<String>>>,
}

impl Python {
    fn new(native: &'static str, import: &'static str) -> Python {
        Python {
            native,
            import,
            calls: Mutex::new(Vec::new()),
        }
    }
    /// Which scripts ran, in order: "native <path>" or "import".
    fn ran(&self) -> Vec<String> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|a| match a[1].as_str() {
                s if s == NATIVE_SCRIPT => format!("native {}", a[2]),
                s if s == check::TORCH_SCRIPT => "import".to_owned(),
                s if s == check::JAX_SCRIPT => "import jax".to_owned(),
                s if s == check::TF_SCRIPT => "import tensorflow".to_owned(),
                s => format!("other {s}"),
            })
            .collect()
    }
}

impl Runner for Python {
    fn run(&self, _: &Path, args: &[&str], _: Duration) -> Result<Output, RunError> {
        self.calls
            .lock()
            .unwrap()
            .push(args.iter().map(|a| (*a).to_owned()).collect());
        let stdout = if args[1] == NATIVE_SCRIPT {
            self.native
        } else {
            self.import
        };
        Ok(Output {
            status: Some(0),
            stdout: format!("{stdout}\n"),
            stderr: String::new(),
        })
    }
}

/// A venv holding torch `version` (CUDA `cuda`), its RECORD listing its files (`missing`:
/// one more, never written), its native extension when `native`, and a cuDNN wheel.
fn venv(version: &str, cuda: Option<&str>, native: bool, missing: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join(SITE);
    let info = site.join(format!("torch-{version}.dist-info"));
    fs_err::create_dir_all(site.join("torch")).unwrap();
    fs_err::create_dir_all(&info).unwrap();
    let cuda = cuda.map_or("None".to_owned(), |c| format!("'{c}'"));
    let version_py = format!(
        "from typing import Optional\n__version__ = '{version}'\ndebug = False\ncuda: Optional[str] = {cuda}\n"
    );
    let mut files = vec![("torch/version.py", version_py.into_bytes())];
    if native {
        files.push((C_EXT, b"\x7fELF".to_vec()));
    }
    let mut record = String::new();
    for (path, bytes) in &files {
        fs_err::write(site.join(path), bytes).unwrap();
        // RECORD names files with `/` on every system.
        let path = path.replace('\\', "/");
        record.push_str(&format!("{path},sha256=x,{}\n", bytes.len()));
    }
    if missing {
        record.push_str("torch/lib/libtorch_cuda.so,sha256=x,1000\n");
    }
    fs_err::write(info.join("RECORD"), record).unwrap();
    fs_err::write(
        info.join("METADATA"),
        format!(
            "Metadata-Version: 2.1\nName: torch\nVersion: {version}\n\nVersion: 0 (the body)\n"
        ),
    )
    .unwrap();
    let cudnn = site.join("nvidia_cudnn_cu13-9.17.0.29.dist-info");
    fs_err::create_dir_all(&cudnn).unwrap();
    fs_err::write(
        cudnn.join("METADATA"),
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.17.0.29\n",
    )
    .unwrap();
    dir
}

fn want() -> TorchExpectation {
    TorchExpectation {
        version: Version::parse("2.14.1").unwrap(),
        variant: "cu130".into(),
        cuda: Version::parse("13.0"),
        index_args: vec![
            "--index-url".into(),
            "https://download.pytorch.org/whl/cu130".into(),
        ],
        requirement: None,
        gpus: vec![("NVIDIA H200".into(), Version::parse("9.0").unwrap())],
        gpus_here: true,
    }
}

fn prove(dir: &Path, python: &Python) -> Result<Vec<String>, PyEnvError> {
    let venv = Venv {
        dir: dir.to_owned(),
    };
    torch(
        python,
        &venv,
        &want(),
        "venv/bin/python",
        &["torch".to_owned()],
    )
}

const LOADED: &str = r#"{"loaded": true}"#;
const IMPORTED: &str = r#"{"version": "2.14.1+cu130", "cuda": "13.0", "available": true, "arch_list": ["sm_90"], "devices": [["NVIDIA H200", [9, 0]]]}"#;

#[test]
fn the_planned_torch_is_proved_by_its_files_and_one_load_of_its_native_libraries() {
    let dir = venv("2.14.1+cu130", Some("13.0"), true, false);
    let python = Python::new(LOADED, IMPORTED);
    let notes = prove(dir.path(), &python).unwrap();
    assert_eq!(
        python.ran(),
        [format!(
            "native {}",
            dir.path().join(SITE).join(C_EXT).display()
        )]
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("torch 2.14.1+cu130 (CUDA 13.0) as planned, by its torch/version.py"),
        "{notes:?}"
    );
    assert!(notes[0].contains("`cudaup verify`"), "{notes:?}");
}

#[test]
fn a_wrong_build_is_refused_from_its_files_without_starting_python() {
    for (version, cuda, said) in [
        (
            "2.14.1+cu130",
            None,
            "a CPU-only torch (2.14.1+cu130) is installed where the CUDA 13.0 build (cu130) was planned",
        ),
        (
            "2.14.1+cu126",
            Some("12.6"),
            "torch 2.14.1+cu126 is built for CUDA 12.6, but CUDA 13.0 (cu130) was planned",
        ),
        (
            "2.13.0+cu130",
            Some("13.0"),
            "torch 2.13.0+cu130 is installed where 2.14.1 was planned",
        ),
    ] {
        let dir = venv(version, cuda, true, false);
        let python = Python::new(LOADED, IMPORTED);
        let Err(PyEnvError::Check(e)) = prove(dir.path(), &python) else {
            panic!("{version} passed");
        };
        assert!(e.starts_with(said), "{e}");
        assert!(
            e.contains("fix: venv/bin/python -m pip install --force-reinstall torch==2.14.1+cu130 --index-url https://download.pytorch.org/whl/cu130"),
            "{e}"
        );
        assert!(python.ran().is_empty(), "{:?}", python.ran());
    }
}

#[test]
fn a_file_its_record_lists_that_is_missing_is_refused_with_the_fix() {
    let dir = venv("2.14.1+cu130", Some("13.0"), true, true);
    let python = Python::new(LOADED, IMPORTED);
    let Err(PyEnvError::Check(e)) = prove(dir.path(), &python) else {
        panic!("passed");
    };
    assert!(
        e.starts_with("torch's RECORD lists files that are not as installed: 1 missing (torch/lib/libtorch_cuda.so)"),
        "{e}"
    );
    assert!(
        e.contains("; fix: venv/bin/python -m pip install --force-reinstall"),
        "{e}"
    );
    assert!(python.ran().is_empty(), "{:?}", python.ran());
}

/// The shortcut never fails an install on its own: a native extension that does not load (or
/// none at all) hands over to the import, whose verdict stands either way.
#[test]
fn where_the_load_cannot_decide_the_import_does() {
    let failed_load = r#"{"error": "libcudnn.so.9: cannot open shared object file"}"#;
    let failed_import =
        r#"{"error": "ImportError: libcudnn.so.9: cannot open shared object file"}"#;
    for (native, load, import, passes) in [
        (true, failed_load, IMPORTED, true),
        (true, failed_load, failed_import, false),
        (true, "not json", IMPORTED, true),
        (false, LOADED, IMPORTED, true),
        (false, LOADED, failed_import, false),
    ] {
        let dir = venv("2.14.1+cu130", Some("13.0"), native, false);
        let python = Python::new(load, import);
        let got = prove(dir.path(), &python);
        let ran = python.ran();
        assert_eq!(ran.last().map(String::as_str), Some("import"), "{ran:?}");
        assert_eq!(ran.len(), if native { 2 } else { 1 }, "{ran:?}");
        match got {
            Ok(notes) => {
                assert!(passes, "{load} / {import}: passed");
                assert_eq!(notes, ["torch 2.14.1+cu130 sees 1 GPU(s): NVIDIA H200"]);
            }
            Err(PyEnvError::Check(e)) => {
                assert!(!passes, "{load} / {import}: {e}");
                assert!(
                    e.starts_with("`import torch` failed in the venv: ImportError: libcudnn.so.9"),
                    "{e}"
                );
            }
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn installed_versions_come_from_each_metadata_header() {
    let dir = venv("2.14.1+cu130", Some("13.0"), false, false);
    let got = installed_versions(dir.path());
    assert_eq!(
        got.into_iter().collect::<Vec<_>>(),
        [
            ("nvidia-cudnn-cu13".to_owned(), "9.17.0.29".to_owned()),
            ("torch".to_owned(), "2.14.1+cu130".to_owned()),
        ]
    );
    assert!(installed_versions(&dir.path().join("no-venv")).is_empty());
}

/// A venv holding JAX `version` with the CUDA 13 plugin at `plugin` (its RECORD listing its
/// files), and the plugin's PJRT library when `library`.
fn jax_venv(version: &str, plugin: &str, library: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join(SITE);
    for (dist, v, files) in [
        (
            "jax",
            version,
            vec![("jax/version.py", b"_version = 'x'\n".to_vec())],
        ),
        (
            "jax_cuda13_plugin",
            plugin,
            vec![("jax_cuda13_plugin/__init__.py", Vec::new())],
        ),
    ] {
        let info = site.join(format!("{dist}-{v}.dist-info"));
        fs_err::create_dir_all(&info).unwrap();
        let mut record = String::new();
        for (path, bytes) in files {
            let at = site.join(path);
            fs_err::create_dir_all(at.parent().unwrap()).unwrap();
            fs_err::write(&at, &bytes).unwrap();
            record.push_str(&format!("{path},sha256=x,{}\n", bytes.len()));
        }
        fs_err::write(info.join("RECORD"), record).unwrap();
        let name = dist.replace('_', "-");
        fs_err::write(
            info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {v}\n"),
        )
        .unwrap();
    }
    if library {
        let lib = site.join("jax_plugins/xla_cuda13/xla_cuda_plugin.so");
        fs_err::create_dir_all(lib.parent().unwrap()).unwrap();
        fs_err::write(lib, b"\x7fELF").unwrap();
    }
    dir
}

fn prove_jax(dir: &Path, python: &Python, gpus_here: bool) -> Result<Vec<String>, PyEnvError> {
    let venv = Venv {
        dir: dir.to_owned(),
    };
    let version = Version::parse("0.12.0.1").unwrap();
    let want = JaxExpectation {
        version: &version,
        major: 13,
        gpus_here,
        index_args: &[],
    };
    jax(
        python,
        &venv,
        &want,
        &["jax".to_owned(), "jax-cuda13-plugin".to_owned()],
    )
}

const JAX_IMPORTED: &str = r#"{"version": "0.12.0.1", "jaxlib": "0.12.0.1", "plugins": {"jax-cuda13-plugin": "0.12.0.1"}, "gpus": 1}"#;

// JAX has no CUDA wheels for Windows: there the plugin library is not looked for and the
// import decides (the fallback the next test asserts).
#[cfg(not(windows))]
#[test]
fn the_planned_jax_is_proved_by_its_metadata_and_one_load_of_its_cuda_plugin() {
    let dir = jax_venv("0.12.0.1", "0.12.0.1", true);
    let python = Python::new(LOADED, JAX_IMPORTED);
    let notes = prove_jax(dir.path(), &python, true).unwrap();
    assert_eq!(
        python.ran(),
        [format!(
            "native {}",
            dir.path()
                .join(SITE)
                .join("jax_plugins/xla_cuda13/xla_cuda_plugin.so")
                .display()
        )]
    );
    assert_eq!(
        notes,
        ["JAX 0.12.0.1 with jax-cuda13-plugin as planned, by their metadata; their files as their RECORDs list; its CUDA plugin loads here (seeing the GPUs and computing on them: `cudaup verify`)"]
    );
    // A file its RECORD lists gone: refused from the files, still without importing.
    fs_err::remove_file(dir.path().join(SITE).join("jax/version.py")).unwrap();
    let python = Python::new(LOADED, JAX_IMPORTED);
    let err = prove_jax(dir.path(), &python, true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "jax's RECORD lists files that are not as installed: 1 missing (jax/version.py)"
        ),
        "{err}"
    );
    assert!(python.ran().is_empty());
}

#[test]
fn without_the_plugin_library_or_when_it_does_not_load_the_import_decides() {
    for (library, native) in [
        (false, LOADED),
        (true, r#"{"error": "libcuda.so.1: cannot open"}"#),
    ] {
        let dir = jax_venv("0.12.0.1", "0.12.0.1", library);
        let python = Python::new(native, JAX_IMPORTED);
        prove_jax(dir.path(), &python, true).unwrap();
        assert_eq!(python.ran().last().map(String::as_str), Some("import jax"));
    }
}

#[test]
fn a_plugin_of_another_release_is_refused_from_its_metadata_without_starting_python() {
    let dir = jax_venv("0.12.0.1", "0.11.0", true);
    let python = Python::new(LOADED, JAX_IMPORTED);
    let err = prove_jax(dir.path(), &python, true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("jax-cuda13-plugin 0.11.0 is installed where 0.12.0.1 was planned"),
        "{err}"
    );
    assert!(python.ran().is_empty());
}

/// A venv holding TensorFlow `version` built for CUDA `cuda` (in build_info.py as its wheel
/// writes it), its RECORD listing its files, and its framework library when `library`.
fn tf_venv(version: &str, cuda: &str, library: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join(SITE);
    let info = site.join(format!("tensorflow-{version}.dist-info"));
    fs_err::create_dir_all(site.join("tensorflow/python/platform")).unwrap();
    fs_err::create_dir_all(&info).unwrap();
    let build_info = format!(
        "\"\"\"Auto-generated module providing information about the build.\"\"\"\nimport collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', 'clang 18'), ('cuda_compute_capabilities', ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']), ('cuda_version', '{cuda}'), ('cudnn_version', '9'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', False)])\n"
    );
    let mut files = vec![(
        "tensorflow/python/platform/build_info.py",
        build_info.into_bytes(),
    )];
    if library {
        files.push((
            "tensorflow/libtensorflow_framework.so.2",
            b"\x7fELF".to_vec(),
        ));
    }
    let mut record = String::new();
    for (path, bytes) in &files {
        fs_err::write(site.join(path), bytes).unwrap();
        record.push_str(&format!("{path},sha256=x,{}\n", bytes.len()));
    }
    fs_err::write(info.join("RECORD"), record).unwrap();
    fs_err::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: tensorflow\nVersion: {version}\n"),
    )
    .unwrap();
    dir
}

fn prove_tf(dir: &Path, python: &Python) -> Result<Vec<String>, PyEnvError> {
    let venv = Venv {
        dir: dir.to_owned(),
    };
    tensorflow(
        python,
        &venv,
        &Version::parse("2.20.0").unwrap(),
        &["tensorflow".to_owned()],
    )
}

const TF_IMPORTED: &str = r#"{"version": "2.20.0", "cuda": "12.5.1", "gpus": 0}"#;

// The library is a Linux one; on Windows the import decides.
#[cfg(not(windows))]
#[test]
fn the_planned_tensorflow_is_proved_by_its_metadata_build_info_and_one_load() {
    let dir = tf_venv("2.20.0", "12.5.1", true);
    let python = Python::new(LOADED, TF_IMPORTED);
    let notes = prove_tf(dir.path(), &python).unwrap();
    assert_eq!(
        python.ran(),
        [format!(
            "native {}",
            dir.path()
                .join(SITE)
                .join("tensorflow/libtensorflow_framework.so.2")
                .display()
        )]
    );
    assert_eq!(
        notes,
        ["TensorFlow 2.20.0 (built for CUDA 12.5.1) as planned, by its metadata and build_info.py; its files as its RECORD lists; its framework library loads here (importing it and seeing the GPUs: `cudaup verify`)"]
    );
}

#[test]
fn another_tensorflow_is_refused_from_its_metadata_and_without_the_library_the_import_decides() {
    let dir = tf_venv("2.19.1", "12.5.1", true);
    let python = Python::new(LOADED, TF_IMPORTED);
    let err = prove_tf(dir.path(), &python).unwrap_err().to_string();
    assert!(
        err.contains("TensorFlow 2.19.1 is installed where 2.20.0 was planned"),
        "{err}"
    );
    assert!(python.ran().is_empty());

    let dir = tf_venv("2.20.0", "12.5.1", false);
    let python = Python::new(LOADED, TF_IMPORTED);
    prove_tf(dir.path(), &python).unwrap();
    assert_eq!(python.ran(), ["import tensorflow"]);
}
