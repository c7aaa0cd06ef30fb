//! A small, synthetic mirror of NVIDIA's redistributable archives, built in Rust at test time
//! (as rustup's mock dist server is built from its manifest types), in NVIDIA's exact layout:
//!
//! ```text
//! DIR/compute/cuda/redist/redistrib_<cuda>.json
//! DIR/compute/cuda/redist/<component>/LICENSE.txt              (the license_path)
//! DIR/compute/cuda/redist/<component>/<platform>/<component>-<platform>-<version>-archive.{tar.xz,zip}
//! DIR/compute/cudnn/redist/redistrib_<cudnn>.json
//! DIR/compute/cudnn/redist/cudnn/<platform>/cudnn-<platform>-<version>_cuda<N>-archive.{tar.xz,zip}
//! DIR/evil/...                                                 (hostile archives, on request)
//! ```
//!
//! The JSON has NVIDIA's shape (`release_date`, `release_label`, `release_product`, then one
//! object per component: `name`, `license`, `license_path`, `version`, then per platform
//! `relative_path`, `sha256`, `md5`, `size` as a decimal string; cuDNN nests each platform by
//! `cuda12`/`cuda13` and adds `cuda_variant`), indented by 4, keys in NVIDIA's order; the paths
//! are the ones cudaup's own reader asks for (`sources::redist::{cuda,cudnn}_manifest`).
//! Every archive holds one top directory `<component>-<platform>-<version>-archive/` with
//! LICENSE and the real sub-layout of that component (versioned `.so` chains, `nvvm/`, Windows
//! DLLs), each file a few bytes; linux `bin/nvcc` is a sh script printing the real
//! `nvcc --version` banner, the command-line tools answer `--version` only, `cudnn_version.h`,
//! `cuda.h`, `cuda_runtime_api.h` and `cublas_api.h` carry their real version defines. Output is
//! deterministic (mtimes = the release date, uid/gid 0, sorted members, fixed compression).
//!
//! Sources of component names, versions and layouts: NixOS/nixpkgs' copies of NVIDIA's
//! redistrib_13.0.0.json, redistrib_13.0.2.json, redistrib_11.4.4.json and cuDNN's
//! redistrib_9.10.0.json; third-party scripts pinning 13.0.2's archives by sha256 (cuda_nvcc,
//! cuda_crt, libnvvm 13.0.88, cuda_cudart 13.0.96, cuda_cccl 13.0.85, cuda_nvrtc 13.0.88,
//! libcublas 13.1.0.3); google-ml-infra/rules_ml_toolchain's hermetic CUDA BUILD templates (the
//! files inside each archive; CUDA 13 moving include/crt to cuda_crt and nvvm to libnvvm).
//! Release dates of 13.0.2 and 9.17.0 were not found; the dates used are placeholders. Other
//! releases get synthetic component versions.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::Digest;

/// What to build.
#[derive(Debug, Clone)]
pub struct MirrorSpec {
    /// CUDA release label (`13.0.2`).
    pub cuda: String,
    /// cuDNN release label (`9.17.0`).
    pub cudnn: String,
    /// xz blocks per `.tar.xz`, as `xz -T N` splits its input.
    pub xz_blocks: u64,
    /// Also write `DIR/evil/`: hostile archives and `redistrib_evil.json`.
    pub evil: bool,
    /// MiB of incompressible bytes added to linux `cuda_nvcc` (`bin/padding.bin`).
    pub pad_mib: usize,
}

impl Default for MirrorSpec {
    fn default() -> Self {
        Self {
            cuda: "13.0.2".into(),
            cudnn: "9.17.0".into(),
            xz_blocks: 1,
            evil: false,
            pad_mib: 0,
        }
    }
}

impl MirrorSpec {
    /// Reads the options the old script took: `--cuda X`, `--cudnn X`, `--xz-threads N`,
    /// `--evil`, `--pad-mib N`.
    pub fn from_args(args: &[&str]) -> Self {
        let mut spec = Self::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().unwrap_or_else(|| panic!("{a} needs a value"));
            match *a {
                "--cuda" => spec.cuda = value().to_string(),
                "--cudnn" => spec.cudnn = value().to_string(),
                "--xz-threads" => spec.xz_blocks = value().parse().expect("--xz-threads N"),
                "--pad-mib" => spec.pad_mib = value().parse().expect("--pad-mib N"),
                "--evil" => spec.evil = true,
                other => panic!("synthetic mirror: unknown option {other}"),
            }
        }
        assert!(spec.xz_blocks >= 1, "--xz-threads must be >= 1");
        spec
    }

    /// Writes the mirror under `dir` (created; files in it are overwritten).
    pub fn build(&self, dir: &Path) {
        let m = Writer {
            root: dir.to_owned(),
            xz_blocks: self.xz_blocks,
        };
        build_cuda(&m, &self.cuda, self.pad_mib);
        build_cudnn(&m, &self.cudnn);
        if self.evil {
            build_evil(&m);
        }
    }
}

/// A synthetic mirror in a fresh temporary directory, with the options of
/// [`MirrorSpec::from_args`] (`&[]`: CUDA 13.0.2 and cuDNN 9.17.0).
pub fn synthetic_mirror(args: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    MirrorSpec::from_args(args).build(dir.path());
    dir
}

// ---------------------------------------------------------------------------------------------
// Release data

const PLATFORMS: [&str; 3] = ["linux-x86_64", "linux-sbsa", "windows-x86_64"];

/// NVIDIA's name and license of each component [NIX-13.0.0, NIX-13.0.2].
const COMPONENT_META: &[(&str, &str, &str)] = &[
    ("cuda_cccl", "CXX Core Compute Libraries", "CUDA Toolkit"),
    ("cuda_crt", "CUDA CRT", "CUDA Toolkit"),
    ("cuda_cudart", "CUDA Runtime (cudart)", "CUDA Toolkit"),
    ("cuda_cupti", "CUPTI", "CUDA Toolkit"),
    ("cuda_nvcc", "CUDA NVCC", "CUDA Toolkit"),
    ("cuda_nvrtc", "CUDA NVRTC", "CUDA Toolkit"),
    (
        "cuda_sanitizer_api",
        "CUDA Compute Sanitizer API",
        "CUDA Toolkit",
    ),
    ("libcublas", "CUDA cuBLAS", "CUDA Toolkit"),
    ("libnvvm", "CUDA NVVM", "CUDA Toolkit"),
    (
        "cuda_culibos",
        "CUDA MATH Library (cuda culibos)",
        "CUDA Toolkit",
    ),
    ("cuda_cuobjdump", "cuobjdump", "CUDA Toolkit"),
    ("cuda_cuxxfilt", "CUDA cuxxfilt (demangler)", "CUDA Toolkit"),
    ("cuda_gdb", "CUDA GDB", "CUDA Toolkit"),
    ("cuda_nvdisasm", "CUDA nvdisasm", "CUDA Toolkit"),
    ("cuda_nvml_dev", "CUDA NVML Headers", "CUDA Toolkit"),
    ("cuda_nvprune", "CUDA nvprune", "CUDA Toolkit"),
    ("cuda_nvtx", "CUDA NVTX", "CUDA Toolkit"),
    ("cuda_opencl", "CUDA OpenCL", "CUDA Toolkit"),
    ("cuda_profiler_api", "CUDA Profiler API", "CUDA Toolkit"),
    ("libcufft", "CUDA cuFFT", "CUDA Toolkit"),
    ("libcufile", "CUDA cuFile", "CUDA Toolkit"),
    ("libcurand", "CUDA cuRAND", "CUDA Toolkit"),
    ("libcusolver", "CUDA cuSOLVER", "CUDA Toolkit"),
    ("libcusparse", "CUDA cuSPARSE", "CUDA Toolkit"),
    ("libnpp", "CUDA NPP", "CUDA Toolkit"),
    (
        "libnvfatbin",
        "NVIDIA compiler library for fatbin interaction",
        "CUDA Toolkit",
    ),
    (
        "libnvjitlink",
        "NVIDIA compiler library for JIT LTO functionality",
        "CUDA Toolkit",
    ),
    ("libnvjpeg", "CUDA nvJPEG", "CUDA Toolkit"),
    ("libnvptxcompiler", "CUDA libnvptxcompiler", "CUDA Toolkit"),
    ("nsight_compute", "Nsight Compute", "NVIDIA SLA"),
    ("nsight_systems", "Nsight Systems", "NVIDIA SLA"),
];

