//! The ownership rules on real files: a copy cudaup wrote is replaced or removed, anything else at
//! the path never is, and every state a crash can leave converges.

use super::*;
use crate::world::process::Process;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A home, and "binaries" (any bytes will do: nothing here runs them).
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("cudaup")
    }

    fn binary(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.dir.path().join("build").join(name);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(&path, bytes).unwrap();
        path
    }

    fn process(&self, exe: &Path) -> Process {
        let mut p = Process::with_vars(
            [("HOME", self.dir.path().display().to_string())],
            self.dir.path(),
        );
        p.set_exe(exe);
        p
    }

    fn installed(&self) -> Vec<u8> {
        fs_err::read(target(&self.home())).unwrap()
    }
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(unix)] // inode numbers: std has no file index on Windows
#[test]
fn a_first_copy_lands_executable_with_a_receipt_and_a_second_run_changes_nothing() {
    let w = World::new();
    let exe = w.binary("cudaup", b"build one");
    let done = ensure(&w.process(&exe), &w.home()).unwrap();
    assert_eq!(done.action, Action::Installed);
    assert!(done.changed() && done.in_home());
    assert_eq!(w.installed(), b"build one");
    let receipt = SelfReceipt::read(&w.home()).unwrap();
    assert_eq!(receipt.sha256, sha(b"build one"));
    assert_eq!((receipt.size, receipt.replacing), (9, None));
    assert_eq!(receipt.version, VERSION);
    assert_eq!(receipt.source, exe);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs_err::metadata(target(&w.home()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    let inode = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        fs_err::metadata(p).unwrap().ino()
    };
    let before = inode(&target(&w.home()));
    let again = ensure(&w.process(&exe), &w.home()).unwrap();
    assert_eq!(again.action, Action::Unchanged);
    assert!(!again.changed());
    assert_eq!(inode(&target(&w.home())), before, "not rewritten");
    // Nothing but the copy in bin/: no temporary left.
    let names: Vec<_> = fs_err::read_dir(bin_dir(&w.home()))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("cudaup")]);
}

#[test]
fn another_build_replaces_the_copy_in_place() {
    let w = World::new();
    let old = w.binary("old/cudaup", b"build one");
    let new = w.binary("new/cudaup", b"build two, longer");
    ensure(&w.process(&old), &w.home()).unwrap();
    let done = ensure(&w.process(&new), &w.home()).unwrap();
    assert_eq!(done.action, Action::Replaced);
    assert_eq!(done.previous_version.as_deref(), Some(VERSION));
    assert_eq!(done.path, target(&w.home()));
    assert_eq!(w.installed(), b"build two, longer");
    let receipt = SelfReceipt::read(&w.home()).unwrap();
    assert_eq!(receipt.sha256, sha(b"build two, longer"));
    assert_eq!(receipt.replacing, None);
    // And back.
    let back = ensure(&w.process(&old), &w.home()).unwrap();
    assert_eq!(back.action, Action::Replaced);
    assert_eq!(w.installed(), b"build one");
}

#[test]
fn a_file_cudaup_did_not_write_is_never_overwritten() {
    let w = World::new();
    let exe = w.binary("cudaup", b"build one");
    let target = target(&w.home());
    fs_err::create_dir_all(target.parent().unwrap()).unwrap();
    fs_err::write(&target, b"#!/bin/sh\necho my own cudaup\n").unwrap();
    let err = ensure(&w.process(&exe), &w.home()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SelfCopyError::Foreign { .. }), "{text}");
    assert!(text.contains("is not a copy cudaup installed"), "{text}");
    assert!(text.contains("no receipt of cudaup's names it"), "{text}");
    assert!(err
        .hint()
        .contains(&format!("mv {0} {0}.old", target.display())));
    assert!(plan(&w.process(&exe), &w.home()).is_err());
    assert_eq!(
        fs_err::read(&target).unwrap(),
        b"#!/bin/sh\necho my own cudaup\n"
    );
    assert!(SelfReceipt::read(&w.home()).is_none());

    // A copy cudaup wrote that someone edited since is not cudaup's any more either.
    fs_err::remove_file(&target).unwrap();
    ensure(&w.process(&exe), &w.home()).unwrap();
    fs_err::write(&target, b"patched by hand").unwrap();
    let other = w.binary("other/cudaup", b"build two");
    let err = ensure(&w.process(&other), &w.home()).unwrap_err();
    assert!(
        err.to_string().contains("is not the copy cudaup recorded"),
        "{err}"
    );
    assert_eq!(fs_err::read(&target).unwrap(), b"patched by hand");
    // Nor is uninstall allowed to take it.
    assert!(matches!(remove(&w.home()).unwrap(), Removed::Kept(..)));
    assert_eq!(fs_err::read(&target).unwrap(), b"patched by hand");
}

