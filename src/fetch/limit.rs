//! How many bytes a download may have, and which rule said so: a hostile or broken server that
//! never stops sending must not fill the disk, and the error names the limit it ran into.

/// The ceiling for an artifact whose source states no size, sent without a Content-Length
/// (`CUDAUP_MAX_DOWNLOAD_BYTES` changes it). NVIDIA's largest archive and wheel (cuDNN for one
/// CUDA major) are about 1 GiB; 4 GiB leaves room without letting a server fill a disk.
pub const DEFAULT_MAX_DOWNLOAD: u64 = 4 << 30;

/// The most a metadata document may have (a redistrib JSON is ~100 KiB, the largest PyPI index
/// page cudaup reads a few MiB).
pub const MAX_DOCUMENT: u64 = 64 << 20;

/// The most an NVIDIA wheel may have when its index states no size (a PEP 503 page) and the
/// server sends no Content-Length: the largest NVIDIA wheel the catalog records is 560 MB
/// (nvidia-cublas for aarch64), cuDNN's about 700 MB.
pub const MAX_WHEEL: u64 = 2 << 30;

/// A per-kind cap on a download whose size nobody states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cap {
    /// The byte count.
    pub bytes: u64,
    /// What kind of file (`NVIDIA wheel`), for the error.
    pub what: &'static str,
    /// The size the catalog records for this very file, when the cap comes from it.
    pub recorded: Option<u64>,
}

/// The cap on an NVIDIA wheel ([`MAX_WHEEL`]).
pub const WHEEL_CAP: Cap = Cap {
    bytes: MAX_WHEEL,
    what: "NVIDIA wheel",
    recorded: None,
};

impl Cap {
    /// The cap on a wheel whose index states no size but whose size the catalog records: that
    /// size and a quarter more (the catalog reads one file of the release per machine; another
    /// build of the same release may differ a little), never past [`MAX_WHEEL`]. A server that
    /// never stops sending a 40 MB wheel is cut off at 50 MB, not at 2 GiB.
    pub fn recorded(size: u64) -> Cap {
        Cap {
            bytes: size.saturating_add(size / 4).min(MAX_WHEEL),
            what: "NVIDIA wheel",
            recorded: Some(size),
        }
    }
}

/// The bound on one download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The size the source lists (the redistrib JSON's `size`, the index's `size`): exactly
    /// this many bytes are read and hashed, never one more, whatever the server sends.
    Declared(u64),
    /// The source stated no size; the server's Content-Length did.
    ContentLength(u64),
    /// No size anywhere: the ceiling ([`DEFAULT_MAX_DOWNLOAD`] or `CUDAUP_MAX_DOWNLOAD_BYTES`).
    Ceiling(u64),
    /// A redistrib JSON or an index page ([`MAX_DOCUMENT`]).
    Document(u64),
    /// No size anywhere: the most a file of its kind may have ([`MAX_WHEEL`]).
    Kind(u64, &'static str),
    /// The index states no size: the catalog's record of it and a margin ([`Cap::recorded`]);
    /// the bound, then the recorded size.
    Recorded(u64, u64),
}

impl Limit {
    /// The byte count.
    pub fn bytes(self) -> u64 {
        match self {
            Limit::Declared(n)
            | Limit::ContentLength(n)
            | Limit::Ceiling(n)
            | Limit::Document(n)
            | Limit::Kind(n, _)
            | Limit::Recorded(n, _) => n,
        }
    }

    /// Whether reading simply stops at the limit: bytes past a declared size are never read
    /// (what was read is then checked against the sha256), while passing any other limit is an
    /// error.
    pub fn stops_reading(self) -> bool {
        matches!(self, Limit::Declared(_))
    }

    /// How many more bytes to read after `count`: up to the limit, or one past it to tell an
    /// over-long body from an exact one.
    pub fn room(self, count: u64) -> u64 {
        let extra = u64::from(!self.stops_reading());
        (self.bytes() + extra).saturating_sub(count)
    }
}

