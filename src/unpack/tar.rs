//! `.tar.xz` and `.tar.gz`, streamed in one pass.
//!
//! Layers, from the caller's reader up:
//! `Source` (notes errors of the caller's reader, so a network error stays an I/O error) →
//! 1 MiB `BufReader` → decoder (xz: [`XzReader`], multi-threaded; gz: flate2 on this thread) →
//! `BufReader` → `Guard` (bounds what the tar parser reads by itself) → `tar::Archive`, whose
//! entries are handled here one by one (never `tar`'s own `unpack`).

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;
use std::rc::Rc;

use liblzma::stream::{Action, MtStreamBuilder, Status, Stream};

use super::path::{check_link_target, check_mapped, sanitize};
use super::tree::{copy_hashed, display_name, fill, unsafe_entry, Tree, COPY_BUF};
use super::{Entry, Format, Options, UnpackError};

/// Buffer over the compressed input.
const INPUT_BUF: usize = 1 << 20;
/// Buffer over the decompressed tar stream (headers are read 512 bytes at a time; file contents
/// bypass it, being read straight into the 1 MiB copy buffer).
const TAR_BUF: usize = 256 << 10;
/// What the tar parser may read between two entries on its own: headers, GNU long names, pax
/// records and padding. tar reads long names and pax records into memory, so without this a
/// hostile 60 GB "long name" would be read into memory before any limit applied.
const META_BUDGET: u64 = if cfg!(test) { 1 << 20 } else { 64 << 20 };

pub(crate) fn unpack<R: Read>(
    format: Format,
    reader: R,
    dest: &std::path::Path,
    opts: &Options<'_>,
) -> Result<Vec<Entry>, UnpackError> {
    let source_failed = Rc::new(Cell::new(false));
    let source = BufReader::with_capacity(
        INPUT_BUF,
        Source {
            inner: reader,
            failed: Rc::clone(&source_failed),
        },
    );
    match format {
        Format::TarXz => {
            let decoder = XzReader::new(source, opts.threads.max(1) as u32)
                .map_err(|e| UnpackError::Corrupt(e.to_string()))?;
            unpack_tar(decoder, &source_failed, dest, opts)
        }
        Format::TarGz => {
            let decoder = flate2::bufread::MultiGzDecoder::new(source);
            unpack_tar(decoder, &source_failed, dest, opts)
        }
        Format::Zip => Err(UnpackError::Corrupt("zip needs a file".into())),
    }
}

fn unpack_tar<D: Read>(
    decoder: D,
    source_failed: &Rc<Cell<bool>>,
    dest: &std::path::Path,
    opts: &Options<'_>,
) -> Result<Vec<Entry>, UnpackError> {
    let budget = Rc::new(Budget {
        read: Cell::new(0),
        limit: Cell::new(0),
        tripped: Cell::new(false),
    });
    let guard = Guard {
        inner: BufReader::with_capacity(TAR_BUF, decoder),
        budget: Rc::clone(&budget),
    };
    let classify = |e: io::Error| -> UnpackError {
        if source_failed.get() {
            UnpackError::Io(e)
        } else if budget.tripped.get() {
            UnpackError::TooLarge(format!(
                "more than {META_BUDGET} bytes of tar headers or trailing data in a row"
            ))
        } else {
            UnpackError::Corrupt(e.to_string())
        }
    };

    let mut archive = ::tar::Archive::new(guard);
    let mut tree = Tree::new(dest, &opts.limits, opts.cancel, false);
    let mut buf = vec![0u8; COPY_BUF];
    {
        let mut entries = archive.entries().map_err(classify)?;
        loop {
            tree.check_cancel()?;
            budget.allow(META_BUDGET);
            let entry = match entries.next() {
                None => break,
                Some(entry) => entry.map_err(classify)?,
            };
            budget.allow(u64::MAX);
            handle_entry(&mut tree, entry, &mut buf, opts, &classify)?;
        }
    }
    // Read what follows the end-of-archive marker, so the decoder reaches the end of the
    // compressed stream and checks its trailer (gzip CRC, xz index and stream footer).
    budget.allow(META_BUDGET);
    let mut rest = archive.into_inner();
    loop {
        tree.check_cancel()?;
        if fill(&mut rest, &mut buf).map_err(classify)? == 0 {
            break;
        }
    }
    tracing::debug!(
        entries = tree.entries().len(),
        "unpacked a tar stream into {}",
        dest.display()
    );
    Ok(tree.into_entries())
}

enum Kind {
    File,
    Dir,
    Symlink,
    Hardlink,
}

