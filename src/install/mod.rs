//! Installing a CUDA toolkit (and cuDNN) into a prefix: resolve the artifacts from the source,
//! fetch and unpack each into the unpacked cache (in parallel, streaming where the format
//! allows), link them into a staging directory, write the receipt, and rename it into place.

mod assemble;
pub mod driver;
pub mod env;
pub mod finish;
pub mod guard;
pub mod home;
pub mod host_files;
mod items;
pub mod layout;
pub mod litter;
pub mod locate;
mod merge;
pub mod mirror;
pub mod plan;
pub mod python;
pub mod reach;
pub(crate) mod receipt_file;
pub mod receipts;
pub mod repair;
pub mod report;
pub mod run;
pub mod self_copy;
pub mod source_choice;
pub mod space;
pub mod stamps;
pub mod steps;
pub mod stub;
pub mod summary;
pub mod transaction;
pub mod uninstall;
pub mod uv;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::fetch::{Artifact, FetchError, Fetcher, Location};
use crate::model::version::Version;
use crate::sources::pypi::IndexError;
use crate::sources::redist::RedistError;
use crate::unpack::{self, Entry, Format, UnpackError};
use crate::world::progress::Phase;

pub use crate::model::receipt;
pub use items::{resolve_items, Resolved};
pub use layout::Shape;
pub use receipt::Receipt;

/// Why an install failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Fetching failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A redistrib JSON could not serve the request.
    #[error(transparent)]
    Redist(#[from] RedistError),
    /// A package index could not serve the request.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// An archive could not be unpacked.
    #[error("{name}: {source}")]
    Unpack {
        /// The artifact.
        name: String,
        /// Why.
        #[source]
        source: UnpackError,
    },
    /// The prefix cannot be used.
    #[error("{0}")]
    Prefix(String),
    /// The request cannot be served by this source or platform.
    #[error("{0}")]
    Unsupported(String),
    /// Two components disagree about a file.
    #[error("{first} and {second} both install {path} with different contents")]
    Conflict {
        /// The path in the prefix.
        path: String,
        /// The component that installed it first.
        first: String,
        /// The one that disagreed.
        second: String,
    },
    /// Not enough disk space: refused before anything was written, or the disk filled up and
    /// what the run wrote is gone again.
    #[error("{0}")]
    NoSpace(Box<space::NoSpace>),
    /// Local I/O (permissions, a read-only filesystem); the path is in the message.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Ctrl-C.
    #[error("cancelled (Ctrl-C): the prefix is as it was; what was downloaded stays in the cache, so the same command again resumes where it stopped, except a wheel cut off mid-download: only a wheel's finished, verified tree is kept, so it downloads again from its first byte")]
    Cancelled,
}

/// Where the toolkit's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// NVIDIA's redistributable layout under this base.
    Redist(Location),
    /// NVIDIA's wheels on this package index.
    Wheels(Location),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Redist(l) => write!(f, "redist {l}"),
            Source::Wheels(l) => write!(f, "wheels {l}"),
        }
    }
}

/// What to install.
#[derive(Debug, Clone)]
pub struct ToolkitSpec {
    /// The CUDA toolkit release (`13.0.2`).
    pub cuda: Version,
    /// cuDNN release and the CUDA major of its build, if wanted.
    pub cudnn: Option<Version>,
    /// Where.
    pub prefix: PathBuf,
    /// From where.
    pub source: Source,
    /// `x86_64` or `aarch64`.
    pub arch: String,
    /// The OS the toolkit is for: Windows takes NVIDIA's `win_amd64` wheels, laid out as
    /// NVIDIA's Windows toolkit (`bin\x64`, `lib\x64`), without links.
    pub os: crate::model::system::OsFamily,
    /// The most bytes one archive may unpack to (a decompression bomb stops there).
    pub max_unpacked: u64,
    /// The cudaup home to register the prefix in, before anything of it can exist (a journal in
    /// `receipts/pending/`, then the receipt once it is in place); `None` for no registration
    /// (a mirror being filled).
    pub register_in: Option<PathBuf>,
}

