//! `.zip` and wheels: plan on the calling thread, then extract files with parallel workers.
//!
//! 1. Plan: read the central directory, check every name, kind and symlink target, and run the
//!    entries through a dry-run [`Tree`] in archive order, so duplicates and clashes resolve as
//!    a sequential extraction would; the declared sizes of the files that remain must fit the
//!    limit.
//! 2. Create the directories (sorted, so parents come first).
//! 3. Extract the files with `threads` workers, each with its own `ZipArchive` over its own file
//!    handle, taking files largest first from a shared counter. A file never receives more
//!    bytes than it declared, and the CRC is checked at its end.
//! 4. Create the symlinks last.

use std::collections::HashMap;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ::zip::result::ZipError;
use ::zip::ZipArchive;

use super::path::{check_link_target, check_mapped, sanitize};
use super::tree::{
    check_cancel, copy_hashed, create_file, display_name, make_dir, make_symlink, unsafe_entry,
    Tree, COPY_BUF,
};
use super::{Entry, EntryKind, Options, UnpackError};

/// Longest symlink target read from a zip entry.
const MAX_LINK: u64 = 4096;
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

type Archive = ZipArchive<BufReader<fs_err::File>>;

fn open(file: &Path) -> Result<Archive, UnpackError> {
    let handle = fs_err::File::open(file)?;
    ZipArchive::new(BufReader::with_capacity(64 << 10, handle)).map_err(|e| zip_error(e, file))
}

fn zip_error(e: ZipError, what: &Path) -> UnpackError {
    match e {
        ZipError::Io(e) => read_error(e),
        e => UnpackError::Corrupt(format!("`{}`: {e}", what.display())),
    }
}

/// Errors reading an entry: bad data is corruption, anything else an I/O error.
fn read_error(e: io::Error) -> UnpackError {
    match e.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidInput => {
            UnpackError::Corrupt(e.to_string())
        }
        _ => UnpackError::Io(e),
    }
}

/// A finished job: its index in the job list, the bytes written and their sha256.
type Done = (usize, u64, String);

struct Job {
    index: usize,
    path: PathBuf,
    size: u64,
    executable: bool,
}

