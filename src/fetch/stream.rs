//! The byte pumps: remote downloads with resume, local mirror files, and the one-pass pipeline
//! that hashes, caches and hands bytes to an unpacker at the same time.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::body::{Body, Pieces, PiecesReader};
use super::chunks::{ChannelReader, Chunk};
use super::limit::Limit;
use super::{cache::sha256_file, Artifact, FetchError, Fetched, Fetcher};
use crate::world::progress::Phase;

pub(super) const CHUNK: usize = 1 << 20;

/// A consumer of streamed bytes.
type Consume<'a, 'b, T> = Option<&'a mut super::Consumer<'b, T>>;

/// What the pump saw.
pub(super) struct Pumped {
    pub(super) hasher: Sha256,
    pub(super) count: u64,
}

/// Where a pump's bytes come from.
pub(super) enum Source<'a> {
    /// A reader (a mirror's file, a decoded body), read into the pump's own buffers.
    Read(&'a mut (dyn Read + Send)),
    /// An HTTP body whose pieces are the client's own buffers, passed on uncopied.
    Pieces(&'a mut (dyn Pull + Send)),
}

/// A body that hands out its pieces as it receives them.
pub(super) trait Pull {
    /// The next piece; `None` at the end of the body.
    fn pull(&mut self) -> io::Result<Option<Bytes>>;
}

impl Pull for super::body::Pieces {
    fn pull(&mut self) -> io::Result<Option<Bytes>> {
        self.next()
    }
}

/// Reads `src` to its end or to `limit` (counting bytes already in `state`), feeding the hash,
/// the cache file and the progress bar. A body that passes a limit other than the declared
/// size is [`FetchError::TooLong`] as soon as the first byte past it arrives.
#[allow(clippy::too_many_arguments)]
pub(super) fn pump_into(
    src: Source<'_>,
    sink: &mut Option<File>,
    state: &mut Pumped,
    limit: Limit,
    fetcher: &Fetcher,
    id: usize,
    url: &str,
    forward: Option<Forward<'_>>,
) -> Result<(), FetchError> {
    let Some(Forward { send, spare }) = forward else {
        return pump_kept(src, sink, state, limit, fetcher, id, url);
    };
    // Every byte that arrives, before it goes on: the bound, the hash, the cache file, the bar.
    let mut take = |bytes: &[u8], state: &mut Pumped| -> Result<(), FetchError> {
        if state.count + bytes.len() as u64 > limit.bytes() {
            return Err(FetchError::TooLong {
                url: url.to_owned(),
                limit,
            });
        }
        state.hasher.update(bytes);
        state.count += bytes.len() as u64;
        if let Some(f) = sink.as_mut() {
            f.write_all(bytes)?;
        }
        fetcher.reporter().advance(id, bytes.len() as u64);
        Ok(())
    };
    let src = match src {
        Source::Read(src) => src,
        Source::Pieces(src) => {
            return pump_pieces(src, state, limit, fetcher, url, &mut take, send);
        }
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        if fetcher.cancel_flag().load(Ordering::Relaxed) {
            return Err(FetchError::Cancelled);
        }
        let room = limit.room(state.count).min(CHUNK as u64) as usize;
        if room == 0 {
            // The declared size is in: what the server may still have is never read.
            return Ok(());
        }
        let n = match src.read(&mut buf[..room]) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => return Err(FetchError::read(url, source)),
        };
        take(&buf[..n], state)?;
        // The filled buffer itself goes to the consumer (no copy); the next read goes into one
        // it has handed back, or a new one while none has come back yet.
        let next = spare()
            .filter(|b| b.len() == CHUNK)
            .unwrap_or_else(|| vec![0u8; CHUNK]);
        let full = std::mem::replace(&mut buf, next);
        if !send(Chunk::Owned { buf: full, len: n }) {
            // The consumer stopped early (it failed); its error explains why.
            return Ok(());
        }
    }
}

