//! Room on disk for a toolkit install. Before anything is written, each filesystem the install
//! writes to is measured against what it will put there: the downloads (archives, not the wheels,
//! which stream into their trees) and the unpacked trees in the cache, and the files copied into the prefix when it is on another filesystem than the
//! cache (on the same one the prefix hard-links the cache's files and costs next to nothing).
//! Sizes are the source's (redistrib JSON, index, catalog); an archive unpacks to at least its
//! own size (eleven CUDA 13 wheels on PyPI unpack to 1.1 to 4.7 times theirs), so the need is a
//! lower bound: an install that fits is never refused on a guess.
//!
//! If the disk fills up anyway, [`Before::take_back`] removes everything this run added to the
//! cache (partial and finished downloads, unpacked trees, the lock files it made), so the disk is
//! as full as before the run, and [`NoSpace`] says how much the install needs.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use indicatif::HumanBytes;

use super::{assemble, cache_key, transaction, InstallError, Item};
use crate::fetch::{Cache, Location};
use crate::world::fs::space::{self, Space};

/// What one filesystem must hold for an install, and what it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room {
    /// A directory on it (the cache, or the prefix's nearest existing ancestor).
    pub at: PathBuf,
    /// Its free bytes.
    pub free: u64,
    /// Bytes to download into the cache.
    pub download: u64,
    /// Bytes unpacked into the cache (at least).
    pub unpacked: u64,
    /// Bytes copied into the prefix, on another filesystem than the cache (at least).
    pub copied: u64,
    /// What `copied` goes into: "the prefix", "the mirror".
    pub copied_into: &'static str,
    /// Bytes the framework's installer writes into the venv (at least the framework wheel's own
    /// size: its dependencies come on top).
    pub installed: u64,
}

impl Room {
    /// The least the install writes there.
    pub fn needed(&self) -> u64 {
        self.download
            .saturating_add(self.unpacked)
            .saturating_add(self.copied)
            .saturating_add(self.installed)
    }

    fn parts(&self) -> String {
        let mut parts = Vec::new();
        if self.download > 0 {
            parts.push(format!("{} to download", HumanBytes(self.download)));
        }
        if self.unpacked > 0 {
            parts.push(format!("{} unpacked", HumanBytes(self.unpacked)));
        }
        if self.copied > 0 {
            parts.push(format!(
                "{} copied into {}, which is on another filesystem than the cache",
                HumanBytes(self.copied),
                self.copied_into
            ));
        }
        if self.installed > 0 {
            parts.push(format!(
                "{} installed into the venv, the framework wheel alone, before its dependencies",
                HumanBytes(self.installed)
            ));
        }
        parts.join(", ")
    }
}

/// Not enough room: refused before anything was written (`met` is `None`), or the disk filled up
/// mid-way (`met` says how) and what the run had written is gone again.
#[derive(Debug)]
pub struct NoSpace {
    /// Every filesystem the install writes to (short ones first).
    pub rooms: Vec<Room>,
    /// The error the install met, when it ran out mid-way.
    pub met: Option<String>,
}

impl fmt::Display for NoSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.met {
            None => write!(f, "not enough free disk space for this install; nothing was written")?,
            Some(met) => write!(
                f,
                "the disk filled up during the install ({met}); what this run downloaded and unpacked is removed again"
            )?,
        }
        for r in &self.rooms {
            let (needed, free) = (r.needed(), r.free);
            if needed > free {
                write!(
                    f,
                    "; {} needs at least {} ({}) and has {} free",
                    r.at.display(),
                    HumanBytes(needed),
                    r.parts(),
                    HumanBytes(free)
                )?;
            } else if self.met.is_some() {
                // The archives' sizes fit, yet the disk filled: they unpack to more than that.
                write!(
                    f,
                    "; {} has {} free, and this install needs more there than the {} its archives' sizes count ({}): they unpack to more",
                    r.at.display(),
                    HumanBytes(free),
                    HumanBytes(needed),
                    r.parts()
                )?;
            }
        }
        write!(
            f,
            "; free some space (or choose another --prefix or --home) and run again"
        )
    }
}

/// The least an item unpacks to: its stated size (an archive is never smaller than its
/// compressed bytes in practice), or the tree already unpacked.
fn unpacked_size(item: &Item, tree: Option<&[crate::unpack::Entry]>) -> u64 {
    match tree {
        Some(entries) => entries.iter().map(|e| e.size).sum(),
        None => expected_size(item),
    }
}

