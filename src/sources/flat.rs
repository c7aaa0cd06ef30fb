//! A flat folder of wheels (what `pip download -d DIR` leaves) read as an index: every `*.whl`
//! directly in the folder is a file of the project its name says. A folder states no hashes, so
//! the files of the project asked for are hashed here; a local folder is trusted as the user's
//! own, like any other local mirror.

use std::path::Path;

use crate::fetch::Location;

use super::pypi::{normalize, IndexFile};

/// The wheels directly in `dir`, sorted by name; only those of `project` when given, hashed
/// when `hash` is set. A folder that cannot be read lists nothing.
pub fn list_dir(dir: &Path, project: Option<&str>, hash: bool) -> Vec<IndexFile> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let want = project.map(normalize);
    let mut out: Vec<IndexFile> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let filename = e.file_name().to_str()?.to_owned();
            let stem = filename.strip_suffix(".whl")?;
            let name = normalize(stem.split('-').next()?);
            if want.as_ref().is_some_and(|w| *w != name) {
                return None;
            }
            let path = e.path();
            Some(IndexFile {
                sha256: hash
                    .then(|| crate::fetch::sha256_file(&path).ok())
                    .flatten(),
                size: e.metadata().ok().map(|m| m.len()),
                ..IndexFile::plain(filename, Location::File(path))
            })
        })
        .collect();
    out.sort_by(|a, b| a.filename.cmp(&b.filename));
    out
}

/// Whether `dir` is a flat folder of wheels for `project` rather than a PEP 503 tree: it has
/// no `<project>/index.html` but holds the project's wheels itself.
pub fn is_flat_for(dir: &Path, project: &str) -> bool {
    !dir.join(normalize(project)).join("index.html").is_file()
        && !list_dir(dir, Some(project), false).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_wheels_is_an_index() {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.whl",
            "nvidia_cuda_runtime-13.0.48-py3-none-manylinux2014_x86_64.whl",
            "filelock-3.20.0-py3-none-any.whl",
            "notes.txt",
        ] {
            fs_err::write(dir.path().join(f), f).unwrap();
        }
        fs_err::create_dir(dir.path().join("sub.whl")).unwrap();
        let files = list_dir(dir.path(), Some("Nvidia_Cuda.Runtime"), true);
        assert_eq!(files.len(), 2);
        assert_eq!(
            files[1].filename,
            "nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.whl"
        );
        assert_eq!(
            files[1].sha256.as_deref(),
            Some(
                crate::fetch::sha256_file(&dir.path().join(&files[1].filename))
                    .unwrap()
                    .as_str()
            )
        );
        assert_eq!(list_dir(dir.path(), None, false).len(), 3);
        assert!(is_flat_for(dir.path(), "filelock"));
        assert!(!is_flat_for(dir.path(), "torch"));
    }
}
