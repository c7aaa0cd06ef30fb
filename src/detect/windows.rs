//! What `detect` reads on Windows that Linux keeps elsewhere: the Windows version (`ver`), the
//! driver's own files (`nvidia-smi.exe` and `nvml.dll`, in `System32` since the DCH drivers,
//! under `NVIDIA Corporation\NVSMI` before), and the toolkits NVIDIA's installer names in
//! `CUDA_PATH` and one `CUDA_PATH_V<major>_<minor>` per version installed side by side; and
//! whether `wsl.exe` is there.

use std::path::PathBuf;
use std::time::Duration;

use crate::world::process::Process;
use crate::world::runner::Runner;

/// The version `ver` prints: `10.0.22631.4460` from `Microsoft Windows [Version 10.0.22631.4460]`
/// (Wine prints `Microsoft Windows 6.1.7601`, without the brackets).
pub fn parse_ver(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == '[' || c == ']')
        .find(|w| {
            w.contains('.')
                && w.split('.').all(|n| !n.is_empty())
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
        .map(str::to_owned)
}

/// The running Windows' version, from `cmd /c ver` (`None` when it does not answer).
pub fn version(runner: &dyn Runner) -> Option<String> {
    let out = runner
        .run(
            std::path::Path::new("cmd"),
            &["/c", "ver"],
            Duration::from_secs(10),
        )
        .ok()?;
    out.success().then(|| parse_ver(&out.stdout)).flatten()
}

/// The NVIDIA driver's user-space files present: `nvidia-smi.exe` and `nvml.dll` in
/// `%SystemRoot%\System32` and in `%ProgramFiles%\NVIDIA Corporation\NVSMI`.
pub fn driver_files(process: &Process) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = process.path_var("SYSTEMROOT") {
        dirs.push(root.join("System32"));
    }
    if let Some(files) = process.path_var("PROGRAMFILES") {
        dirs.push(files.join("NVIDIA Corporation").join("NVSMI"));
    }
    dirs.iter()
        .flat_map(|d| [d.join("nvidia-smi.exe"), d.join("nvml.dll")])
        .filter(|p| p.is_file())
        .collect()
}

/// `wsl.exe` in `%SystemRoot%\System32`, where Windows keeps the command that lists, installs
/// and starts WSL distributions (`wsl --install`, `wsl -l -v`): the way to run the Linux cudaup
/// on this machine, through the Windows driver.
pub fn wsl_exe(process: &Process) -> Option<PathBuf> {
    let exe = process
        .path_var("SYSTEMROOT")?
        .join("System32")
        .join("wsl.exe");
    exe.is_file().then_some(exe)
}

/// The Pythons python.org's installer puts where it puts them by default, newest first:
/// `%LOCALAPPDATA%\Programs\Python\Python3*\python.exe` (for this user, no admin) and
/// `%ProgramFiles%\Python3*\python.exe` (for all users). Its "Add python.exe to PATH" box is
/// unticked by default, so `PATH` alone misses them; the `py` launcher finds the same ones.
pub fn python_installs(process: &Process) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(local) = process.path_var("LOCALAPPDATA") {
        roots.push(local.join("Programs").join("Python"));
    }
    if let Some(files) = process.path_var("PROGRAMFILES") {
        roots.push(files);
    }
    let mut found: Vec<(u32, PathBuf)> = Vec::new();
    for root in roots {
        let Ok(entries) = fs_err::read_dir(&root) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
            // `Python312`, `Python313-arm64`: 3 and the minor; a free-threaded `Python313t` too.
            let Some(minor) = name
                .strip_prefix("python3")
                .map(|r| r.trim_end_matches(|c: char| !c.is_ascii_digit()))
                .and_then(|d| d.parse::<u32>().ok())
            else {
                continue;
            };
            let exe = entry.path().join("python.exe");
            if exe.is_file() {
                found.push((minor, exe));
            }
        }
    }
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.into_iter().map(|(_, p)| p).collect()
}

/// The toolkits the environment names: `CUDA_PATH`, then every `CUDA_PATH_V*`, by name.
pub fn cuda_path_vars(process: &Process) -> Vec<PathBuf> {
    let mut names: Vec<&str> = process
        .var_names()
        .filter(|n| n.starts_with("CUDA_PATH_V"))
        .collect();
    names.sort_unstable();
    std::iter::once("CUDA_PATH")
        .chain(names)
        .filter_map(|n| process.path_var(n))
        .collect()
}

#[cfg(test)]
mod tests;
