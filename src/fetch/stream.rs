//! The byte pumps: remote downloads with resume, local mirror files, and the one-pass pipeline
//! that hashes, caches and hands bytes to an unpacker at the same time.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

use sha2::{Digest, Sha256};

use super::{cache::sha256_file, Artifact, FetchError, Fetched, Fetcher};
use crate::progress::Phase;

const CHUNK: usize = 1 << 20;

/// A consumer of streamed bytes.
type Consume<'a, 'b, T> = Option<&'a mut super::Consumer<'b, T>>;

/// What the pump saw.
struct Pumped {
    hasher: Sha256,
    count: u64,
}

/// Reads `src` to its end, feeding the hash, the cache file and the progress bar.
fn pump_into(
    src: &mut dyn Read,
    sink: &mut Option<File>,
    state: &mut Pumped,
    fetcher: &Fetcher,
    id: usize,
    url: &str,
    mut forward: impl FnMut(Vec<u8>) -> bool,
) -> Result<(), FetchError> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        if fetcher.cancel_flag().load(Ordering::Relaxed) {
            return Err(FetchError::Cancelled);
        }
        let n = match src.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(FetchError::Read {
                    url: url.to_owned(),
                    source,
                })
            }
        };
        state.hasher.update(&buf[..n]);
        state.count += n as u64;
        if let Some(f) = sink.as_mut() {
            f.write_all(&buf[..n])?;
        }
        fetcher.reporter().advance(id, n as u64);
        if !forward(buf[..n].to_vec()) {
            // The consumer stopped early (it failed); its error explains why.
            return Ok(());
        }
    }
}

/// A `Read` over chunks arriving on a channel.
struct ChannelReader {
    rx: mpsc::Receiver<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.cur.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.cur = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.cur.len() - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Runs the pump on its own thread and the consumer on this one, so network, hashing and disk
/// writes overlap with decompression. Returns the consumer's result and the pump's.
fn pipeline<T>(
    src: &mut (dyn Read + Send),
    sink: &mut Option<File>,
    state: &mut Pumped,
    fetcher: &Fetcher,
    id: usize,
    url: &str,
    consume: &mut super::Consumer<'_, T>,
) -> (Result<T, FetchError>, Result<(), FetchError>) {
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(16);
    std::thread::scope(|s| {
        let pump = s.spawn(move || {
            pump_into(src, sink, state, fetcher, id, url, |chunk| {
                tx.send(chunk).is_ok()
            })
        });
        let mut reader = ChannelReader {
            rx,
            cur: Vec::new(),
            pos: 0,
        };
        let consumed = consume(&mut reader);
        if consumed.is_ok() {
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

fn check_hash(artifact: &Artifact, actual: &str) -> Result<(), FetchError> {
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
    let (consumed, pumped) = pipeline(&mut file, &mut None, &mut state, fetcher, id, &url, consume);
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
    let _lock = cache.lock(&artifact.sha256, || {
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
    fetcher.with_retries(&artifact.name, |_attempt| {
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
                &mut resp.body,
                &mut sink,
                &mut state,
                fetcher,
                id,
                &url,
                *consumer,
            );
            match (consumed, pumped) {
                (_, Err(e)) => return Err(e),
                (Ok(v), Ok(())) => streamed = Some(v),
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
                    fs_err::rename(&partial, &done)?;
                    return Err(e);
                }
            }
        } else {
            pump_into(
                &mut resp.body,
                &mut sink,
                &mut state,
                fetcher,
                id,
                &url,
                |_| true,
            )?;
        }
        file.flush()?;
        if let Err(e) = finish_size(artifact, &url, state.count) {
            if matches!(e, FetchError::TooLong { .. }) {
                fs_err::remove_file(&partial)?;
            }
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
        fs_err::rename(&partial, &done)?;
        Ok(())
    })?;
    Ok(Fetched {
        path: done,
        streamed,
    })
}

fn finish_size(artifact: &Artifact, url: &str, got: u64) -> Result<(), FetchError> {
    match artifact.size {
        Some(expected) if got < expected => Err(FetchError::Truncated {
            url: url.to_owned(),
            got,
            expected,
        }),
        Some(expected) if got > expected => Err(FetchError::TooLong {
            url: url.to_owned(),
            got,
            expected,
        }),
        _ => Ok(()),
    }
}

/// An open HTTP response.
struct Opened {
    status: u16,
    body: Box<dyn Read + Send>,
}

fn open(fetcher: &Fetcher, artifact: &Artifact, offset: u64) -> Result<Opened, FetchError> {
    let super::Location::Http(url) = &artifact.location else {
        unreachable!("remote() is only called for http locations")
    };
    let mut req = fetcher.client()?.get(url.clone());
    if offset > 0 {
        req = req.header(reqwest::header::RANGE, format!("bytes={offset}-"));
    }
    let resp = req.send().map_err(|source| FetchError::Transport {
        url: url.to_string(),
        source,
    })?;
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
    Ok(Opened {
        status,
        body: Box::new(resp),
    })
}