/// What the pump does with every byte that arrives before it goes on (the bound, the hash, the
/// cache file, the bar).
type Take<'a> = dyn FnMut(&[u8], &mut Pumped) -> Result<(), FetchError> + 'a;

/// [`pump_into`] for a body of pieces: each goes through `take` and on to the consumer in
/// batches of about a [`CHUNK`], so the consumer is woken once a chunk however small the pieces
/// the connection delivers.
fn pump_pieces(
    src: &mut (dyn Pull + Send),
    state: &mut Pumped,
    limit: Limit,
    fetcher: &Fetcher,
    url: &str,
    take: &mut Take<'_>,
    send: &mut dyn FnMut(Chunk) -> bool,
) -> Result<(), FetchError> {
    let mut batch = VecDeque::new();
    let mut batched = 0;
    loop {
        if fetcher.cancel_flag().load(Ordering::Relaxed) {
            return Err(FetchError::Cancelled);
        }
        let room = limit.room(state.count);
        if room == 0 {
            // The declared size is in: what the server may still have is never read.
            break;
        }
        let Some(mut piece) = src.pull().map_err(|e| FetchError::read(url, e))? else {
            break;
        };
        if piece.len() as u64 > room {
            piece.truncate(room as usize);
        }
        take(&piece, state)?;
        batched += piece.len();
        batch.push_back(piece);
        if batched >= CHUNK {
            batched = 0;
            if !send(Chunk::Shared(std::mem::take(&mut batch))) {
                // The consumer stopped early (it failed); its error explains why.
                return Ok(());
            }
        }
    }
    if !batch.is_empty() {
        send(Chunk::Shared(batch));
    }
    Ok(())
}

/// Where the pump hands each chunk (`send`: false when the consumer has stopped), and where it
/// gets a used buffer back (`spare`).
pub(super) struct Forward<'a> {
    pub(super) send: &'a mut dyn FnMut(Chunk) -> bool,
    pub(super) spare: &'a dyn Fn() -> Option<Vec<u8>>,
}

/// [`pump_into`] with no consumer: the bytes go only through the hash and into `sink`.
fn pump_kept(
    src: Source<'_>,
    sink: &mut Option<File>,
    state: &mut Pumped,
    limit: Limit,
    fetcher: &Fetcher,
    id: usize,
    url: &str,
) -> Result<(), FetchError> {
    let buf = std::cell::RefCell::new(None);
    // Each chunk's buffer comes straight back as the next one's; shared pieces are let go.
    let mut send = |chunk: Chunk| {
        if let Chunk::Owned { buf: b, .. } = chunk {
            *buf.borrow_mut() = Some(b);
        }
        true
    };
    let spare = || buf.borrow_mut().take();
    pump_into(
        src,
        sink,
        state,
        limit,
        fetcher,
        id,
        url,
        Some(Forward {
            send: &mut send,
            spare: &spare,
        }),
    )
}

/// How many chunks (of up to [`CHUNK`] bytes) may wait between the pump and the consumer.
const DEPTH: usize = 16;

/// Runs the pump on its own thread and the consumer on this one, so network, hashing and disk
/// writes overlap with decompression. Returns the consumer's result and the pump's.
#[allow(clippy::too_many_arguments)]
fn pipeline<T>(
    src: Source<'_>,
    sink: &mut Option<File>,
    state: &mut Pumped,
    limit: Limit,
    fetcher: &Fetcher,
    id: usize,
    url: &str,
    consume: &mut super::Consumer<'_, T>,
) -> (Result<T, FetchError>, Result<(), FetchError>) {
    piped(
        src,
        sink,
        state,
        (limit, DEPTH, false),
        fetcher,
        id,
        url,
        consume,
    )
}

