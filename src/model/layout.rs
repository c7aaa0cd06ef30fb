//! A Unix install prefix's layout (a CUDA toolkit, a venv, a pyenv version): where its programs,
//! libraries and headers are. Each name is spelled once, here, so that `bin/nvcc` is not written
//! out in every file that looks for a compiler. Paths only: nothing here reads the disk.

use std::path::{Path, PathBuf};

/// Where a prefix keeps its programs.
pub const BIN: &str = "bin";
/// Where a toolkit keeps its 64-bit libraries.
pub const LIB64: &str = "lib64";
/// Where a toolkit keeps its headers.
pub const INCLUDE: &str = "include";
/// CUDA's compiler driver.
pub const NVCC: &str = "nvcc";
/// A venv's interpreter, as venv and uv name it.
pub const PYTHON: &str = "python";
/// The same, by its versioned name (what a distribution's prefix always has).
pub const PYTHON3: &str = "python3";

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
