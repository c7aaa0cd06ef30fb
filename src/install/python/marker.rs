//! The marker cudaup leaves inside every venv it creates (`<venv>/.cudaup-venv`). A venv
//! receipt alone is not trusted to remove a directory: a receipt can name any folder (edited,
//! fuzzed, or shared over NFS by another machine). Uninstall removes a venv only when the
//! receipt says cudaup created it *and* the venv itself carries this marker naming itself.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The marker's file name inside the venv.
pub const VENV_MARKER: &str = ".cudaup-venv";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Marker {
    made_by: String,
    venv: PathBuf,
}

/// Marks `dir` (a venv cudaup just created) as cudaup's.
pub fn mark(dir: &Path) -> std::io::Result<()> {
    use crate::world::fs::{write_atomic, Durability, Temp};
    let venv = std::path::absolute(dir)?;
    let marker = Marker {
        made_by: "cudaup".into(),
        venv,
    };
    let bytes = serde_json::to_vec_pretty(&marker).expect("the marker serialises");
    write_atomic(
        &dir.join(VENV_MARKER),
        &bytes,
        Temp::Fixed,
        Durability::Fsync,
    )
}

/// Whether `dir` is a real directory (not a link) holding cudaup's marker for itself; the
/// reason it is not, otherwise.
pub fn agrees(dir: &Path) -> Result<(), String> {
    match fs_err::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err("it is a link or a file now, not the venv cudaup created".into()),
        Err(e) => return Err(format!("it cannot be read: {e}")),
    }
    let path = dir.join(VENV_MARKER);
    let why = "it carries no marker of cudaup (every venv cudaup creates has one), so the receipt alone does not prove cudaup made it";
    match fs_err::symlink_metadata(&path) {
        Ok(m) if m.is_file() && m.len() < 1 << 16 => {}
        _ => return Err(why.into()),
    }
    let marker: Marker = fs_err::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(|| why.to_owned())?;
    let here = std::path::absolute(dir).map_err(|e| e.to_string())?;
    if marker.made_by != "cudaup" || marker.venv != here {
        return Err(format!(
            "its cudaup marker names {}, not this folder",
            marker.venv.display()
        ));
    }
    Ok(())
}

/// Whether a venv receipt being written over `previous` must still say cudaup created the
/// venv: a second install into a venv cudaup made does not create it, but it is still
/// cudaup's (the marker inside says so).
pub fn still_created(previous: Option<&super::VenvReceipt>, dir: &Path) -> bool {
    previous.is_some_and(|p| p.created && p.venv == dir) && agrees(dir).is_ok()
}

// Its one test plants a Unix symlink to the venv.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_marked_venv_agrees_and_a_copy_or_a_link_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let venv = dir.path().join("venv");
        fs_err::create_dir(&venv).unwrap();
        assert!(agrees(&venv).is_err(), "unmarked");
        mark(&venv).unwrap();
        assert_eq!(agrees(&venv), Ok(()));
        // The marker copied into another folder names the venv, not that folder.
        let thesis = dir.path().join("thesis");
        fs_err::create_dir(&thesis).unwrap();
        fs_err::copy(venv.join(VENV_MARKER), thesis.join(VENV_MARKER)).unwrap();
        assert!(agrees(&thesis).unwrap_err().contains("names"));
        // A link to the venv is not the venv.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&venv, &link).unwrap();
        assert!(agrees(&link).is_err());
    }
}