/// [`pipeline`] with `depth` chunks in flight; with `drain_failed`, the rest of the body is
/// still read (and hashed) after the consumer failed, so the caller can tell a bad archive
/// from bad bytes (not after Ctrl-C or a full disk).
#[allow(clippy::too_many_arguments)]
pub(super) fn piped<T>(
    src: Source<'_>,
    sink: &mut Option<File>,
    state: &mut Pumped,
    (limit, depth, drain_failed): (Limit, usize, bool),
    fetcher: &Fetcher,
    id: usize,
    url: &str,
    consume: &mut super::Consumer<'_, T>,
) -> (Result<T, FetchError>, Result<(), FetchError>) {
    let (tx, rx) = mpsc::sync_channel::<Chunk>(depth);
    // Used buffers coming back: at most `depth` + 2 are ever allocated per download.
    let (back, spares) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let pump = s.spawn(move || {
            pump_into(
                src,
                sink,
                state,
                limit,
                fetcher,
                id,
                url,
                Some(Forward {
                    send: &mut |chunk| tx.send(chunk).is_ok(),
                    spare: &|| spares.try_recv().ok(),
                }),
            )
        });
        let mut reader = ChannelReader::new(rx, back);
        let consumed = consume(&mut reader);
        let drain = match &consumed {
            Ok(_) => true,
            Err(e) => {
                drain_failed
                    && !e.is_disk_full()
                    && !matches!(
                        e,
                        FetchError::Cancelled
                            | FetchError::Unpack(crate::unpack::UnpackError::Cancelled)
                    )
            }
        };
        if drain {
            // Trailing bytes (tar padding after the end marker) still count for the hash.
            let _ = io::copy(&mut reader, &mut io::sink());
        }
        drop(reader);
        let pumped = pump.join().unwrap_or_else(|_| {
            Err(FetchError::Local(io::Error::other(
                "download thread panicked",
            )))
        });
        (consumed, pumped)
    })
}

pub(super) fn check_hash(artifact: &Artifact, actual: &str) -> Result<(), FetchError> {
    if actual.eq_ignore_ascii_case(&artifact.sha256) {
        Ok(())
    } else {
        Err(FetchError::Checksum {
            url: artifact.location.to_string(),
            expected: artifact.sha256.clone(),
            actual: actual.to_owned(),
        })
    }
}

/// A file on a local mirror: hashed in place (while streaming to the consumer, if any); never
/// copied into the cache.
pub(super) fn local<T>(
    fetcher: &Fetcher,
    id: usize,
    artifact: &Artifact,
    path: &Path,
    consume: Consume<'_, '_, T>,
) -> Result<Fetched<T>, FetchError> {
    fetcher.reporter().phase(id, Phase::Verifying);
    let url = path.display().to_string();
    // The file is used as it is (unpacked in place), so all of it must be what was hashed: a
    // regular file of exactly the declared size, or within the ceiling.
    let meta = fs_err::metadata(path)?;
    if !meta.is_file() {
        return Err(FetchError::BadLocation {
            location: url,
            message: "not a regular file".into(),
        });
    }
    let limit = match artifact.size {
        Some(size) => Limit::Declared(size),
        None => Limit::unstated(None, artifact.max, fetcher.settings.max_download),
    };
    match artifact.size {
        Some(expected) if meta.len() < expected => {
            return Err(FetchError::Truncated {
                url,
                got: meta.len(),
                expected,
            })
        }
        _ if meta.len() > limit.bytes() => return Err(FetchError::TooLong { url, limit }),
        _ => {}
    }
    let Some(consume) = consume else {
        let actual = sha256_file(path, |n| fetcher.reporter().advance(id, n))?;
        check_hash(artifact, &actual)?;
        return Ok(Fetched {
            path: path.to_owned(),
            streamed: None,
        });
    };
    let mut file = fs_err::File::open(path)?;
    let mut state = Pumped {
        hasher: Sha256::new(),
        count: 0,
    };
    let (consumed, pumped) = pipeline(
        Source::Read(&mut file),
        &mut None,
        &mut state,
        Limit::Ceiling(meta.len()),
        fetcher,
        id,
        &url,
        consume,
    );
    pumped?;
    check_hash(artifact, &hex::encode(state.hasher.finalize()))?;
    Ok(Fetched {
        path: path.to_owned(),
        streamed: Some(consumed?),
    })
}

