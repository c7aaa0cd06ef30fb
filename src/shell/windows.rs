//! The Windows user PATH (`HKCU\Environment\Path`).
//!
//! Windows has no rc file that every program reads, so the user PATH in the registry is the
//! place (code-anchors convention 14, after rustup's `src/cli/self_update/windows.rs`). The value
//! is edited as a string here, purely; [`read_user_path`] and [`write_user_path`] are the only
//! parts that touch the registry. Never `setx`: it truncates values longer than 1024 characters.

use super::ShellError;

/// The new value of `HKCU\Environment\Path` with `dir` in front, or `None` if `dir` is already
/// listed (compared without regard to case, quotes or a trailing backslash, as Windows does).
///
/// `current` is `None` when the value does not exist. Other entries, including `%VAR%` ones and
/// empty segments, are kept exactly as they were.
pub fn windows_path_add(current: Option<&str>, dir: &str) -> Option<String> {
    let wanted = normalize(dir);
    if wanted.is_empty() {
        return None;
    }
    match current {
        None | Some("") => Some(dir.to_owned()),
        Some(current) if current.split(';').any(|entry| normalize(entry) == wanted) => None,
        Some(current) => Some(format!("{dir};{current}")),
    }
}

/// The value of `HKCU\Environment\Path` with every entry that names `dir` taken out, or `None`
/// if there is none. `Some("")` means nothing is left: delete the value rather than write an
/// empty one.
pub fn windows_path_remove(current: &str, dir: &str) -> Option<String> {
    let wanted = normalize(dir);
    if wanted.is_empty() {
        return None;
    }
    let entries: Vec<&str> = current.split(';').collect();
    let kept: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|entry| normalize(entry) != wanted)
        .collect();
    if kept.len() == entries.len() {
        return None;
    }
    if kept.iter().all(|entry| entry.trim().is_empty()) {
        // Only separators would be left (rustup also drops the `;` it added).
        return Some(String::new());
    }
    Some(kept.join(";"))
}

/// How Windows compares PATH entries: case-insensitive, ignoring surrounding quotes and
/// whitespace and a trailing slash. `%VAR%` is compared as written, not expanded.
fn normalize(entry: &str) -> String {
    let entry = entry.trim();
    let entry = entry
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .unwrap_or(entry);
    entry.trim_end_matches(['\\', '/']).to_lowercase()
}

/// Reads `HKCU\Environment\Path`: `Ok(None)` when the value does not exist.
///
/// This build has no registry access (the crate forbids `unsafe` and carries no registry crate),
/// so it always fails with [`ShellError::Registry`] and a message that tells the user what to do
/// by hand. A registry-backed version must refuse a value that is not `REG_SZ`/`REG_EXPAND_SZ`
/// and leave it alone, as rustup does.
pub fn read_user_path() -> Result<Option<String>, ShellError> {
    Err(ShellError::Registry(no_registry()))
}

/// Writes `HKCU\Environment\Path` as `REG_EXPAND_SZ` (so `%USERPROFILE%` entries keep working;
/// rustup#261), deleting the value when `value` is empty, then broadcasts `WM_SETTINGCHANGE`
/// ("Environment", `SMTO_ABORTIFHUNG`, 5 s) so new windows see it.
///
/// Not available in this build: see [`read_user_path`].
pub fn write_user_path(value: &str) -> Result<(), ShellError> {
    let _ = value;
    Err(ShellError::Registry(no_registry()))
}

#[cfg(windows)]
fn no_registry() -> String {
    "this build of cudaup cannot edit the registry\nhelp: add cudaup's directories to your user \
     Path under Settings > System > About > Advanced system settings > Environment Variables"
        .into()
}

#[cfg(not(windows))]
fn no_registry() -> String {
    "cudaup was not built for Windows".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = r"C:\Users\u\.cudaup\bin";

    #[test]
    fn add_to_missing_or_empty_value() {
        assert_eq!(windows_path_add(None, DIR).as_deref(), Some(DIR));
        assert_eq!(windows_path_add(Some(""), DIR).as_deref(), Some(DIR));
    }

    #[test]
    fn add_prepends_and_keeps_the_rest_verbatim() {
        let current = r"%USERPROFILE%\bin;;C:\Windows\system32;";
        assert_eq!(
            windows_path_add(Some(current), DIR).unwrap(),
            format!(r"{DIR};%USERPROFILE%\bin;;C:\Windows\system32;")
        );
    }

    #[test]
    fn add_finds_the_dir_in_any_spelling() {
        for spelling in [
            DIR,
            r"c:\users\U\.CUDAUP\BIN",
            r"C:\Users\u\.cudaup\bin\",
            r#""C:\Users\u\.cudaup\bin""#,
            r" C:\Users\u\.cudaup\bin ",
        ] {
            let current = format!(r"C:\a;{spelling};C:\b");
            assert_eq!(windows_path_add(Some(&current), DIR), None, "{spelling}");
        }
        // A %VAR% spelling is not expanded, so it does not count.
        assert!(windows_path_add(Some(r"%USERPROFILE%\.cudaup\bin"), DIR).is_some());
        // Nor does a longer path that merely starts the same.
        assert!(windows_path_add(Some(r"C:\Users\u\.cudaup\bin2"), DIR).is_some());
    }

    #[test]
    fn add_of_an_empty_dir_changes_nothing() {
        assert_eq!(windows_path_add(Some(r"C:\a"), ""), None);
        assert_eq!(windows_path_add(None, r"\"), None);
    }

    #[test]
    fn remove_takes_out_every_spelling() {
        let current = format!(r"{DIR};%USERPROFILE%\bin;;c:\users\u\.cudaup\bin\;C:\b");
        assert_eq!(
            windows_path_remove(&current, DIR).as_deref(),
            Some(r"%USERPROFILE%\bin;;C:\b")
        );
    }

    #[test]
    fn remove_of_the_only_entry_deletes_the_value() {
        assert_eq!(windows_path_remove(DIR, DIR).as_deref(), Some(""));
        assert_eq!(
            windows_path_remove(&format!("{DIR};"), DIR).as_deref(),
            Some("")
        );
        assert_eq!(
            windows_path_remove(&format!(";{DIR};"), DIR).as_deref(),
            Some("")
        );
    }

    #[test]
    fn remove_when_absent_changes_nothing() {
        assert_eq!(windows_path_remove(r"C:\a;;C:\b", DIR), None);
        assert_eq!(windows_path_remove("", DIR), None);
    }

    #[test]
    fn add_then_remove_round_trips() {
        for current in [r"C:\a", r"%USERPROFILE%\x;;C:\b;"] {
            let added = windows_path_add(Some(current), DIR).unwrap();
            assert_eq!(windows_path_remove(&added, DIR).as_deref(), Some(current));
        }
        let added = windows_path_add(None, DIR).unwrap();
        assert_eq!(windows_path_remove(&added, DIR).as_deref(), Some(""));
    }

    #[test]
    fn registry_is_not_available_here() {
        assert!(matches!(read_user_path(), Err(ShellError::Registry(_))));
        assert!(matches!(write_user_path("x"), Err(ShellError::Registry(_))));
    }
}
