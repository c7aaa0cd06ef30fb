#!/usr/bin/env python3
"""Build a small, synthetic mirror of NVIDIA's redistributable archives for tests.

Usage:
    python3 scripts/make-synthetic-mirror.py DIR [--cuda 13.0.2] [--cudnn 9.17.0]
                                             [--xz-threads N] [--evil]

Writes, in NVIDIA's exact layout (a test points cudaup at `file://DIR` or serves DIR over
loopback HTTP, like rustup's on-disk mock dist server):

    DIR/compute/cuda/redist/redistrib_<cuda>.json
    DIR/compute/cuda/redist/<component>/LICENSE.txt              (the license_path)
    DIR/compute/cuda/redist/<component>/<platform>/
        <component>-<platform>-<version>-archive.{tar.xz,zip}
    DIR/compute/cudnn/redist/redistrib_<cudnn>.json
    DIR/compute/cudnn/redist/cudnn/<platform>/
        cudnn-<platform>-<version>_cuda<N>-archive.{tar.xz,zip}
    DIR/evil/...                                                 (--evil only)

The JSON has NVIDIA's shape (see /work/shared/reference/compat.md section 7): `release_date`,
`release_label`, `release_product`, then one object per component (`name`, `license`,
`license_path`, `version`, then per platform `relative_path`, `sha256`, `md5`, `size` as a
decimal string; cuDNN nests each platform by `cuda12`/`cuda13` and adds `cuda_variant`),
indented by 4, keys in NVIDIA's order. Hashes and sizes are those of the written bytes.

Every archive holds one top-level directory `<component>-<platform>-<version>-archive/` with
LICENSE and the real sub-layout of that component (bin/, include/, lib/ with versioned .so
files and their symlink chains, nvvm/..., Windows bin/*.dll and lib/x64/*.lib), but each file
holds a few bytes only. Exceptions: linux `bin/nvcc` is a POSIX sh script (mode 0755) that
prints the real `nvcc --version` banner for the component version and refuses anything else
(the command-line tools — cuobjdump, nvdisasm, cu++filt, nvprune, compute-sanitizer, cuda-gdb,
ncu, nsys — likewise answer only `--version`);
cuDNN's `include/cudnn_version.h` has the real CUDNN_MAJOR/MINOR/PATCHLEVEL defines; cuda.h,
cuda_runtime_api.h and cublas_api.h carry their real version defines.

Output is deterministic: mtimes = the release date (00:00 UTC), uid/gid 0, sorted members,
fixed compression settings; two runs give byte-identical files.

--xz-threads N splits every .tar.xz into N xz blocks inside ONE xz stream, as `xz -T N` does
(with N blocks instead of xz's 3 x dict-size block size, since the tars here are tiny).
Python's lzma module has no block-size option, so each block is compressed on its own and the
stream (header, blocks, index, footer) is assembled here; no external `xz` is needed.

Sources for component keys, versions and layouts
-----------------------------------------------
  [NIX-13.0.0]  NixOS/nixpkgs pkgs/development/cuda-modules/cuda/manifests/redistrib_13.0.0.json
                (release_date 2025-08-04; names, licenses, platforms and every 13.0.0 version)
  [NIX-13.0.2]  NixOS/nixpkgs pkgs/development/cuda-modules/_cuda/manifests/cuda/redistrib_13.0.2.json
                (NVIDIA's redistrib_13.0.2.json: every component version of 13.0.2 but the
                [PIN-13.0.2] ones, which agree; names; which components have no Windows build)
  [NIX-11.4.4]  NixOS/nixpkgs pkgs/development/cuda-modules/cuda/manifests/redistrib_11.4.4.json
                (no cuda_profiler_api; no libnvjitlink)
  [NIX-CUDNN]   NixOS/nixpkgs pkgs/development/cuda-modules/cudnn/manifests/redistrib_9.10.0.json
                (cudnn/cudnn_samples names, license, per-variant nesting, cuda_variant placement)
  [PIN-13.0.2]  third-party scripts that pin archives from redistrib_13.0.2.json with sha256:
                cuda_nvcc 13.0.88, cuda_crt 13.0.88, libnvvm 13.0.88, cuda_cudart 13.0.96,
                cuda_cccl 13.0.85 (a PaddlePaddle GLM52 setup script; a TileLang toolchain
                script), cuda_nvrtc 13.0.88 (DotCompute fetch-cuda-natives script), libcublas
                13.1.0.3 (Bazel rules in two repos, same sha256 88bc951e...).
  [XLA]         google-ml-infra/rules_ml_toolchain third_party/gpus/cuda/hermetic/*.BUILD.tpl
                (files inside each redist archive: cuda_nvcc bin/{nvcc,ptxas,nvlink,fatbinary,
                bin2c} + bin/crt/link.stub; CUDA 13 moves include/crt/** to cuda_crt and
                nvvm/bin/cicc + nvvm/libdevice/libdevice.10.bc to libnvvm; cudart
                lib/libcudart.so.*, lib/libcudart_static.a, lib/stubs/libcuda.so, include/*;
                cublas lib/libcublas{,Lt}.so.*; nvrtc lib/libnvrtc{,-builtins}.so.*; cccl 13
                headers under include/cccl/; cudnn lib/libcudnn{,_ops,_cnn,_adv,_graph,
                _engines_precompiled,_engines_runtime_compiled,_heuristic}.so.*, include/cudnn*.h)
  [SONAMES]     libcudart.so.13 -> libcudart.so.13.0.96, libnvrtc-builtins.so.13.0,
                Windows cudart64_13.dll, nvrtc64_130_0.dll, nvrtc-builtins64_130.dll,
                cublas64_13.dll, cublasLt64_13.dll (public scripts that load or copy them)
  [BANNER]      `nvcc --version` of CUDA 13.0.2 (V13.0.88), as pasted in many public READMEs.
  cuDNN 9.17.0's build number 9.17.0.29 comes from public Nix fetchers pinning
  cudnn-linux-x86_64-9.17.0.29_cuda13-archive.tar.xz.
  Release dates of 13.0.2 and 9.17.0 were not found; the dates used are placeholders.

Other --cuda / --cudnn values get synthetic component versions (printed as a warning).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import lzma
import os
import sys
import tarfile
import time
import zipfile
import zlib

# ------------------------------------------------------------------------------------------
# Release data

# Per component: NVIDIA's name, license, and the platforms it ships for in 13.0.0 [NIX-13.0.0].
PLATFORMS = ["linux-x86_64", "linux-sbsa", "windows-x86_64"]
COMPONENT_META = {
    "cuda_cccl": ("CXX Core Compute Libraries", "CUDA Toolkit"),
    "cuda_crt": ("CUDA CRT", "CUDA Toolkit"),
    "cuda_cudart": ("CUDA Runtime (cudart)", "CUDA Toolkit"),
    "cuda_cupti": ("CUPTI", "CUDA Toolkit"),
    "cuda_nvcc": ("CUDA NVCC", "CUDA Toolkit"),
    "cuda_nvrtc": ("CUDA NVRTC", "CUDA Toolkit"),
    "cuda_sanitizer_api": ("CUDA Compute Sanitizer API", "CUDA Toolkit"),
    "libcublas": ("CUDA cuBLAS", "CUDA Toolkit"),
    "libnvvm": ("CUDA NVVM", "CUDA Toolkit"),
    # The rest of the developer toolkit [NIX-13.0.2]; linux platforms only.
    "cuda_culibos": ("CUDA MATH Library (cuda culibos)", "CUDA Toolkit"),
    "cuda_cuobjdump": ("cuobjdump", "CUDA Toolkit"),
    "cuda_cuxxfilt": ("CUDA cuxxfilt (demangler)", "CUDA Toolkit"),
    "cuda_gdb": ("CUDA GDB", "CUDA Toolkit"),
    "cuda_nvdisasm": ("CUDA nvdisasm", "CUDA Toolkit"),
    "cuda_nvml_dev": ("CUDA NVML Headers", "CUDA Toolkit"),
    "cuda_nvprune": ("CUDA nvprune", "CUDA Toolkit"),
    "cuda_nvtx": ("CUDA NVTX", "CUDA Toolkit"),
    "cuda_opencl": ("CUDA OpenCL", "CUDA Toolkit"),
    "cuda_profiler_api": ("CUDA Profiler API", "CUDA Toolkit"),
    "libcufft": ("CUDA cuFFT", "CUDA Toolkit"),
    "libcufile": ("CUDA cuFile", "CUDA Toolkit"),
    "libcurand": ("CUDA cuRAND", "CUDA Toolkit"),
    "libcusolver": ("CUDA cuSOLVER", "CUDA Toolkit"),
    "libcusparse": ("CUDA cuSPARSE", "CUDA Toolkit"),
    "libnpp": ("CUDA NPP", "CUDA Toolkit"),
    "libnvfatbin": ("NVIDIA compiler library for fatbin interaction", "CUDA Toolkit"),
    "libnvjitlink": ("NVIDIA compiler library for JIT LTO functionality", "CUDA Toolkit"),
    "libnvjpeg": ("CUDA nvJPEG", "CUDA Toolkit"),
    "libnvptxcompiler": ("CUDA libnvptxcompiler", "CUDA Toolkit"),
    "nsight_compute": ("Nsight Compute", "NVIDIA SLA"),
    "nsight_systems": ("Nsight Systems", "NVIDIA SLA"),
}
# Components NVIDIA ships for Windows too (the others get linux platforms only here).
WINDOWS = {"cuda_cccl", "cuda_crt", "cuda_cudart", "cuda_cupti", "cuda_nvcc", "cuda_nvrtc",
           "cuda_sanitizer_api", "libcublas", "libnvvm"}

CUDA_RELEASES = {
    # Everything from [NIX-13.0.0].
    "13.0.0": {
        "release_date": "2025-08-04",
        "versions": {
            "cuda_cccl": "13.0.50",
            "cuda_crt": "13.0.48",
            "cuda_cudart": "13.0.48",
            "cuda_cupti": "13.0.48",
            "cuda_nvcc": "13.0.48",
            "cuda_nvrtc": "13.0.48",
            "cuda_sanitizer_api": "13.0.48",
            "libcublas": "13.0.0.19",
            "libnvvm": "13.0.48",
        },
    },
    "13.0.2": {
        "release_date": "2025-10-09",  # placeholder: the real date was not found
        "versions": {
            "cuda_cccl": "13.0.85",  # [PIN-13.0.2]
            "cuda_crt": "13.0.88",  # [PIN-13.0.2]
            "cuda_cudart": "13.0.96",  # [PIN-13.0.2]
            "cuda_cupti": "13.0.85",  # [NIX-13.0.2]
            "cuda_nvcc": "13.0.88",  # [PIN-13.0.2]
            "cuda_nvrtc": "13.0.88",  # [PIN-13.0.2]
            "cuda_sanitizer_api": "13.0.85",  # [NIX-13.0.2]
            "libcublas": "13.1.0.3",  # [PIN-13.0.2]
            "libnvvm": "13.0.88",  # [PIN-13.0.2]
            # The rest from [NIX-13.0.2].
            "cuda_culibos": "13.0.85",
            "cuda_cuobjdump": "13.0.85",
            "cuda_cuxxfilt": "13.0.85",
            "cuda_gdb": "13.0.85",
            "cuda_nvdisasm": "13.0.85",
            "cuda_nvml_dev": "13.0.87",
            "cuda_nvprune": "13.0.85",
            "cuda_nvtx": "13.0.85",
            "cuda_opencl": "13.0.85",
            "cuda_profiler_api": "13.0.85",
            "libcufft": "12.0.0.61",
            "libcufile": "1.15.1.6",
            "libcurand": "10.4.0.35",
            "libcusolver": "12.0.4.66",
            "libcusparse": "12.6.3.3",
            "libnpp": "13.0.1.2",
            "libnvfatbin": "13.0.85",
            "libnvjitlink": "13.0.88",
            "libnvjpeg": "13.0.1.86",
            "libnvptxcompiler": "13.0.88",
            "nsight_compute": "2025.3.1.4",
            "nsight_systems": "2025.3.2.474",
        },
    },
}

CUDNN_RELEASES = {
    # Build numbers of 9.28.x: PyPI's nvidia-cudnn-cu13 9.28.1.4 and nvidia-cudnn-cu12 9.28.0.42
    # (https://pypi.org/simple/nvidia-cudnn-cu13/); dates from compat-2026-12.md §3.
    "9.28.1": {"version": "9.28.1.4", "release_date": "2026-11-06"},
    "9.28.0": {"version": "9.28.0.42", "release_date": "2026-11-04"},
    "9.17.0": {"version": "9.17.0.29", "release_date": "2025-12-04"},  # date: placeholder
    "9.16.0": {"version": "9.16.0.29", "release_date": "2025-11-06"},  # date: placeholder
    "9.10.0": {"version": "9.10.0.56", "release_date": "2025-05-07"},  # [NIX-CUDNN]
}
CUDNN_VARIANTS = ["12", "13"]

NVCC_BANNER = (
    "nvcc: NVIDIA (R) Cuda compiler driver\n"
    "Copyright (c) 2005-2025 NVIDIA Corporation\n"
    "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
    "Cuda compilation tools, release {mm}, V{ver}\n"
    "Build cuda_{mm}.r{mm}/compiler.36424714_0\n"
)
NVCC_FATAL = "nvcc fatal   : synthetic nvcc: compilation is not available in the test mirror"


def warn(msg: str) -> None:
    print(f"warning: {msg}", file=sys.stderr)


def parse_version(v: str) -> tuple[int, int, int]:
    parts = v.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise SystemExit(f"error: version must be X.Y.Z, got {v!r}")
    return int(parts[0]), int(parts[1]), int(parts[2])


def cuda_release(v: str) -> dict:
    if v in CUDA_RELEASES:
        return CUDA_RELEASES[v]
    x, y, z = parse_version(v)
    warn(f"CUDA {v} has no recorded component versions; using synthetic ones")
    if x < 13:
        warn("CUDA 12-and-older layout: no cuda_crt/libnvvm, nvcc carries include/crt and nvvm/")
    mm = f"{x}.{y}"
    versions = {
        "cuda_cccl": f"{mm}.{70 + z}",
        "cuda_crt": f"{mm}.{80 + z}",
        "cuda_cudart": f"{mm}.{90 + z}",
        "cuda_cupti": f"{mm}.{60 + z}",
        "cuda_nvcc": f"{mm}.{80 + z}",
        "cuda_nvrtc": f"{mm}.{80 + z}",
        "cuda_sanitizer_api": f"{mm}.{60 + z}",
        "libcublas": f"{mm}.{z}.19",
        "libnvvm": f"{mm}.{80 + z}",
    }
    for comp in COMPONENT_META:
        if comp not in versions:
            versions[comp] = f"{mm}.{50 + z}"
    # Every version names its major too: two releases of one mirror (12.2.2 and 13.2.2) must
    # not write different archives to one path.
    versions.update({"libcufft": f"{x - 1}.{y}.{z}.20", "libcurand": f"10.{x}{y}.{z}.20",
                     "libcusparse": f"{x - 1}.{y}.{z}.20", "libcusolver": f"{x - 1}.{y}.{z}.20",
                     "libcufile": f"1.{x}{y}.{z}.20", "nsight_compute": f"20{x + 12}.{y}.{z}.1",
                     "nsight_systems": f"20{x + 12}.{y}.{z}.1"})
    # What older redistrib JSONs lack: cuda_crt, libnvvm, libnvptxcompiler and cuda_culibos are
    # components of their own from 13.0 [NIX-13.0.0]; libnvjitlink from 12.0, libnvfatbin from
    # 12.4; redistrib_11.4.4.json has no cuda_profiler_api [NIX-11.4.4].
    if x < 13:
        for comp in ("cuda_crt", "libnvvm", "libnvptxcompiler", "cuda_culibos"):
            del versions[comp]
    if x < 12:
        del versions["libnvjitlink"], versions["cuda_profiler_api"]
    if (x, y) < (12, 4):
        del versions["libnvfatbin"]
    return {"release_date": f"{2013 + x}-01-01", "versions": versions}


def cudnn_release(v: str) -> dict:
    if v in CUDNN_RELEASES:
        return CUDNN_RELEASES[v]
    parse_version(v)
    warn(f"cuDNN {v} has no recorded build number; using {v}.1")
    return {"version": f"{v}.1", "release_date": "2025-01-01"}


# ------------------------------------------------------------------------------------------
# Archive contents. An entry is (kind, path, payload, mode): kind "f" (payload = bytes) or
# "l" (symlink, payload = target). Paths are relative to the archive's top-level directory.

EXE = 0o755
REG = 0o644


def f(path: str, data: bytes | str, mode: int = REG):
    return ("f", path, data.encode() if isinstance(data, str) else data, mode)


def blob(path: str, what: str, mode: int = REG):
    """A tiny placeholder: ELF/PE/ar magic plus a line saying what it stands for."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".dll", ".exe")):
        magic = b"MZ"
    elif name.endswith((".a", ".lib")):
        magic = b"!<arch>\n"
    elif name.endswith(".bc"):
        magic = b"BC\xc0\xde"
    elif ".so" in name or mode == EXE:
        magic = b"\x7fELF"
    else:
        magic = b""
    return f(path, magic + f" synthetic {what}\n".encode(), mode)