#[cfg(unix)]
#[test]
fn a_symlink_or_a_directory_there_is_the_users() {
    let w = World::new();
    let exe = w.binary("cudaup", b"build one");
    let target = target(&w.home());
    fs_err::create_dir_all(target.parent().unwrap()).unwrap();
    // Even a link to this very binary: cudaup writes plain files only.
    std::os::unix::fs::symlink(&exe, &target).unwrap();
    let err = ensure(&w.process(&exe), &w.home()).unwrap_err();
    assert!(err.to_string().contains("it is a symlink"), "{err}");
    assert!(target.is_symlink());
    fs_err::remove_file(&target).unwrap();
    fs_err::create_dir(&target).unwrap();
    let err = ensure(&w.process(&exe), &w.home()).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[cfg(unix)] // lists the copy as `cudaup`; on Windows it is `cudaup.exe`
#[test]
fn every_state_a_crash_leaves_converges() {
    let w = World::new();
    let one = w.binary("one/cudaup", b"build one");
    let two = w.binary("two/cudaup", b"build two");
    let three = w.binary("three/cudaup", b"build three");
    let home = w.home();
    let target = target(&home);
    let receipt = |sha256: &[u8], replacing: Option<&[u8]>| SelfReceipt {
        schema_version: 1,
        path: target.clone(),
        sha256: sha(sha256),
        size: sha256.len() as u64,
        version: VERSION.into(),
        source: one.clone(),
        installed_at: 0,
        replacing: replacing.map(sha),
        stamp: None,
    };
    let fresh = || {
        let _ = fs_err::remove_dir_all(&home);
        fs_err::create_dir_all(target.parent().unwrap()).unwrap();
    };

    // Killed after the receipt named the new copy and before the rename: the old copy is still
    // there, vouched for as `replacing` — a third build may replace it.
    fresh();
    fs_err::write(&target, b"build one").unwrap();
    receipt(b"build two", Some(b"build one"))
        .write(&home)
        .unwrap();
    assert_eq!(
        ensure(&w.process(&three), &home).unwrap().action,
        Action::Replaced
    );
    assert_eq!(w.installed(), b"build three");

    // Killed after the rename, before the receipt dropped `replacing`: the new copy is there.
    fresh();
    fs_err::write(&target, b"build two").unwrap();
    receipt(b"build two", Some(b"build one"))
        .write(&home)
        .unwrap();
    assert_eq!(
        ensure(&w.process(&two), &home).unwrap().action,
        Action::Unchanged
    );
    assert_eq!(
        SelfReceipt::read(&home).unwrap().replacing,
        None,
        "rewritten"
    );
    fs_err::write(&target, b"build two").unwrap();
    receipt(b"build two", Some(b"build one"))
        .write(&home)
        .unwrap();
    assert_eq!(
        ensure(&w.process(&three), &home).unwrap().action,
        Action::Replaced
    );

    // The copy landed and its receipt never did (or was lost): the bytes are the running
    // binary's, so the copy is cudaup's, and the receipt is written.
    fresh();
    fs_err::write(&target, b"build two").unwrap();
    let done = ensure(&w.process(&two), &home).unwrap();
    assert_eq!(done.action, Action::Unchanged);
    assert_eq!(SelfReceipt::read(&home).unwrap().sha256, sha(b"build two"));
    // …but without a receipt another build cannot know it, and refuses.
    fs_err::remove_file(receipt_path(&home)).unwrap();
    assert!(ensure(&w.process(&three), &home).is_err());
    assert_eq!(w.installed(), b"build two");

    // Killed while writing the temporary file: it is swept, the copy made.
    fresh();
    fs_err::write(bin_dir(&home).join(".cudaup-AbC123.tmp"), b"build").unwrap();
    fs_err::write(bin_dir(&home).join("canary"), b"mine").unwrap();
    assert_eq!(
        ensure(&w.process(&one), &home).unwrap().action,
        Action::Installed
    );
    let mut names: Vec<_> = fs_err::read_dir(bin_dir(&home))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["canary", "cudaup"]);

    // A receipt that names a copy never renamed into place: the copy is simply made.
    fresh();
    receipt(b"build two", None).write(&home).unwrap();
    assert_eq!(
        ensure(&w.process(&one), &home).unwrap().action,
        Action::Installed
    );
}

#[test]
fn the_installed_copy_running_is_recorded_not_copied() {
    let w = World::new();
    let exe = w.binary("cudaup", b"build one");
    ensure(&w.process(&exe), &w.home()).unwrap();
    fs_err::remove_file(receipt_path(&w.home())).unwrap();
    let copy = target(&w.home());
    let done = ensure(&w.process(&copy), &w.home()).unwrap();
    assert_eq!(done.action, Action::Running);
    assert_eq!(
        SelfReceipt::read(&w.home()).unwrap().sha256,
        sha(b"build one")
    );
    assert_eq!(
        whereabouts(&w.process(&copy), &w.home()),
        Whereabouts::Installed(copy)
    );
}

