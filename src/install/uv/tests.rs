use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::*;

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A wheel laid out as uv's (`uv/__init__.py`, `uv-<v>.data/scripts/uv`, `uv.exe` in Windows'
/// wheel, dist-info) whose binary is `binary`.
fn wheel_bytes(version: &str, binary: &[u8]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("uv/__init__.py", opts).unwrap();
    w.write_all(b"").unwrap();
    let exe = std::env::consts::EXE_SUFFIX;
    w.start_file(format!("uv-{version}.data/scripts/uv{exe}"), opts)
        .unwrap();
    w.write_all(binary).unwrap();
    w.start_file(format!("uv-{version}.dist-info/RECORD"), opts)
        .unwrap();
    w.write_all(b"").unwrap();
    w.finish().unwrap().into_inner()
}

const BINARY: &[u8] = b"#!/bin/sh\necho 'uv 0.13.9 (test 2026-11-17)'\n";

/// A folder of wheels (a mirror as `pip download -d` makes it) holding `wheel`, and the pin that
/// names it with the sha256s given (the real ones unless a test spoils one).
fn mirror(dir: &Path, wheel: &[u8], pinned_wheel_sha: &str, pinned_binary_sha: &str) -> UvPin {
    let filename = format!(
        "uv-0.13.9-py3-none-musllinux_1_1_{}.whl",
        std::env::consts::ARCH
    );
    fs_err::create_dir_all(dir).unwrap();
    fs_err::write(dir.join(&filename), wheel).unwrap();
    UvPin {
        schema_version: 1,
        version: "0.13.9".into(),
        source: "test".into(),
        wheel: vec![UvWheel {
            arch: std::env::consts::ARCH.into(),
            os: std::env::consts::OS.into(),
            filename,
            size: wheel.len() as u64,
            sha256: pinned_wheel_sha.into(),
            binary_size: BINARY.len() as u64,
            binary_sha256: pinned_binary_sha.into(),
            source: "https://pypi.org/simple/uv/ (a stand-in)".into(),
        }],
    }
}

fn fetcher(dir: &Path) -> Fetcher {
    crate::catalog::update::tests::fetcher(dir)
}

/// A temporary directory holding a mirror of uv's wheel (`BINARY` inside) and an empty home
/// beside it; the pin names the wheel by its real sha256s, or by another's where `spoil` says
/// (`"wheel"`, else the binary).
struct Setup {
    tmp: tempfile::TempDir,
    pin: UvPin,
    home: Home,
}

impl Setup {
    fn new(spoil: Option<&str>) -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let wheel = wheel_bytes("0.13.9", BINARY);
        let (w, b) = match spoil {
            Some("wheel") => (sha(b"another wheel"), sha(BINARY)),
            Some(_) => (sha(&wheel), sha(b"another binary")),
            None => (sha(&wheel), sha(BINARY)),
        };
        let pin = mirror(&tmp.path().join("mirror"), &wheel, &w, &b);
        let home = Home::at(&tmp.path().join("home"));
        Setup { tmp, pin, home }
    }

    /// [`verified_wheel`] from the mirror.
    fn wheel(&self) -> Result<std::path::PathBuf, UvError> {
        let index = Location::File(self.tmp.path().join("mirror"));
        verified_wheel(
            &self.pin,
            std::env::consts::ARCH,
            &fetcher(self.tmp.path()),
            &[index],
        )
        .map(|(p, _)| p)
    }

    /// [`bring`] into the home from the mirror.
    fn bring(&self) -> Result<std::path::PathBuf, UvError> {
        let index = Location::File(self.tmp.path().join("mirror"));
        bring(
            &self.home,
            &self.pin,
            std::env::consts::ARCH,
            &fetcher(self.tmp.path()),
            &[index],
        )
    }
}

