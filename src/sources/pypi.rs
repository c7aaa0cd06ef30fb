//! Wheels from a Python package index: PEP 691 (JSON) with a PEP 503 (HTML) fallback, from
//! PyPI, any mirror of it, or a directory laid out the same way. Every file comes with the
//! sha256 the index states.

use crate::fetch::{Artifact, FetchError, Fetcher, Location};
use crate::model::version::Version;

/// PyPI's simple index, the default.
pub const PYPI_SIMPLE: &str = "https://pypi.org/simple";

#[cfg(test)]
use super::page::parse_json;
pub use super::page::{parse_html, parse_page, IndexFile};

/// What a client asks an index for: PEP 691 JSON, else PEP 503 HTML.
pub const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

/// Why no wheel could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The page could not be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The page is neither PEP 691 JSON nor PEP 503 HTML.
    #[error("{url}: not a package index page: {message}")]
    Malformed {
        /// The page.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// A local index has no page for the project.
    #[error("the index {index} has no {package} (no page for it): add its wheels, or use an index that has them")]
    NoProject {
        /// The index.
        index: String,
        /// The project.
        package: String,
    },
    /// No wheel matches.
    #[error(
        "{url}: no {package} wheel for version {wanted} on {arch} (the index has {available})"
    )]
    NoMatch {
        /// The page.
        url: String,
        /// The package.
        package: String,
        /// The version prefix wanted.
        wanted: String,
        /// The machine.
        arch: String,
        /// What versions it has.
        available: String,
    },
}

/// PEP 503 name normalisation.
pub fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The parts of a wheel file name that matter here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelName {
    /// Distribution (normalised).
    pub name: String,
    /// Version.
    pub version: Version,
    /// Platform tags (`manylinux2014_x86_64`, `any`).
    pub platforms: Vec<String>,
}

/// Parses `{name}-{version}(-{build})?-{py}-{abi}-{platform}.whl`.
pub fn parse_wheel_name(filename: &str) -> Option<WheelName> {
    let stem = filename.strip_suffix(".whl")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 5 {
        return None;
    }
    let platform = parts[parts.len() - 1];
    Some(WheelName {
        name: normalize(parts[0]),
        version: Version::parse(parts[1])?,
        platforms: platform.split('.').map(str::to_owned).collect(),
    })
}

/// The platform a wheel must be built for: the architecture on Linux (any manylinux tag of it),
/// the wheel tag itself on Windows (`win_amd64`, `win_arm64`: PEP 425's names).
pub fn wheel_platform(os: crate::model::system::OsFamily, arch: &str) -> String {
    match (os, arch) {
        (crate::model::system::OsFamily::Windows, "x86_64" | "amd64") => "win_amd64".into(),
        (crate::model::system::OsFamily::Windows, "aarch64" | "arm64") => "win_arm64".into(),
        _ => arch.to_owned(),
    }
}

/// Whether a wheel's platform tags run on `arch`: a Linux architecture (`x86_64`, `aarch64`:
/// any manylinux tag of it), or a Windows tag from [`wheel_platform`] (that tag exactly).
pub fn runs_on(platforms: &[String], arch: &str) -> bool {
    platforms.iter().any(|p| {
        p == "any"
            || (arch.starts_with("win_") && p == arch)
            || (p.ends_with(&format!("_{arch}"))
                && (p.starts_with("manylinux") || p.starts_with("linux")))
    })
}

/// The files an index lists for `package`.
pub fn list(
    fetcher: &Fetcher,
    index: &Location,
    package: &str,
) -> Result<(Location, Vec<IndexFile>), IndexError> {
    let name = normalize(package);
    // A flat folder of wheels (`pip download -d DIR`) is an index too.
    if let Location::File(dir) = index {
        if super::flat::is_flat_for(dir, package) {
            return Ok((
                index.clone(),
                super::flat::list_dir(dir, Some(package), true),
            ));
        }
    }
    let page = match index {
        Location::Http(_) => index.join(&format!("{name}/")),
        Location::File(_) => index.join(&format!("{name}/index.html")),
    };
    let bytes = fetcher
        .get_page(&page, ACCEPT)
        .map_err(|e| match (&e, index) {
            // A local index (a mirror, a bundle) without the project's page lacks that project.
            (FetchError::Local(io), Location::File(_))
                if io.kind() == std::io::ErrorKind::NotFound =>
            {
                IndexError::NoProject {
                    index: index.to_string(),
                    package: package.to_owned(),
                }
            }
            _ => IndexError::Fetch(e),
        })?;
    let files = parse_page(&page, &bytes).map_err(|message| IndexError::Malformed {
        url: page.to_string(),
        message,
    })?;
    Ok((page, files))
}