/// Components NVIDIA ships for Windows too (the others get linux platforms only here).
const WINDOWS: &[&str] = &[
    "cuda_cccl",
    "cuda_crt",
    "cuda_cudart",
    "cuda_cupti",
    "cuda_nvcc",
    "cuda_nvrtc",
    "cuda_sanitizer_api",
    "libcublas",
    "libnvvm",
];

/// Recorded releases: date and component versions.
fn recorded_cuda(label: &str) -> Option<(&'static str, Vec<(&'static str, &'static str)>)> {
    match label {
        // Everything from NVIDIA's redistrib_13.0.0.json [NIX-13.0.0].
        "13.0.0" => Some((
            "2025-08-04",
            vec![
                ("cuda_cccl", "13.0.50"),
                ("cuda_crt", "13.0.48"),
                ("cuda_cudart", "13.0.48"),
                ("cuda_cupti", "13.0.48"),
                ("cuda_nvcc", "13.0.48"),
                ("cuda_nvrtc", "13.0.48"),
                ("cuda_sanitizer_api", "13.0.48"),
                ("libcublas", "13.0.0.19"),
                ("libnvvm", "13.0.48"),
            ],
        )),
        // The pinned archives [PIN-13.0.2]; the rest from redistrib_13.0.2.json [NIX-13.0.2].
        // The date is a placeholder: the real one was not found.
        "13.0.2" => Some((
            "2025-10-09",
            vec![
                ("cuda_cccl", "13.0.85"),
                ("cuda_crt", "13.0.88"),
                ("cuda_cudart", "13.0.96"),
                ("cuda_cupti", "13.0.85"),
                ("cuda_nvcc", "13.0.88"),
                ("cuda_nvrtc", "13.0.88"),
                ("cuda_sanitizer_api", "13.0.85"),
                ("libcublas", "13.1.0.3"),
                ("libnvvm", "13.0.88"),
                ("cuda_culibos", "13.0.85"),
                ("cuda_cuobjdump", "13.0.85"),
                ("cuda_cuxxfilt", "13.0.85"),
                ("cuda_gdb", "13.0.85"),
                ("cuda_nvdisasm", "13.0.85"),
                ("cuda_nvml_dev", "13.0.87"),
                ("cuda_nvprune", "13.0.85"),
                ("cuda_nvtx", "13.0.85"),
                ("cuda_opencl", "13.0.85"),
                ("cuda_profiler_api", "13.0.85"),
                ("libcufft", "12.0.0.61"),
                ("libcufile", "1.15.1.6"),
                ("libcurand", "10.4.0.35"),
                ("libcusolver", "12.0.4.66"),
                ("libcusparse", "12.6.3.3"),
                ("libnpp", "13.0.1.2"),
                ("libnvfatbin", "13.0.85"),
                ("libnvjitlink", "13.0.88"),
                ("libnvjpeg", "13.0.1.86"),
                ("libnvptxcompiler", "13.0.88"),
                ("nsight_compute", "2025.3.1.4"),
                ("nsight_systems", "2025.3.2.474"),
            ],
        )),
        _ => None,
    }
}

/// A release: its date and each component's version, sorted by component.
struct Release {
    date: String,
    versions: Vec<(String, String)>,
}

fn parse_version(v: &str) -> (u32, u32, u32) {
    let p: Vec<u32> = v.split('.').map(|p| p.parse().expect("X.Y.Z")).collect();
    assert_eq!(p.len(), 3, "version must be X.Y.Z, got {v:?}");
    (p[0], p[1], p[2])
}

fn cuda_release(label: &str) -> Release {
    if let Some((date, versions)) = recorded_cuda(label) {
        let mut versions: Vec<(String, String)> = versions
            .into_iter()
            .map(|(c, v)| (c.to_owned(), v.to_owned()))
            .collect();
        versions.sort();
        return Release {
            date: date.to_owned(),
            versions,
        };
    }
    let (x, y, z) = parse_version(label);
    let mm = format!("{x}.{y}");
    let mut versions: std::collections::BTreeMap<String, String> = [
        ("cuda_cccl", format!("{mm}.{}", 70 + z)),
        ("cuda_crt", format!("{mm}.{}", 80 + z)),
        ("cuda_cudart", format!("{mm}.{}", 90 + z)),
        ("cuda_cupti", format!("{mm}.{}", 60 + z)),
        ("cuda_nvcc", format!("{mm}.{}", 80 + z)),
        ("cuda_nvrtc", format!("{mm}.{}", 80 + z)),
        ("cuda_sanitizer_api", format!("{mm}.{}", 60 + z)),
        ("libcublas", format!("{mm}.{z}.19")),
        ("libnvvm", format!("{mm}.{}", 80 + z)),
    ]
    .into_iter()
    .map(|(c, v)| (c.to_owned(), v))
    .collect();
    for (comp, _, _) in COMPONENT_META {
        versions
            .entry((*comp).to_owned())
            .or_insert_with(|| format!("{mm}.{}", 50 + z));
    }
    // Every version names its major too: two releases of one mirror (12.2.2 and 13.2.2) must
    // not write different archives to one path.
    for (comp, v) in [
        ("libcufft", format!("{}.{y}.{z}.20", x - 1)),
        ("libcurand", format!("10.{x}{y}.{z}.20")),
        ("libcusparse", format!("{}.{y}.{z}.20", x - 1)),
        ("libcusolver", format!("{}.{y}.{z}.20", x - 1)),
        ("libcufile", format!("1.{x}{y}.{z}.20")),
        ("nsight_compute", format!("20{}.{y}.{z}.1", x + 12)),
        ("nsight_systems", format!("20{}.{y}.{z}.1", x + 12)),
    ] {
        versions.insert(comp.to_owned(), v);
    }
    // What older redistrib JSONs lack: cuda_crt, libnvvm, libnvptxcompiler and cuda_culibos
    // are components of their own from 13.0; libnvjitlink from 12.0, libnvfatbin from 12.4;
    // redistrib_11.4.4.json has no cuda_profiler_api [NIX-11.4.4].
    if x < 13 {
        for c in ["cuda_crt", "libnvvm", "libnvptxcompiler", "cuda_culibos"] {
            versions.remove(c);
        }
    }
    if x < 12 {
        versions.remove("libnvjitlink");
        versions.remove("cuda_profiler_api");
    }
    if (x, y) < (12, 4) {
        versions.remove("libnvfatbin");
    }
    Release {
        date: format!("{}-01-01", 2013 + x),
        versions: versions.into_iter().collect(),
    }
}