/// A remote artifact: cache hit, or download with resume and retries.
pub(super) fn remote<T>(
    fetcher: &Fetcher,
    id: usize,
    artifact: &Artifact,
    mut consume: Consume<'_, '_, T>,
) -> Result<Fetched<T>, FetchError> {
    let cache = fetcher.cache();
    let url = artifact.location.to_string();
    let lock = cache.lock(&artifact.sha256, || {
        fetcher.reporter().message(&format!(
            "{}: waiting for another cudaup downloading it",
            artifact.name
        ))
    })?;
    let done = cache.download(&artifact.sha256);
    if done.is_file() {
        fetcher.reporter().phase(id, Phase::Verifying);
        let actual = sha256_file(&done, |_| {})?;
        if actual.eq_ignore_ascii_case(&artifact.sha256) {
            fetcher.reporter().advance(id, artifact.size.unwrap_or(0));
            return Ok(Fetched {
                path: done,
                streamed: None,
            });
        }
        fetcher.reporter().message(&format!(
            "{}: the cached copy is damaged; downloading again",
            artifact.name
        ));
        fs_err::remove_file(&done)?;
    }
    let partial = cache.partial(&artifact.sha256);
    let mut streamed: Option<T> = None;
    let mut stream_tried = false;
    let fetched = fetcher.with_retries(&artifact.name, |_attempt| {
        let mut offset = partial.metadata().map(|m| m.len()).unwrap_or(0);
        if artifact.size.is_some_and(|s| offset > s) {
            fs_err::remove_file(&partial)?;
            offset = 0;
        }
        let mut resp = open(fetcher, artifact, offset)?;
        if offset > 0 && resp.status == 416 {
            // The server has nothing past our partial file: it is complete or stale.
            fs_err::remove_file(&partial)?;
            return Err(FetchError::Restart {
                url: url.clone(),
                reason: "the server answered 416 to the resume request".into(),
            });
        }
        if !(200..300).contains(&resp.status) {
            return Err(FetchError::Status {
                url: url.clone(),
                status: resp.status,
            });
        }
        if offset > 0 && resp.status != 206 {
            // A 200 to a Range request is the whole file: appending it would corrupt ours.
            fetcher.reporter().message(&format!(
                "{}: the server ignored the resume request; starting over",
                artifact.name
            ));
            offset = 0;
        }
        if offset > 0 && resp.encoded() {
            // A range of a compressed representation cannot be appended to decoded bytes.
            fs_err::remove_file(&partial)?;
            return Err(FetchError::Restart {
                url: url.clone(),
                reason: "the server compressed the resumed part".into(),
            });
        }
        let limit = match artifact.size {
            Some(size) => Limit::Declared(size),
            None => Limit::unstated(
                resp.content_length
                    .filter(|_| !resp.encoded())
                    .and_then(|len| len.checked_add(offset)),
                artifact.max,
                fetcher.settings.max_download,
            ),
        };
        if let Some(len) = resp
            .content_length
            .filter(|_| !resp.encoded() && artifact.size.is_none())
        {
            if offset.saturating_add(len) > limit.bytes() {
                // Announced past the bound: not a byte of it is read, nothing is kept.
                drop(resp);
                return Err(discard_unusable(
                    FetchError::TooLong {
                        url: url.clone(),
                        limit,
                    },
                    &partial,
                ));
            }
        }
        let mut state = Pumped {
            hasher: Sha256::new(),
            count: 0,
        };
        let mut file = if offset > 0 {
            fetcher.reporter().phase(id, Phase::Resuming);
            let mut f = fs_err::OpenOptions::new()
                .read(true)
                .append(true)
                .open(&partial)?
                .into_parts()
                .0;
            f.seek(io::SeekFrom::Start(0))?;
            let mut buf = vec![0u8; CHUNK];
            let mut left = offset;
            while left > 0 {
                let n = f.read(&mut buf[..CHUNK.min(left as usize)])?;
                if n == 0 {
                    break;
                }
                state.hasher.update(&buf[..n]);
                left -= n as u64;
            }
            state.count = offset;
            fetcher.reporter().advance(id, offset);
            f
        } else {
            fetcher.reporter().phase(id, Phase::Downloading);
            fs_err::create_dir_all(partial.parent().expect("cache path has a parent"))?;
            fs_err::File::create(&partial)?.into_parts().0
        };
        let mut sink = Some(file.try_clone()?);
        let streaming = offset == 0 && !stream_tried && consume.is_some();
        if streaming {
            stream_tried = true;
            let consumer = consume.as_mut().expect("checked");
            let (consumed, pumped) = pipeline(
                resp.body.source(),
                &mut sink,
                &mut state,
                limit,
                fetcher,
                id,
                &url,
                *consumer,
            );
            match (consumed, pumped) {
                (_, Err(e)) => return Err(discard_unusable(e, &partial)),
                (Ok(v), Ok(())) => streamed = Some(v),
                // The unpacker ran out of disk: not the bytes' fault, and no retry will fit.
                (Err(e), Ok(())) if e.is_disk_full() => return Err(e),
                (Err(e), Ok(())) => {
                    // The body arrived whole: if its hash is wrong, that is the real story, and
                    // the bytes are discarded; if it is right, the archive itself is bad.
                    file.flush()?;
                    finish_size(artifact, &url, state.count)?;
                    let actual = hex::encode(state.hasher.clone().finalize());
                    if let Err(mismatch) = check_hash(artifact, &actual) {
                        fs_err::remove_file(&partial)?;
                        return Err(mismatch);
                    }
                    file.sync_all()?;
                    crate::world::fs::finish_download(&partial, &done)?;
                    return Err(e);
                }
            }
        } else if let Err(e) = pump_into(
            resp.body.source(),
            &mut sink,
            &mut state,
            limit,
            fetcher,
            id,
            &url,
            None,
        ) {
            return Err(discard_unusable(e, &partial));
        }
        file.flush()?;
        if let Err(e) = finish_size(artifact, &url, state.count) {
            streamed = None;
            return Err(e);
        }
        let actual = hex::encode(state.hasher.finalize());
        if let Err(e) = check_hash(artifact, &actual) {
            fs_err::remove_file(&partial)?;
            streamed = None;
            if offset > 0 {
                return Err(FetchError::Restart {
                    url: url.clone(),
                    reason: "the resumed download did not verify".into(),
                });
            }
            return Err(e);
        }
        file.sync_all()?;
        crate::world::fs::finish_download(&partial, &done)?;
        Ok(())
    });
    match fetched {
        Ok(()) => Ok(Fetched {
            path: done,
            streamed,
        }),
        // The disk filled up: nothing of this download is kept (a partial file would keep it
        // full), nor a lock file this fetch made.
        Err(e) if e.is_disk_full() => {
            // The cache file's own writes carry no path: name it.
            let e = match e {
                FetchError::Local(io) if io.get_ref().is_none() => FetchError::Local(
                    io::Error::new(io.kind(), format!("writing {}: {io}", partial.display())),
                ),
                e => e,
            };
            let e = discard_unusable(e, &partial);
            if lock.created() {
                lock.remove();
            }
            Err(e)
        }
        Err(e) => Err(e),
    }
}

