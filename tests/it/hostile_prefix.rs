//! Issue 33, finding 8: the dry run makes the real run's prefix checks (`/`, a system folder, a
//! foreign directory: exit 2, not "CUDA … into /" and 0), and `--prefix` inside cudaup's own
//! state folders is refused. Nothing changes anywhere.

use crate::hostile::*;

#[test]
fn the_dry_run_refuses_what_the_real_run_refuses() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let foreign = sb.canary().join("sub");
    let before = snapshot(&sb.canary());
    for prefix in [std::path::PathBuf::from("/"), "/usr".into(), foreign] {
        for dry in [true, false] {
            let mut args = sb.install_args(&["--mirror", &m.arg()], Some(&prefix));
            if dry {
                args.push("--dry-run".into());
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = sb.run(&refs);
            assert_eq!(
                run.code,
                2,
                "{} (dry run: {dry}): {}\n{}",
                prefix.display(),
                run.stdout,
                run.stderr
            );
        }
    }
    assert_eq!(snapshot(&sb.canary()), before);
}

#[test]
fn a_prefix_inside_cudaups_own_state_is_refused() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let home = sb.cudaup_home();
    for inside in [
        "receipts/cuda",
        "bin/cuda",
        "manifests.d/x",
        "cache/cuda",
        "logs/../receipts/y",
    ] {
        let prefix = home.join(inside);
        for dry in [true, false] {
            let mut args = sb.install_args(&["--mirror", &m.arg()], Some(&prefix));
            if dry {
                args.push("--dry-run".into());
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = sb.run(&refs);
            assert_eq!(run.code, 2, "{inside}: {}", run.stderr);
            assert!(run.stderr.contains("cudaup's own state"), "{}", run.stderr);
            assert!(!prefix.exists(), "{inside} was made");
        }
    }
    sb.assert_canary("prefixes in the home's state");
}
