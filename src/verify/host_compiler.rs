//! nvcc's host compiler on Windows. nvcc compiles the host half of every `.cu` file with
//! Microsoft's C++ compiler, `cl.exe`, which it looks for on `PATH`; NVIDIA's CUDA Installation
//! Guide for Microsoft Windows lists the supported Visual Studio compilers among the system
//! requirements (<https://docs.nvidia.com/cuda/cuda-installation-guide-microsoft-windows/>).
//! cudaup installs nvcc, not Microsoft's compiler: when nvcc is here and no `cl.exe` is on
//! `PATH`, the `host-compiler` check fails with the fix, the checks that compile (addKernel, the
//! libraries, CMake, the torch extension) are skipped with that reason, and the rest run.
//! Elsewhere nvcc's host compiler (gcc) is proven by compiling: those checks name its error.

use std::path::PathBuf;

use super::Check;

/// The check's id.
pub const ID: &str = "host-compiler";

/// Microsoft's C++ compiler, as nvcc runs it.
const CL: &str = "cl.exe";

/// Where the Build Tools come from (Microsoft's page for the compiler without the IDE).
const BUILD_TOOLS: &str = "https://visualstudio.microsoft.com/visual-cpp-build-tools/";

/// The reason the compile checks give for their skip.
pub const SKIPPED: &str =
    "skipped: nvcc cannot compile without cl.exe (see the host-compiler check)";

/// Why the libraries program and the CMake project are skipped on Windows: both are written for
/// Linux's toolkit (`dlfcn.h` and `/proc/self/maps` to name the loaded file, `lib64/lib*.so`
/// names), not NVIDIA's Windows layout (`bin\*.dll`, `lib\x64\*.lib`). Said, not failed.
pub const LINUX_ONLY: &str =
    "not on Windows yet: this check is written for the Linux toolkit's layout (lib64/lib*.so, dlfcn.h)";

/// On Windows (`windows`), when no `PATH` entry holds `cl.exe`: the failed check, with the fix.
/// `None` elsewhere, and when `cl.exe` is found.
pub fn missing(windows: bool, path: &[PathBuf]) -> Option<Check> {
    if !windows || crate::world::runner::which(CL, path).is_some() {
        return None;
    }
    Some(Check::fail(
        ID,
        vec![
            "nvcc needs Microsoft's C++ compiler (cl.exe) to compile on Windows, and no cl.exe is on PATH".into(),
            format!("fix: install the Visual Studio Build Tools ({BUILD_TOOLS}) with the \"Desktop development with C++\" workload"),
            "then run cudaup verify from an \"x64 Native Tools Command Prompt\" (it puts cl.exe on PATH), or after vcvars64.bat".into(),
        ],
    ))
}

#[cfg(test)]
mod tests;
