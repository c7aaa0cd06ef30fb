//! cudaup brings uv (issue 38): the installer the framework step drives, fetched by cudaup itself
//! so that no user needs it on PATH first.
//!
//! `manifests/uv.toml` pins one uv version with, for each machine architecture, the wheel PyPI
//! publishes (its file name, size and sha256) and the sha256 of the `uv` binary inside it (from
//! the wheel's RECORD). The wheel is looked up by that file name on the same indexes the
//! framework comes from (PyPI, a mirror of it, or a folder of wheels in an offline bundle),
//! downloaded through the [`Fetcher`] (resume, retry, the cache) and checked against the
//! catalog's sha256 — an index is never trusted for it. The binary is taken out of the wheel,
//! checked against its own pinned sha256 and size, and written to
//! `$CUDAUP_HOME/tools/uv-<version>/uv` with a receipt (`receipts/uv.json`) recording its sha256,
//! so `doctor` can check it, `uninstall` removes only the bytes cudaup wrote, and the next
//! install uses it without fetching again.
//!
//! The choice ([`choose`]): a uv on PATH at least as new as the pinned one (the user's own,
//! never replaced); else cudaup's copy; else cudaup fetches it; pip only when no uv can be had
//! here (an architecture with no pinned wheel, an index without it, `CUDAUP_NO_UV=1`), and the
//! choice always carries the reason the install prints.

#[cfg(test)]
mod tests;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::fetch::{Artifact, FetchError, Fetcher, Location};
use crate::install::home::Home;
use crate::model::version::Version;
use crate::world::fs::{Durability, Temp};
use crate::world::runner::Runner;

pub use crate::catalog::uv::{UvPin, UvWheel, MAX_BINARY};

/// The receipt's file name in `$CUDAUP_HOME/receipts/`.
pub const RECEIPT: &str = "uv.json";

/// Why uv could not be brought.
#[derive(Debug, thiserror::Error)]
pub enum UvError {
    /// No wheel is pinned for this machine.
    #[error("no uv {version} wheel is pinned for {arch} (manifests/uv.toml)")]
    NoWheel {
        /// The pinned version.
        version: String,
        /// This machine's architecture.
        arch: String,
    },
    /// None of the indexes lists the pinned wheel.
    #[error("{filename} is on none of the indexes asked ({asked})")]
    NotListed {
        /// The wheel.
        filename: String,
        /// The indexes, and what each said.
        asked: String,
    },
    /// The download failed or its bytes are not the pinned ones.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The wheel holds no binary with the pinned bytes.
    #[error("{wheel}: {why}")]
    Binary {
        /// The wheel.
        wheel: String,
        /// What is wrong.
        why: String,
    },
    /// Local I/O.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The wheel `pin` has for `arch`.
fn wheel_of<'p>(pin: &'p UvPin, arch: &str) -> Result<&'p UvWheel, UvError> {
    pin.wheel_for(arch).ok_or_else(|| UvError::NoWheel {
        version: pin.version.clone(),
        arch: arch.to_owned(),
    })
}

/// What `receipts/uv.json` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UvReceipt {
    /// uv's version.
    pub version: String,
    /// The binary cudaup wrote.
    pub binary: PathBuf,
    /// Its sha256.
    pub sha256: String,
    /// The wheel it came from.
    pub wheel: String,
    /// Where the wheel was fetched.
    pub from: String,
}

/// Where cudaup keeps its uv of `version`.
pub fn binary_path(home: &Home, version: &str) -> PathBuf {
    home.tools()
        .join(format!("uv-{version}"))
        .join(format!("uv{}", std::env::consts::EXE_SUFFIX))
}

