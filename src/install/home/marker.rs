//! The home marker (`$CUDAUP_HOME/.cudaup-home`): a directory is cudaup's home only when it says
//! so. cudaup writes the marker when it first makes a home (or first writes into a directory),
//! recording what was already there, and adopts a home an older cudaup made (one holding its
//! receipts). `uninstall` refuses a directory without it, and never removes an entry that was
//! there before cudaup came.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Home;

/// What the marker holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HomeMarker {
    /// Format version.
    pub schema_version: u32,
    /// Who wrote it (`cudaup`), so a file of someone else's by this name does not pass.
    pub made_by: String,
    /// The entries that were in the directory before cudaup first wrote into it: never
    /// cudaup's, whatever their names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preexisting: Vec<String>,
    /// Whether the home was made by an older cudaup and adopted (it held cudaup's receipts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adopted: bool,
}

/// Why a directory is not taken for cudaup's home.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAHome {
    /// Nothing marks it as cudaup's.
    #[error("{}: not a cudaup home — it has no {} marker (cudaup writes one in every home it makes) and no receipts of cudaup; nothing in it is cudaup's to remove", .0.display(), super::MARKER_FILE)]
    Unmarked(PathBuf),
    /// Something else stands at the marker's name.
    #[error("{}: not cudaup's home marker ({why}); nothing in {} is removed", .path.display(), .path.parent().unwrap_or(path).display())]
    Foreign {
        /// The marker's path.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// What [`HomeMarker::find`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The directory does not exist, or holds nothing (its lock aside).
    Empty,
    /// A marked home (or one adopted now: it holds cudaup's receipts).
    Marked(HomeMarker),
}

impl HomeMarker {
    /// The marker of a home cudaup makes now, with what was already in the directory.
    fn new(preexisting: Vec<String>, adopted: bool) -> HomeMarker {
        HomeMarker {
            schema_version: 1,
            made_by: "cudaup".into(),
            preexisting,
            adopted,
        }
    }

    /// Reads the marker of `home`: `Ok(None)` when there is none.
    pub fn read(home: &Home) -> Result<Option<HomeMarker>, NotAHome> {
        let path = home.marker();
        let foreign = |why: String| NotAHome::Foreign {
            path: path.clone(),
            why,
        };
        match fs_err::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(foreign(e.to_string())),
            Ok(m) if !m.is_file() => return Err(foreign("not a regular file".into())),
            Ok(m) if m.len() > 1 << 20 => return Err(foreign("too large".into())),
            Ok(_) => {}
        }
        let bytes = fs_err::read(&path).map_err(|e| foreign(e.to_string()))?;
        let marker: HomeMarker =
            serde_json::from_slice(&bytes).map_err(|e| foreign(e.to_string()))?;
        if marker.made_by != "cudaup" {
            return Err(foreign("not written by cudaup".into()));
        }
        Ok(Some(marker))
    }

    /// What `home` is for uninstall: empty, marked (or adoptable: it holds cudaup's receipts,
    /// so an older cudaup made it), or not cudaup's.
    pub fn find(home: &Home) -> Result<Found, NotAHome> {
        if let Some(marker) = Self::read(home)? {
            return Ok(Found::Marked(marker));
        }
        if others(home).is_empty() {
            return Ok(Found::Empty);
        }
        if holds_receipts(home) {
            return Ok(Found::Marked(HomeMarker::new(Vec::new(), true)));
        }
        Err(NotAHome::Unmarked(home.root().to_owned()))
    }

    /// Marks `home` as cudaup's before a command writes into it (under the home's lock): a
    /// directory cudaup makes now, or one of an older cudaup, gets a marker naming nothing as
    /// preexisting; any other directory one naming everything already in it.
    pub fn claim(home: &Home) -> Result<HomeMarker, ClaimError> {
        Self::claim_new(home).map(|(marker, _)| marker)
    }

    /// [`HomeMarker::claim`], also saying whether the marker was written now.
    pub(super) fn claim_new(home: &Home) -> Result<(HomeMarker, bool), ClaimError> {
        if let Some(marker) = Self::read(home)? {
            return Ok((marker, false));
        }
        let marker = if holds_receipts(home) {
            HomeMarker::new(Vec::new(), true)
        } else {
            HomeMarker::new(others(home), false)
        };
        marker.write(home)?;
        Ok((marker, true))
    }

    /// Takes back a marker written by this command when the command left nothing in the home
    /// beyond what was there before it: a refused or empty run leaves no trace.
    pub(super) fn unclaim_if_unused(home: &Home, marker: &HomeMarker) {
        if marker.adopted {
            return;
        }
        // A failed first install leaves `receipts/` empty once its journal and intent are
        // gone: a folder this command made is no trace worth keeping (remove_dir keeps one
        // that holds anything).
        let receipts = home.receipts();
        if !marker.preexisting(&receipts) {
            let _ = fs_err::remove_dir(&receipts);
        }
        if others(home) == marker.preexisting {
            let _ = fs_err::remove_file(home.marker());
        }
    }

    /// Writes it whole.
    pub fn write(&self, home: &Home) -> std::io::Result<()> {
        use crate::world::fs::{write_atomic, Durability, Temp};
        fs_err::create_dir_all(home.root())?;
        let bytes = serde_json::to_vec_pretty(self).expect("the marker serialises");
        write_atomic(&home.marker(), &bytes, Temp::Fixed, Durability::Fsync)
    }

    /// Whether the top-level entry `name` was there before cudaup (never cudaup's to remove).
    pub fn preexisting(&self, path: &Path) -> bool {
        path.file_name()
            .is_some_and(|n| self.preexisting.iter().any(|p| n == p.as_str()))
    }
}

/// The home could not be marked.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Something not cudaup's stands at the marker's name.
    #[error(transparent)]
    Foreign(#[from] NotAHome),
    /// Writing the marker failed.
    #[error("could not mark the home: {0}")]
    Io(#[from] std::io::Error),
}

/// The names in `home` other than its lock and marker (and their temporaries), sorted.
fn others(home: &Home) -> Vec<String> {
    let ours = [home.lock_path(), home.marker()];
    let mut names: Vec<String> = fs_err::read_dir(home.root())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let p = e.path();
            !ours.contains(&p)
                && !ours
                    .iter()
                    .any(|o| crate::world::fs::temporary(o, crate::world::fs::Temp::Fixed) == p)
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whether `home` holds receipts only cudaup writes: a toolkit or venv receipt, a journal, the
/// shell receipt with a hook, or the receipt of cudaup's own copy.
fn holds_receipts(home: &Home) -> bool {
    let r = crate::install::receipts::Receipts::load(home.root());
    !r.toolkits.is_empty()
        || !r.venvs.is_empty()
        || !r.pending.is_empty()
        || !r.shell.hooks.is_empty()
        || crate::install::self_copy::receipt_path(home.root()).is_file()
        || home.container_receipt().is_file()
}
