//! `cudaup manifests update`: read the publishers' own data — NVIDIA's redist listings and
//! `redistrib_<ver>.json`, PyPI's PEP 691 pages and wheel metadata, PyTorch's index, and the
//! fatbin headers of the wheels' libraries — and turn it into catalog rows.
//!
//! The sources are read into observations (`redist`, `pypi`, `pytorch_index`, `fatbin`), merged
//! into the text of the catalog in effect (`merge`, `rows`: added rows and refreshed derived
//! fields, every one with the URL and date it came from), and written only after the whole set
//! passes `manifests check` (`write`). A part whose source is unreachable keeps its rows as they
//! were; a source that answers garbage stops the whole update, so a broken or hostile mirror never
//! half-updates a catalog.

mod compiler;
mod driver_tables;
pub(crate) mod fatbin;
mod jax;
pub(crate) mod marker;
mod merge;
pub(crate) mod pypi;
mod pytorch_index;
pub(crate) mod redist;
mod requires_python;
mod rows;
mod series;
mod uv;
mod write;
pub(crate) mod zip;

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Catalog, Date, Part};
use crate::fetch::{FetchError, Fetcher, Location};

pub use driver_tables::TABLES_BASE;
pub use fatbin::Targets;
pub use write::{write_dir, write_refreshed, SetAside, Written};

/// The publisher sources, in the order they are read.
pub const PARTS: &[&str] = &[
    "nvidia-redist",
    "pypi",
    "pytorch-index",
    "fatbin",
    "compilers",
    "driver-tables",
];

/// Why an update did not produce a catalog.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// A source could not be reached (after retries).
    #[error("{url}: {message}")]
    Network {
        /// What was being read.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// A source answered something that is not what it publishes.
    #[error("{url}: {message}")]
    BadData {
        /// What was being read.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The refreshed catalog does not pass `manifests check`; it was not used.
    #[error("the refreshed catalog fails `manifests check`, so it is not used:\n{0}")]
    Check(String),
    /// Every requested source failed.
    #[error("no source could be read:\n{0}")]
    NothingRead(String),
    /// Bad usage (a location that cannot be used).
    #[error("{0}")]
    Usage(String),
    /// Local I/O.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl UpdateError {
    fn from_fetch(url: &Location, e: FetchError) -> Self {
        let u = url.to_string();
        let full = e.to_string();
        // The fetch error repeats the URL; the report names it once.
        let message = full
            .strip_prefix(&format!("{u}: "))
            .unwrap_or(&full)
            .to_owned();
        if e.is_verification() {
            UpdateError::BadData {
                url: url.to_string(),
                message,
            }
        } else if matches!(
            e,
            FetchError::BadLocation { .. } | FetchError::InsecureHttp { .. }
        ) {
            UpdateError::Usage(message)
        } else if let FetchError::Local(io) = e {
            UpdateError::Network {
                url: url.to_string(),
                message: io.to_string(),
            }
        } else {
            UpdateError::Network {
                url: url.to_string(),
                message,
            }
        }
    }
}

/// The fetcher, counting the bytes every read brings.
pub struct Net<'f> {
    fetcher: &'f Fetcher,
    /// Bytes fetched so far.
    pub bytes: u64,
}

impl<'f> Net<'f> {
    /// Counts reads through `fetcher`.
    pub fn new(fetcher: &'f Fetcher) -> Self {
        Self { fetcher, bytes: 0 }
    }

    /// A whole small document.
    pub fn get(&mut self, loc: &Location, accept: Option<&str>) -> Result<Vec<u8>, UpdateError> {
        self.get_at_most(loc, accept, crate::fetch::MAX_DOCUMENT)
    }

    /// A whole document of at most `max` bytes (a body past it is an error at once).
    pub fn get_at_most(
        &mut self,
        loc: &Location,
        accept: Option<&str>,
        max: u64,
    ) -> Result<Vec<u8>, UpdateError> {
        let body = self
            .fetcher
            .get_bytes_at_most(loc, accept, max)
            .map_err(|e| UpdateError::from_fetch(loc, e))?;
        self.bytes += body.len() as u64;
        Ok(body)
    }

