//! Windows: every directory on the way to a file is opened as itself (a junction or a symbolic
//! link is opened as the link, never followed: `FILE_FLAG_OPEN_REPARSE_POINT`), checked to be a
//! real directory, and held without `FILE_SHARE_DELETE` until the file is removed, so nobody can
//! rename it or swap a junction in for it while cudaup works beneath it. The last name is then
//! removed by `DeleteFileW` or `RemoveDirectoryW`, which remove a link itself, never its
//! target. A junction planted in the prefix therefore never leads a removal outside it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::{changed, created_dirs, names, Removed};
use crate::install::receipt::ReceiptFile;
use crate::world::fs::windows::{hold_dir, is_reparse_point, no_follow};

/// The prefix, held open (so it cannot be renamed or removed) with its path.
pub(in crate::install::uninstall) struct Dir {
    path: PathBuf,
    _held: File,
}

/// Opens and holds `dir` (its last name not followed); `None` when it does not exist, an
/// explanation when it is not a real directory.
pub(in crate::install::uninstall) fn open_dir(dir: &Path) -> Result<Option<Dir>, String> {
    match hold_dir(dir) {
        Ok(Some(held)) => Ok(Some(Dir {
            path: dir.to_owned(),
            _held: held,
        })),
        Ok(None) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Err(
            "it is a link, a junction or a file now, not the directory cudaup installed: nothing is removed through it"
                .into(),
        ),
        Err(e) => Err(format!("cannot open it: {e}")),
    }
}

/// The directory holding a name, every directory from the prefix down to it held open.
enum Parent {
    At { path: PathBuf, _held: Vec<File> },
    Gone,
    Kept(String),
}

fn parent_of(root: &Dir, parents: &[&std::ffi::OsStr]) -> io::Result<Parent> {
    let mut path = root.path.clone();
    let mut held = Vec::with_capacity(parents.len());
    for (i, name) in parents.iter().enumerate() {
        path.push(name);
        match hold_dir(&path) {
            Ok(Some(dir)) => held.push(dir),
            Ok(None) => return Ok(Parent::Gone),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                let ancestor: PathBuf = parents[..=i].iter().collect();
                return Ok(Parent::Kept(format!(
                    "`{}` is no longer a directory (a link, a junction or a file stands there): nothing under it is removed",
                    ancestor.display()
                )));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Parent::At { path, _held: held })
}

/// Removes the receipt's `file` beneath `root` if it is still what cudaup installed there.
pub(in crate::install::uninstall) fn remove_verified(
    root: &Dir,
    file: &ReceiptFile,
) -> io::Result<Removed> {
    let Some(parts) = names(&file.path) else {
        return Ok(Removed::Kept(
            "not a plain relative path in the receipt".into(),
        ));
    };
    let (last, parents) = parts.split_last().expect("names() is never empty");
    let (dir, _held) = match parent_of(root, parents)? {
        Parent::At { path, _held } => (path, _held),
        Parent::Gone => return Ok(Removed::Done),
        Parent::Kept(why) => return Ok(Removed::Kept(why)),
    };
    let path = dir.join(last);
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Removed::Done),
        Err(e) => return Err(e),
    };
    if let Some(want) = &file.link {
        if !is_reparse_point(&meta) {
            return Ok(Removed::Kept(
                "a file or directory stands where cudaup made a link".into(),
            ));
        }
        match std::fs::read_link(&path) {
            Ok(target) if target == *want => {}
            Ok(_) => {
                return Ok(Removed::Kept(
                    "it is no longer the link cudaup made (it points elsewhere)".into(),
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Removed::Done),
            Err(e) => return Err(e),
        }
        // A directory link goes with RemoveDirectoryW, a file link with DeleteFileW; neither
        // touches what the link points at.
        let gone = if meta.is_dir() || meta.file_type().is_symlink_dir() {
            fs_err::remove_dir(&path)
        } else {
            fs_err::remove_file(&path)
        };
        return match gone {
            Ok(()) => Ok(Removed::Done),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Removed::Done),
            Err(e) => Err(e),
        };
    }
    let opened = match no_follow(OpenOptions::new().read(true)).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Removed::Done),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Ok(Removed::Kept(
                "it cannot be read, so cudaup cannot tell it is still its file".into(),
            ))
        }
        Err(e) => return Err(e),
    };
    if is_reparse_point(&opened.metadata()?) {
        return Ok(Removed::Kept(
            "a link or a junction stands where cudaup installed a file".into(),
        ));
    }
    if let Some(why) = changed(opened, file)? {
        return Ok(Removed::Kept(why));
    }
    match fs_err::remove_file(&path) {
        Ok(()) => Ok(Removed::Done),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Removed::Done),
        Err(e) => Err(e),
    }
}

/// Removes the directories that held the receipt's files, deepest first, each only when empty
/// and still a real directory (a junction standing there is left, as a symlink is on Linux).
pub(in crate::install::uninstall) fn remove_created_dirs(
    root: &Dir,
    files: &[ReceiptFile],
) -> io::Result<()> {
    for d in created_dirs(files) {
        let parts = names(&d).expect("built from plain names");
        let (last, parents) = parts.split_last().expect("not empty");
        if let Parent::At { path, _held } = parent_of(root, parents)? {
            let path = path.join(last);
            let real_dir = path
                .symlink_metadata()
                .is_ok_and(|m| m.is_dir() && !is_reparse_point(&m));
            if !real_dir {
                continue;
            }
            match fs_err::remove_dir(&path) {
                Ok(()) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::DirectoryNotEmpty
                            | io::ErrorKind::NotFound
                            | io::ErrorKind::NotADirectory
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
}

/// Removes the prefix's own receipt if it is a regular file (never a link).
pub(in crate::install::uninstall) fn remove_receipt(root: &Dir) -> io::Result<()> {
    let path = root.path.join(crate::install::receipt::FILE_NAME);
    let regular = no_follow(OpenOptions::new().read(true))
        .open(&path)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file() && !is_reparse_point(&m));
    if regular {
        match fs_err::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