impl Limit {
    /// The bound on a download whose source states no size: the server's Content-Length when it
    /// fits under the cap, else the cap itself — the artifact's own (`max`, a per-kind cap) or
    /// the ceiling, whichever is lower. A Content-Length past the cap is an error before a byte
    /// is read (the returned limit is then smaller than what the server announced).
    pub fn unstated(content_length: Option<u64>, max: Option<Cap>, ceiling: u64) -> Limit {
        let cap = match max {
            Some(Cap {
                bytes,
                recorded: Some(r),
                ..
            }) if bytes < ceiling => Limit::Recorded(bytes, r),
            Some(c) if c.bytes < ceiling => Limit::Kind(c.bytes, c.what),
            _ => Limit::Ceiling(ceiling),
        };
        match content_length {
            Some(len) if len <= cap.bytes() => Limit::ContentLength(len),
            _ => cap,
        }
    }
}

impl std::fmt::Display for Limit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let human = |n: u64| indicatif::HumanBytes(n).to_string();
        match *self {
            Limit::Declared(n) => write!(f, "the {n} bytes its source lists"),
            Limit::ContentLength(n) => {
                write!(f, "the {n} bytes of the Content-Length it announced")
            }
            Limit::Ceiling(n) => write!(
                f,
                "the download ceiling of {} ({}): the source states no size and the server sent no Content-Length; raise the ceiling if the file really is that large",
                human(n),
                crate::world::vars::CUDAUP_MAX_DOWNLOAD_BYTES
            ),
            Limit::Document(n) => write!(
                f,
                "the {} a redistrib JSON or index page may have",
                human(n)
            ),
            Limit::Recorded(n, recorded) => write!(
                f,
                "the {} its catalog entry allows (it records {}, and a quarter more is allowed): its index states no size and the server sent no Content-Length that fits",
                human(n),
                human(recorded)
            ),
            Limit::Kind(n, what) => write!(
                f,
                "the {} any {what} may have: its source states no size and the server sent no Content-Length that fits",
                human(n)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_stops_at_a_declared_size_and_looks_one_past_the_others() {
        assert_eq!(Limit::Declared(10).room(4), 6);
        assert_eq!(Limit::Declared(10).room(10), 0);
        assert_eq!(Limit::Ceiling(10).room(10), 1);
        assert_eq!(Limit::ContentLength(10).room(11), 0);
        assert!(Limit::Ceiling(1 << 30)
            .to_string()
            .contains("CUDAUP_MAX_DOWNLOAD_BYTES"));
    }

    #[test]
    fn an_unstated_size_is_bounded_by_the_lowest_cap_and_a_content_length_must_fit_it() {
        let ceiling = 4 << 30;
        assert_eq!(
            Limit::unstated(None, Some(WHEEL_CAP), ceiling),
            Limit::Kind(MAX_WHEEL, "NVIDIA wheel")
        );
        assert_eq!(
            Limit::unstated(None, Some(WHEEL_CAP), 1000),
            Limit::Ceiling(1000)
        );
        assert_eq!(
            Limit::unstated(Some(10), None, 1000),
            Limit::ContentLength(10)
        );
        // The catalog's size, with its margin, bounds a wheel its index gives no size.
        let recorded = Limit::unstated(None, Some(Cap::recorded(40_000_000)), ceiling);
        assert_eq!(recorded, Limit::Recorded(50_000_000, 40_000_000));
        assert!(
            recorded.to_string().contains("it records 38.15 MiB"),
            "{recorded}"
        );
        assert_eq!(
            Limit::unstated(Some(39_000_000), Some(Cap::recorded(40_000_000)), ceiling),
            Limit::ContentLength(39_000_000)
        );
        assert_eq!(Cap::recorded(u64::MAX).bytes, MAX_WHEEL);
        // A Content-Length past the cap is not taken: the cap stays, and the body passes it.
        assert_eq!(
            Limit::unstated(Some(5000), None, 1000),
            Limit::Ceiling(1000)
        );
    }
}