/// cuDNN's build number and date per release label (9.28.x from PyPI's nvidia-cudnn-cu13 and
/// -cu12; 9.10.0 from NVIDIA's redistrib_9.10.0.json; other dates are placeholders).
fn cudnn_release(label: &str) -> (String, String) {
    let known = match label {
        "9.28.1" => Some(("9.28.1.4", "2026-11-06")),
        "9.28.0" => Some(("9.28.0.42", "2026-11-04")),
        "9.17.0" => Some(("9.17.0.29", "2025-12-04")),
        "9.16.0" => Some(("9.16.0.29", "2025-11-06")),
        "9.10.0" => Some(("9.10.0.56", "2025-05-07")),
        _ => None,
    };
    match known {
        Some((v, d)) => (v.to_owned(), d.to_owned()),
        None => {
            parse_version(label);
            (format!("{label}.1"), "2025-01-01".to_owned())
        }
    }
}

const CUDNN_VARIANTS: [&str; 2] = ["12", "13"];

// ---------------------------------------------------------------------------------------------
// Archive contents

const EXE: u32 = 0o755;
const REG: u32 = 0o644;

/// One archive member; paths relative to the archive's top directory (or whole, when hostile).
#[derive(Debug, Clone)]
enum Entry {
    File(String, Vec<u8>, u32),
    Dir(String),
    Link(String, String),
    Hard(String, String),
    Char(String, u32, u32),
}

impl Entry {
    fn path(&self) -> &str {
        match self {
            Entry::File(p, ..)
            | Entry::Dir(p)
            | Entry::Link(p, _)
            | Entry::Hard(p, _)
            | Entry::Char(p, ..) => p,
        }
    }

    fn with_path(&self, path: String) -> Entry {
        match self.clone() {
            Entry::File(_, d, m) => Entry::File(path, d, m),
            Entry::Dir(_) => Entry::Dir(path),
            Entry::Link(_, t) => Entry::Link(path, t),
            Entry::Hard(_, t) => Entry::Hard(path, t),
            Entry::Char(_, a, b) => Entry::Char(path, a, b),
        }
    }
}

fn f(path: &str, data: impl Into<Vec<u8>>, mode: u32) -> Entry {
    Entry::File(path.to_owned(), data.into(), mode)
}

/// A tiny placeholder: ELF/PE/ar magic plus a line saying what it stands for.
fn blob(path: &str, what: &str, mode: u32) -> Entry {
    let name = path.rsplit('/').next().unwrap();
    let magic: &[u8] = if name.ends_with(".dll") || name.ends_with(".exe") {
        b"MZ"
    } else if name.ends_with(".a") || name.ends_with(".lib") {
        b"!<arch>\n"
    } else if name.ends_with(".bc") {
        b"BC\xc0\xde"
    } else if name.contains(".so") || mode == EXE {
        b"\x7fELF"
    } else {
        b""
    };
    let mut data = magic.to_vec();
    data.extend_from_slice(format!(" synthetic {what}\n").as_bytes());
    f(path, data, mode)
}

fn header(path: &str, comp: &str, ver: &str, extra: &str) -> Entry {
    let name = path.rsplit('/').next().unwrap();
    f(
        path,
        format!("/* synthetic {name} from {comp} {ver} */\n{extra}"),
        REG,
    )
}

/// `lib.so -> lib.so.<soname> -> lib.so.<full>` (the last a file), as NVIDIA ships them.
fn so_chain(d: &str, lib: &str, soname: &str, full: &str, what: &str) -> Vec<Entry> {
    vec![
        Entry::Link(format!("{d}/{lib}.so"), format!("{lib}.so.{soname}")),
        Entry::Link(format!("{d}/{lib}.so.{soname}"), format!("{lib}.so.{full}")),
        blob(&format!("{d}/{lib}.so.{full}"), what, REG),
    ]
}

const NVCC_FATAL: &str =
    "nvcc fatal   : synthetic nvcc: compilation is not available in the test mirror";

/// A sh `nvcc` printing the real `--version` banner of `ver` (CUDA 13.0.2's is V13.0.88).
fn nvcc_script(ver: &str) -> String {
    let mm = ver.split('.').take(2).collect::<Vec<_>>().join(".");
    let banner = [
        "nvcc: NVIDIA (R) Cuda compiler driver".to_owned(),
        "Copyright (c) 2005-2025 NVIDIA Corporation".to_owned(),
        "Built on Wed_Aug_20_01:58:59_PM_PDT_2025".to_owned(),
        format!("Cuda compilation tools, release {mm}, V{ver}"),
        format!("Build cuda_{mm}.r{mm}/compiler.36424714_0"),
    ];
    let lines: String = banner
        .iter()
        .map(|l| format!("    printf '%s\\n' '{l}'\n"))
        .collect();
    format!(
        "#!/bin/sh\n# Synthetic nvcc from cudaup's test mirror (tests/it/common/mirror.rs).\n# It only answers --version (and its alias -V); it cannot compile.\nif [ \"$#\" -eq 1 ] && {{ [ \"$1\" = \"--version\" ] || [ \"$1\" = \"-V\" ]; }}; then\n{lines}    exit 0\nfi\necho '{NVCC_FATAL}' >&2\nexit 1\n"
    )
}

/// A sh stand-in for a command-line tool: answers `--version`, refuses the rest.
fn tool_script(name: &str, comp: &str, ver: &str) -> String {
    format!(
        "#!/bin/sh\n# Synthetic {name} from cudaup's test mirror ({comp} {ver}); it only answers --version.\nif [ \"$#\" -eq 1 ] && [ \"$1\" = \"--version\" ]; then\n    printf '%s\\n' '{name}: NVIDIA (R) {name}' 'Copyright (c) 2005-2025 NVIDIA Corporation' 'Version {ver}'\n    exit 0\nfi\necho '{name}: synthetic {name}: not available in the test mirror' >&2\nexit 1\n"
    )
}

const NVCC_PROFILE: &str = "
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  \"-I$(TOP)/$(_TARGET_DIR_)/include\" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) \"-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs\" \"-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)\"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
";

const CRT_HEADERS: [&str; 8] = [
    "common_functions.h",
    "device_functions.h",
    "host_config.h",
    "host_defines.h",
    "host_runtime.h",
    "math_functions.h",
    "math_functions.hpp",
    "sm_90_rt.h",
];

/// Deterministic, incompressible bytes (a SHA-256 counter stream).
fn padding(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 32);
    let mut i: u64 = 0;
    while out.len() < n {
        out.extend_from_slice(&sha2::Sha256::digest(i.to_le_bytes()));
        i += 1;
    }
    out.truncate(n);
    out
}

