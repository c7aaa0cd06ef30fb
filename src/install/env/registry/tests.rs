//! The user's environment set and put back, against an in-memory registry: byte for byte when
//! nothing changed since, converging (cudaup's part out, the user's kept, and said) when the user
//! changed a value after the install.

use super::*;
use crate::shell::windows::MemStore;

const BIN: &str = r"C:\Users\u\AppData\Local\cudaup\bin";
const TK: &str = r"C:\Users\u\AppData\Local\cudaup\toolkits\cuda-13.0.2";

fn wanted_for(prefix: &str, cuda: &str) -> Wanted {
    wanted(Some((Path::new(prefix), cuda)), Some(Path::new(BIN)))
}

fn user_store() -> MemStore {
    let mut m = MemStore::default();
    // A REG_SZ Path with a %VAR% entry and a trailing `;`, and another release's variable.
    m.set(
        "Path",
        &RegValue::string(REG_SZ, r"%USERPROFILE%\bin;C:\tools;"),
    )
    .unwrap();
    m.set("CUDA_PATH_V12_8", &RegValue::string(REG_SZ, r"C:\cuda12"))
        .unwrap();
    m
}

fn text(m: &MemStore, name: &str) -> Option<String> {
    m.get(name).unwrap().and_then(|v| v.text())
}

#[test]
fn the_names_and_entries_are_nvidias() {
    assert_eq!(versioned_name("13.0.2").as_deref(), Some("CUDA_PATH_V13_0"));
    assert_eq!(versioned_name("13.5").as_deref(), Some("CUDA_PATH_V13_5"));
    assert_eq!(versioned_name("13"), None);
    let w = wanted_for(TK, "13.0.2");
    assert_eq!(w.vars[0], ("CUDA_PATH".to_owned(), TK.to_owned()));
    assert_eq!(w.vars[1].0, "CUDA_PATH_V13_0");
    assert_eq!(w.path.len(), 3);
    assert!(w.path[0] == BIN && w.path[1].ends_with("bin") && w.path[2].ends_with("x64"));
}

#[test]
fn install_then_uninstall_puts_every_value_back_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let original = user_store();
    let mut m = original.clone();
    let (changed, left) = apply(&mut m, home.path(), &wanted_for(TK, "13.0.2")).unwrap();
    assert_eq!(changed, ["CUDA_PATH", "CUDA_PATH_V13_0", "Path"]);
    assert!(left.is_empty());
    let path = m.get("Path").unwrap().unwrap();
    assert_eq!(path.kind, REG_SZ, "the Path keeps its type");
    let ours = wanted_for(TK, "13.0.2").path.join(";");
    assert_eq!(
        path.text().unwrap(),
        format!(r"{ours};%USERPROFILE%\bin;C:\tools;")
    );
    assert_eq!(text(&m, "CUDA_PATH").as_deref(), Some(TK));
    assert_eq!(text(&m, "CUDA_PATH_V13_0").as_deref(), Some(TK));
    // Again: nothing to change.
    let (changed, _) = apply(&mut m, home.path(), &wanted_for(TK, "13.0.2")).unwrap();
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(RegistryReceipt::read(home.path()).values.len(), 3);
    let left = revert(&mut m, home.path()).unwrap();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(m, original);
    assert!(!crate::install::home::Home::at(home.path())
        .registry_receipt()
        .parent()
        .unwrap()
        .exists());
}

#[test]
fn a_missing_path_is_created_expandable_and_removed_again() {
    let home = tempfile::tempdir().unwrap();
    let mut m = MemStore::default();
    apply(&mut m, home.path(), &wanted(None, Some(Path::new(BIN)))).unwrap();
    let path = m.get("Path").unwrap().unwrap();
    assert_eq!(
        (path.kind, path.text().as_deref()),
        (REG_EXPAND_SZ, Some(BIN))
    );
    assert_eq!(m.get("CUDA_PATH").unwrap(), None);
    revert(&mut m, home.path()).unwrap();
    assert_eq!(m, MemStore::default());
}