pub(crate) fn unpack(
    file: &Path,
    dest: &Path,
    opts: &Options<'_>,
) -> Result<Vec<Entry>, UnpackError> {
    let mut archive = open(file)?;
    if archive.len() as u64 > opts.limits.max_entries {
        return Err(UnpackError::TooLarge(format!(
            "{} entries, more than {}",
            archive.len(),
            opts.limits.max_entries
        )));
    }

    // 1. Plan.
    let mut plan = Tree::new(dest, &opts.limits, opts.cancel, true);
    let mut sources: HashMap<PathBuf, usize> = HashMap::new();
    for index in 0..archive.len() {
        plan.check_cancel()?;
        plan.count_entry()?;
        plan_entry(&mut archive, index, &mut plan, &mut sources, opts, file)?;
    }
    let mut jobs = Vec::new();
    let mut total = 0u64;
    for entry in plan.entries().values() {
        if let EntryKind::File { executable } = entry.kind {
            total = total.saturating_add(entry.size);
            jobs.push(Job {
                index: sources[&entry.path],
                path: entry.path.clone(),
                size: entry.size,
                executable,
            });
        }
    }
    if total > opts.limits.max_total_bytes {
        return Err(UnpackError::TooLarge(format!(
            "its files declare {total} bytes, more than {}",
            opts.limits.max_total_bytes
        )));
    }
    jobs.sort_by_key(|job| std::cmp::Reverse(job.size));

    // 2. Directories.
    for entry in plan.entries().values() {
        if entry.kind == EntryKind::Dir {
            check_cancel(opts.cancel)?;
            make_dir(dest, &entry.path)?;
        }
    }

    // 3. Files.
    let threads = opts.threads.max(1).min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let work = || worker(file, dest, &jobs, &next, &stop, opts.cancel);
    let results: Vec<Result<Vec<Done>, UnpackError>> = if threads == 1 {
        vec![work()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    };
    let entries = plan.entries_mut();
    for result in results {
        for (job, size, sha256) in result? {
            let entry = entries.get_mut(&jobs[job].path).expect("planned");
            entry.size = size;
            entry.sha256 = Some(sha256);
        }
    }

    // 4. Symlinks.
    for entry in plan.entries().values() {
        if let EntryKind::Symlink { target } = &entry.kind {
            check_cancel(opts.cancel)?;
            make_symlink(target, &dest.join(&entry.path))?;
        }
    }
    tracing::debug!(
        entries = plan.entries().len(),
        "unpacked `{}`",
        file.display()
    );
    Ok(plan.into_entries())
}

fn plan_entry(
    archive: &mut Archive,
    index: usize,
    plan: &mut Tree<'_>,
    sources: &mut HashMap<PathBuf, usize>,
    opts: &Options<'_>,
    file: &Path,
) -> Result<(), UnpackError> {
    let (name, raw_name, is_dir_name, mode, size, encrypted) = {
        let data = archive
            .by_index_data(index)
            .map_err(|e| zip_error(e, file))?;
        let raw_name = data.name_raw().to_vec();
        // The decoded name (UTF-8, or CP437 without the UTF-8 flag) is what gets checked.
        let name = match data.name() {
            Ok(decoded) => decoded.into_owned(),
            Err(_) => String::from_utf8_lossy(&raw_name).into_owned(),
        };
        let attrs = data.external_attributes() >> 16;
        (
            name,
            raw_name,
            data.name_raw().ends_with(b"/"),
            (attrs != 0).then_some(attrs),
            data.size(),
            data.encrypted(),
        )
    };
    let checked = name;
    let name = display_name(checked.as_bytes());
    // A NUL in the raw bytes is refused even if decoding dropped it.
    if raw_name.contains(&0) {
        return Err(unsafe_entry(
            &name,
            "path contains the control character '\\0'",
        ));
    }
    let file_type = mode.map_or(0, |m| m & S_IFMT);
    let kind = match file_type {
        S_IFLNK => EntryKind::Symlink {
            target: PathBuf::new(),
        },
        S_IFDIR => EntryKind::Dir,
        0 | S_IFREG if is_dir_name => EntryKind::Dir,
        0 | S_IFREG => EntryKind::File {
            executable: mode.is_some_and(|m| m & 0o111 != 0),
        },
        _ => {
            return Err(unsafe_entry(
                &name,
                format!("special file type {file_type:o} is not allowed"),
            ))
        }
    };
    if encrypted {
        return Err(UnpackError::Corrupt(format!("entry `{name}` is encrypted")));
    }

    let rel = match sanitize(checked.as_bytes()).map_err(|reason| unsafe_entry(&name, reason))? {
        Some(rel) => rel,
        None if kind == EntryKind::Dir => return Ok(()),
        None => return Err(unsafe_entry(&name, "the path names the destination itself")),
    };
    let Some(mapped) = (opts.map)(&rel) else {
        return Ok(());
    };
    let mapped = match check_mapped(&mapped).map_err(|reason| unsafe_entry(&name, reason))? {
        Some(mapped) => mapped,
        None if kind == EntryKind::Dir => return Ok(()),
        None => return Err(unsafe_entry(&name, "it maps to the destination itself")),
    };

    match kind {
        EntryKind::Dir => plan.add_dir(&mapped, &name),
        EntryKind::File { executable } => {
            plan.start_file(&mapped, &name, executable, size)?;
            sources.insert(mapped, index);
            Ok(())
        }
        EntryKind::Symlink { .. } => {
            if size > MAX_LINK {
                return Err(UnpackError::Corrupt(format!(
                    "symlink `{name}` has a {size}-byte target"
                )));
            }
            let mut target = Vec::new();
            let mut entry = archive.by_index(index).map_err(|e| zip_error(e, file))?;
            (&mut entry)
                .take(MAX_LINK + 1)
                .read_to_end(&mut target)
                .map_err(read_error)?;
            let target = check_link_target(&mapped, &target)
                .map_err(|reason| unsafe_entry(&name, reason))?;
            plan.add_symlink(&mapped, &name, target)
        }
    }
}

fn worker(
    file: &Path,
    dest: &Path,
    jobs: &[Job],
    next: &AtomicUsize,
    stop: &AtomicBool,
    cancel: Option<&AtomicBool>,
) -> Result<Vec<Done>, UnpackError> {
    let mut done = Vec::new();
    if jobs.is_empty() {
        return Ok(done);
    }
    let result = (|| {
        let mut archive = open(file)?;
        let mut buf = vec![0u8; COPY_BUF];
        while !stop.load(Ordering::Relaxed) {
            check_cancel(cancel)?;
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(k) else { break };
            let mut entry = archive
                .by_index(job.index)
                .map_err(|e| zip_error(e, file))?;
            let mut out = create_file(&dest.join(&job.path), job.executable)?;
            let (size, sha256) = copy_hashed(
                &mut entry,
                &mut out,
                &mut buf,
                job.size,
                cancel,
                &read_error,
            )
            .map_err(|e| name_corrupt(e, &job.path))?;
            if size != job.size {
                return Err(UnpackError::Corrupt(format!(
                    "entry `{}` holds {size} bytes but declared {}",
                    job.path.display(),
                    job.size
                )));
            }
            done.push((k, size, sha256));
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(done),
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            Err(e)
        }
    }
}

fn name_corrupt(e: UnpackError, path: &Path) -> UnpackError {
    match e {
        UnpackError::Corrupt(msg) => {
            UnpackError::Corrupt(format!("entry `{}`: {msg}", path.display()))
        }
        e => e,
    }
}
