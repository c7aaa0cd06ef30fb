//! `manifests/uv.toml`: the uv cudaup brings (issue 38). One uv version with, for each operating
//! system and machine architecture, the wheel PyPI publishes (file name, size, sha256) and the
//! sha256 and size of the `uv` binary inside it (`uv.exe` in a Windows wheel; from the wheel's
//! RECORD). The catalog is the trust root: an index
//! is never trusted for these values, and `manifests update` refreshes them from PyPI like every
//! other PyPI row.

use serde::{Deserialize, Serialize};

use crate::model::version::Version;

/// The most a uv binary may be: the pinned size is checked first, this bounds reading a member
/// whose header lies about it.
pub const MAX_BINARY: u64 = 256 << 20;

/// The operating system a row without `os` is for: the rows written before Windows had one.
pub const LINUX: &str = "linux";

/// The systems a row may name, as Rust's `std::env::consts::OS` spells them.
const SYSTEMS: [&str; 2] = [LINUX, "windows"];

fn linux() -> String {
    LINUX.to_owned()
}

fn is_linux(os: &str) -> bool {
    os == LINUX
}

/// `manifests/uv.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UvPin {
    /// Schema of the file (1).
    pub schema_version: u32,
    /// The pinned uv version.
    pub version: String,
    /// Where the values were read.
    pub source: String,
    /// One wheel per system and architecture.
    pub wheel: Vec<UvWheel>,
}

/// One platform's wheel.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UvWheel {
    /// `std::env::consts::ARCH` spelling (`x86_64`, `aarch64`).
    pub arch: String,
    /// `std::env::consts::OS` spelling (`linux`, `windows`); `linux` when left out.
    #[serde(default = "linux", skip_serializing_if = "is_linux")]
    pub os: String,
    /// The wheel's file name on PyPI.
    pub filename: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its sha256.
    pub sha256: String,
    /// The size of `uv-<version>.data/scripts/uv` (`uv.exe` on Windows) inside.
    pub binary_size: u64,
    /// That member's sha256 (the wheel's RECORD, checked against the bytes when installed).
    pub binary_sha256: String,
    /// Where the values were read (the wheel's URL, the index's page, its RECORD).
    pub source: String,
}

impl UvPin {
    /// Parses and checks `text`.
    pub fn parse(text: &str) -> Result<UvPin, String> {
        let pin: UvPin = toml::from_str(text).map_err(|e| e.to_string())?;
        pin.check()?;
        Ok(pin)
    }

    /// A sha256 is 64 lower-case hex digits, each wheel is this version's, one wheel per system
    /// and architecture, the system one cudaup knows, sizes positive and the binary within
    /// [`MAX_BINARY`].
    pub fn check(&self) -> Result<(), String> {
        if self.schema_version != 1 {
            return Err(format!(
                "schema_version {} (this cudaup reads 1)",
                self.schema_version
            ));
        }
        if Version::parse(&self.version).is_none() {
            return Err(format!("version {:?}", self.version));
        }
        let hex =
            |s: &str| s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let mut seen = std::collections::BTreeSet::new();
        for w in &self.wheel {
            let prefix = format!("uv-{}-", self.version);
            let fine = hex(&w.sha256)
                && hex(&w.binary_sha256)
                && w.filename.starts_with(&prefix)
                && w.filename.ends_with(".whl")
                && !w.filename.contains(['/', '\\'])
                && w.size > 0
                && w.binary_size > 0
                && w.binary_size <= MAX_BINARY
                && SYSTEMS.contains(&w.os.as_str())
                && seen.insert((w.os.clone(), w.arch.clone()));
            if !fine {
                return Err(format!(
                    "wheel {:?} for {:?} on {:?}: a sha256 is 64 lower-case hex digits, the file is uv-{}-*.whl, sizes are positive, the os is one of {SYSTEMS:?}, one wheel per os and arch",
                    w.filename, w.arch, w.os, self.version
                ));
            }
        }
        Ok(())
    }

    /// The wheel for `arch` on the system cudaup runs on.
    pub fn wheel_for(&self, arch: &str) -> Option<&UvWheel> {
        self.wheel_for_os(std::env::consts::OS, arch)
    }

    /// The wheel for `arch` on `os`.
    pub fn wheel_for_os(&self, os: &str, arch: &str) -> Option<&UvWheel> {
        self.wheel.iter().find(|w| w.os == os && w.arch == arch)
    }

    /// The member of `wheel` that is the binary.
    pub fn member(&self, wheel: &UvWheel) -> String {
        format!("uv-{}.data/scripts/{}", self.version, wheel.binary())
    }
}

impl UvWheel {
    /// The binary's file name: `uv.exe` in a Windows wheel, `uv` elsewhere.
    pub fn binary(&self) -> &'static str {
        if self.os == "windows" {
            "uv.exe"
        } else {
            "uv"
        }
    }
}

#[cfg(test)]
mod tests;
