//! `$CUDAUP_HOME/reboot-pending.json`: written after a driver install, so that the next run can
//! tell whether the machine has rebooted since (the kernel's boot id changed) and continue.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::detect::Root;

use super::DriverStepError;

/// The marker's file name under `$CUDAUP_HOME`.
pub const MARKER_FILE: &str = "reboot-pending.json";

/// The kernel's random id of the current boot (a new one at every boot).
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// What the marker records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Marker {
    /// The driver version installed.
    pub driver: String,
    /// Why a reboot is needed, for the user.
    pub reason: String,
    /// The boot id when the driver was installed; `None` when it could not be read (then a
    /// reboot cannot be told apart and the marker stays until removed).
    pub since: Option<String>,
}

fn boot_id(root: &Root) -> Option<String> {
    root.read(BOOT_ID_PATH)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn marker_error(path: &Path, e: impl std::fmt::Display) -> DriverStepError {
    DriverStepError::Marker {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Writes the marker for `driver` (atomically: a temporary file renamed into place) and
/// returns it.
pub fn write_reboot_marker(
    home: &Path,
    root: &Root,
    driver: &str,
    reason: &str,
) -> Result<Marker, DriverStepError> {
    let marker = Marker {
        driver: driver.to_owned(),
        reason: reason.to_owned(),
        since: boot_id(root),
    };
    let path = super::marker_path(home);
    fs_err::create_dir_all(home).map_err(|e| marker_error(&path, e))?;
    let mut json = serde_json::to_string_pretty(&marker).map_err(|e| marker_error(&path, e))?;
    json.push('\n');
    use crate::world::fs::{write_atomic, Durability, Temp};
    write_atomic(&path, json.as_bytes(), Temp::Unique, Durability::Fsync)
        .map_err(|e| marker_error(&path, e))?;
    Ok(marker)
}

/// The marker, whatever the boot; `None` when there is none or it is unreadable.
pub fn read_marker(home: &Path) -> Option<Marker> {
    let text = fs_err::read_to_string(super::marker_path(home)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The marker while the reboot it asks for has not happened yet (same boot id, or a boot id
/// that cannot be compared); `None` when there is no marker or the machine has rebooted.
pub fn reboot_pending(home: &Path, root: &Root) -> Option<Marker> {
    let marker = read_marker(home)?;
    match (&marker.since, boot_id(root)) {
        (Some(then), Some(now)) if *then != now => None,
        _ => Some(marker),
    }
}

/// Removes the marker when the machine has rebooted since it was written. `Ok(true)`: it was
/// there and is gone (the caller continues after the reboot); `Ok(false)`: no marker, or no
/// reboot yet (or none that can be told).
pub fn clear_if_rebooted(home: &Path, root: &Root) -> Result<bool, DriverStepError> {
    let Some(marker) = read_marker(home) else {
        return Ok(false);
    };
    let rebooted =
        matches!((&marker.since, boot_id(root)), (Some(then), Some(now)) if *then != now);
    if !rebooted {
        return Ok(false);
    }
    let path = super::marker_path(home);
    match fs_err::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(marker_error(&path, e)),
    }
}
