//! Dotted numeric versions (`580.95.05`, `12.8`, `9.10.2.21`) compared number by number.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// A version made of dot-separated numbers. Missing trailing parts compare as zero, so
/// `12.8` == `12.8.0` and `570.26` < `570.124.06`.
#[derive(Debug, Clone, Eq)]
pub struct Version {
    parts: Vec<u32>,
    text: String,
}

impl Version {
    /// Parses the leading `N(.N)*` of `s`, ignoring a local suffix (`2.8.0+cu128` → `2.8.0`).
    pub fn parse(s: &str) -> Option<Self> {
        let head = s
            .trim()
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()?;
        let parts: Option<Vec<u32>> = head
            .split('.')
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().ok())
            .collect();
        let parts = parts.filter(|p| !p.is_empty())?;
        Some(Self {
            parts,
            text: s.trim().to_owned(),
        })
    }

    /// The first `n` parts joined with dots (`13.0.2`, 2 → `13.0`).
    pub fn prefix(&self, n: usize) -> String {
        (0..n)
            .map(|i| self.parts.get(i).copied().unwrap_or(0).to_string())
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The major number.
    pub fn major(&self) -> u32 {
        self.parts[0]
    }

    /// The minor number (0 when absent).
    pub fn minor(&self) -> u32 {
        self.parts.get(1).copied().unwrap_or(0)
    }

    /// The numbers.
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }

    /// Whether every number of `prefix` is this version's at the same place (`12.8.1` starts
    /// with `12.8`, not with `12.80`; missing parts count as 0).
    pub fn starts_with(&self, prefix: &Version) -> bool {
        prefix
            .parts
            .iter()
            .enumerate()
            .all(|(i, p)| self.parts.get(i).copied().unwrap_or(0) == *p)
    }
}

impl FromStr for Version {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| format!("`{s}` is not a version"))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        let n = self.parts.len().max(other.parts.len());
        (0..n)
            .map(|i| {
                let a = self.parts.get(i).copied().unwrap_or(0);
                let b = other.parts.get(i).copied().unwrap_or(0);
                a.cmp(&b)
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl serde::Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Version::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not a version")))
    }
}

/// A version the user fixed (`--cuda 12.8`, `pins.cuda = "13.0.2"`), parsed once where it enters.
///
/// A pin with three or more numbers names one release; fewer name a series, and the newest
/// release of it is meant. Either matches a version by prefix (`12.8` matches `12.8.1`, not
/// `12.80`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionPin {
    /// `12.8`: the newest release of the series.
    Series(Version),
    /// `13.0.2`: exactly this release.
    Exact(Version),
}

impl VersionPin {
    /// Parses plain dotted numbers (`12.8`, `13.0.2`); a local suffix (`+cu128`), letters or an
    /// empty string are refused, with the reason.
    pub fn parse(text: &str) -> Result<VersionPin, String> {
        let t = text.trim();
        let plain = !t.is_empty()
            && t.split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        let version = Version::parse(t).filter(|_| plain).ok_or_else(|| {
            format!("`{text}` is not a version: use dot-separated numbers such as 12.8 or 12.8.1")
        })?;
        Ok(if version.parts().len() >= 3 {
            VersionPin::Exact(version)
        } else {
            VersionPin::Series(version)
        })
    }

    /// The pinned numbers.
    pub fn version(&self) -> &Version {
        match self {
            VersionPin::Series(v) | VersionPin::Exact(v) => v,
        }
    }

    /// Whether the pin names one release (three or more numbers).
    pub fn is_exact(&self) -> bool {
        matches!(self, VersionPin::Exact(_))
    }

    /// Whether `version` starts with every number of the pin.
    pub fn matches(&self, version: &Version) -> bool {
        version.starts_with(self.version())
    }

    /// The series this pin falls in (`13.0.2` → `13.0`; `13` stays `13`): what a wheel built for
    /// a series is matched against.
    pub fn series(&self) -> VersionPin {
        let v = self.version();
        match Version::parse(&v.prefix(v.parts().len().min(2))) {
            Some(s) => VersionPin::Series(s),
            None => self.clone(),
        }
    }
}

impl fmt::Display for VersionPin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.version().fmt(f)
    }
}

impl FromStr for VersionPin {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        VersionPin::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::{Version, VersionPin};

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn compares_numerically_not_lexically() {
        assert!(v("570.26") < v("570.124.06"));
        assert!(v("12.10") > v("12.9"));
        assert_eq!(v("12.8"), v("12.8.0"));
        assert!(v("580.159.04") > v("580.95.05"));
    }

    #[test]
    fn ignores_local_suffix() {
        assert_eq!(v("2.8.0+cu128"), v("2.8.0"));
        assert_eq!(v("2.8.0+cu128").to_string(), "2.8.0+cu128");
        assert_eq!(v("13.0.2").prefix(2), "13.0");
    }

    #[test]
    fn rejects_non_versions() {
        assert!(Version::parse("abc").is_none());
        assert!(Version::parse("").is_none());
    }

    #[test]
    fn pins_are_series_or_exact_and_match_by_prefix() {
        assert!(matches!(
            VersionPin::parse("12.8"),
            Ok(VersionPin::Series(_))
        ));
        assert!(matches!(
            VersionPin::parse("13.0.2"),
            Ok(VersionPin::Exact(_))
        ));
        for bad in ["", "12.8+cu128", "twelve", "12..8", "12.8.", "-1"] {
            assert!(VersionPin::parse(bad).is_err(), "{bad}");
        }
        let pin = VersionPin::parse("12.8").unwrap();
        assert!(pin.matches(&v("12.8.1")));
        assert!(!pin.matches(&v("12.80")));
        assert!(!VersionPin::parse("12.8.2").unwrap().matches(&v("12.8.1")));
    }
}
