//! Cheap proof that an unpacked-cache tree still holds the bytes that were verified.
//!
//! Prefix files are hard links into the unpacked cache, so an in-place edit of a prefix file
//! (an editor that keeps hard links, `>>`, a build script patching a header) edits the cache's
//! copy too, and the next install of that version would link the edited bytes under the
//! original sha256. Hashing every cached file before each reuse would cost seconds for cuDNN;
//! instead each tree keeps, per file, the inode, size and mtime seen right after the file was
//! verified (`.cudaup-stamps.json`), and a file whose stat differs is hashed again before it
//! is used; a mismatch drops the tree, which is then unpacked again from the verified download.
//!
//! Every write moves the mtime, so an edit by accident is caught by `stat` alone. Links and
//! unlinks do not move it (they move the ctime, which is why the ctime is not stamped: a prefix
//! deleted with `rm -rf` would otherwise cost a rehash of every file it shared). The one gap
//! of mtimes is the filesystem clock's tick: a write in the tick the stamp was taken in can
//! leave the mtime as it was, so a stamp is kept only for a file whose mtime is older than the
//! clock read before anyone else could write it (git's "racy clean" rule): before a new tree is
//! published (waiting for the next tick if need be), before a file is hashed again; the others
//! are hashed on the next reuse. What stat cannot see is a deliberate edit that puts the size and mtime back
//! (`touch -d`, `utimensat`): someone who does that can as well rewrite this file. That is
//! what the full hashes are for: `repair` hashes every cached file of what it repairs
//! (`drop_damaged_cache`) and every prefix file against its receipt, and `doctor` hashes the
//! executables and libraries. A crash leaves at worst no stamps (written atomically, last), and
//! no stamps means every file is hashed once.
//!
//! On Windows no stamp is taken: `std` gives no file index without a handle, so two files can
//! not be told apart by `stat`, and every cached file is hashed before each reuse.

use std::collections::BTreeMap;
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::unpack::{Entry, EntryKind};

/// The stamps file inside each unpacked-cache tree.
pub const STAMPS_FILE: &str = ".cudaup-stamps.json";

/// What `stat` says about one file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl Stamp {
    /// `None` where no inode can be read (Windows): the file is hashed instead.
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<Stamp> {
        Some(Stamp {
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: mtime_ns(meta),
        })
    }

    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Option<Stamp> {
        None
    }
}

#[cfg(unix)]
fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

#[cfg(not(unix))]
fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
}

/// The filesystem's clock at `dir` now, as the mtime of a file created there (an unnamed one:
/// nothing appears in the tree). Writes after this read get an mtime at least this.
fn clock(dir: &Path) -> Option<i128> {
    let f = tempfile::tempfile_in(dir).ok()?;
    f.metadata().ok().map(|m| mtime_ns(&m))
}

/// The stamps of one tree, by path inside it. The version field makes stamps of an older
/// rule (which stamped the ctime and had no clock rule) unreadable, so they are retaken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamps {
    v: u32,
    files: BTreeMap<PathBuf, Stamp>,
}

const VERSION: u32 = 2;

/// How long [`Stamps::fresh`] waits for the filesystem's clock to tick past a tree's newest
/// mtime: Linux's coarse clock ticks every 1-10 ms; FAT's every 2 s, which is not waited for.
const TICK_WAIT: std::time::Duration = std::time::Duration::from_millis(50);

impl Default for Stamps {
    fn default() -> Stamps {
        Stamps {
            v: VERSION,
            files: BTreeMap::new(),
        }
    }
}

/// Whether a cached tree can be used as it is.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every file is the verified one (some may have been hashed again).
    Intact {
        /// Files whose stamps were missing or stale and were hashed again.
        rehashed: usize,
    },
    /// This path no longer holds what was verified.
    Damaged(PathBuf),
}

impl Stamps {
    /// Reads a tree's stamps; missing, unreadable or of an older rule means none (every file is
    /// hashed once).
    pub fn read(dir: &Path) -> Stamps {
        fs_err::read(dir.join(STAMPS_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<Stamps>(&b).ok())
            .filter(|s| s.v == VERSION)
            .unwrap_or_default()
    }

    /// Writes them atomically (a temporary file renamed over).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        use crate::world::fs::{write_atomic, Durability, Temp};
        // A cache: rebuilt (rehashed) when lost, so no fsync.
        write_atomic(
            &dir.join(STAMPS_FILE),
            &serde_json::to_vec(self).expect("stamps serialise"),
            Temp::Unique,
            Durability::Fast,
        )
    }

