//! Wheels from a Python package index: PEP 691 (JSON) with a PEP 503 (HTML) fallback, from
//! PyPI, any mirror of it, or a directory laid out the same way. Every file comes with the
//! sha256 the index states.

use serde_json::Value;

use crate::fetch::{Artifact, FetchError, Fetcher, Location};
use crate::version::Version;

/// PyPI's simple index, the default.
pub const PYPI_SIMPLE: &str = "https://pypi.org/simple";

const ACCEPT: &str = "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

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

/// A file listed on an index page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFile {
    /// File name.
    pub filename: String,
    /// Where to get it.
    pub location: Location,
    /// Its sha256, when stated.
    pub sha256: Option<String>,
    /// Its size, when stated (PEP 700).
    pub size: Option<u64>,
    /// Whether it was yanked.
    pub yanked: bool,
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

/// Whether a wheel's platform tags run on Linux `arch` (`x86_64`, `aarch64`).
pub fn runs_on(platforms: &[String], arch: &str) -> bool {
    platforms.iter().any(|p| {
        p == "any"
            || (p.ends_with(&format!("_{arch}"))
                && (p.starts_with("manylinux") || p.starts_with("linux")))
    })
}

/// Parses a PEP 691 JSON page.
fn parse_json(page: &Location, bytes: &[u8]) -> Result<Vec<IndexFile>, String> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let files = doc
        .get("files")
        .and_then(Value::as_array)
        .ok_or("no `files`")?;
    Ok(files
        .iter()
        .filter_map(|f| {
            let filename = f.get("filename")?.as_str()?.to_owned();
            let url = f.get("url")?.as_str()?;
            Some(IndexFile {
                location: resolve(page, url)?,
                sha256: f
                    .get("hashes")
                    .and_then(|h| h.get("sha256"))
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase),
                size: f.get("size").and_then(Value::as_u64),
                yanked: f
                    .get("yanked")
                    .is_some_and(|y| y.as_bool() != Some(false) && !y.is_null()),
                filename,
            })
        })
        .collect())
}

/// Parses a PEP 503 HTML page: `<a href="URL#sha256=HEX" …>filename</a>`.
fn parse_html(page: &Location, text: &str) -> Vec<IndexFile> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<a ") {
        rest = &rest[start + 3..];
        let Some(close) = rest.find('>') else { break };
        let attrs = &rest[..close];
        let Some(end) = rest.find("</a>") else { break };
        let filename = rest[close + 1..end].trim().to_owned();
        rest = &rest[end..];
        let Some(href) = attr(attrs, "href") else {
            continue;
        };
        let href = href.replace("&amp;", "&");
        let (url, fragment) = href.split_once('#').unwrap_or((&href, ""));
        let Some(location) = resolve(page, url) else {
            continue;
        };
        out.push(IndexFile {
            filename,
            location,
            sha256: fragment
                .strip_prefix("sha256=")
                .map(str::to_ascii_lowercase),
            size: None,
            yanked: attrs.contains("data-yanked"),
        });
    }
    out
}

fn attr(attrs: &str, name: &str) -> Option<String> {
    let at = attrs.find(&format!("{name}="))? + name.len() + 1;
    let rest = &attrs[at..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &rest[1..];
    rest.find(quote).map(|e| rest[..e].to_owned())
}

/// Resolves a link on `page` (absolute, root-relative or relative).
fn resolve(page: &Location, link: &str) -> Option<Location> {
    match page {
        Location::Http(u) => u.join(link).ok().map(Location::Http),
        Location::File(p) => {
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("file://")
            {
                return Location::parse(link).ok();
            }
            // A static index's page is `<dir>/index.html`; links are relative to `<dir>/`.
            let dir = if p.extension().is_some() {
                p.parent()?.to_owned()
            } else {
                p.clone()
            };
            Some(Location::File(normalize_path(&dir.join(link))))
        }
    }
}

fn normalize_path(p: &std::path::Path) -> std::path::PathBuf {
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The files an index lists for `package`.
pub fn list(
    fetcher: &Fetcher,
    index: &Location,
    package: &str,
) -> Result<(Location, Vec<IndexFile>), IndexError> {
    let name = normalize(package);
    let page = match index {
        Location::Http(_) => index.join(&format!("{name}/")),
        Location::File(_) => index.join(&format!("{name}/index.html")),
    };
    let bytes = fetcher.get_bytes(&page, Some(ACCEPT))?;
    let text = String::from_utf8_lossy(&bytes);
    let files = if text.trim_start().starts_with('{') {
        parse_json(&page, &bytes).map_err(|message| IndexError::Malformed {
            url: page.to_string(),
            message,
        })?
    } else {
        parse_html(&page, &text)
    };
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
        crate::request::pin_matches(Some(prefix), &w.version) && f.sha256.is_some()
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
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
