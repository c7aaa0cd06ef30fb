//! The smaller cases of issue 11, item 5, each as an attacker (or an unlucky user) would meet
//! it: colliding receipt names, a cache edited through a prefix's hard link, relative paths
//! that leave the mirror, hostile config values, a hard-linked `.bashrc`, and the fish
//! directories cudaup created. Every install is followed by `uninstall`.

use std::io::Write;
use std::os::unix::fs::MetadataExt;

use crate::common::server::Server;
use crate::hostile::*;

fn receipts(sb: &Sandbox) -> Vec<String> {
    let mut names: Vec<String> = fs_err::read_dir(sb.cudaup_home().join("receipts"))
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != "shell.json" && n != "self.json")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `<root>/cuda_x` and `<root>/cuda/x` used to share one receipt name: the second install hid
/// the first from doctor and uninstall.
#[test]
fn two_prefixes_never_share_a_receipt() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let a = sb.root().join("a/b/cuda_x");
    let b = sb.root().join("a/b/cuda/x");
    for p in [&a, &b] {
        let run = sb.install(&["--mirror", &m.arg()], Some(p));
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
    assert_eq!(receipts(&sb).len(), 2, "{:?}", receipts(&sb));
    let un = sb.uninstall();
    assert_eq!(un.code, 0, "{}", un.stderr);
    assert!(!a.exists() && !b.exists(), "both prefixes are removed");
    sb.assert_canary("two prefixes");
}

/// Prefix files are hard links into the unpacked cache: an in-place edit (an append) must not
/// reach the next install, which sees it by stat alone. An edit that keeps the size and puts
/// the mtime back on purpose passes stat (the stamps keep no ctime, which every `rm -rf` of a
/// prefix would move): `repair`, which hashes every file, finds it and puts the verified bytes
/// back in every prefix.
#[test]
fn an_edit_through_a_prefix_never_reaches_the_next_install() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let first = sb.root().join("a/b/first");
    assert_eq!(sb.install(&["--mirror", &m.arg()], Some(&first)).code, 0);
    // A second install from the cache: files the first one wrote in the clock tick of its
    // stamps are hashed and stamped now, so every cached file has a stamp.
    let warm = sb.root().join("a/b/warm");
    assert_eq!(sb.install(&["--mirror", &m.arg()], Some(&warm)).code, 0);
    let appended = first.join("include/cuda_nvcc.h");
    let forged = first.join("include/cuda_crt.h");
    let (want_a, want_f) = (
        fs_err::read(&appended).unwrap(),
        fs_err::read(&forged).unwrap(),
    );
    let mut f = fs_err::OpenOptions::new()
        .append(true)
        .open(&appended)
        .unwrap();
    f.write_all(b"#error edited\n").unwrap();
    let mtime = fs_err::metadata(&forged).unwrap().modified().unwrap();
    let mut same_size = want_f.clone();
    same_size[0] = b'/';
    let mut f = fs_err::OpenOptions::new()
        .write(true)
        .open(&forged)
        .unwrap();
    f.write_all(&same_size).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);

    let second = sb.root().join("a/b/second");
    let run = sb.install(&["--mirror", &m.arg()], Some(&second));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "`include/cuda_nvcc.h` in the unpacked cache is not the verified file any more"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(
        fs_err::read(second.join("include/cuda_nvcc.h")).unwrap(),
        want_a
    );
    assert_eq!(
        fs_err::read(second.join("include/cuda_crt.h")).unwrap(),
        same_size,
        "the forged mtime passes stat (the documented gap)"
    );

    let repair = sb.run(&["repair", "--yes"]);
    assert_eq!(repair.code, 0, "{}\n{}", repair.stdout, repair.stderr);
    for prefix in [&first, &warm, &second] {
        assert_eq!(
            fs_err::read(prefix.join("include/cuda_nvcc.h")).unwrap(),
            want_a,
            "{}",
            prefix.display()
        );
        assert_eq!(
            fs_err::read(prefix.join("include/cuda_crt.h")).unwrap(),
            want_f,
            "{}",
            prefix.display()
        );
    }
    assert_eq!(sb.uninstall().code, 0);
    sb.assert_canary("cache edit");
}