/// One artifact to install.
#[derive(Debug, Clone)]
pub struct Item {
    /// Component (`cuda_nvcc`, `nvidia-cuda-nvcc`, `cudnn`).
    pub component: String,
    /// Its version.
    pub version: String,
    /// NVIDIA's key for it (`cuda_nvcc`, also for the wheel), as version.json names it.
    pub key: String,
    /// NVIDIA's name for it (`CUDA NVCC`).
    pub title: String,
    /// The archive or wheel.
    pub artifact: Artifact,
    /// How its contents map onto the prefix.
    pub shape: Shape,
}

impl Item {
    /// Whether the item is a wheel, streamed from its body into the unpacked cache and never
    /// written to `cache/downloads` (an archive the streaming reader does not follow still is:
    /// rare, see [`unpack::Streamed::NeedsFile`]).
    pub(crate) fn streams(&self) -> bool {
        matches!(self.shape, Shape::Wheel | Shape::WindowsWheel)
            && Format::from_file_name(&self.artifact.location.file_name()) == Some(Format::Zip)
    }
}

/// The unpacked-cache key of an item: its bytes and the mapping that laid them out.
fn cache_key(item: &Item) -> String {
    format!("{}-l{}", item.artifact.sha256, layout::LAYOUT_VERSION)
}

/// A tree in the unpacked cache, verified, ready to link from.
pub(crate) struct Unpacked {
    /// The tree.
    pub(crate) dir: PathBuf,
    /// What it holds.
    pub(crate) entries: Vec<Entry>,
}

/// An unpacked tree, or why it could not be made.
type UnpackResult = Result<Unpacked, InstallError>;

/// What the unpacked cache has for an item.
enum Cached {
    /// A tree that still holds the verified bytes.
    Hit(Unpacked),
    /// Nothing (or an incomplete tree without its entry list).
    Miss,
    /// A tree whose files changed since they were verified.
    Damaged(PathBuf),
}

fn cached(dir: &Path) -> Cached {
    let Some(entries) = assemble::read_entries(&dir.join(assemble::ENTRIES_FILE)) else {
        return Cached::Miss;
    };
    let mut stamps = stamps::Stamps::read(dir);
    match stamps.verify(dir, &entries) {
        stamps::Verdict::Intact { rehashed } => {
            if rehashed > 0 {
                let _ = stamps.write(dir);
            }
            Cached::Hit(Unpacked {
                dir: dir.to_owned(),
                entries,
            })
        }
        stamps::Verdict::Damaged(path) => Cached::Damaged(path),
    }
}

/// Fetches and unpacks one item into the unpacked cache, or finds it there and checks that it
/// still holds the verified bytes ([`stamps`]). Unpacking happens under the key's lock
/// ([`crate::fetch::Cache::lock_unpacking`]), which also makes every half-built tree of that
/// key left by a killed run this run's to delete.
fn ensure_unpacked(
    fetcher: &Fetcher,
    id: usize,
    item: &Item,
    threads: usize,
    max: u64,
) -> UnpackResult {
    let key = cache_key(item);
    let dir = fetcher.cache().unpacked(&key);
    let hit = |u: Unpacked| {
        fetcher
            .reporter()
            .start(id, &item.artifact.name, item.artifact.size);
        fetcher.reporter().finish(id, "cached");
        Ok(u)
    };
    if let Cached::Hit(u) = cached(&dir) {
        return hit(u);
    }
    let _lock = fetcher.cache().lock_unpacking(&key, || {
        fetcher.reporter().message(&format!(
            "{}: waiting for another cudaup unpacking it",
            item.artifact.name
        ))
    })?;
    match cached(&dir) {
        Cached::Hit(u) => return hit(u),
        Cached::Damaged(path) => fetcher.reporter().message(&format!(
            "{}: `{}` in the unpacked cache is not the verified file any more (edited through a hard link in a prefix?); unpacking it again",
            item.artifact.name,
            path.display()
        )),
        Cached::Miss => {}
    }
    // Under the lock: no tree of this key is being built but ours, and whatever is at `dir`
    // is damaged or incomplete.
    for (stale, k) in fetcher.cache().unpacking_trees() {
        if k == key {
            transaction::remove_tree(&stale)?;
        }
    }
    transaction::remove_tree(&dir)?;
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let tmp = fetcher
        .cache()
        .unpacking(&key, SEQ.fetch_add(1, Ordering::Relaxed));
    let result = unpack_into(fetcher, id, item, threads, max, &tmp);
    let entries = match result {
        Ok(e) => e,
        Err(e) => {
            let _ = transaction::remove_tree(&tmp);
            return Err(e);
        }
    };
    crate::world::checkpoint::reach("unpacked-tmp");
    let finished = (|| {
        let stamps = stamps::Stamps::fresh(&tmp, &entries)?;
        stamps.write(&tmp)?;
        // Last: a tree with its entry list is complete.
        assemble::write_entries(&tmp.join(assemble::ENTRIES_FILE), &entries)?;
        crate::world::fs::publish_dir(&tmp, &dir)
    })();
    finished.inspect_err(|_| {
        let _ = transaction::remove_tree(&tmp);
    })?;
    fetcher.reporter().finish(id, "done");
    Ok(Unpacked { dir, entries })
}

