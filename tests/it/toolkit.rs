//! The toolkit a developer builds against (issue 13): component sets from both routes, the
//! layout (dev links, stubs, nvvm/, extras/CUPTI, targets/, version.json), and — with NVIDIA's
//! real CUDA 13 wheels from PyPI, downloaded once into a cache under target/ (keyed by sha256)
//! and served by a loopback index — an install of the `standard` set that `verify` proves by
//! compiling and linking every library, building a `find_package(CUDAToolkit)` project and
//! plain `-lcudart`/`-lnvrtc`/`-lcudnn`/`-lcuda` links. Nothing here runs on a GPU.
//!
//! Tests that reach PyPI are named `needs_network_…`; where PyPI cannot be reached they say so
//! and are counted in `$CARGO_TARGET_TMPDIR/skipped-tests.txt` (`.ci/run` prints the list).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::Digest;

use crate::common::server::Server;
use crate::common::wheels::{build_wheel, write_index, WheelFile};
use crate::common::*;

/// Records a skipped test where `.ci/run` counts and prints it, and says so on stderr.
fn skipped(test: &str, why: &str) {
    let line = format!("{test}: {why}");
    #[allow(clippy::print_stderr)] // a skip must be seen, and counted (below)
    {
        eprintln!("SKIPPED {line}");
    }
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    let mut f = fs_err::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

fn receipt(prefix: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs_err::read(prefix.join(".cudaup-receipt.json")).unwrap()).unwrap()
}

