//! Small but valid Python wheels built at test time, and a static PEP 503 index of them, so
//! installer tests can `pip install` real wheels from a directory or the loopback server.
//!
//! Index layout ([`write_index`]): each wheel sits next to its project page,
//! `index_root/<normalized-name>/<wheel>`, linked as `<a href="<wheel, + as %2B>#sha256=<hex>">`;
//! `index_root/index.html` lists the projects. So `write_index(&mirror.join("whl/cu130"), …)`
//! serves pip's `…/whl/cu130/torch/` and the wheels under it, over HTTP or as `file://`.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file inside a wheel.
pub struct WheelFile {
    /// Path inside the wheel, `/`-separated (`torch/__init__.py`).
    pub path: String,
    pub contents: Vec<u8>,
}

impl WheelFile {
    /// A text file.
    pub fn new(path: &str, contents: impl Into<Vec<u8>>) -> Self {
        Self {
            path: path.to_owned(),
            contents: contents.into(),
        }
    }
}

/// PEP 503 normalization: lowercase, runs of `-`, `_`, `.` become one `-`.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Builds `{name}-{version}-py3-none-any.whl` in `dir` (the name normalized with `_`, the version
/// as given, local label included: `torch-2.14.1+cu130-py3-none-any.whl`) with `files` plus a
/// `{name}-{version}.dist-info/` holding METADATA (Name, Version, one Requires-Dist per entry of
/// `requires`), WHEEL (purelib, `py3-none-any`) and RECORD (sha256 and size of every file).
/// Deterministic: the same inputs give the same bytes. Returns the wheel's path.
pub fn build_wheel(
    dir: &Path,
    name: &str,
    version: &str,
    requires: &[&str],
    files: &[WheelFile],
) -> PathBuf {
    build(dir, name, version, requires, &[], files)
}

