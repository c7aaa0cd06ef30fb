//! Where bytes come from: an http(s) URL, a `file://` URL, or a plain directory.

use std::fmt;
use std::path::{Path, PathBuf};

use super::FetchError;

/// A source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An `http://` or `https://` URL.
    Http(reqwest::Url),
    /// A local file or directory (from `file://` or a plain path).
    File(PathBuf),
}

impl Location {
    /// Parses `https://…`, `http://…`, `file:///…`, or a path.
    pub fn parse(s: &str) -> Result<Self, FetchError> {
        if s.starts_with("http://") || s.starts_with("https://") {
            let url = reqwest::Url::parse(s).map_err(|e| FetchError::BadLocation {
                location: s.to_owned(),
                message: e.to_string(),
            })?;
            return Ok(Self::Http(url));
        }
        if s.starts_with("file://") {
            let url = reqwest::Url::parse(s).map_err(|e| FetchError::BadLocation {
                location: s.to_owned(),
                message: e.to_string(),
            })?;
            let path = url.to_file_path().map_err(|_| FetchError::BadLocation {
                location: s.to_owned(),
                message: "not a local file URL".into(),
            })?;
            return Ok(Self::File(path));
        }
        if s.contains("://") {
            return Err(FetchError::BadLocation {
                location: s.to_owned(),
                message: "only https://, http://, file:// and plain directories are supported"
                    .into(),
            });
        }
        Ok(Self::File(PathBuf::from(s)))
    }

    /// `self` with `rel` appended as a path (a trailing slash on `self` is implied).
    pub fn join(&self, rel: &str) -> Self {
        let rel = rel.trim_start_matches('/');
        match self {
            Self::Http(url) => {
                let mut u = url.clone();
                let base = u.path().trim_end_matches('/').to_owned();
                u.set_path(&format!("{base}/{rel}"));
                Self::Http(u)
            }
            Self::File(p) => Self::File(p.join(rel)),
        }
    }

    /// Whether `other` lies under `self` (a directory): the same origin and a path that starts
    /// with this one's, after the URL parser (or lexical normalisation, for files) has resolved
    /// every `..`, `%2e%2e` and backslash. What joins a publisher's relative path is checked with
    /// this, so no spelling of `..` leaves the mirror.
    pub fn contains(&self, other: &Location) -> bool {
        match (self, other) {
            (Self::Http(base), Self::Http(u)) => {
                let dir = format!("{}/", base.path().trim_end_matches('/'));
                base.scheme() == u.scheme()
                    && base.host_str() == u.host_str()
                    && base.port_or_known_default() == u.port_or_known_default()
                    && u.path().starts_with(&dir)
            }
            (Self::File(base), Self::File(p)) => {
                let mut out = PathBuf::new();
                for c in p.components() {
                    match c {
                        std::path::Component::ParentDir => {
                            if !out.pop() {
                                return false;
                            }
                        }
                        std::path::Component::CurDir => {}
                        c => out.push(c),
                    }
                }
                out.starts_with(base) && out != *base
            }
            _ => false,
        }
    }

    /// Whether the bytes are authenticated in transit (https) or local.
    pub fn is_authenticated(&self) -> bool {
        match self {
            Self::Http(u) => u.scheme() == "https",
            Self::File(_) => true,
        }
    }

    /// The local path, for file locations.
    pub fn as_path(&self) -> Option<&Path> {
        match self {
            Self::File(p) => Some(p),
            Self::Http(_) => None,
        }
    }