/// (headers, libraries): `name:soname` gets a so chain (`{major}` = the component's major),
/// `.a` a static archive; names as in the real archives.
fn libraries(comp: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    Some(match comp {
        "cuda_culibos" => (&[], &["libculibos.a"]),
        "cuda_cuxxfilt" => (&["nv_decode.h"], &["libcufilt.a"]),
        "cuda_nvml_dev" => (&["nvml.h"], &[]),
        "cuda_nvtx" => (
            &["nvtx3/nvToolsExt.h", "nvtx3/nvToolsExtCuda.h"],
            &["libnvtx3interop:1"],
        ),
        "cuda_opencl" => (&["CL/cl.h", "CL/opencl.h"], &["libOpenCL:1"]),
        "cuda_profiler_api" => (&["cudaProfiler.h", "cuda_profiler_api.h"], &[]),
        "libcufft" => (
            &["cufft.h", "cufftw.h", "cufftXt.h"],
            &["libcufft:{major}", "libcufftw:{major}", "libcufft_static.a"],
        ),
        "libcufile" => (&["cufile.h"], &["libcufile:0", "libcufile_rdma:1"]),
        "libcurand" => (
            &["curand.h", "curand_kernel.h"],
            &["libcurand:{major}", "libcurand_static.a"],
        ),
        "libcusolver" => (
            &["cusolverDn.h", "cusolverSp.h", "cusolver_common.h"],
            &[
                "libcusolver:{major}",
                "libcusolverMg:{major}",
                "libcusolver_static.a",
            ],
        ),
        "libcusparse" => (
            &["cusparse.h"],
            &["libcusparse:{major}", "libcusparse_static.a"],
        ),
        "libnpp" => (
            &["npp.h", "nppcore.h", "nppdefs.h", "npps.h", "nppi.h"],
            &[
                "libnppc:{major}",
                "libnpps:{major}",
                "libnppial:{major}",
                "libnppc_static.a",
            ],
        ),
        "libnvfatbin" => (&["nvFatbin.h"], &["libnvfatbin:{major}"]),
        "libnvjitlink" => (
            &["nvJitLink.h"],
            &["libnvJitLink:{major}", "libnvJitLink_static.a"],
        ),
        "libnvjpeg" => (&["nvjpeg.h"], &["libnvjpeg:{major}", "libnvjpeg_static.a"]),
        "libnvptxcompiler" => (&["nvPTXCompiler.h"], &["libnvptxcompiler_static.a"]),
        _ => return None,
    })
}

fn tools(comp: &str) -> &'static [&'static str] {
    match comp {
        "cuda_cuxxfilt" => &["bin/cu++filt"],
        "cuda_cuobjdump" => &["bin/cuobjdump"],
        "cuda_nvdisasm" => &["bin/nvdisasm"],
        "cuda_nvprune" => &["bin/nvprune"],
        "cuda_gdb" => &["bin/cuda-gdb", "bin/cuda-gdbserver"],
        "nsight_compute" => &["ncu", "ncu-ui"],
        "nsight_systems" => &["target-linux-x64/nsys", "bin/nsys"],
        _ => &[],
    }
}