def header(path: str, comp: str, ver: str, extra: str = ""):
    return f(path, f"/* synthetic {path.rsplit('/', 1)[-1]} from {comp} {ver} */\n{extra}")


def so_chain(d: str, lib: str, soname: str, full: str, what: str):
    """lib.so -> lib.so.<soname> -> lib.so.<full> (the last a file), as NVIDIA ships them."""
    return [
        ("l", f"{d}/{lib}.so", f"{lib}.so.{soname}", 0o777),
        ("l", f"{d}/{lib}.so.{soname}", f"{lib}.so.{full}", 0o777),
        blob(f"{d}/{lib}.so.{full}", what),
    ]


def nvcc_script(ver: str) -> str:
    mm = ".".join(ver.split(".")[:2])
    banner = NVCC_BANNER.format(mm=mm, ver=ver)
    lines = "".join(f"    printf '%s\\n' '{line}'\n" for line in banner.splitlines())
    return (
        "#!/bin/sh\n"
        "# Synthetic nvcc from cudaup's test mirror (scripts/make-synthetic-mirror.py).\n"
        "# It only answers --version (and its alias -V); it cannot compile.\n"
        'if [ "$#" -eq 1 ] && { [ "$1" = "--version" ] || [ "$1" = "-V" ]; }; then\n'
        f"{lines}"
        "    exit 0\n"
        "fi\n"
        f"echo '{NVCC_FATAL}' >&2\n"
        "exit 1\n"
    )