/// Deletes the half-built unpacked-cache trees of killed runs (those whose key nobody is
/// unpacking now); returns them.
pub fn sweep_unpacking(cache: &crate::fetch::Cache) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for (tree, key) in cache.unpacking_trees() {
        if let Some(_lock) = cache.try_lock_unpacking(&key)? {
            transaction::remove_tree(&tree)?;
            out.push(tree);
        }
    }
    Ok(out)
}

fn unpack_into(
    fetcher: &Fetcher,
    id: usize,
    item: &Item,
    threads: usize,
    max: u64,
    tmp: &Path,
) -> Result<Vec<Entry>, InstallError> {
    let _ = transaction::remove_tree(tmp);
    fs_err::create_dir_all(tmp)?;
    let name = item.artifact.location.file_name();
    let format = Format::from_file_name(&name).ok_or_else(|| {
        InstallError::Unsupported(format!("{name}: not a .tar.xz, .tar.gz, .zip or wheel"))
    })?;
    let component = item.component.clone();
    let shape = item.shape;
    let map = move |p: &Path| layout::map(shape, &component, p);
    let opts = unpack::Options {
        map: &map,
        limits: unpack::Limits {
            max_total_bytes: max,
            ..unpack::Limits::default()
        },
        cancel: Some(fetcher.cancel_flag()),
        threads,
    };
    let unpack_err = |source: UnpackError| match source {
        UnpackError::Cancelled => InstallError::Cancelled,
        source => InstallError::Unpack {
            name: item.artifact.name.clone(),
            source,
        },
    };
    if item.streams() {
        if let Some(entries) = stream_wheel(fetcher, id, item, &opts, tmp)? {
            return Ok(entries);
        }
        // An archive the streaming reader does not follow: read from a file, as below.
        transaction::remove_tree(tmp)?;
        fs_err::create_dir_all(tmp)?;
    }
    let streamable = matches!(format, Format::TarXz | Format::TarGz);
    if streamable {
        let mut consume =
            |r: &mut (dyn std::io::BufRead + Send)| -> Result<Vec<Entry>, FetchError> {
                Ok(unpack::unpack_reader(format, r, tmp, &opts)?)
            };
        let fetched = fetcher
            .fetch(id, &item.artifact, Some(&mut consume))
            .map_err(|e| match e {
                FetchError::Cancelled => InstallError::Cancelled,
                FetchError::Unpack(source) => unpack_err(source),
                e => InstallError::Fetch(e),
            })?;
        if let Some(entries) = fetched.streamed {
            return Ok(entries);
        }
        // The stream broke and the download resumed into the cache: unpack from the file.
        transaction::remove_tree(tmp)?;
        fs_err::create_dir_all(tmp)?;
        fetcher.reporter().phase(id, Phase::Unpacking);
        return unpack::unpack_file(format, &fetched.path, tmp, &opts).map_err(unpack_err);
    }
    let fetched = fetcher
        .fetch::<()>(id, &item.artifact, None)
        .map_err(|e| match e {
            FetchError::Cancelled => InstallError::Cancelled,
            e => InstallError::Fetch(e),
        })?;
    fetcher.reporter().phase(id, Phase::Unpacking);
    unpack::unpack_file(format, &fetched.path, tmp, &opts).map_err(unpack_err)
}