/// `relative_path` spelled with `%2e%2e` or backslashes, which the URL parser turns into `..`:
/// refused before any request leaves the mirror's base path.
#[test]
fn relative_paths_cannot_leave_the_mirror() {
    let m = Redist::new(&[]);
    let served = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(m.path(), served.path().join("mirror")).unwrap();
    let evil = tar_gz("evil", &[file("include/evil.h", "x\n")]);
    fs_err::write(served.path().join("evil.tar.gz"), &evil).unwrap();
    let server = Server::start(served.path().to_owned());
    let mirror = format!("{}/mirror", server.url());
    for path in [
        "%2e%2e/%2e%2e/%2e%2e/%2e%2e/evil.tar.gz",
        "%2E%2E/%2e%2E/../%2e%2e/evil.tar.gz",
        r"..\..\..\..\evil.tar.gz",
        r"cuda_nvcc\..\..\..\..\..\evil.tar.gz",
    ] {
        m.edit(|doc| {
            let e = &mut doc["cuda_nvcc"]["linux-x86_64"];
            e["relative_path"] = path.into();
            e["sha256"] = sha256_hex(&evil).into();
            e["size"] = evil.len().to_string().into();
        });
        let sb = Sandbox::new();
        let run = sb.install(&["--mirror", &mirror, "--allow-http"], Some(&sb.prefix()));
        sb.assert_refused(&run, "leaves the mirror", path);
        assert!(
            !server.requests().iter().any(|r| r.path.contains("evil")),
            "{path}: {:?}",
            server.requests()
        );
    }
}

/// A config file with terminal escapes in a key, a 10 MB value, and a NUL in the prefix: clean
/// FILE:LINE:COLUMN errors that echo neither raw escapes nor megabytes.
#[test]
fn config_errors_echo_nothing_raw_or_huge() {
    let sb = Sandbox::new();
    let cfg = sb.home().join("cudaup.toml");
    let run_with = |text: &str| {
        fs_err::write(&cfg, text).unwrap();
        let c = cfg.display().to_string();
        sb.run(&["install", "--config", &c, "--yes", "--dry-run"])
    };
    let nul =
        run_with("version = 1\nprofile = \"cuda-dev\"\n[install]\nprefix = \"/opt/cu\\u0000da\"\n");
    assert_eq!(nul.code, 2, "{}", nul.stderr);
    assert!(nul.stderr.contains("control character"), "{}", nul.stderr);
    assert!(!nul.stderr.contains('\0'));
    let escape = run_with("version = 1\n\"\\u001b[31mred\" = 1\n");
    assert_eq!(escape.code, 2, "{}", escape.stderr);
    assert!(!escape.stderr.contains('\u{1b}'), "{:?}", escape.stderr);
    let huge = format!(
        "version = 1\nprofile = \"cuda-dev\"\n[install]\nprefix = \"relative/{}\"\n",
        "x".repeat(10 << 20)
    );
    let big = run_with(&huge);
    assert_eq!(big.code, 2, "{}", &big.stderr[..big.stderr.len().min(500)]);
    assert!(
        big.stderr.len() < 4000,
        "{} bytes of error",
        big.stderr.len()
    );
    assert!(big.stderr.contains("bytes in all"), "{}", big.stderr);
    let huge_type = format!("version = 1\nprofile = {}\n", "9".repeat(10 << 20));
    let big = run_with(&huge_type);
    assert_eq!(big.code, 2);
    assert!(
        big.stderr.len() < 4000,
        "{} bytes of error",
        big.stderr.len()
    );
}

