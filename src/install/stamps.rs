//! Cheap proof that an unpacked-cache tree still holds the bytes that were verified.
//!
//! Prefix files are hard links into the unpacked cache, so an in-place edit of a prefix file
//! (an editor that keeps hard links, `>>`, a build script patching a header) edits the cache's
//! copy too, and the next install of that version would link the edited bytes under the
//! original sha256. Hashing every cached file before each reuse would cost seconds for cuDNN;
//! instead each tree keeps, per file, the inode, size, mtime and ctime seen right after the file
//! was verified or linked (`.cudaup-stamps.json`), and a file whose stat differs is hashed again
//! before it is used; a mismatch drops the tree, which is then unpacked again from the verified
//! download.
//!
//! The ctime is what makes this sound: any write to the inode, and any `utimensat` that forges
//! the mtime back, sets the ctime to now, and no unprivileged call can set it back. A link or an
//! unlink (another install, an uninstall, the old prefix removed on commit) changes it too, so
//! those files are hashed once more on the next reuse; the stamps are refreshed after each
//! install so that a plain re-install stays a matter of `stat` calls. What is left: a change
//! made between the `stat` before a link and the `stat` after it (microseconds per file), and a
//! root user who resets the clock; both are outside what a cache check can see.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::unpack::{Entry, EntryKind};

/// The stamps file inside each unpacked-cache tree.
pub const STAMPS_FILE: &str = ".cudaup-stamps.json";

/// What `stat` says about one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    /// The same content as far as stat can tell, ignoring the ctime (which links change).
    fn same_content(&self, other: &Stamp) -> bool {
        self.ino == other.ino && self.size == other.size && self.mtime_ns == other.mtime_ns
    }
}

/// The stamps of one tree, by path inside it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamps(BTreeMap<PathBuf, Stamp>);

/// Whether a cached tree can be used as it is.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every file is the verified one (some may have been hashed again).
    Intact {
        /// Files whose stamps were stale and were hashed again.
        rehashed: usize,
    },
    /// This path no longer holds what was verified.
    Damaged(PathBuf),
}

impl Stamps {
    /// Reads a tree's stamps; missing or unreadable means none (every file is hashed once).
    pub fn read(dir: &Path) -> Stamps {
        fs_err::read(dir.join(STAMPS_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
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

    /// Stamps every file of a tree just unpacked and hashed.
    pub fn fresh(dir: &Path, entries: &[Entry]) -> std::io::Result<Stamps> {
        let mut out = Stamps::default();
        for e in entries {
            if matches!(e.kind, EntryKind::File { .. }) {
                let meta = fs_err::symlink_metadata(dir.join(&e.path))?;
                out.0.insert(e.path.clone(), Stamp::of(&meta));
            }
        }
        Ok(out)
    }

    /// Checks `entries` of the tree at `dir` against the stamps: stat first, the sha256 where
    /// the stat changed. Updates the stamps of files that hashed right.
    pub fn verify(&mut self, dir: &Path, entries: &[Entry]) -> Verdict {
        let mut rehashed = 0;
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
                    let now = Stamp::of(&meta);
                    if !meta.is_file() || meta.len() != e.size {
                        false
                    } else if self.0.get(&e.path) == Some(&now) {
                        true
                    } else {
                        rehashed += 1;
                        let good = e.sha256.as_deref().is_some_and(|want| {
                            crate::fetch::sha256_file(&p).is_ok_and(|got| got == want)
                        });
                        // Stamp what was hashed, if the file did not change meanwhile.
                        if good && p.symlink_metadata().is_ok_and(|m| Stamp::of(&m) == now) {
                            self.0.insert(e.path.clone(), now);
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

    /// After the tree's files were linked (their ctime moved): takes the new stat of each file
    /// whose content stamp did not change since it was verified, and forgets the others, which
    /// are then hashed on the next reuse.
    pub fn refresh(&mut self, dir: &Path) {
        self.0.retain(|path, stamp| {
            match dir.join(path).symlink_metadata().map(|m| Stamp::of(&m)) {
                Ok(now) if now.same_content(stamp) => {
                    *stamp = now;
                    true
                }
                _ => false,
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, Vec<Entry>) {
        let dir = tempfile::tempdir().unwrap();
        fs_err::write(dir.path().join("a.h"), "#define A 1\n").unwrap();
        let entries = vec![Entry {
            path: "a.h".into(),
            size: 12,
            sha256: Some(crate::fetch::sha256_file(&dir.path().join("a.h")).unwrap()),
            kind: EntryKind::File { executable: false },
        }];
        (dir, entries)
    }

    #[test]
    fn a_fresh_tree_verifies_by_stat_alone() {
        let (dir, entries) = tree();
        let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Intact { rehashed: 0 }
        );
    }

    #[test]
    fn an_in_place_edit_is_caught_even_with_the_size_and_mtime_forged_back() {
        let (dir, entries) = tree();
        let p = dir.path().join("a.h");
        let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
        let before = fs_err::metadata(&p).unwrap().modified().unwrap();
        // Same size, different bytes, and the mtime put back as it was.
        fs_err::write(&p, "#define A 2\n").unwrap();
        let f = fs_err::File::options().write(true).open(&p).unwrap();
        f.set_modified(before).unwrap();
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Damaged("a.h".into())
        );
    }

    #[test]
    fn a_link_only_costs_one_rehash_and_refresh_makes_it_free_again() {
        let (dir, entries) = tree();
        let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
        let other = tempfile::tempdir().unwrap();
        std::fs::hard_link(dir.path().join("a.h"), other.path().join("a.h")).unwrap();
        stamps.refresh(dir.path());
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Intact { rehashed: 0 }
        );
        fs_err::remove_file(other.path().join("a.h")).unwrap();
        // The unlink moved the ctime: hashed once, then trusted again.
        let rehash = stamps.verify(dir.path(), &entries);
        assert!(
            matches!(rehash, Verdict::Intact { rehashed: 0 | 1 }),
            "{rehash:?}"
        );
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Intact { rehashed: 0 }
        );
        stamps.write(dir.path()).unwrap();
        assert_eq!(Stamps::read(dir.path()), stamps);
    }
}
