//! Wheels unpacked while their bytes arrive: each member is inflated from its local header into
//! `dest` (a staging directory), in archive order, with the same [`Tree`] rules as every other
//! extraction, and the whole is checked against the central directory when it arrives last.
//!
//! What only the central directory says is applied at the end: executable bits (a member is
//! written 0o644, then made 0o755), and the kinds — a directory is known by its trailing `/`
//! from the start, a special file is refused, and a wheel with a symlink (NVIDIA ships none) is
//! [`Streamed::NeedsFile`], as is any archive whose local headers and central directory do not
//! agree member for member: the caller then reads it from a file, central directory first.
//!
//! The files' sha256 come from the wheel's `*.dist-info/RECORD` (PEP 376/427), not from hashing
//! every byte again: RECORD is covered by the wheel's own sha256, which the caller checks
//! against the index before anything of `dest` is used, and each member's bytes by the CRC-32
//! its headers record. A file RECORD does not list with a sha256 and the right size, or one
//! written twice, is hashed from disk. A RECORD that lies about a hash can only mislead
//! cudaup's own bookkeeping (the stamps and `doctor` then report the file as changed); the bytes
//! are what the verified wheel holds either way.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;

use super::path::{check_mapped, sanitize};
use super::tree::{copy_hashed, display_name, unsafe_entry, Tree, COPY_BUF};
use super::zipstream::{self, Input, Local, Step};
use super::{Entry, EntryKind, Options, UnpackError};

/// The most a RECORD may have to be used (CUDA's largest lists a few hundred files in ~40 KiB).
const MAX_RECORD: usize = 16 << 20;
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;

/// What a streamed extraction came to.
#[derive(Debug)]
pub enum Streamed {
    /// `dest` holds the wheel's files (not yet trustworthy: the caller checks the wheel's hash).
    Unpacked(Vec<Entry>),
    /// The archive is one this reader does not follow (the reason); `dest` holds a part of it,
    /// to be deleted, and the archive is to be read from a file.
    NeedsFile(String),
}

/// A `*.dist-info/RECORD` member's bytes; `None` when it is too large to use.
type RecordBytes = Option<Vec<u8>>;

/// One member as it was placed.
struct Placed {
    /// The name as checked (UTF-8).
    name: String,
    /// Where it went under `dest`, `None` when skipped.
    at: Option<PathBuf>,
}

/// Streams a wheel from `reader` into `dest` (an existing, empty directory).
pub(crate) fn unpack(
    reader: impl BufRead,
    dest: &Path,
    opts: &Options<'_>,
) -> Result<Streamed, UnpackError> {
    let mut input = Input::new(reader);
    let mut tree = Tree::new(dest, &opts.limits, opts.cancel, false);
    let mut locals: Vec<Local> = Vec::new();
    let mut placed: Vec<Placed> = Vec::new();
    let mut records: Vec<Option<Vec<u8>>> = Vec::new();
    let mut out = vec![0u8; COPY_BUF];
    let tail = loop {
        tree.check_cancel()?;
        let mut local = match zipstream::next(&mut input)? {
            Step::Member(local) => local,
            Step::End(tail) => break tail,
            Step::Unusual(why) => return Ok(Streamed::NeedsFile(why)),
        };
        tree.count_entry()?;
        let Some(name) = decoded_name(&local) else {
            return Ok(Streamed::NeedsFile(
                "a member name that is neither ASCII nor flagged UTF-8".into(),
            ));
        };
        let shown = display_name(name.as_bytes());
        let (at, record) = member(&mut input, &mut local, &name, &mut tree, opts, &mut out)
            .map_err(|e| name_corrupt(e, &shown))?;
        if let Some(r) = record {
            records.push(r);
        }
        placed.push(Placed { name, at });
        locals.push(local);
    };
    let start = input.offset() - tail.len() as u64;
    let centrals = match zipstream::central(&tail, start) {
        Ok(c) => c,
        Err(why) => return Ok(Streamed::NeedsFile(why)),
    };
    if centrals.len() != locals.len() {
        return Ok(Streamed::NeedsFile(format!(
            "{} local headers but {} central directory records",
            locals.len(),
            centrals.len()
        )));
    }
    let mut exec = Vec::new();
    for ((local, central), p) in locals.iter().zip(&centrals).zip(&placed) {
        let shown = display_name(p.name.as_bytes());
        if !zipstream::agree(local, central) {
            return Ok(Streamed::NeedsFile(format!(
                "`{shown}`: its local header and central directory record differ"
            )));
        }
        let is_dir_name = local.name.ends_with(b"/");
        let kind = central.mode & S_IFMT;
        match kind {
            S_IFDIR if !is_dir_name => {
                return Ok(Streamed::NeedsFile(format!(
                    "`{shown}` is a directory without a trailing `/`"
                )))
            }
            S_IFDIR => {}
            0 | S_IFREG => {
                if !is_dir_name && central.mode & 0o111 != 0 {
                    if let Some(at) = &p.at {
                        exec.push(at.clone());
                    }
                }
            }
            0o120_000 => return Ok(Streamed::NeedsFile(format!("`{shown}` is a symlink"))),
            other => {
                return Err(unsafe_entry(
                    &shown,
                    format!("special file type {other:o} is not allowed"),
                ))
            }
        }
    }
    make_executable(&mut tree, dest, &exec)?;
    let record = match records.as_slice() {
        [Some(bytes)] => parse_record(bytes),
        _ => HashMap::new(),
    };
    fill_hashes(&mut tree, dest, &placed, &locals, &record, &mut out, opts)?;
    tracing::debug!(entries = tree.entries().len(), "streamed a wheel");
    Ok(Streamed::Unpacked(tree.into_entries()))
}

