//! The stamps' rules: what stat alone proves, what it leaves to a hash, and the clock's tick.

use std::time::{Duration, SystemTime};

use super::*;

/// A tree of one header, written `age` ago (in the past: unpacked earlier) or in the future.
fn tree_at(mtime: SystemTime) -> (tempfile::TempDir, Vec<Entry>) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.h");
    fs_err::write(&p, "#define A 1\n").unwrap();
    fs_err::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let entries = vec![Entry {
        path: "a.h".into(),
        size: 12,
        sha256: Some(crate::fetch::sha256_file(&p).unwrap()),
        kind: EntryKind::File { executable: false },
    }];
    (dir, entries)
}

fn old_tree() -> (tempfile::TempDir, Vec<Entry>) {
    tree_at(SystemTime::now() - Duration::from_secs(3600))
}

/// Writes the same number of bytes, different ones, in place (through every hard link).
fn edit_in_place(p: &Path) {
    use std::io::Write;
    let mut f = fs_err::File::options().write(true).open(p).unwrap();
    f.write_all(b"#define A 2\n").unwrap();
}

#[cfg(unix)] // stat-only verdicts: Windows takes no stamps, every file is hashed
#[test]
fn a_stamped_tree_verifies_by_stat_alone() {
    let (dir, entries) = old_tree();
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    assert_eq!(stamps.len(), 1);
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Intact { rehashed: 0 }
    );
}

/// The prefix deleted with `rm -rf` and another one linked: neither moves a stamp, so a
/// re-install into a fresh prefix hashes nothing.
#[cfg(unix)] // stat-only verdicts: Windows takes no stamps, every file is hashed
#[test]
fn links_and_unlinks_cost_no_hash() {
    let (dir, entries) = old_tree();
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let linked = prefix.path().join("a.h");
    std::fs::hard_link(dir.path().join("a.h"), &linked).unwrap();
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Intact { rehashed: 0 }
    );
    fs_err::remove_file(&linked).unwrap();
    drop(prefix);
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Intact { rehashed: 0 }
    );
}

/// Any ordinary write through a prefix's hard link moves the mtime: caught without a hash.
#[test]
fn an_in_place_edit_of_the_same_size_is_caught() {
    let (dir, entries) = old_tree();
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    edit_in_place(&dir.path().join("a.h"));
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Damaged("a.h".into())
    );
}

/// A file written just now, stamped, then edited at once: the edit may land in the same clock
/// tick and leave the mtime as it was, so a stamp that young is not kept; the edit is caught
/// either way.
#[test]
fn an_edit_in_the_tick_of_the_stamps_is_caught() {
    for _ in 0..50 {
        let (dir, entries) = tree_at(SystemTime::now());
        let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
        edit_in_place(&dir.path().join("a.h"));
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Damaged("a.h".into())
        );
    }
}

/// An mtime not older than the clock (here: in the future) is never stamped, so the file is
/// hashed at each reuse and never trusted by stat.
#[test]
fn a_file_not_older_than_the_clock_is_hashed_each_time() {
    let (dir, entries) = tree_at(SystemTime::now() + Duration::from_secs(3600));
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    assert!(stamps.is_empty());
    for _ in 0..2 {
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Intact { rehashed: 1 }
        );
        assert!(stamps.is_empty());
    }
}

/// A cached file replaced by another one with the size and mtime copied, while the old inode
/// lives on in a prefix (so the new file cannot reuse its number): hashed.
#[test]
fn a_replaced_file_is_hashed_whatever_its_mtime() {
    let (dir, entries) = old_tree();
    let p = dir.path().join("a.h");
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    let mtime = fs_err::metadata(&p).unwrap().modified().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    std::fs::hard_link(&p, prefix.path().join("a.h")).unwrap();
    fs_err::remove_file(&p).unwrap();
    fs_err::write(&p, "#define A 2\n").unwrap();
    fs_err::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Damaged("a.h".into())
    );
}

/// What stat cannot see: the bytes changed, the size kept and the mtime put back on purpose.
/// The stamps say intact; `repair`'s full hash (`drop_damaged_cache`, and the receipt check of
/// every prefix file) is what catches it (tests/it/hostile_small.rs).
#[cfg(unix)] // stat-only verdicts: Windows takes no stamps, every file is hashed
#[test]
fn a_forged_mtime_is_left_to_the_full_hash() {
    let (dir, entries) = old_tree();
    let p = dir.path().join("a.h");
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    let mtime = fs_err::metadata(&p).unwrap().modified().unwrap();
    edit_in_place(&p);
    fs_err::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Intact { rehashed: 0 }
    );
    assert_ne!(
        crate::fetch::sha256_file(&p).unwrap(),
        *entries[0].sha256.as_ref().unwrap()
    );
}

/// Stamps lost, cut short by a crash, or written by the older rule (with the ctime): none are
/// trusted; every file is hashed once, then stamped again.
#[test]
fn unreadable_or_older_stamps_mean_one_hash_of_each_file() {
    let (dir, entries) = old_tree();
    let good = Stamps::fresh(dir.path(), &entries).unwrap();
    let old_rule = serde_json::json!({
        "a.h": {"ino": 1, "size": 12, "mtime_ns": 0, "ctime_ns": 0}
    });
    let full = serde_json::to_vec(&good).unwrap();
    for bytes in [
        serde_json::to_vec(&old_rule).unwrap(),
        full[..full.len() / 2].to_vec(),
        Vec::new(),
    ] {
        fs_err::write(dir.path().join(STAMPS_FILE), &bytes).unwrap();
        let mut read = Stamps::read(dir.path());
        assert!(read.is_empty());
        assert_eq!(
            read.verify(dir.path(), &entries),
            Verdict::Intact { rehashed: 1 }
        );
        assert_eq!(read, good);
    }
    good.write(dir.path()).unwrap();
    assert_eq!(Stamps::read(dir.path()), good);
}

/// Issue 43: on Windows no stamp is taken, so every reuse hashes every file, and an edit that
/// puts the size and mtime back (which stat alone misses on Linux) is caught there.
#[cfg(not(unix))]
#[test]
fn windows_takes_no_stamps_and_hashes_every_file() {
    let (dir, entries) = old_tree();
    let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
    assert!(stamps.is_empty());
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Intact { rehashed: 1 }
    );
    assert!(stamps.is_empty(), "nothing stamped after a hash either");
    let p = dir.path().join("a.h");
    let before = fs_err::metadata(&p).unwrap().modified().unwrap();
    edit_in_place(&p);
    fs_err::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(before)
        .unwrap();
    assert_eq!(
        stamps.verify(dir.path(), &entries),
        Verdict::Damaged("a.h".into())
    );
}

/// A tree whose files were written a moment ago (the usual case: stamped right after unpacking)
/// is stamped whole: `fresh` waits for the clock's next tick instead of leaving the newest files
/// to be hashed again on the first reuse.
#[test]
#[cfg(unix)] // stat-only verdicts: Windows takes no stamps, every file is hashed
fn a_tree_written_just_now_is_stamped_whole() {
    for _ in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.h");
        fs_err::write(&p, "#define A 1\n").unwrap();
        let entries = vec![Entry {
            path: "a.h".into(),
            size: 12,
            sha256: Some(crate::fetch::sha256_file(&p).unwrap()),
            kind: EntryKind::File { executable: false },
        }];
        let mut stamps = Stamps::fresh(dir.path(), &entries).unwrap();
        assert_eq!(stamps.len(), 1);
        assert_eq!(
            stamps.verify(dir.path(), &entries),
            Verdict::Intact { rehashed: 0 }
        );
    }
}
