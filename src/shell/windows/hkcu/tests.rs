//! The registry-backed store against a scratch key of its own under `HKCU\Software` (never the
//! user's `Environment`): values round-trip raw, type and bytes; a set and put back through
//! [`crate::install::env::registry`] leaves the key as it was; the broadcast returns.

use super::*;
use crate::install::env::registry;
use crate::shell::windows::{REG_EXPAND_SZ, REG_SZ};

struct Scratch(String);

impl Scratch {
    fn new(test: &str) -> Scratch {
        let path = format!(r"Software\cudaup-tests\{test}-{}", std::process::id());
        Hkcu::remove_key(&path).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = Hkcu::remove_key(&self.0);
    }
}

#[test]
fn values_round_trip_raw_with_their_type() {
    let key = Scratch::new("raw");
    let mut store = Hkcu::open(&key.0).unwrap();
    assert_eq!(store.get("Path").unwrap(), None);
    let expand = RegValue::string(REG_EXPAND_SZ, r"%USERPROFILE%\bin;C:\tools");
    store.set("Path", &expand).unwrap();
    assert_eq!(
        store.get("PATH").unwrap(),
        Some(expand),
        "names without case"
    );
    // Bytes as given, even a string without its terminating NUL, or none at all.
    let odd = RegValue {
        kind: REG_SZ,
        data: vec![b'x', 0],
    };
    store.set("CUDA_PATH", &odd).unwrap();
    assert_eq!(store.get("CUDA_PATH").unwrap(), Some(odd));
    let empty = RegValue {
        kind: REG_SZ,
        data: Vec::new(),
    };
    store.set("CUDA_PATH", &empty).unwrap();
    assert_eq!(store.get("CUDA_PATH").unwrap(), Some(empty));
    store.remove("CUDA_PATH").unwrap();
    store.remove("CUDA_PATH").unwrap();
    assert_eq!(store.get("CUDA_PATH").unwrap(), None);
    store.announce();
}

#[test]
fn set_and_put_back_leave_the_key_as_it_was() {
    let key = Scratch::new("apply");
    let home = tempfile::tempdir().unwrap();
    let mut store = Hkcu::open(&key.0).unwrap();
    let path = RegValue::string(REG_SZ, r"C:\tools;");
    store.set("Path", &path).unwrap();
    let prefix = home.path().join("toolkits").join("cuda-13.0.2");
    let wanted = registry::wanted(Some((&prefix, "13.0.2")), None);
    let (changed, left) = registry::apply(&mut store, home.path(), &wanted).unwrap();
    assert_eq!(changed, ["CUDA_PATH", "CUDA_PATH_V13_0", "Path"]);
    assert!(left.is_empty());
    let now = store.get("Path").unwrap().unwrap();
    assert_eq!(now.kind, REG_SZ);
    assert!(now
        .text()
        .unwrap()
        .starts_with(&prefix.join("bin").display().to_string()));
    assert!(registry::revert(&mut store, home.path())
        .unwrap()
        .is_empty());
    assert_eq!(store.get("Path").unwrap(), Some(path));
    assert_eq!(store.get("CUDA_PATH").unwrap(), None);
    assert_eq!(store.get("CUDA_PATH_V13_0").unwrap(), None);
}