    /// A document that may not exist: `None` on HTTP 404 (or a missing file).
    pub fn get_optional(
        &mut self,
        loc: &Location,
        accept: Option<&str>,
    ) -> Result<Option<Vec<u8>>, UpdateError> {
        match self.fetcher.get_bytes(loc, accept) {
            Ok(b) => {
                self.bytes += b.len() as u64;
                Ok(Some(b))
            }
            Err(FetchError::Status { status: 404, .. }) => Ok(None),
            Err(FetchError::Local(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(UpdateError::from_fetch(loc, e)),
        }
    }

    /// A byte range (`start = None`: the last `len` bytes), with the total size.
    pub fn range(
        &mut self,
        loc: &Location,
        start: Option<u64>,
        len: u64,
    ) -> Result<(Vec<u8>, u64), UpdateError> {
        let (body, total) = self
            .fetcher
            .get_range(loc, start, len)
            .map_err(|e| UpdateError::from_fetch(loc, e))?;
        self.bytes += body.len() as u64;
        Ok((body, total))
    }
}

/// Where to read, and how much.
#[derive(Debug, Clone)]
pub struct Options {
    /// NVIDIA's download host or a mirror of its layout (`<base>/compute/cuda/redist/`).
    pub nvidia: Location,
    /// PyPI's simple index or a mirror.
    pub pypi: Location,
    /// PyTorch's wheel index base (`<base>/<variant>/torch/`) or a mirror.
    pub torch: Location,
    /// NVIDIA's driver READMEs by release tag (`<base>/<release>/README.md`) or a mirror.
    pub driver_tables: Location,
    /// The parts to read (names from [`PARTS`]).
    pub parts: Vec<String>,
    /// The most bytes fatbin reads may fetch in one run; past it, rows keep their curated lists.
    pub fatbin_budget: u64,
    /// The day the rows are dated.
    pub today: Date,
    /// Where fatbin results are cached (by the wheel's sha256).
    pub cache_dir: PathBuf,
}

/// What one part did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PartReport {
    /// Its name.
    pub name: String,
    /// Where it was read.
    pub url: String,
    /// `ok`, `skipped` or `unreachable: …`.
    pub status: String,
    /// Bytes it fetched.
    pub bytes: u64,
}

/// The result of reading the sources: the new text of every manifest and what changed.
#[derive(Debug, Clone)]
pub struct Refreshed {
    /// File name → text.
    pub texts: BTreeMap<String, String>,
    /// One line per added or changed row.
    pub changes: Vec<String>,
    /// Facts read but not turned into rows, and why.
    pub notes: Vec<String>,
    /// Per part.
    pub parts: Vec<PartReport>,
    /// Bytes fetched in all.
    pub bytes: u64,
}

impl Refreshed {
    /// Whether a part was unreachable.
    pub fn any_unreachable(&self) -> bool {
        self.parts
            .iter()
            .any(|p| p.status.starts_with("unreachable"))
    }
}

/// Everything the sources said.
#[derive(Debug, Default)]
pub struct Observations {
    /// CUDA releases from NVIDIA's redist.
    pub cuda: Vec<redist::CudaObs>,
    /// cuDNN releases from NVIDIA's redist.
    pub cudnn: Vec<redist::CudnnObs>,
    /// What PyPI said.
    pub pypi: pypi::PypiObs,
    /// JAX releases PyPI has and the catalog lacks.
    pub jax: Vec<jax::JaxObs>,
    /// A uv newer than the catalog's pin, with its wheels.
    pub uv: Option<crate::catalog::uv::UvPin>,
    /// What PyTorch's index said.
    pub torch_index: Vec<pytorch_index::VariantObs>,
    /// What each series' compiler compiles for.
    pub compilers: Vec<compiler::CompilerObs>,
    /// The supported-GPU tables of driver releases not read before.
    pub driver_tables: Vec<(crate::model::version::Version, driver_tables::Table)>,
}

/// Reads the sources and merges what they say into `base` (whose texts are `texts`).
pub fn refresh(
    fetcher: &Fetcher,
    base: &Catalog,
    texts: &BTreeMap<String, String>,
    opts: &Options,
) -> Result<Refreshed, UpdateError> {
    let mut net = Net::new(fetcher);
    let mut obs = Observations::default();
    let mut parts = Vec::new();
    let mut notes = Vec::new();
    run(
        &mut parts,
        opts,
        "nvidia-redist",
        &opts.nvidia,
        &mut net,
        &mut |net| {
            let (cuda, cudnn) = redist::read(net, &opts.nvidia, base)?;
            obs.cuda = cuda;
            obs.cudnn = cudnn;
            Ok(())
        },
    )?;
    run(&mut parts, opts, "pypi", &opts.pypi, &mut net, &mut |net| {
        obs.pypi = pypi::read(net, &opts.pypi, base, &mut notes)?;
        obs.jax = jax::read(net, &opts.pypi, base, &mut notes)?;
        obs.uv = uv::read(net, &opts.pypi, base, &mut notes)?;
        Ok(())
    })?;
    run(
        &mut parts,
        opts,
        "pytorch-index",
        &opts.torch,
        &mut net,
        &mut |net| {
            obs.torch_index = pytorch_index::read(net, &opts.torch, base, &mut notes)?;
            Ok(())
        },
    )?;
    let pypi_ok = parts.iter().any(|p| p.name == "pypi" && p.status == "ok");
    run(
        &mut parts,
        opts,
        "fatbin",
        &opts.pypi,
        &mut net,
        &mut |net| {
            if !pypi_ok && obs.torch_index.is_empty() {
                return Err(UpdateError::Network {
                    url: opts.pypi.to_string(),
                    message: "no wheel index answered, so no wheel could be probed".into(),
                });
            }
            let mut budget = fatbin::Budget::new(opts.fatbin_budget, opts.cache_dir.join("fatbin"));
            fatbin::probe_all(net, base, &mut obs, &mut budget, &mut notes)
        },
    )?;
    let pypi_down = parts
        .iter()
        .any(|p| p.name == "pypi" && p.status.starts_with("unreachable"));
    run(
        &mut parts,
        opts,
        "compilers",
        &opts.pypi,
        &mut net,
        &mut |net| {
            if pypi_down {
                return Err(UpdateError::Network {
                    url: opts.pypi.to_string(),
                    message: "the index did not answer, so no compiler wheel was read".into(),
                });
            }
            let cache = opts.cache_dir.join("compilers");
            obs.compilers =
                compiler::read(net, &opts.pypi, base, opts.fatbin_budget, cache, &mut notes)?;
            Ok(())
        },
    )?;
    run(
        &mut parts,
        opts,
        "driver-tables",
        &opts.driver_tables,
        &mut net,
        &mut |net| {
            obs.driver_tables = driver_tables::read(net, &opts.driver_tables, base, &mut notes)?;
            Ok(())
        },
    )?;
    let read: Vec<&PartReport> = parts.iter().filter(|p| p.status == "ok").collect();
    if read.is_empty() {
        return Err(UpdateError::NothingRead(
            parts
                .iter()
                .map(|p| format!("  {}: {}", p.name, p.status))
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    let mut texts = texts.clone();
    let mut changes = merge::apply(base, &mut texts, &obs, opts.today, &mut notes)?;
    if !obs.driver_tables.is_empty() {
        let (text, lines) = driver_tables::merged(&base.driver_support, &obs.driver_tables);
        texts.insert("driver_support.toml".to_owned(), text);
        changes.extend(lines);
    }
    let complete = PARTS
        .iter()
        .all(|n| parts.iter().any(|p| p.name == *n && p.status == "ok"));
    merge::stamp(
        base,
        &mut texts,
        &parts,
        opts.today,
        complete,
        !changes.is_empty(),
    )?;
    Ok(Refreshed {
        texts,
        changes,
        notes,
        bytes: net.bytes,
        parts,
    })
}

/// Runs one part unless it was left out, recording how it went. A network failure is recorded
/// (the part's rows stay as they were); anything else stops the update.
fn run(
    parts: &mut Vec<PartReport>,
    opts: &Options,
    name: &str,
    url: &Location,
    net: &mut Net<'_>,
    f: &mut dyn FnMut(&mut Net<'_>) -> Result<(), UpdateError>,
) -> Result<(), UpdateError> {
    let before = net.bytes;
    let status = if !opts.parts.iter().any(|w| w == name) {
        "skipped".to_owned()
    } else {
        match f(net) {
            Ok(()) => "ok".to_owned(),
            Err(UpdateError::Network { url, message }) => {
                format!("unreachable: {url}: {}", without_timing(&message))
            }
            Err(e) => return Err(e),
        }
    };
    parts.push(PartReport {
        name: name.to_owned(),
        url: url.to_string(),
        status,
        bytes: net.bytes - before,
    });
    Ok(())
}

/// A fetch error without how long its retries took (`failed after 4 attempts in 2.9s` → `failed
/// after 4 attempts`): the status is written into catalog.toml, which must not change from one
/// run to the next when nothing else did.
fn without_timing(message: &str) -> String {
    let Some(at) = message.find(" (failed after ") else {
        return message.to_owned();
    };
    let (head, tail) = message.split_at(at);
    match tail.find(" attempts in ") {
        Some(cut) => format!(
            "{head}{} attempts){}",
            &tail[..cut],
            tail.find(")").map_or("", |e| &tail[e + 1..])
        ),
        None => message.to_owned(),
    }
}

/// The new `[[part]]` rows for catalog.toml: parts read now carry today's date.
fn parts_after(base: &[Part], report: &[PartReport], today: Date) -> Vec<Part> {
    base.iter()
        .map(|old| {
            let Some(r) = report.iter().find(|r| r.name == old.name) else {
                return old.clone();
            };
            if r.status == "skipped" {
                return old.clone();
            }
            Part {
                name: old.name.clone(),
                url: r.url.clone(),
                read: if r.status == "ok" {
                    Some(today)
                } else {
                    old.read
                },
                status: if r.status == "ok" {
                    "ok".into()
                } else {
                    format!("{}; its rows are kept as they were", r.status)
                },
                bytes: r.bytes,
                source: old.source.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use crate::fetch::{Fetcher, Settings};

    #[test]
    fn statuses_carry_no_retry_timing() {
        assert_eq!(
            super::without_timing(
                "https://x/: error sending request (failed after 4 attempts in 2.9s)"
            ),
            "https://x/: error sending request (failed after 4 attempts)"
        );
        assert_eq!(super::without_timing("HTTP 503"), "HTTP 503");
    }

    /// A fetcher that caches under `dir`, without retry delays.
    pub(crate) fn fetcher(dir: &std::path::Path) -> Fetcher {
        let mut s = Settings::new(dir.join("cache"));
        s.backoff = std::time::Duration::ZERO;
        s.attempts = 1;
        s.allow_http = true;
        Fetcher::new(
            s,
            Arc::new(AtomicBool::new(false)),
            Arc::new(crate::world::progress::Silent),
        )
    }
}
