//! Downloads that are consumed as they arrive and never kept (NVIDIA's wheels): the body goes to
//! the consumer (the wheel unpacker) and through sha256 at the same time, and nothing of it is
//! written to the download cache. The caller's result counts only once the whole body has
//! arrived and its hash matched; until then whatever the consumer wrote is staging, which the
//! caller deletes on any error.
//!
//! A broken connection first resumes inside the same stream: the body is asked again from the
//! byte where it broke (`Range`, and only a 206 that starts there is used), the hash and the
//! consumer carrying on as if nothing happened. Where the server cannot resume, the attempt
//! fails and the next one restarts from byte 0, the consumer called again on a fresh stream
//! (it empties its staging first). Nothing survives the process: after Ctrl-C or a kill the
//! next run downloads the wheel again (its verified, unpacked tree is what the cache keeps).

use std::io;
use std::path::Path;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::body::{Body, Pieces};
use super::limit::Limit;
use super::stream::{self, check_hash, finish_size, Opened, Pull, Pumped, Source};
use super::{Artifact, Consumer, FetchError, Fetcher, Location};
use crate::world::progress::Phase;

/// Chunks in flight between the download thread and the unpacker: a few MiB per wheel, so four
/// wheels at once stay far below the memory a kept download needs.
const DEPTH: usize = 4;

impl Fetcher {
    /// Streams `artifact` into `consume`, hashing it on the way; returns the consumer's result
    /// once the sha256 matched (a mismatch is [`FetchError::Checksum`] whatever the consumer
    /// said). Remote bodies are retried as the module says; the consumer may be called more than
    /// once and must start from an empty staging area each time.
    pub fn fetch_unkept<T>(
        &self,
        id: usize,
        artifact: &Artifact,
        consume: &mut Consumer<'_, T>,
    ) -> Result<T, FetchError> {
        self.check_trust(&artifact.location)?;
        self.reporter.start(id, &artifact.name, artifact.size);
        let result = match &artifact.location {
            Location::File(path) => local(self, id, artifact, path, consume),
            Location::Http(_) => self.with_retries(&artifact.name, |_| {
                remote(self, id, artifact, &mut *consume)
            }),
        };
        if let Err(e) = &result {
            self.reporter.finish(id, &format!("failed: {e}"));
        }
        result
    }
}

/// A file on a local mirror, read once: it must be a regular file of at most the size stated.
fn local<T>(
    fetcher: &Fetcher,
    id: usize,
    artifact: &Artifact,
    path: &Path,
    consume: &mut Consumer<'_, T>,
) -> Result<T, FetchError> {
    let url = path.display().to_string();
    let mut file = crate::world::fs::open_regular(path)?;
    let len = file.metadata()?.len();
    let limit = match artifact.size {
        Some(size) => Limit::Declared(size),
        None => Limit::unstated(Some(len), artifact.max, fetcher.settings.max_download),
    };
    if len > limit.bytes() {
        return Err(FetchError::TooLong { url, limit });
    }
    fetcher.reporter().phase(id, Phase::Downloading);
    run(
        Source::Read(&mut file),
        limit,
        fetcher,
        id,
        artifact,
        &url,
        consume,
    )
}

/// One attempt at a remote body.
fn remote<T>(
    fetcher: &Fetcher,
    id: usize,
    artifact: &Artifact,
    consume: &mut Consumer<'_, T>,
) -> Result<T, FetchError> {
    let url = artifact.location.to_string();
    let resp = stream::open(fetcher, artifact, 0)?;
    if !(200..300).contains(&resp.status) {
        return Err(FetchError::Status {
            url,
            status: resp.status,
        });
    }
    let limit = match artifact.size {
        Some(size) => Limit::Declared(size),
        None => Limit::unstated(
            resp.content_length.filter(|_| !resp.encoded()),
            artifact.max,
            fetcher.settings.max_download,
        ),
    };
    if let Some(len) = resp
        .content_length
        .filter(|_| !resp.encoded() && artifact.size.is_none())
    {
        if len > limit.bytes() {
            return Err(FetchError::TooLong { url, limit });
        }
    }
    fetcher.reporter().phase(id, Phase::Downloading);
    let (mut resuming, mut decoded);
    let src = match resp.body {
        Body::Pieces(pieces) => {
            resuming = Resuming {
                fetcher,
                artifact,
                resumes: fetcher.settings.attempts.saturating_sub(1),
                body: pieces,
                offset: 0,
            };
            Source::Pieces(&mut resuming)
        }
        // A compressed body cannot be resumed: a range of it is not a range of the file.
        Body::Decoded(reader) => {
            decoded = reader;
            Source::Read(decoded.as_mut())
        }
    };
    run(src, limit, fetcher, id, artifact, &url, consume)
}

/// Pumps `src` through the hash into `consume`, then checks size and hash before the consumer's
/// result is believed.
fn run<T>(
    src: Source<'_>,
    limit: Limit,
    fetcher: &Fetcher,
    id: usize,
    artifact: &Artifact,
    url: &str,
    consume: &mut Consumer<'_, T>,
) -> Result<T, FetchError> {
    let mut state = Pumped {
        hasher: Sha256::new(),
        count: 0,
    };
    let (consumed, pumped) = stream::piped(
        src,
        &mut None,
        &mut state,
        (limit, DEPTH, true),
        fetcher,
        id,
        url,
        consume,
    );
    // Bytes that did not all arrive explain whatever the consumer made of them.
    pumped?;
    if matches!(
        consumed,
        Err(FetchError::Cancelled | FetchError::Unpack(crate::unpack::UnpackError::Cancelled))
    ) {
        return Err(FetchError::Cancelled);
    }
    finish_size(artifact, url, state.count)?;
    // The consumer has written what it made of the bytes into its staging area; none of it
    // counts until the hash below matches.
    crate::world::checkpoint::reach("unkept-consumed");
    check_hash(artifact, &hex::encode(state.hasher.finalize()))?;
    consumed
}

/// A response body that, when the connection breaks, asks the server for the rest and carries on.
struct Resuming<'a> {
    fetcher: &'a Fetcher,
    artifact: &'a Artifact,
    resumes: u32,
    body: Pieces,
    /// Bytes delivered so far.
    offset: u64,
}

impl Pull for Resuming<'_> {
    fn pull(&mut self) -> io::Result<Option<Bytes>> {
        loop {
            match self.body.next() {
                Ok(piece) => {
                    self.offset += piece.as_ref().map_or(0, |p| p.len() as u64);
                    return Ok(piece);
                }
                Err(e) => {
                    let err = FetchError::read(&self.artifact.location.to_string(), e);
                    let transient = err.is_transient();
                    let FetchError::Read { error: e, .. } = err else {
                        unreachable!("FetchError::read makes a Read")
                    };
                    if self.resumes == 0 || self.offset == 0 || !transient {
                        return Err(e);
                    }
                    self.resumes -= 1;
                    if self
                        .fetcher
                        .cancel_flag()
                        .load(std::sync::atomic::Ordering::Relaxed)
                    {
                        return Err(e);
                    }
                    match stream::open(self.fetcher, self.artifact, self.offset) {
                        Ok(Opened {
                            status: 206,
                            body: Body::Pieces(rest),
                            ..
                        }) => {
                            self.fetcher.reporter().message(&format!(
                                "{}: the connection broke ({e}); resuming at byte {}",
                                self.artifact.name, self.offset
                            ));
                            self.body = rest;
                        }
                        // No usable range: this attempt fails and the next restarts from 0.
                        _ => return Err(e),
                    }
                }
            }
        }
    }
}