/// The files of `comp` `ver` for `plat`, in release `cuda`.
fn layout(comp: &str, ver: &str, plat: &str, cuda: (u32, u32, u32), pad_mib: usize) -> Vec<Entry> {
    let win = plat.starts_with("windows");
    let major = cuda.0;
    let cuda_num = major * 1000 + cuda.1 * 10;
    let what = |name: &str| format!("{name} ({comp} {ver} {plat})");
    let h = |path: &str| header(path, comp, ver, "");
    let mut e: Vec<Entry> = Vec::new();
    match comp {
        "cuda_nvcc" => {
            let tools = ["bin2c", "cudafe++", "fatbinary", "nvlink", "ptxas"];
            if win {
                e.push(blob("bin/nvcc.exe", &what("nvcc.exe"), REG));
                for t in tools {
                    e.push(blob(&format!("bin/{t}.exe"), &what(t), REG));
                }
            } else {
                e.push(f("bin/nvcc", nvcc_script(ver), EXE));
                for t in tools {
                    e.push(blob(&format!("bin/{t}"), &what(t), EXE));
                }
            }
            e.push(f("bin/nvcc.profile", NVCC_PROFILE, REG));
            if pad_mib > 0 && !win {
                // Incompressible padding, for tests that need real sizes (a full disk, progress).
                e.push(f("bin/padding.bin", padding(pad_mib << 20), REG));
            }
            e.push(blob("bin/crt/link.stub", &what("link.stub"), REG));
            e.push(blob("bin/crt/prelink.stub", &what("prelink.stub"), REG));
            e.push(h("include/fatbinary_section.h"));
            if major < 13 {
                // crt, nvvm and nvptxcompiler moved out of cuda_nvcc in CUDA 13.
                e.extend(CRT_HEADERS.iter().map(|c| h(&format!("include/crt/{c}"))));
                e.extend(layout("libnvvm", ver, plat, cuda, 0));
                e.push(h("include/nvPTXCompiler.h"));
                let lib = if win {
                    "lib/x64/nvptxcompiler_static.lib"
                } else {
                    "lib/libnvptxcompiler_static.a"
                };
                e.push(blob(lib, &what("nvptxcompiler"), REG));
            }
        }
        "cuda_crt" => e.extend(CRT_HEADERS.iter().map(|c| h(&format!("include/crt/{c}")))),
        "libnvvm" => {
            e.push(h("nvvm/include/nvvm.h"));
            e.push(blob(
                "nvvm/libdevice/libdevice.10.bc",
                &what("libdevice.10.bc"),
                REG,
            ));
            if win {
                e.push(blob("nvvm/bin/cicc.exe", &what("cicc"), REG));
                e.push(blob(
                    "nvvm/bin/nvvm64_40_0.dll",
                    &what("nvvm64_40_0.dll"),
                    REG,
                ));
                e.push(blob("nvvm/lib/x64/nvvm.lib", &what("nvvm.lib"), REG));
            } else {
                e.push(blob("nvvm/bin/cicc", &what("cicc"), EXE));
                e.extend(so_chain(
                    "nvvm/lib64",
                    "libnvvm",
                    "4",
                    "4.0.0",
                    &what("libnvvm"),
                ));
            }
        }
        "cuda_cudart" => {
            e.push(header(
                "include/cuda.h",
                comp,
                ver,
                &format!("#define CUDA_VERSION {cuda_num}\n"),
            ));
            e.push(header(
                "include/cuda_runtime_api.h",
                comp,
                ver,
                &format!("#define CUDART_VERSION {cuda_num}\n"),
            ));
            for name in [
                "cuda_runtime.h",
                "driver_types.h",
                "vector_types.h",
                "cuda_fp16.h",
                "cooperative_groups.h",
                "cooperative_groups/reduce.h",
            ] {
                e.push(h(&format!("include/{name}")));
            }
            if win {
                e.push(blob(
                    &format!("bin/cudart64_{major}.dll"),
                    &what("cudart"),
                    REG,
                ));
                for lib in ["cuda", "cudadevrt", "cudart", "cudart_static"] {
                    e.push(blob(&format!("lib/x64/{lib}.lib"), &what(lib), REG));
                }
            } else {
                e.extend(so_chain(
                    "lib",
                    "libcudart",
                    &major.to_string(),
                    ver,
                    &what("libcudart"),
                ));
                e.push(blob(
                    "lib/libcudart_static.a",
                    &what("libcudart_static"),
                    REG,
                ));
                e.push(blob("lib/libcudadevrt.a", &what("libcudadevrt"), REG));
                e.push(blob("lib/stubs/libcuda.so", &what("libcuda stub"), REG));
            }
        }
        "cuda_cccl" => {
            let inc = if major >= 13 {
                "include/cccl"
            } else {
                "include"
            };
            for name in [
                "cub/cub.cuh",
                "cuda/std/version",
                "nv/target",
                "thrust/version.h",
            ] {
                e.push(h(&format!("{inc}/{name}")));
            }
            for p in ["cccl", "cub", "libcudacxx", "thrust"] {
                e.push(f(
                    &format!("lib/cmake/{p}/{p}-config.cmake"),
                    format!("# synthetic {p}-config.cmake\n"),
                    REG,
                ));
            }
        }
        "cuda_nvrtc" => {
            e.push(h("include/nvrtc.h"));
            let parts: Vec<&str> = ver.split('.').take(2).collect();
            if win {
                let mm = parts.concat(); // 13.0.88 -> "130"
                e.push(blob(
                    &format!("bin/nvrtc64_{mm}_0.dll"),
                    &what("nvrtc"),
                    REG,
                ));
                e.push(blob(
                    &format!("bin/nvrtc-builtins64_{mm}.dll"),
                    &what("nvrtc-builtins"),
                    REG,
                ));
                e.push(blob("lib/x64/nvrtc.lib", &what("nvrtc.lib"), REG));
                e.push(blob(
                    "lib/x64/nvrtc_static.lib",
                    &what("nvrtc_static.lib"),
                    REG,
                ));
            } else {
                let mmdot = parts.join(".");
                e.extend(so_chain(
                    "lib",
                    "libnvrtc",
                    &major.to_string(),
                    ver,
                    &what("libnvrtc"),
                ));
                e.extend(so_chain(
                    "lib",
                    "libnvrtc-builtins",
                    &mmdot,
                    ver,
                    &what("libnvrtc-builtins"),
                ));
                e.push(blob("lib/libnvrtc_static.a", &what("libnvrtc_static"), REG));
                e.push(blob(
                    "lib/libnvrtc-builtins_static.a",
                    &what("libnvrtc-builtins_static"),
                    REG,
                ));
            }
        }
        "libcublas" => {
            let mut v: Vec<&str> = ver.split('.').collect();
            v.resize(v.len().max(4), "0");
            let defs: String = ["MAJOR", "MINOR", "PATCH", "BUILD"]
                .iter()
                .zip(&v)
                .map(|(k, n)| format!("#define CUBLAS_VER_{k} {n}\n"))
                .collect();
            e.push(header("include/cublas_api.h", comp, ver, &defs));
            for name in ["cublas.h", "cublasLt.h", "cublasXt.h", "cublas_v2.h"] {
                e.push(h(&format!("include/{name}")));
            }
            let sov = v[0];
            let libs = ["cublas", "cublasLt", "nvblas"];
            if win {
                for lib in libs {
                    e.push(blob(&format!("bin/{lib}64_{sov}.dll"), &what(lib), REG));
                }
                for lib in libs {
                    e.push(blob(&format!("lib/x64/{lib}.lib"), &what(lib), REG));
                }
            } else {
                for lib in libs {
                    let lib = format!("lib{lib}");
                    e.extend(so_chain("lib", &lib, sov, ver, &what(&lib)));
                }
                e.push(blob(
                    "lib/libcublas_static.a",
                    &what("libcublas_static"),
                    REG,
                ));
                e.push(blob(
                    "lib/libcublasLt_static.a",
                    &what("libcublasLt_static"),
                    REG,
                ));
            }
        }
        "cuda_cupti" => {
            e.push(h("include/cupti.h"));
            if win {
                e.push(blob(&format!("bin/cupti64_{ver}.dll"), &what("cupti"), REG));
                e.push(blob("lib/x64/cupti.lib", &what("cupti.lib"), REG));
            } else {
                e.extend(so_chain(
                    "lib",
                    "libcupti",
                    &major.to_string(),
                    ver,
                    &what("libcupti"),
                ));
            }
        }
        "cuda_sanitizer_api" => {
            if win {
                e.push(blob(
                    "compute-sanitizer/compute-sanitizer.exe",
                    &what("compute-sanitizer"),
                    REG,
                ));
                e.push(f(
                    "bin/compute-sanitizer.bat",
                    "@echo off\r\nexit /b 1\r\n",
                    REG,
                ));
            } else {
                e.push(f(
                    "compute-sanitizer/compute-sanitizer",
                    tool_script("compute-sanitizer", comp, ver),
                    EXE,
                ));
                e.push(blob(
                    "compute-sanitizer/libsanitizer-collection.so",
                    &what("sanitizer"),
                    REG,
                ));
                e.push(Entry::Link(
                    "bin/compute-sanitizer".into(),
                    "../compute-sanitizer/compute-sanitizer".into(),
                ));
            }
            e.push(h("compute-sanitizer/include/sanitizer.h"));
        }
        _ => {
            if let Some((headers, libs)) = libraries(comp) {
                e.extend(headers.iter().map(|x| h(&format!("include/{x}"))));
                let major = ver.split('.').next().unwrap();
                for lib in libs.iter() {
                    if lib.ends_with(".a") {
                        e.push(blob(&format!("lib/{lib}"), &what(lib), REG));
                    } else {
                        let (name, soname) = lib.split_once(':').unwrap();
                        let soname = soname.replace("{major}", major);
                        e.extend(so_chain("lib", name, &soname, ver, &what(name)));
                    }
                }
                for path in tools(comp) {
                    let name = path.rsplit('/').next().unwrap();
                    e.push(f(path, tool_script(name, comp, ver), EXE));
                }
                if comp == "cuda_nvml_dev" {
                    e.push(blob(
                        "lib/stubs/libnvidia-ml.so",
                        &what("libnvidia-ml stub"),
                        REG,
                    ));
                    e.push(h("nvml/example/example.c"));
                }
            } else {
                assert!(!tools(comp).is_empty(), "no layout for {comp}");
                for path in tools(comp) {
                    let name = path.rsplit('/').next().unwrap();
                    if win {
                        e.push(blob(&format!("{path}.exe"), &what(name), REG));
                    } else {
                        e.push(f(path, tool_script(name, comp, ver), EXE));
                    }
                }
                if comp == "nsight_compute" {
                    e.push(f(
                        "sections/SpeedOfLight.section",
                        "synthetic section\n",
                        REG,
                    ));
                }
            }
        }
    }
    e
}

const CUDNN_LIBS: [&str; 8] = [
    "cudnn",
    "cudnn_adv",
    "cudnn_cnn",
    "cudnn_engines_precompiled",
    "cudnn_engines_runtime_compiled",
    "cudnn_graph",
    "cudnn_heuristic",
    "cudnn_ops",
];

