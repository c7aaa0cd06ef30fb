//! Issue 33, findings 1, 2 and 4, end to end: `uninstall` on a directory cudaup never made,
//! and inside a home it made, with the user's files named like cudaup's and files of a toolkit
//! changed since the install.

use crate::hostile::*;

/// `uninstall --home projects` on a folder that merely has cudaup's names in it (a venv called
/// `env`, `logs/`, `active.json`, a `cache/`) removes nothing, and says why.
#[test]
fn uninstall_refuses_a_directory_cudaup_never_made() {
    let sb = Sandbox::new();
    let projects = sb.canary().join("projects");
    for d in [
        "env/bin",
        "logs",
        "cache/pip",
        "manifests.d",
        "toolkits/mine",
    ] {
        fs_err::create_dir_all(projects.join(d)).unwrap();
    }
    fs_err::write(projects.join("env/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    fs_err::write(projects.join("logs/install-1.log"), "mine\n").unwrap();
    fs_err::write(projects.join("active.json"), "{}").unwrap();
    std::os::unix::fs::symlink("manifests.d", projects.join("manifests")).unwrap();
    let before = snapshot(&sb.canary());
    for args in [
        &["uninstall", "--yes"][..],
        &["uninstall", "--yes", "--purge"],
        &["uninstall", "--dry-run", "--purge"],
    ] {
        let run = crate::common::context::run(&mut sb.ctx.command_at(&projects, args));
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("not a cudaup home"), "{}", run.stderr);
        assert!(run.stderr.contains(".cudaup-home"), "{}", run.stderr);
        assert_eq!(
            snapshot(&sb.canary()),
            before,
            "{args:?} changed the folder"
        );
    }
}

/// In a home cudaup made, the user's files with cudaup's names stay, and so does a toolkit
/// file changed since the install; everything else of cudaup's goes.
#[test]
fn uninstall_in_a_marked_home_removes_only_what_cudaup_wrote() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let home = sb.cudaup_home();
    assert!(
        home.join(".cudaup-home").is_file(),
        "the install marked its home"
    );
    fs_err::write(home.join("env.fish"), "set -gx MINE 1\n").unwrap();
    fs_err::create_dir_all(home.join("logs")).unwrap();
    fs_err::write(home.join("logs/notes.txt"), "mine\n").unwrap();
    let header = sb.prefix().join("include/cuda_nvcc.h");
    let edited = [fs_err::read(&header).unwrap(), b"// mine\n".to_vec()].concat();
    fs_err::write(&header, &edited).unwrap();

    let run = sb.run(&["uninstall", "--yes", "--purge"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        fs_err::read(&header).unwrap(),
        edited,
        "the edited header stays"
    );
    assert!(!sb.prefix().join("bin/nvcc").exists());
    assert_eq!(
        fs_err::read_to_string(home.join("env.fish")).unwrap(),
        "set -gx MINE 1\n"
    );
    assert!(home.join("logs/notes.txt").is_file());
    for gone in ["env", "env.ps1", "active.json", "receipts", "cache"] {
        assert!(!home.join(gone).exists(), "{gone} is left");
    }
    assert!(run.stdout.contains("left in place"), "{}", run.stdout);
    assert!(run.stdout.contains("not the env script"), "{}", run.stdout);
    assert!(run.stdout.contains("changed since"), "{}", run.stdout);
    sb.assert_canary("uninstall in a marked home");
}
