//! The Windows user environment (`HKCU\Environment`: `Path`, `CUDA_PATH`, …).
//!
//! Windows has no rc file that every program reads, so the user's environment in the registry
//! is the place (after rustup's `src/cli/self_update/windows.rs`). `Path` is edited as a string
//! here, purely; values are read and written raw ([`RegValue`]) through an [`EnvStore`], whose
//! registry-backed one ([`user_environment`], Windows only) is the only part that touches the
//! registry. Never `setx`: it truncates values longer than 1024 characters.

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

/// A registry value as stored: its type and its bytes (for `REG_SZ` and `REG_EXPAND_SZ`, UTF-16LE
/// with the terminating NUL). Kept raw so that a value cudaup replaced is put back byte for byte,
/// type included.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegValue {
    /// The registry type (`REG_SZ` 1, `REG_EXPAND_SZ` 2, any other kept as read).
    pub kind: u32,
    /// The bytes, in hex.
    #[serde(with = "hex::serde")]
    pub data: Vec<u8>,
}

/// `REG_SZ`: a string used as written.
pub const REG_SZ: u32 = 1;
/// `REG_EXPAND_SZ`: a string whose `%VAR%` parts are expanded when read into an environment.
pub const REG_EXPAND_SZ: u32 = 2;

impl RegValue {
    /// `text` as a value of type `kind` (UTF-16LE with its terminating NUL, as Windows stores it).
    pub fn string(kind: u32, text: &str) -> RegValue {
        let mut data = Vec::with_capacity(2 * text.len() + 2);
        for unit in text.encode_utf16().chain([0]) {
            data.extend_from_slice(&unit.to_le_bytes());
        }
        RegValue { kind, data }
    }

    /// The text of a `REG_SZ` or `REG_EXPAND_SZ` value (trailing NULs dropped); `None` for any
    /// other type, or bytes that are not UTF-16.
    pub fn text(&self) -> Option<String> {
        if self.kind != REG_SZ && self.kind != REG_EXPAND_SZ || !self.data.len().is_multiple_of(2) {
            return None;
        }
        let mut units: Vec<u16> = self
            .data
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        while units.last() == Some(&0) {
            units.pop();
        }
        String::from_utf16(&units).ok()
    }
}

/// The values of one registry key that hold environment variables (`HKCU\Environment`): read,
/// set and removed by name, compared without regard to case as Windows does.
pub trait EnvStore {
    /// The value `name`, or `None` when there is none.
    fn get(&self, name: &str) -> Result<Option<RegValue>, ShellError>;
    /// Sets `name` to `value`, type and bytes as given.
    fn set(&mut self, name: &str, value: &RegValue) -> Result<(), ShellError>;
    /// Removes `name` (nothing when there is none).
    fn remove(&mut self, name: &str) -> Result<(), ShellError>;
    /// Tells running programs that the environment changed (`WM_SETTINGCHANGE`), after writes.
    fn announce(&self) {}
}

#[cfg(windows)]
mod broadcast;
#[cfg(windows)]
mod hkcu;

#[cfg(windows)]
pub use hkcu::Hkcu;

/// The user's environment in the registry (`HKCU\Environment`), where Windows keeps the user's
/// `Path` and variables such as `CUDA_PATH`.
#[cfg(windows)]
pub fn user_environment() -> Result<Hkcu, ShellError> {
    Hkcu::open(r"Environment")
}

/// An [`EnvStore`] in memory (tests, and a dry run of an edit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemStore {
    values: std::collections::BTreeMap<String, (String, RegValue)>,
}

impl MemStore {
    /// The names and values held, in the spelling they were set with.
    pub fn values(&self) -> Vec<(String, RegValue)> {
        self.values.values().cloned().collect()
    }
}

impl EnvStore for MemStore {
    fn get(&self, name: &str) -> Result<Option<RegValue>, ShellError> {
        Ok(self
            .values
            .get(&name.to_lowercase())
            .map(|(_, v)| v.clone()))
    }
    fn set(&mut self, name: &str, value: &RegValue) -> Result<(), ShellError> {
        let key = name.to_lowercase();
        let spelled = self
            .values
            .get(&key)
            .map_or_else(|| name.to_owned(), |(n, _)| n.clone());
        self.values.insert(key, (spelled, value.clone()));
        Ok(())
    }
    fn remove(&mut self, name: &str) -> Result<(), ShellError> {
        self.values.remove(&name.to_lowercase());
        Ok(())
    }
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
    fn string_values_are_utf16_with_their_nul_and_read_back() {
        let v = RegValue::string(REG_EXPAND_SZ, r"%USERPROFILE%\bin;é");
        assert_eq!(&v.data[..4], &[b'%', 0, b'U', 0]);
        assert_eq!(&v.data[v.data.len() - 2..], &[0, 0]);
        assert_eq!(v.text().as_deref(), Some(r"%USERPROFILE%\bin;é"));
        // Other types have no text, nor do odd bytes; a value stored without its NUL reads too.
        assert_eq!(
            RegValue {
                kind: 4,
                data: vec![1, 0, 0, 0]
            }
            .text(),
            None
        );
        assert_eq!(
            RegValue {
                kind: REG_SZ,
                data: vec![b'a']
            }
            .text(),
            None
        );
        assert_eq!(
            RegValue {
                kind: REG_SZ,
                data: vec![b'a', 0]
            }
            .text()
            .as_deref(),
            Some("a")
        );
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<RegValue>(&json).unwrap(), v);
    }

    #[test]
    fn the_memory_store_compares_names_without_case_and_keeps_the_first_spelling() {
        let mut m = MemStore::default();
        m.set("Path", &RegValue::string(REG_SZ, "a")).unwrap();
        m.set("PATH", &RegValue::string(REG_SZ, "b")).unwrap();
        assert_eq!(m.get("path").unwrap().unwrap().text().as_deref(), Some("b"));
        assert_eq!(m.values()[0].0, "Path");
        m.remove("pAtH").unwrap();
        assert_eq!(m.get("Path").unwrap(), None);
    }

    /// `unsafe_code` is `deny` (Cargo.toml): one module, the broadcast, may allow it.
    #[test]
    fn only_the_broadcast_allows_unsafe() {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            for e in fs_err::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if fs_err::read_to_string(&p)
                    .is_ok_and(|t| t.contains(concat!("allow(", "unsafe_code)")))
                {
                    out.push(
                        p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                            .unwrap()
                            .display()
                            .to_string()
                            .replace('\\', "/"),
                    );
                }
            }
        }
        let mut found = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut found,
        );
        assert_eq!(found, ["src/shell/windows/broadcast.rs"]);
    }
}