/// The bytes an item's download has: the size its source states, else the catalog's record
/// of it (a wheel on an index that states none), else nothing counted.
pub(super) fn expected_size(item: &Item) -> u64 {
    known_size(item).unwrap_or(0)
}

/// The size its source states, else the catalog's record of it; `None` when neither says.
fn known_size(item: &Item) -> Option<u64> {
    item.artifact
        .size
        .or(item.artifact.max.and_then(|c| c.recorded))
}

/// The order the install's workers take `items` in: largest first, as the largest is the
/// install's tail, so it starts at once and the small ones fill the gaps. An item of unknown
/// size counts as the largest: on a PEP 503 page (which states no sizes) that is the cuDNN
/// wheel, 357 MB, which sorted last would start only once a small wheel had finished.
pub(super) fn largest_first(items: &[Item]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(known_size(&items[i]).unwrap_or(u64::MAX)));
    order
}

/// What `items` will write into the cache and the prefix, per filesystem.
pub fn rooms(cache: &Cache, prefix: &Path, items: &[Item]) -> io::Result<Vec<Room>> {
    rooms_for(cache, prefix, items, true)
}

/// Refuses a `mirror create` that cannot fit, before it downloads: `items` go into the cache
/// (unless there already) and are linked into `dir`, or copied where it is on another
/// filesystem; nothing is unpacked.
pub fn check_mirror(cache: &Cache, dir: &Path, items: &[Item]) -> Result<(), InstallError> {
    short(rooms_for(cache, dir, items, false)?)
        .map_or(Ok(()), |no| Err(InstallError::NoSpace(Box::new(no))))
}

/// [`rooms`], with the unpacked trees counted only when `unpacks`.
fn rooms_for(cache: &Cache, prefix: &Path, items: &[Item], unpacks: bool) -> io::Result<Vec<Room>> {
    let at_cache = space::space(cache.dir())?;
    let at_prefix = space::space(prefix)?;
    let room = |s: &Space| Room {
        at: s.at.clone(),
        free: s.free,
        download: 0,
        unpacked: 0,
        copied: 0,
        copied_into: "the prefix",
        installed: 0,
    };
    let mut in_cache = room(&at_cache);
    let mut in_prefix = room(&at_prefix);
    if !unpacks {
        (in_cache.copied_into, in_prefix.copied_into) = ("the mirror", "the mirror");
    }
    for item in items {
        let tree = assemble::read_entries(
            &cache
                .unpacked(&cache_key(item))
                .join(assemble::ENTRIES_FILE),
        );
        let unpacked = if unpacks {
            unpacked_size(item, tree.as_deref())
        } else {
            expected_size(item)
        };
        if tree.is_none() || !unpacks {
            if unpacks {
                in_cache.unpacked += unpacked;
            }
            let remote = matches!(item.artifact.location, Location::Http(_));
            // A streamed wheel goes from the network into its unpacked tree (counted above)
            // without a copy in `downloads/`; `mirror create` keeps the wheel itself.
            let kept = !(unpacks && item.streams());
            if remote && kept && !cache.download(&item.artifact.sha256).is_file() {
                let partial = cache
                    .partial(&item.artifact.sha256)
                    .metadata()
                    .map_or(0, |m| m.len());
                in_cache.download += expected_size(item).saturating_sub(partial);
            }
        }
        if at_prefix.device != at_cache.device {
            in_prefix.copied += unpacked;
        }
    }
    Ok(if at_prefix.device == at_cache.device {
        in_cache.copied += in_prefix.copied;
        vec![in_cache]
    } else {
        vec![in_cache, in_prefix]
    })
}

/// Refuses a framework install that cannot fit, before the installer runs: the framework wheel
/// (`wheel` bytes, as its index states it) is downloaded into `cache` unless `local` (a folder
/// or bundle on this machine), and installs into `venv` as at least as many bytes. The
/// dependencies (PyTorch's CUDA wheels are gigabytes) are not counted, as no index states their
/// sizes before the installer resolves them: the need is a lower bound, so nothing that fits is
/// refused. A wheel whose size is not stated is not checked.
pub fn check_framework(
    cache: &Path,
    venv: &Path,
    wheel: Option<u64>,
    local: bool,
) -> Result<(), InstallError> {
    let Some(wheel) = wheel else {
        return Ok(());
    };
    let (at_cache, at_venv) = (space::space(cache)?, space::space(venv)?);
    let room = |s: &Space| Room {
        at: s.at.clone(),
        free: s.free,
        download: 0,
        unpacked: 0,
        copied: 0,
        copied_into: "the prefix",
        installed: 0,
    };
    let mut in_venv = room(&at_venv);
    in_venv.installed = wheel;
    let rooms = if local {
        vec![in_venv]
    } else if at_cache.device == at_venv.device {
        in_venv.download = wheel;
        vec![in_venv]
    } else {
        let mut in_cache = room(&at_cache);
        in_cache.download = wheel;
        vec![in_cache, in_venv]
    };
    short(rooms).map_or(Ok(()), |no| Err(InstallError::NoSpace(Box::new(no))))
}

