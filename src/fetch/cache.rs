//! The content-addressed download cache: `<cache>/downloads/<sha256>` once verified,
//! `<sha256>.partial` while arriving, and `<cache>/unpacked/<key>/` for unpacked trees.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::world::fs::HeldLock;

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

    /// Where index pages are kept with their validators ([`super::Fetcher::get_page`]).
    pub fn pages(&self) -> PathBuf {
        self.dir.join("index")
    }

    /// Where an unpacked tree lives.
    pub fn unpacked(&self, key: &str) -> PathBuf {
        self.dir.join("unpacked").join(key)
    }

    /// Takes the per-download lock, so two cudaup processes never write one partial file. Waits
    /// (saying so) while another holds it.
    pub fn lock(&self, sha256: &str, waiting: impl FnOnce()) -> std::io::Result<HeldLock> {
        lock_at(&self.download_lock(sha256), Some(waiting)).map(|f| f.expect("waited"))
    }

    /// [`Cache::lock`] without waiting: `None` while another cudaup downloads it.
    pub fn try_lock(&self, sha256: &str) -> std::io::Result<Option<HeldLock>> {
        lock_at(&self.download_lock(sha256), None::<fn()>)
    }

    /// The lock file of a download.
    pub fn download_lock(&self, sha256: &str) -> PathBuf {
        self.dir.join("downloads").join(format!("{sha256}.lock"))
    }

    /// Where the unpacked tree `key` is being built (`.tmp-<key>-<pid>-<n>`): `n` tells the
    /// attempts of one process apart.
    pub fn unpacking(&self, key: &str, n: usize) -> PathBuf {
        self.dir
            .join("unpacked")
            .join(format!(".tmp-{key}-{}-{n}", std::process::id()))
    }

    /// Takes the lock on unpacking `key` (waiting, saying so, while another cudaup unpacks it).
    /// Whoever holds it owns every `.tmp-<key>-*` tree: the ones no holder is building are
    /// litter of a killed run.
    pub fn lock_unpacking(&self, key: &str, waiting: impl FnOnce()) -> std::io::Result<HeldLock> {
        lock_at(&self.unpacking_lock(key), Some(waiting)).map(|f| f.expect("waited"))
    }

    /// [`Cache::lock_unpacking`] without waiting: `None` while someone is unpacking `key`.
    pub fn try_lock_unpacking(&self, key: &str) -> std::io::Result<Option<HeldLock>> {
        lock_at(&self.unpacking_lock(key), None::<fn()>)
    }

    /// The lock file of unpacking `key`.
    pub fn unpacking_lock(&self, key: &str) -> PathBuf {
        self.dir.join("unpacked").join(format!(".{key}.lock"))
    }

    /// The half-built trees under `unpacked/` (`.tmp-<key>-...`), with their keys.
    pub fn unpacking_trees(&self) -> Vec<(PathBuf, String)> {
        let Ok(rd) = fs_err::read_dir(self.dir.join("unpacked")) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, String)> = rd
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_owned();
                let rest = name.strip_prefix(".tmp-")?;
                // `<key>-<pid>-<n>`: the key is what is left of the last two fields.
                let mut parts = rest.rsplitn(3, '-');
                let (_, _, key) = (parts.next()?, parts.next()?, parts.next()?);
                Some((e.path(), key.to_owned()))
            })
            .collect();
        out.sort();
        out
    }
}

/// Locks `path` through [`crate::world::fs::lock_file`]; without `waiting`, returns `None`
/// instead of waiting for another holder.
fn lock_at(path: &Path, waiting: Option<impl FnOnce()>) -> std::io::Result<Option<HeldLock>> {
    let waiting = waiting.map(|w| move |_: &str| w());
    Ok(crate::world::fs::lock_file(path, waiting)?.held())
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