#[test]
fn remove_takes_the_copy_the_receipt_and_an_empty_bin_and_nothing_else() {
    let w = World::new();
    let exe = w.binary("cudaup", b"build one");
    let home = w.home();
    ensure(&w.process(&exe), &home).unwrap();
    fs_err::write(bin_dir(&home).join("canary"), b"mine").unwrap();
    assert_eq!(remove(&home).unwrap(), Removed::Removed(target(&home)));
    assert!(!target(&home).exists());
    assert!(!receipt_path(&home).exists());
    assert_eq!(
        fs_err::read(bin_dir(&home).join("canary")).unwrap(),
        b"mine"
    );
    assert_eq!(remove(&home).unwrap(), Removed::Nothing);

    fs_err::remove_file(bin_dir(&home).join("canary")).unwrap();
    ensure(&w.process(&exe), &home).unwrap();
    remove(&home).unwrap();
    assert!(!bin_dir(&home).exists(), "bin/ was cudaup's and is empty");
    // No receipt: a file there is not cudaup's to remove.
    fs_err::create_dir_all(bin_dir(&home)).unwrap();
    fs_err::write(target(&home), b"build one").unwrap();
    assert!(matches!(remove(&home).unwrap(), Removed::Kept(..)));
    assert!(target(&home).exists());
}

#[test]
fn a_binary_cargo_installed_is_cargos_and_an_old_copy_steps_aside() {
    let w = World::new();
    let cargo_home = w.dir.path().join(".cargo");
    let exe = w.binary("cudaup", b"build one");
    // First a copy, made by a `cargo run` build.
    ensure(&w.process(&exe), &w.home()).unwrap();
    let cargo_bin = cargo_home.join("bin/cudaup");
    fs_err::create_dir_all(cargo_bin.parent().unwrap()).unwrap();
    fs_err::write(&cargo_bin, b"build two").unwrap();
    // Not listed by cargo: an ordinary binary that happens to sit there.
    assert_eq!(cargo_managed(&w.process(&cargo_bin), &cargo_bin), None);
    fs_err::write(
        cargo_home.join(".crates2.json"),
        r#"{"installs":{"cudaup 0.1.0 (path+file:///src/cudaup)":{"version_req":null,"bins":["cudaup"],"features":[],"all_features":false,"no_default_features":false,"profile":"release","target":"x86_64-unknown-linux-gnu","rustc":"rustc 1.89.0"}}}"#,
    )
    .unwrap();
    let process = w.process(&cargo_bin);
    assert_eq!(cargo_managed(&process, &cargo_bin), Some(cargo_bin.clone()));
    assert_eq!(
        health(&process, &w.home(), true).unwrap(),
        Health::ShadowsCargo {
            path: target(&w.home()),
            cargo: cargo_bin.clone()
        }
    );
    let done = ensure(&process, &w.home()).unwrap();
    assert_eq!(done.action, Action::CargoManaged);
    assert_eq!(done.removed, Some(target(&w.home())));
    assert!(!done.in_home());
    assert!(!target(&w.home()).exists());
    assert_eq!(
        whereabouts(&process, &w.home()),
        Whereabouts::Cargo(cargo_bin.clone())
    );
    assert_eq!(health(&process, &w.home(), true).unwrap(), Health::Fine);

    // The older record format, with CARGO_HOME set.
    fs_err::remove_file(cargo_home.join(".crates2.json")).unwrap();
    fs_err::write(
        cargo_home.join(".crates.toml"),
        "[v1]\n\"cudaup 0.1.0 (path+file:///src/cudaup)\" = [\"cudaup\"]\n",
    )
    .unwrap();
    let mut process = w.process(&cargo_bin);
    process.set_var("HOME", "/nonexistent");
    process.set_var("CARGO_HOME", cargo_home.display().to_string());
    assert_eq!(cargo_managed(&process, &cargo_bin), Some(cargo_bin));
}