/// The receipt, when there is one that parses.
pub fn receipt(home: &Home) -> Option<UvReceipt> {
    let bytes = crate::world::fs::read_regular(&home.receipts().join(RECEIPT), 1 << 20).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// cudaup's uv of the pinned version, when its bytes are still the ones the receipt records.
pub fn installed(home: &Home, pin: &UvPin) -> Option<PathBuf> {
    let r = receipt(home)?;
    let path = binary_path(home, &pin.version);
    (r.version == pin.version && r.binary == path && sha256_of(&path).as_deref() == Some(&r.sha256))
        .then_some(path)
}

fn sha256_of(path: &Path) -> Option<String> {
    let meta = path.symlink_metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    crate::fetch::sha256_file(path).ok()
}

/// The version a `uv --version` line names (`uv 0.13.9 (abc123 2026-11-17)`).
pub fn parse_version(line: &str) -> Option<Version> {
    let mut words = line.split_whitespace();
    (words.next()? == "uv").then_some(())?;
    Version::parse(words.next()?)
}

/// Fetches the pinned wheel for `arch` from the first of `indexes` that lists it, checks it and
/// its binary, and installs the binary into the home with its receipt. Returns the binary.
pub fn bring(
    home: &Home,
    pin: &UvPin,
    arch: &str,
    fetcher: &Fetcher,
    indexes: &[Location],
) -> Result<PathBuf, UvError> {
    let wheel = wheel_of(pin, arch)?;
    let (index, location) = find_wheel(pin, arch, fetcher, indexes)?;
    let artifact = artifact(pin, wheel, location);
    let target = binary_path(home, &pin.version);
    // Whatever stands at the path and is not the pinned binary is someone's: never replaced.
    let present = target.symlink_metadata().is_ok();
    if present && sha256_of(&target).as_deref() != Some(wheel.binary_sha256.as_str()) {
        return Err(UvError::Binary {
            wheel: wheel.filename.clone(),
            why: format!(
                "{} is there and is not the uv cudaup writes (its sha256 differs): left as it is",
                target.display()
            ),
        });
    }
    if !present {
        let fetched = fetcher.fetch::<()>(0, &artifact, None)?;
        let bytes = binary_from(&fetched.path, pin, wheel)?;
        crate::world::fs::write_atomic(&target, &bytes, Temp::Unique, Durability::Fsync)?;
        set_executable(&target)?;
    }
    let receipt = UvReceipt {
        version: pin.version.clone(),
        binary: target.clone(),
        sha256: wheel.binary_sha256.clone(),
        wheel: wheel.filename.clone(),
        from: index.to_string(),
    };
    let json = serde_json::to_vec_pretty(&receipt).map_err(std::io::Error::other)?;
    crate::world::fs::write_atomic(
        &home.receipts().join(RECEIPT),
        &json,
        Temp::Unique,
        Durability::Fsync,
    )?;
    Ok(target)
}

/// The pinned wheel at `location`, as the fetcher downloads and checks it (the pin's sha256 and
/// size, never the index's).
fn artifact(pin: &UvPin, wheel: &UvWheel, location: Location) -> Artifact {
    Artifact {
        name: format!("uv {}", pin.version),
        location,
        sha256: wheel.sha256.clone(),
        size: Some(wheel.size),
        max: None,
    }
}

/// Where the pinned wheel for `arch` is: the first of `indexes` that lists it.
fn find_wheel(
    pin: &UvPin,
    arch: &str,
    fetcher: &Fetcher,
    indexes: &[Location],
) -> Result<(Location, Location), UvError> {
    let wheel = wheel_of(pin, arch)?;
    let mut asked = Vec::new();
    for index in indexes {
        match crate::sources::pypi::list(fetcher, index, "uv") {
            Ok((_, files)) => match files.into_iter().find(|f| f.filename == wheel.filename) {
                Some(f) => return Ok((index.clone(), f.location)),
                None => asked.push(format!("{index}: not listed")),
            },
            Err(e) => asked.push(format!("{index}: {e}")),
        }
    }
    Err(UvError::NotListed {
        filename: wheel.filename.clone(),
        asked: asked.join("; "),
    })
}

/// The pinned uv wheel for `arch`, fetched (into the fetcher's cache) from the first of
/// `indexes` that lists it and checked against the pin, wheel and binary: what an offline bundle
/// carries, so that a machine installing from it brings uv from it as from any index.
pub fn verified_wheel<'p>(
    pin: &'p UvPin,
    arch: &str,
    fetcher: &Fetcher,
    indexes: &[Location],
) -> Result<(PathBuf, &'p UvWheel), UvError> {
    let wheel = wheel_of(pin, arch)?;
    let (_, location) = find_wheel(pin, arch, fetcher, indexes)?;
    let fetched = fetcher.fetch::<()>(0, &artifact(pin, wheel, location), None)?;
    binary_from(&fetched.path, pin, wheel)?;
    Ok((fetched.path, wheel))
}

/// The binary's bytes out of the verified wheel, checked against the pinned size and sha256.
fn binary_from(wheel_path: &Path, pin: &UvPin, wheel: &UvWheel) -> Result<Vec<u8>, UvError> {
    let bad = |why: String| UvError::Binary {
        wheel: wheel.filename.clone(),
        why,
    };
    let file = fs_err::File::open(wheel_path)?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| bad(format!("not a zip: {e}")))?;
    let member = pin.member(wheel);
    let entry = zip
        .by_name(&member)
        .map_err(|_| bad(format!("no {member} in it")))?;
    let mut bytes = Vec::new();
    entry
        .take(wheel.binary_size.min(MAX_BINARY) + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("{member}: {e}")))?;
    let got = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
    if bytes.len() as u64 != wheel.binary_size || got != wheel.binary_sha256 {
        return Err(bad(format!(
            "{member} is {} bytes with sha256 {got}, not the pinned {} bytes with {}",
            bytes.len(),
            wheel.binary_size,
            wheel.binary_sha256
        )));
    }
    Ok(bytes)
}

#[cfg(unix)]
fn set_executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

#[cfg(not(unix))]
fn set_executable(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// The installer the framework step drives, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// uv at this path.
    Uv {
        /// The binary.
        path: PathBuf,
        /// Its version.
        version: String,
        /// Why this one (the user's, cudaup's copy, fetched now).
        why: String,
    },
    /// pip, because no uv could be had.
    Pip {
        /// Why not uv.
        why: String,
    },
}