#[test]
fn values_the_user_changed_since_are_not_clobbered() {
    let home = tempfile::tempdir().unwrap();
    let mut m = user_store();
    apply(&mut m, home.path(), &wanted_for(TK, "13.0.2")).unwrap();
    // The user adds an entry to Path, points CUDA_PATH elsewhere and deletes CUDA_PATH_V13_0.
    let path = text(&m, "Path").unwrap();
    m.set(
        "Path",
        &RegValue::string(REG_SZ, &format!(r"{path};D:\mine")),
    )
    .unwrap();
    m.set("CUDA_PATH", &RegValue::string(REG_SZ, r"D:\cuda"))
        .unwrap();
    m.remove("CUDA_PATH_V13_0").unwrap();
    let left = revert(&mut m, home.path()).unwrap();
    let names: Vec<&str> = left.iter().map(|l| l.name.as_str()).collect();
    // CUDA_PATH_V13_0 is as it was before cudaup (absent): nothing to say about it.
    assert_eq!(names, ["Path", "CUDA_PATH"]);
    assert!(left[0].why.contains("only cudaup's entries"), "{left:?}");
    assert!(left[1].why.contains("left as it is"), "{left:?}");
    assert_eq!(
        text(&m, "Path").as_deref(),
        Some(r"%USERPROFILE%\bin;C:\tools;;D:\mine")
    );
    assert_eq!(text(&m, "CUDA_PATH").as_deref(), Some(r"D:\cuda"));
    assert_eq!(m.get("CUDA_PATH_V13_0").unwrap(), None);
    assert!(RegistryReceipt::read(home.path()).values.is_empty());
    // Uninstall again: nothing more to do.
    let before = m.clone();
    assert!(revert(&mut m, home.path()).unwrap().is_empty());
    assert_eq!(m, before);
}

#[test]
fn a_newer_release_replaces_the_older_ones_values_and_uninstall_still_restores_the_first() {
    let home = tempfile::tempdir().unwrap();
    let original = user_store();
    let mut m = original.clone();
    apply(&mut m, home.path(), &wanted_for(TK, "13.0.2")).unwrap();
    let tk2 = r"C:\Users\u\AppData\Local\cudaup\toolkits\cuda-13.5.0";
    let (changed, _) = apply(&mut m, home.path(), &wanted_for(tk2, "13.5.0")).unwrap();
    assert!(
        changed.contains(&"CUDA_PATH_V13_0".to_owned()),
        "{changed:?}"
    );
    assert_eq!(m.get("CUDA_PATH_V13_0").unwrap(), None);
    assert_eq!(text(&m, "CUDA_PATH_V13_5").as_deref(), Some(tk2));
    let path = text(&m, "Path").unwrap();
    assert!(
        !path.contains("13.0.2") && path.contains("13.5.0"),
        "{path}"
    );
    revert(&mut m, home.path()).unwrap();
    assert_eq!(m, original);
}

#[test]
fn a_path_that_is_not_a_string_is_left_alone_and_said() {
    let home = tempfile::tempdir().unwrap();
    let mut m = MemStore::default();
    let odd = RegValue {
        kind: 3,
        data: vec![1, 2, 3],
    };
    m.set("Path", &odd).unwrap();
    let (_, left) = apply(&mut m, home.path(), &wanted(None, Some(Path::new(BIN)))).unwrap();
    assert!(left[0].why.contains("not a string"), "{left:?}");
    assert_eq!(m.get("Path").unwrap(), Some(odd));
}

/// A store whose writes fail after `ok` of them: a run killed mid-way.
struct Failing {
    inner: MemStore,
    ok: usize,
}

impl EnvStore for Failing {
    fn get(&self, name: &str) -> Result<Option<RegValue>, ShellError> {
        self.inner.get(name)
    }
    fn set(&mut self, name: &str, value: &RegValue) -> Result<(), ShellError> {
        if self.ok == 0 {
            return Err(ShellError::Registry("killed".into()));
        }
        self.ok -= 1;
        self.inner.set(name, value)
    }
    fn remove(&mut self, name: &str) -> Result<(), ShellError> {
        self.inner.remove(name)
    }
}

#[test]
fn a_write_that_never_happened_is_recorded_first_and_undone_to_nothing() {
    for ok in 0..3 {
        let home = tempfile::tempdir().unwrap();
        let original = user_store();
        let mut f = Failing {
            inner: original.clone(),
            ok,
        };
        assert!(apply(&mut f, home.path(), &wanted_for(TK, "13.0.2")).is_err());
        assert_eq!(RegistryReceipt::read(home.path()).values.len(), ok + 1);
        let mut m = f.inner;
        assert!(revert(&mut m, home.path()).unwrap().is_empty());
        assert_eq!(m, original, "killed after {ok} writes");
    }
}