#[test]
fn health_names_a_missing_changed_stale_or_absent_copy() {
    let w = World::new();
    let home = w.home();
    let one = w.binary("one/cudaup", b"build one");
    let two = w.binary("two/cudaup", b"build two");
    // Nothing installed at all: nothing to say.
    assert_eq!(
        health(&w.process(&one), &home, false).unwrap(),
        Health::Fine
    );
    // A stack, and no copy (an older cudaup installed it).
    assert_eq!(
        health(&w.process(&one), &home, true).unwrap(),
        Health::NotInstalled {
            path: target(&home)
        }
    );
    ensure(&w.process(&one), &home).unwrap();
    assert_eq!(health(&w.process(&one), &home, true).unwrap(), Health::Fine);
    match health(&w.process(&two), &home, true).unwrap() {
        Health::Stale {
            sha256,
            version,
            running_size,
            ..
        } => {
            assert_eq!(sha256, sha(b"build one"));
            assert_eq!(version.as_deref(), Some(VERSION));
            assert_eq!(running_size, 9);
        }
        other => panic!("{other:?}"),
    }
    fs_err::write(target(&home), b"edited").unwrap();
    assert!(matches!(
        health(&w.process(&one), &home, true).unwrap(),
        Health::Changed { .. }
    ));
    fs_err::remove_file(target(&home)).unwrap();
    assert_eq!(
        health(&w.process(&one), &home, true).unwrap(),
        Health::Missing {
            path: target(&home),
            version: VERSION.into()
        }
    );
}

#[test]
fn whereabouts_tell_the_installed_copy_from_another_build() {
    let w = World::new();
    let home = w.home();
    let one = w.binary("one/cudaup", b"build one");
    let two = w.binary("two/cudaup", b"build two");
    match whereabouts(&w.process(&one), &home) {
        Whereabouts::Elsewhere { found, .. } => assert_eq!(found, Found::Absent),
        other => panic!("{other:?}"),
    }
    ensure(&w.process(&one), &home).unwrap();
    match whereabouts(&w.process(&one), &home) {
        Whereabouts::Elsewhere {
            found: Found::Ours(copy),
            ..
        } => assert!(copy.current),
        other => panic!("{other:?}"),
    }
    match whereabouts(&w.process(&two), &home) {
        Whereabouts::Elsewhere {
            found: Found::Ours(copy),
            running,
            ..
        } => {
            assert!(!copy.current);
            assert_eq!(running, two);
        }
        other => panic!("{other:?}"),
    }
    let unknown = Process::with_vars(Vec::<(String, String)>::new(), "/");
    assert_eq!(whereabouts(&unknown, &home), Whereabouts::Unknown);
    assert_eq!(ensure(&unknown, &home).unwrap().action, Action::Unknown);
}

#[cfg(unix)]
#[test]
fn a_matching_stamp_spares_the_rehash_and_any_write_ends_it() {
    let w = World::new();
    let home = w.home();
    let one = w.binary("one/cudaup", b"build one");
    let two = w.binary("two/cudaup", b"build two");
    ensure(&w.process(&one), &home).unwrap();
    let mut receipt = SelfReceipt::read(&home).unwrap();
    assert!(receipt.stamp.is_some());
    // The stamp matches, so the recorded sha256 is taken as the file's (nothing reads it).
    receipt.sha256 = "0".repeat(64);
    receipt.write(&home).unwrap();
    match inspect(&home, None).unwrap() {
        Found::Ours(copy) => assert_eq!(copy.sha256, "0".repeat(64)),
        other => panic!("{other:?}"),
    }
    // The same size, other bytes, written in place: the stamp no longer matches, the file is
    // hashed, and it is nobody's copy but the user's.
    std::thread::sleep(std::time::Duration::from_millis(10));
    fs_err::write(target(&home), b"build 1!!").unwrap();
    assert!(matches!(
        inspect(&home, Some(&Running::new(&two))).unwrap(),
        Found::Foreign(_)
    ));
    assert!(ensure(&w.process(&two), &home).is_err());
    assert_eq!(w.installed(), b"build 1!!");
}

#[test]
fn every_shells_env_script_puts_the_copy_on_path_with_or_without_a_toolkit() {
    use crate::install::receipts::Active;
    use crate::shell::{script, Shell};
    let bin = PathBuf::from("/h/cudaup/bin");
    let alone = Active {
        toolkit: None,
        cudaup_bin: Some(bin.clone()),
    };
    for shell in Shell::ALL {
        let text = script(shell, &alone.spec());
        assert!(text.contains("'/h/cudaup/bin'"), "{shell}:\n{text}");
        assert!(
            !text.contains("CUDA_HOME") && !text.contains("LD_LIBRARY_PATH"),
            "{shell}:\n{text}"
        );
    }
    let both = Active {
        toolkit: Some(PathBuf::from("/opt/cuda")),
        cudaup_bin: Some(bin),
    };
    let mut want = vec![PathBuf::from("/opt/cuda/bin")];
    if cfg!(windows) {
        // CUDA 13's Windows toolkit keeps its DLLs in bin\x64.
        want.push(PathBuf::from("/opt/cuda/bin/x64"));
    }
    want.push(PathBuf::from("/h/cudaup/bin"));
    assert_eq!(both.spec().path, want);
    // An active.json written before cudaup copied itself reads back without the field.
    let old: Active = serde_json::from_str(r#"{"toolkit":"/opt/cuda"}"#).unwrap();
    assert_eq!(old.cudaup_bin, None);
}