/// A download cut off at a limit is not resumed, nor one the disk could not hold: its partial
/// file goes.
fn discard_unusable(e: FetchError, partial: &Path) -> FetchError {
    if matches!(e, FetchError::TooLong { .. }) || e.is_disk_full() {
        match fs_err::remove_file(partial) {
            Err(io) if io.kind() != std::io::ErrorKind::NotFound => return io.into(),
            _ => {}
        }
    }
    e
}

/// A body that ended before the declared size (the pump never reads past it).
pub(super) fn finish_size(artifact: &Artifact, url: &str, got: u64) -> Result<(), FetchError> {
    match artifact.size {
        Some(expected) if got < expected => Err(FetchError::Truncated {
            url: url.to_owned(),
            got,
            expected,
        }),
        _ => Ok(()),
    }
}

/// An open HTTP response.
pub(super) struct Opened {
    pub(super) status: u16,
    /// The body, decoded if the server compressed it.
    pub(super) body: Body,
    /// The Content-Length, of the body as sent.
    pub(super) content_length: Option<u64>,
}

impl Opened {
    /// Whether the server compressed the body (Content-Encoding) although cudaup asked for
    /// identity.
    pub(super) fn encoded(&self) -> bool {
        matches!(self.body, Body::Decoded(_))
    }
}

