//! Which Python a framework goes into: the one the user pinned, a detected one in the release's
//! range, or one to install.

use crate::catalog::RequiresPython;
use crate::model::system::System;
use crate::model::version::Version;

/// The Python a stack uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PythonChoice {
    /// A detected interpreter (`path`, `version`).
    Keep {
        /// Interpreter path.
        path: String,
        /// Its version.
        version: String,
    },
    /// None fits: this major.minor must be installed.
    Install {
        /// Version to install.
        version: String,
    },
}

impl PythonChoice {
    /// The version string.
    pub fn version(&self) -> &str {
        match self {
            PythonChoice::Keep { version, .. } | PythonChoice::Install { version } => version,
        }
    }
}

fn in_range(v: &Version, min: &Version, max: &Version) -> bool {
    let mm = Version::parse(&v.prefix(2)).expect("a prefix of a version is a version");
    min <= &mm && &mm <= max
}

/// The first wheel whose Requires-Python excludes Python `v` (exactly: `!=3.14.1` excludes
/// 3.14.1, not 3.14.2).
fn excluded_by<'r>(requires: &[&'r RequiresPython], v: &Version) -> Option<&'r RequiresPython> {
    requires
        .iter()
        .find(|r| !r.requires_python.contains(v))
        .copied()
}

/// Picks the Python for a release supporting `min..=max` (major.minor) whose wheels declare
/// `requires` (their Requires-Python, applied to each interpreter's exact version).
pub fn choose(
    system: &System,
    pin: Option<&crate::model::version::VersionPin>,
    min: &Version,
    max: &Version,
    requires: &[&RequiresPython],
) -> Result<PythonChoice, String> {
    let detected = system
        .pythons
        .iter()
        .filter_map(|p| Some((p, Version::parse(&p.version)?)))
        .filter(|(_, v)| excluded_by(requires, v).is_none());
    if let Some(pin) = pin {
        let want = pin.version().clone();
        if !in_range(&want, min, max) {
            return Err(format!(
                "needs Python {min} to {max}, and Python {pin} is pinned"
            ));
        }
        if let Some(r) = excluded_by(requires, &want).filter(|_| want.parts().len() >= 3) {
            return Err(format!(
                "{} {} declares Requires-Python {}, which excludes the pinned Python {pin}",
                r.package, r.version, r.requires_python
            ));
        }
        return Ok(detected
            .filter(|(_, v)| crate::model::request::pin_matches(Some(pin), v))
            .map(|(p, _)| PythonChoice::Keep {
                path: p.path.clone(),
                version: p.version.clone(),
            })
            .next()
            .unwrap_or(PythonChoice::Install {
                version: pin.to_string(),
            }));
    }
    Ok(detected
        .filter(|(_, v)| in_range(v, min, max))
        .map(|(p, _)| PythonChoice::Keep {
            path: p.path.clone(),
            version: p.version.clone(),
        })
        .next()
        .unwrap_or(PythonChoice::Install {
            version: max.to_string(),
        }))
}