fn build(
    dir: &Path,
    name: &str,
    version: &str,
    requires: &[&str],
    extras: &[&str],
    files: &[WheelFile],
) -> PathBuf {
    let dist = normalize(name).replace('-', "_");
    let info = format!("{dist}-{version}.dist-info");
    let mut metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
    for r in requires {
        metadata += &format!("Requires-Dist: {r}\n");
    }
    for e in extras {
        metadata += &format!("Provides-Extra: {e}\n");
    }
    let wheel =
        "Wheel-Version: 1.0\nGenerator: cudaup-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
    let mut all: Vec<(String, &[u8])> = files
        .iter()
        .map(|f| (f.path.clone(), &f.contents[..]))
        .collect();
    all.push((format!("{info}/METADATA"), metadata.as_bytes()));
    all.push((format!("{info}/WHEEL"), wheel.as_bytes()));
    let mut record = String::new();
    for (path, contents) in &all {
        let digest = b64_urlsafe_nopad(&Sha256::digest(contents));
        record += &format!("{path},sha256={digest},{}\n", contents.len());
    }
    record += &format!("{info}/RECORD,,\n");
    all.push((format!("{info}/RECORD"), record.as_bytes()));

    fs_err::create_dir_all(dir).unwrap();
    let out = dir.join(format!("{dist}-{version}-py3-none-any.whl"));
    let mut zip = zip::ZipWriter::new(fs_err::File::create(&out).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    for (path, contents) in &all {
        zip.start_file(path.as_str(), options).unwrap();
        zip.write_all(contents).unwrap();
    }
    zip.finish().unwrap();
    out
}

/// Base64 with the URL-safe alphabet and no padding, as RECORD wants it.
fn b64_urlsafe_nopad(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | ((b as u32) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ABC[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// A Python list literal of strings: `['sm_80', 'sm_90']`.
fn py_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

fn py_opt(value: Option<&str>) -> String {
    value.map_or("None".to_owned(), |v| format!("'{v}'"))
}

/// A fake `torch` reporting the given build, requiring `filelock` (a small real PyPI package, as
/// the real torch does, so installing it exercises the real registry). See [`fake_torch_with`].
pub fn fake_torch(dir: &Path, version: &str, cuda: Option<&str>, arch_list: &[&str]) -> PathBuf {
    fake_torch_with(dir, version, cuda, arch_list, &["filelock"])
}

/// [`fake_torch`] with its Requires-Dist given (`&[]` installs offline with `--no-index`).
///
/// `torch/version.py` is in PyTorch's format (`__version__ = '2.14.1+cu130'`,
/// `cuda: Optional[str] = '13.0'` or `None`); `torch/__init__.py` sets `__version__` and imports
/// `torch.version` and `torch.cuda`. `torch.cuda` has `is_available()` (a CUDA build, and env
/// `FAKE_TORCH_CUDA_AVAILABLE` unset or `1`), `get_arch_list()` (`arch_list`; `[]` when not
/// available, like the real one), `device_count()` (env `FAKE_TORCH_DEVICE_COUNT`, default 1; 0
/// when not available), `get_device_capability(i=0)` (env `FAKE_TORCH_CAPABILITY`, default
/// `9.0` → `(9, 0)`) and `get_device_name(i=0)` (`Fake GPU`); the last two raise RuntimeError
/// when not available. No tensors, no `matmul`.
pub fn fake_torch_with(
    dir: &Path,
    version: &str,
    cuda: Option<&str>,
    arch_list: &[&str],
    requires: &[&str],
) -> PathBuf {
    let init = format!(
        "__version__ = '{version}'\n\nimport torch.version as version\nimport torch.cuda as cuda\n"
    );
    let version_py = format!(
        "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n\
         __version__ = '{version}'\ndebug = False\ncuda: Optional[str] = {}\n\
         git_version = '0000000000000000000000000000000000000000'\nhip: Optional[str] = None\n",
        py_opt(cuda)
    );
    let cuda_py = format!(
        r#""""A fake torch.cuda: reports a build and a device, runs nothing."""
import os

from torch.version import cuda as _cuda

_ARCH_LIST = {arch}


def is_available():
    return _cuda is not None and os.environ.get('FAKE_TORCH_CUDA_AVAILABLE', '1') == '1'


def get_arch_list():
    return list(_ARCH_LIST) if is_available() else []


def device_count():
    return int(os.environ.get('FAKE_TORCH_DEVICE_COUNT', '1')) if is_available() else 0


def _need_device():
    if not is_available():
        raise RuntimeError('Torch not compiled with CUDA enabled' if _cuda is None else 'No CUDA GPUs are available')


def get_device_capability(i=0):
    _need_device()
    major, minor = os.environ.get('FAKE_TORCH_CAPABILITY', '9.0').split('.')
    return (int(major), int(minor))


def get_device_name(i=0):
    _need_device()
    return 'Fake GPU'
"#,
        arch = py_list(arch_list)
    );
    let files = [
        WheelFile::new("torch/__init__.py", init),
        WheelFile::new("torch/version.py", version_py),
        WheelFile::new("torch/cuda/__init__.py", cuda_py),
    ];
    build_wheel(dir, "torch", version, requires, &files)
}

/// A tiny `torchvision` / `torchaudio` (any `name`): a module with `__version__`, requiring
/// `torch==<torch_version>`.
pub fn fake_companion(dir: &Path, name: &str, version: &str, torch_version: &str) -> PathBuf {
    let module = normalize(name).replace('-', "_");
    let files = [WheelFile::new(
        &format!("{module}/__init__.py"),
        format!("__version__ = '{version}'\n"),
    )];
    build_wheel(
        dir,
        name,
        version,
        &[&format!("torch=={torch_version}")],
        &files,
    )
}

/// A fake `tensorflow`: `tensorflow/__init__.py` (`__version__`) and
/// `tensorflow/python/platform/build_info.py` in TF's format (`build_info = {..., 'cuda_version':
/// '12.5.1', 'cudnn_version': '9', 'is_cuda_build': True}`; `{'is_cuda_build': False, …}` for
/// `None`). METADATA declares an `and-cuda` extra with nothing behind it, so
/// `tensorflow[and-cuda]` resolves offline. No requirements.
pub fn fake_tensorflow(dir: &Path, version: &str, cuda: Option<&str>) -> PathBuf {
    fake_tensorflow_requiring(dir, version, cuda, &[])
}

/// [`fake_tensorflow`] whose METADATA also has `requires` (e.g. the `and-cuda` extra's
/// `nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == "and-cuda"`).
pub fn fake_tensorflow_requiring(
    dir: &Path,
    version: &str,
    cuda: Option<&str>,
    requires: &[&str],
) -> PathBuf {
    let build_info = match cuda {
        Some(v) => format!(
            "build_info = {{'cpu_compiler': '/usr/lib/llvm-18/bin/clang', \
             'cuda_compute_capabilities': ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90'], \
             'cuda_version': '{v}', 'cudnn_version': '9', 'is_cuda_build': True, \
             'is_rocm_build': False, 'is_tensorrt_build': False}}\n"
        ),
        None => {
            "build_info = {'cpu_compiler': '/usr/lib/llvm-18/bin/clang', 'is_cuda_build': False, \
                 'is_rocm_build': False, 'is_tensorrt_build': False}\n"
                .to_owned()
        }
    };
    let files = [
        WheelFile::new(
            "tensorflow/__init__.py",
            format!("__version__ = '{version}'\n"),
        ),
        WheelFile::new("tensorflow/python/__init__.py", ""),
        WheelFile::new("tensorflow/python/platform/__init__.py", ""),
        WheelFile::new("tensorflow/python/platform/build_info.py", build_info),
    ];
    build(dir, "tensorflow", version, requires, &["and-cuda"], &files)
}

/// Writes a PEP 503 static index of `wheels` under `index_root` (pass it, or its URL, as
/// `--index-url`): copies each wheel to `index_root/<normalized-name>/`, writes that directory's
/// `index.html` linking every wheel there (`href="<file, + as %2B>#sha256=<hex>"`, relative), and
/// `index_root/index.html` listing every project. Additive: calling it again for the same root
/// keeps the wheels already there.
pub fn write_index(index_root: &Path, wheels: &[PathBuf]) {
    write_index_with(index_root, wheels, None);
}

/// The one PEP 503 index writer: [`write_index`] when `packages` is `None`; otherwise the wheels
/// are hard-linked (symlinked across file systems) into `packages` and each project page
/// links to them there (`../../packages/<wheel>` when `packages` is `index_root/../packages`,
/// as `scripts/make-wheel-mirror.py` lays out a mirror for users).
pub fn write_index_with(index_root: &Path, wheels: &[PathBuf], packages: Option<&Path>) {
    fs_err::create_dir_all(index_root).unwrap();
    let mut by_project: std::collections::BTreeMap<String, Vec<(String, PathBuf)>> =
        Default::default();
    for wheel in wheels {
        let file = wheel.file_name().unwrap().to_str().unwrap().to_owned();
        let project = normalize(file.split('-').next().unwrap());
        let dir = index_root.join(&project);
        fs_err::create_dir_all(&dir).unwrap();
        let at = match packages {
            None => dir.join(&file),
            Some(p) => p.join(&file),
        };
        if wheel != &at && !at.exists() {
            fs_err::create_dir_all(at.parent().unwrap()).unwrap();
            if packages.is_none() {
                fs_err::copy(wheel, &at).unwrap();
            } else if std::fs::hard_link(wheel, &at).is_err() {
                // Another file system (a tmpfs /tmp): a link, never a copy of gigabytes.
                std::os::unix::fs::symlink(wheel, &at).unwrap();
            }
        }
        by_project.entry(project).or_default().push((file, at));
    }
    // Wheels already beside their project pages (an index written before) stay listed.
    if packages.is_none() {
        for entry in fs_err::read_dir(index_root).unwrap() {
            let dir = entry.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
            let listed = by_project.entry(name).or_default();
            for e in fs_err::read_dir(&dir).unwrap() {
                let f = e.unwrap().file_name().into_string().unwrap();
                if f.ends_with(".whl") && !listed.iter().any(|(l, _)| *l == f) {
                    listed.push((f.clone(), dir.join(&f)));
                }
            }
        }
    }
    let mut projects = Vec::new();
    for (name, mut files) in by_project {
        if files.is_empty() {
            continue;
        }
        files.sort();
        let mut links = String::new();
        for (f, at) in &files {
            let sha = hex::encode(Sha256::digest(fs_err::read(at).unwrap()));
            let href = match packages {
                None => f.replace('+', "%2B"),
                Some(p) => format!(
                    "{}/{}",
                    relative(&index_root.join(&name), p),
                    f.replace('+', "%2B")
                ),
            };
            links += &format!("<a href=\"{href}#sha256={sha}\">{f}</a><br/>\n");
        }
        fs_err::write(
            index_root.join(&name).join("index.html"),
            page(&format!("Links for {name}"), &links),
        )
        .unwrap();
        projects.push(name);
    }
    let links: String = projects
        .iter()
        .map(|p| format!("<a href=\"{p}/\">{p}</a><br/>\n"))
        .collect();
    fs_err::write(index_root.join("index.html"), page("Simple index", &links)).unwrap();
}

/// `to` relative to `from` (both absolute): `../../packages` from `simple/torch` to `packages`.
fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html>\n<head><meta name=\"pypi:repository-version\" content=\"1.0\">\
         <title>{title}</title></head>\n<body>\n<h1>{title}</h1>\n{body}</body>\n</html>\n"
    )
}
