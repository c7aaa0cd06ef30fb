//! Issue 33, finding 3, end to end: a shell receipt that names a file outside HOME (a flipped
//! byte, or a home others can write) makes neither `repair` nor `uninstall` write or remove
//! anything there.

use crate::hostile::*;

/// A shell receipt naming the canary's victim, as if cudaup had hooked it.
fn forge_shell_receipt(sb: &Sandbox, file: &std::path::Path) {
    let receipts = sb.cudaup_home().join("receipts");
    fs_err::create_dir_all(&receipts).unwrap();
    let hook = serde_json::json!({"hooks": [{
        "file": file,
        "inserted": format!("\n# cudaup\n. \"{}/env\"\n", sb.cudaup_home().display()),
        "created": true,
        "created_dirs": [file.parent().unwrap()],
    }]});
    fs_err::write(receipts.join("shell.json"), hook.to_string()).unwrap();
}

#[test]
fn repair_never_hooks_a_file_a_receipt_names_outside_home() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let run = sb.install(
        &["--mirror", &m.arg(), "--no-modify-path"],
        Some(&sb.prefix()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A file that does not exist yet, in a folder that does not either, and the user's file.
    for target in [
        sb.canary().join("made/by/cudaup/profile.sh"),
        sb.canary().join("victim"),
    ] {
        forge_shell_receipt(&sb, &target);
        let before = snapshot(&sb.canary());
        let run = sb.run(&["repair", "--fix", "rc-hook", "--yes"]);
        // A refused rc file is a failure (1), in repair as in install (house move M11).
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("not an rc file cudaup hooks"),
            "{}",
            run.stderr
        );
        assert_eq!(snapshot(&sb.canary()), before, "repair wrote outside HOME");
    }
}

#[test]
fn uninstall_never_reverts_a_file_a_receipt_names_outside_home() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let run = sb.install(
        &["--mirror", &m.arg(), "--no-modify-path"],
        Some(&sb.prefix()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The user's file holds exactly the block the receipt names, in a folder of its own.
    let victim = sb.canary().join("sub/deep");
    let block = format!("\n# cudaup\n. \"{}/env\"\n", sb.cudaup_home().display());
    fs_err::write(&victim, &block).unwrap();
    forge_shell_receipt(&sb, &victim);
    let before = snapshot(&sb.canary());
    let run = sb.uninstall();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("not an rc file cudaup hooks"),
        "{}",
        run.stdout
    );
    assert_eq!(
        snapshot(&sb.canary()),
        before,
        "uninstall changed a file outside HOME"
    );
    assert!(!sb.prefix().exists(), "the toolkit went");
}