fn cudnn_layout(ver: &str, plat: &str, variant: &str) -> Vec<Entry> {
    let p: Vec<&str> = ver.split('.').collect();
    let (major, minor, patch) = (p[0], p[1], p[2]);
    let what = |name: &str| format!("{name} (cudnn {ver} cuda{variant} {plat})");
    let version_h = format!(
        "/**\n * \\file: The master cuDNN version file.\n */\n\n#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\n#endif /* CUDNN_VERSION_H */\n"
    );
    let mut e = vec![f("include/cudnn_version.h", version_h, REG)];
    for name in [
        "cudnn.h",
        "cudnn_adv.h",
        "cudnn_backend.h",
        "cudnn_cnn.h",
        "cudnn_graph.h",
        "cudnn_ops.h",
    ] {
        e.push(header(&format!("include/{name}"), "cudnn", ver, ""));
    }
    if plat.starts_with("windows") {
        for lib in CUDNN_LIBS {
            e.push(blob(&format!("bin/{lib}64_{major}.dll"), &what(lib), REG));
            e.push(blob(&format!("lib/x64/{lib}.lib"), &what(lib), REG));
        }
    } else {
        for lib in CUDNN_LIBS {
            e.extend(so_chain(
                "lib",
                &format!("lib{lib}"),
                major,
                &format!("{major}.{minor}.{patch}"),
                &what(lib),
            ));
        }
        e.push(blob(
            "lib/libcudnn_adv_static.a",
            &what("cudnn_adv_static"),
            REG,
        ));
    }
    e
}

fn license_text(comp: &str) -> Vec<u8> {
    format!("Synthetic LICENSE for {comp} in cudaup's test mirror.\nThis is not NVIDIA's license text and no NVIDIA software is included.\n").into_bytes()
}

// ---------------------------------------------------------------------------------------------
// Writers

/// Adds a directory entry for every parent, then sorts by path (a parent sorts first).
fn with_dirs(entries: Vec<Entry>) -> Vec<Entry> {
    let mut out = std::collections::BTreeMap::new();
    for ent in entries {
        let parts: Vec<&str> = ent.path().split('/').collect();
        for i in 1..parts.len() {
            let d = parts[..i].join("/");
            out.entry(d.clone()).or_insert(Entry::Dir(d));
        }
        out.insert(ent.path().to_owned(), ent);
    }
    out.into_values().collect()
}

/// Under `top/` (the archive's one directory), with every parent directory, sorted.
fn under_top(top: &str, entries: Vec<Entry>) -> Vec<Entry> {
    let mut all = vec![Entry::Dir(top.to_owned())];
    all.extend(
        entries
            .into_iter()
            .map(|e| e.with_path(format!("{top}/{}", e.path()))),
    );
    with_dirs(all)
}

/// A GNU tar of `entries`, as written (hostile names included: the header's name field is
/// filled byte for byte, never checked).
fn tar_bytes(entries: &[Entry], mtime: u64) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for ent in entries {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        h.set_username("root").unwrap();
        h.set_groupname("root").unwrap();
        let (kind, mode, link, data): (tar::EntryType, u32, Option<&str>, &[u8]) = match ent {
            Entry::Dir(_) => (tar::EntryType::Directory, 0o755, None, &[]),
            Entry::File(_, d, m) => (tar::EntryType::Regular, *m, None, d),
            Entry::Link(_, t) => (tar::EntryType::Symlink, 0o777, Some(t), &[]),
            Entry::Hard(_, t) => (tar::EntryType::Link, REG, Some(t), &[]),
            Entry::Char(_, major, minor) => {
                h.set_device_major(*major).unwrap();
                h.set_device_minor(*minor).unwrap();
                (tar::EntryType::Char, 0o666, None, &[])
            }
        };
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(data.len() as u64);
        let mut path = ent.path().to_owned();
        if matches!(ent, Entry::Dir(_)) {
            path.push('/');
        }
        if path.len() <= 100 && link.is_none_or(|l| l.len() <= 100) {
            let name = &mut h.as_old_mut().name;
            name[..path.len()].copy_from_slice(path.as_bytes());
            if let Some(l) = link {
                h.as_old_mut().linkname[..l.len()].copy_from_slice(l.as_bytes());
            }
            h.set_cksum();
            b.append(&h, data).unwrap();
        } else if let Some(l) = link {
            b.append_link(&mut h, &path, l).unwrap();
        } else {
            b.append_data(&mut h, &path, data).unwrap();
        }
    }
    b.into_inner().unwrap()
}

/// An .xz stream with CRC64 checks; `blocks` > 1 splits the input into that many xz blocks of
/// one stream, as `xz -T N` does for input larger than its block size.
fn xz_bytes(data: &[u8], blocks: u64) -> Vec<u8> {
    use liblzma::stream::{Check, MtStreamBuilder, Stream};
    let stream = if blocks <= 1 || data.len() < 2 {
        Stream::new_easy_encoder(6, Check::Crc64).unwrap()
    } else {
        let size = (data.len() as u64).div_ceil(blocks);
        MtStreamBuilder::new()
            .threads(1)
            .block_size(size)
            .preset(6)
            .check(Check::Crc64)
            .encoder()
            .unwrap()
    };
    let mut w = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

/// gzip at level 9, mtime 0 and no name: deterministic.
fn gz_bytes(data: &[u8]) -> Vec<u8> {
    let mut w = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

/// A zip with MS-DOS attributes, as archives made on Windows have (names written as given).
fn zip_bytes(entries: &[Entry], date: &str) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let (y, m, d) = parse_date(date);
    let when = zip::DateTime::from_date_and_time(y as u16, m as u8, d as u8, 0, 0, 0).unwrap();
    let base = SimpleFileOptions::default()
        .system(zip::System::Dos)
        .last_modified_time(when);
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for ent in entries {
        match ent {
            Entry::Dir(p) => {
                let o = base
                    .compression_method(zip::CompressionMethod::Stored)
                    .external_attributes(0x10);
                z.add_directory(format!("{}/", p.trim_end_matches('/')), o)
                    .unwrap();
            }
            Entry::File(p, data, _) => {
                let o = base
                    .compression_method(zip::CompressionMethod::Deflated)
                    .compression_level(Some(9))
                    .external_attributes(0x20);
                z.start_file(p.as_str(), o).unwrap();
                z.write_all(data).unwrap();
            }
            other => panic!("a zip here holds files and directories only: {other:?}"),
        }
    }
    z.finish().unwrap().into_inner()
}

fn parse_date(date: &str) -> (i64, i64, i64) {
    let p: Vec<i64> = date.split('-').map(|x| x.parse().unwrap()).collect();
    (p[0], p[1], p[2])
}

/// Seconds since the epoch of `date` at 00:00 UTC.
fn epoch(date: &str) -> u64 {
    let (y, m, d) = parse_date(date);
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    ((era * 146097 + doe - 719468) * 86400) as u64
}

/// A JSON value whose objects keep their keys in the order written (NVIDIA's order).
enum J {
    S(String),
    A(Vec<J>),
    O(Vec<(String, J)>),
}

fn s(v: impl Into<String>) -> J {
    J::S(v.into())
}

/// `json.dumps(obj, indent=4)`: 4 spaces, `", "` / `": "`, no final newline — NVIDIA's own.
fn dump(j: &J, indent: usize, out: &mut String) {
    let pad = |n: usize| " ".repeat(n * 4);
    match j {
        J::S(v) => out.push_str(&serde_json::to_string(v).unwrap()),
        J::A(items) if items.is_empty() => out.push_str("[]"),
        J::A(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad(indent + 1));
                dump(item, indent + 1, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push(']');
        }
        J::O(fields) => {
            out.push_str("{\n");
            for (i, (k, v)) in fields.iter().enumerate() {
                out.push_str(&pad(indent + 1));
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(": ");
                dump(v, indent + 1, out);
                out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
            }
            out.push_str(&pad(indent));
            out.push('}');
        }
    }
}

fn dump_json(j: &J) -> Vec<u8> {
    let mut out = String::new();
    dump(j, 0, &mut out);
    out.into_bytes()
}

/// The platform object of an archive: `relative_path`, `sha256`, `md5`, `size`.
fn meta(rel: &str, data: &[u8]) -> J {
    J::O(vec![
        ("relative_path".into(), s(rel)),
        ("sha256".into(), s(hex::encode(sha2::Sha256::digest(data)))),
        ("md5".into(), s(hex::encode(md5::Md5::digest(data)))),
        ("size".into(), s(data.len().to_string())),
    ])
}

struct Writer {
    root: PathBuf,
    xz_blocks: u64,
}

impl Writer {
    fn write(&self, rel: &str, data: &[u8]) {
        let path = self.root.join(rel);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, data).unwrap();
    }

    /// Writes one archive at `base/rel` and returns its platform object.
    fn archive(&self, base: &str, rel: &str, top: &str, entries: Vec<Entry>, date: &str) -> J {
        let entries = under_top(top, entries);
        let data = if rel.ends_with(".zip") {
            zip_bytes(&entries, date)
        } else {
            xz_bytes(&tar_bytes(&entries, epoch(date)), self.xz_blocks)
        };
        self.write(&format!("{base}/{rel}"), &data);
        meta(rel, &data)
    }
}

