//! Version specifiers in the form publishers write them: `>=13.0,<14` (NVIDIA's conda packages),
//! `==9.3.0.75`, `==13.4.1.3.*`, `<10.0,>=9.3.0.75` (a wheel's `Requires-Dist`). The subset of
//! PEP 440 that numeric release versions need; pre-releases are not compared here.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::version::Version;

/// One comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `==` (with `.*`: the prefix matches).
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `~=`: at least this, and the same prefix but the last part.
    Compatible,
}

/// A clause: an operator, a version and whether it ends in `.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// The comparison.
    pub op: Op,
    /// The version compared with.
    pub version: Version,
    /// `==X.*` / `!=X.*`.
    pub wildcard: bool,
}

/// Comma-separated clauses that must all hold. Empty: any version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spec {
    /// The clauses.
    pub clauses: Vec<Clause>,
    text: String,
}

impl Spec {
    /// Parses `>=13.0,<14`, `(==9.3.0.75)`, `<10.0, >=9.3.0.75`; `None` if any clause is not
    /// understood (an unparsed specifier must never widen what is allowed).
    pub fn parse(s: &str) -> Option<Self> {
        let inner = s
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        let mut clauses = Vec::new();
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (op, rest) = [
                ("~=", Op::Compatible),
                ("==", Op::Eq),
                ("!=", Op::Ne),
                ("<=", Op::Le),
                (">=", Op::Ge),
                ("<", Op::Lt),
                (">", Op::Gt),
            ]
            .iter()
            .find_map(|(p, op)| part.strip_prefix(p).map(|r| (*op, r.trim())))?;
            let (text, wildcard) = match rest.strip_suffix(".*") {
                Some(t) => (t, true),
                None => (rest, false),
            };
            if wildcard && !matches!(op, Op::Eq | Op::Ne) {
                return None;
            }
            if !text.chars().all(|c| c.is_ascii_digit() || c == '.') || text.is_empty() {
                return None;
            }
            clauses.push(Clause {
                op,
                version: Version::parse(text)?,
                wildcard,
            });
        }
        Some(Self {
            clauses,
            text: inner.to_owned(),
        })
    }

    /// A spec of one clause.
    pub fn one(op: Op, version: Version) -> Self {
        let mut s = Self {
            clauses: vec![Clause {
                op,
                version,
                wildcard: false,
            }],
            text: String::new(),
        };
        s.text = s.render();
        s
    }

    fn render(&self) -> String {
        self.clauses
            .iter()
            .map(|c| {
                let op = match c.op {
                    Op::Eq => "==",
                    Op::Ne => "!=",
                    Op::Lt => "<",
                    Op::Le => "<=",
                    Op::Gt => ">",
                    Op::Ge => ">=",
                    Op::Compatible => "~=",
                };
                format!("{op}{}{}", c.version, if c.wildcard { ".*" } else { "" })
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether `v` satisfies every clause.
    pub fn contains(&self, v: &Version) -> bool {
        self.clauses.iter().all(|c| c.holds(v))
    }

    /// Whether this pins one exact version (`==X` without a wildcard): nothing floats.
    pub fn is_exact(&self) -> bool {
        self.clauses
            .iter()
            .any(|c| c.op == Op::Eq && !c.wildcard && c.version.parts().len() >= 3)
    }

    /// The lowest version the clauses allow, when one is stated (`>=`, `==`, `~=`).
    pub fn floor(&self) -> Option<&Version> {
        self.clauses
            .iter()
            .filter(|c| matches!(c.op, Op::Ge | Op::Eq | Op::Compatible))
            .map(|c| &c.version)
            .max()
    }
}

impl Clause {
    fn holds(&self, v: &Version) -> bool {
        let prefix_eq = || {
            self.version
                .parts()
                .iter()
                .enumerate()
                .all(|(i, p)| v.parts().get(i).copied().unwrap_or(0) == *p)
        };
        match self.op {
            Op::Eq if self.wildcard => prefix_eq(),
            Op::Ne if self.wildcard => !prefix_eq(),
            Op::Eq => v == &self.version,
            Op::Ne => v != &self.version,
            Op::Lt => v < &self.version,
            Op::Le => v <= &self.version,
            Op::Gt => v > &self.version,
            Op::Ge => v >= &self.version,
            Op::Compatible => {
                let n = self.version.parts().len().saturating_sub(1).max(1);
                v >= &self.version
                    && self.version.parts()[..n]
                        .iter()
                        .enumerate()
                        .all(|(i, p)| v.parts().get(i).copied().unwrap_or(0) == *p)
            }
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Spec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Spec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Spec::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{s}` is not a version specifier (write e.g. \">=13.0,<14\")"
            ))
        })
    }
}

/// A requirement as a wheel's metadata states it: `nvidia-cudnn-cu12<10.0,>=9.3.0.75`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Normalised distribution name (`nvidia-cudnn-cu12`).
    pub name: String,
    /// Extras asked for (`cuda-toolkit[cudart,cublas]`).
    pub extras: Vec<String>,
    /// The versions allowed.
    pub spec: Spec,
}

impl Requirement {
    /// Parses the part before any `;` marker. `None` for URLs or specifiers not understood.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.split(';').next()?.trim();
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
            .unwrap_or(s.len());
        let name = crate::sources::pypi::normalize(&s[..end]);
        if name.is_empty() {
            return None;
        }
        let mut rest = s[end..].trim();
        let mut extras = Vec::new();
        if let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']')?;
            extras = r[..close]
                .split(',')
                .map(|e| e.trim().to_owned())
                .filter(|e| !e.is_empty())
                .collect();
            rest = r[close + 1..].trim();
        }
        if rest.starts_with('@') {
            return None;
        }
        Some(Self {
            name,
            extras,
            spec: Spec::parse(rest)?,
        })
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.name, self.spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn ranges_as_nvidia_and_pypi_write_them() {
        let conda = Spec::parse(">=13,<14").unwrap();
        assert!(conda.contains(&v("13.0")) && conda.contains(&v("13.5")));
        assert!(!conda.contains(&v("14.0")) && !conda.contains(&v("12.9")));
        let tf = Spec::parse("<10.0,>=9.3.0.75").unwrap();
        assert!(tf.contains(&v("9.28.0.42")) && !tf.contains(&v("9.3.0.74")));
        assert!(!tf.is_exact());
        let pin = Spec::parse("(==9.3.0.75)").unwrap();
        assert!(pin.is_exact() && pin.contains(&v("9.3.0.75")));
        let wild = Spec::parse("==13.4.1.3.*").unwrap();
        assert!(wild.contains(&v("13.4.1.3.9")) && !wild.contains(&v("13.4.1.4")));
        assert!(!wild.is_exact());
        let below = Spec::parse("<9.11").unwrap();
        assert!(below.contains(&v("9.10.2.21")) && !below.contains(&v("9.11.0.98")));
        assert!(Spec::parse("~=3.9.0").unwrap().contains(&v("3.9.4")));
        assert!(!Spec::parse("~=3.9.0").unwrap().contains(&v("3.10.0")));
        assert_eq!(tf.floor(), Some(&v("9.3.0.75")));
        assert!(
            Spec::parse(">=1.0b1").is_none(),
            "pre-releases are not understood"
        );
        assert!(Spec::parse("=>13").is_none());
        assert!(Spec::parse("").unwrap().contains(&v("1")));
    }

    #[test]
    fn requirements_from_metadata() {
        let r =
            Requirement::parse("nvidia-cudnn-cu12<10.0,>=9.3.0.75; extra == \"and-cuda\"").unwrap();
        assert_eq!(r.name, "nvidia-cudnn-cu12");
        assert_eq!(r.to_string(), "nvidia-cudnn-cu12<10.0,>=9.3.0.75");
        let r =
            Requirement::parse("cuda-toolkit[cublas,cudart]==13.2.2; platform_system == \"Linux\"")
                .unwrap();
        assert_eq!(r.extras, ["cublas", "cudart"]);
        assert!(r.spec.is_exact());
        let r = Requirement::parse("Nvidia_CUDNN_cu12 (==8.9.4.25) ; extra == 'and-cuda'").unwrap();
        assert_eq!(r.name, "nvidia-cudnn-cu12");
        assert!(Requirement::parse("foo @ https://x/y.whl").is_none());
        assert!(Requirement::parse("filelock")
            .unwrap()
            .spec
            .clauses
            .is_empty());
    }
}
