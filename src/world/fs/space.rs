//! Free space on the filesystem that holds a path (`statvfs`, the bytes an unprivileged user may
//! still write: `f_bavail · f_frsize`; on Windows `GetDiskFreeSpaceExW`'s bytes free to the
//! caller, quotas counted), which filesystem that is (`st_dev`, on Windows the volume serial
//! number, so two paths on one filesystem are counted once), and whether an I/O error means the
//! disk is full. A path not made
//! yet is measured at its nearest existing ancestor, where it will be made.
//!
//! Tests cannot fill a real disk without root; `CUDAUP_TEST_FREE_BYTES` ([`arm`]) makes every
//! filesystem report that many free bytes, read once at start-up like the crash checkpoints.

use std::io;
#[cfg(unix)]
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static FREE: OnceLock<Option<u64>> = OnceLock::new();

/// Test hook: every filesystem reports `free` bytes free (set once, at start-up, from
/// `CUDAUP_TEST_FREE_BYTES`; a value that is not a number is ignored).
pub fn arm(free: Option<&str>) {
    let _ = FREE.set(free.and_then(|v| v.trim().parse().ok()));
}

/// One filesystem as a path sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Space {
    /// The directory measured (the path itself, or its nearest existing ancestor).
    pub at: PathBuf,
    /// The filesystem's device number: two paths with the same one share their free space.
    pub device: u64,
    /// Bytes an unprivileged process may still write there.
    pub free: u64,
}

/// The filesystem `path` is on (or will be on, once made).
pub fn space(path: &Path) -> io::Result<Space> {
    let at = path
        .ancestors()
        .find(|d| !d.as_os_str().is_empty() && d.symlink_metadata().is_ok())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let device = device(&at)?;
    let free = match FREE.get().copied().flatten() {
        Some(armed) => armed,
        None => free(&at)?,
    };
    Ok(Space { at, device, free })
}

#[cfg(unix)]
fn device(at: &Path) -> io::Result<u64> {
    Ok(fs_err::metadata(at)?.dev())
}

#[cfg(unix)]
fn free(at: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(at).map_err(|e| {
        io::Error::new(
            io::Error::from(e).kind(),
            format!("statvfs {}: {e}", at.display()),
        )
    })?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// The volume serial number of what `at` leads to (followed, as `metadata` follows on Linux).
#[cfg(windows)]
fn device(at: &Path) -> io::Result<u64> {
    use std::os::windows::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS)
        .open(at)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", at.display())))?;
    Ok(super::windows::identity(&file)?.volume)
}

#[cfg(windows)]
fn free(at: &Path) -> io::Result<u64> {
    fs4::available_space(at).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("GetDiskFreeSpaceExW {}: {e}", at.display()),
        )
    })
}

/// Whether `e` says the filesystem has no room left: full (`ENOSPC`), over a quota (`EDQUOT`),
/// or past the process's file-size limit (`EFBIG`, `ulimit -f`).
pub fn is_full(e: &io::Error) -> bool {
    use io::ErrorKind::{FileTooLarge, QuotaExceeded, StorageFull};
    matches!(e.kind(), StorageFull | QuotaExceeded | FileTooLarge)
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<io::Error>())
            .is_some_and(is_full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_not_made_yet_is_measured_where_it_will_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let here = space(dir.path()).unwrap();
        let later = space(&dir.path().join("not/made/yet")).unwrap();
        assert_eq!(later.at, dir.path());
        assert_eq!(later.device, here.device);
        assert!(here.free > 0, "{here:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_full_disk_a_quota_and_a_file_size_limit_are_full_and_nothing_else_is() {
        let full = io::Error::from_raw_os_error(rustix::io::Errno::NOSPC.raw_os_error());
        assert!(is_full(&full));
        assert!(is_full(&io::Error::from_raw_os_error(
            rustix::io::Errno::DQUOT.raw_os_error()
        )));
        assert!(is_full(&io::Error::from_raw_os_error(
            rustix::io::Errno::FBIG.raw_os_error()
        )));
        // An error carrying another (with the path it happened at) is read through.
        assert!(is_full(&io::Error::other(full)));
        assert!(!is_full(&io::Error::from(io::ErrorKind::PermissionDenied)));
    }

    /// Windows' own codes for the same three: ERROR_DISK_FULL (112), ERROR_DISK_QUOTA_EXCEEDED
    /// (1295), ERROR_FILE_TOO_LARGE (223).
    #[cfg(windows)]
    #[test]
    fn windows_full_quota_and_too_large_are_full_and_nothing_else_is() {
        for code in [112, 1295, 223] {
            assert!(is_full(&io::Error::from_raw_os_error(code)), "{code}");
        }
        // ERROR_ACCESS_DENIED.
        assert!(!is_full(&io::Error::from_raw_os_error(5)));
    }
}