impl Body {
    /// The body as the pump reads it.
    pub(super) fn source(&mut self) -> Source<'_> {
        match self {
            Body::Pieces(pieces) => Source::Pieces(pieces),
            Body::Decoded(reader) => Source::Read(reader.as_mut()),
        }
    }
}

/// The content coding a response declares, lower-case; `None` for the file's own bytes.
fn coding(url: &str, headers: &reqwest::header::HeaderMap) -> Result<Option<String>, FetchError> {
    let encoding = headers
        .get(reqwest::header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    match encoding.as_deref() {
        None | Some("") | Some("identity") => Ok(None),
        Some("gzip") | Some("x-gzip") | Some("deflate") => Ok(encoding),
        Some(other) => Err(FetchError::Encoding {
            url: url.to_owned(),
            encoding: other.to_owned(),
        }),
    }
}

/// `raw` decoded as `coding` says ([`coding`] refused every other).
fn decoder<R: Read + Send + 'static>(coding: &str, raw: R) -> Box<dyn Read + Send> {
    if coding == "deflate" {
        Box::new(flate2::read::ZlibDecoder::new(raw))
    } else {
        Box::new(flate2::read::MultiGzDecoder::new(raw))
    }
}

/// The body of `resp` as the file's own bytes. cudaup asks for `Accept-Encoding: identity`
/// (and reqwest is built without decompression), so a checksum is always over the bytes the
/// source hashed; a server that compresses anyway gets its gzip or deflate decoded here, the
/// limits applying to the decoded bytes. Other encodings are refused.
pub(super) fn decoded(
    url: &str,
    resp: reqwest::blocking::Response,
) -> Result<(Box<dyn Read + Send>, bool), FetchError> {
    Ok(match coding(url, resp.headers())? {
        None => (Box::new(resp), false),
        Some(c) => (decoder(&c, resp), true),
    })
}

/// Asks for `artifact` from byte `offset` on, with the artifact client (body.rs).
pub(super) fn open(
    fetcher: &Fetcher,
    artifact: &Artifact,
    offset: u64,
) -> Result<Opened, FetchError> {
    let super::Location::Http(url) = &artifact.location else {
        unreachable!("remote() is only called for http locations")
    };
    let mut req = fetcher
        .artifact_client()?
        .get(url.clone())
        .header(reqwest::header::ACCEPT_ENCODING, "identity");
    if offset > 0 {
        req = req.header(reqwest::header::RANGE, format!("bytes={offset}-"));
    }
    let pieces = Pieces::send(url.as_str(), req)?;
    let resp = pieces.response();
    let status = resp.status().as_u16();
    if status == 206 {
        // Only a range that starts where our file ends can be appended.
        let starts_at = resp
            .headers()
            .get(reqwest::header::CONTENT_RANGE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("bytes "))
            .and_then(|v| v.split('-').next())
            .and_then(|v| v.parse::<u64>().ok());
        if starts_at != Some(offset) {
            return Err(FetchError::Restart {
                url: url.to_string(),
                reason: format!("the server resumed at {starts_at:?}, not at byte {offset}"),
            });
        }
    }
    let content_length = resp.content_length();
    let body = match coding(url.as_str(), resp.headers())? {
        None => Body::Pieces(pieces),
        Some(c) => Body::Decoded(decoder(&c, PiecesReader::new(pieces))),
    };
    Ok(Opened {
        status,
        body,
        content_length,
    })
}