impl Choice {
    /// The line install prints about it.
    pub fn describe(&self) -> String {
        match self {
            Choice::Uv { version, why, .. } => format!("installer: uv {version} ({why})"),
            Choice::Pip { why } => format!("installer: pip ({why})"),
        }
    }
}

/// Chooses the installer: a new enough uv on `path_entries`, else cudaup's copy, else `fetch`
/// (which brings it, see [`bring`]); pip when `disabled` or none can be had.
pub fn choose(
    home: &Home,
    pin: &UvPin,
    runner: &dyn Runner,
    path_entries: &[PathBuf],
    disabled: bool,
    fetch: impl FnOnce() -> Result<PathBuf, UvError>,
) -> Choice {
    if disabled {
        return Choice::Pip {
            why: "CUDAUP_NO_UV=1".into(),
        };
    }
    let pinned = Version::parse(&pin.version);
    let mut older = None;
    if let Some(uv) = crate::world::runner::which("uv", path_entries) {
        let found = runner
            .run(&uv, &["--version"], Duration::from_secs(20))
            .ok()
            .filter(|o| o.success())
            .and_then(|o| parse_version(o.stdout.lines().next().unwrap_or_default()));
        match (found, &pinned) {
            (Some(v), Some(p)) if &v >= p => {
                return Choice::Uv {
                    path: uv.clone(),
                    version: v.to_string(),
                    why: format!("{} on PATH, at least the pinned {p}", uv.display()),
                };
            }
            (v, _) => {
                older = Some(format!(
                    "{} on PATH is {}",
                    uv.display(),
                    v.map_or_else(
                        || "of no version it would tell".to_owned(),
                        |v| format!("{v}, older than the pinned {}", pin.version)
                    )
                ));
            }
        }
    }
    let but = older.map(|o| format!("; {o}")).unwrap_or_default();
    if let Some(path) = installed(home, pin) {
        return Choice::Uv {
            path,
            version: pin.version.clone(),
            why: format!("cudaup's copy in {}{but}", home.tools().display()),
        };
    }
    match fetch() {
        Ok(path) => Choice::Uv {
            path,
            version: pin.version.clone(),
            why: format!(
                "fetched and verified by cudaup into {}{but}",
                home.tools().display()
            ),
        },
        Err(e) => Choice::Pip {
            why: format!("no uv could be had: {e}{but}"),
        },
    }
}

/// The installer for a framework step that installs `packages` (`None`: the step keeps what
/// the venv has, so nothing is fetched): [`choose`], bringing uv from the step's own indexes
/// (its index, extra indexes and find-links, in that order) when it must.
pub fn installer(
    pin: &UvPin,
    home: &Home,
    runner: &dyn Runner,
    path_entries: &[PathBuf],
    disabled: bool,
    fetcher: &Fetcher,
    packages: Option<&crate::install::python::Packages>,
) -> (crate::install::python::Tool, Choice) {
    use crate::install::python::Tool;
    let Some(packages) = packages else {
        return (
            Tool::Pip,
            Choice::Pip {
                why: "nothing to install: the venv keeps what it has".into(),
            },
        );
    };
    let indexes = indexes_of(packages);
    let choice = choose(home, pin, runner, path_entries, disabled, || {
        bring(home, pin, std::env::consts::ARCH, fetcher, &indexes)
    });
    let tool = match &choice {
        Choice::Uv { path, .. } => Tool::Uv(path.clone()),
        Choice::Pip { .. } => Tool::Pip,
    };
    (tool, choice)
}

/// Where a step's packages come from, as the places uv's wheel is looked up.
fn indexes_of(p: &crate::install::python::Packages) -> Vec<Location> {
    let first = (!p.no_index && !p.index_url.is_empty()).then_some(&p.index_url);
    first
        .into_iter()
        .chain(p.extra_index_urls.iter().filter(|_| !p.no_index))
        .chain(p.find_links.iter())
        .filter_map(|s| Location::parse(s).ok())
        .collect()
}

/// What uninstall does with cudaup's uv: the binary goes when its bytes are the receipt's
/// (`Ok`), else it stays with the reason (`Err`); `None` when cudaup brought none.
pub fn removal(home: &Home) -> Option<Result<(PathBuf, PathBuf), (PathBuf, String)>> {
    let r = receipt(home)?;
    let path = binary_path(home, &r.version);
    if r.binary != path {
        return Some(Err((
            r.binary,
            "the receipt names a path outside cudaup's tools folder".into(),
        )));
    }
    match sha256_of(&path) {
        Some(s) if s == r.sha256 => Some(Ok((path, home.receipts().join(RECEIPT)))),
        Some(_) => Some(Err((path, "its bytes are not the uv cudaup wrote".into()))),
        None if path.symlink_metadata().is_ok() => Some(Err((path, "not a regular file".into()))),
        None => Some(Ok((path, home.receipts().join(RECEIPT)))),
    }
}