/// Where cudaup's own reader looks for a release's redistrib JSON, relative to the mirror.
fn manifest_path(cudnn: bool, label: &str) -> String {
    use cudaup::fetch::Location;
    use cudaup::sources::redist::{cuda_manifest, cudnn_manifest};
    let root = Location::File(PathBuf::from("/mirror"));
    let at = if cudnn {
        cudnn_manifest(&root, label)
    } else {
        cuda_manifest(&root, label)
    };
    match at {
        Location::File(p) => p.strip_prefix("/mirror").unwrap().display().to_string(),
        Location::Http(u) => panic!("a directory mirror's manifest is a file, not {u}"),
    }
}

fn build_cuda(m: &Writer, label: &str, pad_mib: usize) {
    let rel = cuda_release(label);
    let cuda = parse_version(label);
    let base = "compute/cuda/redist";
    let mut doc = vec![
        ("release_date".to_owned(), s(&rel.date)),
        ("release_label".to_owned(), s(label)),
        ("release_product".to_owned(), s("cuda")),
    ];
    for (comp, ver) in &rel.versions {
        let (_, name, lic) = COMPONENT_META
            .iter()
            .find(|(c, ..)| c == comp)
            .unwrap_or_else(|| panic!("{comp}: no name"));
        let mut obj = vec![
            ("name".to_owned(), s(*name)),
            ("license".to_owned(), s(*lic)),
            ("license_path".to_owned(), s(format!("{comp}/LICENSE.txt"))),
            ("version".to_owned(), s(ver)),
        ];
        m.write(&format!("{base}/{comp}/LICENSE.txt"), &license_text(comp));
        for plat in PLATFORMS {
            if plat.starts_with("windows") && !WINDOWS.contains(&comp.as_str()) {
                continue;
            }
            if comp == "cuda_opencl" && plat == "linux-sbsa" {
                continue; // linux-x86_64 only [NIX-13.0.2]
            }
            let ext = if plat.starts_with("windows") {
                "zip"
            } else {
                "tar.xz"
            };
            let top = format!("{comp}-{plat}-{ver}-archive");
            let mut entries = vec![f("LICENSE", license_text(comp), REG)];
            entries.extend(layout(comp, ver, plat, cuda, pad_mib));
            let at = format!("{comp}/{plat}/{top}.{ext}");
            obj.push((
                plat.to_owned(),
                m.archive(base, &at, &top, entries, &rel.date),
            ));
        }
        doc.push((comp.clone(), J::O(obj)));
    }
    m.write(&manifest_path(false, label), &dump_json(&J::O(doc)));
}

fn build_cudnn(m: &Writer, label: &str) {
    let (ver, date) = cudnn_release(label);
    let base = "compute/cudnn/redist";
    let mut doc = vec![
        ("release_date".to_owned(), s(&date)),
        ("release_label".to_owned(), s(label)),
        ("release_product".to_owned(), s("cudnn")),
    ];
    let mut obj = vec![
        (
            "name".to_owned(),
            s("NVIDIA CUDA Deep Neural Network library"),
        ),
        ("license".to_owned(), s("cudnn")),
        ("license_path".to_owned(), s("cudnn/LICENSE.txt")),
        ("version".to_owned(), s(&ver)),
    ];
    m.write(&format!("{base}/cudnn/LICENSE.txt"), &license_text("cudnn"));
    for plat in PLATFORMS {
        let ext = if plat.starts_with("windows") {
            "zip"
        } else {
            "tar.xz"
        };
        let mut per = Vec::new();
        for variant in CUDNN_VARIANTS {
            let top = format!("cudnn-{plat}-{ver}_cuda{variant}-archive");
            let mut entries = vec![f("LICENSE", license_text("cudnn"), REG)];
            entries.extend(cudnn_layout(&ver, plat, variant));
            let at = format!("cudnn/{plat}/{top}.{ext}");
            per.push((
                format!("cuda{variant}"),
                m.archive(base, &at, &top, entries, &date),
            ));
        }
        obj.push((plat.to_owned(), J::O(per)));
        if plat == "linux-x86_64" {
            // NVIDIA puts cuda_variant right after the first platform.
            obj.push((
                "cuda_variant".to_owned(),
                J::A(CUDNN_VARIANTS.iter().map(|v| s(*v)).collect()),
            ));
        }
    }
    doc.push(("cudnn".to_owned(), J::O(obj)));
    // A source-only component, to prove a client skips what has no binary platform.
    let top = format!("cudnn_samples-source-{ver}-archive");
    let samples = vec![
        f("LICENSE", license_text("cudnn_samples"), REG),
        f("src/README.md", "synthetic cuDNN samples\n", REG),
    ];
    m.write(
        &format!("{base}/cudnn_samples/LICENSE.txt"),
        &license_text("cudnn_samples"),
    );
    let source = m.archive(
        base,
        &format!("cudnn_samples/source/{top}.tar.xz"),
        &top,
        samples,
        &date,
    );
    doc.push((
        "cudnn_samples".to_owned(),
        J::O(vec![
            ("name".to_owned(), s("NVIDIA cuDNN samples")),
            ("license".to_owned(), s("cudnn")),
            ("license_path".to_owned(), s("cudnn_samples/LICENSE.txt")),
            ("version".to_owned(), s(&ver)),
            ("source".to_owned(), source),
        ]),
    ));
    m.write(&manifest_path(true, label), &dump_json(&J::O(doc)));
}

