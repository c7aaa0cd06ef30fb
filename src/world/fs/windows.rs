//! The Windows half of cudaup's careful file opens: a name opened without following a reparse
//! point (a symbolic link or a junction is opened as itself, never as what it points at), a
//! directory held open so it can be neither renamed nor removed while cudaup works beneath it,
//! and a file's identity (volume serial number and file index, the `st_dev`/`st_ino` of
//! Windows). Everything goes through std's safe `OpenOptionsExt` and `winapi-util`'s safe
//! `GetFileInformationByHandle`, so the crate stays free of `unsafe`.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
    FILE_SHARE_READ, FILE_SHARE_WRITE,
};

/// `options` set to open the name itself: a reparse point is opened as the link it is, and a
/// directory can be opened at all (`FILE_FLAG_BACKUP_SEMANTICS`, which needs no privilege for
/// an open that asks for no backup rights).
pub fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
}

/// Whether `meta` (of a name opened with [`no_follow`], or from `symlink_metadata`) is a reparse
/// point: a symbolic link, a junction, or anything else a filter driver redirects.
pub fn is_reparse_point(meta: &Metadata) -> bool {
    meta.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 || meta.file_type().is_symlink()
}

/// A file's identity: its volume's serial number and its index on that volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// The volume serial number (the `st_dev` of Windows).
    pub volume: u64,
    /// The file index on that volume (the `st_ino` of Windows).
    pub index: u64,
    /// How many names (hard links) the file has.
    pub links: u64,
}

/// The identity of the open `file`.
pub fn identity(file: &File) -> io::Result<Identity> {
    let info = winapi_util::file::information(file)?;
    Ok(Identity {
        volume: info.volume_serial_number(),
        index: info.file_index(),
        links: info.number_of_links(),
    })
}

/// The identity of what stands at `path` itself (a link's own, never its target's).
pub fn identity_of(path: &Path) -> io::Result<Identity> {
    let file = no_follow(OpenOptions::new().access_mode(0)).open(path)?;
    identity(&file)
}

/// Opens the directory at `path` (its last name not followed) and holds it: shared for reading
/// and writing but not for deletion, so while the handle lives nobody can rename or remove it,
/// and a name beneath it reaches what lies in this very directory. `Ok(None)` when nothing is
/// there; `InvalidInput` when a reparse point or a file stands there.
pub fn hold_dir(path: &Path) -> io::Result<Option<File>> {
    let dir = match no_follow(
        OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE),
    )
    .open(path)
    {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = dir.metadata()?;
    if is_reparse_point(&meta) || !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: a link, a junction or a file stands there, not a directory",
                path.display()
            ),
        ));
    }
    Ok(Some(dir))
}