/// Refuses an install that cannot fit, before anything of it is written.
pub fn check(cache: &Cache, prefix: &Path, items: &[Item]) -> Result<(), InstallError> {
    short(rooms(cache, prefix, items)?)
        .map_or(Ok(()), |no| Err(InstallError::NoSpace(Box::new(no))))
}

/// The filesystems of `rooms` without room for their part of the install, if any.
fn short(mut rooms: Vec<Room>) -> Option<NoSpace> {
    rooms.retain(|r| r.needed() > r.free);
    (!rooms.is_empty()).then_some(NoSpace { rooms, met: None })
}

/// The I/O error behind `e` when it says the disk is full.
pub fn disk_full(e: &InstallError) -> Option<String> {
    use crate::unpack::UnpackError;
    let full = match e {
        InstallError::Fetch(f) => f.is_disk_full(),
        InstallError::Unpack {
            source: UnpackError::Io(io),
            ..
        }
        | InstallError::Io(io) => space::is_full(io),
        _ => false,
    };
    full.then(|| e.to_string())
}

/// What the cache held of each item before the run, so a run the disk could not hold takes
/// back what it added.
#[derive(Debug)]
pub struct Before {
    /// The cache's folders that existed (the cache, `downloads/`, `unpacked/`).
    dirs: Vec<(PathBuf, bool)>,
    /// Per item: its finished download, its unpacked tree, and their lock files.
    items: Vec<[bool; 4]>,
}

impl Before {
    /// Notes what the cache holds of `items` now.
    pub fn note(cache: &Cache, items: &[Item]) -> Before {
        let exists = |p: &Path| p.symlink_metadata().is_ok();
        let dirs = [
            cache.dir().join("unpacked"),
            cache.dir().join("downloads"),
            cache.dir().to_owned(),
        ]
        .into_iter()
        .map(|d| {
            let was = exists(&d);
            (d, was)
        })
        .collect();
        let items = items
            .iter()
            .map(|i| {
                let (sha, key) = (&i.artifact.sha256, cache_key(i));
                [
                    exists(&cache.download(sha)),
                    exists(&cache.unpacked(&key)),
                    exists(&cache.download_lock(sha)),
                    exists(&cache.unpacking_lock(&key)),
                ]
            })
            .collect();
        Before { dirs, items }
    }

    /// Removes what this run added to the cache for `items`: partial downloads, downloads and
    /// unpacked trees that were not there before, half-built trees, and the lock files it made.
    /// Each under its lock; one another cudaup holds now is left to it.
    pub fn take_back(&self, cache: &Cache, items: &[Item]) {
        for (item, [download, tree, download_lock, tree_lock]) in items.iter().zip(&self.items) {
            let (sha, key) = (&item.artifact.sha256, cache_key(item));
            if let Ok(Some(lock)) = cache.try_lock_unpacking(&key) {
                for (half, k) in cache.unpacking_trees() {
                    if k == key {
                        let _ = transaction::remove_tree(&half);
                    }
                }
                if !tree {
                    let _ = transaction::remove_tree(&cache.unpacked(&key));
                }
                if !tree_lock {
                    lock.remove();
                }
            }
            if let Ok(Some(lock)) = cache.try_lock(sha) {
                let _ = fs_err::remove_file(cache.partial(sha));
                if !download {
                    let _ = fs_err::remove_file(cache.download(sha));
                }
                if !download_lock {
                    lock.remove();
                }
            }
        }
        // Folders this run made, once empty (remove_dir leaves one that is not).
        for (dir, was) in &self.dirs {
            if !was {
                let _ = fs_err::remove_dir(dir);
            }
        }
    }
}

#[cfg(test)]
mod tests;
