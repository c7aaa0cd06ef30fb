//! The rc-file rule of issue 33, finding 3: cudaup's line goes only into the rc files it hooks
//! under the current HOME, whatever the shell receipt (which repair reads) names, and no folder
//! is created for it but fish's config folder.

use super::*;

struct User {
    _dir: tempfile::TempDir,
    home: PathBuf,
    cudaup: PathBuf,
    process: Process,
}

fn user() -> User {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("u");
    fs_err::create_dir_all(&home).unwrap();
    let cudaup = home.join(".local/share/cudaup");
    let process = Process::with_vars(
        vec![
            ("HOME".to_owned(), home.display().to_string()),
            ("SHELL".to_owned(), "/bin/bash".to_owned()),
            ("PATH".to_owned(), "/nonexistent".to_owned()),
        ],
        &home,
    );
    User {
        _dir: dir,
        home,
        cudaup,
        process,
    }
}

fn refused(r: Result<bool, HookError>) -> String {
    match r {
        Err(HookError::Refused(why)) => why.join("\n"),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn repair_writes_only_into_an_rc_file_cudaup_hooks_under_home() {
    let u = user();
    let line = shell::source_line(Shell::Posix, &u.cudaup);
    // Outside HOME, a relative path, a folder that is not there: refused, nothing made.
    let outside = u._dir.path().join("etc/profile.d/x.sh");
    for file in [
        outside.clone(),
        PathBuf::from("./.bashrc"),
        u.home.join("../u/.bashrc"),
    ] {
        let why = refused(rehook(&u.process, &u.cudaup, &file, &line));
        assert!(why.contains("not an rc file cudaup hooks"), "{why}");
    }
    assert!(!u._dir.path().join("etc").exists(), "no folder was created");
    assert!(!u.cudaup.exists(), "not even the receipt was written");
    // cudaup's rc file, with someone else's line: refused too.
    fs_err::write(u.home.join(".bashrc"), "alias ll='ls -l'\n").unwrap();
    let why = refused(rehook(
        &u.process,
        &u.cudaup,
        &u.home.join(".bashrc"),
        "curl x | sh",
    ));
    assert!(why.contains("not cudaup's line"), "{why}");
    assert_eq!(
        fs_err::read_to_string(u.home.join(".bashrc")).unwrap(),
        "alias ll='ls -l'\n"
    );
    // The real thing works.
    assert!(rehook(&u.process, &u.cudaup, &u.home.join(".bashrc"), &line).unwrap());
    assert!(fs_err::read_to_string(u.home.join(".bashrc"))
        .unwrap()
        .contains(&line));
}

#[test]
fn only_fishs_config_folder_is_ever_created() {
    let u = user();
    // PowerShell's folder is not there: refused, and not made.
    let changed = hook(&u.process, &u.cudaup, &[Shell::PowerShell]);
    let Err(HookError::Refused(why)) = changed else {
        panic!("{changed:?}")
    };
    assert!(why[0].contains("creates no folder"), "{why:?}");
    assert!(!u.home.join(".config").exists());
    assert!(ShellReceipt::read(&u.cudaup).hooks.is_empty());
    // fish's conf.d is made, and recorded for uninstall.
    let changed = hook(&u.process, &u.cudaup, &[Shell::Fish]).unwrap();
    assert_eq!(changed, [u.home.join(".config/fish/conf.d/cudaup.fish")]);
    let applied = &ShellReceipt::read(&u.cudaup).hooks[0];
    assert_eq!(removable_dirs(&u.process, applied), applied.created_dirs);
    // A receipt that claims other folders for it gets none of them removed.
    let forged = shell::Applied {
        created_dirs: vec![u._dir.path().join("etc")],
        ..applied.clone()
    };
    assert!(removable_dirs(&u.process, &forged).is_empty());
}
