//! Small things a newcomer meets in the first hour (issue 37): help that says what a command
//! does today, and an error in a hand-written `--system` picture that names its position once.

use crate::common::cudaup;

#[test]
fn a_broken_system_picture_names_its_position_once() {
    let home = tempfile::tempdir().unwrap();
    let picture = home.path().join("machine.json");
    fs_err::write(&picture, "{\n  \"schema_version\": 1, \"gpus\": [],\n}\n").unwrap();
    let r = cudaup(
        &["plan", "--system", picture.to_str().unwrap()],
        home.path(),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("line 3, column 1: trailing comma"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.matches("line 3").count(), 1, "{}", r.stderr);
}

#[test]
fn help_says_what_install_and_verify_do_now() {
    let home = tempfile::tempdir().unwrap();
    let help = cudaup(&["--help"], home.path()).stdout;
    let install = help
        .lines()
        .find(|l| l.trim_start().starts_with("install"))
        .unwrap();
    assert!(!install.contains("(profile cuda-dev)"), "{install}");
    assert!(install.contains("PyTorch"), "{install}");
    let verify = cudaup(&["verify", "--help"], home.path()).stdout;
    assert!(!verify.contains("seed"), "{verify}");
}
