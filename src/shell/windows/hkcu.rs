//! The registry-backed [`EnvStore`]: a key under `HKEY_CURRENT_USER` (`Environment`, or a scratch
//! key in tests), through Microsoft's `windows-registry` crate. Values are read and written raw,
//! type and bytes, so a value cudaup replaced can be put back exactly.

use windows_registry::{Type, CURRENT_USER};

use super::{EnvStore, RegValue};
use crate::shell::ShellError;

/// `ERROR_FILE_NOT_FOUND` as an HRESULT: the value (or key) is not there.
const NOT_FOUND: i32 = 0x8007_0002_u32 as i32;

/// A key under `HKEY_CURRENT_USER`, opened for reading and writing (no admin needed).
#[derive(Debug)]
pub struct Hkcu {
    key: windows_registry::Key,
    path: String,
}

impl Hkcu {
    /// Opens (creating if need be) `HKCU\<path>`.
    pub fn open(path: &str) -> Result<Hkcu, ShellError> {
        let key = CURRENT_USER
            .create(path)
            .map_err(|e| ShellError::Registry(format!("cannot open HKCU\\{path}: {e}")))?;
        Ok(Hkcu {
            key,
            path: path.to_owned(),
        })
    }

    /// Removes the whole key `HKCU\<path>` (tests' scratch keys).
    pub fn remove_key(path: &str) -> Result<(), ShellError> {
        match CURRENT_USER.remove_tree(path) {
            Err(e) if e.code().0 != NOT_FOUND => Err(ShellError::Registry(format!(
                "cannot remove HKCU\\{path}: {e}"
            ))),
            _ => Ok(()),
        }
    }

    fn failed(&self, what: &str, name: &str, e: impl std::fmt::Display) -> ShellError {
        ShellError::Registry(format!("cannot {what} HKCU\\{}\\{name}: {e}", self.path))
    }
}

impl EnvStore for Hkcu {
    fn get(&self, name: &str) -> Result<Option<RegValue>, ShellError> {
        match self.key.get_value(name) {
            Ok(v) => Ok(Some(RegValue {
                kind: u32::from(v.ty()),
                data: v.to_vec(),
            })),
            Err(e) if e.code().0 == NOT_FOUND => Ok(None),
            Err(e) => Err(self.failed("read", name, e)),
        }
    }

    fn set(&mut self, name: &str, value: &RegValue) -> Result<(), ShellError> {
        // The type as its raw number: the bytes go in exactly as recorded. (`Type::String` would
        // have the crate's debug check refuse a string stored without its terminating NUL,
        // which another program may have written, and which must be put back as it was.)
        // An empty value still needs a real address: an empty Vec's is dangling, which the
        // registry may refuse (ERROR_NOACCESS under Wine).
        const NOTHING: [u8; 2] = [0; 2];
        let data: &[u8] = if value.data.is_empty() {
            &NOTHING[..0]
        } else {
            &value.data
        };
        self.key
            .set_bytes(name, Type::Other(value.kind), data)
            .map_err(|e| self.failed("write", name, e))
    }

    fn remove(&mut self, name: &str) -> Result<(), ShellError> {
        match self.key.remove_value(name) {
            Err(e) if e.code().0 != NOT_FOUND => Err(self.failed("remove", name, e)),
            _ => Ok(()),
        }
    }

    fn announce(&self) {
        super::broadcast::environment_changed();
    }
}

#[cfg(test)]
mod tests;
