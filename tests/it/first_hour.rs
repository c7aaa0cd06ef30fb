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

/// A hand-written picture may name its GPU as nvidia-smi does; the catalog's gpus.toml gives
/// its PCI id and compute capability. A name that is two different chips is refused, naming
/// both PCI ids; a name the table does not have asks for the id.
#[test]
fn a_system_picture_gpu_given_by_its_name_is_looked_up() {
    let home = tempfile::tempdir().unwrap();
    let picture = home.path().join("machine.json");
    let f = picture.to_str().unwrap();
    let plan = |gpu: &str| {
        fs_err::write(
            &picture,
            format!(r#"{{"os": {{"family": "linux"}}, "gpus": [{{"name": "{gpu}"}}]}}"#),
        )
        .unwrap();
        cudaup(
            &["plan", "--system", f, "--profile", "cuda-dev"],
            home.path(),
        )
    };
    let r = plan("NVIDIA GeForce RTX 4090");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("for NVIDIA GeForce RTX 4090")
            && r.stdout.contains("compute capability 8.9"),
        "{}",
        r.stdout
    );
    let r = plan("NVIDIA GeForce GTX 750 Ti");
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("gpus[0]: NVIDIA GeForce GTX 750 Ti is more than one GPU")
            && r.stderr.contains("10de:1380: Maxwell 5.0"),
        "{}",
        r.stderr
    );
    let r = plan("NVIDIA Mystery Board");
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
