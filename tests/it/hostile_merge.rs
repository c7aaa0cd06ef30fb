//! Archives that are harmless alone and hostile together (issue 11, item 1), with redist
//! tarballs and with wheels, and an uninstall that must not follow a symlink planted in a prefix.
//! Every hostile install is followed by `uninstall`, and the canary must not change.

use crate::hostile::*;

/// A: `include/x -> .`. B: `include/x/x/x/y -> ../../../../canary` (four `..` under four
/// directories: inside B alone) plus `include/y/victim` and `include/y/new-file`. Merged
/// naively, `include/y` is the canary: the victim is overwritten and a new file appears.
fn escape() -> Vec<(&'static str, Vec<Member>)> {
    vec![
        ("cuda_cccl", vec![link("include/x", ".")]),
        (
            "cuda_crt",
            vec![
                link("include/x/x/x/y", "../../../../canary"),
                file("include/y/victim", "owned\n"),
                file("include/y/new-file", "owned\n"),
            ],
        ),
    ]
}

fn install_wheels(sb: &Sandbox, index: &std::path::Path) -> crate::common::Run {
    let index = index.display().to_string();
    sb.install(
        &["--source", "wheels", "--index-url", &index],
        Some(&sb.prefix()),
    )
}

#[test]
fn two_redist_archives_cannot_write_outside_the_prefix() {
    let sb = Sandbox::new();
    let m = Redist::new(&escape());
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    sb.assert_refused(&run, "unsafe archive entry `include/x", "redist escape");
    assert!(
        run.stderr.contains("cuda_crt 13.0.88 + cuda_cccl 13.0.85"),
        "names both: {}",
        run.stderr
    );
    assert!(!sb.prefix().exists());
}

#[test]
fn two_wheels_cannot_write_outside_the_prefix() {
    let sb = Sandbox::new();
    let index = wheel_index(&escape());
    let run = install_wheels(&sb, index.path());
    sb.assert_refused(&run, "unsafe archive entry `include/x", "wheel escape");
    assert!(
        run.stderr
            .contains("nvidia-cuda-crt 13.0.88 + nvidia-cuda-cccl 13.0.85"),
        "names both: {}",
        run.stderr
    );
}

/// The shallower variant: two levels, into `$CUDAUP_HOME/toolkits/` beside the default prefix.
#[test]
fn the_shallow_variant_cannot_land_in_the_toolkits_dir() {
    let sb = Sandbox::new();
    let m = Redist::new(&[
        ("cuda_cccl", vec![link("include/x", ".")]),
        (
            "cuda_crt",
            vec![
                link("include/x/y", "../.."),
                file("include/y/planted", "x\n"),
            ],
        ),
    ]);
    let run = sb.install(&["--mirror", &m.arg()], None);
    let toolkits = sb.cudaup_home().join("toolkits");
    let listed = || -> Vec<String> {
        fs_err::read_dir(&toolkits)
            .map(|rd| {
                rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.ends_with(".lock"))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(listed().is_empty(), "{:?}", listed());
    sb.assert_refused(&run, "unsafe archive entry `include/x", "shallow escape");
}

/// A file in one archive that is a directory in another: exit 4 and a message naming both,
/// not an OS error.
#[test]
fn a_file_here_and_a_directory_there_is_a_clear_refusal() {
    let sb = Sandbox::new();
    let m = Redist::new(&[
        ("cuda_cccl", vec![file("include/thrust", "a file\n")]),
        ("cuda_crt", vec![file("include/thrust/version.h", "x\n")]),
    ]);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    sb.assert_refused(
        &run,
        "a directory in cuda_crt 13.0.88 but a file in cuda_cccl 13.0.85",
        "file vs dir",
    );
    let m = Redist::new(&[
        ("cuda_crt", vec![file("include/cuda", "x\n")]),
        ("cuda_cccl", vec![dir("include/cuda")]),
    ]);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    sb.assert_refused(
        &run,
        "a file in cuda_crt 13.0.88 but a directory in cuda_cccl 13.0.85",
        "dir vs file",
    );
}

/// `targets -> .` in one archive would turn the runfile-layout link
/// `targets/x86_64-linux/include -> ../../include` into a link out of the prefix; a link chain
/// across archives that climbs out is refused.
#[test]
fn compat_links_and_link_chains_stay_inside() {
    let sb = Sandbox::new();
    let m = Redist::new(&[(
        "cuda_cccl",
        vec![link("targets", "."), file("include/a.h", "a\n")],
    )]);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!sb.root().join("a/b/x86_64-linux").exists());
    assert!(!sb.prefix().join("x86_64-linux").exists());
    sb.assert_canary("targets -> .");
    assert_eq!(sb.uninstall().code, 0);
    sb.assert_clean("targets -> .");

    let m = Redist::new(&[
        ("cuda_cccl", vec![link("include/up", "..")]),
        ("cuda_crt", vec![link("include/out", "up/../../canary")]),
    ]);
    // `up/../..` has a `..` after a name: the unpacker refuses that shape in any one archive.
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    sb.assert_refused(&run, "unsafe archive entry", "link chain");
}

/// An archive may not plant cudaup's own receipt at the prefix root (a wheel maps
/// `nvidia/cu13/.cudaup-receipt.json` there): a forged receipt would make uninstall delete
/// whatever it lists.
#[test]
fn a_wheel_cannot_plant_a_receipt() {
    let sb = Sandbox::new();
    let canary = sb.canary().display().to_string();
    let forged = format!(
        r#"{{"schema_version":1,"prefix":"{canary}","cuda":"13.0.2","cudnn":null,"source":"x","installed_at":0,"components":[],"files":[{{"path":"victim"}}]}}"#
    );
    let index = wheel_index(&[("cuda_cccl", vec![file(".cudaup-receipt.json", &forged)])]);
    let run = install_wheels(&sb, index.path());
    sb.assert_refused(&run, "a name cudaup reserves", "planted receipt");
}

/// Installed cleanly; then a symlink replaces a directory inside the prefix, pointing at the
/// canary, which holds a file of the same name as one in the receipt. Uninstall removes
/// nothing through the link, and says so.
#[test]
fn uninstall_never_follows_a_symlink_in_the_prefix() {
    let sb = Sandbox::new();
    let m = Redist::new(&[("cuda_cccl", vec![file("include/a.h", "#define A\n")])]);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let include = sb.prefix().join("include");
    assert!(include.join("a.h").is_file());
    fs_err::remove_dir_all(&include).unwrap();
    std::os::unix::fs::symlink(sb.canary(), &include).unwrap();
    let un = sb.uninstall();
    assert_eq!(un.code, 0, "{}", un.stderr);
    sb.assert_canary("symlinked include/");
    assert!(
        un.stdout.contains("`include` is no longer a directory"),
        "{}",
        un.stdout
    );
    // The prefix stays (the link is not cudaup's), named in the output.
    assert!(un.stdout.contains("left in place"), "{}", un.stdout);

    // The prefix itself replaced by a symlink to the canary.
    let sb = Sandbox::new();
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let real = sb.root().join("moved");
    fs_err::rename(sb.prefix(), &real).unwrap();
    fs_err::copy(
        real.join(".cudaup-receipt.json"),
        sb.canary().join(".cudaup-receipt.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(sb.canary(), sb.prefix()).unwrap();
    let un = sb.uninstall();
    assert_eq!(un.code, 0, "{}", un.stderr);
    fs_err::remove_file(sb.canary().join(".cudaup-receipt.json")).unwrap();
    sb.assert_canary("symlinked prefix");
    assert!(
        un.stdout.contains("a symlink or a file now"),
        "{}",
        un.stdout
    );
}
