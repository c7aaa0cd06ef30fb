//! A full disk (issue 33, finding 10): an install that cannot fit is refused before anything is
//! written, with the numbers; and one whose disk fills up mid-download or mid-unpack leaves
//! nothing behind (no partial download, no half-unpacked tree, no staging directory, no lock),
//! saying how much it needs. The disk is filled for real: the install runs under a file-size
//! limit (`ulimit -f`, set by `/bin/sh` before it execs cudaup, SIGXFSZ ignored), so its writes
//! fail with EFBIG exactly as they would with ENOSPC, without root or a small filesystem. The
//! free-space reading before the install is the one thing set (`CUDAUP_TEST_FREE_BYTES`).

use std::path::Path;

use crate::common::context::run;
use crate::common::server::Server;
use crate::common::{skipped, through, Run};
use crate::hostile::*;

/// `n` bytes no compressor shrinks (xorshift), so the archive is as large as its member.
fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The file-size limit of the limited runs, in `ulimit -f` blocks: 512 KiB with dash's 512-byte
/// blocks, 1 MiB with bash's 1 KiB ones; every file of an install here but the 4 MiB ones fits.
const LIMIT_BLOCKS: &str = "1024";

/// Runs cudaup as [`Sandbox::run`] does, under a file-size limit; `None` without `/bin/sh`.
fn run_limited(sb: &Sandbox, args: &[String]) -> Option<Run> {
    let sh = Path::new("/bin/sh");
    if !sh.is_file() {
        return None;
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = through(
        &sb.command(&args, &[]),
        sh,
        &[
            "-c",
            r#"trap '' XFSZ; ulimit -f "$1"; shift; exec "$@""#,
            "sh",
            LIMIT_BLOCKS,
        ],
    );
    Some(run(&mut cmd))
}

/// The run failed for want of room (exit 1, saying so once and what it needs), and left nothing
/// of itself: no cache it made, nothing beside the prefix, HOME and the canary as they were.
fn assert_left_nothing(sb: &Sandbox, run: &Run, what: &str) {
    assert_eq!(run.code, 1, "{what}: {}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("the disk filled up during the install")
            && run.stderr.contains("File too large")
            && run.stderr.contains("is removed again")
            && run.stderr.contains("free some space"),
        "{what}: {}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("filled up").count(),
        1,
        "{what}: said once: {}",
        run.stderr
    );
    let cache = snapshot(&sb.cudaup_home().join("cache"));
    assert!(cache.is_empty(), "{what}: left in the cache: {cache:?}");
    assert!(!sb.prefix().exists(), "{what}");
    sb.assert_clean(what);
}

/// The same install without the limit then succeeds, and uninstall leaves nothing.
fn assert_converges(sb: &Sandbox, source: &[&str], what: &str) {
    let run = sb.install(source, Some(&sb.prefix()));
    assert_eq!(run.code, 0, "{what}: {}", run.stderr);
    assert!(sb.prefix().join(".cudaup-receipt.json").is_file(), "{what}");
    let un = sb.uninstall();
    assert_eq!(un.code, 0, "{what}: {}", un.stderr);
    sb.assert_clean(what);
}

/// 300 bytes free for an install of a few KiB: refused with the numbers, exit 1, before a byte
/// of it is written (no cache, no prefix, no lock beside it, no journal); over a mirror served
/// by http (downloads and unpacking) and from a local one (unpacking only).
#[test]
fn an_install_the_disk_cannot_hold_is_refused_before_anything_is_written() {
    let m = Redist::new(&[]);
    let server = Server::start(m.path().to_owned());
    let url = server.url();
    for source in [
        vec!["--mirror", url.as_str(), "--allow-http"],
        vec!["--mirror", m.path().to_str().unwrap()],
    ] {
        let what = format!("{source:?}");
        let sb = Sandbox::new();
        let run = sb.install_env(
            &source,
            Some(&sb.prefix()),
            &[("CUDAUP_TEST_FREE_BYTES", "300")],
        );
        assert_eq!(run.code, 1, "{what}: {}\n{}", run.stdout, run.stderr);
        let remote = source.contains(&"--allow-http");
        for part in [
            "not enough free disk space for this install; nothing was written",
            "needs at least",
            if remote { "to download, " } else { "unpacked)" },
            "and has 300 B free",
        ] {
            assert!(
                run.stderr.contains(part),
                "{what}: `{part}`: {}",
                run.stderr
            );
        }
        assert!(!sb.cudaup_home().join("cache").exists(), "{what}");
        assert!(
            !sb.cudaup_home().join("receipts/pending").exists(),
            "{what}"
        );
        sb.assert_clean(&what);
        // The dry run makes the same check.
        let mut dry = sb.install_args(&source, Some(&sb.prefix()));
        dry.push("--dry-run".into());
        let dry: Vec<&str> = dry.iter().map(String::as_str).collect();
        let run = sb.run_env(&dry, &[("CUDAUP_TEST_FREE_BYTES", "300")]);
        assert_eq!(run.code, 1, "{what}: dry run: {}", run.stderr);
        assert!(run.stderr.contains("and has 300 B free"), "{}", run.stderr);
        sb.assert_clean(&what);
        // With room (1 MiB for a few KiB), the same install goes through.
        let run = sb.install_env(
            &source,
            Some(&sb.prefix()),
            &[("CUDAUP_TEST_FREE_BYTES", "1048576")],
        );
        assert_eq!(run.code, 0, "{what}: {}", run.stderr);
        assert_eq!(sb.uninstall().code, 0);
        sb.assert_clean(&what);
    }
}

/// The disk fills up mid-download (a 4 MiB archive over http, the file-size limit at 0.5-1
/// MiB): the partial download, its lock, the half-unpacked tree, the staging directory and the
/// prefix's lock all go; exit 1 saying so. Without the limit the same install converges.
#[test]
fn the_disk_filling_up_mid_download_leaves_nothing_behind() {
    let mut members = harmless("libcublas");
    members.push(Member::File("lib/libcublas.so.13".into(), noise(4 << 20)));
    let m = Redist::new(&[("libcublas", members)]);
    let server = Server::start(m.path().to_owned());
    let url = server.url();
    let source = ["--mirror", url.as_str(), "--allow-http"];
    let sb = Sandbox::new();
    let args = sb.install_args(&source, Some(&sb.prefix()));
    let Some(run) = run_limited(&sb, &args) else {
        return skipped(
            "the_disk_filling_up_mid_download_leaves_nothing_behind",
            "no /bin/sh to set the file-size limit",
        );
    };
    assert_left_nothing(&sb, &run, "mid-download");
    // The download is what filled it (the unpacker only gets bytes already written).
    assert!(
        run.stderr.contains(".partial: File too large"),
        "{}",
        run.stderr
    );
    assert_converges(&sb, &source, "after mid-download");
}

/// The disk fills up mid-unpack: a 4 KiB archive of a local mirror inflating to 4 MiB (no
/// download in the cache), and the same over http (downloaded whole, then unpacking fails),
/// and an NVIDIA wheel (a zip, unpacked while it streams in). Nothing is left of either.
#[test]
fn the_disk_filling_up_mid_unpack_leaves_nothing_behind() {
    let zeros = || Member::File("lib/libcublas.so.13".into(), vec![0u8; 4 << 20]);
    let mut members = harmless("libcublas");
    members.push(zeros());
    let m = Redist::new(&[("libcublas", members)]);
    let server = Server::start(m.path().to_owned());
    let url = server.url();
    let mut nvcc = harmless("cuda_nvcc")[1..].to_vec();
    nvcc.push(Member::File("lib/big.so".into(), vec![0u8; 4 << 20]));
    let index = wheel_index(&[("cuda_nvcc", nvcc)]);
    let index_arg = index.path().display().to_string();
    for source in [
        vec!["--mirror", m.path().to_str().unwrap()],
        vec!["--mirror", url.as_str(), "--allow-http"],
        vec!["--source", "wheels", "--index-url", index_arg.as_str()],
    ] {
        let what = format!("mid-unpack {source:?}");
        let sb = Sandbox::new();
        let args = sb.install_args(&source, Some(&sb.prefix()));
        let Some(run) = run_limited(&sb, &args) else {
            return skipped(
                "the_disk_filling_up_mid_unpack_leaves_nothing_behind",
                "no /bin/sh to set the file-size limit",
            );
        };
        assert_left_nothing(&sb, &run, &what);
        assert_converges(&sb, &source, &what);
    }
}

/// A real full disk (needs root: a 2 MiB tmpfs mounted as CUDAUP_HOME, so the cache is on it):
/// ENOSPC mid-unpack (the archives' sizes fit, the 4 MiB they inflate to does not), and
/// mid-download (the free-space reading says 1 GiB, as a disk another process fills meanwhile
/// would). Each leaves the tmpfs exactly as free as it was, and the message says ENOSPC.
#[test]
fn needs_root_a_real_full_disk_is_left_as_free_as_it_was() {
    let test = "needs_root_a_real_full_disk_is_left_as_free_as_it_was";
    let mut members = harmless("libcublas");
    members.push(Member::File(
        "lib/libcublas.so.13".into(),
        vec![0u8; 4 << 20],
    ));
    let zeros = Redist::new(&[("libcublas", members)]);
    let mut members = harmless("libcublas");
    members.push(Member::File("lib/libcublas.so.13".into(), noise(4 << 20)));
    let big = Redist::new(&[("libcublas", members)]);
    let server = Server::start(big.path().to_owned());
    let url = server.url();
    for (source, env, what) in [
        (
            vec!["--mirror", zeros.path().to_str().unwrap()],
            vec![],
            "mid-unpack",
        ),
        (
            vec!["--mirror", url.as_str(), "--allow-http"],
            vec![("CUDAUP_TEST_FREE_BYTES", "1073741824")],
            "mid-download",
        ),
    ] {
        let sb = Sandbox::new();
        let home = sb.cudaup_home();
        fs_err::create_dir_all(&home).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs"])
            .arg(&home)
            .output();
        match mounted {
            Ok(o) if o.status.success() => {}
            other => return skipped(test, &format!("cannot mount a tmpfs here ({other:?})")),
        }
        struct Unmount(std::path::PathBuf);
        impl Drop for Unmount {
            fn drop(&mut self) {
                let _ = std::process::Command::new("umount").arg(&self.0).status();
            }
        }
        let _unmount = Unmount(home.clone());
        let free = || cudaup::world::fs::space::space(&home).unwrap().free;
        let before = free();
        let run = sb.install_env(&source, Some(&sb.prefix()), &env);
        assert_eq!(run.code, 1, "{what}: {}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains("the disk filled up during the install")
                && run.stderr.contains("No space left on device"),
            "{what}: {}",
            run.stderr
        );
        assert_eq!(free(), before, "{what}: the disk is not as free as it was");
        let cache = snapshot(&home.join("cache"));
        assert!(cache.is_empty(), "{what}: left in the cache: {cache:?}");
        assert!(!sb.prefix().exists(), "{what}");
        sb.assert_clean(what);
    }
}

/// The framework's room (issue 33, finding 10, for the framework step): the torch wheel a
/// folder of wheels holds is larger than the free space the reading gives, so `install` (and its
/// dry run) refuse before the installer runs, with the numbers and nothing made; given room, the
/// same install goes through. The folder states each wheel's size, as PyPI's JSON pages do.
#[test]
fn a_framework_the_disk_cannot_hold_is_refused_before_the_installer_runs() {
    use crate::common::{wheels, TestContext};
    let folder = tempfile::tempdir().unwrap();
    let torch = wheels::fake_torch_with(folder.path(), "2.15.0", Some("13.2"), &["sm_90"], &[]);
    wheels::fake_companion(folder.path(), "torchvision", "0.29.2", "2.15.0");
    wheels::fake_companion(folder.path(), "torchaudio", "2.11.1", "2.15.0");
    let size = fs_err::metadata(&torch).unwrap().len();
    let ctx = TestContext::new()
        .with_env("CUDAUP_NO_UV", "1")
        .with_env("CUDAUP_PROBE_TIMEOUT", "5");
    let venv = ctx.dir().join("venv");
    let (venv_arg, index) = (
        venv.display().to_string(),
        folder.path().display().to_string(),
    );
    let args = [
        "--profile",
        "cpu",
        "--venv",
        &venv_arg,
        "--yes",
        "--no-modify-path",
        "--pypi-index",
        &index,
        "--torch-index",
        "http://127.0.0.1:9/whl",
        "--allow-http",
    ];
    let system = ctx.system_arg();
    let install = |extra: &[&str], free: &str| {
        let mut all = vec!["install", "--driver", "keep", "--system", &system];
        all.extend_from_slice(&args);
        all.extend_from_slice(extra);
        ctx.cudaup_env(&all, &[("CUDAUP_TEST_FREE_BYTES", free)])
    };
    let short = (size - 1).to_string();
    for dry in [true, false] {
        let run = install(if dry { &["--dry-run"] } else { &[] }, &short);
        assert_eq!(run.code, 1, "dry {dry}: {}\n{}", run.stdout, run.stderr);
        for part in [
            "not enough free disk space for this install; nothing was written",
            "installed into the venv, the framework wheel alone, before its dependencies",
            &format!("and has {} free", indicatif::HumanBytes(size - 1)),
        ] {
            assert!(
                run.stderr.contains(part),
                "dry {dry}: `{part}`: {}",
                run.stderr
            );
        }
        assert!(!venv.exists(), "dry {dry}: no venv is made");
    }
    let run = install(&[], "1073741824");
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(venv.join("bin/python").exists());
}

/// `mirror create` without room (issue 33, finding 10, for bundles): the archives it would
/// download are counted before the first download and before NVIDIA's manifests are copied, so
/// the refusal leaves the bundle folder without a file and the cache without a download; with
/// room the same bundle is made.
#[test]
fn a_mirror_the_disk_cannot_hold_is_refused_before_it_downloads() {
    let m = Redist::new(&[]);
    let server = Server::start(m.path().to_owned());
    let url = server.url();
    let sb = Sandbox::new();
    let bundle = sb.home().join("bundle");
    let bundle_arg = bundle.display().to_string();
    let args = [
        "mirror",
        "create",
        &bundle_arg,
        "--system",
        &sb.ctx.system_arg(),
        "--profile",
        "cuda-dev",
        "--cuda",
        "13.0.2",
        "--no-cudnn",
        "--source",
        "redist",
        "--mirror",
        url.as_str(),
        "--allow-http",
    ];
    let run = sb.run_env(&args, &[("CUDAUP_TEST_FREE_BYTES", "300")]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    for part in [
        "not enough free disk space",
        "to download",
        "and has 300 B free",
    ] {
        assert!(run.stderr.contains(part), "`{part}`: {}", run.stderr);
    }
    fn files(dir: &Path) -> Vec<std::path::PathBuf> {
        let Ok(entries) = fs_err::read_dir(dir) else {
            return Vec::new();
        };
        entries
            .map(|e| e.unwrap().path())
            .flat_map(|p| if p.is_dir() { files(&p) } else { vec![p] })
            .collect()
    }
    assert_eq!(
        files(&bundle),
        Vec::<std::path::PathBuf>::new(),
        "the bundle holds nothing"
    );
    let downloads = sb.cudaup_home().join("cache/downloads");
    assert!(
        !downloads.exists() || fs_err::read_dir(&downloads).unwrap().next().is_none(),
        "nothing downloaded"
    );
    let run = sb.run_env(&args, &[("CUDAUP_TEST_FREE_BYTES", "1073741824")]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        bundle.join("cudaup-bundle.json").is_file(),
        "{}",
        run.stdout
    );
}
