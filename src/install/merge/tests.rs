//! The merged-tree rules, on trees built in memory and written to a temporary staging dir.

use std::path::PathBuf;
// Used by the tests of Unix links and staging writes only.
#[cfg(unix)]
use std::path::Path;
#[cfg(unix)]
use std::sync::atomic::AtomicBool;

use super::Merged;
use crate::fetch::{Artifact, Location};
use crate::install::{Item, Shape, Unpacked};
use crate::unpack::{Entry, EntryKind};

fn item(component: &str) -> Item {
    Item {
        component: component.into(),
        version: "1.0".into(),
        key: component.into(),
        title: component.into(),
        artifact: Artifact {
            name: component.into(),
            location: Location::parse("/m/x.tar.xz").unwrap(),
            sha256: "0".repeat(64),
            size: None,
            max: None,
        },
        shape: Shape::RedistArchive,
    }
}

fn file(path: &str, sha: &str) -> Entry {
    Entry {
        path: path.into(),
        size: 1,
        sha256: Some(sha.repeat(64)),
        kind: EntryKind::File { executable: false },
    }
}

fn link(path: &str, target: &str) -> Entry {
    Entry {
        path: path.into(),
        size: 0,
        sha256: None,
        kind: EntryKind::Symlink {
            target: target.into(),
        },
    }
}

fn dir(path: &str) -> Entry {
    Entry {
        path: path.into(),
        size: 0,
        sha256: None,
        kind: EntryKind::Dir,
    }
}

fn tree(entries: Vec<Entry>) -> Unpacked {
    Unpacked {
        dir: PathBuf::from("/nonexistent-cache"),
        entries,
    }
}

fn build(a: Vec<Entry>, b: Vec<Entry>) -> Result<(), String> {
    let (ia, ib) = (item("comp_a"), item("comp_b"));
    let trees = vec![(&ia, tree(a)), (&ib, tree(b))];
    Merged::build(&trees, Some("x86_64"))
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn the_cross_archive_escape_is_refused_in_either_order() {
    let a = || vec![link("include/x", ".")];
    let b = || {
        vec![
            link("include/x/x/x/y", "../../../.."),
            file("include/y/owned", "a"),
        ]
    };
    let err = build(a(), b()).unwrap_err();
    assert!(err.contains("comp_a 1.0 + comp_b 1.0"), "{err}");
    assert!(err.contains("written through that link"), "{err}");
    let err = build(b(), a()).unwrap_err();
    assert!(
        err.contains("a directory in comp_a 1.0 but a symlink in comp_b"),
        "{err}"
    );
}

#[test]
fn a_file_in_one_archive_and_a_directory_in_another_is_a_clear_refusal() {
    let err = build(
        vec![file("include/x", "a")],
        vec![file("include/x/y.h", "b")],
    )
    .unwrap_err();
    assert!(err.contains("is a file in comp_a"), "{err}");
    let err = build(vec![dir("lib64/x")], vec![file("lib64/x", "b")]).unwrap_err();
    assert!(
        err.contains("a directory in comp_a 1.0 but a file in comp_b 1.0"),
        "{err}"
    );
}

#[test]
fn links_are_resolved_against_the_merged_tree() {
    // Each fine alone; `up` followed through `x -> ..` climbs out.
    let err = build(
        vec![link("a/b/x", "..")],
        vec![link("a/b/up", "x/../../..")],
    )
    .unwrap_err();
    assert!(err.contains("leads out of the prefix"), "{err}");
    // Entries read back from a tampered cache index get no more trust than an archive.
    let err = build(vec![link("lib/l", "../../etc")], vec![]).unwrap_err();
    assert!(err.contains("leads out of the prefix"), "{err}");
    let err = build(vec![link("l", "/etc/passwd")], vec![]).unwrap_err();
    assert!(err.contains("absolute"), "{err}");
    let err = build(vec![file("../evil", "a")], vec![]).unwrap_err();
    assert!(err.contains("plain names"), "{err}");
    // A loop is refused, not followed forever.
    let err = build(vec![link("a", "b")], vec![link("b", "a/c")]).unwrap_err();
    assert!(err.contains("levels of symlinks"), "{err}");
    // Ordinary chains are fine.
    build(
        vec![
            file("lib64/libcudart.so.13.0.96", "a"),
            link("lib64/libcudart.so.13", "libcudart.so.13.0.96"),
        ],
        vec![link("lib64/libcudart.so", "libcudart.so.13")],
    )
    .unwrap();
}

#[test]
fn reserved_names_and_disagreements() {
    let err = build(vec![file(".cudaup-receipt.json", "a")], vec![]).unwrap_err();
    assert!(err.contains("reserves"), "{err}");
    let err = build(
        vec![file("include/a.h", "a")],
        vec![file("include/a.h", "b")],
    )
    .unwrap_err();
    assert!(err.contains("with different contents"), "{err}");
    // The same file in two archives is fine.
    build(
        vec![file("include/a.h", "a")],
        vec![file("include/a.h", "a")],
    )
    .unwrap();
}

#[cfg(unix)] // compat links are Unix symlinks, not made on Windows yet
#[test]
fn compat_links_never_go_through_an_archive_link() {
    let ia = item("comp_a");
    let cache = tempfile::tempdir().unwrap();
    fs_err::create_dir_all(cache.path().join("include")).unwrap();
    fs_err::write(cache.path().join("include/a.h"), "a").unwrap();
    // `targets -> .` would turn targets/x86_64-linux/include -> ../../include into a link
    // one level above the prefix.
    let mut t = tree(vec![link("targets", "."), file("include/a.h", "a")]);
    t.dir = cache.path().to_owned();
    let trees = vec![(&ia, t)];
    let merged = Merged::build(&trees, Some("x86_64")).unwrap();
    let staging = tempfile::tempdir().unwrap();
    let files = merged
        .write(staging.path(), &AtomicBool::new(false))
        .unwrap();
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(paths, [Path::new("include/a.h"), Path::new("targets")]);
    assert!(!staging.path().join("x86_64-linux").exists());
}

#[cfg(unix)] // a Unix symlink planted in staging
#[test]
fn writing_never_lands_on_an_existing_path() {
    let ia = item("comp_a");
    let cache = tempfile::tempdir().unwrap();
    fs_err::write(cache.path().join("a.h"), "a").unwrap();
    let mut t = tree(vec![file("a.h", "a")]);
    t.dir = cache.path().to_owned();
    let trees = vec![(&ia, t)];
    let merged = Merged::build(&trees, Some("x86_64")).unwrap();
    let staging = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs_err::write(outside.path().join("victim"), "precious").unwrap();
    std::os::unix::fs::symlink(outside.path().join("victim"), staging.path().join("a.h")).unwrap();
    assert!(merged
        .write(staging.path(), &AtomicBool::new(false))
        .is_err());
    assert_eq!(
        fs_err::read_to_string(outside.path().join("victim")).unwrap(),
        "precious"
    );
}