fn handle_entry<R: Read>(
    tree: &mut Tree<'_>,
    mut entry: ::tar::Entry<'_, R>,
    buf: &mut [u8],
    opts: &Options<'_>,
    classify: &dyn Fn(io::Error) -> UnpackError,
) -> Result<(), UnpackError> {
    tree.count_entry()?;
    let raw = entry.path_bytes().into_owned();
    let name = display_name(&raw);
    let etype = entry.header().entry_type();
    let size = entry.size();

    if etype.is_pax_global_extensions() {
        // Metadata for the whole archive (git archive writes one): nothing to extract.
        return discard(tree, &mut entry, buf, &name, classify);
    }
    let kind = if etype.is_dir() {
        Kind::Dir
    } else if etype.is_file() || etype.is_contiguous() || etype.is_gnu_sparse() {
        // Old (v7) tars mark directories only by the trailing slash.
        if raw.ends_with(b"/") && size == 0 {
            Kind::Dir
        } else {
            Kind::File
        }
    } else if etype.is_symlink() {
        Kind::Symlink
    } else if etype.is_hard_link() {
        Kind::Hardlink
    } else {
        let what = if etype.is_character_special() || etype.is_block_special() {
            "device files are not allowed".to_string()
        } else if etype.is_fifo() {
            "FIFOs are not allowed".to_string()
        } else {
            format!("unsupported tar entry type {:?}", etype.as_byte() as char)
        };
        return Err(unsafe_entry(&name, what));
    };

    let rel = match sanitize(&raw).map_err(|reason| unsafe_entry(&name, reason))? {
        Some(rel) => rel,
        None if matches!(kind, Kind::Dir) => {
            return discard(tree, &mut entry, buf, &name, classify)
        }
        None => return Err(unsafe_entry(&name, "the path names the destination itself")),
    };
    let Some(mapped) = map(opts, &rel, &name)? else {
        return discard(tree, &mut entry, buf, &name, classify);
    };
    let Some(mapped) = mapped else {
        if matches!(kind, Kind::Dir) {
            return discard(tree, &mut entry, buf, &name, classify);
        }
        return Err(unsafe_entry(&name, "it maps to the destination itself"));
    };

    match kind {
        Kind::Dir => {
            discard(tree, &mut entry, buf, &name, classify)?;
            tree.add_dir(&mapped, &name)
        }
        Kind::File => {
            let mode = entry
                .header()
                .mode()
                .map_err(|e| UnpackError::Corrupt(format!("entry `{name}`: {e}")))?;
            let executable = mode & 0o111 != 0;
            tree.reserve(size, &name)?;
            let mut file = tree
                .start_file(&mapped, &name, executable, size)?
                .expect("not a dry run");
            let (written, sha256) =
                copy_hashed(&mut entry, &mut file, buf, size, opts.cancel, classify)?;
            if written != size {
                return Err(UnpackError::Corrupt(format!(
                    "entry `{name}` ends after {written} of its {size} bytes"
                )));
            }
            tree.finish_file(&mapped, executable, size, sha256);
            Ok(())
        }
        Kind::Symlink => {
            let target = entry
                .link_name_bytes()
                .ok_or_else(|| UnpackError::Corrupt(format!("symlink `{name}` has no target")))?
                .into_owned();
            let target = check_link_target(&mapped, &target)
                .map_err(|reason| unsafe_entry(&name, reason))?;
            discard(tree, &mut entry, buf, &name, classify)?;
            tree.add_symlink(&mapped, &name, target)
        }
        Kind::Hardlink => {
            let target = entry
                .link_name_bytes()
                .ok_or_else(|| UnpackError::Corrupt(format!("hardlink `{name}` has no target")))?
                .into_owned();
            let target = match sanitize(&target) {
                Ok(Some(target)) => target,
                Ok(None) => return Err(unsafe_entry(&name, "hardlink to the destination itself")),
                Err(reason) => {
                    return Err(unsafe_entry(&name, format!("hardlink target: {reason}")))
                }
            };
            let target = match map(opts, &target, &name)? {
                Some(Some(target)) => target,
                _ => {
                    return Err(unsafe_entry(
                        &name,
                        format!("hardlink target `{}` is not extracted", target.display()),
                    ))
                }
            };
            discard(tree, &mut entry, buf, &name, classify)?;
            tree.add_hardlink(&mapped, &name, &target, buf)
        }
    }
}

/// Applies the caller's map and checks its answer: `None` to skip, `Some(None)` for the
/// destination itself.
fn map(
    opts: &Options<'_>,
    rel: &std::path::Path,
    name: &str,
) -> Result<Option<Option<PathBuf>>, UnpackError> {
    match (opts.map)(rel) {
        None => Ok(None),
        Some(mapped) => check_mapped(&mapped)
            .map(Some)
            .map_err(|reason| unsafe_entry(name, reason)),
    }
}

/// Reads an entry's content without writing it; it still counts against the size limit.
fn discard(
    tree: &mut Tree<'_>,
    entry: &mut dyn Read,
    buf: &mut [u8],
    name: &str,
    classify: &dyn Fn(io::Error) -> UnpackError,
) -> Result<(), UnpackError> {
    loop {
        tree.check_cancel()?;
        let n = fill(entry, buf).map_err(classify)?;
        if n == 0 {
            return Ok(());
        }
        tree.reserve(n as u64, name)?;
    }
}