/// The newest wheel of `package` whose version starts with `prefix` and runs on `arch`.
pub fn pick(
    fetcher: &Fetcher,
    index: &Location,
    package: &str,
    prefix: &str,
    arch: &str,
) -> Result<(Version, Artifact), IndexError> {
    let (page, files) = list(fetcher, index, package)?;
    let mut candidates: Vec<(WheelName, IndexFile)> = files
        .into_iter()
        .filter(|f| !f.yanked)
        .filter_map(|f| Some((parse_wheel_name(&f.filename)?, f)))
        .filter(|(w, _)| w.name == normalize(package) && runs_on(&w.platforms, arch))
        .collect();
    let available = {
        let mut v: Vec<String> = candidates
            .iter()
            .map(|(w, _)| w.version.to_string())
            .collect();
        v.dedup();
        v.join(", ")
    };
    candidates.retain(|(w, f)| {
        crate::model::version::Version::parse(prefix).is_some_and(|p| w.version.starts_with(&p))
            && f.sha256.is_some()
    });
    candidates.sort_by(|a, b| a.0.version.cmp(&b.0.version));
    let (wheel, file) = candidates.pop().ok_or_else(|| IndexError::NoMatch {
        url: page.to_string(),
        package: package.to_owned(),
        wanted: prefix.to_owned(),
        arch: arch.to_owned(),
        available: if available.is_empty() {
            "nothing".into()
        } else {
            available
        },
    })?;
    // A local index states no sizes; the file itself does.
    let size = file.size.or_else(|| {
        file.location
            .as_path()
            .and_then(|p| p.metadata().ok())
            .map(|m| m.len())
    });
    Ok((
        wheel.version.clone(),
        Artifact {
            name: format!("{package} {}", wheel.version),
            location: file.location,
            sha256: file.sha256.expect("filtered"),
            size,
            // A PEP 503 page states no size: the wheel is still bounded.
            max: Some(crate::fetch::WHEEL_CAP),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    /// A loopback server: `/simple/x/` is a PEP 503 page (no sizes) linking one wheel, which it
    /// sends without a Content-Length and without end. Returns the index URL and the count of
    /// wheel bytes it managed to send.
    fn endless_wheel_server() -> (Location, Arc<AtomicU64>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = Arc::new(AtomicU64::new(0));
        let counter = sent.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let counter = counter.clone();
                std::thread::spawn(move || {
                    let mut line = String::new();
                    let mut reader = BufReader::new(conn.try_clone().unwrap());
                    reader.read_line(&mut line).unwrap();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) <= 2 {
                            break;
                        }
                    }
                    if line.contains("/simple/") {
                        let page = format!(
                            "<html><body><a href=\"/x-1.0-py3-none-any.whl#sha256={}\">x-1.0-py3-none-any.whl</a></body></html>",
                            "0".repeat(64)
                        );
                        let _ = write!(
                            conn,
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                            page.len()
                        );
                        return;
                    }
                    let _ = write!(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
                    let chunk = vec![b'w'; 64 << 10];
                    while conn.write_all(&chunk).is_ok() {
                        counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                    }
                });
            }
        });
        (
            Location::parse(&format!("http://{addr}/simple/")).unwrap(),
            sent,
        )
    }

    fn fetcher(cache: &std::path::Path, max_download: u64) -> Fetcher {
        let mut s = crate::fetch::Settings::new(cache.to_owned());
        s.allow_http = true;
        s.attempts = 1;
        s.backoff = std::time::Duration::ZERO;
        s.max_download = max_download;
        Fetcher::new(
            s,
            Arc::new(AtomicBool::new(false)),
            Arc::new(crate::world::progress::Silent),
        )
    }

    /// Issue 25, finding 8: a wheel whose index gives no size was downloaded without bound from
    /// a server that never stops sending (300 MiB for a 1,681-byte wheel). It is bounded by the
    /// wheel cap (or the lower download ceiling), cut off at the first byte past it, and nothing
    /// of it is kept.
    #[test]
    fn a_sizeless_wheel_from_a_server_that_never_stops_is_cut_off_and_not_kept() {
        let (index, sent) = endless_wheel_server();
        let cache = tempfile::tempdir().unwrap();
        let f = fetcher(cache.path(), crate::fetch::DEFAULT_MAX_DOWNLOAD);
        let (_, mut artifact) = pick(&f, &index, "x", "1.0", "x86_64").unwrap();
        assert_eq!(artifact.size, None);
        assert_eq!(artifact.max, Some(crate::fetch::WHEEL_CAP));
        const { assert!(crate::fetch::WHEEL_CAP.bytes < crate::fetch::DEFAULT_MAX_DOWNLOAD) };
        // The same rule with a cap this test can reach quickly.
        artifact.max = Some(crate::fetch::Cap {
            bytes: 1 << 20,
            what: "NVIDIA wheel",
            recorded: None,
        });
        let err = f.fetch::<()>(0, &artifact, None).unwrap_err();
        assert!(
            matches!(err, FetchError::TooLong { limit: crate::fetch::Limit::Kind(n, _), .. } if n == 1 << 20),
            "{err}"
        );
        // The ceiling, when it is lower than the cap.
        let f = fetcher(cache.path(), 512 << 10);
        let (_, artifact) = pick(&f, &index, "x", "1.0", "x86_64").unwrap();
        let err = f.fetch::<()>(0, &artifact, None).unwrap_err();
        assert!(
            matches!(err, FetchError::TooLong { limit: crate::fetch::Limit::Ceiling(n), .. } if n == 512 << 10),
            "{err}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(
            sent.load(Ordering::Relaxed) < 64 << 20,
            "the server got {} bytes out",
            sent.load(Ordering::Relaxed)
        );
        let kept: Vec<_> = fs_err::read_dir(cache.path().join("downloads"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| !n.to_string_lossy().ends_with(".lock"))
            .collect();
        assert!(kept.is_empty(), "{kept:?}");
    }

    #[test]
    fn names_and_tags() {
        assert_eq!(normalize("Nvidia_CUDA.nvcc"), "nvidia-cuda-nvcc");
        let w = parse_wheel_name(
            "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        )
        .unwrap();
        assert_eq!(w.name, "nvidia-cuda-nvcc");
        assert_eq!(w.version.to_string(), "13.0.88");
        assert!(runs_on(&w.platforms, "x86_64"));
        assert!(!runs_on(&w.platforms, "aarch64"));
        assert!(runs_on(&["any".to_owned()], "aarch64"));
        assert!(!runs_on(&["win_amd64".to_owned()], "x86_64"));
    }

    #[test]
    fn pep691_and_pep503_pages() {
        let page = Location::parse("https://pypi.org/simple/nvidia-cuda-nvcc/").unwrap();
        let json = br#"{"meta": {"api-version": "1.1"}, "name": "nvidia-cuda-nvcc", "files": [
            {"filename": "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
             "url": "https://files.pythonhosted.org/packages/aa/nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
             "hashes": {"sha256": "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"}, "size": 37384532, "yanked": false},
            {"filename": "nvidia_cuda_nvcc-13.0.48-py3-none-win_amd64.whl", "url": "../../x.whl", "hashes": {}, "yanked": "broken"}]}"#;
        let files = parse_json(&page, json).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(
            files[0].sha256.as_deref(),
            Some("abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789")
        );
        assert_eq!(files[0].size, Some(37384532));
        assert!(files[1].yanked);
        assert_eq!(files[1].location.to_string(), "https://pypi.org/x.whl");

        let html = r#"<!DOCTYPE html><html><body><h1>Links for nvidia-cuda-runtime</h1>
<a href="../../packages/nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.whl#sha256=00ff" data-requires-python="&gt;=3">nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.whl</a><br/>
</body></html>"#;
        let dir_page =
            Location::parse("/srv/wheels/simple/nvidia-cuda-runtime/index.html").unwrap();
        let files = parse_html(&dir_page, html);
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].sha256.as_deref(), Some("00ff"));
        assert_eq!(
            files[0].location,
            Location::File("/srv/wheels/packages/nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.whl".into())
        );
    }
}
