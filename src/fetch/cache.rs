//! The content-addressed download cache: `<cache>/downloads/<sha256>` once verified,
//! `<sha256>.partial` while arriving, and `<cache>/unpacked/<key>/` for unpacked trees.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The cache directory.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// A cache rooted at `dir` (created on first use).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The cache root.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a verified download lives.
    pub fn download(&self, sha256: &str) -> PathBuf {
        self.dir.join("downloads").join(sha256)
    }

    /// Where a download in progress lives.
    pub fn partial(&self, sha256: &str) -> PathBuf {
        self.dir.join("downloads").join(format!("{sha256}.partial"))
    }

    /// Where an unpacked tree lives.
    pub fn unpacked(&self, key: &str) -> PathBuf {
        self.dir.join("unpacked").join(key)
    }

    /// Takes the per-download lock, so two cudaup processes never write one partial file. Waits
    /// (saying so) while another holds it.
    pub fn lock(&self, sha256: &str, waiting: impl FnOnce()) -> std::io::Result<File> {
        let dir = self.dir.join("downloads");
        fs_err::create_dir_all(&dir)?;
        let file = fs_err::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(format!("{sha256}.lock")))?
            .into_parts()
            .0;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                waiting();
                file.lock()?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        Ok(file)
    }
}

/// The sha256 of a file, lower-case hex.
pub fn sha256_file(path: &Path, mut progress: impl FnMut(u64)) -> std::io::Result<String> {
    let mut f = fs_err::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        progress(n as u64);
    }
    Ok(hex::encode(h.finalize()))
}