/// The caller's reader; remembers whether it failed.
struct Source<R> {
    inner: R,
    failed: Rc<Cell<bool>>,
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).inspect_err(|e| {
            if e.kind() != io::ErrorKind::Interrupted {
                self.failed.set(true);
            }
        })
    }
}

/// How far the tar parser may read: `limit` is an absolute position in the decompressed stream.
struct Budget {
    read: Cell<u64>,
    limit: Cell<u64>,
    tripped: Cell<bool>,
}

impl Budget {
    fn allow(&self, n: u64) {
        self.limit.set(self.read.get().saturating_add(n));
    }
}

struct Guard<R> {
    inner: R,
    budget: Rc<Budget>,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let b = &self.budget;
        let room = b.limit.get().saturating_sub(b.read.get());
        if room == 0 && !buf.is_empty() {
            // Let EOF through, refuse anything more.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            b.tripped.set(true);
            return Err(io::Error::other("tar stream exceeds its read budget"));
        }
        let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..len])?;
        b.read.set(b.read.get() + n as u64);
        Ok(n)
    }
}

/// Upper bound on the memory the xz decoder may use for threading: a quarter of RAM, as `xz`
/// does by default; above it, liblzma uses fewer threads (down to one), never fails.
fn xz_memlimit_threading() -> u64 {
    #[cfg(target_os = "linux")]
    if let Ok(meminfo) = fs_err::read_to_string("/proc/meminfo") {
        let total_kib = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            });
        if let Some(kib) = total_kib {
            return (kib * 1024 / 4).max(256 << 20);
        }
    }
    1 << 30
}

/// An xz decoder over liblzma's multi-threaded decoder that also reads concatenated streams
/// (like `xz -dc`), which the builder offers no flag for.
pub(crate) struct XzReader<R> {
    inner: R,
    stream: Stream,
    threads: u32,
    memlimit: u64,
    done: bool,
}

impl<R: BufRead> XzReader<R> {
    pub(crate) fn new(inner: R, threads: u32) -> io::Result<Self> {
        let memlimit = xz_memlimit_threading();
        Ok(XzReader {
            inner,
            stream: Self::decoder(threads, memlimit)?,
            threads,
            memlimit,
            done: false,
        })
    }

    fn decoder(threads: u32, memlimit: u64) -> io::Result<Stream> {
        // With one thread the threaded decoder still buffers a whole block (24 MiB in NVIDIA's
        // archives) plus its input; the plain decoder needs only the dictionary, like `xz -dc`.
        // The largest LZMA2 dictionary is 1.5 GiB: never refuse a valid archive.
        let stream = if threads <= 1 {
            Stream::new_stream_decoder(u64::MAX, 0)
        } else {
            MtStreamBuilder::new()
                .threads(threads)
                .memlimit_threading(memlimit)
                .memlimit_stop(u64::MAX)
                .decoder()
        };
        stream.map_err(|e| io::Error::other(format!("cannot start the xz decoder: {e}")))
    }

    /// After a stream ends: skip stream padding (zero bytes, a multiple of four), then either the
    /// input ends or another stream starts.
    fn next_stream(&mut self) -> io::Result<()> {
        let mut padding = 0usize;
        loop {
            let input = self.inner.fill_buf()?;
            let zeros = input.iter().take_while(|&&b| b == 0).count();
            let more = zeros == input.len() && !input.is_empty();
            padding += zeros;
            self.inner.consume(zeros);
            if !more {
                break;
            }
        }
        if !padding.is_multiple_of(4) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "xz: bad stream padding",
            ));
        }
        if self.inner.fill_buf()?.is_empty() {
            self.done = true;
        } else {
            self.stream = Self::decoder(self.threads, self.memlimit)?;
        }
        Ok(())
    }
}

impl<R: BufRead> Read for XzReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if self.done {
                return Ok(0);
            }
            let input = self.inner.fill_buf()?;
            let eof = input.is_empty();
            let (before_in, before_out) = (self.stream.total_in(), self.stream.total_out());
            let status =
                self.stream
                    .process(input, buf, if eof { Action::Finish } else { Action::Run });
            let consumed = (self.stream.total_in() - before_in) as usize;
            let produced = (self.stream.total_out() - before_out) as usize;
            self.inner.consume(consumed);
            let status = status
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("xz: {e}")))?;
            if status == Status::StreamEnd {
                self.next_stream()?;
                if produced > 0 {
                    return Ok(produced);
                }
                continue;
            }
            if produced > 0 {
                return Ok(produced);
            }
            if eof {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "xz: the stream is truncated",
                ));
            }
            if consumed == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "xz: the decoder made no progress",
                ));
            }
        }
    }
}
