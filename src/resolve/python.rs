//! Which Python a framework goes into: the one the user pinned, a detected one in the release's
//! range, or one to install.

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

/// Picks the Python for a release supporting `min..=max` (major.minor).
pub fn choose(
    system: &System,
    pin: Option<&crate::model::version::VersionPin>,
    min: &Version,
    max: &Version,
) -> Result<PythonChoice, String> {
    let detected = system
        .pythons
        .iter()
        .filter_map(|p| Some((p, Version::parse(&p.version)?)));
    if let Some(pin) = pin {
        let want = pin.version().clone();
        if !in_range(&want, min, max) {
            return Err(format!(
                "needs Python {min} to {max}, and Python {pin} is pinned"
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