/// The member's name as text: ASCII, or UTF-8 when the archive flags it so. Other names are
/// CP437, which the file route decodes.
fn decoded_name(local: &Local) -> Option<String> {
    if local.name.is_ascii() || local.flags & 0x800 != 0 {
        String::from_utf8(local.name.clone()).ok()
    } else {
        None
    }
}

/// Places one member and reads its data: returns where it went (`None`: skipped) and, for a
/// `*.dist-info/RECORD`, its bytes (`None` inside when it is too large to use).
fn member<R: BufRead>(
    input: &mut Input<R>,
    local: &mut Local,
    name: &str,
    tree: &mut Tree<'_>,
    opts: &Options<'_>,
    out: &mut [u8],
) -> Result<(Option<PathBuf>, Option<RecordBytes>), UnpackError> {
    let shown = display_name(name.as_bytes());
    if local.name.contains(&0) {
        return Err(unsafe_entry(
            &shown,
            "path contains the control character '\\0'",
        ));
    }
    if local.flags & 1 != 0 {
        return Err(UnpackError::Corrupt(format!(
            "entry `{shown}` is encrypted"
        )));
    }
    let is_dir = local.name.ends_with(b"/");
    let rel = match sanitize(name.as_bytes()).map_err(|reason| unsafe_entry(&shown, reason))? {
        Some(rel) => Some(rel),
        None if is_dir => None,
        None => {
            return Err(unsafe_entry(
                &shown,
                "the path names the destination itself",
            ))
        }
    };
    let is_record = rel.as_deref().is_some_and(is_record);
    let mapped = match rel.as_deref().and_then(|r| (opts.map)(r)) {
        None => None,
        Some(m) => match check_mapped(&m).map_err(|reason| unsafe_entry(&shown, reason))? {
            Some(m) => Some(m),
            None if is_dir => None,
            None => return Err(unsafe_entry(&shown, "it maps to the destination itself")),
        },
    };
    // What this member may still expand to: its declared size, or for a member whose data
    // descriptor gives the size afterwards, what is left of the limit.
    let max = if local.described() {
        tree.room()
    } else {
        tree.reserve(local.size, &shown)?;
        local.size
    };
    let mut record = is_record.then(Vec::new);
    let mut keep = |piece: &[u8]| {
        if record
            .as_ref()
            .is_some_and(|r| r.len() + piece.len() > MAX_RECORD)
        {
            record = None;
        } else if let Some(r) = record.as_mut() {
            r.extend_from_slice(piece);
        }
    };
    let cancel = || super::tree::check_cancel(opts.cancel);
    // A directory's data (there should be none) and a skipped member's are read and dropped.
    let mut file = match &mapped {
        Some(at) if is_dir => {
            tree.add_dir(at, &shown)?;
            None
        }
        Some(at) => {
            let file = tree
                .start_file(at, &shown, false, local.size)?
                .expect("not a dry run");
            // A member whose sizes only its data descriptor gives has none here (0).
            super::tree::preallocate(&file, local.size, local.compressed);
            Some(file)
        }
        None => None,
    };
    let mut sink = |piece: &[u8]| -> Result<(), UnpackError> {
        keep(piece);
        match file.as_mut() {
            Some(f) => Ok(f.write_all(piece)?),
            None => Ok(()),
        }
    };
    zipstream::read_data(input, local, out, max, &mut sink, &cancel)?;
    if let (Some(at), Some(f)) = (&mapped, file) {
        drop(f);
        // The hash is filled in once RECORD has arrived (`fill_hashes`).
        tree.finish_file(at, false, local.size, String::new());
    }
    let placed = mapped;
    if local.described() {
        tree.reserve(local.size, &shown)?;
    }
    let record = is_record.then_some(record);
    Ok((placed, record))
}

