//! The lock helper against what a writable folder can hold at a lock's name: a link to a file
//! cudaup must not touch, a FIFO, a hard link, a file of someone else's bytes.

use super::*;

fn take(path: &Path) -> Result<Taken, LockError> {
    lock_file(path, None::<fn(&str)>)
}

#[test]
fn a_second_taker_is_refused_and_told_who_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".lock");
    let held = take(&path).unwrap().held().unwrap();
    assert!(held.created());
    let me = format!("pid {}", std::process::id());
    match take(&path).unwrap() {
        Taken::Busy { holder } => assert_eq!(holder, me),
        Taken::Held(_) => panic!("taken twice"),
    }
    assert_eq!(fs_err::read_to_string(&path).unwrap(), me);
    drop(held);
    let again = take(&path).unwrap().held().unwrap();
    assert!(!again.created(), "the file was there already");
}

#[test]
fn a_removed_lock_file_is_taken_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".lock");
    take(&path).unwrap().held().unwrap().remove();
    assert!(!path.exists());
    assert!(take(&path).unwrap().held().unwrap().created());
}

#[cfg(unix)] // a Unix symlink (Windows needs privilege for one)
#[test]
fn a_link_at_the_name_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    fs_err::write(&victim, "precious\n").unwrap();
    let path = dir.path().join(".lock");
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let err = take(&path).unwrap_err();
    assert!(matches!(err, LockError::Link { .. }), "{err}");
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(fs_err::read_to_string(&victim).unwrap(), "precious\n");
    // A dangling link is refused too, and nothing is created where it points.
    let dangling = dir.path().join(".dangling.lock");
    std::os::unix::fs::symlink(dir.path().join("made-by-a-link"), &dangling).unwrap();
    assert!(matches!(take(&dangling), Err(LockError::Link { .. })));
    assert!(!dir.path().join("made-by-a-link").exists());
}

#[cfg(unix)] // a FIFO: Windows has none in the file namespace
#[test]
fn a_fifo_at_the_name_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".lock");
    rustix::fs::mkfifoat(rustix::fs::CWD, &path, Mode::from_raw_mode(0o600)).unwrap();
    // Without waiting: a FIFO must neither hang the open nor the read of the holder.
    let err = take(&path).unwrap_err();
    assert!(
        matches!(err, LockError::NotAFile { kind: "a FIFO", .. }),
        "{err}"
    );
}

#[test]
fn a_directory_at_the_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".lock");
    fs_err::create_dir(&path).unwrap();
    assert!(matches!(take(&path), Err(LockError::NotAFile { .. })));
}

#[test]
fn a_file_of_other_bytes_is_never_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".lock");
    fs_err::write(&path, "root:x:0:0::/root:/bin/sh\n").unwrap();
    let err = take(&path).unwrap_err();
    assert!(matches!(err, LockError::Foreign { .. }), "{err}");
    assert!(err.to_string().contains("did not create"), "{err}");
    assert_eq!(
        fs_err::read_to_string(&path).unwrap(),
        "root:x:0:0::/root:/bin/sh\n"
    );
}

#[test]
fn a_hard_link_to_another_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other");
    fs_err::write(&other, "").unwrap();
    let path = dir.path().join(".lock");
    fs_err::hard_link(&other, &path).unwrap();
    assert!(matches!(take(&path), Err(LockError::Foreign { .. })));
}

#[test]
fn an_old_lock_file_of_cudaup_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    for old in ["", "pid 4242", "pid 77\n", "pi"] {
        let path = dir.path().join(".lock");
        fs_err::write(&path, old).unwrap();
        let held = take(&path).unwrap().held().unwrap();
        assert!(!held.created());
        assert_eq!(
            fs_err::read_to_string(&path).unwrap(),
            format!("pid {}", std::process::id())
        );
    }
}