def tool_script(name: str, comp: str, ver: str) -> str:
    """A POSIX sh stand-in for a command-line tool: answers --version, refuses the rest."""
    return (
        "#!/bin/sh\n"
        f"# Synthetic {name} from cudaup's test mirror ({comp} {ver}); it only answers --version.\n"
        'if [ "$#" -eq 1 ] && [ "$1" = "--version" ]; then\n'
        f"    printf '%s\\n' '{name}: NVIDIA (R) {name}' 'Copyright (c) 2005-2025 NVIDIA Corporation' "
        f"'Version {ver}'\n"
        "    exit 0\n"
        "fi\n"
        f"echo '{name}: synthetic {name}: not available in the test mirror' >&2\n"
        "exit 1\n"
    )


NVCC_PROFILE = """
TOP              = $(_HERE_)/..

CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice

LD_LIBRARY_PATH += $(TOP)/lib:
PATH            += $(CICC_PATH):$(_HERE_):

INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)

LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"

CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""

CRT_HEADERS = [
    "common_functions.h", "device_functions.h", "host_config.h", "host_defines.h",
    "host_runtime.h", "math_functions.h", "math_functions.hpp", "sm_90_rt.h",
]


PAD_MIB = 0


def padding(n: int) -> bytes:
    """Deterministic, incompressible bytes (a SHA-256 counter stream)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(i.to_bytes(8, "little")).digest()
        i += 1
    return bytes(out[:n])


