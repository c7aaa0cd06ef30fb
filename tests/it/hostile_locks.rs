//! Issue 33, finding 5: what a folder others can write may hold at a lock's name. A link at the
//! home's lock or beside a prefix (`/opt/.cuda.lock`) must never make cudaup write through it, a
//! FIFO must not hang `--no-wait`, and a refused foreign prefix leaves no lock file beside it.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::hostile::*;

/// A file someone else owns, its bytes, and a link to it planted at `at`.
fn plant_link(sb: &Sandbox, at: &Path) -> std::collections::BTreeMap<std::path::PathBuf, String> {
    fs_err::create_dir_all(at.parent().unwrap()).unwrap();
    symlink(sb.canary().join("victim"), at).unwrap();
    snapshot(&sb.canary())
}

#[test]
fn a_link_at_the_homes_lock_is_refused_and_its_target_untouched() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let lock = sb.cudaup_home().join(".cudaup.lock");
    let before = plant_link(&sb, &lock);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(snapshot(&sb.canary()), before, "the link's target changed");
    assert!(!sb.prefix().exists(), "nothing was installed");
    assert!(fs_err::symlink_metadata(&lock).unwrap().is_symlink());
}

#[test]
fn a_link_beside_the_prefix_is_refused_and_its_target_untouched() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let lock = sb.prefix().with_file_name(".cuda.lock");
    let before = plant_link(&sb, &lock);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert!(run.stderr.contains(".cuda.lock"), "{}", run.stderr);
    assert_eq!(snapshot(&sb.canary()), before, "the link's target changed");
    assert!(!sb.prefix().exists(), "nothing was installed");
}

#[test]
fn a_fifo_at_the_homes_lock_does_not_hang_no_wait() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    fs_err::create_dir_all(sb.cudaup_home()).unwrap();
    let lock = sb.cudaup_home().join(".cudaup.lock");
    let status = std::process::Command::new("mkfifo")
        .arg(&lock)
        .status()
        .unwrap();
    assert!(status.success());
    let mut args = vec!["--no-wait".to_owned()];
    args.extend(sb.install_args(&["--mirror", &m.arg()], Some(&sb.prefix())));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    // The run itself must end: a watchdog writes into the FIFO if it is still going after a
    // minute, which unblocks a reader, so a regression fails here instead of hanging the suite.
    let started = Instant::now();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let (done, lock) = (done.clone(), lock.clone());
        std::thread::spawn(move || {
            while started.elapsed() < Duration::from_secs(60) {
                if done.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = fs_err::OpenOptions::new().write(true).open(&lock);
        })
    };
    let run = sb.run(&refs);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watchdog.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "--no-wait hung on a FIFO"
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("a FIFO"), "{}", run.stderr);
    assert!(!sb.prefix().exists());
}

#[test]
fn a_refused_foreign_prefix_gets_no_lock_file_beside_it() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    // A directory of the user's, with files cudaup did not make, where the prefix would go.
    let foreign = sb.canary().join("sub");
    let parent_before = snapshot(sb.canary().parent().unwrap());
    let run = sb.install(&["--mirror", &m.arg()], Some(&foreign));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("was not installed by cudaup"),
        "{}",
        run.stderr
    );
    // Nothing beside it either: no `.sub.lock`, no staging directory.
    let after = snapshot(sb.canary().parent().unwrap());
    let added: Vec<_> = after
        .keys()
        .filter(|k| !parent_before.contains_key(*k) && !k.starts_with("empty-bin"))
        .collect();
    assert!(
        added.is_empty(),
        "made beside the foreign prefix: {added:?}"
    );
    sb.assert_canary("a refused foreign prefix");
}
