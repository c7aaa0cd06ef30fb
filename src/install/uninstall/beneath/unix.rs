//! Linux and macOS: every path is reached one directory descriptor at a time (`openat` with
//! `O_NOFOLLOW`), so a symlink or file that now stands where cudaup made a directory stops the
//! removal of what lies under it instead of redirecting it outside the prefix.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;

use super::{changed, created_dirs, names, Removed};
use crate::install::receipt::ReceiptFile;

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens `dir` (its last component not followed); `None` when it does not exist, an
/// explanation when it is not a real directory.
pub(in crate::install::uninstall) fn open_dir(dir: &Path) -> Result<Option<OwnedFd>, String> {
    match openat(CWD, dir, dir_flags(), Mode::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT) => Ok(None),
        Err(Errno::LOOP | Errno::NOTDIR) => Err(
            "it is a symlink or a file now, not the directory cudaup installed: nothing is removed through it"
                .into(),
        ),
        Err(e) => Err(format!("cannot open it: {e}")),
    }
}

/// The directory holding `rel`'s last name, walked to from `root` without following links.
enum Parent {
    At(Option<OwnedFd>),
    Gone,
    Kept(String),
}

fn parent_of(root: &OwnedFd, parents: &[&std::ffi::OsStr]) -> io::Result<Parent> {
    let mut dir: Option<OwnedFd> = None;
    for (i, name) in parents.iter().enumerate() {
        let at = dir.as_ref().unwrap_or(root);
        match openat(at, *name, dir_flags(), Mode::empty()) {
            Ok(fd) => dir = Some(fd),
            Err(Errno::NOENT) => return Ok(Parent::Gone),
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let ancestor: PathBuf = parents[..=i].iter().collect();
                return Ok(Parent::Kept(format!(
                    "`{}` is no longer a directory (a symlink or a file stands there): nothing under it is removed",
                    ancestor.display()
                )));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Parent::At(dir))
}

/// Unlinks the receipt's `file` beneath `root` if it is still what cudaup installed there.
pub(in crate::install::uninstall) fn remove_verified(
    root: &OwnedFd,
    file: &ReceiptFile,
) -> io::Result<Removed> {
    let Some(parts) = names(&file.path) else {
        return Ok(Removed::Kept(
            "not a plain relative path in the receipt".into(),
        ));
    };
    let (last, parents) = parts.split_last().expect("names() is never empty");
    let dir = match parent_of(root, parents)? {
        Parent::At(dir) => dir,
        Parent::Gone => return Ok(Removed::Done),
        Parent::Kept(why) => return Ok(Removed::Kept(why)),
    };
    let dir = dir.as_ref().unwrap_or(root);
    if let Some(want) = &file.link {
        match rustix::fs::readlinkat(dir, *last, Vec::new()) {
            Ok(target)
                if Path::new(std::ffi::OsStr::from_bytes(target.as_bytes())) == want.as_path() => {}
            Ok(_) => {
                return Ok(Removed::Kept(
                    "it is no longer the link cudaup made (it points elsewhere)".into(),
                ))
            }
            Err(Errno::NOENT) => return Ok(Removed::Done),
            Err(Errno::INVAL) => {
                return Ok(Removed::Kept(
                    "a file or directory stands where cudaup made a link".into(),
                ))
            }
            Err(e) => return Err(e.into()),
        }
    } else {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match openat(dir, *last, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(Removed::Done),
            Err(Errno::LOOP) => {
                return Ok(Removed::Kept(
                    "a link stands where cudaup installed a file".into(),
                ))
            }
            Err(Errno::ACCESS) => {
                return Ok(Removed::Kept(
                    "it cannot be read, so cudaup cannot tell it is still its file".into(),
                ))
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(why) = changed(std::fs::File::from(fd), file)? {
            return Ok(Removed::Kept(why));
        }
    }
    match unlinkat(dir, *last, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(Removed::Done),
        Err(Errno::ISDIR | Errno::PERM) => Ok(Removed::Kept(
            "a directory stands where cudaup installed a file".into(),
        )),
        Err(e) => Err(e.into()),
    }
}

/// Removes the directories that held the receipt's files, deepest first, each only when empty
/// and still a real directory: a folder the user made (or one cudaup did not list a file in)
/// stays.
pub(in crate::install::uninstall) fn remove_created_dirs(
    root: &OwnedFd,
    files: &[ReceiptFile],
) -> io::Result<()> {
    for d in created_dirs(files) {
        let parts = names(&d).expect("built from plain names");
        let (last, parents) = parts.split_last().expect("not empty");
        if let Parent::At(dir) = parent_of(root, parents)? {
            match unlinkat(dir.as_ref().unwrap_or(root), *last, AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOTEMPTY | Errno::EXIST | Errno::NOENT | Errno::NOTDIR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// Unlinks the prefix's own receipt if it is a regular file (never through a link).
pub(in crate::install::uninstall) fn remove_receipt(root: &OwnedFd) -> io::Result<()> {
    let name = crate::install::receipt::FILE_NAME;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let regular = openat(root, name, flags, Mode::empty())
        .ok()
        .and_then(|fd| std::fs::File::from(fd).metadata().ok())
        .is_some_and(|m| m.is_file());
    if regular {
        match unlinkat(root, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