// ---------------------------------------------------------------------------------------------
// Hostile archives

const BOMB_SIZE: u64 = 200 * 1024 * 1024;

/// A .tar.gz whose one library unpacks to 200 MiB of zeros (streamed: never in memory).
fn bomb_bytes(top: &str, mtime: u64) -> Vec<u8> {
    use std::io::Read;
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut b = tar::Builder::new(gz);
    for (name, dir) in [
        (format!("{top}/"), true),
        (format!("{top}/lib/"), true),
        (format!("{top}/lib/libbomb.so"), false),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(mtime);
        h.set_username("root").unwrap();
        h.set_groupname("root").unwrap();
        if dir {
            h.set_entry_type(tar::EntryType::Directory);
            h.set_mode(0o755);
            h.set_size(0);
            b.append_data(&mut h, &name, std::io::empty()).unwrap();
        } else {
            h.set_entry_type(tar::EntryType::Regular);
            h.set_mode(0o644);
            h.set_size(BOMB_SIZE);
            b.append_data(&mut h, &name, std::io::repeat(0).take(BOMB_SIZE))
                .unwrap();
        }
    }
    b.into_inner().unwrap().finish().unwrap()
}

/// `DIR/evil/<short name>` plus the same bytes under the redist scheme, named by
/// `DIR/evil/redistrib_evil.json` (component `evil_<short>`, version 1.0.0).
fn build_evil(m: &Writer) {
    let date = "2025-01-01";
    let (mtime, ver) = (epoch(date), "1.0.0");
    let top = |comp: &str, plat: &str| format!("{comp}-{plat}-{ver}-archive");
    let lin = "linux-x86_64";
    // The archive's top directory and LICENSE, then the hostile members as written.
    let tar_ = |comp: &str, hostile: Vec<Entry>| {
        let t = top(comp, lin);
        let mut all = vec![
            Entry::Dir(t.clone()),
            f(&format!("{t}/LICENSE"), license_text("evil"), REG),
        ];
        all.extend(hostile);
        tar_bytes(&all, mtime)
    };
    let t = top("evil_dotdot", lin);
    let tz = top("evil_dotdot", "windows-x86_64");
    let zip_entries = vec![
        Entry::Dir(tz.clone()),
        f(&format!("{tz}/LICENSE"), license_text("evil"), REG),
        f("../escape", "escaped\n", REG),
        f(&format!("{tz}/../../escape"), "escaped\n", REG),
    ];
    let ts = top("evil_symlink_escape", lin);
    let th = top("evil_hardlink_escape", lin);
    let td = top("evil_device", lin);
    let xz = |data: Vec<u8>| xz_bytes(&data, m.xz_blocks);
    let archives: Vec<(&str, &str, &str, Vec<u8>)> = vec![
        (
            "dotdot.tar.xz",
            "evil_dotdot",
            lin,
            xz(tar_(
                "evil_dotdot",
                vec![
                    f("../escape", "escaped\n", REG),
                    f(&format!("{t}/../../escape"), "escaped\n", REG),
                ],
            )),
        ),
        (
            "dotdot.zip",
            "evil_dotdot",
            "windows-x86_64",
            zip_bytes(&zip_entries, date),
        ),
        (
            "absolute.tar.xz",
            "evil_absolute",
            lin,
            xz(tar_(
                "evil_absolute",
                vec![f("/tmp/abs", "absolute\n", REG)],
            )),
        ),
        (
            "symlink-escape.tar.xz",
            "evil_symlink_escape",
            lin,
            xz(tar_(
                "evil_symlink_escape",
                vec![
                    Entry::Link(format!("{ts}/lib"), "../../..".into()),
                    f(&format!("{ts}/lib/owned"), "owned\n", REG),
                ],
            )),
        ),
        (
            "hardlink-escape.tar.gz",
            "evil_hardlink_escape",
            lin,
            gz_bytes(&tar_(
                "evil_hardlink_escape",
                vec![
                    Entry::Hard(format!("{th}/passwd"), "/etc/passwd".into()),
                    Entry::Hard(
                        format!("{th}/escape-link"),
                        format!("{th}/../../hardlink-escape"),
                    ),
                    f(&format!("{th}/escape-link"), "owned\n", REG),
                ],
            )),
        ),
        (
            "device.tar.gz",
            "evil_device",
            lin,
            gz_bytes(&tar_(
                "evil_device",
                vec![Entry::Char(format!("{td}/dev-null"), 1, 3)],
            )),
        ),
        (
            "bomb.tar.gz",
            "evil_bomb",
            lin,
            bomb_bytes(&top("evil_bomb", lin), mtime),
        ),
    ];
    let mut doc: Vec<(String, J)> = vec![
        ("release_date".into(), s(date)),
        ("release_label".into(), s("evil")),
        ("release_product".into(), s("cuda")),
    ];
    for (short, comp, plat, data) in archives {
        let ext = short.split_once('.').unwrap().1;
        let rel = format!("{comp}/{plat}/{}.{ext}", top(comp, plat));
        m.write(&format!("evil/{short}"), &data);
        m.write(&format!("evil/{rel}"), &data);
        let platform = (plat.to_owned(), meta(&rel, &data));
        match doc.iter_mut().find(|(k, _)| k == comp) {
            Some((_, J::O(obj))) => obj.push(platform),
            _ => doc.push((
                comp.to_owned(),
                J::O(vec![
                    ("name".into(), s(format!("Hostile archive ({comp})"))),
                    ("license".into(), s("evil")),
                    ("license_path".into(), s(format!("{comp}/LICENSE.txt"))),
                    ("version".into(), s(ver)),
                    platform,
                ]),
            )),
        }
    }
    m.write("evil/redistrib_evil.json", &dump_json(&J::O(doc)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cudaups_reader_reads_the_mirror_it_builds() {
        let dir = synthetic_mirror(&[]);
        let json = dir.path().join("compute/cuda/redist/redistrib_13.0.2.json");
        let bytes = fs_err::read(&json).unwrap();
        let at = cudaup::fetch::Location::File(json);
        let redist = cudaup::sources::redist::Redist::parse(&at, &bytes).unwrap();
        assert_eq!(redist.release(), "13.0.2");
        assert!(redist.components().contains(&"cuda_nvcc"));
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("{\n    \"release_date\": \"2025-10-09\",\n    \"release_label\""));
        // Deterministic: a second build is byte-identical.
        let again = synthetic_mirror(&[]);
        let rel = "compute/cuda/redist/cuda_nvcc/linux-x86_64/cuda_nvcc-linux-x86_64-13.0.88-archive.tar.xz";
        assert_eq!(
            fs_err::read(dir.path().join(rel)).unwrap(),
            fs_err::read(again.path().join(rel)).unwrap()
        );
    }

    #[test]
    fn epoch_of_a_date() {
        assert_eq!(epoch("1970-01-01"), 0);
        assert_eq!(epoch("2025-10-09"), 1_759_968_000);
    }
}
