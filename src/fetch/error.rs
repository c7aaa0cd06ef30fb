//! Fetch errors, which of them are worth retrying, and what actually went wrong on the wire.

use std::io;

use super::cause::Cause;
use super::limit::Limit;
use crate::unpack::UnpackError;

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A location that cannot be used.
    #[error("{location}: {message}")]
    BadLocation {
        /// The location as given.
        location: String,
        /// What is wrong with it.
        message: String,
    },
    /// Plain http without `--allow-http`.
    #[error("{url}: refusing plain http, which cannot prove the bytes are the mirror's; use https, a local directory, or pass --allow-http for a mirror you trust")]
    InsecureHttp {
        /// The URL.
        url: String,
    },
    /// A redirect to plain http without `--allow-http`: the hop that would have lost https.
    #[error("{from} redirects to {to}: refusing plain http, which cannot prove the bytes are the mirror's (a redirect is followed to http only with --allow-http)")]
    InsecureRedirect {
        /// The URL that redirected.
        from: String,
        /// Where it pointed.
        to: String,
    },
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The connection failed or broke before a response arrived.
    #[error("{url}: {cause}")]
    Transport {
        /// The URL.
        url: String,
        /// What went wrong, from the error chain (refused, timed out, DNS, TLS, ...).
        cause: Cause,
        /// The client error. Not a `#[source]`: its chain reads "error sending request", which
        /// the cause already says better (`-v` logs it).
        error: reqwest::Error,
    },
    /// Reading the body failed (reset, timeout, early end).
    #[error("{url}: {cause}")]
    Read {
        /// The URL.
        url: String,
        /// What went wrong, from the error chain.
        cause: Cause,
        /// The I/O error (not a `#[source]`, as for `Transport`).
        error: io::Error,
    },
    /// The body ended before the expected size.
    #[error("{url}: the download ended after {got} of {expected} bytes")]
    Truncated {
        /// The URL.
        url: String,
        /// Bytes received.
        got: u64,
        /// Bytes expected.
        expected: u64,
    },
    /// A resumed download did not verify: the partial file is deleted and the next attempt
    /// starts from zero.
    #[error("{url}: {reason}; starting over")]
    Restart {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// More bytes than a limit allows; nothing past it was kept.
    #[error("{url}: the download is longer than {limit}; stopped there and discarded it")]
    TooLong {
        /// The URL.
        url: String,
        /// The limit it ran into, and where that limit came from.
        limit: Limit,
    },
    /// The server compressed the body with an encoding cudaup did not ask for and cannot read.
    #[error("{url}: the server sent the file with `Content-Encoding: {encoding}` although cudaup asked for the plain bytes (identity); fix the server or the proxy in between")]
    Encoding {
        /// The URL.
        url: String,
        /// The encoding it named.
        encoding: String,
    },
    /// The bytes are not the ones the source promised.
    #[error("checksum mismatch for {url}: expected sha256 {expected}, got {actual}")]
    Checksum {
        /// The URL.
        url: String,
        /// The sha256 from the catalog, redistrib JSON or index.
        expected: String,
        /// The sha256 of what arrived.
        actual: String,
    },
    /// Writing to the cache or reading a local file failed (disk full, permissions).
    #[error(transparent)]
    Local(#[from] io::Error),
    /// The archive could not be unpacked while it streamed.
    #[error(transparent)]
    Unpack(#[from] UnpackError),
    /// Retries ran out.
    #[error("{last} (failed after {attempts} attempts in {seconds:.1}s)")]
    Exhausted {
        /// How many attempts were made.
        attempts: u32,
        /// How long they took.
        seconds: f64,
        /// The last error.
        last: Box<FetchError>,
    },
    /// The user pressed Ctrl-C.
    #[error("cancelled")]
    Cancelled,
}

impl FetchError {
    /// A client error, with its cause read from the error chain.
    pub fn transport(url: &str, error: reqwest::Error) -> FetchError {
        tracing::debug!("{url}: {error:?}");
        if let Some(d) = downgrade_in(&error) {
            return FetchError::InsecureRedirect {
                from: d.from.clone(),
                to: d.to.clone(),
            };
        }
        FetchError::Transport {
            url: url.to_owned(),
            cause: Cause::of(&error, Some(url)),
            error,
        }
    }

    /// A failed body read, with its cause read from the error chain.
    pub fn read(url: &str, error: io::Error) -> FetchError {
        tracing::debug!("{url}: {error:?}");
        FetchError::Read {
            url: url.to_owned(),
            cause: Cause::of(&error, None),
            error,
        }
    }

    /// Whether trying again (resuming where possible) may succeed. The error chain is walked
    /// (typed, [`Cause`]), so a reset buried inside a client error still counts as a reset, and
    /// a TLS failure (a certificate, a handshake) never does.
    pub fn is_transient(&self) -> bool {
        match self {
            FetchError::Status { status, .. } => matches!(status, 408 | 425 | 429 | 500..=599),
            FetchError::Transport { error, cause, .. } => {
                !matches!(cause, Cause::Tls(_))
                    && (error.is_timeout()
                        || error.is_connect()
                        || error.is_body()
                        || error.is_request()
                        || error.is_decode())
            }
            FetchError::Read { error, cause, .. } => {
                !matches!(cause, Cause::Tls(_)) && transient_io(error)
            }
            FetchError::Truncated { .. } | FetchError::Restart { .. } => true,
            FetchError::Unpack(UnpackError::Io(e)) => transient_io(e),
            _ => false,
        }
    }

    /// Whether this is a network failure (for the exit code) rather than bad bytes.
    pub fn is_network(&self) -> bool {
        match self {
            FetchError::Exhausted { last, .. } => last.is_network(),
            FetchError::Status { .. }
            | FetchError::Transport { .. }
            | FetchError::Read { .. }
            | FetchError::Truncated { .. }
            | FetchError::Restart { .. } => true,
            FetchError::Unpack(UnpackError::Io(e)) => transient_io(e),
            _ => false,
        }
    }

    /// Whether the disk (or a quota, or the file-size limit) had no room for the bytes, while
    /// caching them or while unpacking them.
    pub fn is_disk_full(&self) -> bool {
        match self {
            FetchError::Exhausted { last, .. } => last.is_disk_full(),
            FetchError::Local(e) | FetchError::Unpack(UnpackError::Io(e)) => {
                crate::world::fs::space::is_full(e)
            }
            _ => false,
        }
    }

    /// Whether this is a verification failure: wrong bytes or an unsafe archive.
    pub fn is_verification(&self) -> bool {
        match self {
            FetchError::Exhausted { last, .. } => last.is_verification(),
            FetchError::Checksum { .. }
            | FetchError::TooLong { .. }
            | FetchError::Encoding { .. } => true,
            FetchError::Unpack(e) => !matches!(e, UnpackError::Io(_) | UnpackError::Cancelled),
            _ => false,
        }
    }
}

/// The refusal of [`redirect_policy`]: a redirect from `from` to the plain-http `to`.
#[derive(Debug)]
pub(crate) struct Downgrade {
    from: String,
    to: String,
}

impl std::fmt::Display for Downgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} redirects to plain http {}", self.from, self.to)
    }
}