/// A `.bashrc` hard-linked into a dotfiles directory stays one file with two names through
/// install and uninstall, and comes back byte for byte.
#[test]
fn a_hard_linked_bashrc_stays_linked() {
    let sb = Sandbox::new();
    let dotfiles = sb.home().join("dotfiles");
    fs_err::create_dir(&dotfiles).unwrap();
    std::fs::hard_link(sb.home().join(".bashrc"), dotfiles.join("bashrc")).unwrap();
    let ino = fs_err::metadata(dotfiles.join("bashrc")).unwrap().ino();
    let m = Redist::new(&[]);
    let run = sb.install(
        &["--mirror", &m.arg(), "--shell", "bash"],
        Some(&sb.prefix()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bashrc = sb.home().join(".bashrc");
    assert_eq!(fs_err::metadata(&bashrc).unwrap().ino(), ino);
    assert!(fs_err::read_to_string(dotfiles.join("bashrc"))
        .unwrap()
        .contains("cudaup"));
    assert_eq!(sb.uninstall().code, 0);
    assert_eq!(fs_err::metadata(&bashrc).unwrap().ino(), ino);
    assert_eq!(fs_err::metadata(&bashrc).unwrap().nlink(), 2);
    fs_err::remove_dir_all(&dotfiles).unwrap();
    sb.assert_clean("hard-linked .bashrc");
}

/// `--shell fish` creates `~/.config/fish/conf.d/cudaup.fish` and the directories above it;
/// uninstall removes what it created, once empty, and keeps a directory the user had.
#[test]
fn uninstall_removes_the_fish_directories_it_created() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let run = sb.install(
        &["--mirror", &m.arg(), "--shell", "fish"],
        Some(&sb.prefix()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(sb.home().join(".config/fish/conf.d/cudaup.fish").is_file());
    assert_eq!(sb.uninstall().code, 0);
    assert!(!sb.home().join(".config").exists());
    sb.assert_clean("fish");

    let sb = Sandbox::new();
    fs_err::create_dir_all(sb.home().join(".config/fish")).unwrap();
    let run = sb.install(
        &["--mirror", &m.arg(), "--shell", "fish"],
        Some(&sb.prefix()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(sb.uninstall().code, 0);
    assert!(sb.home().join(".config/fish").is_dir());
    assert!(!sb.home().join(".config/fish/conf.d").exists());
}

/// A read-only `.bashrc`: the install says which line to add by hand (exit 1, not "bad usage") and is otherwise
/// complete; `repair` does not fail on it again and again, and uninstall leaves it as it was.
#[test]
fn a_read_only_bashrc_is_named_once_not_forever() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    let bashrc = sb.home().join(".bashrc");
    fs_err::set_permissions(&bashrc, std::fs::Permissions::from_mode(0o444)).unwrap();
    let m = Redist::new(&[]);
    let run = sb.install(&["--mirror", &m.arg()], Some(&sb.prefix()));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("yourself"), "{}", run.stderr);
    assert!(sb.cudaup_home().join("env").is_file());
    let repair = sb.run(&["repair", "--yes"]);
    assert_eq!(repair.code, 0, "{}\n{}", repair.stdout, repair.stderr);
    assert_eq!(sb.uninstall().code, 0);
    fs_err::set_permissions(&bashrc, std::fs::Permissions::from_mode(0o644)).unwrap();
    sb.assert_clean("read-only .bashrc");
}

/// `doctor --deep` (issue 38) hashes what plain doctor does not: a header edited through the
/// prefix at the same size, its mtime put back (which passes the cache's stat stamps), is named
/// with `repair` as the fix, in JSON and in Chinese; after `repair` it is gone.
#[test]
fn doctor_deep_names_a_same_size_edit_that_plain_doctor_cannot_see_and_repair_clears_it() {
    let sb = Sandbox::new();
    let m = Redist::new(&[]);
    let prefix = sb.root().join("cuda");
    assert_eq!(sb.install(&["--mirror", &m.arg()], Some(&prefix)).code, 0);
    let forged = prefix.join("include/cuda_crt.h");
    let honest = fs_err::read(&forged).unwrap();
    let mtime = fs_err::metadata(&forged).unwrap().modified().unwrap();
    let mut same_size = honest.clone();
    same_size[0] = b'/';
    let mut f = fs_err::OpenOptions::new()
        .write(true)
        .open(&forged)
        .unwrap();
    f.write_all(&same_size).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);

    let ids = |run: &crate::common::Run| -> Vec<String> {
        run.json()["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let plain = sb.run(&["doctor", "--json"]);
    assert!(
        !ids(&plain).iter().any(|i| i.starts_with("toolkit-")),
        "{}",
        plain.stdout
    );
    let deep = sb.run(&["doctor", "--deep", "--json"]);
    assert_eq!(deep.code, 1, "{}\n{}", deep.stdout, deep.stderr);
    let doc = deep.json();
    let found = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "toolkit-content-changed")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(found["severity"], "error");
    let evidence = found["evidence"].to_string();
    assert!(
        evidence.contains(&format!("{} has sha256", forged.display())),
        "{evidence}"
    );
    assert!(
        found["fix"]
            .as_str()
            .unwrap()
            .starts_with("cudaup repair --fix toolkit-files"),
        "{found:#}"
    );
    let zh = sb.run_env(&["doctor", "--deep"], &[("LANG", "zh_CN.UTF-8")]);
    assert!(
        zh.stdout
            .contains("工具包有 1 个文件的内容与 cudaup 安装的不同"),
        "{}",
        zh.stdout
    );

    let repair = sb.run(&["repair", "--yes"]);
    assert_eq!(repair.code, 0, "{}\n{}", repair.stdout, repair.stderr);
    assert_eq!(fs_err::read(&forged).unwrap(), honest);
    let after = sb.run(&["doctor", "--deep", "--json"]);
    assert!(
        !ids(&after).iter().any(|i| i.starts_with("toolkit-")),
        "{}",
        after.stdout
    );
    let run = sb.run(&["uninstall", "--yes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}
