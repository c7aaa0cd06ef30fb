//! Fetch errors, and which of them are worth retrying.

use std::io;

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
    /// The server answered with an error status.
    #[error("{url}: HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The connection failed or broke.
    #[error("{url}: {source}")]
    Transport {
        /// The URL.
        url: String,
        /// The client error.
        #[source]
        source: reqwest::Error,
    },
    /// Reading the body failed (reset, timeout, early end).
    #[error("{url}: {source}")]
    Read {
        /// The URL.
        url: String,
        /// The I/O error.
        #[source]
        source: io::Error,
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
    /// More bytes than the source said there would be.
    #[error("{url}: expected {expected} bytes, got more ({got})")]
    TooLong {
        /// The URL.
        url: String,
        /// Bytes received.
        got: u64,
        /// Bytes expected.
        expected: u64,
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
    /// Whether trying again (resuming where possible) may succeed. The error chain is walked, so
    /// a reset buried inside a client error still counts as a reset, and a certificate problem
    /// never does.
    pub fn is_transient(&self) -> bool {
        match self {
            FetchError::Status { status, .. } => matches!(status, 408 | 425 | 429 | 500..=599),
            FetchError::Transport { source, .. } => {
                !chain_mentions(
                    source,
                    &["certificate", "tls", "handshake", "UnknownIssuer"],
                ) && (source.is_timeout()
                    || source.is_connect()
                    || source.is_body()
                    || source.is_request()
                    || source.is_decode())
            }
            FetchError::Read { source, .. } => transient_io(source),
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

    /// Whether this is a verification failure: wrong bytes or an unsafe archive.
    pub fn is_verification(&self) -> bool {
        match self {
            FetchError::Exhausted { last, .. } => last.is_verification(),
            FetchError::Checksum { .. } | FetchError::TooLong { .. } => true,
            FetchError::Unpack(e) => !matches!(e, UnpackError::Io(_) | UnpackError::Cancelled),
            _ => false,
        }
    }
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

fn chain_mentions(e: &(dyn std::error::Error + 'static), words: &[&str]) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        let text = format!("{err:?}");
        if words.iter().any(|w| text.contains(w)) {
            return true;
        }
        cur = err.source();
    }
    false
}