fn component_names(prefix: &Path) -> Vec<String> {
    receipt(prefix)["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

fn link(p: &Path) -> String {
    fs_err::read_link(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .display()
        .to_string()
}

/// Every `lib*.so.N…` in `dir` has its unversioned `lib*.so`.
fn assert_dev_links(dir: &Path) {
    let names: BTreeSet<String> = fs_err::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for n in &names {
        if let Some(at) = n.find(".so.") {
            let stem = &n[..at + 3];
            assert!(names.contains(stem), "{}: no {stem} for {n}", dir.display());
        }
    }
}

/// The redist route: every set of the catalog from NVIDIA's layout (a synthetic mirror), for
/// CUDA 13, 12 and 11.
#[test]
fn component_sets_from_the_redist_route() {
    let m = synthetic_mirror(&[]);
    let mirror = m.path().display().to_string();
    let catalog = cudaup::catalog::Catalog::embedded();
    let sets = &catalog.components;
    let ctx = TestContext::new();
    let install = |prefix: &str, extra: &[&str]| {
        let mut args = vec![
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--cudnn",
            "9.17.0",
            "--mirror",
            &mirror,
            "--prefix",
            prefix,
            "--yes",
            "--no-modify-path",
        ];
        args.extend_from_slice(extra);
        ctx.cudaup(&args)
    };
    for set in ["minimal", "standard", "complete"] {
        let prefix = ctx.dir().join(set);
        let run = install(&prefix.display().to_string(), &["--components", set]);
        assert_eq!(run.code, 0, "{set}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains(&format!("components: {set} (")),
            "{}",
            run.stdout
        );
        let names = component_names(&prefix);
        assert_eq!(names.len(), sets.members(set).len() + 1, "{set}: {names:?}");
        assert!(names.contains(&"cudnn".to_owned()));
        // version.json names each one with its version, in NVIDIA's format.
        let vj: serde_json::Value =
            serde_json::from_str(&fs_err::read_to_string(prefix.join("version.json")).unwrap())
                .unwrap();
        assert_eq!(vj["cuda"]["version"], "13.0.2");
        assert_eq!(vj["libcublas"]["version"], "13.1.0.3");
        assert_eq!(vj["cudnn"]["version"], "9.17.0.29");
        assert_eq!(vj.as_object().unwrap().len(), names.len() + 1, "{vj:#}");
        assert_dev_links(&prefix.join("lib64"));
        // NVIDIA's own stub, from cuda_cudart, is kept.
        assert!(
            fs_err::read_to_string(prefix.join("lib64/stubs/libcuda.so"))
                .unwrap()
                .contains("synthetic libcuda stub")
        );
    }
    let standard = ctx.dir().join("standard");
    for f in [
        "lib64/libcufft.so",
        "lib64/libnvJitLink.so",
        "include/nvml.h",
        "bin/cuobjdump",
        "bin/nvdisasm",
        "bin/cu++filt",
        "bin/compute-sanitizer",
        "lib64/libculibos.a",
        "lib64/libnvptxcompiler_static.a",
    ] {
        assert!(standard.join(f).exists(), "{f}");
    }
    assert!(
        fs_err::read_to_string(standard.join("lib64/stubs/libnvidia-ml.so"))
            .unwrap()
            .contains("synthetic libnvidia-ml stub")
    );
    assert_eq!(link(&standard.join("extras/CUPTI/lib64")), "../../lib64");
    assert!(!standard.join("bin/cuda-gdb").exists());
    let complete = ctx.dir().join("complete");
    assert!(complete.join("bin/cuda-gdb").is_file());
    assert!(complete.join("nsight-compute/ncu").is_file());
    assert_eq!(link(&complete.join("bin/ncu")), "../nsight-compute/ncu");
    assert_eq!(
        link(&complete.join("bin/nsys")),
        "../nsight-systems/target-linux-x64/nsys"
    );
    let minimal = ctx.dir().join("minimal");
    assert!(!minimal.join("lib64/libcufft.so").exists());
    assert!(
        !minimal.join("extras").exists(),
        "no CUPTI, no extras/CUPTI"
    );

    // A list: standard without NPP, with cuFile.
    let prefix = ctx.dir().join("list");
    let run = install(
        &prefix.display().to_string(),
        &["--components", "standard,-npp,cufile", "--no-cudnn"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = component_names(&prefix);
    assert!(
        names.contains(&"libcufile".to_owned()) && !names.contains(&"libnpp".to_owned()),
        "{names:?}"
    );
    assert!(!names.contains(&"cudnn".to_owned()));
    // The config file takes the same key.
    let cfg = ctx.dir().join("cudaup.toml");
    fs_err::write(&cfg, "version = 1\nprofile = \"cuda-dev\"\n[install]\ncomponents = \"minimal,cufft\"\nno_cudnn = true\n").unwrap();
    let prefix = ctx.dir().join("config");
    let run = install(
        &prefix.display().to_string(),
        &["--config", &cfg.display().to_string()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        component_names(&prefix).len(),
        sets.members("minimal").len() + 1
    );
    // Bad names are usage errors that name the choices.
    let run = install(
        &ctx.dir().join("bad").display().to_string(),
        &["--components", "standard,cuda-gdb"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("unknown set or component `cuda-gdb`")
            && run.stderr.contains("sets: minimal, standard, complete"),
        "{}",
        run.stderr
    );
    assert!(!ctx.dir().join("bad").exists());
}

/// CUDA 12 and 11 through the same sets: what those releases do not have as components of
/// their own is left out, with a note where it is not part of another one.
#[test]
fn older_releases_get_what_they_have() {
    for (cuda, absent, notes) in [
        (
            "12.8.1",
            &["cuda_crt", "libnvvm", "libnvptxcompiler", "cuda_culibos"][..],
            &["culibos (cuda_culibos): not in CUDA 12.8.1's redistrib JSON"][..],
        ),
        (
            "11.8.0",
            &["libnvjitlink", "cuda_profiler_api", "cuda_crt"][..],
            &[
                "culibos (cuda_culibos): not in CUDA 11.8.0's redistrib JSON",
                "profiler (cuda_profiler_api): not in CUDA 11.8.0's redistrib JSON",
            ][..],
        ),
    ] {
        let m = synthetic_mirror(&["--cuda", cuda]);
        let ctx = TestContext::new();
        let prefix = ctx.dir().join("cuda");
        let major = cuda.split('.').next().unwrap();
        let series = &cuda[..cuda.rfind('.').unwrap()];
        let run = ctx.install(&[
            "--profile",
            "cuda-dev",
            "--cuda",
            cuda,
            "--no-cudnn",
            "--mirror",
            &m.path().display().to_string(),
            "--prefix",
            &prefix.display().to_string(),
            "--yes",
            "--no-modify-path",
            "--json",
        ]);
        assert_eq!(run.code, 0, "{cuda}: {}\n{}", run.stdout, run.stderr);
        let names = component_names(&prefix);
        for a in absent {
            assert!(
                !names.contains(&(*a).to_owned()),
                "{cuda}: {a} in {names:?}"
            );
        }
        // What the release lacks is in the outcome, once each; crt is inside cuda_nvcc before
        // 13, so there is no note for it.
        let toolkit = run.installed().toolkit.expect("a toolkit was installed");
        assert_eq!(toolkit.cuda, cuda);
        assert_eq!(toolkit.left_out, notes, "{cuda}");
        assert!(names.contains(&"libcufft".to_owned()) && names.contains(&"libcublas".to_owned()));
        let vj = fs_err::read_to_string(prefix.join("version.json")).unwrap();
        assert!(vj.contains(&format!("\"version\" : \"{cuda}\"")), "{vj}");
        assert!(prefix.join(format!("lib64/libcudart.so.{major}")).exists());
        // The wheel route serves CUDA 13 only.
        let run = ctx.install(&[
            "--profile",
            "cuda-dev",
            "--cuda",
            series,
            "--source",
            "wheels",
            "--index-url",
            &m.path().display().to_string(),
            "--prefix",
            &ctx.dir().join("w").display().to_string(),
            "--yes",
        ]);
        assert_eq!(run.code, 5, "{}", run.stderr);
        assert!(run.stderr.contains("only from CUDA 13"), "{}", run.stderr);
    }
}

/// A release that lacks a component of the `minimal` set cannot be installed: an error, not a
/// note, and nothing lands.
#[test]
fn a_missing_minimal_component_is_an_error() {
    let m = synthetic_mirror(&[]);
    let json = m.path().join("compute/cuda/redist/redistrib_13.0.2.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&fs_err::read(&json).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("libcublas");
    fs_err::write(&json, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    let ctx = TestContext::new();
    let prefix = ctx.dir().join("cuda");
    let run = ctx.cudaup(&[
        "install",
        "--system",
        no_gpu_system(),
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--mirror",
        &m.path().display().to_string(),
        "--prefix",
        &prefix.display().to_string(),
        "--yes",
    ]);
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stderr.contains("has no component `libcublas`"),
        "{}",
        run.stderr
    );
    assert!(!prefix.exists());
}

/// Synthetic wheels with NVIDIA's names, versions and layout (`nvidia/cu13/…`), for the wheel
/// route without a network: the `minimal` set of CUDA 13.0.2, as its metapackage pins it.
pub(crate) fn minimal_wheels(dir: &Path) -> Vec<PathBuf> {
    let catalog = cudaup::catalog::Catalog::embedded();
    let pins = catalog
        .components
        .wheels_for(&cudaup::model::version::Version::parse("13.0.2").unwrap())
        .unwrap();
    let cuda_h = "CUresult CUDAAPI cuInit(unsigned int Flags);\n#define cuMemAlloc cuMemAlloc_v2\nCUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);\n";
    let files = |pkg: &str| -> Vec<WheelFile> {
        let f = |p: &str, c: &str| WheelFile::new(&format!("nvidia/cu13/{p}"), c.to_owned());
        match pkg {
            "nvidia-cuda-nvcc" => vec![
                f(
                    "bin/nvcc",
                    "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n",
                ),
                f("bin/ptxas", ""),
            ],
            "nvidia-cuda-crt" => vec![f("include/crt/host_config.h", "")],
            "nvidia-nvvm" => vec![
                f("nvvm/bin/cicc", ""),
                f("lib/libnvvm.so.4", "\x7fELF nvvm"),
                f("include/nvvm.h", ""),
            ],
            "nvidia-cuda-runtime" => vec![
                f("include/cuda_runtime.h", ""),
                f("include/cuda.h", cuda_h),
                f("lib/libcudart.so.13", "\x7fELF cudart"),
                f("lib/libcudart_static.a", ""),
            ],
            "nvidia-cuda-cccl" => vec![f("include/cccl/cub/cub.cuh", "")],
            "nvidia-cuda-nvrtc" => vec![
                f("include/nvrtc.h", ""),
                f("lib/libnvrtc.so.13", "\x7fELF nvrtc"),
                f("lib/libnvrtc-builtins.so.13.0", "\x7fELF b"),
            ],
            "nvidia-cublas" => vec![
                f("include/cublas_v2.h", ""),
                f("lib/libcublas.so.13", "\x7fELF"),
                f("lib/libcublasLt.so.13", "\x7fELF"),
            ],
            other => panic!("{other}"),
        }
    };
    let mut out = Vec::new();
    for name in catalog.components.members("minimal") {
        let pkg = catalog
            .components
            .component(name)
            .unwrap()
            .wheel
            .clone()
            .unwrap();
        let version = &pins.packages[&pkg].version;
        let mut w = build_wheel(dir, &pkg, version, &[], &files(&pkg));
        // NVIDIA's wheels are per platform; the index must offer this machine's.
        let tagged = dir.join(w.file_name().unwrap().to_str().unwrap().replace(
            "py3-none-any",
            &format!("py3-none-manylinux2014_{}", std::env::consts::ARCH),
        ));
        fs_err::rename(&w, &tagged).unwrap();
        w = tagged;
        out.push(w);
    }
    out
}

/// The wheel route offline: the pinned versions are asked for, the wheels' versioned-only
/// libraries get their dev links, libcuda's stub is made from the installed cuda.h, libnvvm
/// appears where NVIDIA's toolkit has it.
#[test]
fn the_wheel_route_finishes_the_layout() {
    let wheels = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    write_index(index.path(), &minimal_wheels(wheels.path()));
    let ctx = TestContext::new();
    let prefix = ctx.dir().join("cuda");
    let run = ctx.cudaup(&[
        "install",
        "--system",
        no_gpu_system(),
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--source",
        "wheels",
        "--index-url",
        &index.path().display().to_string(),
        "--components",
        "minimal",
        "--no-cudnn",
        "--prefix",
        &prefix.display().to_string(),
        "--yes",
        "--no-modify-path",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("nvidia-cublas            13.1.0.3"),
        "{}",
        run.stdout
    );
    assert_eq!(link(&prefix.join("lib64/libcudart.so")), "libcudart.so.13");
    assert_eq!(
        link(&prefix.join("lib64/libnvrtc-builtins.so")),
        "libnvrtc-builtins.so.13.0"
    );
    assert_eq!(link(&prefix.join("nvvm/lib64/libnvvm.so")), "libnvvm.so.4");
    assert_eq!(
        link(&prefix.join("nvvm/lib64/libnvvm.so.4")),
        "../../lib64/libnvvm.so.4"
    );
    assert_dev_links(&prefix.join("lib64"));
    let stub = fs_err::read(prefix.join("lib64/stubs/libcuda.so")).unwrap();
    assert_eq!(&stub[..4], b"\x7fELF");
    assert!(stub.windows(13).any(|w| w == b"cuMemAlloc_v2"));
    assert!(
        !prefix.join("lib64/stubs/libnvidia-ml.so").exists(),
        "no nvml.h, no NVML stub"
    );
    let vj: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(prefix.join("version.json")).unwrap())
            .unwrap();
    assert_eq!(vj["libcublas"]["version"], "13.1.0.3");
    assert_eq!(vj["cuda_nvcc"]["name"], "CUDA NVCC");
    // Everything made is in the receipt, so uninstall removes it and doctor checks it.
    let r = receipt(&prefix);
    let files: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    for f in [
        "lib64/libcudart.so",
        "lib64/stubs/libcuda.so",
        "version.json",
        "nvvm/lib64/libnvvm.so",
    ] {
        assert!(files.contains(&f), "{f}");
    }
    let run = ctx.cudaup(&["uninstall", "--yes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!prefix.exists(), "uninstall removes the made files too");

    // `standard` needs wheels this index does not have: the first one missing is named.
    let run = ctx.cudaup(&[
        "install",
        "--system",
        no_gpu_system(),
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--source",
        "wheels",
        "--index-url",
        &index.path().display().to_string(),
        "--no-cudnn",
        "--prefix",
        &prefix.display().to_string(),
        "--yes",
        "--dry-run",
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("nvidia-"), "{}", run.stderr);
}

/// `plan` shows what each set installs and downloads, on each route.
#[test]
fn plan_shows_the_sets_and_their_sizes() {
    let ctx = TestContext::new();
    let system = ctx.dir().join("box.json");
    fs_err::write(&system, r#"{"os": {"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "x86_64"}, "gpus": []}"#).unwrap();
    let sys = system.display().to_string();
    let run = ctx.cudaup(&[
        "plan",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--system",
        &sys,
        "--json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = run.json();
    let t = &doc["toolkit_components"];
    assert_eq!(t["set"], "standard");
    assert_eq!(t["cuda"], "13.0.2");
    let wheels = t["wheels"]["bytes"].as_u64().unwrap();
    let redist = t["redist"]["bytes"].as_u64().unwrap();
    assert!(wheels > 1_000_000_000 && redist > wheels, "{t:#}");
    assert_eq!(
        t["wheels"]["missing"],
        serde_json::json!(["cuobjdump", "nvdisasm", "nvprune"])
    );
    let run = ctx.cudaup(&[
        "plan",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--system",
        &sys,
        "--components",
        "minimal",
    ]);
    assert!(
        run.stdout
            .contains("Toolkit components (minimal), 7 in all:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("as wheels (--source wheels)"),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// NVIDIA's real wheels

/// The wheels of CUDA `cuda`'s `standard` set (as its metapackage pins them) and cuDNN `cudnn`,
/// in `cache/by-sha256/<sha256>/<file>`: reused when the bytes still hash right, else fetched
/// from PyPI. `Err` when PyPI cannot be reached.
pub(crate) fn real_wheels(cuda: &str, cudnn: &str) -> Result<Vec<PathBuf>, String> {
    // Tests run in parallel threads and three of them want these 2 GiB: one fetches, the others
    // wait and reuse (two writers of one `.part` file raced in CI, and each held a gigabyte).
    static FETCHING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = FETCHING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvidia-wheels");
    let catalog = cudaup::catalog::Catalog::embedded();
    let m = &catalog.components;
    let pins = m
        .wheels_for(&cudaup::model::version::Version::parse(cuda).unwrap())
        .unwrap();
    let arch = std::env::consts::ARCH;
    let mut want: Vec<(String, String)> = m
        .members("standard")
        .iter()
        .filter_map(|n| m.component(n)?.wheel.clone())
        .filter_map(|w| {
            let p = pins.packages.get(&w)?;
            p.size(arch)?;
            Some((w, p.version.clone()))
        })
        .collect();
    want.push((m.cudnn_wheel(13).unwrap().to_owned(), cudnn.to_owned()));
    let client = reqwest::blocking::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(std::time::Duration::from_secs(900))
        .build()
        .unwrap();
    let mut out = Vec::new();
    for (pkg, version) in want {
        let page = client
            .get(format!("https://pypi.org/simple/{pkg}/"))
            .header("Accept", "application/vnd.pypi.simple.v1+json")
            .send()
            .map_err(|e| format!("https://pypi.org/simple/{pkg}/: {e}"))?;
        let body = page.bytes().map_err(|e| e.to_string())?;
        let doc: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let file = doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|f| {
                let name = f["filename"].as_str().unwrap_or("");
                let v = name.split('-').nth(1).unwrap_or("");
                name.ends_with(&format!("_{arch}.whl"))
                    && name.contains("manylinux")
                    && (v == version || v.starts_with(&format!("{version}.")))
            })
            .unwrap_or_else(|| panic!("PyPI has no {arch} wheel of {pkg} {version}"));
        out.push(cached_pypi_file(&client, file, &cache)?);
    }
    Ok(out)
}

/// A directory on PATH holding `tool`, if the test's own PATH has one.
fn tool_dir(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(tool))
            .find(|f| f.is_file())
            .and_then(|f| fs_err::canonicalize(f).ok())
            .and_then(|f| f.parent().map(Path::to_path_buf))
    })
}

/// The whole `standard` set of CUDA 13.0.2 from NVIDIA's real wheels, through the loopback
/// index, then `verify` on this GPU-less machine: everything compiles and links.
#[test]
fn needs_network_real_cuda_13_wheels_build_and_link_everything() {
    let test = "needs_network_real_cuda_13_wheels_build_and_link_everything";
    let ctx = TestContext::new();
    let system = ctx.dir().join("box.json");
    fs_err::write(&system, format!(r#"{{"os": {{"family": "linux", "distro": "ubuntu", "version": "24.04", "arch": "{}"}}, "gpus": []}}"#, std::env::consts::ARCH)).unwrap();
    let plan = ctx
        .cudaup(&[
            "plan",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--system",
            &system.display().to_string(),
            "--json",
        ])
        .json();
    let comp = |n: &str| {
        plan["components"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == n)
            .unwrap()["version"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let cuda = plan["toolkit_components"]["cuda"]
        .as_str()
        .unwrap()
        .to_owned();
    let cudnn = comp("cudnn");
    let wheels = match real_wheels(&cuda, &cudnn) {
        Ok(w) => w,
        Err(why) => return skipped(test, &format!("PyPI is not reachable: {why}")),
    };
    // A static index of hard links to the cache, as scripts/make-wheel-mirror.py lays it out.
    let index = tempfile::tempdir().unwrap();
    let mirror = index.path().join("mirror");
    crate::common::wheels::write_index_with(
        &mirror.join("simple"),
        &wheels,
        Some(&mirror.join("packages")),
    );
    let server = Server::start(index.path().join("mirror"));
    let prefix = ctx.dir().join("cuda");
    let run = ctx.cudaup(&[
        "install",
        "--system",
        no_gpu_system(),
        "--driver",
        "keep",
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--source",
        "wheels",
        "--index-url",
        &format!("{}/simple", server.url()),
        "--allow-http",
        "--prefix",
        &prefix.display().to_string(),
        "--yes",
        "--no-modify-path",
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(server);
    // What NVIDIA's toolkit has, where build systems look.
    assert_dev_links(&prefix.join("lib64"));
    for (l, t) in [
        ("lib64/libcudart.so", "libcudart.so.13"),
        ("lib64/libcudnn.so", "libcudnn.so.9"),
        ("lib64/libnvrtc.so", "libnvrtc.so.13"),
        ("lib64/libcufft.so", "libcufft.so.12"),
        ("nvvm/lib64/libnvvm.so", "libnvvm.so.4"),
        ("targets/x86_64-linux/lib", "../../lib64"),
        ("extras/CUPTI/include", "../../include"),
        ("lib", "lib64"),
    ] {
        if l.starts_with("targets/x86_64") && std::env::consts::ARCH != "x86_64" {
            continue;
        }
        assert_eq!(link(&prefix.join(l)), t, "{l}");
    }
    for stub in ["lib64/stubs/libcuda.so", "lib64/stubs/libnvidia-ml.so"] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "readelf -d '{}' || objdump -p '{}'",
                prefix.join(stub).display(),
                prefix.join(stub).display()
            ))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let soname = if stub.contains("cuda") {
            "libcuda.so.1"
        } else {
            "libnvidia-ml.so.1"
        };
        assert!(text.contains(soname), "{stub}: {text}");
    }
    assert!(prefix
        .join("compute-sanitizer/include/sanitizer.h")
        .is_file());
    let vj: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(prefix.join("version.json")).unwrap())
            .unwrap();
    assert_eq!(vj["cuda"]["version"], cuda);
    assert_eq!(vj["libcufft"]["version"], "12.0.0.61");
    assert_eq!(vj["cuda_nvml_dev"]["version"], "13.0.87");

    // Plain links, as users type them (the issue's failures).
    let bin = prefix.join("bin");
    let work = tempfile::tempdir().unwrap();
    fs_err::write(
        work.path().join("addKernel.cu"),
        include_str!("../../scripts/addKernel.cu"),
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), tools_path());
    let nvcc = Command::new(bin.join("nvcc"))
        .current_dir(work.path())
        .env("PATH", &path)
        .args([
            "-cudart",
            "shared",
            "addKernel.cu",
            "-o",
            "addKernel",
            "-lnvrtc",
            "-lcudnn",
            "-lcublas",
            "-lcuda",
            "-lnvidia-ml",
        ])
        .output()
        .unwrap();
    assert!(
        nvcc.status.success(),
        "{}",
        String::from_utf8_lossy(&nvcc.stderr)
    );
    let needed = Command::new("sh")
        .arg("-c")
        .arg("readelf -d addKernel || objdump -p addKernel")
        .current_dir(work.path())
        .output()
        .unwrap();
    let needed = String::from_utf8_lossy(&needed.stdout);
    // -lcuda, -lnvrtc, … resolved (the link succeeded); -cudart shared is what the program needs.
    assert!(needed.contains("libcudart.so.13"), "{needed}");

    // verify: no GPU here, so everything is compiled and linked, and nothing fails.
    let mut path = format!("{}:{}", prefix.join("bin").display(), tools_path());
    let cmake = tool_dir("cmake");
    // cmake's own directory goes in front: ninja's (pip's bin/) may also hold pip's `cmake`
    // entry-point script, which cannot import its module outside the environment it came with.
    for t in ["ninja", "cmake"] {
        if let Some(d) = tool_dir(t) {
            path = format!("{}:{path}", d.display());
        }
    }
    let run = ctx.cudaup_env(&["verify", "--json"], &[("PATH", &path)]);
    let doc = run.json();
    assert_eq!(run.code, 0, "{doc:#}");
    let by_id = |id: &str| {
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {doc:#}"))
            .clone()
    };
    assert_eq!(by_id("driver")["status"], "skip");
    assert_eq!(by_id("addkernel")["status"], "pass");
    let libs = by_id("libraries");
    assert_eq!(libs["status"], "pass", "{libs:#}");
    assert_eq!(
        libs["data"]["linked"].as_array().unwrap().len(),
        15,
        "every library links: {libs:#}"
    );
    assert_eq!(by_id("compute-sanitizer")["status"], "pass");
    let cm = by_id("cmake");
    if cmake.is_some() {
        assert_eq!(cm["status"], "pass", "{cm:#}");
        assert!(
            cm["data"]["targets"].as_array().unwrap().len() >= 18,
            "{cm:#}"
        );
    } else {
        assert_eq!(cm["status"], "skip");
        skipped(&format!("{test} (cmake part)"), "no cmake on PATH");
    }

    // With ptxas gone the toolkit cannot compile: verify says so, GPU or not.
    fs_err::remove_file(prefix.join("bin/ptxas")).unwrap();
    let run = ctx.cudaup_env(&["verify"], &[("PATH", &path)]);
    assert_eq!(run.code, 4, "{}", run.stdout);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("✗ addkernel")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("ptxas"), "{}", run.stdout);
}

/// The wheel route keeps the index pages it read (issue 38): a page the index changed is read
/// again and what it names is checked against its new sha256 (a hostile hash is refused, not
/// masked by the cached tree), and with the index gone a re-install works from the kept pages
/// and the unpacked cache, saying so.
#[test]
fn index_pages_are_kept_a_changed_one_is_read_again_and_an_offline_reinstall_works() {
    let wheels = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    write_index(index.path(), &minimal_wheels(wheels.path()));
    let server = Server::start(index.path().to_owned());
    let ctx = TestContext::new();
    let url = format!("{}/", server.url());
    let install = |prefix: &Path| {
        ctx.cudaup(&[
            "install",
            "--system",
            no_gpu_system(),
            "--driver",
            "keep",
            "--profile",
            "cuda-dev",
            "--cuda",
            "13.0.2",
            "--source",
            "wheels",
            "--index-url",
            &url,
            "--allow-http",
            "--components",
            "minimal",
            "--no-cudnn",
            "--prefix",
            &prefix.display().to_string(),
            "--yes",
            "--no-modify-path",
        ])
    };
    let run = install(&ctx.dir().join("first"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);

    // The runtime's page now names another sha256 for the same wheel.
    let page = index.path().join("nvidia-cuda-runtime/index.html");
    let honest = fs_err::read_to_string(&page).unwrap();
    let at = honest.find("#sha256=").expect("the page states a sha256") + 8;
    let mut hostile = honest.clone();
    hostile.replace_range(at..at + 64, &"0".repeat(64));
    fs_err::write(&page, &hostile).unwrap();
    let run = install(&ctx.dir().join("hostile"));
    assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(&"0".repeat(64)), "{}", run.stderr);
    assert!(!ctx.dir().join("hostile").exists());

    // The honest page again, then the index goes away.
    fs_err::write(&page, &honest).unwrap();
    let run = install(&ctx.dir().join("again"));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(server);
    let offline = ctx.dir().join("offline");
    let run = install(&offline);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("using this index page as the index gave it"),
        "{said}"
    );
    assert_eq!(link(&offline.join("lib64/libcudart.so")), "libcudart.so.13");
}

/// One file of a PEP 691 page (`file`: its entry) in `cache/by-sha256/<sha256>/<name>`: reused
/// while its size is the one it was verified with, else fetched and checked against the page's
/// sha256. `Err` when the file cannot be fetched. Shared by the Linux and Windows real-wheel
/// tests (tests/it/wine.rs).
pub(crate) fn cached_pypi_file(
    client: &reqwest::blocking::Client,
    file: &serde_json::Value,
    cache: &Path,
) -> Result<PathBuf, String> {
    let name = file["filename"].as_str().unwrap();
    let sha = file["hashes"]["sha256"]
        .as_str()
        .unwrap()
        .to_ascii_lowercase();
    let dest = cache.join("by-sha256").join(&sha).join(name);
    // Hashed once, when it arrived; the marker holds the size it had then.
    let marker = dest.with_extension("verified");
    let size = file["size"].as_u64();
    let cached = fs_err::read_to_string(&marker)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .is_some_and(|s| Some(s) == size && dest.metadata().is_ok_and(|m| m.len() == s));
    if !cached {
        fs_err::create_dir_all(dest.parent().unwrap()).unwrap();
        let bytes = client
            .get(file["url"].as_str().unwrap())
            .send()
            .and_then(|r| r.error_for_status())
            .and_then(|r| r.bytes())
            .map_err(|e| format!("{name}: {e}"))?;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(&bytes)),
            sha,
            "{name}: the download does not hash to PyPI's sha256"
        );
        let tmp = dest.with_extension("part");
        fs_err::write(&tmp, &bytes).unwrap();
        fs_err::rename(&tmp, &dest).unwrap();
        fs_err::write(&marker, bytes.len().to_string()).unwrap();
    }
    Ok(dest)
}