    /// Stamps every file of a tree just unpacked and hashed, before it is published: no one
    /// writes to it until then, so a stamp is sound once the filesystem's clock has moved past
    /// the file's mtime before the tree is published (any later write then moves the mtime).
    /// The last files written usually share the clock's tick with this call, so it waits for
    /// the next tick (a few ms on Linux) rather than leave them to be hashed again on the next
    /// reuse (a 516 MiB cuBLAS library written last cost 0.5 CPU-s that way); where the clock
    /// ticks slower than [`TICK_WAIT`] those files stay unstamped.
    pub fn fresh(dir: &Path, entries: &[Entry]) -> std::io::Result<Stamps> {
        let mut files = Vec::new();
        for e in entries {
            if matches!(e.kind, EntryKind::File { .. }) {
                files.push((e.path.clone(), fs_err::symlink_metadata(dir.join(&e.path))?));
            }
        }
        let newest = files.iter().map(|(_, m)| mtime_ns(m)).max();
        let mut out = Stamps::default();
        let Some(mut now) = clock(dir) else {
            return Ok(out);
        };
        let waited = std::time::Instant::now();
        while newest.is_some_and(|n| n >= now) && waited.elapsed() < TICK_WAIT {
            std::thread::sleep(std::time::Duration::from_millis(1));
            match clock(dir) {
                Some(c) => now = c,
                None => break,
            }
        }
        for (path, meta) in files {
            if let Some(stamp) = Stamp::of(&meta).filter(|_| mtime_ns(&meta) < now) {
                out.files.insert(path, stamp);
            }
        }
        Ok(out)
    }

    /// How many files have a stamp.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file has a stamp.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Checks `entries` of the tree at `dir` against the stamps: stat first, the sha256 where
    /// the stat changed or no stamp is kept. Stamps the files that hashed right and did not
    /// change while they were hashed.
    pub fn verify(&mut self, dir: &Path, entries: &[Entry]) -> Verdict {
        let mut rehashed = 0;
        // Read once, before the first file is hashed again; `None` inside: no clock, no stamps.
        let mut clock_at_start: Option<Option<i128>> = None;
        for e in entries {
            let p = dir.join(&e.path);
            let Ok(meta) = p.symlink_metadata() else {
                return Verdict::Damaged(e.path.clone());
            };
            let ok = match &e.kind {
                EntryKind::Dir => meta.is_dir(),
                EntryKind::Symlink { target } => {
                    meta.file_type().is_symlink()
                        && fs_err::read_link(&p).is_ok_and(|t| &t == target)
                }
                EntryKind::File { .. } => {
                    if !meta.is_file() || meta.len() != e.size {
                        false
                    } else if Stamp::of(&meta)
                        .is_some_and(|now| self.files.get(&e.path) == Some(&now))
                    {
                        true
                    } else {
                        rehashed += 1;
                        let clock = *clock_at_start.get_or_insert_with(|| clock(dir));
                        // Stat again after the clock was read: a write from here on moves the
                        // mtime past `clock`, or shows in the stat after the hash.
                        let before = p.symlink_metadata().ok().and_then(|m| Stamp::of(&m));
                        let good = e.sha256.as_deref().is_some_and(|want| {
                            crate::fetch::sha256_file(&p).is_ok_and(|got| got == want)
                        });
                        let after = p.symlink_metadata().ok().and_then(|m| Stamp::of(&m));
                        match (before, after, clock) {
                            (Some(b), Some(a), Some(clock))
                                if good && a == b && b.size == e.size && b.mtime_ns < clock =>
                            {
                                self.files.insert(e.path.clone(), b);
                            }
                            _ => {
                                self.files.remove(&e.path);
                            }
                        }
                        good
                    }
                }
            };
            if !ok {
                return Verdict::Damaged(e.path.clone());
            }
        }
        Verdict::Intact { rehashed }
    }
}

#[cfg(test)]
mod tests;
