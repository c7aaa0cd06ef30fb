//! Downloads: HTTP with connect and read timeouts (never a whole-transfer timeout; documents
//! through a blocking client, artifacts' bodies on a runtime of their own: body.rs),
//! retries with backoff classified by the error chain, resume with `Range` (only a 206 is
//! trusted), a content-addressed cache, and hashing while the bytes arrive. Streamable archives
//! are unpacked during the first attempt, in one pass over the bytes.

mod body;
mod cache;
mod cause;
mod chunks;
mod error;
mod limit;
mod location;
mod pages;
mod stream;
pub mod tls;
mod unkept;

use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use cache::Cache;

/// The sha256 of a file, lower-case hex.
pub fn sha256_file(path: &std::path::Path) -> std::io::Result<String> {
    cache::sha256_file(path, |_| {})
}
pub use cause::Cause;
pub use error::FetchError;
pub use limit::{Cap, Limit, DEFAULT_MAX_DOWNLOAD, MAX_DOCUMENT, MAX_WHEEL, WHEEL_CAP};
pub use location::{GivenLocation, Location};
pub use pages::MAX_FRESH;

use crate::world::progress::Reporter;

/// Takes the bytes of a download as they arrive (an unpacker), and returns its result. A
/// `BufRead`: an unpacker that reads in place is handed the download's own buffers, uncopied.
pub type Consumer<'a, T> =
    dyn FnMut(&mut (dyn std::io::BufRead + Send)) -> Result<T, FetchError> + 'a;

/// Something to download, with the sha256 it must have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Human name (`cuda_nvcc 13.0.88`).
    pub name: String,
    /// Where it is.
    pub location: Location,
    /// Expected sha256, lower-case hex.
    pub sha256: String,
    /// Expected size, when the source states it.
    pub size: Option<u64>,
    /// When no size is stated: the most a file of its kind may have (else the download
    /// ceiling bounds it).
    pub max: Option<Cap>,
}

/// Network settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where downloads are cached.
    pub cache_dir: PathBuf,
    /// Accept plain http sources.
    pub allow_http: bool,
    /// Attempts per download (1 = no retry).
    pub attempts: u32,
    /// Longest wait for the next bytes of a response.
    pub read_timeout: Duration,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// First backoff delay; doubles per retry, with jitter. Zero in tests.
    pub backoff: Duration,
    /// The most bytes a download whose size nobody states may have ([`DEFAULT_MAX_DOWNLOAD`]).
    pub max_download: u64,
}

impl Settings {
    /// Defaults: 4 attempts, 30 s read timeout, 10 s connect timeout, 0.5 s first backoff, a
    /// 4 GiB ceiling for downloads of unknown size.
    pub fn new(cache_dir: PathBuf) -> Self {
        Self {
            cache_dir,
            allow_http: false,
            attempts: 4,
            read_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            backoff: Duration::from_millis(500),
            max_download: DEFAULT_MAX_DOWNLOAD,
        }
    }
}

/// Fetches metadata and artifacts.
pub struct Fetcher {
    settings: Settings,
    client: std::sync::OnceLock<Result<reqwest::blocking::Client, String>>,
    /// Artifacts' bodies (body.rs).
    artifact_client: std::sync::OnceLock<Result<reqwest::Client, String>>,
    cache: Cache,
    cancel: Arc<AtomicBool>,
    reporter: Arc<dyn Reporter>,
}

/// What [`Fetcher::fetch`] produced.
#[derive(Debug)]
pub struct Fetched<T> {
    /// The verified file (in the cache, or on the local mirror).
    pub path: PathBuf,
    /// The stream consumer's result, when the bytes were consumed while they arrived.
    pub streamed: Option<T>,
}

impl Fetcher {
    /// A fetcher reporting to `reporter` and stopping when `cancel` is set.
    pub fn new(settings: Settings, cancel: Arc<AtomicBool>, reporter: Arc<dyn Reporter>) -> Self {
        let cache = Cache::new(settings.cache_dir.clone());
        Self {
            settings,
            client: std::sync::OnceLock::new(),
            artifact_client: std::sync::OnceLock::new(),
            cache,
            cancel,
            reporter,
        }
    }

    /// The download cache.
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The reporter.
    pub fn reporter(&self) -> &dyn Reporter {
        self.reporter.as_ref()
    }

