//! The pin's rows: a row without `os` is Linux's (the rows written before Windows had one), the
//! Windows row's binary is `uv.exe`, one row per system and architecture, and the shipped
//! catalog pins uv's real `win_amd64` wheel.

use super::*;

fn row(os: Option<&str>, arch: &str, filename: &str) -> String {
    let os = os.map(|o| format!("os = \"{o}\"\n")).unwrap_or_default();
    format!(
        "[[wheel]]\narch = \"{arch}\"\n{os}filename = \"{filename}\"\nsize = 1\nsha256 = \"{h}\"\nbinary_size = 1\nbinary_sha256 = \"{h}\"\nsource = \"s\"\n",
        h = "a".repeat(64)
    )
}

fn pin(rows: &[String]) -> Result<UvPin, String> {
    UvPin::parse(&format!(
        "schema_version = 1\nversion = \"0.13.9\"\nsource = \"s\"\n{}",
        rows.concat()
    ))
}

#[test]
fn a_row_without_os_is_linuxs_and_keeps_its_binary_name() {
    let p = pin(&[row(
        None,
        "x86_64",
        "uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl",
    )])
    .unwrap();
    let w = p.wheel_for_os("linux", "x86_64").expect("a Linux row");
    assert_eq!(w.os, "linux");
    assert_eq!(p.member(w), "uv-0.13.9.data/scripts/uv");
    assert_eq!(p.wheel_for_os("windows", "x86_64"), None);
    // Written back without `os`, as the Linux rows always were.
    assert!(!toml::to_string(&p).unwrap().contains("os ="));
}

#[test]
fn the_windows_row_is_told_by_its_os_and_its_binary_is_uv_exe() {
    let p = pin(&[
        row(
            None,
            "x86_64",
            "uv-0.13.9-py3-none-musllinux_1_1_x86_64.whl",
        ),
        row(
            Some("windows"),
            "x86_64",
            "uv-0.13.9-py3-none-win_amd64.whl",
        ),
    ])
    .unwrap();
    let w = p.wheel_for_os("windows", "x86_64").expect("a Windows row");
    assert_eq!(w.filename, "uv-0.13.9-py3-none-win_amd64.whl");
    assert_eq!(p.member(w), "uv-0.13.9.data/scripts/uv.exe");
    assert!(toml::to_string(&p).unwrap().contains("os = \"windows\""));
    // This system's row is the one `wheel_for` gives.
    let here = p.wheel_for("x86_64").map(|w| w.os.as_str());
    assert_eq!(
        here,
        ["linux", "windows"]
            .into_iter()
            .find(|os| *os == std::env::consts::OS)
    );
}

#[test]
fn one_row_per_system_and_arch_and_only_systems_cudaup_knows() {
    let twice = pin(&[
        row(
            Some("windows"),
            "x86_64",
            "uv-0.13.9-py3-none-win_amd64.whl",
        ),
        row(Some("windows"), "x86_64", "uv-0.13.9-py3-none-win32.whl"),
    ])
    .unwrap_err();
    assert!(twice.contains("one wheel per os and arch"), "{twice}");
    let macos = pin(&[row(
        Some("macos"),
        "aarch64",
        "uv-0.13.9-py3-none-macosx_11_0_arm64.whl",
    )])
    .unwrap_err();
    assert!(macos.contains("\"macos\""), "{macos}");
}

#[test]
fn the_shipped_pin_has_uvs_real_win_amd64_wheel() {
    let p = UvPin::parse(include_str!("../../../manifests/uv.toml")).unwrap();
    let w = p
        .wheel_for_os("windows", "x86_64")
        .expect("the Windows row");
    assert_eq!(
        w.filename,
        format!("uv-{}-py3-none-win_amd64.whl", p.version)
    );
    assert_eq!(p.member(w), format!("uv-{}.data/scripts/uv.exe", p.version));
    assert!(
        w.source.contains(&w.filename) && w.source.contains("RECORD"),
        "{}",
        w.source
    );
    // The Linux rows are still Linux's.
    for arch in ["x86_64", "aarch64"] {
        let l = p.wheel_for_os("linux", arch).expect("a Linux row");
        assert!(l.filename.contains("musllinux_1_1_"), "{}", l.filename);
        assert_eq!(p.member(l), format!("uv-{}.data/scripts/uv", p.version));
    }
}