/// Streams a wheel into `tmp` while it downloads, never keeping the wheel itself
/// ([`Fetcher::fetch_unkept`]): the entries once the wheel's sha256 matched, `None` when the
/// archive must be read from a file instead. On an error `tmp` is the caller's to delete.
fn stream_wheel(
    fetcher: &Fetcher,
    id: usize,
    item: &Item,
    opts: &unpack::Options<'_>,
    tmp: &Path,
) -> Result<Option<Vec<Entry>>, InstallError> {
    let mut consume =
        |r: &mut (dyn std::io::BufRead + Send)| -> Result<Option<Vec<Entry>>, FetchError> {
            // Each attempt starts from an empty staging tree.
            transaction::remove_tree(tmp)?;
            fs_err::create_dir_all(tmp)?;
            Ok(match unpack::unpack_wheel_stream(r, tmp, opts)? {
                unpack::Streamed::Unpacked(entries) => Some(entries),
                unpack::Streamed::NeedsFile(why) => {
                    tracing::debug!("{}: reading it from a file: {why}", item.artifact.name);
                    None
                }
            })
        };
    fetcher
        .fetch_unkept(id, &item.artifact, &mut consume)
        .map_err(|e| match e {
            FetchError::Cancelled | FetchError::Unpack(UnpackError::Cancelled) => {
                InstallError::Cancelled
            }
            FetchError::Unpack(source) => InstallError::Unpack {
                name: item.artifact.name.clone(),
                source,
            },
            e => InstallError::Fetch(e),
        })
}

/// Fetches, unpacks and installs `items` into `spec.prefix`, atomically. Returns the receipt.
///
/// Crash safety (kill -9 at any instant): under the prefix lock, a journal of the install is
/// registered in `spec.register_in` before the staging directory is made; the receipt is
/// registered (closing the journal) once the prefix is in place. So every moment leaves either
/// nothing, or a journal that uninstall, repair and doctor read, or the finished receipt; a
/// failure that is not a crash puts the journal back as it was.
pub fn install(
    fetcher: &Fetcher,
    spec: &ToolkitSpec,
    items: &[Item],
) -> Result<Receipt, InstallError> {
    let prefix = std::path::absolute(&spec.prefix)?;
    // Refused before its lock is made, so a foreign prefix gets no `.<name>.lock` beside it
    // (checked again under the lock).
    transaction::usable_prefix(
        &prefix,
        spec.register_in
            .as_deref()
            .map(crate::install::home::Home::at)
            .as_ref(),
    )?;
    // Before anything of the install is written, the prefix's lock included.
    space::check(fetcher.cache(), &prefix, items)?;
    let lock = transaction::PrefixLock::acquire(&prefix, |holder| {
        fetcher.reporter().message(&format!(
            "waiting for another cudaup installing into {} ({holder})",
            prefix.display()
        ))
    })?;
    // The env step's intent is recorded, the install's journal not yet: a kill here leaves
    // only the intent, which repair drops as litter (nothing was installed).
    crate::world::checkpoint::reach("toolkit-locked");
    let mut receipt = Receipt {
        schema_version: 1,
        prefix: prefix.clone(),
        cuda: spec.cuda.to_string(),
        cudnn: spec.cudnn.as_ref().map(|v| v.to_string()),
        source: spec.source.to_string(),
        installed_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        components: items
            .iter()
            .map(|i| receipt::ReceiptComponent {
                name: i.component.clone(),
                version: i.version.clone(),
                url: i.artifact.location.to_string(),
                sha256: i.artifact.sha256.clone(),
                size: i.artifact.size,
            })
            .collect(),
        files: Vec::new(),
    };
    let home = spec.register_in.as_deref();
    let journal = home.map(|h| receipt_file::pending_path(h, &prefix));
    let before = journal.as_ref().and_then(|j| fs_err::read(j).ok());
    let cached = space::Before::note(fetcher.cache(), items);
    let result = install_locked(fetcher, spec, items, &mut receipt, home).map_err(|e| {
        let Some(met) = space::disk_full(&e) else {
            return e;
        };
        // Nothing of a run the disk could not hold stays to keep it full.
        cached.take_back(fetcher.cache(), items);
        let mut rooms = space::rooms(fetcher.cache(), &prefix, items).unwrap_or_default();
        rooms.sort_by_key(|r| r.needed() <= r.free);
        InstallError::NoSpace(Box::new(space::NoSpace {
            rooms,
            met: Some(met),
        }))
    });
    match (&result, home) {
        (Ok(()), Some(home)) => {
            receipts::register(home, &receipt)?;
            crate::world::checkpoint::reach("toolkit-registered");
        }
        (Err(_), Some(home)) => {
            // Not a crash: what was there before this run is still true. A first install that
            // failed leaves nothing, not even its lock, nor does one whose lock file it made.
            let first = before.is_none() && !prefix.exists() && !registered(home, &prefix);
            let first = first || lock.created();
            let _ = match before {
                Some(bytes) => journal.as_ref().map_or(Ok(()), |j| fs_err::write(j, bytes)),
                None => receipt_file::remove_pending(home, &prefix),
            };
            if first {
                lock.remove();
            }
        }
        (Err(_), None) if lock.created() => lock.remove(),
        _ => {}
    }
    result.map(|()| receipt)
}