    /// The cancellation flag.
    pub fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }

    fn client(&self) -> Result<&reqwest::blocking::Client, FetchError> {
        let built = self.client.get_or_init(|| {
            reqwest::blocking::Client::builder()
                // The root store read once per process, not once per client (tls.rs).
                .use_preconfigured_tls(tls::config()?)
                .user_agent(concat!("cudaup/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(self.settings.connect_timeout)
                // The blocking client applies this per operation, reads of the body included: a
                // read timeout, not a limit on the whole transfer (rust-lang/rustup#4213).
                .timeout(self.settings.read_timeout)
                .redirect(error::redirect_policy(self.settings.allow_http))
                .build()
                .map_err(|e| e.to_string())
        });
        built.as_ref().map_err(|e| FetchError::BadLocation {
            location: "http client".into(),
            message: e.clone(),
        })
    }

    /// The client for artifacts' bodies: the same TLS roots, timeouts and redirect rules as
    /// [`Fetcher::client`]'s, on the runtime each response brings (body.rs).
    fn artifact_client(&self) -> Result<&reqwest::Client, FetchError> {
        let built = self.artifact_client.get_or_init(|| {
            reqwest::Client::builder()
                .use_preconfigured_tls(tls::config()?)
                .user_agent(concat!("cudaup/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(self.settings.connect_timeout)
                // Between two reads of the response, its headers included; never the whole
                // transfer.
                .read_timeout(self.settings.read_timeout)
                .redirect(error::redirect_policy(self.settings.allow_http))
                // A connection lives on the runtime of the response that opened it, which ends
                // with that response: none is kept for another.
                .pool_max_idle_per_host(0)
                .build()
                .map_err(|e| e.to_string())
        });
        built.as_ref().map_err(|e| FetchError::BadLocation {
            location: "http client".into(),
            message: e.clone(),
        })
    }

    fn check_trust(&self, loc: &Location) -> Result<(), FetchError> {
        if !loc.is_authenticated() && !self.settings.allow_http {
            return Err(FetchError::InsecureHttp {
                url: loc.to_string(),
            });
        }
        Ok(())
    }

    fn cancelled(&self) -> Result<(), FetchError> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(FetchError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Runs `op` until it succeeds, fails for good, or attempts run out.
    fn with_retries<T>(
        &self,
        what: &str,
        mut op: impl FnMut(u32) -> Result<T, FetchError>,
    ) -> Result<T, FetchError> {
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.cancelled()?;
            match op(attempt) {
                Ok(v) => return Ok(v),
                Err(e) if e.is_transient() && attempt < self.settings.attempts => {
                    let delay = backoff(self.settings.backoff, attempt);
                    self.reporter.message(&format!(
                        "{what}: {e}; retrying in {:.1}s (attempt {} of {})",
                        delay.as_secs_f64(),
                        attempt + 1,
                        self.settings.attempts
                    ));
                    sleep_cancellable(delay, &self.cancel)?;
                }
                Err(e) if e.is_transient() => {
                    return Err(FetchError::Exhausted {
                        attempts: attempt,
                        seconds: started.elapsed().as_secs_f64(),
                        last: Box::new(e),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Fetches a small document (a redistrib JSON, an index page) into memory, at most
    /// [`MAX_DOCUMENT`] bytes. `accept` sets the Accept header (PEP 691 negotiation).
    pub fn get_bytes(&self, loc: &Location, accept: Option<&str>) -> Result<Vec<u8>, FetchError> {
        self.get_bytes_at_most(loc, accept, MAX_DOCUMENT)
    }

    /// [`Fetcher::get_bytes`] of a document that may have at most `max` bytes: a body past it is
    /// an error as soon as the byte past it arrives. A local file must be a regular file.
    pub fn get_bytes_at_most(
        &self,
        loc: &Location,
        accept: Option<&str>,
        max: u64,
    ) -> Result<Vec<u8>, FetchError> {
        self.check_trust(loc)?;
        let limit = Limit::Document(max);
        let bounded =
            |url: &str, body: &mut dyn Read, read_err: &dyn Fn(std::io::Error) -> FetchError| {
                let mut out = Vec::new();
                body.take(limit.room(0))
                    .read_to_end(&mut out)
                    .map_err(read_err)?;
                if out.len() as u64 > limit.bytes() {
                    return Err(FetchError::TooLong {
                        url: url.to_owned(),
                        limit,
                    });
                }
                Ok(out)
            };
        match loc {
            Location::File(p) => {
                let mut f = crate::world::fs::open_regular(p)?;
                bounded(&p.display().to_string(), &mut f, &|e| FetchError::Local(e))
            }
            Location::Http(url) => self.with_retries(&loc.to_string(), |_| {
                let mut req = self
                    .client()?
                    .get(url.clone())
                    .header(reqwest::header::ACCEPT_ENCODING, "identity");
                if let Some(a) = accept {
                    req = req.header(reqwest::header::ACCEPT, a);
                }
                let resp = req
                    .send()
                    .map_err(|source| FetchError::transport(url.as_str(), source))?;
                let status = resp.status().as_u16();
                if !resp.status().is_success() {
                    return Err(FetchError::Status {
                        url: url.to_string(),
                        status,
                    });
                }
                let (mut body, _) = stream::decoded(url.as_str(), resp)?;
                bounded(url.as_str(), &mut body, &|source| {
                    FetchError::read(url.as_str(), source)
                })
            }),
        }
    }

    /// Fetches `len` bytes of `loc` from offset `start`, or its last `len` bytes when `start` is
    /// `None`, with the resource's total size. Only a 206 whose Content-Range matches is accepted:
    /// a server that ignores Range would send the whole file, which the caller never wants.
    pub fn get_range(
        &self,
        loc: &Location,
        start: Option<u64>,
        len: u64,
    ) -> Result<(Vec<u8>, u64), FetchError> {
        use std::io::{Seek, SeekFrom};
        self.check_trust(loc)?;
        match loc {
            Location::File(p) => {
                let mut f = crate::world::fs::open_regular(p)?;
                let total = f.metadata()?.len();
                let from = start.unwrap_or(total.saturating_sub(len)).min(total);
                f.seek(SeekFrom::Start(from))?;
                let mut body = Vec::new();
                f.take(len).read_to_end(&mut body)?;
                Ok((body, total))
            }
            Location::Http(url) => self.with_retries(&loc.to_string(), |_| {
                let range = match start {
                    Some(a) => {
                        let last = a.checked_add(len.max(1) - 1).ok_or_else(|| {
                            FetchError::BadLocation {
                                location: url.to_string(),
                                message: format!("no byte range of {len} bytes starts at {a}"),
                            }
                        })?;
                        format!("bytes={a}-{last}")
                    }
                    None => format!("bytes=-{}", len.max(1)),
                };
                let resp = self
                    .client()?
                    .get(url.clone())
                    .header(reqwest::header::RANGE, range)
                    .send()
                    .map_err(|e| FetchError::transport(url.as_str(), e))?;
                let status = resp.status().as_u16();
                if status != 206 {
                    return Err(if resp.status().is_success() {
                        FetchError::BadLocation {
                            location: url.to_string(),
                            message: "the server ignores HTTP Range requests, so only the whole file could be had; not downloading it".into(),
                        }
                    } else {
                        FetchError::Status {
                            url: url.to_string(),
                            status,
                        }
                    });
                }
                let bad = |message: &str| FetchError::BadLocation {
                    location: url.to_string(),
                    message: message.to_owned(),
                };
                // `bytes A-B/TOTAL`
                let (a, b, total) = resp
                    .headers()
                    .get(reqwest::header::CONTENT_RANGE)
                    .and_then(|h| h.to_str().ok())
                    .and_then(|h| h.strip_prefix("bytes "))
                    .and_then(|h| {
                        let (span, total) = h.split_once('/')?;
                        let (a, b) = span.split_once('-')?;
                        Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?, total.parse::<u64>().ok()?))
                    })
                    .ok_or_else(|| bad("a 206 answer without a usable Content-Range"))?;
                let want_a = start.unwrap_or(total.saturating_sub(len));
                if a != want_a || b < a || b >= total || b - a + 1 > len {
                    return Err(bad("the server answered a different range than was asked"));
                }
                let want = b - a + 1;
                let mut body = Vec::new();
                resp.take(want)
                    .read_to_end(&mut body)
                    .map_err(|e| FetchError::read(url.as_str(), e))?;
                if (body.len() as u64) < want {
                    return Err(FetchError::Truncated {
                        url: url.to_string(),
                        got: body.len() as u64,
                        expected: want,
                    });
                }
                Ok((body, total))
            }),
        }
    }

    /// Fetches `artifact` and verifies it. When `consume` is given and no partial download
    /// exists, the bytes are handed to it as they arrive (one pass: download, hash, cache and
    /// unpack together); if that stream breaks, the download resumes into the cache and
    /// `streamed` is `None`, so the caller unpacks from the file. A consumer whose result is
    /// returned has seen exactly the verified bytes.
    pub fn fetch<T>(
        &self,
        id: usize,
        artifact: &Artifact,
        consume: Option<&mut Consumer<'_, T>>,
    ) -> Result<Fetched<T>, FetchError> {
        self.check_trust(&artifact.location)?;
        self.reporter.start(id, &artifact.name, artifact.size);
        let result = match &artifact.location {
            Location::File(path) => stream::local(self, id, artifact, path, consume),
            Location::Http(_) => stream::remote(self, id, artifact, consume),
        };
        if let Err(e) = &result {
            self.reporter.finish(id, &format!("failed: {e}"));
        }
        result
    }
}

/// Exponential backoff with jitter: base · 2^(attempt-1) · [0.5, 1.5), capped at 30 s.
fn backoff(base: Duration, attempt: u32) -> Duration {
    if base.is_zero() {
        return Duration::ZERO;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = 0.5 + f64::from(nanos % 1000) / 1000.0;
    let exp = base.as_secs_f64() * f64::from(1u32 << (attempt - 1).min(8)) * jitter;
    Duration::from_secs_f64(exp.min(30.0))
}

fn sleep_cancellable(d: Duration, cancel: &AtomicBool) -> Result<(), FetchError> {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if cancel.load(Ordering::Relaxed) {
            return Err(FetchError::Cancelled);
        }
        std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
    }
    Ok(())
}
