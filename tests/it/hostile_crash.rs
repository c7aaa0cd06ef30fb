//! kill -9 at any moment (issue 11, items 3 and 4): litter is counted by doctor and removed by
//! the next run, `repair` or `uninstall`; and, killed at random moments, install, repair and
//! uninstall each converge when run again.

use crate::hostile::*;

fn doctor_ids(sb: &Sandbox) -> Vec<String> {
    let run = sb.run(&["doctor", "--json"]);
    run.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect()
}

fn litter_of(sb: &Sandbox) -> Vec<String> {
    let mut out = Vec::new();
    let unpacked = sb.cudaup_home().join("cache/unpacked");
    for e in fs_err::read_dir(&unpacked).into_iter().flatten() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        if n.starts_with(".tmp-") {
            out.push(format!("cache/unpacked/{n}"));
        }
    }
    for dir in [
        sb.prefix().parent().unwrap().to_owned(),
        sb.cudaup_home().join("toolkits"),
    ] {
        for e in fs_err::read_dir(&dir).into_iter().flatten() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            if n.contains(".staging-") || n.contains(".old-") {
                out.push(n);
            }
        }
    }
    out
}

/// Killed mid-unpack and with a staging directory: doctor names the litter with its size and
/// the fix, `repair --fix litter` removes it, and so does the next install or an uninstall.
#[test]
fn litter_of_killed_runs_is_counted_and_removed() {
    let m = Redist::new(&[]);
    // A second release that differs in one archive: only that one is unpacked afresh.
    let fresh = || {
        Redist::new(&[(
            "cuda_nvcc",
            vec![file("bin/x", &format!("{:?}", std::time::Instant::now()))],
        )])
    };
    let sb = Sandbox::new();
    let staged = sb.install_args(&["--mirror", &m.arg()], None);
    kill(parked(&sb, &staged, "toolkit-staged"));
    let m2 = fresh();
    let args = sb.install_args(&["--mirror", &m2.arg()], None);
    kill(parked(&sb, &args, "unpacked-tmp"));
    let left = litter_of(&sb);
    assert!(
        left.iter().any(|l| l.starts_with("cache/unpacked/.tmp-"))
            && left.iter().any(|l| l.contains(".staging-")),
        "{left:?}"
    );
    let doctor = sb.run(&["doctor", "--json"]);
    let finding = doctor.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "litter")
        .cloned()
        .unwrap_or_else(|| panic!("no litter finding: {}", doctor.stdout));
    assert_eq!(finding["fix"], "cudaup repair --fix litter");
    assert!(
        finding["evidence"].to_string().contains("half-unpacked"),
        "{finding}"
    );
    let repair = sb.run(&["repair", "--fix", "litter", "--yes"]);
    assert_eq!(repair.code, 0, "{}\n{}", repair.stdout, repair.stderr);
    assert!(litter_of(&sb).is_empty(), "{:?}", litter_of(&sb));
    assert!(!doctor_ids(&sb).contains(&"litter".to_owned()));

    // The same litter again: the next install removes it on its own.
    let m3 = fresh();
    let args = sb.install_args(&["--mirror", &m3.arg()], None);
    kill(parked(&sb, &args, "unpacked-tmp"));
    assert!(!litter_of(&sb).is_empty());
    let run = sb.install(&["--mirror", &m3.arg()], None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(litter_of(&sb).is_empty(), "{:?}", litter_of(&sb));
    // And uninstall, after a kill with a staging directory.
    kill(parked(&sb, &staged, "toolkit-staged"));
    assert!(!litter_of(&sb).is_empty());
    let un = sb.uninstall();
    assert_eq!(un.code, 0, "{}", un.stderr);
    assert!(litter_of(&sb).is_empty(), "{:?}", litter_of(&sb));
    sb.assert_canary("litter");
}