#[test]
fn the_shipped_pin_parses_and_malformed_rows_are_refused() {
    let pin = crate::catalog::Catalog::embedded().uv;
    assert!(Version::parse(&pin.version).is_some());
    for (os, arch) in [
        ("linux", "x86_64"),
        ("linux", "aarch64"),
        ("windows", "x86_64"),
    ] {
        let w = pin.wheel_for_os(os, arch).unwrap();
        assert!(
            w.filename.starts_with(&format!("uv-{}-", pin.version)),
            "{w:?}"
        );
    }
    assert!(matches!(
        wheel_of(&pin, "riscv64"),
        Err(UvError::NoWheel { .. })
    ));
    let manifest = crate::catalog::embedded_text("uv.toml").expect("embedded");
    let bad = [
        manifest.replacen("sha256 = \"2c", "sha256 = \"2C", 1),
        manifest.replacen("filename = \"uv-0.13.9-", "filename = \"../uv-0.13.9-", 1),
        manifest.replacen("schema_version = 1", "schema_version = 2", 1),
        manifest.replacen("arch = \"aarch64\"", "arch = \"x86_64\"", 1),
        manifest.replacen("version = \"0.13.9\"", "version = \"0.13.9\"\nextra = 1", 1),
    ];
    for text in bad {
        assert!(UvPin::parse(&text).is_err(), "{text}");
    }
}

#[test]
fn uv_version_lines_are_read() {
    assert_eq!(
        parse_version("uv 0.13.9 (abc123 2026-11-17)"),
        Version::parse("0.13.9")
    );
    assert_eq!(parse_version("uv 0.4.0"), Version::parse("0.4.0"));
    assert_eq!(parse_version("pip 25.0"), None);
    assert_eq!(parse_version(""), None);
}

#[test]
fn uv_is_brought_from_a_mirror_verified_and_then_used_without_fetching() {
    let st = Setup::new(None);
    let (pin, home) = (&st.pin, &st.home);
    let path = st.bring().unwrap();
    // `uv.exe` on Windows, beside nothing else.
    let name = format!("uv{}", std::env::consts::EXE_SUFFIX);
    assert_eq!(path, home.tools().join("uv-0.13.9").join(name));
    assert_eq!(fs_err::read(&path).unwrap(), BINARY);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            fs_err::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }
    let r = receipt(home).unwrap();
    assert_eq!(
        (r.sha256.as_str(), r.binary.as_path()),
        (sha(BINARY).as_str(), path.as_path())
    );
    assert_eq!(installed(home, pin), Some(path.clone()));
    // Its receipt has its own reader: the toolkit and venv receipts' reader (doctor's
    // `receipt-unreadable`) leaves it alone.
    let all = crate::install::receipts::Receipts::load(home.root());
    assert!(all.unreadable.is_empty(), "{:?}", all.unreadable);
    // The next choice takes cudaup's copy; fetching again would fail the test.
    let runner = crate::world::runner::SystemRunner;
    let c = choose(home, pin, &runner, &[], false, || panic!("fetched again"));
    assert!(
        matches!(&c, Choice::Uv { path: p, .. } if *p == path),
        "{c:?}"
    );
    assert!(c.describe().contains("cudaup's copy"), "{}", c.describe());
    // Edited by someone: no longer cudaup's copy, so not used, and uninstall keeps it.
    fs_err::write(&path, b"#!/bin/sh\nexit 0\n").unwrap();
    assert_eq!(installed(home, pin), None);
    assert!(matches!(removal(home), Some(Err((p, _))) if p == path));
}

#[test]
fn a_wrong_wheel_or_binary_is_refused_and_nothing_lands() {
    for spoil in ["wheel", "binary"] {
        let st = Setup::new(Some(spoil));
        let (pin, home) = (&st.pin, &st.home);
        let e = st.bring().unwrap_err();
        let text = e.to_string();
        assert!(text.contains("sha256"), "{spoil}: {text}");
        assert!(!home.tools().exists(), "{spoil}: tools/ was made");
        assert!(receipt(home).is_none());
        // And the choice falls back to pip, saying why.
        let runner = crate::world::runner::SystemRunner;
        let c = choose(home, pin, &runner, &[], false, || Err(e));
        assert!(
            matches!(&c, Choice::Pip { why } if why.contains("no uv could be had") && why.contains("sha256")),
            "{c:?}"
        );
    }
}