def layout(comp: str, ver: str, plat: str, cuda: tuple[int, int, int]) -> list:
    win = plat.startswith("windows")
    major = cuda[0]
    cuda_num = major * 1000 + cuda[1] * 10
    what = lambda name: f"{name} ({comp} {ver} {plat})"  # noqa: E731
    e: list = []
    if comp == "cuda_nvcc":
        tools = ["bin2c", "cudafe++", "fatbinary", "nvlink", "ptxas"]
        if win:
            e.append(blob("bin/nvcc.exe", what("nvcc.exe")))
            e += [blob(f"bin/{t}.exe", what(t)) for t in tools]
        else:
            e.append(f("bin/nvcc", nvcc_script(ver), EXE))
            e += [blob(f"bin/{t}", what(t), EXE) for t in tools]
        e.append(f("bin/nvcc.profile", NVCC_PROFILE))
        if PAD_MIB and not win:
            # Incompressible padding, for tests that need real sizes (a full disk, progress).
            e.append(f("bin/padding.bin", padding(PAD_MIB << 20)))
        e.append(blob("bin/crt/link.stub", what("link.stub")))
        e.append(blob("bin/crt/prelink.stub", what("prelink.stub")))
        e.append(header("include/fatbinary_section.h", comp, ver))
        if major < 13:  # crt, nvvm and nvptxcompiler moved out of cuda_nvcc in CUDA 13 [XLA]
            e += [header(f"include/crt/{h}", comp, ver) for h in CRT_HEADERS]
            e += layout("libnvvm", ver, plat, cuda)
            e.append(header("include/nvPTXCompiler.h", comp, ver))
            e.append(blob("lib/x64/nvptxcompiler_static.lib" if win
                          else "lib/libnvptxcompiler_static.a", what("nvptxcompiler")))
    elif comp == "cuda_crt":
        e += [header(f"include/crt/{h}", comp, ver) for h in CRT_HEADERS]
    elif comp == "libnvvm":
        e.append(header("nvvm/include/nvvm.h", comp, ver))
        e.append(blob("nvvm/libdevice/libdevice.10.bc", what("libdevice.10.bc")))
        if win:
            e.append(blob("nvvm/bin/cicc.exe", what("cicc")))
            e.append(blob("nvvm/bin/nvvm64_40_0.dll", what("nvvm64_40_0.dll")))
            e.append(blob("nvvm/lib/x64/nvvm.lib", what("nvvm.lib")))
        else:
            e.append(blob("nvvm/bin/cicc", what("cicc"), EXE))
            e += so_chain("nvvm/lib64", "libnvvm", "4", "4.0.0", what("libnvvm"))
    elif comp == "cuda_cudart":
        e.append(header("include/cuda.h", comp, ver, f"#define CUDA_VERSION {cuda_num}\n"))
        e.append(header("include/cuda_runtime_api.h", comp, ver,
                        f"#define CUDART_VERSION {cuda_num}\n"))
        for h in ["cuda_runtime.h", "driver_types.h", "vector_types.h", "cuda_fp16.h",
                  "cooperative_groups.h", "cooperative_groups/reduce.h"]:
            e.append(header(f"include/{h}", comp, ver))
        if win:
            e.append(blob(f"bin/cudart64_{major}.dll", what("cudart")))
            for lib in ["cuda", "cudadevrt", "cudart", "cudart_static"]:
                e.append(blob(f"lib/x64/{lib}.lib", what(lib)))
        else:
            e += so_chain("lib", "libcudart", str(major), ver, what("libcudart"))
            e.append(blob("lib/libcudart_static.a", what("libcudart_static")))
            e.append(blob("lib/libcudadevrt.a", what("libcudadevrt")))
            e.append(blob("lib/stubs/libcuda.so", what("libcuda stub")))
    elif comp == "cuda_cccl":
        inc = "include/cccl" if major >= 13 else "include"
        for h in ["cub/cub.cuh", "cuda/std/version", "nv/target", "thrust/version.h"]:
            e.append(header(f"{inc}/{h}", comp, ver))
        for p in ["cccl", "cub", "libcudacxx", "thrust"]:
            e.append(f(f"lib/cmake/{p}/{p}-config.cmake", f"# synthetic {p}-config.cmake\n"))
    elif comp == "cuda_nvrtc":
        e.append(header("include/nvrtc.h", comp, ver))
        mm = "".join(ver.split(".")[:2])  # 13.0.88 -> "130"
        if win:
            e.append(blob(f"bin/nvrtc64_{mm}_0.dll", what("nvrtc")))
            e.append(blob(f"bin/nvrtc-builtins64_{mm}.dll", what("nvrtc-builtins")))
            e.append(blob("lib/x64/nvrtc.lib", what("nvrtc.lib")))
            e.append(blob("lib/x64/nvrtc_static.lib", what("nvrtc_static.lib")))
        else:
            mmdot = ".".join(ver.split(".")[:2])
            e += so_chain("lib", "libnvrtc", str(major), ver, what("libnvrtc"))
            e += so_chain("lib", "libnvrtc-builtins", mmdot, ver, what("libnvrtc-builtins"))
            e.append(blob("lib/libnvrtc_static.a", what("libnvrtc_static")))
            e.append(blob("lib/libnvrtc-builtins_static.a", what("libnvrtc-builtins_static")))
    elif comp == "libcublas":
        v = ver.split(".") + ["0"] * 4
        defs = "".join(f"#define CUBLAS_VER_{k} {n}\n"
                       for k, n in zip(["MAJOR", "MINOR", "PATCH", "BUILD"], v[:4]))
        e.append(header("include/cublas_api.h", comp, ver, defs))
        for h in ["cublas.h", "cublasLt.h", "cublasXt.h", "cublas_v2.h"]:
            e.append(header(f"include/{h}", comp, ver))
        sov = ver.split(".")[0]
        if win:
            for lib in ["cublas", "cublasLt", "nvblas"]:
                e.append(blob(f"bin/{lib}64_{sov}.dll", what(lib)))
            for lib in ["cublas", "cublasLt", "nvblas"]:
                e.append(blob(f"lib/x64/{lib}.lib", what(lib)))
        else:
            for lib in ["libcublas", "libcublasLt", "libnvblas"]:
                e += so_chain("lib", lib, sov, ver, what(lib))
            e.append(blob("lib/libcublas_static.a", what("libcublas_static")))
            e.append(blob("lib/libcublasLt_static.a", what("libcublasLt_static")))
    elif comp == "cuda_cupti":
        e.append(header("include/cupti.h", comp, ver))
        if win:
            e.append(blob(f"bin/cupti64_{ver}.dll", what("cupti")))
            e.append(blob("lib/x64/cupti.lib", what("cupti.lib")))
        else:
            e += so_chain("lib", "libcupti", str(major), ver, what("libcupti"))
    elif comp == "cuda_sanitizer_api":
        if win:
            e.append(blob("compute-sanitizer/compute-sanitizer.exe", what("compute-sanitizer")))
            e.append(f("bin/compute-sanitizer.bat", "@echo off\r\nexit /b 1\r\n"))
        else:
            e.append(f("compute-sanitizer/compute-sanitizer",
                       tool_script("compute-sanitizer", comp, ver), EXE))
            e.append(blob("compute-sanitizer/libsanitizer-collection.so", what("sanitizer")))
            e.append(("l", "bin/compute-sanitizer", "../compute-sanitizer/compute-sanitizer",
                      0o777))
        e.append(header("compute-sanitizer/include/sanitizer.h", comp, ver))
    elif comp in LIBRARIES:
        headers, libs = LIBRARIES[comp]
        e += [header(f"include/{h}", comp, ver) for h in headers]
        for lib in libs:
            if lib.endswith(".a"):
                e.append(blob(f"lib/{lib}", what(lib)))
            else:
                name, soname = lib.split(":")
                soname = soname.replace("{major}", ver.split(".")[0])
                e += so_chain("lib", name, soname, ver, what(name))
        for path in TOOLS.get(comp, []):
            e.append(f(path, tool_script(path.rsplit("/", 1)[-1], comp, ver), EXE))
        if comp == "cuda_nvml_dev":
            e.append(blob("lib/stubs/libnvidia-ml.so", what("libnvidia-ml stub")))
            e.append(header("nvml/example/example.c", comp, ver))
    elif comp in TOOLS:
        for path in TOOLS[comp]:
            if win:
                e.append(blob(path + ".exe", what(path.rsplit("/", 1)[-1])))
            else:
                e.append(f(path, tool_script(path.rsplit("/", 1)[-1], comp, ver), EXE))
        if comp == "nsight_compute":
            e.append(f("sections/SpeedOfLight.section", "synthetic section\n"))
    else:
        raise AssertionError(comp)
    return e