    /// The last path segment (a file name).
    pub fn file_name(&self) -> String {
        match self {
            Self::Http(u) => u
                .path_segments()
                .and_then(|mut s| s.next_back().map(str::to_owned))
                .unwrap_or_default(),
            Self::File(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// A location as the user gave it (a flag, a variable, the config file, a wizard answer):
/// parsed once where it is checked, and keeping the user's spelling. Plans, receipts, pip's
/// arguments and the JSON documents show [`GivenLocation::as_str`], never the parser's text,
/// which adds a `/` to a bare host and drops a default port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenLocation {
    text: String,
    location: Location,
}

impl GivenLocation {
    /// Parses `text` as [`Location::parse`] does, keeping it.
    pub fn parse(text: &str) -> Result<Self, FetchError> {
        Ok(Self {
            location: Location::parse(text)?,
            text: text.to_owned(),
        })
    }

    /// A known location cudaup itself names (PyPI's index, PyTorch's): `text` is a constant
    /// URL, so it parses.
    pub fn known(text: &'static str) -> Self {
        Self::parse(text).expect("cudaup's own default locations parse")
    }

    /// A local directory found on the way (an offline bundle's), spelled as its path.
    pub fn dir(path: &Path) -> Self {
        Self {
            text: path.display().to_string(),
            location: Location::File(path.to_owned()),
        }
    }

    /// The user's spelling.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed location, to fetch from.
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// The local directory, for a plain path or a `file://` URL.
    pub fn as_path(&self) -> Option<&Path> {
        self.location.as_path()
    }

    /// An `http://` or `https://` URL.
    pub fn is_http(&self) -> bool {
        matches!(self.location, Location::Http(_))
    }

    /// A plain `http://` URL: its bytes would travel unencrypted.
    pub fn is_plain_http(&self) -> bool {
        self.is_http() && !self.location.is_authenticated()
    }
}

/// Written as the user's spelling: a plan or a report shows it as they gave it.
impl serde::Serialize for GivenLocation {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl fmt::Display for GivenLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(u) => write!(f, "{u}"),
            Self::File(p) => write!(f, "{}", p.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)] // Unix file URLs (file:///srv/...); Windows ones carry a drive letter
    #[test]
    fn parses_and_joins() {
        let l = Location::parse("https://developer.download.nvidia.com").unwrap();
        assert_eq!(
            l.join("compute/cuda/redist/redistrib_13.0.2.json")
                .to_string(),
            "https://developer.download.nvidia.com/compute/cuda/redist/redistrib_13.0.2.json"
        );
        let l = Location::parse("http://127.0.0.1:8080/mirror/").unwrap();
        assert_eq!(
            l.join("/a/b.tar.xz").to_string(),
            "http://127.0.0.1:8080/mirror/a/b.tar.xz"
        );
        assert!(!l.is_authenticated());
        let l = Location::parse("file:///srv/mirror").unwrap();
        assert_eq!(l, Location::File("/srv/mirror".into()));
        assert_eq!(
            Location::parse("/srv/m").unwrap().join("x").file_name(),
            "x"
        );
        assert!(Location::parse("ftp://host/x").is_err());
    }

    #[cfg(unix)] // Unix file URLs (file:///srv/...); Windows ones carry a drive letter
    #[test]
    fn a_given_location_keeps_the_users_spelling() {
        for text in [
            "https://m.example",
            "https://m.example:443/simple",
            "/srv/m",
        ] {
            let given = GivenLocation::parse(text).unwrap();
            assert_eq!(given.to_string(), text);
            assert_eq!(given.location(), &Location::parse(text).unwrap());
        }
        // The parser's own text is not the user's: a bare host gains a `/`.
        let bare = GivenLocation::parse("https://m.example").unwrap();
        assert_eq!(bare.location().to_string(), "https://m.example/");
        assert!(bare.is_http() && !bare.is_plain_http());
        assert!(GivenLocation::parse("http://10.0.0.2/simple")
            .unwrap()
            .is_plain_http());
        let dir = GivenLocation::parse("file:///srv/m").unwrap();
        assert_eq!(dir.as_path(), Some(Path::new("/srv/m")));
        assert_eq!(dir.as_str(), "file:///srv/m");
        assert!(GivenLocation::parse("ftp://h/x").is_err());
        assert_eq!(
            serde_json::to_value(&bare).unwrap(),
            serde_json::json!("https://m.example")
        );
        let found = GivenLocation::dir(Path::new("/srv/bundle"));
        assert_eq!(found.as_str(), "/srv/bundle");
        assert_eq!(found.location(), &Location::File("/srv/bundle".into()));
    }

    #[test]
    fn containment_sees_every_spelling_of_dotdot() {
        let base = Location::parse("https://m.example/mirror/compute/cuda/redist").unwrap();
        assert!(base.contains(&base.join("cuda_nvcc/x.tar.xz")));
        for evil in [
            "../x",
            "%2e%2e/%2e%2e/x",
            "%2E%2e/x",
            ".%2e/x",
            "a/..\\..\\..\\x",
            "..\\x",
        ] {
            assert!(
                !base.contains(&base.join(evil)),
                "{evil}: {}",
                base.join(evil)
            );
        }
        let other = Location::parse("https://evil.example/mirror/compute/cuda/redist/x").unwrap();
        assert!(!base.contains(&other));
        let dir = Location::parse("/srv/m/redist").unwrap();
        assert!(dir.contains(&dir.join("a/b")));
        assert!(!dir.contains(&dir.join("a/../../b")));
        assert!(!dir.contains(&dir.join("..")));
    }
}
