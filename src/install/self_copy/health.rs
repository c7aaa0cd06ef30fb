//! How the installed copy compares with its receipt and the running binary: for `doctor`
//! ([`health`]) and `cudaup --version` ([`whereabouts`]).

use std::io;
use std::path::{Path, PathBuf};

use super::{cargo_managed, inspect, target, Found, Running, SelfReceipt};
use crate::world::process::Process;

/// How the installed copy compares with the receipt and the running binary, for `doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Nothing to report.
    Fine,
    /// The receipt names a copy that is gone.
    Missing {
        /// Where it was.
        path: PathBuf,
        /// The version it was.
        version: String,
    },
    /// The file there is not the copy cudaup wrote (edited, or replaced by something else).
    Changed {
        /// Where it is.
        path: PathBuf,
        /// Why it is not cudaup's.
        why: String,
    },
    /// A copy cudaup wrote, but not this binary.
    Stale {
        /// Where it is.
        path: PathBuf,
        /// Its sha256.
        sha256: String,
        /// Its version, when the receipt records it.
        version: Option<String>,
        /// The running binary.
        running: PathBuf,
        /// Its size.
        running_size: u64,
    },
    /// cudaup installed a stack here but no copy of itself (an older cudaup did the install).
    NotInstalled {
        /// Where the copy would go.
        path: PathBuf,
    },
    /// The running binary is cargo's, and an earlier copy of cudaup's would shadow it.
    ShadowsCargo {
        /// The copy.
        path: PathBuf,
        /// The binary cargo manages.
        cargo: PathBuf,
    },
}

/// Compares the installed copy with its receipt and the running binary. `stack_here`: cudaup's
/// receipts name something it installed (a toolkit, a venv, an rc line).
pub fn health(process: &Process, home: &Path, stack_here: bool) -> io::Result<Health> {
    let running = Running::of(process);
    let cargo = running
        .as_ref()
        .and_then(|r| cargo_managed(process, r.path()));
    let target = target(home);
    let receipt = SelfReceipt::read(home);
    let found = inspect(home, running.as_ref())?;
    Ok(match (found, cargo) {
        (Found::Absent, Some(_)) => Health::Fine,
        (Found::Absent, None) => match receipt {
            Some(r) => Health::Missing {
                path: target,
                version: r.version,
            },
            None if stack_here && running.is_some() => Health::NotInstalled { path: target },
            None => Health::Fine,
        },
        (Found::Running, _) => Health::Fine,
        (Found::Foreign(why), _) => match receipt {
            // A file of the user's where cudaup never put one is theirs to keep; one that took
            // the place of cudaup's copy is worth a word.
            Some(_) => Health::Changed { path: target, why },
            None => Health::Fine,
        },
        (Found::Ours(_), Some(cargo)) => Health::ShadowsCargo {
            path: target,
            cargo,
        },
        (Found::Ours(copy), None) if copy.current => Health::Fine,
        (Found::Ours(copy), None) => match &running {
            Some(r) => Health::Stale {
                path: target,
                sha256: copy.sha256,
                version: copy.version,
                running: r.path().to_owned(),
                running_size: r.size()?,
            },
            None => Health::Fine,
        },
    })
}

/// Where the running binary stands, for `cudaup --version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whereabouts {
    /// The OS did not say which binary runs.
    Unknown,
    /// The running binary is the installed copy.
    Installed(PathBuf),
    /// `cargo install` put the running binary there and manages it.
    Cargo(PathBuf),
    /// Elsewhere (a build directory, `cargo run`), with what the installed copy is.
    Elsewhere {
        /// The running binary.
        running: PathBuf,
        /// The installed copy's path.
        copy: PathBuf,
        /// What is there.
        found: Found,
    },
}

/// Where the running binary stands against the installed copy. Quick: a copy whose receipt
/// stamp matches is not hashed, and the comparison with the running binary stops at the sizes
/// when they differ.
pub fn whereabouts(process: &Process, home: &Path) -> Whereabouts {
    let Some(running) = Running::of(process) else {
        return Whereabouts::Unknown;
    };
    if let Some(cargo) = cargo_managed(process, running.path()) {
        return Whereabouts::Cargo(cargo);
    }
    let copy = target(home);
    if running.is(&copy) {
        return Whereabouts::Installed(copy);
    }
    let found = inspect(home, Some(&running))
        .unwrap_or_else(|e| Found::Foreign(format!("it cannot be read: {e}")));
    Whereabouts::Elsewhere {
        running: running.path().to_owned(),
        copy,
        found,
    }
}