#[test]
fn an_index_without_the_wheel_names_what_it_asked() {
    let mut st = Setup::new(None);
    st.pin.wheel[0].filename = format!(
        "uv-0.13.9-py3-none-manylinux_2_17_{}.whl",
        std::env::consts::ARCH
    );
    let e = st.bring().unwrap_err();
    assert!(matches!(e, UvError::NotListed { .. }), "{e}");
    assert!(e.to_string().contains("not listed"), "{e}");
}

#[cfg(unix)]
#[test]
fn a_uv_on_path_is_used_only_when_new_enough_and_never_when_disabled() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let home = Home::at(&tmp.path().join("home"));
    let pin = crate::catalog::Catalog::embedded().uv;
    let bin = tmp.path().join("bin");
    fs_err::create_dir_all(&bin).unwrap();
    let uv = bin.join("uv");
    let runner = crate::world::runner::SystemRunner;
    for (version, used) in [
        ("99.0.0", true),
        (pin.version.as_str(), true),
        ("0.4.0", false),
    ] {
        fs_err::write(
            &uv,
            format!("#!/bin/sh\necho 'uv {version} (x 2026-01-01)'\n"),
        )
        .unwrap();
        fs_err::set_permissions(&uv, std::fs::Permissions::from_mode(0o755)).unwrap();
        let c = choose(
            &home,
            &pin,
            &runner,
            std::slice::from_ref(&bin),
            false,
            || Err(UvError::Io(std::io::Error::other("offline"))),
        );
        match (&c, used) {
            (Choice::Uv { path, why, .. }, true) => {
                assert_eq!(path, &uv);
                assert!(why.contains("on PATH"), "{why}");
            }
            (Choice::Pip { why }, false) => assert!(why.contains("older than the pinned"), "{why}"),
            _ => panic!("{version}: {c:?}"),
        }
    }
    let c = choose(&home, &pin, &runner, &[bin], true, || panic!("not asked"));
    assert_eq!(
        c,
        Choice::Pip {
            why: "CUDAUP_NO_UV=1".into()
        }
    );
}

#[test]
fn a_changed_copy_is_never_replaced_and_uninstall_takes_only_an_intact_one() {
    use crate::install::home::HomeMarker;
    use crate::install::uninstall;
    use crate::world::process::Process;
    let process = Process::with_vars(Vec::<(String, String)>::new(), Path::new("/"));
    for changed in [false, true] {
        let st = Setup::new(None);
        let home = &st.home;
        fs_err::create_dir_all(home.root()).unwrap();
        HomeMarker::claim(home).unwrap();
        let path = st.bring().unwrap();
        if changed {
            let mine = b"#!/bin/sh\necho mine\n";
            fs_err::write(&path, mine).unwrap();
            let e = st.bring().unwrap_err();
            assert!(e.to_string().contains("left as it is"), "{e}");
            assert_eq!(
                fs_err::read(&path).unwrap(),
                mine,
                "a changed copy is never replaced"
            );
        }
        let steps = uninstall::plan(home, &process, true).unwrap();
        let out = uninstall::run(home, &steps).unwrap();
        if changed {
            assert!(path.is_file(), "kept");
            assert!(
                out.kept
                    .iter()
                    .any(|(p, why)| *p == path && why.contains("not the uv")),
                "{:?}",
                out.kept
            );
        } else {
            assert!(
                !home.tools().exists(),
                "tools/ goes with the uv cudaup wrote"
            );
            assert!(!home.receipts().join(RECEIPT).exists());
        }
    }
}

#[test]
fn a_bundle_gets_the_verified_wheel_and_a_wrong_one_is_refused() {
    let st = Setup::new(None);
    let path = st.wheel().unwrap();
    let pinned = st.pin.wheel_for(std::env::consts::ARCH).unwrap();
    assert_eq!(sha(&fs_err::read(&path).unwrap()), pinned.sha256);
    for spoil in ["wheel", "binary"] {
        let e = Setup::new(Some(spoil)).wheel().unwrap_err();
        assert!(e.to_string().contains("sha256"), "{spoil}: {e}");
    }
}