/// Whether `home` has a receipt for `prefix`.
fn registered(home: &Path, prefix: &Path) -> bool {
    crate::install::home::Home::at(home)
        .receipts()
        .join(receipt_file::file_name(receipt_file::TOOLKIT, prefix))
        .exists()
}

fn install_locked(
    fetcher: &Fetcher,
    spec: &ToolkitSpec,
    items: &[Item],
    receipt: &mut Receipt,
    home: Option<&Path>,
) -> Result<(), InstallError> {
    let prefix = receipt.prefix.clone();
    let tx = transaction::Transaction::begin_with(&prefix, || {
        if let Some(home) = home {
            receipt_file::write_pending(home, &prefix, &*receipt)?;
            crate::world::checkpoint::reach("toolkit-journaled");
        }
        Ok(())
    })?;
    crate::world::checkpoint::reach("toolkit-staging");
    // Half-unpacked trees of killed runs, for any key nobody is unpacking (best effort: a
    // failure here must not stop the install; the next run or `repair` tries again).
    let _ = sweep_unpacking(fetcher.cache());

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = workers_for(items.len(), cores);
    let threads = (cores / workers.min(cores)).max(1);
    let order = space::largest_first(items);
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, UnpackResult)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            break done;
                        };
                        done.push((
                            i,
                            ensure_unpacked(fetcher, i, &items[i], threads, spec.max_unpacked),
                        ));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("an install worker panicked"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    let mut trees = Vec::new();
    let mut first_err = None;
    for (item, (_, r)) in items.iter().zip(results) {
        match r {
            Ok(t) => trees.push((item, t)),
            Err(e) => {
                // Ctrl-C stops every task: that is said once, by the error, not once a task.
                let cancelled = matches!(e, InstallError::Cancelled);
                match &first_err {
                    None => first_err = Some(e),
                    Some(_) if cancelled => {}
                    Some(_) => fetcher.reporter().message(&format!("also failed: {e}")),
                }
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    if fetcher.cancel_flag().load(Ordering::Relaxed) {
        return Err(InstallError::Cancelled);
    }
    crate::world::checkpoint::reach("toolkit-unpacked");
    let windows = spec.os == crate::model::system::OsFamily::Windows;
    let mut files = assemble::assemble(
        tx.staging(),
        &trees,
        (!windows).then_some(spec.arch.as_str()),
        fetcher.cancel_flag(),
    )?;
    let named: Vec<finish::Named> = items
        .iter()
        .map(|i| finish::Named {
            key: i.key.clone(),
            title: i.title.clone(),
            version: i.version.clone(),
        })
        .collect();
    files.extend(finish::Finish::new(tx.staging(), &files).run(
        (!windows).then_some(spec.arch.as_str()),
        &spec.cuda.to_string(),
        &named,
    )?);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    receipt.files = files;
    receipt.write_into(tx.staging())?;
    if fetcher.cancel_flag().load(Ordering::Relaxed) {
        return Err(InstallError::Cancelled);
    }
    crate::world::checkpoint::reach("toolkit-staged");
    tx.commit()?;
    crate::world::checkpoint::reach("toolkit-committed");
    Ok(())
}

/// How many items download and unpack at once: up to four, but no more than the cores (and at
/// least two). A fast link makes the install CPU-bound (inflating, hashing, writing), and then
/// more items at once than cores only share the cores out evenly, so the largest item, which
/// is the install's tail, finishes last and alone; one item per core lets the largest run on a
/// core of its own while the others fill the other (measured on 2 cores: 2.6% less wall time
/// for the five benchmark wheels, docs/benchmarks.md). Two at least, so a slow link still has
/// a second connection while one item is being unpacked.
fn workers_for(items: usize, cores: usize) -> usize {
    items.clamp(1, 4).min(cores.max(2))
}

/// Rebuilds the artifact list of an install from its receipt (repair's input).
pub fn items_from_receipt(receipt: &Receipt) -> Result<Vec<Item>, InstallError> {
    receipt
        .components
        .iter()
        .map(|c| {
            let location = Location::parse(&c.url)?;
            let shape = if c.url.ends_with(".whl") {
                layout::wheel_shape(&c.url)
            } else {
                Shape::RedistArchive
            };
            let (key, title) = items::name_of(&c.name);
            Ok(Item {
                component: c.name.clone(),
                version: c.version.clone(),
                key,
                title,
                artifact: Artifact {
                    name: format!("{} {}", c.name, c.version),
                    location,
                    sha256: c.sha256.clone(),
                    size: c.size,
                    max: None,
                },
                shape,
            })
        })
        .collect()
}

/// Drops unpacked-cache trees whose files no longer match what was unpacked (the prefix shares
/// their files through hard links, so an edit in the prefix edits the cache too); the next
/// install unpacks them again from the verified download. Returns how many were dropped.
pub fn drop_damaged_cache(fetcher: &Fetcher, items: &[Item]) -> std::io::Result<usize> {
    let mut dropped = 0;
    for item in items {
        let dir = fetcher.cache().unpacked(&cache_key(item));
        let Some(entries) = assemble::read_entries(&dir.join(assemble::ENTRIES_FILE)) else {
            continue;
        };
        let intact = entries.iter().all(|e| match (&e.kind, &e.sha256) {
            (crate::unpack::EntryKind::File { .. }, Some(want)) => {
                let p = dir.join(&e.path);
                p.metadata().is_ok_and(|m| m.len() == e.size)
                    && crate::fetch::sha256_file(&p).is_ok_and(|got| &got == want)
            }
            (crate::unpack::EntryKind::Symlink { target }, _) => {
                fs_err::read_link(dir.join(&e.path)).is_ok_and(|t| &t == target)
            }
            _ => true,
        });
        if !intact {
            transaction::remove_tree(&dir)?;
            dropped += 1;
        }
    }
    Ok(dropped)
}

#[cfg(test)]
mod workers_tests {
    /// One item per core up to four, never fewer than two at once (a slow link keeps a second
    /// connection), never more than there are items.
    #[test]
    fn one_item_per_core_between_two_and_four() {
        let w = super::workers_for;
        assert_eq!(
            [w(5, 1), w(5, 2), w(5, 3), w(5, 4), w(5, 64)],
            [2, 2, 3, 4, 4]
        );
        assert_eq!([w(1, 16), w(0, 16), w(3, 2)], [1, 1, 2]);
    }
}