# (headers, libraries): "libname:soname" gets a so_chain ({major} = the component's major),
# ".a" a static archive. Names as in the real archives [NIX-13.0.2], [XLA].
LIBRARIES = {
    "cuda_culibos": ([], ["libculibos.a"]),
    "cuda_cuxxfilt": (["nv_decode.h"], ["libcufilt.a"]),
    "cuda_nvml_dev": (["nvml.h"], []),
    "cuda_nvtx": (["nvtx3/nvToolsExt.h", "nvtx3/nvToolsExtCuda.h"], ["libnvtx3interop:1"]),
    "cuda_opencl": (["CL/cl.h", "CL/opencl.h"], ["libOpenCL:1"]),
    "cuda_profiler_api": (["cudaProfiler.h", "cuda_profiler_api.h"], []),
    "libcufft": (["cufft.h", "cufftw.h", "cufftXt.h"],
                 ["libcufft:{major}", "libcufftw:{major}", "libcufft_static.a"]),
    "libcufile": (["cufile.h"], ["libcufile:0", "libcufile_rdma:1"]),
    "libcurand": (["curand.h", "curand_kernel.h"], ["libcurand:{major}", "libcurand_static.a"]),
    "libcusolver": (["cusolverDn.h", "cusolverSp.h", "cusolver_common.h"],
                    ["libcusolver:{major}", "libcusolverMg:{major}", "libcusolver_static.a"]),
    "libcusparse": (["cusparse.h"], ["libcusparse:{major}", "libcusparse_static.a"]),
    "libnpp": (["npp.h", "nppcore.h", "nppdefs.h", "npps.h", "nppi.h"],
               ["libnppc:{major}", "libnpps:{major}", "libnppial:{major}", "libnppc_static.a"]),
    "libnvfatbin": (["nvFatbin.h"], ["libnvfatbin:{major}"]),
    "libnvjitlink": (["nvJitLink.h"], ["libnvJitLink:{major}", "libnvJitLink_static.a"]),
    "libnvjpeg": (["nvjpeg.h"], ["libnvjpeg:{major}", "libnvjpeg_static.a"]),
    "libnvptxcompiler": (["nvPTXCompiler.h"], ["libnvptxcompiler_static.a"]),
}
TOOLS = {
    "cuda_cuxxfilt": ["bin/cu++filt"],
    "cuda_cuobjdump": ["bin/cuobjdump"],
    "cuda_nvdisasm": ["bin/nvdisasm"],
    "cuda_nvprune": ["bin/nvprune"],
    "cuda_gdb": ["bin/cuda-gdb", "bin/cuda-gdbserver"],
    "nsight_compute": ["ncu", "ncu-ui"],
    "nsight_systems": ["target-linux-x64/nsys", "bin/nsys"],
}


