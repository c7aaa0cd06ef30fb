//! An install prefix's layout (a CUDA toolkit, a venv, a pyenv version): where its programs,
//! libraries and headers are. Each name is spelled once, here, so that `bin/nvcc` is not written
//! out in every file that looks for a compiler, and a venv's Windows layout (`Scripts\`) is
//! known in one place. Paths only: nothing here reads the disk.

use std::path::{Path, PathBuf};

/// Where a prefix keeps its programs.
pub const BIN: &str = "bin";
/// Where a toolkit keeps its 64-bit libraries.
pub const LIB64: &str = "lib64";
/// Where a toolkit keeps its headers.
pub const INCLUDE: &str = "include";
/// CUDA's compiler driver (`bin\nvcc.exe` in NVIDIA's Windows layout).
pub const NVCC: &str = if cfg!(windows) { "nvcc.exe" } else { "nvcc" };
/// A venv's interpreter, as venv and uv name it.
pub const PYTHON: &str = "python";
/// The same, by its versioned name (what a distribution's prefix always has).
pub const PYTHON3: &str = "python3";
/// Where a venv keeps its interpreter, its console scripts and its activation scripts: CPython's
/// `venv` makes `Scripts\` on Windows and `bin/` elsewhere (the `scripts` path of sysconfig's
/// `nt_venv` / `posix_venv` schemes).
pub const VENV_SCRIPTS: &str = if cfg!(windows) { "Scripts" } else { BIN };

/// A prefix on the machine (`/usr/local/cuda-13.0`, `$CUDAUP_HOME/venvs/pytorch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix<'a> {
    root: &'a Path,
}

impl<'a> Prefix<'a> {
    /// The prefix at `root`.
    pub fn at(root: &'a Path) -> Prefix<'a> {
        Prefix { root }
    }

    /// `bin/`.
    pub fn bin(&self) -> PathBuf {
        self.root.join(BIN)
    }

    /// `lib64/`.
    pub fn lib64(&self) -> PathBuf {
        self.root.join(LIB64)
    }

    /// `include/`.
    pub fn include(&self) -> PathBuf {
        self.root.join(INCLUDE)
    }

    /// `bin/nvcc`.
    pub fn nvcc(&self) -> PathBuf {
        self.bin().join(NVCC)
    }

    /// `bin/python`.
    pub fn python(&self) -> PathBuf {
        self.bin().join(PYTHON)
    }

    /// `bin/python3`.
    pub fn python3(&self) -> PathBuf {
        self.bin().join(PYTHON3)
    }

    /// A venv's scripts folder: `Scripts\` on Windows, `bin/` elsewhere.
    pub fn venv_scripts(&self) -> PathBuf {
        self.root.join(VENV_SCRIPTS)
    }

    /// A venv's interpreter: `Scripts\python.exe` on Windows, `bin/python` elsewhere.
    pub fn venv_python(&self) -> PathBuf {
        if cfg!(windows) {
            self.venv_scripts().join("python.exe")
        } else {
            self.python()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Unix-only fact: programs without `.exe` (Windows: the twin below).
    #[cfg(unix)]
    #[test]
    fn a_prefix_names_its_programs() {
        let p = Prefix::at(Path::new("/usr/local/cuda-13.0"));
        assert_eq!(p.nvcc(), Path::new("/usr/local/cuda-13.0/bin/nvcc"));
        assert_eq!(p.lib64(), Path::new("/usr/local/cuda-13.0/lib64"));
        assert_eq!(p.include(), Path::new("/usr/local/cuda-13.0/include"));
        let v = Prefix::at(Path::new("/h/venvs/pytorch"));
        assert_eq!(v.python(), Path::new("/h/venvs/pytorch/bin/python"));
        assert_eq!(v.python3(), Path::new("/h/venvs/pytorch/bin/python3"));
    }

    #[cfg(windows)]
    #[test]
    fn a_windows_toolkit_names_nvcc_exe() {
        let p = Prefix::at(Path::new(r"C:\cuda"));
        assert_eq!(p.nvcc(), Path::new(r"C:\cuda\bin\nvcc.exe"));
        assert_eq!(p.include(), Path::new(r"C:\cuda\include"));
    }

    // Unix-only fact: a venv's `bin/` (Windows: `Scripts\`, below).
    #[cfg(unix)]
    #[test]
    fn a_venv_keeps_its_programs_in_bin() {
        let v = Prefix::at(Path::new("/h/venvs/pytorch"));
        assert_eq!(v.venv_scripts(), Path::new("/h/venvs/pytorch/bin"));
        assert_eq!(v.venv_python(), Path::new("/h/venvs/pytorch/bin/python"));
    }

    #[cfg(windows)]
    #[test]
    fn a_windows_venv_keeps_its_programs_in_scripts() {
        let v = Prefix::at(Path::new(r"C:\h\venvs\pytorch"));
        assert_eq!(v.venv_scripts(), Path::new(r"C:\h\venvs\pytorch\Scripts"));
        assert_eq!(
            v.venv_python(),
            Path::new(r"C:\h\venvs\pytorch\Scripts\python.exe")
        );
    }
}