impl std::error::Error for Downgrade {}

fn downgrade_in(error: &reqwest::Error) -> Option<&Downgrade> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(d) = e.downcast_ref::<Downgrade>() {
            return Some(d);
        }
        source = e.source();
    }
    None
}

/// The redirects the client follows: at most 10, and to plain http only with `--allow-http`
/// (reqwest's default policy follows https to http).
pub(crate) fn redirect_policy(allow_http: bool) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= 10 {
            return attempt.error("more than 10 redirects");
        }
        if !allow_http && attempt.url().scheme() == "http" {
            let from = attempt
                .previous()
                .last()
                .map(ToString::to_string)
                .unwrap_or_default();
            let to = attempt.url().to_string();
            return attempt.error(Downgrade { from, to });
        }
        attempt.follow()
    })
}

fn transient_io(e: &io::Error) -> bool {
    use io::ErrorKind::*;
    matches!(
        e.kind(),
        UnexpectedEof
            | ConnectionReset
            | ConnectionAborted
            | TimedOut
            | BrokenPipe
            | Interrupted
            | WouldBlock
    ) || e
        .get_ref()
        .is_some_and(|inner| inner.downcast_ref::<reqwest::Error>().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loopback server answering `/done` with `ok` and every other request with a redirect
    /// to `to` (on itself when `to` starts with `/`).
    fn redirecting(to: &'static str) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let own = base.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(4) {
                let mut s = stream.unwrap();
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).unwrap_or(0);
                if String::from_utf8_lossy(&buf[..n]).starts_with("GET /done ") {
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                    );
                    continue;
                }
                let location = if to.starts_with('/') {
                    format!("{own}{to}")
                } else {
                    to.to_owned()
                };
                let _ = write!(
                    s,
                    "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
            }
        });
        base
    }

    #[test]
    fn a_redirect_to_plain_http_is_refused_naming_the_hop() {
        let base = redirecting("/elsewhere");
        let client = reqwest::blocking::Client::builder()
            .redirect(redirect_policy(false))
            .build()
            .unwrap();
        let url = format!("{base}/redistrib.json");
        let error = client.get(&url).send().unwrap_err();
        let e = FetchError::transport(&url, error);
        let FetchError::InsecureRedirect { from, to } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(from, &url);
        assert_eq!(to, &format!("{base}/elsewhere"));
        assert!(e.to_string().contains("--allow-http"), "{e}");
        assert!(!e.is_transient() && !e.is_network());
    }

    #[test]
    fn with_allow_http_the_redirect_is_followed() {
        let base = redirecting("/done");
        let client = reqwest::blocking::Client::builder()
            .redirect(redirect_policy(true))
            .build()
            .unwrap();
        let body = client
            .get(format!("{base}/a"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(body, "ok");
    }
}