CUDNN_LIBS = ["cudnn", "cudnn_adv", "cudnn_cnn", "cudnn_engines_precompiled",
              "cudnn_engines_runtime_compiled", "cudnn_graph", "cudnn_heuristic", "cudnn_ops"]


def cudnn_layout(ver: str, plat: str, variant: str) -> list:
    major, minor, patch = ver.split(".")[:3]
    what = lambda name: f"{name} (cudnn {ver} cuda{variant} {plat})"  # noqa: E731
    version_h = (
        "/**\n * \\file: The master cuDNN version file.\n */\n\n"
        "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
        f"#define CUDNN_PATCHLEVEL {patch}\n\n"
        "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\n"
        "#endif /* CUDNN_VERSION_H */\n"
    )
    e = [f("include/cudnn_version.h", version_h)]
    for h in ["cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h",
              "cudnn_ops.h"]:
        e.append(header(f"include/{h}", "cudnn", ver))
    if plat.startswith("windows"):
        for lib in CUDNN_LIBS:
            e.append(blob(f"bin/{lib}64_{major}.dll", what(lib)))
            e.append(blob(f"lib/x64/{lib}.lib", what(lib)))
    else:
        for lib in CUDNN_LIBS:
            e += so_chain("lib", f"lib{lib}", major, f"{major}.{minor}.{patch}", what(lib))
        e.append(blob("lib/libcudnn_adv_static.a", what("cudnn_adv_static")))
    return e


def license_text(comp: str) -> bytes:
    return (f"Synthetic LICENSE for {comp} in cudaup's test mirror.\n"
            "This is not NVIDIA's license text and no NVIDIA software is included.\n").encode()


# ------------------------------------------------------------------------------------------
# Writers

def with_dirs(entries: list) -> list:
    """Adds a directory entry for every parent, then sorts by path (a parent sorts first)."""
    out = {}
    for ent in entries:
        out[ent[1]] = ent
        parts = ent[1].split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            out.setdefault(d, ("d", d, None, 0o755))
    return [out[k] for k in sorted(out)]


def tar_bytes(top: str | None, entries: list, mtime: int, sort: bool = True) -> bytes:
    if top is not None:
        entries = [("d", "", None, 0o755)] + entries
        entries = [(k, f"{top}/{p}".rstrip("/") if p else top, d, m) for k, p, d, m in entries]
    if sort:
        entries = with_dirs(entries)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for kind, path, data, mode in entries:
            ti = tarfile.TarInfo(path)
            ti.mtime, ti.mode = mtime, mode
            ti.uid = ti.gid = 0
            ti.uname = ti.gname = "root"
            if kind == "d":
                ti.type = tarfile.DIRTYPE
                tf.addfile(ti)
            elif kind == "l":
                ti.type, ti.linkname = tarfile.SYMTYPE, data
                tf.addfile(ti)
            elif kind == "h":
                ti.type, ti.linkname = tarfile.LNKTYPE, data
                tf.addfile(ti)
            elif kind == "c":
                ti.type, (ti.devmajor, ti.devminor) = tarfile.CHRTYPE, data
                tf.addfile(ti)
            else:
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _read_varint(b: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        c = b[pos]
        pos += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, pos


XZ_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 6}]