/// `<name>.dist-info/RECORD` at the top of the wheel.
fn is_record(rel: &Path) -> bool {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy());
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some(dir), Some(file), None) if dir.ends_with(".dist-info") && file == "RECORD"
    )
}

/// RECORD's rows: archive path → (sha256 in hex, size), for rows with a usable sha256.
fn parse_record(bytes: &[u8]) -> HashMap<String, (String, u64)> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = HashMap::new();
    for line in text.lines() {
        let fields = csv_fields(line);
        let [path, hash, size] = fields.as_slice() else {
            continue;
        };
        let (Some(b64), Ok(size)) = (hash.strip_prefix("sha256="), size.parse::<u64>()) else {
            continue;
        };
        let Ok(digest) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(b64) else {
            continue;
        };
        if digest.len() == 32 {
            out.insert(path.clone(), (hex::encode(digest), size));
        }
    }
    out
}

/// The fields of one CSV row (RECORD is written by Python's `csv` module: a field holding a
/// comma or quote is quoted, and a quote inside doubled).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// Sets every file's sha256: RECORD's when it lists the member with its size and the file was
/// written once, else hashed from disk.
fn fill_hashes(
    tree: &mut Tree<'_>,
    dest: &Path,
    placed: &[Placed],
    locals: &[Local],
    record: &HashMap<String, (String, u64)>,
    buf: &mut [u8],
    opts: &Options<'_>,
) -> Result<(), UnpackError> {
    let mut source: HashMap<&Path, (usize, u32)> = HashMap::new();
    for (i, p) in placed.iter().enumerate() {
        if let Some(at) = &p.at {
            let e = source.entry(at).or_insert((i, 0));
            *e = (i, e.1 + 1);
        }
    }
    for entry in tree.entries_mut().values_mut() {
        if !matches!(entry.kind, EntryKind::File { .. }) {
            continue;
        }
        let listed = source.get(entry.path.as_path()).and_then(|&(i, writes)| {
            let (sha, size) = record.get(&placed[i].name)?;
            (writes == 1 && *size == entry.size && locals[i].size == entry.size)
                .then(|| sha.clone())
        });
        entry.sha256 = Some(match listed {
            Some(sha) => sha,
            None => {
                let mut f = fs_err::File::open(dest.join(&entry.path))?;
                copy_hashed(
                    &mut f,
                    &mut std::io::sink(),
                    buf,
                    entry.size,
                    opts.cancel,
                    &|e| e.into(),
                )?
                .1
            }
        });
    }
    Ok(())
}

/// Gives the files the central directory marks executable their execute bits (where the umask
/// left read bits, as creating them 0o755 would have).
fn make_executable(tree: &mut Tree<'_>, dest: &Path, paths: &[PathBuf]) -> Result<(), UnpackError> {
    // Windows has no execute bit; the entry is still marked executable for the receipt.
    #[cfg(not(unix))]
    let _ = dest;
    for rel in paths {
        let Some(entry) = tree.entries_mut().get_mut(rel) else {
            continue;
        };
        if !matches!(entry.kind, EntryKind::File { .. }) {
            continue;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let path = dest.join(rel);
            let mode = fs_err::metadata(&path)?.permissions().mode() & 0o777;
            fs_err::set_permissions(
                &path,
                std::fs::Permissions::from_mode(mode | ((mode & 0o444) >> 2)),
            )?;
        }
        entry.kind = EntryKind::File { executable: true };
    }
    Ok(())
}

fn name_corrupt(e: UnpackError, name: &str) -> UnpackError {
    match e {
        UnpackError::Corrupt(msg) if !msg.contains('`') => {
            UnpackError::Corrupt(format!("entry `{name}`: {msg}"))
        }
        e => e,
    }
}