def xz_bytes(data: bytes, blocks: int) -> bytes:
    """An .xz stream with CRC64 checks; `blocks` > 1 splits the input into that many xz
    blocks of one stream, like `xz -T N` does for input larger than its block size."""
    one = lambda d: lzma.compress(d, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,  # noqa: E731
                                  filters=XZ_FILTERS)
    if blocks <= 1 or len(data) < 2:
        return one(data)
    size = -(-len(data) // blocks)
    stream_header = b""
    block_bytes, records = [], []
    for i in range(0, len(data), size):
        s = one(data[i:i + size])
        stream_header = s[:12]
        backward = (int.from_bytes(s[-8:-4], "little") + 1) * 4
        index = s[len(s) - 12 - backward:len(s) - 12]
        assert index[0] == 0
        count, pos = _read_varint(index, 1)
        assert count == 1
        unpadded, pos = _read_varint(index, pos)
        uncompressed, pos = _read_varint(index, pos)
        block_bytes.append(s[12:len(s) - 12 - backward])
        records.append((unpadded, uncompressed))
    index = bytearray(b"\x00" + _varint(len(records)))
    for unpadded, uncompressed in records:
        index += _varint(unpadded) + _varint(uncompressed)
    index += b"\x00" * (-len(index) % 4)
    index += zlib.crc32(index).to_bytes(4, "little")
    flags = stream_header[6:8]
    backward_field = (len(index) // 4 - 1).to_bytes(4, "little")
    footer = zlib.crc32(backward_field + flags).to_bytes(4, "little") + backward_field + flags
    return stream_header + b"".join(block_bytes) + bytes(index) + footer + b"YZ"


def gz_bytes(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip wrapper, mtime 0, no name: deterministic
    return c.compress(data) + c.flush()


def zip_bytes(top: str | None, entries: list, mtime: int, sort: bool = True) -> bytes:
    if top is not None:
        entries = [(k, f"{top}/{p}", d, m) for k, p, d, m in entries]
    if sort:
        entries = with_dirs(entries)
    dt = time.gmtime(mtime)[:6]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for kind, path, data, _mode in entries:
            if kind == "d":
                zi = zipfile.ZipInfo(path.rstrip("/") + "/", dt)
                zi.external_attr, zi.compress_type = 0x10, zipfile.ZIP_STORED
                data = b""
            else:
                assert kind == "f", kind
                zi = zipfile.ZipInfo(path, dt)
                zi.external_attr, zi.compress_type = 0x20, zipfile.ZIP_DEFLATED
            zi.create_system = 0  # MS-DOS attributes, as in archives made on Windows
            zf.writestr(zi, data, compresslevel=9)
    return buf.getvalue()


class Mirror:
    def __init__(self, root: str, xz_blocks: int):
        self.root, self.xz_blocks = root, xz_blocks
        self.count = self.total = 0

    def write(self, rel_to_root: str, data: bytes, summary: bool = True) -> None:
        path = os.path.join(self.root, rel_to_root)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        if summary:
            self.count += 1
            self.total += len(data)
            print(f"{rel_to_root}  {len(data)}")

    def archive(self, base: str, rel: str, top: str, entries: list, mtime: int) -> dict:
        """Writes one component archive at base/rel; returns its JSON platform object."""
        if rel.endswith(".zip"):
            data = zip_bytes(top, entries, mtime)
        else:
            data = xz_bytes(tar_bytes(top, entries, mtime), self.xz_blocks)
        self.write(f"{base}/{rel}", data)
        return meta(rel, data)


def meta(rel: str, data: bytes) -> dict:
    return {
        "relative_path": rel,
        "sha256": hashlib.sha256(data).hexdigest(),
        "md5": hashlib.md5(data).hexdigest(),
        "size": str(len(data)),
    }


def epoch(date: str) -> int:
    d = datetime.date.fromisoformat(date)
    return int(datetime.datetime(d.year, d.month, d.day, tzinfo=datetime.timezone.utc).timestamp())


def dump_json(obj: dict) -> bytes:
    return json.dumps(obj, indent=4).encode()  # NVIDIA's: 4 spaces, ", " / ": ", no final newline


def build_cuda(m: Mirror, label: str) -> None:
    rel = cuda_release(label)
    cuda = parse_version(label)
    mtime = epoch(rel["release_date"])
    base = "compute/cuda/redist"
    doc = {"release_date": rel["release_date"], "release_label": label,
           "release_product": "cuda"}
    for comp in sorted(rel["versions"]):
        ver = rel["versions"][comp]
        name, lic = COMPONENT_META[comp]
        obj = {"name": name, "license": lic, "license_path": f"{comp}/LICENSE.txt",
               "version": ver}
        m.write(f"{base}/{comp}/LICENSE.txt", license_text(comp), summary=False)
        for plat in PLATFORMS:
            if plat.startswith("windows") and comp not in WINDOWS:
                continue
            if comp == "cuda_opencl" and plat == "linux-sbsa":
                continue  # [NIX-13.0.2]: linux-x86_64 only
            ext = "zip" if plat.startswith("windows") else "tar.xz"
            top = f"{comp}-{plat}-{ver}-archive"
            entries = [f("LICENSE", license_text(comp))] + layout(comp, ver, plat, cuda)
            obj[plat] = m.archive(base, f"{comp}/{plat}/{top}.{ext}", top, entries, mtime)
        doc[comp] = obj
    m.write(f"{base}/redistrib_{label}.json", dump_json(doc))


def build_cudnn(m: Mirror, label: str) -> None:
    rel = cudnn_release(label)
    ver, mtime = rel["version"], epoch(rel["release_date"])
    base = "compute/cudnn/redist"
    doc = {"release_date": rel["release_date"], "release_label": label,
           "release_product": "cudnn"}
    obj = {"name": "NVIDIA CUDA Deep Neural Network library", "license": "cudnn",
           "license_path": "cudnn/LICENSE.txt", "version": ver}
    m.write(f"{base}/cudnn/LICENSE.txt", license_text("cudnn"), summary=False)
    for plat in PLATFORMS:
        ext = "zip" if plat.startswith("windows") else "tar.xz"
        per = {}
        for variant in CUDNN_VARIANTS:
            top = f"cudnn-{plat}-{ver}_cuda{variant}-archive"
            entries = [f("LICENSE", license_text("cudnn"))] + cudnn_layout(ver, plat, variant)
            per[f"cuda{variant}"] = m.archive(base, f"cudnn/{plat}/{top}.{ext}", top, entries,
                                              mtime)
        obj[plat] = per
        if plat == "linux-x86_64":  # NVIDIA puts cuda_variant right after the first platform
            obj["cuda_variant"] = list(CUDNN_VARIANTS)
    doc["cudnn"] = obj
    # A source-only component, to prove a client skips what has no binary platform.
    top = f"cudnn_samples-source-{ver}-archive"
    samples = [f("LICENSE", license_text("cudnn_samples")),
               f("src/README.md", "synthetic cuDNN samples\n")]
    m.write(f"{base}/cudnn_samples/LICENSE.txt", license_text("cudnn_samples"), summary=False)
    doc["cudnn_samples"] = {
        "name": "NVIDIA cuDNN samples", "license": "cudnn",
        "license_path": "cudnn_samples/LICENSE.txt", "version": ver,
        "source": m.archive(base, f"cudnn_samples/source/{top}.tar.xz", top, samples, mtime),
    }
    m.write(f"{base}/redistrib_{label}.json", dump_json(doc))


# ------------------------------------------------------------------------------------------
# Hostile archives

BOMB_SIZE = 200 * 1024 * 1024


class _Zeros:
    def __init__(self):
        self.chunk = bytes(1 << 20)

    def read(self, n: int = -1) -> bytes:
        return self.chunk[:n] if 0 <= n <= len(self.chunk) else self.chunk


class _GzipSink:
    """A write-only file object that gzips what tarfile writes (the bomb never sits in RAM)."""

    def __init__(self):
        self.c, self.out, self.pos = zlib.compressobj(9, zlib.DEFLATED, 31), [], 0

    def write(self, b) -> int:
        self.out.append(self.c.compress(b))
        self.pos += len(b)
        return len(b)

    def tell(self) -> int:
        return self.pos

    def finish(self) -> bytes:
        self.out.append(self.c.flush())
        return b"".join(self.out)


def bomb_bytes(top: str, mtime: int) -> bytes:
    sink = _GzipSink()
    with tarfile.open(fileobj=sink, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for name, kind in [(top, tarfile.DIRTYPE), (f"{top}/lib", tarfile.DIRTYPE),
                           (f"{top}/lib/libbomb.so", tarfile.REGTYPE)]:
            ti = tarfile.TarInfo(name)
            ti.type, ti.mtime, ti.uname, ti.gname = kind, mtime, "root", "root"
            ti.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
            if kind == tarfile.REGTYPE:
                ti.size = BOMB_SIZE
                tf.addfile(ti, _Zeros())
            else:
                tf.addfile(ti)
    return sink.finish()


def build_evil(m: Mirror) -> None:
    """DIR/evil/<short name> plus the same bytes under the redist scheme, named by
    DIR/evil/redistrib_evil.json (component evil_<short>, version 1.0.0)."""
    date = "2025-01-01"
    mtime, ver = epoch(date), "1.0.0"
    lic = ("f", "LICENSE", license_text("evil"), REG)
    doc = {"release_date": date, "release_label": "evil", "release_product": "cuda"}

    def top(comp: str, plat: str = "linux-x86_64") -> str:
        return f"{comp}-{plat}-{ver}-archive"

    def tar_(comp: str, hostile: list) -> bytes:
        t = top(comp)
        return tar_bytes(None, [("d", t, None, 0o755), (lic[0], f"{t}/LICENSE", *lic[2:])]
                         + hostile, mtime, sort=False)

    t = top("evil_dotdot")
    tz = top("evil_dotdot", "windows-x86_64")
    zip_entries = [("d", tz, None, 0o755), ("f", f"{tz}/LICENSE", license_text("evil"), REG),
                   ("f", "../escape", b"escaped\n", REG),
                   ("f", f"{tz}/../../escape", b"escaped\n", REG)]
    ts, th, td = top("evil_symlink_escape"), top("evil_hardlink_escape"), top("evil_device")
    archives = [
        # short name, component, platform, bytes
        ("dotdot.tar.xz", "evil_dotdot", "linux-x86_64", xz_bytes(tar_("evil_dotdot", [
            ("f", "../escape", b"escaped\n", REG),
            ("f", f"{t}/../../escape", b"escaped\n", REG)]), m.xz_blocks)),
        ("dotdot.zip", "evil_dotdot", "windows-x86_64",
         zip_bytes(None, zip_entries, mtime, sort=False)),
        ("absolute.tar.xz", "evil_absolute", "linux-x86_64", xz_bytes(tar_("evil_absolute", [
            ("f", "/tmp/abs", b"absolute\n", REG)]), m.xz_blocks)),
        ("symlink-escape.tar.xz", "evil_symlink_escape", "linux-x86_64",
         xz_bytes(tar_("evil_symlink_escape", [
             ("l", f"{ts}/lib", "../../..", 0o777),
             ("f", f"{ts}/lib/owned", b"owned\n", REG)]), m.xz_blocks)),
        ("hardlink-escape.tar.gz", "evil_hardlink_escape", "linux-x86_64",
         gz_bytes(tar_("evil_hardlink_escape", [
             ("h", f"{th}/passwd", "/etc/passwd", REG),
             ("h", f"{th}/escape-link", f"{th}/../../hardlink-escape", REG),
             ("f", f"{th}/escape-link", b"owned\n", REG)]))),
        ("device.tar.gz", "evil_device", "linux-x86_64", gz_bytes(tar_("evil_device", [
            ("c", f"{td}/dev-null", (1, 3), 0o666)]))),
        ("bomb.tar.gz", "evil_bomb", "linux-x86_64", bomb_bytes(top("evil_bomb"), mtime)),
    ]
    for short, comp, plat, data in archives:
        ext = short.split(".", 1)[1]
        rel = f"{comp}/{plat}/{top(comp, plat)}.{ext}"
        m.write(f"evil/{short}", data)
        m.write(f"evil/{rel}", data, summary=False)
        obj = doc.setdefault(comp, {"name": f"Hostile archive ({comp})", "license": "evil",
                                    "license_path": f"{comp}/LICENSE.txt", "version": ver})
        obj[plat] = meta(rel, data)
    m.write("evil/redistrib_evil.json", dump_json(doc))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="output directory (created; files in it are overwritten)")
    ap.add_argument("--cuda", default="13.0.2", help="CUDA release label (default 13.0.2)")
    ap.add_argument("--cudnn", default="9.17.0", help="cuDNN release label (default 9.17.0)")
    ap.add_argument("--xz-threads", type=int, default=1, metavar="N",
                    help="xz blocks per .tar.xz, like `xz -T N` (default 1)")
    ap.add_argument("--evil", action="store_true", help="also write DIR/evil/ hostile archives")
    ap.add_argument("--pad-mib", type=int, default=0, metavar="N",
                    help="add N MiB of incompressible bytes to cuda_nvcc (bin/padding.bin)")
    args = ap.parse_args()
    global PAD_MIB
    PAD_MIB = args.pad_mib
    if args.xz_threads < 1:
        ap.error("--xz-threads must be >= 1")
    start = time.monotonic()
    m = Mirror(args.dir, args.xz_threads)
    build_cuda(m, args.cuda)
    build_cudnn(m, args.cudnn)
    if args.evil:
        build_evil(m)
    print(f"{m.count} files, {m.total} bytes in {args.dir} ({time.monotonic() - start:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
